package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The indexing ops (ops/index.go). Every index is checked where it is
// read: one outside its axis (after a negative one wraps once) is never
// used to read or write; the thread sets word 0 of the step's status
// words (every such thread stores the same 1, without atomics) and
// writes a defined value (a gather's 0) or nothing (a scatter). A last
// launch of one thread finds, only when word 0 is set, the first bad
// index in order and stores its position and value in words 1 and 2, so
// that the backend reports the same error as the CPU's (IndexCheck).
//
// Gather and TakeAlongAxis: a thread per result element. The scatters
// copy x into the result (nothing when the memory planner gave the result
// x's buffer), then a thread per (outer row, inner position, destination
// range) walks the indices in order and handles the updates whose index
// falls in its range: every result element has one writer, and
// duplicates meet in row-major order of the indices (the last write wins;
// sums add in that order), as on the CPU, without atomics.

// IndexCheck describes the index check of a kernel: the op, its axis and
// the axis length, from which the backend words the error of the first
// bad index (opdef.IndexError) found in the status words.
type IndexCheck struct {
	Op   string
	Axis int
	Len  int
}

// StatusWords is the number of long long words of a step's status
// (Status argument), which the backend zeroes before every run: word 0
// is nonzero when an index was out of range; words 1 and 2 then hold the
// position and value of the first.
const StatusWords = 3

// Err is the error of the status words st (nil when word 0 is 0).
func (c *IndexCheck) Err(st []int64) error {
	if len(st) < StatusWords || st[0] == 0 {
		return nil
	}
	return opdef.IndexError(c.Op, st[2], int(st[1]), c.Axis, c.Len)
}

// ixDims is the geometry of an indexing node: x's shape split at the axis
// into outer, d and inner, and n, the indices along the axis (all of them
// for Gather and IndexAdd, whose indices are one list).
type ixDims struct {
	axis                int
	outer, d, inner, n  int64
	idxSize             int64
	xType, idxType, upd string
}

func ixDimsOf(n *graph.Node) ixDims {
	x := n.Input(0).Shape()
	ax := n.Attr().(opdef.AxisAttr).Axis
	g := ixDims{axis: ax, outer: 1, d: int64(x[ax]), inner: 1, idxSize: int64(n.Input(1).Shape().Size()),
		idxType: cType(n.Input(1).DType())}
	for _, v := range x[:ax] {
		g.outer *= int64(v)
	}
	for _, v := range x[ax+1:] {
		g.inner *= int64(v)
	}
	if n.Op() == ops.OpGather || n.Op() == ops.OpIndexAdd {
		g.n = g.idxSize
	} else {
		g.n = int64(n.Input(1).Shape()[ax])
	}
	return g
}

// checkIndexing admits the indexing ops' dtypes: element bits for the
// gathers and Scatter, arithmetic for the adds.
func checkIndexing(n *graph.Node) error {
	if cType(n.Input(1).DType()) == "" || !n.Input(1).DType().IsInt() {
		return fmt.Errorf("no index type %v", n.Input(1).DType())
	}
	if n.Op() == ops.OpScatterAdd || n.Op() == ops.OpIndexAdd {
		if c := cInfos[n.DType()]; c.class != intClass && c.class != floatClass {
			return fmt.Errorf("no addition for %v", n.DType())
		}
		return nil
	}
	if bitsType(n.DType()) == "" {
		return fmt.Errorf("no storage type for %v", n.DType())
	}
	return nil
}

// indexing is the row of the indexing ops.
func indexing() entry {
	return entry{check: checkIndexing, gen: func(g *gen, n *graph.Node) error {
		if n.Shape().Size() == 0 {
			return nil
		}
		g.indexing(n)
		return nil
	}}
}

// wrapIdx emits v, the wrapped index read by expr, and the check: a bad
// index sets the status and runs bad (a statement).
func wrapIdx(c *code, d int64, expr, bad string) {
	c.line("long long v = (long long)%s;", expr)
	c.line("if (v < 0) v += %s;", ll(d))
	c.line("if (v < 0 || v >= %s) { st[0] = 1; %s }", ll(d), bad)
}

