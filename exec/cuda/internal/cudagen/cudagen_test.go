package cudagen

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	loomexec "github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// h100 is the target of the golden files.
var h100 = Target{MaxThreads: 1024, SMs: 132, SharedBytes: 48 << 10}

// goldenNodes are the representative nodes whose generated source is kept
// in testdata/golden/NAME.cu.
func goldenNodes() map[string]*graph.Node {
	g := graph.New()
	in := func(dt tensor.DType, shape ...int) *graph.Node {
		return g.Input(fmt.Sprintf("x%d", g.Len()), dt, shape...)
	}
	x := in(tensor.Float32, 64, 300)
	w := in(tensor.Float32, 300)
	col := in(tensor.Float32, 64, 1)
	m := map[string]*graph.Node{
		"binary_broadcast": ops.Add(in(tensor.Float32, 4, 3, 5), in(tensor.Float32, 3, 1)),
		"unary_exp":        ops.Exp(in(tensor.Float32, 1000)),
		"compare_less":     ops.Less(in(tensor.Int32, 8, 16), in(tensor.Int32, 16)),
		"where":            ops.Where(in(tensor.Bool, 4, 1), in(tensor.Float32, 4, 6), in(tensor.Float32)),
		"cast_f32_i32":     ops.Cast(in(tensor.Float32, 100), tensor.Int32),
		"cast_f32_f16":     ops.Cast(in(tensor.Float32, 100), tensor.Float16),
		"sum_rows":         ops.Sum(in(tensor.Float32, 64, 1000), 1),
		"sum_cols":         ops.Sum(in(tensor.Float32, 1000, 64), 0),
		"sum_all":          ops.Sum(in(tensor.Float32, 256, 1024)),
		"argmax":           ops.ArgMax(in(tensor.Float32, 32, 500), 1),
		"transpose":        ops.Transpose(in(tensor.Float32, 64, 48)),
		"slice":            ops.Slice(in(tensor.Float32, 10, 6), ops.RS(1, 8, 3), ops.RS(-4, ops.End, 2)),
		"concat":           ops.Concat(1, in(tensor.Float32, 2, 1), in(tensor.Float32, 2, 3), in(tensor.Float32, 2, 2)),
		"pad":              ops.Pad(in(tensor.Float32, 3, 4), ops.PadWidth{Low: 1, High: 2, Interior: 1}, ops.PadWidth{High: 1, Interior: 2}),
		"softmax":          ops.Softmax(in(tensor.Float32, 32, 1000), 1),
		"fused_chain":      fuseGraph(ops.Tanh(ops.Mul(ops.Add(x, w), col))),
		"fused_reduce":     fuseGraph(ops.Sum(ops.Exp(ops.Mul(x, col)), 1)),
	}
	if err := g.Err(); err != nil {
		panic(err)
	}
	return m
}

