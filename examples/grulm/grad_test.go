package main

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestGradReference: the gradient of the loss through the Scan (reverse
// mode through the loop: autodiff's reverse Scan over saved steps) is the
// gradient through the unrolled loop (T copies of the cell, ordinary
// reverse mode), for every parameter, both by exectest.Eval; and the
// Scan's gradients of two weights match central finite differences of
// the loss.
func TestGradReference(t *testing.T) {
	g, m := tinyModel(t)
	const B, T = 2, 6
	x := g.Input("x", tensor.Int32, B, T)
	y := g.Input("y", tensor.Int32, B, T)
	labels := ops.Reshape(ops.Transpose(y, 1, 0), T*B)
	loss := m.loss(x, y)
	lossUnrolled := ops.Mean(ops.SparseSoftmaxCrossEntropy(m.forwardUnrolled(x), labels))
	params := m.params()
	grads := autodiff.Grad(loss, params...)
	gradsUnrolled := autodiff.Grad(lossUnrolled, params...)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	xt, _ := tensor.New([]int32{0, 3, 4, 1, 1, 2, 4, 4, 0, 2, 3, 1}, B, T)
	yt, _ := tensor.New([]int32{3, 4, 1, 1, 2, 0, 4, 0, 2, 3, 1, 1}, B, T)
	feeds := map[*graph.Node]*tensor.Tensor{x: xt, y: yt}
	out, err := exectest.Eval(append(append([]*graph.Node{loss}, grads...), gradsUnrolled...), feeds)
	if err != nil {
		t.Fatal(err)
	}
	// Eval rounds every node's value to float32, and the two gradients
	// add the steps' contributions in different orders: equal to 1e-5 of
	// the gradient's largest element.
	np := len(params)
	for i, p := range params {
		a, b := out[1+i].Float64s(), out[1+np+i].Float64s()
		var big float64
		for _, v := range b {
			big = max(big, math.Abs(v))
		}
		if big == 0 {
			t.Errorf("%s: the gradient is zero", p.Name())
		}
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-5*big {
				t.Fatalf("%s[%d]: %v through the Scan, %v unrolled", p.Name(), j, a[j], b[j])
			}
		}
	}
	// Central finite differences of the loss along d = sign(∂loss/∂w)
	// for the recurrent and the input weights (the derivative along d is
	// Σ|∂loss/∂w|). Eval rounds the loss to float32 (~1e-7), so the step
	// is 1e-3 and the quotient good to about 1%.
	for _, w := range []*graph.Node{m.wh, m.wx} {
		wv, _ := tensor.Values[float32](w.Value())
		orig := append([]float32(nil), wv...)
		grad := out[1+indexOf(params, w)].Float64s()
		var want float64
		for _, v := range grad {
			want += math.Abs(v)
		}
		lossAt := func(eps float64) float64 {
			for j, v := range grad {
				wv[j] = orig[j] + float32(eps*math.Copysign(1, v))
			}
			o, err := exectest.Eval([]*graph.Node{loss}, feeds)
			if err != nil {
				t.Fatal(err)
			}
			return o[0].Float64s()[0]
		}
		const eps = 1e-3
		fd := (lossAt(eps) - lossAt(-eps)) / (2 * eps)
		copy(wv, orig)
		t.Logf("%s: derivative along sign(grad) %.6g by autodiff, %.6g by finite differences", w.Name(), want, fd)
		if math.Abs(fd-want) > 0.01*want {
			t.Errorf("%s: derivative along sign(grad) %.6g by autodiff, %.6g by finite differences", w.Name(), want, fd)
		}
	}
}

func indexOf(ns []*graph.Node, n *graph.Node) int {
	for i, x := range ns {
		if x == n {
			return i
		}
	}
	return -1
}