func (g *gen) indexing(n *graph.Node) {
	dm := ixDimsOf(n)
	b := int64(g.t.block())
	blk := [3]int{int(b), 1, 1}
	op := n.Op()
	ct := bitsType(n.DType())
	status := Arg{Kind: Status}
	switch op {
	case ops.OpGather, ops.OpTakeAlongAxis:
		size := int64(n.Shape().Size())
		var c code
		c.gridStride("i", size)
		c.line("const long long k = i %% %s;", ll(dm.inner))
		c.line("const long long u = i / %s;", ll(dm.inner))
		c.line("const long long o = u / %s;", ll(dm.n))
		read := "in1[u % " + ll(dm.n) + "]"
		prefix := "gather_idx"
		if op == ops.OpTakeAlongAxis {
			read, prefix = "in1[i]", "take_along"
		}
		zero := "0" // (a literal 0 converts to every integer bits type)
		if ct == bitsType(tensor.Complex128) {
			zero = zeroOf(ct)
		}
		wrapIdx(&c, dm.d, read, "out[i] = "+zero+"; continue;")
		c.line("out[i] = in0[(o * %s + v) * %s + k];", ll(dm.d), ll(dm.inner))
		c.line("}")
		fn := g.function(prefix, "const "+ct+"* __restrict__ in0, const "+dm.idxType+"* __restrict__ in1, "+ct+"* __restrict__ out, long long* __restrict__ st", c.String())
		g.launch(fn, g.gridFor(size, b), blk, 0, Arg{Kind: In}, Arg{Kind: In, Index: 1}, Arg{Kind: Out}, status)
	default:
		if op != ops.OpScatter {
			ct = cType(n.DType())
		}
		// The copy of x, skipped in place.
		size := int64(n.Shape().Size())
		var c code
		c.line("if (in0 == out) return;")
		c.gridStride("i", size)
		c.line("out[i] = in0[i];")
		c.line("}")
		fn := g.function("scatter_copy", "const "+ct+"* in0, "+ct+"* out", c.String())
		g.launch(fn, g.gridFor(size, b), blk, 0, Arg{Kind: In}, Arg{Kind: Out})
		g.scatterPass(n, dm, ct)
	}
	// The first bad index, on the error path only.
	var c code
	c.line("if (st[0] == 0 || blockIdx.x != 0 || threadIdx.x != 0) return;")
	c.line("for (long long p = 0; p < %s; p++) {", ll(dm.idxSize))
	c.line("const long long v = (long long)in1[p];")
	c.line("if (v < %s || v >= %s) { st[1] = p; st[2] = v; return; }", ll(-dm.d), ll(dm.d))
	c.line("}")
	fn := g.function("index_first_bad", "const "+dm.idxType+"* __restrict__ in1, long long* __restrict__ st", c.String())
	g.launch(fn, 1, [3]int{1, 1, 1}, 0, Arg{Kind: In, Index: 1}, status)
}

// scatterPass launches the update pass of Scatter, ScatterAdd and
// IndexAdd: thread t handles line (o, k) = t / parts and destination range
// t % parts of the axis, walking the indices in order.
func (g *gen) scatterPass(n *graph.Node, dm ixDims, ct string) {
	op := n.Op()
	lines := dm.outer * dm.inner
	// Enough threads to fill the device (4 blocks per multiprocessor),
	// the axis cut into at most d ranges.
	want := int64(g.t.SMs) * 4 * int64(g.t.block())
	parts := int64(1)
	if lines < want && dm.d > 1 {
		parts = min(dm.d, ceilDiv(want, lines))
	}
	total := lines * parts
	var update string
	switch {
	case op == ops.OpScatter:
		update = "out[q] = in2[p];"
	case n.DType().IsInt():
		update = fmt.Sprintf("out[q] = loom_add_%s(out[q], in2[p]);", cInfos[n.DType()].sfx)
	default:
		update = "out[q] = out[q] + in2[p];"
	}
	var c code
	c.gridStride("t", total)
	c.line("const long long line = t / %s;", ll(parts))
	c.line("const long long part = t %% %s;", ll(parts))
	c.line("const long long k = line %% %s;", ll(dm.inner))
	c.line("const long long o = line / %s;", ll(dm.inner))
	c.line("const long long d0 = part * %s / %s;", ll(dm.d), ll(parts))
	c.line("const long long d1 = (part + 1) * %s / %s;", ll(dm.d), ll(parts))
	c.line("for (long long j = 0; j < %s; j++) {", ll(dm.n))
	c.line("const long long p = (o * %s + j) * %s + k;", ll(dm.n), ll(dm.inner))
	read := "in1[p]"
	if op == ops.OpIndexAdd {
		read = "in1[j]"
	}
	wrapIdx(&c, dm.d, read, "continue;")
	c.line("if (v < d0 || v >= d1) continue;")
	c.line("const long long q = (o * %s + v) * %s + k;", ll(dm.d), ll(dm.inner))
	c.line("%s", update)
	c.line("}")
	c.line("}")
	prefix := map[graph.Op]string{ops.OpScatter: "scatter", ops.OpScatterAdd: "scatter_add", ops.OpIndexAdd: "index_add"}[op]
	fn := g.function(prefix, "const "+dm.idxType+"* __restrict__ in1, const "+ct+"* __restrict__ in2, "+ct+"* __restrict__ out, long long* __restrict__ st", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(total, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In, Index: 1}, Arg{Kind: In, Index: 2}, Arg{Kind: Out}, Arg{Kind: Status})
}

// indexCheckOf is the IndexCheck of an indexing node (nil for others).
func indexCheckOf(n *graph.Node) *IndexCheck {
	switch n.Op() {
	case ops.OpGather, ops.OpTakeAlongAxis, ops.OpScatter, ops.OpScatterAdd, ops.OpIndexAdd:
	default:
		return nil
	}
	ax := n.Attr().(opdef.AxisAttr).Axis
	return &IndexCheck{Op: n.Op().String(), Axis: ax, Len: n.Input(0).Shape()[ax]}
}
