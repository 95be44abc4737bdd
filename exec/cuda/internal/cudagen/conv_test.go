package cudagen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// convSpec is one convolution geometry: x [n, c, s...], w [o, c/groups,
// k...], with the attribute's lists (nil: stride and dilation 1, no
// padding).
type convSpec struct {
	n, c, o, groups           int
	s, k                      []int
	stride, dil, lo, hi, size []int
	path                      string // the kernel of a float32 Conv on the small target: "gemm", "gemm_part" or "direct"
}

func (s convSpec) attr() opdef.ConvAttr {
	d := len(s.s)
	or := func(v []int, def int) []int {
		if v != nil {
			return v
		}
		r := make([]int, d)
		for i := range r {
			r[i] = def
		}
		return r
	}
	return opdef.ConvAttr{Stride: or(s.stride, 1), Dilation: or(s.dil, 1), PadLo: or(s.lo, 0), PadHi: or(s.hi, 0), Groups: max(s.groups, 1)}
}

// yShape is the convolution's output shape.
func (s convSpec) yShape() tensor.Shape {
	a := s.attr()
	y := tensor.Shape{s.n, s.o}
	for i := range s.s {
		y = append(y, opdef.ConvOutSize(s.s[i], s.k[i], a.Stride[i], a.Dilation[i], a.PadLo[i], a.PadHi[i]))
	}
	return y
}

func (s convSpec) String() string {
	a := s.attr()
	return fmt.Sprintf("n%d_c%d_o%d_s%v_k%v_%s", s.n, s.c, s.o, s.s, s.k, strings.ReplaceAll(a.String(), " ", "_"))
}

// convCase is a case of one op (Conv, ConvTranspose or ConvFilterGrad)
// on geometry s in dtype dt, its operands uniform in [-1, 1); the
// expected values are the float64 reference's (exectest.Eval).
func convCase(op graph.Op, dt tensor.DType, s convSpec) exectest.Case {
	a := s.attr()
	xs := append(tensor.Shape{s.n, s.c}, s.s...)
	ws := append(tensor.Shape{s.o, s.c / a.Groups}, s.k...)
	ys := s.yShape()
	var shapes []tensor.Shape
	switch op {
	case ops.OpConv:
		shapes = []tensor.Shape{xs, ws}
	case ops.OpConvTranspose:
		shapes = []tensor.Shape{ys, ws}
		a.Size = s.s
		if s.size != nil {
			a.Size = s.size
		}
	case ops.OpConvFilterGrad:
		shapes = []tensor.Shape{xs, ys}
		a.Size = s.k
	}
	name := fmt.Sprintf("%s/%s/%s/%s", s.path, op, dt.Short(), s)
	// Float32 sums in float (the GEMM): the rounding error grows with
	// the length R of the sums (2048 for the filter gradient of
	// n2_c8_o72, whose error reaches 2.5e-5 of the values), so the
	// default 2e-5 scales with R/512.
	R := ys.Size() / s.o // the filter gradient's: n and y
	switch op {
	case ops.OpConv:
		R = ws.Size() / s.o // c/g and k
	case ops.OpConvTranspose:
		R = ws.Size() / (s.c / a.Groups) / a.Groups // o/g and k
	}
	tol := 0.0
	if dt == tensor.Float32 && R > 512 {
		tol = 2e-5 * float64(R) / 512
	}
	return exectest.Case{Name: name, Tol: tol, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		var ts []*tensor.Tensor
		for i, sh := range shapes {
			ts = append(ts, exectest.Rand(dt, sh, -1, 1, uint64(7+i+len(name))))
		}
		ns, feeds := exectest.Inputs(g, ts...)
		return []*graph.Node{ops.Apply(op, a, ns...)}, feeds
	}}
}

