package exec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
)

// Storage says where a value of a Plan lives.
type Storage uint8

const (
	InArena  Storage = iota + 1 // at Offset in the Program's arena
	InInput                     // the caller's feed number Index
	InVar                       // the current value of variable Index
	InNext                      // the next value of variable Index
	InOutput                    // the caller's output number Index
	InConst                     // constant number Index (Plan.Consts)
)

func (s Storage) String() string {
	switch s {
	case InArena:
		return "arena"
	case InInput:
		return "input"
	case InVar:
		return "var"
	case InNext:
		return "next"
	case InOutput:
		return "output"
	case InConst:
		return "const"
	}
	return "?"
}

// Value is one buffer of a Plan: a node's result or a copy of it.
type Value struct {
	Node    *graph.Node // the node (of Plan.Graph) whose value this is
	Storage Storage
	Index   int   // feed, variable, output or constant number
	Offset  int64 // byte offset in the arena (InArena only)
	Bytes   int64
	Def     int // index of the step that writes it; -1 if written before the run
	Last    int // index of the last step that reads it; -1 if none
	// Alias is the value whose bytes this one views (a Reshape needs no
	// copy), or -1. An alias has its root's Storage, Index and Offset.
	Alias int
	// Buffer is the value whose arena buffer this one uses: itself, its
	// alias root, or an operand it overwrites in place (memplan).
	Buffer int
	// ViewOffset is where an alias's bytes start in its Alias's bytes: 0
	// for a Reshape, the result's offset in the tuple for a TupleGet
	// (the result of a control-flow op; internal/opdef/control.go).
	ViewOffset int64
}

// BodyPlan is one body of a control-flow node (Cond's then and else,
// While's cond and body, Scan's body) compiled like a program: its
// Inputs are the body's parameters that it reads, its Outputs the body's
// results in order; it has no Variables.
type BodyPlan struct {
	*Plan
	// Params[i] is the body parameter fed to Inputs[i]: parameter j
	// stands for operand j + ControlAttr.ParamOffset() of the node.
	Params []int
}

// StepKind distinguishes kernels from copies.
type StepKind uint8

const (
	KernelStep StepKind = iota + 1 // run Node's op on In, writing Out
	CopyStep                       // copy In[0] to Out
	AliasStep                      // Out views In[0]'s bytes: nothing to run
)

// Step is one unit of work, run in order.
type Step struct {
	Kind StepKind
	Node *graph.Node // the op node (KernelStep), or the copied value's node
	In   []int       // value indices read
	Out  int         // value index written
}

// VarPlan is one Variable of a Plan.
type VarPlan struct {
	Node   *graph.Node // the Variable node in Plan.Graph
	User   *graph.Node // the Variable node in the user's graph
	Value  int         // value index of its current value
	Update int         // value index of its next value (InNext), or -1
}

// Plan is a compiled program before lowering: the optimised graph, the
// ordered steps, and where every value lives. It is device-independent;
// backends lower it.
type Plan struct {
	Graph      *graph.Graph
	Values     []Value
	Steps      []Step
	Inputs     []int // value index of each feed, in Plan order
	InputNodes []*graph.Node
	Vars       []VarPlan
	Outputs    []int // value index of each output (InOutput): the user's, then CheckNumerics' scalars
	Consts     []int // value index of each constant (InConst)
	ArenaBytes int64
	PeakBytes  int64   // largest total of simultaneously live arena bytes
	InPlace    int     // kernel steps that overwrite an operand's buffer
	Live       []int64 // arena bytes live during each step
	// Bodies holds, for each control-flow node of Graph, its bodies
	// compiled, in the order of its ControlAttr.Bodies.
	Bodies map[*graph.Node][]*BodyPlan
	// Comm is the communicator the collective ops run on
	// (WithCommunicator; nil when the graph has none).
	Comm dist.Communicator
}

