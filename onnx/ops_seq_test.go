package onnx

import (
	"context"
	"errors"
	"math"
	"math/cmplx"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Unit tests of what the ONNX backend test data leave out for the
// recurrent, resampling and spectral operators: bidirectional and reverse
// recurrences, sequence_lens masking, linear_before_reset, activations
// with alpha/beta, clip, input_forget, Y_c; Resize-10 and Upsample-7;
// tf_crop_and_resize with scales; DFT with onesided, dft_length and
// complex input; STFT of a complex signal. The references are float64
// loops written from the spec's equations (or hand calculations, said
// where).

// tin is one input of a test node: a constant (known at import) or, with
// feed, a graph input fed at run time. An empty name is an absent input.
type tin struct {
	name string
	t    *tensor.Tensor
	feed bool
}

func iattr(name string, v int) *attrProto { return &attrProto{Name: name, Type: attrInt, I: int64(v)} }
func isattr(name string, v ...int64) *attrProto {
	return &attrProto{Name: name, Type: attrInts, Ints: v}
}
func fattr(name string, v float64) *attrProto {
	return &attrProto{Name: name, Type: attrFloat, F: float32(v)}
}
func sattr(name, v string) *attrProto { return &attrProto{Name: name, Type: attrString, S: []byte(v)} }
func fsattr(name string, v ...float64) *attrProto {
	a := &attrProto{Name: name, Type: attrFloats}
	for _, x := range v {
		a.Floats = append(a.Floats, float32(x))
	}
	return a
}
func ssattr(name string, v ...string) *attrProto {
	a := &attrProto{Name: name, Type: attrStrings}
	for _, x := range v {
		a.Strings = append(a.Strings, []byte(x))
	}
	return a
}

// runNode imports one node of op at opset and runs it on the CPU.
func runNode(t *testing.T, opset int, op string, attrs []*attrProto, ins []tin, nout int) ([]*tensor.Tensor, error) {
	t.Helper()
	outs, feeds, err := buildNode(opset, op, attrs, ins, nout)
	if err != nil {
		return nil, err
	}
	be := cpuBackend(t)
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatalf("%s: compile: %v", op, err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatalf("%s: run: %v", op, err)
	}
	return res, nil
}

// buildNode imports one node into a new graph: its outputs and the feeds
// of its fed inputs.
func buildNode(opset int, op string, attrs []*attrProto, ins []tin, nout int) ([]*graph.Node, exec.Feeds, error) {
	im := &importer{g: graph.New(), opset: opset, vals: map[string]*value{}}
	im.model = &Model{Graph: im.g}
	feeds := exec.Feeds{}
	np := &nodeProto{OpType: op, Attrs: attrs}
	for _, in := range ins {
		np.Inputs = append(np.Inputs, in.name)
		if in.name == "" {
			continue
		}
		if in.feed {
			x := im.g.Input(in.name, in.t.DType(), in.t.Shape()...)
			im.vals[in.name] = &value{n: x}
			feeds[x] = in.t
		} else {
			im.vals[in.name] = &value{n: im.g.Const(in.t), known: true, t: in.t}
		}
	}
	for i := range nout {
		np.Outputs = append(np.Outputs, "out"+string(rune('0'+i)))
	}
	if err := im.node(np, 0); err != nil {
		return nil, nil, err
	}
	var outs []*graph.Node
	for _, o := range np.Outputs {
		outs = append(outs, im.vals[o].n)
	}
	return outs, feeds, nil
}

func cpuBackend(t *testing.T) exec.Backend {
	cpuOnce.Do(func() { cpuOnce.be, cpuOnce.err = cpu.New(cpu.Threads(1)) })
	if cpuOnce.err != nil {
		t.Fatal(cpuOnce.err)
	}
	return cpuOnce.be
}

func f64(t *testing.T, v []float64, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromFloat64s(tensor.Float64, v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// seqVals is a deterministic sequence of values in (-1, 1).
func seqVals(n int, seed float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(seed + 1.7*float64(i) + 0.3*float64(i*i%7))
	}
	return v
}

func checkClose(t *testing.T, what string, got *tensor.Tensor, want []float64, shape []int, tol float64) {
	t.Helper()
	if !got.Shape().Equal(tensor.Shape(shape)) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	for i, w := range want {
		if g := got.Float64(i); math.Abs(g-w) > tol*(1+math.Abs(w)) {
			t.Fatalf("%s: element %d is %.12g, want %.12g", what, i, g, w)
		}
	}
}

// rnnCase is a recurrent operator's operands, layout 0, in float64.
type rnnCase struct {
	kind                  rnnKind
	T, B, I, H            int
	dirs                  []bool // reverse, per direction
	x, w, r, b, h0, c0, p []float64
	lens                  []int
	acts                  []func(float64) float64 // per direction: f, g, h
	clip                  float64
	lbr, inputForget      bool
}

// ref computes Y [T, D, B, H], Y_h and Y_c [D, B, H] from the spec's
// equations, one batch entry and one step at a time.
func (c *rnnCase) ref() (y, yh, yc []float64) {
	G := map[rnnKind]int{kindRNN: 1, kindGRU: 3, kindLSTM: 4}[c.kind]
	D, T, B, I, H := len(c.dirs), c.T, c.B, c.I, c.H
	y = make([]float64, T*D*B*H)
	yh = make([]float64, D*B*H)
	yc = make([]float64, D*B*H)
	nact := len(c.acts) / D
	for d := range D {
		act := func(k int, v float64) float64 {
			if c.clip > 0 {
				v = math.Max(-c.clip, math.Min(c.clip, v))
			}
			return c.acts[d*nact+k](v)
		}
		for b := range B {
			L := T
			if c.lens != nil {
				L = c.lens[b]
			}
			h := make([]float64, H)
			cs := make([]float64, H)
			if c.h0 != nil {
				copy(h, c.h0[(d*B+b)*H:])
			}
			if c.c0 != nil {
				copy(cs, c.c0[(d*B+b)*H:])
			}
			// wx(g, j, t): row g·H+j of W times x[t], plus Wb; rh(g, j, v): of R times v, plus Rb.
			wx := func(g, j, t int) float64 {
				s := 0.0
				for k := range I {
					s += c.w[(d*G*H+g*H+j)*I+k] * c.x[(t*B+b)*I+k]
				}
				if c.b != nil {
					s += c.b[d*2*G*H+g*H+j]
				}
				return s
			}
			rh := func(g, j int, v []float64) float64 {
				s := 0.0
				for k := range H {
					s += c.r[(d*G*H+g*H+j)*H+k] * v[k]
				}
				if c.b != nil {
					s += c.b[d*2*G*H+G*H+g*H+j]
				}
				return s
			}
			for s := range L {
				t := s
				if c.dirs[d] {
					t = L - 1 - s
				}
				nh := make([]float64, H)
				nc := make([]float64, H)
				for j := range H {
					switch c.kind {
					case kindRNN:
						nh[j] = act(0, wx(0, j, t)+rh(0, j, h))
					case kindGRU:
						z := act(0, wx(0, j, t)+rh(0, j, h))
						r := act(0, wx(1, j, t)+rh(1, j, h))
						var ht float64
						if c.lbr {
							ht = act(1, wx(2, j, t)+r*rh(2, j, h))
						} else {
							rhv := make([]float64, H)
							for k := range H {
								// r of unit k times h[k]
								rk := act(0, wx(1, k, t)+rh(1, k, h))
								rhv[k] = rk * h[k]
							}
							ht = act(1, wx(2, j, t)+rh(2, j, rhv))
						}
						nh[j] = (1-z)*ht + z*h[j]
					case kindLSTM:
						var pi, po, pf float64
						if c.p != nil {
							pi, po, pf = c.p[d*3*H+j], c.p[d*3*H+H+j], c.p[d*3*H+2*H+j]
						}
						i := act(0, wx(0, j, t)+rh(0, j, h)+pi*cs[j])
						f := act(0, wx(2, j, t)+rh(2, j, h)+pf*cs[j])
						if c.inputForget {
							f = 1 - i
						}
						g := act(1, wx(3, j, t)+rh(3, j, h))
						nc[j] = f*cs[j] + i*g
						o := act(0, wx(1, j, t)+rh(1, j, h)+po*nc[j])
						nh[j] = o * act(2, nc[j])
					}
				}
				h = nh
				if c.kind == kindLSTM {
					cs = nc
				}
				copy(y[((t*D+d)*B+b)*H:], h)
			}
			copy(yh[(d*B+b)*H:], h)
			copy(yc[(d*B+b)*H:], cs)
		}
	}
	return y, yh, yc
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

func TestRecurrentAgainstReference(t *testing.T) {
	const T, B, I, H = 4, 3, 2, 3
	lens := []int{4, 2, 1}
	leaky := func(a float64) func(float64) float64 {
		return func(v float64) float64 {
			if v < 0 {
				return a * v
			}
			return v
		}
	}
	hardSig := func(a, b float64) func(float64) float64 {
		return func(v float64) float64 { return math.Max(0, math.Min(1, a*v+b)) }
	}
	cases := []struct {
		name   string
		op     string
		c      rnnCase
		attrs  []*attrProto
		layout int
		feedSL bool // sequence_lens fed at run time, not known at import
		hasB   bool
		hasH0  bool
		hasC0  bool
		hasP   bool
	}{
		{name: "RNN bidirectional, lens known, LeakyRelu/HardSigmoid with alpha, beta", op: "RNN",
			c: rnnCase{kind: kindRNN, dirs: []bool{false, true}, lens: lens,
				acts: []func(float64) float64{leaky(0.125), hardSig(0.25, 0.375)}},
			attrs: []*attrProto{sattr("direction", "bidirectional"), iattr("hidden_size", H),
				ssattr("activations", "LeakyRelu", "HardSigmoid"), fsattr("activation_alpha", 0.125, 0.25), fsattr("activation_beta", 0.375)},
			hasB: true, hasH0: true},
		{name: "GRU reverse, linear_before_reset, clip, layout 1", op: "GRU",
			c: rnnCase{kind: kindGRU, dirs: []bool{true}, lbr: true, clip: 0.5,
				acts: []func(float64) float64{sigmoid, math.Tanh}},
			attrs:  []*attrProto{sattr("direction", "reverse"), iattr("linear_before_reset", 1), fattr("clip", 0.5), iattr("layout", 1)},
			layout: 1, hasB: true, hasH0: true},
		{name: "GRU bidirectional, lens fed", op: "GRU",
			c: rnnCase{kind: kindGRU, dirs: []bool{false, true}, lens: lens,
				acts: []func(float64) float64{sigmoid, math.Tanh, sigmoid, math.Tanh}},
			attrs:  []*attrProto{sattr("direction", "bidirectional")},
			feedSL: true, hasB: true},
		{name: "LSTM bidirectional, lens fed, peepholes, initial c, input_forget", op: "LSTM",
			c: rnnCase{kind: kindLSTM, dirs: []bool{false, true}, lens: lens, inputForget: true,
				acts: []func(float64) float64{sigmoid, math.Tanh, math.Tanh, sigmoid, math.Tanh, math.Tanh}},
			attrs:  []*attrProto{sattr("direction", "bidirectional"), iattr("input_forget", 1)},
			feedSL: true, hasB: true, hasH0: true, hasC0: true, hasP: true},
		{name: "LSTM reverse, layout 1, Softsign activations, clip", op: "LSTM",
			c: rnnCase{kind: kindLSTM, dirs: []bool{true}, clip: 0.75,
				acts: []func(float64) float64{sigmoid, func(v float64) float64 { return v / (1 + math.Abs(v)) }, math.Tanh}},
			attrs:  []*attrProto{sattr("direction", "reverse"), iattr("layout", 1), ssattr("activations", "Sigmoid", "Softsign", "Tanh"), fattr("clip", 0.75)},
			layout: 1, hasH0: true, hasC0: true, hasP: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.T, c.B, c.I, c.H = T, B, I, H
			G := map[rnnKind]int{kindRNN: 1, kindGRU: 3, kindLSTM: 4}[c.kind]
			D := len(c.dirs)
			c.x = seqVals(T*B*I, 0.1)
			c.w = seqVals(D*G*H*I, 0.7)
			c.r = seqVals(D*G*H*H, 1.3)
			ins := make([]tin, 8)
			xin := c.x
			if tc.layout == 1 { // X [B, T, I]
				xin = transpose3(c.x, T, B, I)
				ins[0] = tin{name: "X", t: f64(t, xin, B, T, I), feed: true}
			} else {
				ins[0] = tin{name: "X", t: f64(t, xin, T, B, I), feed: true}
			}
			ins[1] = tin{name: "W", t: f64(t, c.w, D, G*H, I)}
			ins[2] = tin{name: "R", t: f64(t, c.r, D, G*H, H)}
			if tc.hasB {
				c.b = seqVals(D*2*G*H, 2.1)
				ins[3] = tin{name: "B", t: f64(t, c.b, D, 2*G*H)}
			}
			if c.lens != nil {
				sl, _ := tensor.New([]int32{int32(lens[0]), int32(lens[1]), int32(lens[2])}, B)
				ins[4] = tin{name: "sequence_lens", t: sl, feed: tc.feedSL}
			}
			state := func(v []float64) *tensor.Tensor {
				if tc.layout == 1 {
					return f64(t, transpose3(v, D, B, H), B, D, H)
				}
				return f64(t, v, D, B, H)
			}
			if tc.hasH0 {
				c.h0 = seqVals(D*B*H, 3.3)
				ins[5] = tin{name: "initial_h", t: state(c.h0), feed: true}
			}
			if tc.hasC0 {
				c.c0 = seqVals(D*B*H, 4.4)
				ins[6] = tin{name: "initial_c", t: state(c.c0)}
			}
			if tc.hasP {
				c.p = seqVals(D*3*H, 5.5)
				ins[7] = tin{name: "P", t: f64(t, c.p, D, 3*H)}
			}
			nout := 2
			if c.kind == kindLSTM {
				nout = 3
			} else {
				ins = ins[:6]
			}
			got, err := runNode(t, 14, tc.op, tc.attrs, ins, nout)
			if err != nil {
				t.Fatal(err)
			}
			y, yh, yc := c.ref()
			yShape, hShape := []int{T, D, B, H}, []int{D, B, H}
			if tc.layout == 1 {
				// Y [B, T, D, H]; Y_h, Y_c [B, D, H].
				y = permute(y, []int{T, D, B, H}, []int{2, 0, 1, 3})
				yh, yc = transpose3(yh, D, B, H), transpose3(yc, D, B, H)
				yShape, hShape = []int{B, T, D, H}, []int{B, D, H}
			}
			checkClose(t, "Y", got[0], y, yShape, 1e-12)
			checkClose(t, "Y_h", got[1], yh, hShape, 1e-12)
			if c.kind == kindLSTM {
				checkClose(t, "Y_c", got[2], yc, hShape, 1e-12)
			}
		})
	}
}

// transpose3 swaps the first two axes of a [a, b, c] array.
func transpose3(v []float64, a, b, c int) []float64 {
	return permute(v, []int{a, b, c}, []int{1, 0, 2})
}

// permute is numpy.transpose(v.reshape(shape), perm).flatten().
func permute(v []float64, shape, perm []int) []float64 {
	r := len(shape)
	out := make([]float64, len(v))
	oshape := make([]int, r)
	for i, p := range perm {
		oshape[i] = shape[p]
	}
	idx := make([]int, r)
	for o := range out {
		rem := o
		for i := r - 1; i >= 0; i-- {
			idx[perm[i]] = rem % oshape[i]
			rem /= oshape[i]
		}
		src := 0
		for i := range r {
			src = src*shape[i] + idx[i]
		}
		out[o] = v[src]
	}
	return out
}

func TestRecurrentRefusals(t *testing.T) {
	x := f64(t, seqVals(6, 0), 3, 1, 2)
	w := f64(t, seqVals(2, 0), 1, 1, 2)
	r := f64(t, seqVals(1, 0), 1, 1, 1)
	ins := []tin{{name: "X", t: x}, {name: "W", t: w}, {name: "R", t: r}}
	_, err := runNode(t, 14, "RNN", []*attrProto{ssattr("activations", "Gelu")}, ins, 2)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("activation Gelu: got %v, want ErrUnsupported", err)
	}
	_, err = runNode(t, 14, "RNN", []*attrProto{ssattr("activations", "Tanh"), sattr("direction", "bidirectional")},
		[]tin{{name: "X", t: x}, {name: "W", t: f64(t, seqVals(4, 0), 2, 1, 2)}, {name: "R", t: f64(t, seqVals(2, 0), 2, 1, 1)}}, 2)
	if err == nil {
		t.Errorf("one activation for two directions: no error (the spec wants two)")
	}
	_, err = runNode(t, 14, "RNN", []*attrProto{iattr("hidden_size", 2)}, ins, 2)
	if err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("hidden_size 2 with R of hidden size 1: got %v, want a shape error", err)
	}
	sl, _ := tensor.New([]int32{4}, 1)
	_, err = runNode(t, 14, "RNN", nil, append(ins, tin{}, tin{name: "sl", t: sl}), 2)
	if err == nil {
		t.Errorf("sequence_lens 4 > T 3: no error")
	}
}