// convSpecs cover the kernels' paths: the GEMM (one pass and split-K,
// ragged tiles), the direct kernel (depthwise, few channels), 1 to 3
// spatial dims, strides, dilations, asymmetric padding and groups; the
// path names what the small target (2 multiprocessors) takes for a
// float32 Conv.
func convSpecs() []convSpec {
	return []convSpec{
		// GEMM: M = 2*5*6 = 60 output pixels, N = 9 channels, R = 8*3*3.
		{n: 2, c: 8, o: 9, s: []int{5, 6}, k: []int{3, 3}, lo: []int{1, 0}, hi: []int{0, 2}, path: "gemm"},
		// strided and dilated, groups of 8 channels
		{n: 1, c: 16, o: 16, groups: 2, s: []int{9, 7}, k: []int{3, 2}, stride: []int{2, 1}, dil: []int{1, 2}, lo: []int{2, 1}, hi: []int{1, 1}, path: "gemm"},
		// 1-D, long R (32*5 = 160 >= 16 steps of 16... split-K)
		{n: 2, c: 64, o: 8, s: []int{11}, k: []int{5}, stride: []int{2}, lo: []int{2}, hi: []int{1}, path: "gemm_part"},
		// 3-D
		{n: 1, c: 8, o: 8, s: []int{3, 4, 5}, k: []int{2, 3, 2}, lo: []int{1, 1, 0}, hi: []int{0, 1, 1}, dil: []int{1, 1, 2}, path: "gemm"},
		// depthwise 3x3, stride 2
		{n: 2, c: 6, o: 6, groups: 6, s: []int{7, 6}, k: []int{3, 3}, stride: []int{2, 2}, lo: []int{1, 1}, hi: []int{1, 1}, path: "direct"},
		// split-K for ConvFilterGrad (R = 4*12*12) and ConvTranspose (R = 32*3*3)
		{n: 4, c: 8, o: 8, s: []int{12, 12}, k: []int{3, 3}, lo: []int{1, 1}, hi: []int{1, 1}, path: "gemm"},
		{n: 1, c: 8, o: 32, s: []int{4, 4}, k: []int{3, 3}, lo: []int{1, 1}, hi: []int{1, 1}, path: "gemm"},
		// a transposed convolution's result larger than the minimal one
		// (PyTorch's output_padding): rows and columns no tap reaches
		{n: 2, c: 8, o: 8, s: []int{7, 5}, k: []int{2, 3}, stride: []int{3, 2}, lo: []int{0, 1}, hi: []int{0, 0}, path: "gemm"},
		// stride 2 with dilation 2: the transposed phases of odd pixels
		// have no tap
		{n: 2, c: 8, o: 8, s: []int{9, 8}, k: []int{3, 2}, stride: []int{2, 3}, dil: []int{2, 1}, lo: []int{1, 0}, hi: []int{0, 2}, path: "gemm"},
		// the transposed phases split R (128 channels x 4 taps)
		{n: 1, c: 8, o: 128, s: []int{4, 4}, k: []int{3, 3}, stride: []int{2, 2}, lo: []int{1, 1}, hi: []int{1, 1}, path: "direct"},
		// many tiles: M = 2*32*32, N = 72 (48 tiles of 128x32)
		{n: 2, c: 8, o: 72, s: []int{32, 32}, k: []int{3, 3}, lo: []int{1, 1}, hi: []int{1, 1}, path: "gemm"},
		// 8x8 outputs per thread in float32 (M = 512, N = 64: two 256x64
		// tiles on the small target, split in two along R = 144)
		{n: 2, c: 16, o: 64, s: []int{16, 16}, k: []int{3, 3}, lo: []int{1, 1}, hi: []int{1, 1}, path: "gemm_part"},
		// few output channels, 1-D
		{n: 3, c: 5, o: 2, s: []int{9}, k: []int{4}, dil: []int{2}, lo: []int{3}, hi: []int{0}, path: "direct"},
	}
}

// convPath is the kind of conv kernel of a generated kernel: "gemm_part"
// when some launch is a split-K GEMM's.
func convPath(k *Kernel) string {
	for _, p := range []string{"gemm_part", "gemm", "direct"} {
		for _, f := range k.Funcs {
			if strings.Contains(f.Name, "_"+p+"_") {
				return p
			}
		}
	}
	return "none"
}

