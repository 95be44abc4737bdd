// Package exectest is the conformance suite every backend runs: a table of
// cases, each a small graph with feeds and expected outputs whose source
// is stated (a hand calculation in a comment, or the float64 reference
// interpreter Eval). A backend runs the whole suite with one line:
//
//	func TestConformance(t *testing.T) { exectest.Run(t, cpu.Open) }
package exectest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Case is one conformance case.
type Case struct {
	Name string
	// Build adds the case's nodes to g and returns the outputs and the
	// feeds.
	Build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)
	// Want are the expected outputs; nil means "what Eval computes".
	Want []*tensor.Tensor
	// Source says where Want comes from (required when Want is set).
	Source string
	// Tol overrides the comparison tolerance (relative and absolute).
	Tol float64
}

// Opener opens the backend under test.
type Opener func() (exec.Backend, error)

// Run runs every case on the backend, checks that together they cover
// every op of the table in each float dtype it admits, and runs the
// run-time error cases.
//
// Coverage counts only the kernels that ran (reported to an
// exec.StepObserver), the ops inside a fused kernel included: an op that
// constant folding or simplification removed from every case is not
// covered. It is checked in each mode: every op must run as a kernel
// through the optimising pipeline (where most run inside fused kernels)
// and with the optional passes off (each op its own kernel), but for the
// ops a mode cannot run (mode.notRun).
func Run(t *testing.T, open Opener) { run(t, open, Sampling{}) }

// Sampling thins the suite for a slow backend (the CUDA emulator compiles
// every case's program with the host C++ compiler, in both modes, about a
// quarter of a second each: most of make test's time): in a mode with
// Every[mode] > 1 a case runs when its index is a multiple of it, or when
// its graph has an op in a dtype (of the node or an operand) that no case
// run so far in that mode had. So every op keeps cases in each of its
// dtypes, and the coverage check decides as in Run. The zero Sampling
// runs everything, one case at a time.
type Sampling struct {
	Every map[string]int // by mode: "opt", "plain"
	// Parallel runs the cases of every mode as parallel subtests (as many
	// at once as go test's -parallel, GOMAXPROCS by default), for a
	// backend whose Compile is safe for concurrent use and is the cost:
	// the emulator compiles each case's program with the host C++
	// compiler, one core each.
	Parallel bool
}

// EmulatorEvery is the CUDA emulator's sampling (exec/cuda's
// TestConformance): every eighth case of the optimising mode and every
// 10th of the plain one, with the cases that bring an op or dtype the
// kept ones lack. exec/cpu's TestConformanceSampled runs the same
// sampling, so a sampler that drops an op fails there too. The sampler
// keys on the ops of a case's graph and the coverage check on the
// kernels that ran, which differ where the optimiser folds or fuses: every
// 16th case of the optimising mode left no Iota and no Mul/i64 kernel.
var EmulatorEvery = map[string]int{"opt": 8, "plain": 10}

// RunSampled is Run with its modes thinned by s.
func RunSampled(t *testing.T, open Opener, s Sampling) { run(t, open, s) }

func run(t *testing.T, open Opener, s Sampling) {
	be, err := open()
	if err != nil {
		t.Fatalf("opening backend: %v", err)
	}
	defer be.Close()
	covered := map[string]map[string]bool{}
	for _, m := range modes {
		cov := map[string]bool{}
		var covMu sync.Mutex
		covered[m.name] = cov
		t.Run(m.name, func(t *testing.T) {
			every := s.Every[m.name]
			seen := map[string]bool{} // graph keys of the cases run (sampled mode)
			for i, c := range Cases() {
				if every > 1 {
					keys := graphKeys(c)
					if i%every != 0 && !slices.ContainsFunc(keys, func(k string) bool { return !seen[k] }) {
						continue
					}
					for _, k := range keys {
						seen[k] = true
					}
				}
				t.Run(c.Name, func(t *testing.T) {
					if s.Parallel {
						t.Parallel()
					}
					keys := runCase(t, be, c, m.opts...)
					covMu.Lock()
					defer covMu.Unlock()
					for _, k := range keys {
						cov[k] = true
					}
				})
			}
		})
	}
	t.Run("coverage", func(t *testing.T) {
		for _, m := range modes {
			if missing := uncovered(covered[m.name], m.notRun); len(missing) > 0 {
				t.Errorf("%s: no kernel of the conformance suite ran for: %s", m.name, strings.Join(missing, ", "))
			}
			for _, op := range m.notRun {
				if covered[m.name][op+"/any"] {
					t.Errorf("%s: a kernel ran for %s, listed as not run in this mode: update modes", m.name, op)
				}
			}
		}
	})
	t.Run("run-errors", func(t *testing.T) { runErrors(t, be) })
	t.Run("index-errors", func(t *testing.T) { indexRunErrors(t, be) })
	t.Run("linalg-errors", func(t *testing.T) { linalgRunErrors(t, be) })
	t.Run("control-errors", func(t *testing.T) { controlRunErrors(t, be) })
}

