package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/dist/mpi"
)

// Distributed opens the communicator a -dist flag names ("mpi": this
// process is one rank of a job started by mpirun; "": none, nil) and
// returns the writer this rank reports to: w for rank 0, and for the
// others one that keeps only the last line, which done prints as
// "rank N: ..." (mpirun merges the ranks' output). done also closes the
// communicator.
func Distributed(kind string, w io.Writer) (comm dist.Communicator, out io.Writer, done func(), err error) {
	switch kind {
	case "":
		return nil, w, func() {}, nil
	case "mpi":
	default:
		return nil, nil, nil, fmt.Errorf("unknown -dist %q (mpi)", kind)
	}
	c, err := mpi.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	if c.Rank() == 0 {
		return c, w, func() { c.Close() }, nil
	}
	last := &lastLine{}
	return c, last, func() {
		fmt.Fprintf(w, "rank %d: %s", c.Rank(), last.s)
		c.Close()
	}, nil
}

// lastLine keeps the last line written to it.
type lastLine struct{ s string }

func (l *lastLine) Write(p []byte) (int, error) {
	if s := strings.TrimRight(string(p), "\n"); s != "" {
		if i := strings.LastIndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		l.s = s + "\n"
	}
	return len(p), nil
}

// RankPath is dir/name, or for a rank of a job (comm non-nil)
// dir/base-rankN.ext, so that the ranks' files do not overwrite each
// other ("trace.json" -> "trace-rank1.json").
func RankPath(dir, name string, comm dist.Communicator) string {
	if comm != nil {
		ext := filepath.Ext(name)
		name = fmt.Sprintf("%s-rank%d%s", strings.TrimSuffix(name, ext), comm.Rank(), ext)
	}
	return filepath.Join(dir, name)
}