func TestResizeOlderOpsets(t *testing.T) {
	x := f64(t, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
	// Upsample-7, scales attribute [1 1 2 1.5]: rows floor(o/2) = 0 0 1 1,
	// columns floor(o/1.5) = 0 0 1 (hand calculation).
	got, err := runNode(t, 7, "Upsample", []*attrProto{fsattr("scales", 1, 1, 2, 1.5)}, []tin{{name: "X", t: x, feed: true}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "Upsample-7", got[0], []float64{1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4}, []int{1, 1, 4, 3}, 0)
	// Resize-10 linear, scales [1 1 1 2] on [1 2 4]: asymmetric x/2 =
	// 0 .5 1 1.5 2 2.5, the last clamped: 1 1.5 2 3 4 4 (hand).
	x3 := f64(t, []float64{1, 2, 4}, 1, 1, 1, 3)
	sc := f64(t, []float64{1, 1, 1, 2}, 4)
	got, err = runNode(t, 10, "Resize", []*attrProto{sattr("mode", "linear")}, []tin{{name: "X", t: x3, feed: true}, {name: "s", t: sc}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "Resize-10 linear", got[0], []float64{1, 1.5, 2, 3, 4, 4}, []int{1, 1, 1, 6}, 1e-12)
	// Resize-10 nearest downsampling has no specified rounding: refused.
	down := f64(t, []float64{1, 1, 1, 0.5}, 4)
	_, err = runNode(t, 10, "Resize", nil, []tin{{name: "X", t: x3, feed: true}, {name: "s", t: down}}, 1)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Resize-10 nearest downsampling: got %v, want ErrUnsupported", err)
	}
}

func TestResizeCropWithScalesAndIntegers(t *testing.T) {
	x := f64(t, []float64{1, 2, 3, 4}, 1, 4)
	roi := f64(t, []float64{0, 0.25, 1, 0.75}, 4)
	sc := f64(t, []float64{1, 2}, 2)
	// Output length floor(4·0.5·2) = 4; x_ori = 0.25·3 + o·0.5·3/3 =
	// .75 1.25 1.75 2.25, so linear gives 1 + x_ori (hand calculation).
	got, err := runNode(t, 13, "Resize", []*attrProto{sattr("mode", "linear"), sattr("coordinate_transformation_mode", "tf_crop_and_resize")},
		[]tin{{name: "X", t: x, feed: true}, {name: "roi", t: roi}, {name: "s", t: sc}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "crop with scales", got[0], []float64{1.75, 2.25, 2.75, 3.25}, []int{1, 4}, 1e-12)
	// Nearest on int64 is a Gather; half_pixel, round_prefer_floor, sizes
	// [1 6] on [10 20 30]: x_ori = (o+.5)/2-.5 = -.25 .25 .75 1.25 1.75
	// 2.25 -> 0 0 1 1 2 2 (hand).
	xi, _ := tensor.New([]int64{10, 20, 30}, 1, 3)
	sz, _ := tensor.New([]int64{1, 6}, 2)
	got, err = runNode(t, 13, "Resize", nil, []tin{{name: "X", t: xi, feed: true}, {}, {}, {name: "sz", t: sz}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "nearest int64", got[0], []float64{10, 10, 20, 20, 30, 30}, []int{1, 6}, 0)
	_, err = runNode(t, 13, "Resize", []*attrProto{sattr("mode", "linear")}, []tin{{name: "X", t: xi, feed: true}, {}, {}, {name: "sz", t: sz}}, 1)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("linear on int64: got %v, want ErrUnsupported", err)
	}
}

// naiveDFT is the DFT of v by its definition (sign -1; inverse +1 and 1/n).
func naiveDFT(v []complex128, inverse bool) []complex128 {
	n := len(v)
	out := make([]complex128, n)
	s := -1.0
	if inverse {
		s = 1
	}
	for k := range n {
		for j, x := range v {
			out[k] += x * cmplx.Exp(complex(0, s*2*math.Pi*float64(k*j)/float64(n)))
		}
		if inverse {
			out[k] /= complex(float64(n), 0)
		}
	}
	return out
}

func TestDFTOptions(t *testing.T) {
	// Real signal [1, 4, 1] (batch 1, length 4): onesided with dft_length 6
	// zero-pads to 6 and keeps 6/2+1 = 4 frequencies.
	sig := []float64{1, -2, 3, 0.5}
	x := f64(t, sig, 1, 4, 1)
	dl, _ := tensor.New([]int64{6}, 1)
	got, err := runNode(t, 17, "DFT", []*attrProto{iattr("onesided", 1)}, []tin{{name: "x", t: x, feed: true}, {name: "n", t: dl}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	padded := []complex128{1, -2, 3, 0.5, 0, 0}
	ref := naiveDFT(padded, false)[:4]
	want := make([]float64, 0, 8)
	for _, z := range ref {
		want = append(want, real(z), imag(z))
	}
	checkClose(t, "onesided dft_length 6", got[0], want, []int{1, 4, 2}, 1e-12)

	// Complex input [2, 3, 2] (batch 2 on axis 0), inverse along axis -2
	// (the signal axis) with dft_length 2: the first two samples.
	cv := seqVals(12, 0.4)
	xc := f64(t, cv, 2, 3, 2)
	dl2, _ := tensor.New([]int64{2}, 1)
	got, err = runNode(t, 17, "DFT", []*attrProto{iattr("inverse", 1), iattr("axis", -2)}, []tin{{name: "x", t: xc, feed: true}, {name: "n", t: dl2}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want = want[:0]
	for b := range 2 {
		v := []complex128{complex(cv[b*6], cv[b*6+1]), complex(cv[b*6+2], cv[b*6+3])}
		for _, z := range naiveDFT(v, true) {
			want = append(want, real(z), imag(z))
		}
	}
	checkClose(t, "complex inverse dft_length 2", got[0], want, []int{2, 2, 2}, 1e-12)

	_, err = runNode(t, 17, "DFT", []*attrProto{iattr("inverse", 1), iattr("onesided", 1)}, []tin{{name: "x", t: x, feed: true}}, 1)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("inverse onesided: got %v, want ErrUnsupported", err)
	}
	_, err = runNode(t, 17, "DFT", []*attrProto{iattr("axis", 2)}, []tin{{name: "x", t: x, feed: true}}, 1)
	if err == nil {
		t.Errorf("axis 2 (the real/imaginary axis): no error")
	}
}

func TestSTFTComplexTwoSided(t *testing.T) {
	// Complex signal of 6 samples, frames of 4 every 2 (2 frames), a
	// window, onesided 0: each frame's full DFT (definition).
	cv := seqVals(12, 0.9)
	x := f64(t, cv, 1, 6, 2)
	step := tensor.Scalar[int64](2)
	win := []float64{0.5, 1, 0.25, 0.75}
	got, err := runNode(t, 17, "STFT", []*attrProto{iattr("onesided", 0)},
		[]tin{{name: "x", t: x, feed: true}, {name: "step", t: step}, {name: "w", t: f64(t, win, 4)}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for f := range 2 {
		v := make([]complex128, 4)
		for j := range 4 {
			s := f*2 + j
			v[j] = complex(cv[2*s], cv[2*s+1]) * complex(win[j], 0)
		}
		for _, z := range naiveDFT(v, false) {
			want = append(want, real(z), imag(z))
		}
	}
	checkClose(t, "STFT", got[0], want, []int{1, 2, 4, 2}, 1e-12)
}

func TestWindowOneSample(t *testing.T) {
	// A symmetric window of one sample is [1] (N = size-1 = 0: numpy.hanning(1)).
	got, err := runNode(t, 17, "HannWindow", []*attrProto{iattr("periodic", 0), iattr("output_datatype", 11)},
		[]tin{{name: "n", t: tensor.Scalar[int64](1)}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "Hann(1)", got[0], []float64{1}, []int{1}, 0)
	if got[0].DType() != tensor.Float64 {
		t.Errorf("output_datatype 11: got %s, want f64", got[0].DType())
	}
}