// goldenText is a kernel as kept in a golden file: its launches as
// comments, then its functions.
func goldenText(k *Kernel) string {
	var b strings.Builder
	for _, l := range k.Launches {
		fmt.Fprintf(&b, "// launch %s grid=%v block=%v shared=%d args=%v\n", l.Func, l.Grid, l.Block, l.Shared, l.Args)
	}
	if k.ScratchBytes > 0 {
		fmt.Fprintf(&b, "// scratch %d bytes\n", k.ScratchBytes)
	}
	for _, f := range k.Funcs {
		b.WriteString("\n" + f.Source)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	nodes := goldenNodes()
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			k, err := Generate(nodes[name], h100)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenText(k)
			path := filepath.Join("testdata", "golden", name+".cu")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
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

// TestSyntax compiles the prelude and every golden kernel with the host
// C++ compiler after a header that defines the CUDA keywords away, and
// again after the emulator's header (exec/cuda/internal/cufake) when it
// is there.
func TestSyntax(t *testing.T) {
	cxx := gxx(t)
	var src strings.Builder
	src.WriteString(Prelude())
	nodes := goldenNodes()
	for _, n := range nodes {
		k, err := Generate(n, h100)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range k.Funcs {
			src.WriteString("\n" + f.Source)
		}
	}
	dir := t.TempDir()
	check := func(name, text string, args ...string) {
		file := filepath.Join(dir, name+".cc")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cxx, append(append([]string{"-std=c++17", "-fsyntax-only", "-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable"}, args...), file)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil || out.Len() > 0 {
			t.Errorf("%s: %v\n%s", name, err, firstLines(out.String(), 40))
		}
	}
	check("plain", syntaxHeader+src.String())
	emu, err := filepath.Abs(filepath.Join("..", "cufake", "csrc", "loom_emu.h"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(emu); err != nil {
		t.Logf("no emulator header at %s: checked with the plain header only", emu)
		return
	}
	// The fake NVRTC blanks __shared__ out of extern declarations before
	// compiling after its header; do the same.
	check("emu", strings.ReplaceAll(src.String(), "extern __shared__", "extern"), "-w", "-D__CUDACC__", "-include", emu)
}

// TestDialect checks the generated source for the constructs the dialect
// forbids.
func TestDialect(t *testing.T) {
	var all []string
	all = append(all, Prelude())
	for _, n := range goldenNodes() {
		k, err := Generate(n, h100)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range k.Funcs {
			all = append(all, f.Source)
			if !strings.HasPrefix(f.Source, "extern \"C\" __global__ void "+f.Name+"(") {
				t.Errorf("%s does not start with its extern \"C\" __global__ definition", f.Name)
			}
			if !regexp.MustCompile(`^loom_[a-z_]+_[0-9a-f]{16}$`).MatchString(f.Name) {
				t.Errorf("function name %s", f.Name)
			}
		}
	}
	forbidden := []string{"#include", "std::", "template", "__shfl", "atomic", "printf", "INFINITY", "NAN", "__shared__ float", "static __shared__"}
	for _, s := range all {
		for _, f := range forbidden {
			if strings.Contains(s, f) {
				t.Errorf("generated code contains %q", f)
			}
		}
	}
	if strings.Count(strings.Join(all, "\n"), "__shared__") != 1 {
		t.Errorf("__shared__ must appear once, in the prelude's loom_smem")
	}
}

func TestNamesDedupe(t *testing.T) {
	g := graph.New()
	a := ops.Exp(g.Input("a", tensor.Float32, 10, 10))
	b := ops.Exp(g.Input("b", tensor.Float32, 10, 10))
	c := ops.Exp(g.Input("c", tensor.Float32, 10, 11))
	ka, _ := Generate(a, h100)
	kb, _ := Generate(b, h100)
	kc, _ := Generate(c, h100)
	if ka.Funcs[0].Name != kb.Funcs[0].Name || ka.Funcs[0].Source != kb.Funcs[0].Source {
		t.Errorf("identical kernels got different functions")
	}
	if ka.Funcs[0].Name == kc.Funcs[0].Name {
		t.Errorf("different kernels got the same name %s", ka.Funcs[0].Name)
	}
}

type launchWant struct {
	grid, block [3]uint32
	shared      uint32
	args        string
}

func checkLaunches(t *testing.T, n *graph.Node, tg Target, scratch int64, want ...launchWant) {
	t.Helper()
	k, err := Generate(n, tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Launches) != len(want) {
		t.Fatalf("%s: %d launches, want %d:\n%s", n, len(k.Launches), len(want), goldenText(k))
	}
	funcs := map[string]bool{}
	for _, f := range k.Funcs {
		funcs[f.Name] = true
	}
	if len(want) == 0 && len(k.Funcs) != 0 {
		t.Errorf("%s: functions without launches", n)
	}
	for i, w := range want {
		l := k.Launches[i]
		if l.Grid != w.grid || l.Block != w.block || l.Shared != w.shared || fmt.Sprint(l.Args) != w.args {
			t.Errorf("%s: launch %d: grid %v block %v shared %d args %v; want grid %v block %v shared %d args %s",
				n, i, l.Grid, l.Block, l.Shared, l.Args, w.grid, w.block, w.shared, w.args)
		}
		if !funcs[l.Func] {
			t.Errorf("%s: launch %d calls %s, which is not among the functions", n, i, l.Func)
		}
	}
	if k.ScratchBytes != scratch {
		t.Errorf("%s: scratch %d bytes, want %d", n, k.ScratchBytes, scratch)
	}
}

func TestLaunches(t *testing.T) {
	g := graph.New()
	in := func(dt tensor.DType, shape ...int) *graph.Node {
		return g.Input(fmt.Sprintf("x%d", g.Len()), dt, shape...)
	}
	one := func(grid, bx, by uint32, shared uint32, args string) launchWant {
		return launchWant{[3]uint32{grid, 1, 1}, [3]uint32{bx, by, 1}, shared, args}
	}
	small := Target{MaxThreads: 1024, SMs: 2, SharedBytes: 48 << 10}
	t.Run("elementwise", func(t *testing.T) {
		checkLaunches(t, ops.Add(in(tensor.Float32, 12), in(tensor.Float32)), h100, 0, one(1, 256, 1, 0, "[in0 in1 out]"))
		checkLaunches(t, ops.Exp(in(tensor.Float32, 1000)), h100, 0, one(4, 256, 1, 0, "[in0 out]"))
		// 10^7 elements: capped at 32 blocks per multiprocessor.
		checkLaunches(t, ops.Exp(in(tensor.Float32, 10000, 1000)), h100, 0, one(132*32, 256, 1, 0, "[in0 out]"))
		checkLaunches(t, ops.Exp(in(tensor.Float32, 10000, 1000)), small, 0, one(64, 256, 1, 0, "[in0 out]"))
		checkLaunches(t, ops.Exp(in(tensor.Float32, 1000)), Target{MaxThreads: 128, SMs: 4}, 0, one(8, 128, 1, 0, "[in0 out]"))
		checkLaunches(t, ops.Exp(in(tensor.Float32, 0, 5)), h100, 0)
		checkLaunches(t, ops.Where(in(tensor.Bool, 3, 1), in(tensor.Int64, 4), in(tensor.Int64)), h100, 0, one(1, 256, 1, 0, "[in0 in1 in2 out]"))
	})
	t.Run("reduce", func(t *testing.T) {
		// Short rows: one thread per output.
		checkLaunches(t, ops.Sum(in(tensor.Float32, 50, 10), 1), h100, 0, one(1, 64, 1, 0, "[in0 out]"))
		// Rows of 1000: 128 lanes (along x) per row, 2 rows per block,
		// double accumulators in shared memory.
		checkLaunches(t, ops.Sum(in(tensor.Float32, 600, 1000), 1), h100, 0, one(300, 128, 2, 256*8, "[in0 out]"))
		// Columns with many outputs: one thread per output.
		checkLaunches(t, ops.Sum(in(tensor.Float32, 100, 100000), 0), h100, 0, one(391, 256, 1, 0, "[in0 out]"))
		// Columns with few outputs: 32 outputs along x, 8 lanes along y,
		// and two passes (P parts per output in scratch).
		checkLaunches(t, ops.Sum(in(tensor.Float32, 1000, 64), 0), h100, 64*8*8,
			one(16, 32, 8, 256*8, "[in0 scratch]"), one(1, 64, 1, 0, "[scratch out]"))
		// Everything of a long vector: two passes, the second a block.
		checkLaunches(t, ops.Sum(in(tensor.Float32, 1<<20)), h100, 256*8,
			one(256, 256, 1, 256*8, "[in0 scratch]"), one(1, 256, 1, 256*8, "[scratch out]"))
		// Columns, few outputs and a short extent: one pass, the lanes of
		// the 8 slots split the rows.
		checkLaunches(t, ops.Max(in(tensor.Int64, 40, 7), 0), h100, 0, one(1, 8, 32, 256*8, "[in0 out]"))
		// ArgMax keeps an index per lane (and per partial).
		checkLaunches(t, ops.ArgMax(in(tensor.Float64, 8, 100000), 1), small, 0, one(8, 256, 1, 256*16, "[in0 out]"))
		checkLaunches(t, ops.ArgMax(in(tensor.Float64, 2, 100000), 1), small, 2*4*(8+8),
			one(8, 256, 1, 256*16, "[in0 scratch]"), one(1, 32, 1, 0, "[scratch out]"))
		checkLaunches(t, ops.ArgMax(in(tensor.Float32, 3, 1000), 1), h100, 0, one(2, 128, 2, 256*4+256*8, "[in0 out]"))
		// Empty: a sum over nothing is zeros; no outputs, nothing to run.
		checkLaunches(t, ops.Sum(in(tensor.Float32, 0, 4), 0), h100, 0, one(1, 256, 1, 0, "[out]"))
		checkLaunches(t, ops.Sum(in(tensor.Float32, 4, 0), 0), h100, 0)
		checkLaunches(t, ops.Max(in(tensor.Int32, 3, 4), 0, 1), small, 0, one(1, 32, 1, 0, "[in0 out]"))
	})
	t.Run("movement", func(t *testing.T) {
		checkLaunches(t, ops.Transpose(in(tensor.Float32, 64, 48)), h100, 0, one(4, 32, 8, 32*33*4, "[in0 out]"))
		checkLaunches(t, ops.Transpose(in(tensor.Float16, 64, 48)), h100, 0, one(4, 32, 8, 32*33*2, "[in0 out]"))
		// The contiguous dimension stays innermost: a plain gather.
		checkLaunches(t, ops.Transpose(in(tensor.Float32, 40, 50, 3), 1, 0, 2), h100, 0, one(24, 256, 1, 0, "[in0 out]"))
		checkLaunches(t, ops.Concat(0, in(tensor.Bool, 2, 3), in(tensor.Bool, 0, 3), in(tensor.Bool, 1, 3)), h100, 0, one(1, 256, 1, 0, "[in0 in1 in2 out]"))
		checkLaunches(t, ops.Pad(in(tensor.Float32, 0, 3), ops.PadWidth{Low: 1}), h100, 0, one(1, 256, 1, 0, "[out]"))
		checkLaunches(t, ops.Slice(in(tensor.Float32, 4, 3), ops.R(2, 2)), h100, 0)
		checkLaunches(t, ops.Reshape(in(tensor.Int64, 4, 3), 12), h100, 0, one(1, 256, 1, 0, "[in0 out]"))
	})
	t.Run("softmax", func(t *testing.T) {
		// A block per row: 128 lanes, 2 rows per block.
		checkLaunches(t, ops.Softmax(in(tensor.Float32, 32, 1000), 1), h100, 0, one(16, 128, 2, 256*8, "[in0 out]"))
		// Along an outer axis: consecutive lines on consecutive threads.
		checkLaunches(t, ops.Softmax(in(tensor.Float64, 1000, 64), 0), h100, 0, one(2, 32, 8, 256*8, "[in0 out]"))
		checkLaunches(t, ops.LogSoftmax(in(tensor.Float32, 100, 10), 1), h100, 0, one(1, 128, 1, 0, "[in0 out]"))
	})
	t.Run("fused", func(t *testing.T) {
		x := in(tensor.Float32, 64, 300)
		checkLaunches(t, fuseGraph(ops.Exp(ops.Mul(x, x))), h100, 0, one(75, 256, 1, 0, "[in0 out]"))
		checkLaunches(t, fuseGraph(ops.Sum(ops.Exp(x), 1)), h100, 0, one(16, 64, 4, 256*8, "[in0 out]"))
	})
}

// supportNodes builds a node of every op of the table in every dtype
// its rules admit (and, for the elementwise ops, the Fused group of it,
// alone and followed by a Sum).
func supportNodes(t *testing.T) []*graph.Node {
	var out []*graph.Node
	for _, d := range opdef.Defs() {
		for _, dt := range tensor.DTypes() {
			g := graph.New()
			in := func(dt tensor.DType, shape ...int) *graph.Node {
				return g.Input(fmt.Sprintf("x%d", g.Len()), dt, shape...)
			}
			var ns []*graph.Node
			switch sn, ok := sortTestNodes(d.Op, dt, in); {
			case ok: // sorting (issue 14; sort_test.go)
				ns = sn
			case isPoolOp(d.Op): // pooling (issue 15; pool_test.go)
				ns = poolTestNodes(d.Op, dt, in)
			case d.Op == ops.OpConv || d.Op == ops.OpConvTranspose || d.Op == ops.OpConvFilterGrad: // issue 15 (conv_test.go)
				ns = convTestNodes(d.Op, dt, in)
			case d.Kind == opdef.Elementwise:
				var args []*graph.Node
				for k := 0; k < max(d.Arity, 1); k++ {
					args = append(args, in(dt, 2, 3))
				}
				var attr graph.Attr
				if d.Op == ops.OpWhere {
					args[0] = in(tensor.Bool, 2, 3)
				}
				if d.Op == ops.OpCast {
					for _, to := range tensor.DTypes() {
						ns = append(ns, ops.Apply(d.Op, opdef.CastAttr{To: to}, args...))
					}
					break
				}
				ns = append(ns, ops.Apply(d.Op, attr, args...))
			case d.Kind == opdef.Reduction:
				ns = append(ns, ops.Apply(d.Op, opdef.AxesAttr{Axes: []int{1}}, in(dt, 2, 3)))
			case d.Kind == opdef.Contraction:
				ns = append(ns, ops.Apply(d.Op, nil, in(dt, 2, 3), in(dt, 3, 4)))
			case d.Kind == opdef.Normalisation:
				// Softmax-like ops take an AxisAttr, the scans a ScanAttr.
				var args []*graph.Node
				for k := 0; k < d.Arity; k++ {
					args = append(args, in(dt, 2, 3))
				}
				var attr graph.Attr = opdef.AxisAttr{Axis: 1}
				if _, err := d.Shape([]tensor.Shape{{2, 3}}, attr); err != nil {
					attr = opdef.ScanAttr{Axis: 1, Exclusive: true}
				}
				switch d.Op {
				case ops.OpFFT, ops.OpRFFT: // the Fourier transforms (issue 16) take an FFTAttr
					attr = opdef.FFTAttr{Axes: []int{1}, Norm: opdef.NormBackward}
				case ops.OpIRFFT:
					attr = opdef.FFTAttr{Axes: []int{1}, Norm: opdef.NormBackward, N: 4}
				}
				ns = append(ns, ops.Apply(d.Op, attr, args...))
			case d.Kind == opdef.Movement:
				x := in(dt, 2, 3)
				switch d.Op {
				case ops.OpReshape:
					ns = append(ns, ops.Apply(d.Op, opdef.ShapeAttr{Shape: tensor.Shape{3, 2}}, x))
				case ops.OpTranspose:
					ns = append(ns, ops.Apply(d.Op, opdef.PermAttr{Perm: []int{1, 0}}, x))
				case ops.OpBroadcastTo:
					ns = append(ns, ops.Apply(d.Op, opdef.ShapeAttr{Shape: tensor.Shape{4, 2, 3}}, x))
				case ops.OpConcat:
					ns = append(ns, ops.Apply(d.Op, opdef.AxisAttr{Axis: 0}, x, in(dt, 1, 3)))
				case ops.OpSlice:
					ns = append(ns, ops.Apply(d.Op, opdef.SliceAttr{Ranges: []ops.Range{ops.R(0, 2), ops.RS(1, 3, 2)}}, x))
				case ops.OpPad:
					ns = append(ns, ops.Apply(d.Op, opdef.PadAttr{Widths: []ops.PadWidth{{Low: 1, Interior: 1}, {High: 2}}}, x))
				case ops.OpIota:
					ns = append(ns, ops.Iota(g, dt, 1, 2, 3))
				case ops.OpRepeat, ops.OpSumRuns:
					off, _ := tensor.New([]int64{0, 2, 2, 3}, 4) // counts 2, 0, 1
					counts := []int{2, 0, 1}
					if d.Op == ops.OpSumRuns {
						off, _ = tensor.New([]int64{0, 1, 3}, 3) // counts 1, 2
						counts = []int{1, 2}
					}
					ns = append(ns, ops.Apply(d.Op, opdef.RepeatAttr{Axis: 1, Counts: counts}, x, g.Const(off)))
				case ops.OpGather, ops.OpTakeAlongAxis, ops.OpScatter, ops.OpScatterAdd, ops.OpIndexAdd:
					// indexing (issue 14): i32 and i64 indices.
					for _, it := range []tensor.DType{tensor.Int32, tensor.Int64} {
						a := opdef.AxisAttr{Axis: 1}
						switch d.Op {
						case ops.OpGather:
							ns = append(ns, ops.Apply(d.Op, a, x, in(it, 4)))
						case ops.OpTakeAlongAxis:
							ns = append(ns, ops.Apply(d.Op, a, x, in(it, 2, 5)))
						case ops.OpIndexAdd:
							ns = append(ns, ops.Apply(d.Op, a, x, in(it, 4), in(dt, 2, 4)))
						default:
							ns = append(ns, ops.Apply(d.Op, a, x, in(it, 2, 5), in(dt, 2, 5)))
						}
					}
				case ops.OpCustomGrad:
					ns = append(ns, ops.Apply(d.Op, opdef.CustomAttr{ID: 1, Name: "id", Rule: func(*graph.Node) []*graph.Node { return nil }}, x))
				case ops.OpTupleGet: // control flow (issue 22): a result of a Scan
					ns = append(ns, controlTestNodes(ops.OpScan, dt, in)...)
				default:
					t.Errorf("no test node for movement op %s", d.Name)
				}
			case d.Kind == opdef.Fusion:
				continue
			case d.Kind == opdef.Control: // control flow (issue 22): the op's tuple node
				for _, r := range controlTestNodes(d.Op, dt, in) {
					ns = append(ns, r.Input(0))
				}
			case d.Kind == opdef.Linalg: // linear algebra (issue 16): square batches, B with 2 columns
				sq := in(dt, 2, 3, 3)
				switch d.Op {
				case ops.OpSolve, ops.OpLstSq:
					ns = append(ns, ops.Apply(d.Op, nil, sq, in(dt, 2, 3, 2)))
				case ops.OpTriangularSolve:
					ns = append(ns, ops.Apply(d.Op, opdef.TriangularAttr{Upper: true}, sq, in(dt, 2, 3, 2)))
				default:
					ns = append(ns, ops.Apply(d.Op, nil, sq))
				}
			case d.Kind == opdef.Random: // random (issue 14): the key, and dt as the result's
				a := opdef.RandomAttr{DType: dt, Shape: tensor.Shape{2, 3}}
				if dt == tensor.Bool {
					a.P = 0.5
				}
				ns = append(ns, ops.Apply(d.Op, a, in(tensor.Int32, 2)))
			case d.Kind == opdef.Collective: // collectives (issue 18): one rank, the backend's communicator
				ns = append(ns, ops.Apply(d.Op, opdef.CollectiveAttr{Size: 1}, in(dt, 2, 3)))
			default:
				t.Errorf("no test node for %s of kind %v", d.Name, d.Kind)
			}
			for _, n := range ns {
				if !n.Valid() {
					continue // the op's rules reject dt
				}
				out = append(out, n)
				if d.Kind != opdef.Elementwise {
					continue
				}
				f := fuseGraph(n)
				if f.Valid() {
					out = append(out, f)
				}
				if n.DType() != tensor.Bool && !n.DType().IsStorage() {
					if s := fuseGraph(ops.Sum(n, 1)); s.Valid() {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// controlTestNodes builds op (Cond, While or Scan) over operands of
// dtype dt and returns its results (TupleGet nodes).
func controlTestNodes(op graph.Op, dt tensor.DType, in func(tensor.DType, ...int) *graph.Node) []*graph.Node {
	x := in(dt, 2, 3)
	id := func(xs []*graph.Node) []*graph.Node { return xs }
	switch op {
	case ops.OpCond:
		return ops.Cond(in(tensor.Bool), id, id, x)
	case ops.OpWhile:
		return ops.WhileMax(3, func(c []*graph.Node) *graph.Node { return ops.Less(c[1], ops.Scalar(c[1], 2)) },
			func(c []*graph.Node) []*graph.Node { return []*graph.Node{c[0], ops.Add(c[1], ops.Scalar(c[1], 1))} },
			x, in(tensor.Int32))
	}
	c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, xt }, []*graph.Node{in(dt, 3)}, []*graph.Node{x}, 2)
	return append(c, ys...)
}

// TestSupports compares Supports with the CPU backend's on a node of every
// op and admitted dtype: everything the CPU runs, but MatMul, must be
// supported (and generate), and MatMul never is.
func TestSupports(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	seen := map[graph.Op]bool{}
	nodes := supportNodes(t)
	for _, n := range nodes {
		seen[n.Op()] = true
		cpuErr := be.Supports(n)
		err := Supports(n)
		switch {
		case n.Op() == ops.OpMatMul:
			// cuBLAS runs float32, float64, complex64 and complex128
			// (exec/cuda), nothing is generated.
			if lib := LibraryOf(n); lib != GEMM {
				t.Errorf("LibraryOf(%s) = %v, want GEMM", describe(n), lib)
			}
			f := n.DType() == tensor.Float32 || n.DType() == tensor.Float64 || n.DType().IsComplex()
			if f != (err == nil) || (err != nil && (!errors.Is(err, loomexec.ErrUnsupported) || !strings.Contains(err.Error(), "MatMul"))) {
				t.Errorf("Supports(%s) = %v, want nil for float32, float64 and complex, else an ErrUnsupported naming MatMul", describe(n), err)
			}
			if _, err := Generate(n, h100); err == nil || !strings.Contains(err.Error(), "cuBLAS") {
				t.Errorf("Generate(%s) = %v, want an error saying it runs on cuBLAS", describe(n), err)
			}
			continue
		case LibraryOf(n) == Solver || LibraryOf(n) == FFT || LibraryOf(n) == Control || LibraryOf(n) == Collective:
			// cuSOLVER and cuFFT (exec/cuda's linalg.go and fft.go) in
			// float32 and float64 (and their complex types), nothing
			// generated here.
			if cpuErr == nil && err != nil {
				t.Errorf("Supports(%s) = %v; the CPU runs it", describe(n), err)
			}
			if _, err := Generate(n, h100); err == nil {
				t.Errorf("Generate(%s) succeeded for a library op", describe(n))
			}
			continue
		case cpuErr == nil && err != nil:
			t.Errorf("Supports(%s) = %v; the CPU runs it", describe(n), err)
		case cpuErr != nil && err == nil:
			t.Logf("supported here, not on the CPU: %s (%v)", describe(n), cpuErr)
		}
		if err == nil {
			if _, err := Generate(n, h100); err != nil {
				t.Errorf("Generate(%s): %v", describe(n), err)
			}
		}
	}
	for _, d := range opdef.Defs() {
		if !seen[d.Op] {
			t.Errorf("no node of %s was tried", d.Name)
		}
	}
	if len(nodes) < 150 {
		t.Errorf("only %d nodes", len(nodes))
	}
}

func TestSupportsErrors(t *testing.T) {
	g := graph.New()
	mm := ops.MatMul(g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 3, 4))
	if err := Supports(mm); err != nil {
		t.Errorf("Supports(MatMul) = %v: cuBLAS runs it", err)
	}
	if _, err := Generate(mm, h100); err == nil || !strings.Contains(err.Error(), "MatMul") || !strings.Contains(err.Error(), "f32[2,3]") || !strings.Contains(err.Error(), "cuBLAS") {
		t.Errorf("Generate(MatMul) = %v: want an error naming the op, its types and cuBLAS", err)
	}
	// An integer MatMul (built by hand: the builders never make one) has
	// no cuBLAS call.
	xi := g.Input("xi", tensor.Int32, 4, 4)
	mi := g.Add(graph.Spec{Op: ops.OpMatMul, Inputs: []*graph.Node{xi, xi}, DType: tensor.Int32, Shape: tensor.Shape{4, 4}})
	if err := Supports(mi); !errors.Is(err, loomexec.ErrUnsupported) || !strings.Contains(err.Error(), "MatMul(i32[4,4], i32[4,4])") || !strings.Contains(err.Error(), "cuBLAS runs float32, float64, complex64 and complex128") {
		t.Errorf("Supports(int32 MatMul) = %v, want ErrUnsupported naming the op, its types and why", err)
	}
	if _, err := lookup(graph.Op(60000)); err == nil || !strings.Contains(err.Error(), "no row") {
		t.Errorf("lookup(unknown op) = %v, want an error saying the table has no row", err)
	}
	if err := Supports(graph.Invalid(errors.New("x"))); err == nil {
		t.Errorf("Supports(invalid node) = nil")
	}
}