// Clone returns a deep copy of the plan: every list (the steps' operand
// lists included) is the copy's own, so changing the copy changes nothing
// else. The graph and its nodes, which are immutable, are shared.
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	c := *p
	c.Values = slices.Clone(p.Values)
	c.Steps = slices.Clone(p.Steps)
	for i := range c.Steps {
		c.Steps[i].In = slices.Clone(c.Steps[i].In)
	}
	c.Inputs = slices.Clone(p.Inputs)
	c.InputNodes = slices.Clone(p.InputNodes)
	c.Vars = slices.Clone(p.Vars)
	c.Outputs = slices.Clone(p.Outputs)
	c.Consts = slices.Clone(p.Consts)
	c.Live = slices.Clone(p.Live)
	c.Bodies = maps.Clone(p.Bodies)
	return &c
}

// arenaAlign is the alignment of every arena value: a cache line, which
// also suits SIMD loads and GPU coalescing.
const arenaAlign = 64

// Format prints the plan: steps with their operands' storage.
func (p *Plan) Format() string {
	var b strings.Builder
	val := func(i int) string {
		v := p.Values[i]
		if v.Storage == InArena {
			return fmt.Sprintf("v%d@arena+%d", i, v.Offset)
		}
		return fmt.Sprintf("v%d@%s%d", i, v.Storage, v.Index)
	}
	for i, s := range p.Steps {
		ins := make([]string, len(s.In))
		for k, in := range s.In {
			ins[k] = val(in)
		}
		name := "Copy"
		switch s.Kind {
		case KernelStep:
			name = s.Node.Op().String()
			if s.Node.Op() == opdef.OpFused {
				name = "Fused[" + strings.Join(s.Node.Attr().(*opdef.FusedAttr).OpNames(), ",") + "]"
			}
		case AliasStep:
			name = "Alias"
		}
		fmt.Fprintf(&b, "%3d %s = %s(%s) %s\n", i, val(s.Out), name, strings.Join(ins, ", "), p.Values[s.Out].Node.Type())
		if a, ok := s.Node.Attr().(*opdef.ControlAttr); ok && s.Kind == KernelStep {
			for k, bp := range p.Bodies[s.Node] {
				fmt.Fprintf(&b, "    %s (params %v):\n", BodyName(a.Kind, k), bp.Params)
				for _, line := range strings.Split(strings.TrimSuffix(bp.Format(), "\n"), "\n") {
					b.WriteString("      " + line + "\n")
				}
			}
		}
	}
	fmt.Fprintf(&b, "arena %d bytes, peak live %d bytes\n", p.ArenaBytes, p.PeakBytes)
	return b.String()
}

// View returns the value that owns value v's bytes (Root) and where v's
// bytes start in them: the sum of the ViewOffsets along the Alias links
// (a TupleGet's offset in its tuple; 0 for reshapes).
func (p *Plan) View(v int) (root int, offset int64) {
	for p.Values[v].Alias >= 0 {
		offset += p.Values[v].ViewOffset
		v = p.Values[v].Alias
	}
	return v, offset
}

// Root follows Alias links from value v to the value that owns the bytes.
func (p *Plan) Root(v int) int {
	for p.Values[v].Alias >= 0 {
		v = p.Values[v].Alias
	}
	return v
}

// DescribeStep names step i for error messages: the copied value, or the
// kernel's op, type and call site ("none" when i is out of range).
func (p *Plan) DescribeStep(i int) string {
	if i < 0 || i >= len(p.Steps) {
		return "none"
	}
	s := p.Steps[i]
	if s.Kind == CopyStep {
		return "copy of " + s.Node.String()
	}
	return fmt.Sprintf("%s %s built at %s", s.Node.Op(), s.Node.Type(), s.Node.Site())
}

// liveness fills Def and Last of every value from the steps.
func (p *Plan) liveness() {
	for i := range p.Values {
		p.Values[i].Def, p.Values[i].Last = -1, -1
		p.Values[i].Buffer = i
	}
	for si, s := range p.Steps {
		p.Values[s.Out].Def = si
		for _, in := range s.In {
			p.Values[in].Last = si
		}
	}
}