// prepareNodes turns cases of one op each into one-step plans of that op
// alone, compared with the reference.
func prepareNodes(t *testing.T, cases []exectest.Case, tg Target) []*emuCase {
	var out []*emuCase
	for _, c := range cases {
		g := graph.New()
		outs, feeds := c.Build(g)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: building: %v", c.Name, err)
		}
		want, err := exectest.Eval(outs, feeds)
		if err != nil {
			t.Fatalf("%s: reference: %v", c.Name, err)
		}
		o := outs[0]
		kern, err := Generate(o, tg)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		p := &exec.Plan{}
		ec := &emuCase{name: c.Name, outs: outs, want: want, cpu: want, tol: c.Tol, plan: p, kernels: map[int]*Kernel{0: kern}}
		step := exec.Step{Kind: exec.KernelStep, Node: o}
		for _, in := range o.Inputs() {
			v := exec.Value{Node: in, Bytes: int64(in.Shape().Size() * in.DType().Size()), Alias: -1}
			v.Storage, v.Index = exec.InInput, len(ec.inputs)
			ec.inputs = append(ec.inputs, feedOf(feeds, in))
			step.In = append(step.In, len(p.Values))
			p.Values = append(p.Values, v)
		}
		step.Out = len(p.Values)
		p.Outputs = []int{len(p.Values)}
		p.Values = append(p.Values, exec.Value{Node: o, Storage: exec.InOutput, Bytes: int64(o.Shape().Size() * o.DType().Size()), Alias: -1})
		p.Steps = []exec.Step{step}
		out = append(out, ec)
	}
	return out
}

// TestConvOnHost runs the three convolution ops over convSpecs on the
// host against the float64 reference: both float dtypes for the small
// device, float32 for an H100 and float64 for a device of 64-thread
// blocks and 16 KiB of shared memory. It checks that the small device
// takes the expected path for Conv, and that every path (and the
// transposed phases) is taken by some case.
func TestConvOnHost(t *testing.T) {
	gxx(t)
	if raceEnabled {
		t.Skip("the kernels run in another process: nothing for the race detector")
	}
	var cases []exectest.Case
	strided := map[string]bool{} // the names of the strided ConvTranspose cases
	for _, s := range convSpecs() {
		for _, op := range []graph.Op{ops.OpConv, ops.OpConvTranspose, ops.OpConvFilterGrad} {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				c := convCase(op, dt, s)
				cases = append(cases, c)
				for _, st := range s.stride {
					strided[c.Name] = strided[c.Name] || op == ops.OpConvTranspose && st > 1
				}
			}
		}
	}
	var all []*emuCase
	paths := map[string]bool{} // op/path, on the small target
	for _, tg := range []struct {
		name string
		t    Target
		dt   string // only the cases of this dtype ("" all)
	}{
		{"small", Target{MaxThreads: 1024, SMs: 2, SharedBytes: 48 << 10}, ""},
		{"h100", Target{}, "/f32/"},
		{"tiny", Target{MaxThreads: 64, SMs: 3, SharedBytes: 16 << 10}, "/f64/"}, // float64 meets the shared memory limit first
		// One multiprocessor (a grid of 32 blocks): the blocks loop over
		// the 48 tiles of the 72-channel case.
		{"onesm", Target{SMs: 1}, "/f32/n2_c8_o72_"},
	} {
		var cs []exectest.Case
		for _, c := range cases {
			if strings.Contains(c.Name, tg.dt) {
				cs = append(cs, c)
			}
		}
		for _, c := range prepareNodes(t, cs, tg.t) {
			if tg.name == "small" {
				want, rest, _ := strings.Cut(c.name, "/")
				op, _, _ := strings.Cut(rest, "/")
				got := convPath(c.kernels[0])
				if op == "Conv" && strings.Contains(c.name, "/f32/") && got != want {
					t.Errorf("%s: the kernel is %s", c.name, got)
				}
				paths[op+"/"+got] = true
				for _, f := range c.kernels[0].Funcs {
					if strings.Contains(f.Source, "acc7_7") {
						paths[op+"/gemm8x8"] = true
					}
				}
				if strided[c.name] && got != "direct" {
					// one GEMM per phase
					gemms := 0
					for _, l := range c.kernels[0].Launches {
						if strings.Contains(l.Func, "_gemm_") && !strings.Contains(l.Func, "_sum_") {
							gemms++
						}
					}
					if gemms < 2 {
						t.Errorf("%s: %d GEMM launches, want one per phase", c.name, gemms)
					}
					paths[op+"/phases/"+got] = true
				}
			}
			c.name = tg.name + "/" + c.name
			all = append(all, c)
		}
	}
	if !paths["Conv/gemm8x8"] {
		t.Error("no Conv case takes the GEMM of 8x8 outputs per thread")
	}
	for _, op := range []string{"Conv", "ConvTranspose", "ConvFilterGrad", "ConvTranspose/phases"} {
		for _, p := range []string{"gemm", "gemm_part", "direct"} {
			if op == "ConvTranspose/phases" && p == "direct" {
				continue
			}
			if !paths[op+"/"+p] {
				t.Errorf("no case takes the %s path for %s", p, op)
			}
		}
	}
	runEmu(t, all)
}

