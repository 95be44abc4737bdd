//go:build linux

package cuda

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The completeness check of the code generator's table against the op
// declarations: every elementwise op of internal/opdef, in every dtype
// combination its dtype rule admits, must have a CUDA expression that
// renders, compiles with the real NVRTC and computes the reference
// values, standalone, inside a fused group and before a fused Sum.

// combo is an elementwise op applied to operands of the dtypes in (with
// the attribute attr: a Cast's target).
type combo struct {
	d    *opdef.Def
	attr graph.Attr
	in   []tensor.DType
}

func (c combo) String() string {
	var in []string
	for _, dt := range c.in {
		in = append(in, dt.Short())
	}
	s := c.d.Name + "(" + strings.Join(in, ", ") + ")"
	if a, ok := c.attr.(opdef.CastAttr); ok {
		s += " -> " + a.To.Short()
	}
	return s
}

// elementwiseCombos lists, for every elementwise op of the declarations,
// each dtype combination its dtype rule admits among: every dtype as all
// operands; for three operands, a bool first operand and another dtype as
// the others (Where); for Cast, every pair of dtypes.
func elementwiseCombos(t *testing.T) []combo {
	var out []combo
	dts := tensor.DTypes()
	for _, d := range opdef.Defs() {
		if d.Kind != opdef.Elementwise {
			continue
		}
		if d.Arity < 1 {
			t.Errorf("%s: elementwise with arity %d: the test does not know its operands", d.Name, d.Arity)
			continue
		}
		var cands []combo
		for _, dt := range dts {
			all := make([]tensor.DType, d.Arity)
			for i := range all {
				all[i] = dt
			}
			if d.Op == ops.OpCast {
				for _, to := range dts {
					cands = append(cands, combo{d, opdef.CastAttr{To: to}, all})
				}
				continue
			}
			cands = append(cands, combo{d: d, in: all})
			if d.Arity == 3 && dt != tensor.Bool {
				cands = append(cands, combo{d: d, in: append([]tensor.DType{tensor.Bool}, all[1:]...)})
			}
		}
		n := 0
		for _, c := range cands {
			if _, err := d.DType(c.in, c.attr); err == nil {
				if c.in[len(c.in)-1].IsComplex() && d.C128 == nil && d.Ref == nil {
					t.Errorf("%s: admits %v but has no complex reference (C128)", d.Name, c.in)
					continue
				}
				out = append(out, c)
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: its dtype rule admits none of %v", d.Name, dts)
		}
	}
	return out
}

// sample returns the values of operand k of dtype dt, shape [2, 8]: an
// ordinary row and a row of special values (NaN, infinities, -0, large
// and small magnitudes), rotated by 5k so that the operands of a binary
// op pair different values.
func sample(dt tensor.DType, k int) *tensor.Tensor {
	var v []float64
	switch {
	case dt == tensor.Bool:
		v = []float64{0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1}
	case dt.IsInt():
		v = []float64{-7, -3, -1, 0, 1, 2, 3, 5, 100, -100, 7, -2, 4, 0, 1000, -1}
	default:
		v = []float64{-2.5, -1, -0.5, 0, 0.25, 0.5, 1, 3.75, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 100, -7, 2, 1e-3}
	}
	r := make([]float64, len(v))
	for i := range v {
		r[i] = v[(i+5*k)%len(v)]
	}
	if dt.IsComplex() {
		// The real parts as for the floats, imaginary parts from the
		// same values rotated by 3 (so that both parts take every
		// special value, against different partners), and a row of
		// ordinary values on both parts.
		z := make([]complex128, len(r))
		for i := range r {
			im := v[(i+5*k+3)%len(v)]
			if i < 8 {
				im = float64(i%5) - 1.5
			}
			z[i] = complex(r[i], im)
		}
		t, err := tensor.FromComplex128s(dt, z, 2, 8)
		if err != nil {
			panic(err)
		}
		return t
	}
	return exectest.Tensor(dt, r, 2, 8)
}

// variant is one way a combo runs: its node, the node whose reference
// value it must equal, and its name.
type variant struct {
	c         combo
	name      string // "alone", "fused", "fused+Sum"
	node, ref *graph.Node
}

func (v variant) String() string { return v.c.String() + " " + v.name }

// variants builds, in g over fresh inputs, the nodes of combo c: the op
// alone; the op inside a fused group (each operand through StopGradient,
// and the op's value through one more, so that it reads and writes the
// group's temporaries); and, for a numeric result, that group ending in
// a Sum over axis 1.
func variants(g *graph.Graph, c combo, feeds exec.Feeds) []variant {
	var ins []*graph.Node
	for k, dt := range c.in {
		x := g.Input(fmt.Sprintf("x%d", g.Len()), dt, 2, 8)
		feeds[x] = sample(dt, k)
		ins = append(ins, x)
	}
	op := ops.Apply(c.d.Op, c.attr, ins...)
	out := []variant{{c, "alone", op, op}}
	var fo []opdef.FusedOp
	var args []int
	for k, dt := range c.in {
		fo = append(fo, opdef.FusedOp{Op: ops.OpStopGradient, Args: []int{-k - 1}, DType: dt})
		args = append(args, k)
	}
	fo = append(fo, opdef.FusedOp{Op: c.d.Op, Attr: c.attr, Args: args, DType: op.DType()})
	domain := tensor.Shape{2, 8}
	group := append(fo, opdef.FusedOp{Op: ops.OpStopGradient, Args: []int{len(fo) - 1}, DType: op.DType()})
	out = append(out, variant{c, "fused", opdef.Fused(&opdef.FusedAttr{Domain: domain, Ops: group}, ins...), op})
	if dt := op.DType(); (dt.IsInt() || dt == tensor.Float32 || dt == tensor.Float64 || dt.IsComplex()) && sumAdmits(dt) {
		red := &opdef.FusedReduce{Op: ops.OpSum, Axes: []int{1}}
		out = append(out, variant{c, "fused+Sum", opdef.Fused(&opdef.FusedAttr{Domain: domain, Ops: fo, Reduce: red}, ins...),
			ops.Apply(ops.OpSum, opdef.AxesAttr{Axes: []int{1}}, op)}) // the op, which keeps small integers (ops.Sum widens them)
	}
	return out
}

// sumAdmits reports whether Sum's declaration takes dt.
func sumAdmits(dt tensor.DType) bool {
	_, err := opdef.Lookup(ops.OpSum).DType([]tensor.DType{dt}, opdef.AxesAttr{Axes: []int{1}})
	return err == nil
}

// TestElementwiseTable: every elementwise op of the declarations, in every
// dtype combination its rule admits, alone, fused and before a fused Sum,
// (1) is supported and generated by cudagen; (2) compiles with the real
// NVRTC, when one is installed; (3) gives the reference values
// (exectest.Eval) on the device (the emulator without a GPU). Each
// failure names the op, its dtypes and the variant.
func TestElementwiseTable(t *testing.T) {
	if raceEnabled {
		// One compile (NVRTC's, in C) and one program at a time: nothing
		// for the race detector, and 30 s of compiles under it.
		t.Skip("the run without -race covers it")
	}
	combos := elementwiseCombos(t)
	g := graph.New()
	feeds := exec.Feeds{}
	var vs []variant
	for _, c := range combos {
		vs = append(vs, variants(g, c, feeds)...)
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d elementwise ops, %d dtype combinations, %d nodes", countOps(combos), len(combos), len(vs))
	if len(combos) == 0 {
		t.Fatal("no elementwise op in the declarations")
	}

	// (1) Every node has its kernel.
	var ok []variant
	funcs := map[string]string{}
	labels := map[string][]string{}
	var missing []string
	for _, v := range vs {
		if err := cudagen.Supports(v.node); err != nil {
			missing = append(missing, fmt.Sprintf("%v: %v", v, err))
			continue
		}
		k, err := cudagen.Generate(v.node, cudagen.Target{})
		if err != nil {
			missing = append(missing, fmt.Sprintf("%v: %v", v, err))
			continue
		}
		for _, f := range k.Funcs {
			funcs[f.Name] = f.Source
			labels[f.Name] = append(labels[f.Name], v.String())
		}
		ok = append(ok, v)
	}
	if len(missing) > 0 {
		t.Errorf("%d (op, dtypes) without a CUDA kernel (add a row, or a variant, to cudagen's table):\n%s", len(missing), strings.Join(missing, "\n"))
	}

	// (2) NVRTC compiles every generated function.
	t.Run("NVRTC", func(t *testing.T) {
		n := findNVRTC()
		if n == nil {
			t.Skip(noNVRTC)
		}
		checkWithNVRTC(t, n, funcs, labels)
	})

	// (3) The device computes the reference values.
	t.Run("run", func(t *testing.T) {
		b := open(t)
		defer b.Close()
		runVariants(t, b, ok, feeds)
	})
}

func countOps(cs []combo) int {
	seen := map[graph.Op]bool{}
	for _, c := range cs {
		seen[c.d.Op] = true
	}
	return len(seen)
}

// checkWithNVRTC compiles the functions with NVRTC, all at once after the
// prelude and, when that fails or warns, by halves down to the single
// functions it rejects, naming their variants.
func checkWithNVRTC(t *testing.T, nv *cu.NVRTC, funcs map[string]string, labels map[string][]string) {
	arch := checkArch(nv)
	names := make([]string, 0, len(funcs))
	for name := range funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	compile := func(names []string) (string, error) {
		var src strings.Builder
		src.WriteString(cudagen.Prelude())
		for _, name := range names {
			src.WriteString("\n" + funcs[name])
		}
		out, err := nv.Compile(src.String(), "loom_table_check.cu", nvrtcOptions(arch))
		if err != nil {
			return "", err
		}
		if len(out.CUBIN) == 0 {
			return "", fmt.Errorf("no cubin")
		}
		for _, name := range names {
			if !strings.Contains(string(out.PTX), ".entry "+name) {
				return "", fmt.Errorf("the PTX lacks the entry %s", name)
			}
		}
		if strings.Contains(out.Log, "warning") {
			return out.Log, fmt.Errorf("warnings")
		}
		return out.Log, nil
	}
	// On a failure, halves down to the functions NVRTC rejects.
	var check func(names []string)
	check = func(names []string) {
		log, err := compile(names)
		switch {
		case err == nil:
		case len(names) == 1:
			t.Errorf("NVRTC rejects the kernel of %s: %v\n%s\n%s", strings.Join(labels[names[0]], ", "), err, log, funcs[names[0]])
		default:
			check(names[:len(names)/2])
			check(names[len(names)/2:])
		}
	}
	check(names)
	t.Logf("%d functions checked with NVRTC for %s", len(names), arch)
}

// runVariants runs the nodes on b, all in one program (one module) with
// the optional passes off, so each runs as the kernel checked above, and
// compares each with the reference value of its unfused node. When a
// program does not compile or run, its halves run, down to the single
// variants that fail.
func runVariants(t *testing.T, b *Backend, vs []variant, feeds exec.Feeds) {
	var refs []*graph.Node
	for _, v := range vs {
		refs = append(refs, v.ref)
	}
	want, err := exectest.Eval(refs, feeds)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	var run func(lo, hi int)
	run = func(lo, hi int) {
		var outs []*graph.Node
		for _, v := range vs[lo:hi] {
			outs = append(outs, v.node)
		}
		got, err := func() ([]*tensor.Tensor, error) {
			p, err := exec.Compile(b, outs, exec.DisablePasses("precision", "simplify", "constfold", "cse", "fuse"), exec.IgnoreUnusedFeeds())
			if err != nil {
				return nil, err
			}
			defer p.Close()
			return p.Run(context.Background(), feeds)
		}()
		switch {
		case err == nil:
			for i := lo; i < hi; i++ {
				compareVariant(t, vs[i], got[i-lo], want[i])
			}
		case hi-lo == 1:
			t.Errorf("%v: %v", vs[lo], err)
		default:
			run(lo, (lo+hi)/2)
			run((lo+hi)/2, hi)
		}
	}
	run(0, len(vs))
}

func compareVariant(t *testing.T, v variant, got, want *tensor.Tensor) {
	t.Helper()
	if err := exectest.Compare(got, want, 0); err != nil {
		var in []string
		for k, dt := range v.c.in {
			in = append(in, fmt.Sprint(sample(dt, k).Float64s()))
		}
		t.Errorf("%v: %v\n  operands: %s\n       got: %v\n      want: %v", v, err, strings.Join(in, "\n            "), got.Float64s(), want.Float64s())
	}
}