// inPlaceOK reports whether a kernel of n may write its result over
// operand k's buffer: an elementwise kernel (or a fused group without a
// reduction) reads each operand element before it writes the result
// element with the same index, so an operand of the result's shape and
// element size can be overwritten.
func inPlaceOK(n *graph.Node, k int) bool {
	d := opdef.Lookup(n.Op())
	if d == nil {
		return false
	}
	switch {
	case d.Kind == opdef.Elementwise:
	case n.Op() == opdef.OpFused && n.Attr().(*opdef.FusedAttr).Reduce == nil:
	case k == 0 && isScatter(n):
		// The scatters copy x into the result, then update it: in place
		// they skip the copy (an embedding's gradient into zeros).
	case k == 0 && (n.Op() == ops.OpAllReduce || n.Op() == ops.OpBroadcast || n.Op() == ops.OpReduce):
		// The collectives that keep x's shape copy it into the result and
		// combine it there (internal/collective): in place, no copy.
	default:
		return false
	}
	in := n.Input(k)
	return in.Shape().Equal(n.Shape()) && in.DType().Size() == n.DType().Size()
}

// isScatter reports whether n is one of the scatters, which may update
// operand 0 in place (inPlaceOK).
func isScatter(n *graph.Node) bool {
	return n.Op() == ops.OpScatter || n.Op() == ops.OpScatterAdd || n.Op() == ops.OpIndexAdd
}

// sharesBuffer reports whether operand k's buffer is also another
// operand's (the same value, or views of one).
func sharesBuffer(ins []int, k int, find func(int) int) bool {
	for j, v := range ins {
		if j != k && find(v) == find(ins[k]) {
			return true
		}
	}
	return false
}