// convTestNodes are a node of a convolution op in dtype dt (TestSupports):
// a 2-D convolution of 3 channels to 4 with a 3x3 window.
func convTestNodes(op graph.Op, dt tensor.DType, in func(tensor.DType, ...int) *graph.Node) []*graph.Node {
	a := convSpec{n: 2, c: 3, o: 4, s: []int{5, 5}, k: []int{3, 3}}.attr()
	switch op {
	case ops.OpConvTranspose:
		a.Size = []int{5, 5}
		return []*graph.Node{ops.Apply(op, a, in(dt, 2, 4, 3, 3), in(dt, 4, 3, 3, 3))}
	case ops.OpConvFilterGrad:
		a.Size = []int{3, 3}
		return []*graph.Node{ops.Apply(op, a, in(dt, 2, 3, 5, 5), in(dt, 2, 4, 3, 3))}
	}
	return []*graph.Node{ops.Apply(op, a, in(dt, 2, 3, 5, 5), in(dt, 4, 3, 3, 3))}
}

// TestConvLaunches pins the tiling decisions for an H100 on the issue's
// shapes (the expected numbers worked out by hand from gemmConfig and
// chooseTile, in the comments).
func TestConvLaunches(t *testing.T) {
	g := graph.New()
	f32 := tensor.Float32
	in := func(shape ...int) *graph.Node { return g.Input(fmt.Sprintf("x%d", g.Len()), f32, shape...) }
	one := func(grid, bx uint32, shared uint32, args string) launchWant {
		return launchWant{[3]uint32{grid, 1, 1}, [3]uint32{bx, 1, 1}, shared, args}
	}
	pad1 := opdef.ConvAttr{Stride: []int{1, 1}, Dilation: []int{1, 1}, PadLo: []int{1, 1}, PadHi: []int{1, 1}, Groups: 1}
	with := func(a opdef.ConvAttr, f func(*opdef.ConvAttr)) opdef.ConvAttr { f(&a); return a }
	// 32x64x56x56, 3x3, 64 filters: M = 100352 pixels, N = 64, R = 576;
	// 8x8 outputs per thread in 256x64 tiles (no padding, as the 4x4
	// split's 64x64), 392 tiles, no split; shared 8*(256+64+2)*4 bytes.
	x := in(32, 64, 56, 56)
	checkLaunches(t, ops.Apply(ops.OpConv, pad1, x, in(64, 64, 3, 3)), h100, 0, one(392, 256, 10304, "[in0 in1 out]"))
	// Its filter gradient: M = 64, N = 576, R = 100352; 64x64 tiles, 9
	// tiles, split-K into min(ceil(4*132/9), 100352/128, 64) = 59 parts
	// of 1712 (ceil(100352/59) rounded up to 16); pass 2 over the 36864
	// elements.
	dy := in(32, 64, 56, 56)
	checkLaunches(t, ops.Apply(ops.OpConvFilterGrad, with(pad1, func(a *opdef.ConvAttr) { a.Size = []int{3, 3} }), x, dy), h100, 59*36864*4,
		one(9*59, 256, 8320, "[in0 in1 scratch]"), one(144, 256, 0, "[scratch out]"))
	// A deep layer at batch 1: 1x512x7x7, 512 filters 3x3: M = 49,
	// N = 512, R = 4608; 64x64 tiles, 8 of them, 36 parts of 128.
	checkLaunches(t, ops.Apply(ops.OpConv, pad1, in(1, 512, 7, 7), in(512, 512, 3, 3)), h100, 36*25088*4,
		one(8*36, 256, 8320, "[in0 in1 scratch]"), one(98, 256, 0, "[scratch out]"))
	// Depthwise 3x3 on 32x64x56x56: the direct kernel, a thread per
	// output (9 taps), 256 outputs per block, the grid capped at
	// 32*132.
	checkLaunches(t, ops.Apply(ops.OpConv, with(pad1, func(a *opdef.ConvAttr) { a.Groups = 64 }), x, in(64, 1, 3, 3)), h100, 0,
		one(32*132, 256, 0, "[in0 in1 out]"))
	// A stride-2 ConvTranspose 8x64x28x28 -> 8x32x56x56 (3x3, pad 1):
	// phases (0,0) with 1 tap, (0,1) and (1,0) with 2, (1,1) with 4;
	// each M = 8*28*28 = 6272, N = 32: 128x32 tiles, 49 of them
	// (shared 16*(128+32+2)*4); only the last has R = 64*4 = 256 >= 16
	// steps, split into min(ceil(528/49), 256/128) = 2 parts over its
	// 200704 elements.
	tr := with(pad1, func(a *opdef.ConvAttr) { a.Stride = []int{2, 2}; a.Size = []int{56, 56} })
	checkLaunches(t, ops.Apply(ops.OpConvTranspose, tr, in(8, 64, 28, 28), in(64, 32, 3, 3)), h100, 2*200704*4,
		one(49, 256, 10368, "[in0 in1 out]"), one(49, 256, 10368, "[in0 in1 out]"), one(49, 256, 10368, "[in0 in1 out]"),
		one(98, 256, 10368, "[in0 in1 scratch]"), one(784, 256, 0, "[scratch out]"))
}

