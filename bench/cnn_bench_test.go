package bench

import (
	"context"
	"flag"
	"math"
	"os"
	"testing"

	"github.com/loomgraph/loom/profile"
)

// BenchmarkCNNStep times one training step of the cnn/train-step/b64
// workload on loom's CPU backend with 1 and 2 kernel threads (the
// peers runner's loom engine), for CPU profiles of the step
// (go test -run XXX -bench CNNStep -cpuprofile cpu.out).
func BenchmarkCNNStep(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[threads], func(b *testing.B) {
			e, err := NewLoom(threads)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			inst, err := e.New(CNNSpec(64))
			if err != nil {
				b.Fatal(err)
			}
			in := inst.(*loomInst)
			defer in.Close()
			for i := 0; i < 3; i++ {
				if err := in.step(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := in.step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var cnnSummary = flag.Bool("cnn-summary", false, "TestCNNProfile: print the per-op summary of the cnn step")

// TestCNNProfile prints where the time of one cnn/train-step/b64 step
// goes, per kernel (the profile package's summary), with -cnn-summary.
func TestCNNProfile(t *testing.T) {
	if !*cnnSummary {
		t.Skip("-cnn-summary not set")
	}
	e, err := NewLoom(1)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	inst, err := e.New(CNNSpec(64))
	if err != nil {
		t.Fatal(err)
	}
	in := inst.(*loomInst)
	defer in.Close()
	rec, err := profile.Function(context.Background(), 3, 20, func(ctx context.Context) error {
		return in.prog.RunInto(ctx, in.feeds, in.outs)
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.WriteSummary(os.Stdout)
}

// TestCNNStepThreads: three training steps of cnn/train-step/b64 on 1, 2
// and 3 kernel threads give the same bits: the losses and every
// parameter after the steps.
func TestCNNStepThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	var want [][]float32
	for _, threads := range []int{1, 2, 3} {
		e, err := NewLoom(threads)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := e.New(CNNSpec(64))
		if err != nil {
			t.Fatal(err)
		}
		in := inst.(*loomInst)
		var got [][]float32
		for i := 0; i < 3; i++ {
			if err := in.step(); err != nil {
				t.Fatal(err)
			}
			got = append(got, append([]float32(nil), values(in.outs[0])...))
		}
		for _, p := range in.params {
			v, err := in.prog.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, append([]float32(nil), values(v)...))
		}
		in.Close()
		e.Close()
		if want == nil {
			want = got
			continue
		}
		for k := range want {
			for j := range want[k] {
				if math.Float32bits(got[k][j]) != math.Float32bits(want[k][j]) {
					t.Errorf("%d threads: value %d[%d] = %v, 1 thread %v", threads, k, j, got[k][j], want[k][j])
					break
				}
			}
		}
	}
}
