package report

import (
	"os"

	"github.com/loomgraph/loom/profile"
)

// WriteTrace writes the recorder's trace (Chrome trace JSON, for
// https://ui.perfetto.dev) to path.
func WriteTrace(rec *profile.Recorder, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rec.WriteTrace(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
