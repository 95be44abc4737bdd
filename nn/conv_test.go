package nn_test

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// TestConvByHand: a grouped, strided, padded 2-D convolution layer
// against a direct convolution written out here (PyTorch's definition:
// y[n,o,i,j] = b[o] + Σ_c Σ_k x[n, g·C/G + c, i·s - p + k_h, j·s - p + k_w]·w[o,c,k]
// over the group g of o), evaluated by the float64 reference
// interpreter; the weights are PyTorch's default draws U(±1/√fanIn),
// fanIn = 2·3·2 = 12, from optim.NewRand(seed), weight then bias.
func TestConvByHand(t *testing.T) {
	g := graph.New()
	m := nn.New(g, 11)
	const N, C, H, W, O, G, KH, KW, S, P = 2, 4, 5, 4, 6, 2, 3, 2, 2, 1
	x := g.Input("x", tensor.Float64, N, C, H, W)
	y := m.Conv(x, O, []int{KH, KW}, ops.Stride(S), ops.Padding(P), ops.Groups(G))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	OH, OW := (H+2*P-KH)/S+1, (W+2*P-KW)/S+1
	if !y.Shape().Equal([]int{N, O, OH, OW}) {
		t.Fatalf("y %v, want [%d %d %d %d]", y.Shape(), N, O, OH, OW)
	}
	if m.Names()[0] != "conv0/weight" || !m.Params()[0].Shape().Equal([]int{O, C / G, KH, KW}) {
		t.Fatalf("params %v %v", m.Names(), m.Params()[0].Shape())
	}
	w, b := floats(m.Params()[0].Value()), floats(m.Params()[1].Value())
	r := optim.NewRand(11)
	bound := 1 / math.Sqrt(12)
	wt, _ := optim.Uniform(r, -bound, bound, tensor.Float64, O, C/G, KH, KW)
	bt, _ := optim.Uniform(r, -bound, bound, tensor.Float64, O)
	near(t, "weight", w, floats(wt), 0)
	near(t, "bias", b, floats(bt), 0)

	xv := sinSeq(N*C*H*W, 0.7, 0.2, 1, 0.01)
	got, err := exectest.Eval([]*graph.Node{y}, map[*graph.Node]*tensor.Tensor{x: f64(t, xv, N, C, H, W)})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 0, N*O*OH*OW)
	cg, og := C/G, O/G
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			grp := o / og
			for i := 0; i < OH; i++ {
				for j := 0; j < OW; j++ {
					s := b[o]
					for c := 0; c < cg; c++ {
						for kh := 0; kh < KH; kh++ {
							for kw := 0; kw < KW; kw++ {
								hi, wi := i*S-P+kh, j*S-P+kw
								if hi < 0 || hi >= H || wi < 0 || wi >= W {
									continue
								}
								s += xv[((n*C+grp*cg+c)*H+hi)*W+wi] * w[((o*cg+c)*KH+kh)*KW+kw]
							}
						}
					}
					want = append(want, s)
				}
			}
		}
	}
	near(t, "y", floats(got[0]), want, 1e-14)
	// and on the CPU
	p := compile(t, backend(t), []*graph.Node{y})
	near(t, "y on the CPU", floats(run(t, p, exec.Feeds{x: f64(t, xv, N, C, H, W)})[0]), want, 1e-14)
}

// TestConvErrors: the layer's own checks name nn.Conv and the call site.
func TestConvErrors(t *testing.T) {
	for name, c := range map[string]struct {
		f    func(m *nn.Model, g *graph.Graph) *graph.Node
		text string
	}{
		"rank": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			return m.Conv(g.Input("x", tensor.Float32, 2, 3, 8), 4, []int{3, 3})
		}, "nn.Conv"},
		"groups": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			return m.Conv(g.Input("x", tensor.Float32, 2, 3, 8), 4, []int{3}, ops.Groups(2))
		}, "2 groups"},
		"kernel": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			return m.Conv(g.Input("x", tensor.Float32, 2, 3, 8), 4, []int{0})
		}, "positive"},
	} {
		g := graph.New()
		n := c.f(nn.New(g, 1), g)
		if n.Valid() || !errorsIs(n.Err(), graph.ErrShape) || !contains(n.Err().Error(), c.text) || !contains(n.Err().Error(), "conv_test.go") {
			t.Errorf("%s: got %v", name, n.Err())
		}
	}
}
