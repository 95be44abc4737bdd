package exec_test

import (
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// longChain builds an elementwise chain of n links over a [1024] float32
// input: alternately a multiply by and an add of a scalar constant.
func longChain(n int) *graph.Node {
	g := graph.New()
	return longChainFrom(g.Input("x", tensor.Float32, 1024), n)
}

// longChainFrom is longChain's chain from x.
func longChainFrom(y *graph.Node, n int) *graph.Node {
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			y = ops.Mul(y, ops.Scalar(y, 0.999))
		} else {
			y = ops.Add(y, ops.Scalar(y, 0.001))
		}
	}
	return y
}

// BenchmarkFuseChain compiles a 2,000-link elementwise chain, which fuses
// into one kernel. The passes that could shrink the chain (constfold,
// simplify, cse) are off, so the fuse pass sees all 2,000 links; ns/op is
// the whole Compile, fuse-ns/op the fuse pass alone (from Program.Passes).
func BenchmarkFuseChain(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	y := longChain(2000)
	var fuseNs int64
	b.ReportAllocs()
	for b.Loop() {
		p, err := exec.Compile(be, []*graph.Node{y}, exec.DisablePasses("constfold", "simplify", "cse"))
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range p.Passes() {
			if t.Name == "fuse" {
				fuseNs += t.End.Sub(t.Start).Nanoseconds()
			}
		}
		if st := p.Stats(); len(st.FusedGroups) != 1 || st.FusedGroups[0] != 2000 {
			b.Fatalf("fused groups %v, want one of 2000 ops", st.FusedGroups)
		}
		p.Close()
	}
	b.ReportMetric(float64(fuseNs)/float64(b.N), "fuse-ns/op")
}
