package cuda

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestRandomMatchesCPU: with one key Variable, advanced by
// exec.AdvanceKey on each backend, every Run gives the CPU's raw Philox
// words bit for bit (the stream does not depend on the backend or the
// thread layout), hence the same uniforms and Bernoulli draws. The
// normals go through the device's double log and cos, which differ from
// Go's by an ulp or so: float64 normals (magnitudes up to 8.6) are within
// 2⁻⁴⁸ (16 ulp of 1.0; measured: 3 ulp of the value at worst) of the
// CPU's, float32 ones (rounded from those doubles) within 1 ulp.
func TestRandomMatchesCPU(t *testing.T) {
	b := open(t)
	defer b.Close()
	c, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 1<<16 + 3
	if testing.Short() {
		n = 1<<12 + 3
	}
	g := graph.New()
	key := g.Variable("key", ops.KeyTensor(99))
	outs := []*graph.Node{
		ops.Apply(ops.OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: tensor.Shape{n}}, key),
		ops.RandomUniform(key, tensor.Float32, n),
		ops.RandomUniform(key, tensor.Float64, n),
		ops.RandomBernoulli(key, 0.7, n),
		ops.RandomNormal(key, tensor.Float32, n),
		ops.RandomNormal(key, tensor.Float64, n),
	}
	const exact = 4 // the outputs before this index are compared bit for bit
	progs := make([]*exec.Program, 2)
	for i, be := range []exec.Backend{b, c} {
		p, err := exec.Compile(be, outs, exec.AdvanceKey(key))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		progs[i] = p
	}
	var prev []byte
	for run := range 3 {
		gpu, err := progs[0].Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		host, err := progs[1].Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(gpu[0].Bytes(), prev) {
			t.Errorf("run %d drew the words of the run before", run)
		}
		prev = gpu[0].Bytes()
		for k := range outs {
			if k < exact {
				if !bytes.Equal(gpu[k].Bytes(), host[k].Bytes()) {
					t.Errorf("run %d: %s differs from the CPU's", run, outs[k])
				}
				continue
			}
			worst, bound := 0.0, 0.0
			for i := 0; i < n; i++ {
				x, y := gpu[k].Float64(i), host[k].Float64(i)
				if outs[k].DType() == tensor.Float32 {
					// 1 ulp of float32 at y
					bound = float64(math.Nextafter32(float32(math.Abs(y)), float32(math.Inf(1))) - float32(math.Abs(y)))
				} else {
					bound = 0x1p-48
				}
				worst = max(worst, math.Abs(x-y)/bound)
			}
			if worst > 1 {
				t.Errorf("run %d: %s differs from the CPU's by %v times the bound", run, outs[k], worst)
			}
			t.Logf("run %d: %s differs from the CPU's by at most %.3g of the bound", run, outs[k], worst)
		}
	}
}