// modes: every case runs through the whole optimising pipeline, and with
// every optional pass off.
var modes = []struct {
	name   string
	opts   []exec.Option
	notRun []string // ops that cannot run as kernels in this mode
}{
	// simplify rewrites StopGradient(x) and CustomGrad(x, ...) to x
	// (exec/simplify.go): they never reach a kernel.
	{"opt", nil, []string{"StopGradient", "CustomGrad"}},
	// no fusion, no Fused kernels
	{"plain", []exec.Option{exec.DisablePasses("precision", "simplify", "constfold", "cse", "loopcse", "hoist", "fuse")}, []string{"Fused"}},
}

// uncovered lists what covered lacks: each op of the table ("Op") and
// each float, complex and integer dtype it admits ("Op/f32", "Op/c64",
// "Op/i8"), but for the ops in skip.
func uncovered(covered map[string]bool, skip []string) []string {
	var missing []string
	for _, d := range opdef.Defs() {
		if slices.Contains(skip, d.Name) {
			continue
		}
		for _, dt := range append([]tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128}, intTypes...) {
			if admits(d, dt) && !covered[d.Name+"/"+dt.Short()] {
				missing = append(missing, d.Name+"/"+dt.Short())
			}
		}
		if !covered[d.Name+"/any"] {
			missing = append(missing, d.Name)
		}
	}
	sort.Strings(missing)
	return missing
}

// admits reports whether op d accepts operands of dtype dt, by asking its
// dtype rule.
func admits(d *opdef.Def, dt tensor.DType) bool {
	n := d.Arity
	if n < 0 {
		n = 2
	}
	in := make([]tensor.DType, n)
	for i := range in {
		in[i] = dt
	}
	if d.Op == ops.OpWhere {
		in[0] = tensor.Bool
	}
	var attr graph.Attr
	if d.Op == ops.OpCast {
		attr = opdef.CastAttr{To: tensor.Float32}
	}
	if d.Kind == opdef.Random { // random (issue 14): the key, and the result's dtype
		in, attr = []tensor.DType{tensor.Int32}, opdef.RandomAttr{DType: dt, Shape: tensor.Shape{1}}
	}
	_, err := d.DType(in, attr)
	if err != nil && n >= 2 {
		// Operand 1 may be an index or offsets operand (i64): Repeat,
		// SumRuns, the indexing ops.
		in = make([]tensor.DType, n)
		for i := range in {
			in[i] = dt
		}
		in[1] = tensor.Int64
		_, err = d.DType(in, attr)
	}
	return err == nil
}