// TestConvGolden keeps the generated source of one kernel of each kind in
// testdata/golden/conv_*.cu for reading and review (go test -update
// rewrites them): the GEMM of a small 2-D convolution, its filter
// gradient on split-K, a stride-2 ConvTranspose's phases and a depthwise
// convolution's direct kernel, for an H100.
func TestConvGolden(t *testing.T) {
	g := graph.New()
	f32 := tensor.Float32
	in := func(shape ...int) *graph.Node { return g.Input(fmt.Sprintf("x%d", g.Len()), f32, shape...) }
	a := opdef.ConvAttr{Stride: []int{1, 1}, Dilation: []int{1, 1}, PadLo: []int{1, 1}, PadHi: []int{1, 1}, Groups: 1}
	fg, tr, dw := a, a, a
	fg.Size = []int{3, 3}
	tr.Stride, tr.Size = []int{2, 2}, []int{16, 16}
	dw.Groups = 16
	x := in(4, 16, 16, 16)
	nodes := map[string]*graph.Node{
		"conv_gemm":             ops.Apply(ops.OpConv, a, x, in(32, 16, 3, 3)),
		"conv_filter_grad_part": ops.Apply(ops.OpConvFilterGrad, fg, x, in(4, 32, 16, 16)),
		"conv_transpose_phases": ops.Apply(ops.OpConvTranspose, tr, in(4, 32, 8, 8), in(32, 64, 3, 3)),
		"conv_depthwise_direct": ops.Apply(ops.OpConv, dw, x, in(16, 1, 3, 3)),
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for name, n := range nodes {
		t.Run(name, func(t *testing.T) {
			k, err := Generate(n, h100)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenText(k)
			path := filepath.Join("testdata", "golden", name+".cu")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("generated source differs from %s (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}
