package dist

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/tensor"
)

// gathered is a Communicator whose AllGather returns the fingerprints of
// a pretended group.
type gathered struct {
	Local
	rank int
	fps  []uint64
}

func (g gathered) Rank() int { return g.rank }
func (g gathered) Size() int { return len(g.fps) }
func (g gathered) AllGather(ctx context.Context, send, recv []byte) error {
	if got := binary.LittleEndian.Uint64(send); got != g.fps[g.rank] {
		return errors.New("sent the wrong fingerprint")
	}
	for r, fp := range g.fps {
		binary.LittleEndian.PutUint64(recv[8*r:], fp)
	}
	return nil
}

func (g gathered) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op ReduceOp) error {
	return nil
}

func TestCheckSame(t *testing.T) {
	ctx := context.Background()
	if err := CheckSame(ctx, Local{}, 42, "program"); err != nil {
		t.Fatalf("Local: %v", err)
	}
	if err := CheckSame(ctx, gathered{rank: 1, fps: []uint64{7, 7, 7}}, 7, "program"); err != nil {
		t.Fatalf("same fingerprints: %v", err)
	}
	err := CheckSame(ctx, gathered{rank: 2, fps: []uint64{7, 9, 7, 7, 5}}, 7, "program")
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("different fingerprints: got %v, want ErrMismatch", err)
	}
	// The largest group first, then the others in the order of their
	// first rank.
	want := "ranks 0, 2, 3: 0x0000000000000007; rank 1: 0x0000000000000009; rank 4: 0x0000000000000005"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "program fingerprints differ (seen from rank 2 of 5)") {
		t.Fatalf("error %q lacks %q", err, want)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if err := CheckSame(ctx2, Local{}, 1, "program"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v", err)
	}
}