// assignArena gives every arena buffer an offset so that buffers whose
// live ranges overlap never share bytes, reusing memory of dead values.
//
// Values are first grouped into buffers: an alias (a Reshape view) joins
// its root's buffer, and a kernel that may work in place joins the buffer
// of an operand that dies at that step. Then the largest buffers are
// placed first, each at the lowest offset that fits between the buffers
// already placed that are live at the same time (the greedy-by-size
// strategy of TFLite's memory planner). A value written but never read
// still gets memory, live for its own step.
func (p *Plan) assignArena() {
	type span struct {
		start, end int
		size       int64
	}
	buf := make([]int, len(p.Values)) // union-find parent
	for i := range buf {
		buf[i] = i
	}
	find := func(v int) int {
		for buf[v] != v {
			buf[v] = buf[buf[v]]
			v = buf[v]
		}
		return v
	}
	// End of life of every value, counting the uses of its aliases.
	end := make([]int, len(p.Values))
	for i, v := range p.Values {
		end[i] = max(v.Last, v.Def)
	}
	for i, v := range p.Values {
		if v.Alias >= 0 {
			r := p.Root(i)
			end[r] = max(end[r], end[i])
		}
	}
	spans := map[int]*span{}
	spanOf := func(v int) *span {
		r := find(v)
		if spans[r] == nil {
			spans[r] = &span{p.Values[r].Def, end[r], p.Values[r].Bytes}
		}
		return spans[r]
	}
	join := func(v, into int) {
		sa, sb := spanOf(v), spanOf(into)
		a, b := find(v), find(into)
		if a == b {
			return
		}
		buf[a] = b
		sb.start, sb.end, sb.size = min(sb.start, sa.start), max(sb.end, sa.end), max(sb.size, sa.size)
		delete(spans, a)
	}
	// Walk the steps in order, joining buffers.
	for si, s := range p.Steps {
		out := s.Out
		if p.Values[out].Storage != InArena {
			continue
		}
		spanOf(out)
		switch s.Kind {
		case AliasStep:
			join(out, s.In[0])
		case KernelStep:
			for k, in := range s.In {
				if p.Values[in].Storage != InArena || !inPlaceOK(s.Node, k) || p.Values[in].Bytes != p.Values[out].Bytes {
					continue
				}
				if _, off := p.View(in); off != 0 {
					continue // a view inside a tuple: the result would start at the tuple's start
				}
				if isScatter(s.Node) && sharesBuffer(s.In, k, find) {
					continue // a scatter reads its other operands at other positions
				}
				if spanOf(in).end == si {
					join(out, in)
					p.InPlace++
					break
				}
			}
		}
	}
	for i, v := range p.Values {
		if v.Storage == InArena {
			spanOf(i)
			p.Values[i].Buffer = find(i)
		}
	}
	type item struct {
		root int
		span
	}
	var items []item
	for r, sp := range spans {
		s := *sp
		s.size = (s.size + arenaAlign - 1) / arenaAlign * arenaAlign
		items = append(items, item{r, s})
	}
	sort.SliceStable(items, func(a, b int) bool {
		if items[a].size != items[b].size {
			return items[a].size > items[b].size
		}
		if items[a].start != items[b].start {
			return items[a].start < items[b].start
		}
		return items[a].root < items[b].root
	})
	type placed struct {
		start, end  int
		offset, top int64
	}
	var done []placed
	var arena int64
	offset := map[int]int64{}
	for _, it := range items {
		var busy []placed
		for _, d := range done {
			if d.start <= it.end && it.start <= d.end {
				busy = append(busy, d)
			}
		}
		sort.Slice(busy, func(a, b int) bool { return busy[a].offset < busy[b].offset })
		off := int64(0)
		for _, d := range busy {
			if off+it.size <= d.offset {
				break
			}
			if d.top > off {
				off = d.top
			}
		}
		offset[it.root] = off
		done = append(done, placed{it.start, it.end, off, off + it.size})
		arena = max(arena, off+it.size)
	}
	for i, v := range p.Values {
		if v.Storage == InArena {
			p.Values[i].Offset = offset[find(i)]
		}
	}
	p.ArenaBytes = arena
	// Live bytes at every step, and the peak.
	p.Live = make([]int64, len(p.Steps))
	for _, it := range items {
		for si := max(it.start, 0); si <= it.end && si < len(p.Steps); si++ {
			p.Live[si] += spans[it.root].size
		}
	}
	p.PeakBytes = 0
	for _, l := range p.Live {
		p.PeakBytes = max(p.PeakBytes, l)
	}
}

// checkArena verifies that no two arena buffers that are live at the same
// step overlap in memory. Tests call it (VerifyEachPass).
func (p *Plan) checkArena() error {
	type buffer struct {
		start, end   int
		offset, size int64
	}
	bufs := map[int]*buffer{}
	for _, v := range p.Values {
		if v.Storage != InArena {
			continue
		}
		if v.Offset < 0 || v.Offset+v.Bytes > p.ArenaBytes || v.Offset%arenaAlign != 0 {
			return fmt.Errorf("value of %s at %d+%d is outside the arena of %d bytes or misaligned", v.Node, v.Offset, v.Bytes, p.ArenaBytes)
		}
		b := bufs[v.Buffer]
		end := max(v.Last, v.Def)
		if b == nil {
			bufs[v.Buffer] = &buffer{v.Def, end, v.Offset, v.Bytes}
			continue
		}
		if b.offset != v.Offset {
			return fmt.Errorf("values of buffer %d have different offsets", v.Buffer)
		}
		b.start, b.end, b.size = min(b.start, v.Def), max(b.end, end), max(b.size, v.Bytes)
	}
	for i, a := range bufs {
		for j, b := range bufs {
			if i >= j || a.size == 0 || b.size == 0 {
				continue
			}
			if a.start <= b.end && b.start <= a.end && a.offset < b.offset+b.size && b.offset < a.offset+a.size {
				return fmt.Errorf("buffers %d and %d are live together and overlap", i, j)
			}
		}
	}
	return nil
}
