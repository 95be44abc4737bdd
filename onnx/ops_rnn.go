package onnx

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The recurrent operators RNN, GRU and LSTM (Operators.md#RNN, #GRU,
// #LSTM, opsets 1 to 14). Each direction is one ops.Scan over the
// sequence: the input projection X·Wᵀ + Wb of every step is one MatMul
// before the loop, the recurrence (H·Rᵀ and the gates) is the loop's
// body. sequence_lens masks the steps past each batch entry's length:
// the state stops changing and Y is zero there, so the reverse direction
// starts at each entry's own last step, as the spec says. The
// activations, their alpha and beta, clip, layout and (LSTM) the
// peepholes and input_forget follow the spec.

type rnnKind int

const (
	kindRNN rnnKind = iota
	kindGRU
	kindLSTM
)

func init() {
	common := []string{"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout", "output_sequence"}
	operators["RNN"] = opDef{attrs: common, fn: func(n *onode) ([]*graph.Node, error) { return recurrent(n, kindRNN) }, spec: "Operators.md#RNN"}
	operators["GRU"] = opDef{attrs: append(append([]string{}, common...), "linear_before_reset"), fn: func(n *onode) ([]*graph.Node, error) { return recurrent(n, kindGRU) }, spec: "Operators.md#GRU"}
	operators["LSTM"] = opDef{attrs: append(append([]string{}, common...), "input_forget"), fn: func(n *onode) ([]*graph.Node, error) { return recurrent(n, kindLSTM) }, spec: "Operators.md#LSTM"}
}

// rnnActivation is one activation function of the activations attribute.
type rnnActivation func(x *graph.Node) *graph.Node

// rnnActivations parses the activations attribute: nPer per direction,
// the alphas and betas consumed in order by the functions that take
// them (defaults as the ONNX operators of the same names).
func rnnActivations(n *onode, defaults []string, dirs int) ([]rnnActivation, error) {
	names := defaults
	if a := n.attr("activations"); a != nil {
		names = nil
		for _, s := range a.Strings {
			names = append(names, string(s))
		}
		if len(names) != len(defaults)*dirs {
			return nil, fmt.Errorf("activations lists %d functions; %d per direction are needed for %d direction(s)", len(names), len(defaults), dirs)
		}
	} else if dirs == 2 {
		names = append(append([]string{}, names...), names...)
	}
	alphas, _ := n.attrFloats("activation_alpha")
	betas, _ := n.attrFloats("activation_beta")
	next := func(list *[]float64, def float64) float64 {
		if len(*list) == 0 {
			return def
		}
		v := (*list)[0]
		*list = (*list)[1:]
		return v
	}
	out := make([]rnnActivation, len(names))
	for i, name := range names {
		var f rnnActivation
		switch strings.ToLower(name) {
		case "relu":
			f = ops.Relu
		case "tanh":
			f = ops.Tanh
		case "sigmoid":
			f = ops.Sigmoid
		case "softsign":
			f = func(x *graph.Node) *graph.Node { return ops.Div(x, ops.Add(scalarLike(x, 1), ops.Abs(x))) }
		case "softplus":
			f = ops.Softplus
		case "affine":
			a, b := next(&alphas, 1), next(&betas, 0)
			f = func(x *graph.Node) *graph.Node { return ops.Add(ops.Mul(x, scalarLike(x, a)), scalarLike(x, b)) }
		case "leakyrelu":
			a := next(&alphas, 0.01)
			f = func(x *graph.Node) *graph.Node { return ops.LeakyRelu(x, a) }
		case "thresholdedrelu":
			a := next(&alphas, 1)
			f = func(x *graph.Node) *graph.Node {
				return ops.Where(ops.Greater(x, scalarLike(x, a)), x, scalarLike(x, 0))
			}
		case "scaledtanh":
			a, b := next(&alphas, 1), next(&betas, 1)
			f = func(x *graph.Node) *graph.Node {
				return ops.Mul(scalarLike(x, a), ops.Tanh(ops.Mul(x, scalarLike(x, b))))
			}
		case "hardsigmoid":
			a, b := next(&alphas, 0.2), next(&betas, 0.5)
			f = func(x *graph.Node) *graph.Node {
				y := ops.Add(ops.Mul(x, scalarLike(x, a)), scalarLike(x, b))
				return ops.Clip(y, scalarLike(x, 0), scalarLike(x, 1))
			}
		case "elu":
			a := next(&alphas, 1)
			f = func(x *graph.Node) *graph.Node { return ops.Elu(x, a) }
		default:
			return nil, fmt.Errorf("%w: activation %q", ErrUnsupported, name)
		}
		out[i] = f
	}
	if len(alphas) > 0 || len(betas) > 0 {
		return nil, fmt.Errorf("activation_alpha/activation_beta give more values than the activations %v take", names)
	}
	if n.hasAttr("clip") {
		c := n.attrFloat("clip", 0)
		if c < 0 {
			return nil, fmt.Errorf("clip %g is negative", c)
		}
		for i, f := range out {
			// clip bounds the input of every activation.
			out[i] = func(x *graph.Node) *graph.Node {
				return f(ops.Clip(x, scalarLike(x, -c), scalarLike(x, c)))
			}
		}
	}
	return out, nil
}

// recurrent imports RNN, GRU or LSTM.
func recurrent(n *onode, kind rnnKind) ([]*graph.Node, error) {
	gates, defaults := 1, []string{"Tanh"}
	switch kind {
	case kindGRU:
		gates, defaults = 3, []string{"Sigmoid", "Tanh"}
	case kindLSTM:
		gates, defaults = 4, []string{"Sigmoid", "Tanh", "Tanh"}
	}
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	w, err := n.need(1)
	if err != nil {
		return nil, err
	}
	r, err := n.need(2)
	if err != nil {
		return nil, err
	}
	if !x.DType().IsFloat() {
		return nil, fmt.Errorf("X is %s; a float type is required", x.DType())
	}
	if x.Rank() != 3 || w.Rank() != 3 || r.Rank() != 3 {
		return nil, fmt.Errorf("X %v, W %v and R %v must all have rank 3", x.Shape(), w.Shape(), r.Shape())
	}
	layout := n.attrInt("layout", 0)
	if layout != 0 && layout != 1 {
		return nil, fmt.Errorf("layout %d: want 0 or 1", layout)
	}
	if layout == 1 {
		x = ops.Transpose(x, 1, 0, 2)
	}
	T, B, I := x.Shape()[0], x.Shape()[1], x.Shape()[2]
	dirs := 1
	dir := n.attrString("direction", "forward")
	switch dir {
	case "forward", "reverse":
	case "bidirectional":
		dirs = 2
	default:
		return nil, fmt.Errorf("direction %q: want forward, reverse or bidirectional", dir)
	}
	H := r.Shape()[2]
	if n.hasAttr("hidden_size") && n.attrInt("hidden_size", 0) != H {
		return nil, fmt.Errorf("hidden_size %d, but R %v has hidden size %d", n.attrInt("hidden_size", 0), r.Shape(), H)
	}
	if !w.Shape().Equal(tensor.Shape{dirs, gates * H, I}) || !r.Shape().Equal(tensor.Shape{dirs, gates * H, H}) {
		return nil, fmt.Errorf("W %v and R %v: want [%d %d %d] and [%d %d %d] (directions, %d gates × hidden %d, input %d / hidden)",
			w.Shape(), r.Shape(), dirs, gates*H, I, dirs, gates*H, H, gates, H, I)
	}
	dt := x.DType()
	for i, v := range []*graph.Node{w, r} {
		if v.DType() != dt {
			return nil, fmt.Errorf("input %d is %s, X is %s: ONNX requires one type", i+1, v.DType(), dt)
		}
	}
	acts, err := rnnActivations(n, defaults, dirs)
	if err != nil {
		return nil, err
	}
	lbr := n.attrInt("linear_before_reset", 0) != 0
	inputForget := n.attrInt("input_forget", 0) != 0
	// Optional inputs.
	b := n.in(3)
	if b != nil && !b.Shape().Equal(tensor.Shape{dirs, 2 * gates * H}) {
		return nil, fmt.Errorf("B is %v; want [%d %d]", b.Shape(), dirs, 2*gates*H)
	}
	var mask *graph.Node // [T, B, 1] bool: step t is within entry b's length
	if n.has(4) {
		sl := n.in(4)
		if !sl.Shape().Equal(tensor.Shape{B}) || !sl.DType().IsInt() {
			return nil, fmt.Errorf("sequence_lens is %s; want integers of shape [%d]", sl.Type(), B)
		}
		full := false
		if lens, err := n.ints(4); err == nil {
			full = true
			for _, l := range lens {
				if l < 0 || l > T {
					return nil, fmt.Errorf("sequence_lens %v: every length must be in [0, %d]", lens, T)
				}
				full = full && l == T
			}
		}
		if !full {
			steps := ops.Iota(n.g(), sl.DType(), 0, T, B, 1)
			mask = ops.Less(steps, ops.Reshape(sl, 1, B, 1))
		}
	}
	stateIn := func(i int, what string) (*graph.Node, error) {
		v := n.in(i)
		if v == nil {
			return nil, nil
		}
		if layout == 1 {
			v = ops.Transpose(v, 1, 0, 2)
		}
		if !v.Shape().Equal(tensor.Shape{dirs, B, H}) {
			return nil, fmt.Errorf("%s is %v (layout %d); want [%d %d %d] before the layout's transpose", what, n.in(i).Shape(), layout, dirs, B, H)
		}
		return v, nil
	}
	h0, err := stateIn(5, "initial_h")
	if err != nil {
		return nil, err
	}
	var c0, p *graph.Node
	if kind == kindLSTM {
		if c0, err = stateIn(6, "initial_c"); err != nil {
			return nil, err
		}
		if p = n.in(7); p != nil && !p.Shape().Equal(tensor.Shape{dirs, 3 * H}) {
			return nil, fmt.Errorf("P is %v; want [%d %d]", p.Shape(), dirs, 3*H)
		}
	}
	nact := len(defaults)
	var ys, hs, cs []*graph.Node
	for d := range dirs {
		reverse := dir == "reverse" || d == 1
		pick := func(v *graph.Node) *graph.Node { // v[d], the direction's slice
			if v == nil {
				return nil
			}
			s := ops.Slice(v, ops.R(d, d+1))
			return ops.Squeeze(s, 0)
		}
		wd, rd := pick(w), pick(r) // [G·H, I], [G·H, H]
		// Input projection of every step at once: [T, B, G·H].
		xw := ops.Reshape(ops.MatMulT(ops.Reshape(x, T*B, I), wd, false, true), T, B, gates*H)
		var rb *graph.Node // GRU with linear_before_reset: Rbh, added inside the reset
		if b != nil {
			bd := pick(b)
			wb := ops.Slice(bd, ops.R(0, gates*H))
			rbAll := ops.Slice(bd, ops.R(gates*H, 2*gates*H))
			if kind == kindGRU && lbr {
				// Rbh stays inside the reset gate's product.
				rzr := ops.Slice(rbAll, ops.R(0, 2*H))
				rb = ops.Slice(rbAll, ops.R(2*H, 3*H))
				wb = ops.Add(wb, ops.Concat(0, rzr, ops.Full(n.g(), dt, 0, H)))
			} else {
				wb = ops.Add(wb, rbAll)
			}
			xw = ops.Add(xw, wb)
		}
		h := pick(h0)
		if h == nil {
			h = ops.Full(n.g(), dt, 0, B, H)
		}
		c := pick(c0)
		if kind == kindLSTM && c == nil {
			c = ops.Full(n.g(), dt, 0, B, H)
		}
		var pi, po, pf *graph.Node
		if p != nil {
			pp := ops.Split(pick(p), 3, 0)
			pi, po, pf = pp[0], pp[1], pp[2]
		}
		act := acts[d*nact : (d+1)*nact]
		var zero *graph.Node // Y past a batch entry's length
		if mask != nil {
			zero = ops.Full(n.g(), dt, 0, B, H)
		}
		body := func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
			hPrev := carry[0]
			xt := xs[0]
			hr := ops.MatMulT(hPrev, rd, false, true) // [B, G·H]
			var hNew, cNew *graph.Node
			switch kind {
			case kindRNN:
				hNew = act[0](ops.Add(xt, hr))
			case kindGRU:
				xg := ops.Split(xt, 3, 1)
				if lbr {
					rg := ops.Split(hr, 3, 1)
					z := act[0](ops.Add(xg[0], rg[0]))
					rr := act[0](ops.Add(xg[1], rg[1]))
					rh := rg[2]
					if rb != nil {
						rh = ops.Add(rh, rb)
					}
					ht := act[1](ops.Add(xg[2], ops.Mul(rr, rh)))
					hNew = ops.Add(ops.Mul(ops.Sub(scalarLike(z, 1), z), ht), ops.Mul(z, hPrev))
				} else {
					rzr := ops.Split(ops.Slice(hr, ops.All, ops.R(0, 2*H)), 2, 1)
					z := act[0](ops.Add(xg[0], rzr[0]))
					rr := act[0](ops.Add(xg[1], rzr[1]))
					rh := ops.Slice(rd, ops.R(2*H, 3*H)) // [H, H]
					ht := act[1](ops.Add(xg[2], ops.MatMulT(ops.Mul(rr, hPrev), rh, false, true)))
					hNew = ops.Add(ops.Mul(ops.Sub(scalarLike(z, 1), z), ht), ops.Mul(z, hPrev))
				}
			case kindLSTM:
				cPrev := carry[1]
				g := ops.Split(ops.Add(xt, hr), 4, 1) // i, o, f, c
				gi, gof, gf, gc := g[0], g[1], g[2], g[3]
				if pi != nil {
					gi = ops.Add(gi, ops.Mul(pi, cPrev))
					gf = ops.Add(gf, ops.Mul(pf, cPrev))
				}
				it := act[0](gi)
				var ft *graph.Node
				if inputForget {
					ft = ops.Sub(scalarLike(it, 1), it) // input and forget gates coupled
				} else {
					ft = act[0](gf)
				}
				ct := act[1](gc)
				cNew = ops.Add(ops.Mul(ft, cPrev), ops.Mul(it, ct))
				if po != nil {
					gof = ops.Add(gof, ops.Mul(po, cNew))
				}
				ot := act[0](gof)
				hNew = ops.Mul(ot, act[2](cNew))
			}
			y := hNew
			if mask != nil {
				m := xs[1]
				hNew = ops.Where(m, hNew, hPrev)
				y = ops.Where(m, y, zero)
				if cNew != nil {
					cNew = ops.Where(m, cNew, carry[1])
				}
			}
			next := []*graph.Node{hNew}
			if cNew != nil {
				next = append(next, cNew)
			}
			return next, []*graph.Node{y}
		}
		init := []*graph.Node{h}
		if kind == kindLSTM {
			init = append(init, c)
		}
		seqs := []*graph.Node{xw}
		if mask != nil {
			seqs = append(seqs, mask)
		}
		var opts []ops.LoopOption
		if reverse {
			opts = append(opts, ops.ScanReverse())
		}
		carry, out := ops.Scan(body, init, seqs, T, opts...)
		ys = append(ys, out[0])
		hs = append(hs, carry[0])
		if kind == kindLSTM {
			cs = append(cs, carry[1])
		}
	}
	y := ops.Stack(1, ys...)  // [T, D, B, H]
	yh := ops.Stack(0, hs...) // [D, B, H]
	var yc *graph.Node
	if kind == kindLSTM {
		yc = ops.Stack(0, cs...)
	}
	if layout == 1 {
		y = ops.Transpose(y, 2, 0, 1, 3)
		yh = ops.Transpose(yh, 1, 0, 2)
		if yc != nil {
			yc = ops.Transpose(yc, 1, 0, 2)
		}
	}
	outs := []*graph.Node{y, yh}
	if yc != nil {
		outs = append(outs, yc)
	}
	return outs, nil
}
