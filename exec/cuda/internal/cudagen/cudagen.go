package cudagen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
)

// Target describes the device a kernel is generated for. Zero fields take
// the defaults of an H100 (1024 threads, 132 multiprocessors, 48 KiB).
type Target struct {
	MaxThreads  int // threads per block limit (1024 on real GPUs)
	SMs         int // multiprocessors
	SharedBytes int // dynamic shared memory per block limit (48 KiB)
}

// withDefaults fills the zero fields of t.
func (t Target) withDefaults() Target {
	if t.MaxThreads <= 0 {
		t.MaxThreads = 1024
	}
	if t.SMs <= 0 {
		t.SMs = 132
	}
	if t.SharedBytes <= 0 {
		t.SharedBytes = 48 << 10
	}
	return t
}

// block is the number of threads of a one-dimensional block: 256, or
// fewer when the device allows fewer (rounded down to a power of two, so
// that tree reductions can halve it).
func (t Target) block() int {
	b := 256
	for b > t.MaxThreads && b > 1 {
		b /= 2
	}
	return b
}

// maxGrid is the cap on grid sizes of grid-stride kernels: 32 blocks per
// multiprocessor.
func (t Target) maxGrid() int64 { return int64(t.SMs) * 32 }

// ArgKind says what a kernel argument points to.
type ArgKind uint8

const (
	// In is operand Index of the node.
	In ArgKind = iota
	// Out is the node's result.
	Out
	// Scratch is the kernel's scratch buffer (Kernel.ScratchBytes).
	Scratch
	// Status is the step's StatusWords long long words, zeroed by the
	// backend before every run and read after it (Kernel.Check).
	Status
)

func (k ArgKind) String() string {
	switch k {
	case In:
		return "in"
	case Out:
		return "out"
	case Scratch:
		return "scratch"
	case Status:
		return "status"
	}
	return fmt.Sprintf("argkind(%d)", uint8(k))
}

// Arg is one device-pointer argument of a launch. Index is the operand
// index for In and 0 otherwise.
type Arg struct {
	Kind  ArgKind
	Index int
}

func (a Arg) String() string {
	if a.Kind == In {
		return fmt.Sprintf("in%d", a.Index)
	}
	return a.Kind.String()
}

// Launch is one kernel launch: function Func with the given grid and block
// dimensions, Shared bytes of dynamic shared memory and Args, all device
// pointers, in the order of the function's parameters.
type Launch struct {
	Func        string
	Grid, Block [3]uint32
	Shared      uint32
	Args        []Arg
}

// Func is the source of one generated function: the complete definition
// of one extern "C" __global__ function and nothing else. Name is "loom_",
// a readable prefix and a hash of the function's text, so that identical
// kernels share a name and can be deduplicated by it.
type Func struct {
	Name, Source string
}

// Kernel is what a node compiles to: the functions it needs and the
// launches that compute it, in order, on one stream. A node with nothing
// to compute (an empty result) has no launches. ScratchBytes is the size
// of the scratch buffer the launches' Scratch arguments point to (0 for
// none).
type Kernel struct {
	Funcs        []Func
	Launches     []Launch
	ScratchBytes int64
	// Check, when set, says that the launches check indices and report a
	// bad one in the step's status words (a Status argument): after the
	// run the backend turns them into an error with Check.Err.
	Check *IndexCheck
}

// Supports returns nil when the backend can compute n: with a kernel of
// Generate, or with the library call LibraryOf names. Otherwise it returns
// an error wrapping exec.ErrUnsupported that names the op and its operand
// dtypes.
func Supports(n *graph.Node) error {
	if n == nil || !n.Valid() {
		return fmt.Errorf("%w: cudagen: invalid node", exec.ErrUnsupported)
	}
	if err := supports(n); err != nil {
		return fmt.Errorf("%w: cudagen: %s: %v", exec.ErrUnsupported, describe(n), err)
	}
	return nil
}

// describe names a node's op and types: "Add(f32[2,3], f32[3]) -> f32[2,3]".
func describe(n *graph.Node) string {
	var in []string
	for _, x := range n.Inputs() {
		in = append(in, x.Type())
	}
	return fmt.Sprintf("%s(%s) -> %s", n.Op(), strings.Join(in, ", "), n.Type())
}

// supports checks n against its op's row of the table.
func supports(n *graph.Node) error {
	e, err := lookup(n.Op())
	if err != nil {
		return err
	}
	return e.check(n)
}

// Generate returns the kernel that computes node n on target t: every
// shape, stride and size is a constant of the source, and the launches
// take only device pointers. The kernels of elementwise ops and of fused
// groups without a reduction read element i of every operand before they
// write element i of the result, and no thread reads element i after, so
// the result may share its buffer with an operand of its shape and
// element size (the memory planner's in-place updates). Reductions are
// deterministic (no atomics); the package documentation lists the kernel
// shapes. A node that runs as a library call (LibraryOf: MatMul on
// cuBLAS) has no generated kernel.
func Generate(n *graph.Node, t Target) (*Kernel, error) {
	if err := Supports(n); err != nil {
		return nil, err
	}
	g := &gen{t: t.withDefaults()}
	if err := table[n.Op()].gen(g, n); err != nil {
		return nil, fmt.Errorf("cudagen: %s: %w", describe(n), err)
	}
	if len(g.k.Launches) > 0 {
		g.k.Check = indexCheckOf(n)
	}
	return &g.k, nil
}

// gen accumulates the functions and launches of one kernel.
type gen struct {
	t Target
	k Kernel
}

// function names a generated function and adds it to the kernel (once):
// prefix is a readable tag, params the parameter list and body the text
// between the braces. The name is "loom_" + prefix + "_" + a hash of the
// rest, so identical kernels get identical names.
func (g *gen) function(prefix, params, body string) string {
	h := sha256.Sum256([]byte(prefix + "\x00" + params + "\x00" + body))
	name := "loom_" + prefix + "_" + hex.EncodeToString(h[:8])
	for _, f := range g.k.Funcs {
		if f.Name == name {
			return name
		}
	}
	src := "extern \"C\" __global__ void " + name + "(" + params + ")\n{\n" + body + "}\n"
	g.k.Funcs = append(g.k.Funcs, Func{Name: name, Source: src})
	return name
}

// launch appends a launch of fn.
func (g *gen) launch(fn string, grid int64, block [3]int, shared int, args ...Arg) {
	g.k.Launches = append(g.k.Launches, Launch{
		Func:   fn,
		Grid:   [3]uint32{uint32(grid), 1, 1},
		Block:  [3]uint32{uint32(block[0]), uint32(block[1]), uint32(block[2])},
		Shared: uint32(shared),
		Args:   args,
	})
}

// gridFor returns the grid of a grid-stride loop over n items handled
// per blocks of per: ceil(n/per), capped at 32 blocks per multiprocessor.
func (g *gen) gridFor(n, per int64) int64 {
	return min(ceilDiv(n, per), g.t.maxGrid())
}

// inArgs lists In arguments 0..n-1.
func inArgs(n int) []Arg {
	a := make([]Arg, n)
	for i := range a {
		a[i] = Arg{Kind: In, Index: i}
	}
	return a
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// pow2ceil returns the smallest power of two >= n (1 for n <= 1).
func pow2ceil(n int64) int64 {
	p := int64(1)
	for p < n {
		p *= 2
	}
	return p
}