// graphKeys are the ops of case c's graph, each with the dtype of the node
// and of each operand ("Op/f32").
func graphKeys(c Case) []string {
	g := graph.New()
	c.Build(g)
	set := map[string]bool{}
	for _, n := range g.Nodes() {
		op := n.Op().String()
		set[op+"/"+n.DType().Short()] = true
		for _, in := range n.Inputs() {
			set[op+"/"+in.DType().Short()] = true
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stepLog is the StepObserver of runCase: the steps that ran.
type stepLog struct {
	mu  sync.Mutex
	ran map[int]bool
}

func (l *stepLog) Now() int64 { return 0 }

func (l *stepLog) Step(step int, _, _ int64) {
	l.mu.Lock()
	l.ran[step] = true
	l.mu.Unlock()
}

func (l *stepLog) Part(int, int, int64, int64, int64) {}

// runCase compiles and runs one case and compares with the expected
// values; it returns the coverage keys ("Op/f32", "Op/any") of the kernels
// that ran.
func runCase(t *testing.T, be exec.Backend, c Case, opts ...exec.Option) []string {
	t.Helper()
	g := graph.New()
	outs, feeds := c.Build(g)
	if err := g.Err(); err != nil {
		t.Fatalf("building: %v", err)
	}
	want := c.Want
	if want == nil {
		var err error
		want, err = Eval(outs, feeds)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
	} else if c.Source == "" {
		t.Fatalf("case %s has golden values without a Source", c.Name)
	}
	prog, err := exec.Compile(be, outs, append(opts, exec.VerifyEachPass())...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer prog.Close()
	log := &stepLog{ran: map[int]bool{}}
	got, err := prog.Run(exec.WithObserver(context.Background(), log), feeds)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for i := range want {
		if err := Compare(got[i], want[i], c.Tol); err != nil {
			t.Errorf("output %d (%s): %v\n got: %v\nwant: %v", i, outs[i], err, got[i], want[i])
		}
	}
	var keys []string
	for i, s := range prog.Plan().Steps {
		if s.Kind == exec.KernelStep && log.ran[i] {
			keys = append(keys, kernelKeys(s.Node)...)
		}
	}
	return keys
}

// kernelKeys are the coverage keys of a kernel step's node: its op with
// its operands' and result's float and integer dtypes, and for a fused
// kernel, also
// each op of the group with its own operands' and result's dtypes.
func kernelKeys(n *graph.Node) []string {
	var keys []string
	add := func(op string, result tensor.DType, operands ...tensor.DType) {
		keys = append(keys, op+"/any")
		for _, dt := range append(operands, result) {
			if dt.IsFloat() || dt.IsInt() || dt.IsComplex() {
				keys = append(keys, op+"/"+dt.Short())
			}
		}
	}
	var in []tensor.DType
	for _, x := range n.Inputs() {
		in = append(in, x.DType())
	}
	add(n.Op().String(), n.DType(), in...)
	fa, ok := n.Attr().(*opdef.FusedAttr)
	if n.Op() != opdef.OpFused || !ok {
		return keys
	}
	for _, o := range fa.Ops {
		var args []tensor.DType
		for _, r := range o.Args {
			if r < 0 {
				args = append(args, in[-r-1])
			} else {
				args = append(args, fa.Ops[r].DType)
			}
		}
		add(o.Op.String(), o.DType, args...)
	}
	if r := fa.Reduce; r != nil {
		add(r.Op.String(), n.DType(), fa.Ops[len(fa.Ops)-1].DType)
	}
	return keys
}

// Compare checks got against want: same dtype and shape, and every
// element within tolerance: |g-w| <= tol*(1+|w|), with tol by dtype
// (2e-5 for float32 and complex64, 1e-12 for float64 and complex128,
// exact for integers and bools) unless overridden. NaN matches NaN and
// infinities must match exactly. Complex elements compare part by part,
// each within tol*(1+|w|) of the whole number's magnitude.
func Compare(got, want *tensor.Tensor, tol float64) error {
	if got == nil {
		return fmt.Errorf("got nil")
	}
	if got.DType() != want.DType() || !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("got %s, want %s", got.Type(), want.Type())
	}
	if tol == 0 {
		switch want.DType().RealDType() {
		case tensor.Float32:
			tol = 2e-5
		case tensor.Float64:
			tol = 1e-12
		case tensor.Float16, tensor.BFloat16:
			tol = 1e-2
		}
	}
	if want.DType().IsComplex() {
		return compareComplex(got, want, tol)
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		a, b := g[i], w[i]
		switch {
		case math.IsNaN(b):
			if !math.IsNaN(a) {
				return fmt.Errorf("element %d: got %v, want NaN", i, a)
			}
		case math.IsInf(b, 0):
			if a != b {
				return fmt.Errorf("element %d: got %v, want %v", i, a, b)
			}
		case math.Abs(a-b) > tol*(1+math.Abs(b)) || math.IsNaN(a):
			return fmt.Errorf("element %d: got %v, want %v (tolerance %g)", i, a, b, tol)
		}
	}
	return nil
}

// compareComplex is Compare for complex tensors: the real and imaginary
// parts of each element, against the magnitude of want's element.
func compareComplex(got, want *tensor.Tensor, tol float64) error {
	for i := range want.Size() {
		a, b := got.Complex128(i), want.Complex128(i)
		scale := 1 + math.Hypot(real(b), imag(b))
		for k, p := range [2][2]float64{{real(a), real(b)}, {imag(a), imag(b)}} {
			x, y := p[0], p[1]
			part := [2]string{"real", "imaginary"}[k]
			switch {
			case math.IsNaN(y):
				if !math.IsNaN(x) {
					return fmt.Errorf("element %d: got %v, want %v (%s part NaN)", i, a, b, part)
				}
			case math.IsInf(y, 0) || math.IsInf(scale, 0):
				if x != y {
					return fmt.Errorf("element %d: got %v, want %v (%s part)", i, a, b, part)
				}
			case math.Abs(x-y) > tol*scale || math.IsNaN(x):
				return fmt.Errorf("element %d: got %v, want %v (%s part, tolerance %g)", i, a, b, part, tol)
			}
		}
	}
	return nil
}
