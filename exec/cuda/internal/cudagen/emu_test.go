package cudagen

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The plan emulator: every case of the conformance suite (and this
// package's own cases) is compiled for the CPU backend, which gives a
// plan (fused groups, in-place updates in a shared arena); every kernel
// step of the plan is then generated here, and the whole plan runs on the
// host (host_test.go) over a real arena, so operand/result aliasing is
// exercised as the memory planner lays it out. Results are compared with
// the float64 reference (exectest.Eval) and with the CPU backend.
//
// Debugging: CUDAGEN_HOST_SRC=file keeps the host program's source;
// CUDAGEN_HOST_TIMES=1 logs the cases that run longer than 50 ms.

// emuCase is one compiled case.
type emuCase struct {
	name    string
	outs    []*graph.Node
	feeds   exec.Feeds
	want    []*tensor.Tensor // reference
	cpu     []*tensor.Tensor // the CPU backend's results
	tol     float64
	plan    *exec.Plan
	kernels map[int]*Kernel // by step
	inputs  []*tensor.Tensor
	consts  []*tensor.Tensor
}

var emuModes = []struct {
	name string
	opts []exec.Option
}{
	{"opt", nil},
	{"plain", []exec.Option{exec.DisablePasses("precision", "simplify", "constfold", "cse", "fuse")}},
}

// prepareCases compiles the cases for the CPU and generates their kernels
// for target t; cases with MatMul or variables are left out.
func prepareCases(t *testing.T, cases []exectest.Case, tg Target, plain bool) []*emuCase {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	var out []*emuCase
	for _, mode := range emuModes {
		if mode.name == "plain" && !plain {
			continue
		}
	next:
		for _, c := range cases {
			g := graph.New()
			outs, feeds := c.Build(g)
			if err := g.Err(); err != nil {
				t.Fatalf("%s: building: %v", c.Name, err)
			}
			want := c.Want
			if want == nil {
				want, err = exectest.Eval(outs, feeds)
				if err != nil {
					t.Fatalf("%s: reference: %v", c.Name, err)
				}
			}
			prog, err := exec.Compile(be, outs, mode.opts...)
			if err != nil {
				t.Fatalf("%s: compile: %v", c.Name, err)
			}
			got, err := prog.Run(context.Background(), feeds)
			if err != nil {
				t.Fatalf("%s: cpu run: %v", c.Name, err)
			}
			p := prog.Plan()
			prog.Close()
			if len(p.Vars) > 0 {
				continue
			}
			ec := &emuCase{name: mode.name + "/" + c.Name, outs: outs, feeds: feeds, want: want, cpu: got, tol: c.Tol, plan: p, kernels: map[int]*Kernel{}}
			for si, s := range p.Steps {
				if s.Kind != exec.KernelStep {
					continue
				}
				if LibraryOf(s.Node) != Generated {
					continue next
				}
				k, err := Generate(s.Node, tg)
				if err != nil {
					t.Fatalf("%s: step %d: %v", ec.name, si, err)
				}
				ec.kernels[si] = k
			}
			for _, n := range p.InputNodes {
				ec.inputs = append(ec.inputs, feedOf(feeds, n))
			}
			for _, v := range p.Consts {
				ec.consts = append(ec.consts, p.Values[v].Node.Value())
			}
			out = append(out, ec)
		}
	}
	return out
}

// prepareDirect turns cases into single fused steps: every output is
// computed by the Fused node of its subgraph (fuseGraph), and compared
// with the reference of the unfused graph only.
func prepareDirect(t *testing.T, cases []exectest.Case, tg Target) []*emuCase {
	var out []*emuCase
	for _, c := range cases {
		g := graph.New()
		outs, feeds := c.Build(g)
		want, err := exectest.Eval(outs, feeds)
		if err != nil {
			t.Fatalf("%s: reference: %v", c.Name, err)
		}
		for k, o := range outs {
			f := fuseGraph(o)
			if err := g.Err(); err != nil {
				t.Fatalf("%s: fusing output %d: %v", c.Name, k, err)
			}
			kern, err := Generate(f, tg)
			if err != nil {
				t.Fatalf("%s: output %d: %v", c.Name, k, err)
			}
			p := &exec.Plan{}
			ec := &emuCase{name: fmt.Sprintf("%s/%d", c.Name, k), outs: []*graph.Node{o}, want: want[k : k+1], cpu: want[k : k+1], tol: c.Tol, plan: p, kernels: map[int]*Kernel{0: kern}}
			step := exec.Step{Kind: exec.KernelStep, Node: f}
			for _, in := range f.Inputs() {
				v := exec.Value{Node: in, Bytes: int64(in.Shape().Size() * in.DType().Size()), Alias: -1}
				if in.Op() == graph.OpConst {
					v.Storage, v.Index = exec.InConst, len(ec.consts)
					ec.consts = append(ec.consts, in.Value())
				} else {
					v.Storage, v.Index = exec.InInput, len(ec.inputs)
					ec.inputs = append(ec.inputs, feedOf(feeds, in))
				}
				step.In = append(step.In, len(p.Values))
				p.Values = append(p.Values, v)
			}
			step.Out = len(p.Values)
			p.Outputs = []int{len(p.Values)}
			p.Values = append(p.Values, exec.Value{Node: f, Storage: exec.InOutput, Bytes: int64(f.Shape().Size() * f.DType().Size()), Alias: -1})
			p.Steps = []exec.Step{step}
			out = append(out, ec)
		}
	}
	return out
}

// feedOf finds the feed of a plan's input node (matched by name).
func feedOf(feeds exec.Feeds, n *graph.Node) *tensor.Tensor {
	for k, v := range feeds {
		if k == n || k.Name() == n.Name() {
			return v
		}
	}
	return nil
}

// emuProgram builds the host program of every case's kernels and the
// script that runs the cases' plans, writing the operands' files to dir;
// it returns the program's source, the script's path and, per case, the
// files its outputs go to.
func emuProgram(t *testing.T, cases []*emuCase, dir string) (string, string, [][]string) {
	var funcs []Func
	arity := map[string]int{}
	for _, c := range cases {
		for _, si := range sortedSteps(c.kernels) {
			k := c.kernels[si]
			for _, f := range k.Funcs {
				if _, ok := arity[f.Name]; !ok {
					arity[f.Name] = -1
					funcs = append(funcs, f)
				}
			}
			for _, l := range k.Launches {
				arity[l.Func] = len(l.Args)
			}
		}
	}
	var sc strings.Builder
	outFiles := make([][]string, len(cases))
	file := func(ci int, name string, b []byte) string {
		path := filepath.Join(dir, fmt.Sprintf("c%d_%s", ci, name))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for ci, c := range cases {
		p := c.plan
		fmt.Fprintf(&sc, "case %s\n", c.name)
		// Buffers: 0 the arena, 1 the scratch, then inputs, constants
		// and outputs.
		fmt.Fprintf(&sc, "buf 0 %d\n", p.ArenaBytes)
		var scratch int64
		for _, k := range c.kernels {
			scratch = max(scratch, k.ScratchBytes)
		}
		fmt.Fprintf(&sc, "buf 1 %d\n", scratch)
		inBuf, constBuf, outBuf := 2, 2+len(c.inputs), 2+len(c.inputs)+len(c.consts)
		for k, in := range c.inputs {
			fmt.Fprintf(&sc, "buf %d %d %s\n", inBuf+k, len(in.Bytes()), file(ci, fmt.Sprintf("in%d", k), in.Bytes()))
		}
		for k, ct := range c.consts {
			fmt.Fprintf(&sc, "buf %d %d %s\n", constBuf+k, len(ct.Bytes()), file(ci, fmt.Sprintf("c%d", k), ct.Bytes()))
		}
		for k, v := range p.Outputs {
			fmt.Fprintf(&sc, "buf %d %d\n", outBuf+k, p.Values[v].Bytes)
		}
		ptr := func(v int) string {
			val := p.Values[v]
			switch val.Storage {
			case exec.InArena:
				return fmt.Sprintf("0+%d", val.Offset)
			case exec.InInput:
				return fmt.Sprintf("%d+0", inBuf+val.Index)
			case exec.InConst:
				return fmt.Sprintf("%d+0", constBuf+val.Index)
			case exec.InOutput:
				return fmt.Sprintf("%d+0", outBuf+val.Index)
			}
			t.Fatalf("%s: storage %v", c.name, val.Storage)
			return ""
		}
		for si, s := range p.Steps {
			switch s.Kind {
			case exec.CopyStep:
				fmt.Fprintf(&sc, "copy %s %s %d\n", ptr(s.Out), ptr(s.In[0]), p.Values[s.Out].Bytes)
			case exec.KernelStep:
				for _, l := range c.kernels[si].Launches {
					var args []string
					for _, a := range l.Args {
						switch a.Kind {
						case In:
							args = append(args, ptr(s.In[a.Index]))
						case Out:
							args = append(args, ptr(s.Out))
						case Scratch:
							args = append(args, "1+0")
						}
					}
					fmt.Fprintf(&sc, "launch %s %d %d %d %d %d %d %s\n", l.Func, l.Grid[0], l.Block[0], l.Block[1], l.Block[2], l.Shared, len(args), strings.Join(args, " "))
				}
			}
		}
		for k, v := range p.Outputs {
			path := filepath.Join(dir, fmt.Sprintf("c%d_out%d", ci, k))
			outFiles[ci] = append(outFiles[ci], path)
			fmt.Fprintf(&sc, "write %d+0 %s %d\n", outBuf+k, path, p.Values[v].Bytes)
		}
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte(sc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return hostSource(funcs, arity), script, outFiles
}

func sortedSteps(m map[int]*Kernel) []int {
	var s []int
	for k := range m {
		s = append(s, k)
	}
	sort.Ints(s)
	return s
}

// runEmu runs the cases on the host and checks every output.
func runEmu(t *testing.T, cases []*emuCase) {
	dir := t.TempDir()
	src, script, outFiles := emuProgram(t, cases, dir)
	if p := os.Getenv("CUDAGEN_HOST_SRC"); p != "" {
		// Debugging: keep the host program.
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	bin := compileHost(t, src)
	t.Logf("compiled the kernels of %d cases in %v", len(cases), time.Since(start))
	start = time.Now()
	runHost(t, bin, script)
	t.Logf("ran them in %v", time.Since(start))
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, path := range outFiles[ci] {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				n := c.outs[k]
				got, err := tensor.FromBytes(n.DType(), b, n.Shape()...)
				if err != nil {
					t.Fatal(err)
				}
				exact := strings.Contains(c.name, "/exact/")
				// The exact cases follow the CPU where the reference differs
				// (it saturates int64 -> int32 casts, which the CPU wraps,
				// and rounds 2^63 to MinInt64).
				if err := exectest.Compare(got, c.want[k], c.tol); err != nil && !exact {
					t.Errorf("output %d (%s) against the reference: %v\n got: %v\nwant: %v", k, n.Type(), err, got, c.want[k])
				}
				if err := exectest.Compare(got, c.cpu[k], c.tol); err != nil {
					t.Errorf("output %d (%s) against the CPU: %v\n got: %v\n cpu: %v", k, n.Type(), err, got, c.cpu[k])
				}
				if exact {
					if err := compareExact(got, c.cpu[k]); err != nil {
						t.Errorf("output %d (%s) against the CPU, exactly: %v\n got: %v\n cpu: %v", k, n.Type(), err, got, c.cpu[k])
					}
				}
			}
		})
	}
}

// TestConformanceOnHost runs the conformance suite's plans through the
// generated kernels on the host, for a small device (2 multiprocessors:
// grid-stride loops iterate and the two-pass reductions show on small
// shapes), the cases whose kernels depend on the device for an H100, and
// this package's cases for a device with 64-thread blocks.
func TestConformanceOnHost(t *testing.T) {
	gxx(t)
	switch {
	case testing.Short():
		t.Skip("compiles and runs thousands of kernels on the host")
	case raceEnabled:
		t.Skip("the kernels run in another process: nothing for the race detector")
	}
	conf := exectest.Cases()
	var shaped []exectest.Case // cases whose kernels depend on the target
	for _, c := range conf {
		for _, p := range []string{"Sum", "Max", "Min", "Arg", "Mean", "Softmax", "Transpose"} {
			if strings.HasPrefix(c.Name, p) {
				shaped = append(shaped, c)
				break
			}
		}
	}
	extra := extraCases()
	var all []*emuCase
	for _, tg := range []struct {
		name  string
		t     Target
		cases []exectest.Case
	}{
		{"small", Target{MaxThreads: 1024, SMs: 2, SharedBytes: 48 << 10}, conf},
		{"h100", Target{MaxThreads: 1024, SMs: 132, SharedBytes: 48 << 10}, shaped},
		// A device with small blocks: no tiled transposes, narrow trees.
		{"tiny", Target{MaxThreads: 64, SMs: 3, SharedBytes: 16 << 10}, nil},
	} {
		// The conformance cases run with and without the optimising passes;
		// this package's own cases (mostly single ops) with them.
		cs := prepareCases(t, tg.cases, tg.t, true)
		cs = append(cs, prepareCases(t, extra, tg.t, false)...)
		cs = append(cs, prepareDirect(t, fusedCases(), tg.t)...)
		for _, c := range cs {
			c.name = tg.name + "/" + c.name
			all = append(all, c)
		}
	}
	runEmu(t, all)
}

// compareExact checks got against want element for element: equal values
// with equal signs (so -0 differs from +0), or both NaN.
func compareExact(got, want *tensor.Tensor) error {
	g, w := got.Float64s(), want.Float64s()
	if want.DType().IsComplex() {
		// Both parts: real, imaginary, real, ...
		g, w = complexParts(got), complexParts(want)
	}
	if len(g) != len(w) {
		return fmt.Errorf("%d elements, want %d", len(g), len(w))
	}
	for i := range w {
		a, b := g[i], w[i]
		if a != a && b != b {
			continue
		}
		if a != b || math.Signbit(a) != math.Signbit(b) {
			return fmt.Errorf("element %d: got %v, want %v", i, a, b)
		}
	}
	return nil
}

// complexParts lists the parts of a complex tensor's elements in order.
func complexParts(t *tensor.Tensor) []float64 {
	n := t.Shape().Size()
	out := make([]float64, 0, 2*n)
	for i := range n {
		z := t.Complex128(i)
		out = append(out, real(z), imag(z))
	}
	return out
}
