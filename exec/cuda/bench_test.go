//go:build linux

package cuda

import (
	"context"
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// The GPU benchmarks of issue 8 (meaningful on a real GPU; on the emulator
// they only show that the code runs):
//
//	.gpu/cuda.test -test.run '^$' -test.bench . -test.benchtime 200x
//
// BenchmarkCopy is the device's copy bandwidth (cuMemcpyDtoDAsync, read +
// write bytes per second); BenchmarkFusedChain runs a 50-op Mul/Add chain
// over a device-resident Variable (x <- chain(x), nothing crosses PCIe) and
// reports the same read + write bytes per second, so the two MB/s columns
// compare directly (target: the chain at >= 80% of the copy). BenchmarkMLPStep
// is the MNIST MLP's Adam training step, to compare with
// bench/gpu/torch_mlp.py (PyTorch eager on the same GPU).

var chainSizes = []int{16 << 20, 64 << 20}

func BenchmarkCopy(b *testing.B) {
	be := open(b)
	defer be.Close()
	for _, n := range chainSizes {
		b.Run(fmt.Sprintf("%dM", n>>20), func(b *testing.B) {
			bytes := int64(4 * n)
			var src, dst = mustAlloc(b, be, bytes), mustAlloc(b, be, bytes)
			var s = mustStream(b, be)
			b.SetBytes(2 * bytes)
			b.ResetTimer()
			err := be.do(func() error {
				d := be.lib.drv
				for i := 0; i < b.N; i++ {
					if err := d.MemcpyDtoDAsync(dst, src, bytes, s); err != nil {
						return err
					}
				}
				return d.StreamSynchronize(s)
			})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			be.do(func() error {
				be.alloc.put(src)
				be.alloc.put(dst)
				return be.lib.drv.StreamDestroy(s)
			})
		})
	}
}

func mustAlloc(b *testing.B, be *Backend, n int64) (p cu.DevicePtr) {
	if err := be.do(func() (err error) { p, err = be.alloc.alloc(n); return }); err != nil {
		b.Fatal(err)
	}
	return p
}

func mustStream(b *testing.B, be *Backend) (s cu.Stream) {
	if err := be.do(func() (err error) { s, err = be.lib.drv.StreamCreate(0); return }); err != nil {
		b.Fatal(err)
	}
	return s
}

// chain builds x <- 25 x (x*a + c) steps (50 ops) as one fused kernel.
func BenchmarkFusedChain(b *testing.B) {
	be := open(b)
	defer be.Close()
	for _, n := range chainSizes {
		b.Run(fmt.Sprintf("%dM", n>>20), func(b *testing.B) {
			g := graph.New()
			init, _ := tensor.Full(tensor.Float32, 0.5, n)
			x := g.Variable("x", init)
			y := x
			for i := 0; i < 25; i++ {
				y = ops.Add(ops.Mul(y, ops.Scalar(x, 0.999)), ops.Scalar(x, 0.0005))
			}
			p, err := exec.Compile(be, nil, exec.Update(x, y))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if st := p.Stats(); st.Kernels != 1 {
				b.Fatalf("the chain compiled to %d kernels, want 1 fused kernel", st.Kernels)
			}
			ctx := context.Background()
			b.SetBytes(int64(8 * n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Run(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMLPStep: 784-256-10 ReLU MLP, softmax cross-entropy, Adam,
// batch 64 (the MNIST demo's step), one Run per iteration including the
// batch's upload and the loss's download.
func BenchmarkMLPStep(b *testing.B) {
	be := open(b)
	defer be.Close()
	for _, batch := range []int{64, 256} {
		b.Run(fmt.Sprintf("b%d", batch), func(b *testing.B) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, batch, 784)
			y := g.Input("y", tensor.Int64, batch)
			r := optim.NewRand(1)
			iw1, err := optim.HeNormal(r, tensor.Float32, 784, 256)
			if err != nil {
				b.Fatal(err)
			}
			iw2, err := optim.GlorotUniform(r, tensor.Float32, 256, 10)
			if err != nil {
				b.Fatal(err)
			}
			w1 := g.Variable("w1", iw1)
			b1 := g.Variable("b1", tensor.Zeros(tensor.Float32, 256))
			w2 := g.Variable("w2", iw2)
			b2 := g.Variable("b2", tensor.Zeros(tensor.Float32, 10))
			h := ops.Relu(ops.Add(ops.MatMul(x, w1), b1))
			loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(ops.Add(ops.MatMul(h, w2), b2), y))
			params := []*graph.Node{w1, b1, w2, b2}
			updates, err := optim.Minimize(optim.Adam{LR: 1e-3}, loss, params...)
			if err != nil {
				b.Fatal(err)
			}
			p, err := exec.Compile(be, []*graph.Node{loss}, updates...)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			lab := tensor.Zeros(tensor.Int64, batch)
			for i := 0; i < batch; i++ {
				lab.SetFloat64(i, float64(i%10))
			}
			feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{batch, 784}, 0, 1, 1), y: lab}
			outs := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := p.RunInto(ctx, feeds, outs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
