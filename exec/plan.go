package exec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loomgraph/loom/graph"
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
}

// StepKind distinguishes kernels from copies.
type StepKind uint8

const (
	KernelStep StepKind = iota + 1 // run Node's op on In, writing Out
	CopyStep                       // copy In[0] to Out
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
	Outputs    []int // value index of each output (InOutput)
	Consts     []int // value index of each constant (InConst)
	ArenaBytes int64
	PeakBytes  int64 // largest total of simultaneously live arena bytes
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
		if s.Kind == KernelStep {
			name = s.Node.Op().String()
		}
		fmt.Fprintf(&b, "%3d %s = %s(%s) %s\n", i, val(s.Out), name, strings.Join(ins, ", "), p.Values[s.Out].Node.Type())
	}
	fmt.Fprintf(&b, "arena %d bytes, peak live %d bytes\n", p.ArenaBytes, p.PeakBytes)
	return b.String()
}

// liveness fills Def and Last of every value from the steps.
func (p *Plan) liveness() {
	for i := range p.Values {
		p.Values[i].Def, p.Values[i].Last = -1, -1
	}
	for si, s := range p.Steps {
		p.Values[s.Out].Def = si
		for _, in := range s.In {
			p.Values[in].Last = si
		}
	}
}

// assignArena gives every arena value an offset so that values whose live
// ranges overlap never share bytes, reusing memory of dead values. It
// places the largest values first, each at the lowest offset that fits
// between the values already placed that are live at the same time (the
// greedy-by-size strategy of TFLite's memory planner). A value written but
// never read still gets memory, live for its own step.
func (p *Plan) assignArena() {
	type item struct {
		v          int
		start, end int
		size       int64
	}
	var items []item
	for i, v := range p.Values {
		if v.Storage != InArena {
			continue
		}
		end := v.Last
		if end < v.Def {
			end = v.Def
		}
		size := (v.Bytes + arenaAlign - 1) / arenaAlign * arenaAlign
		items = append(items, item{i, v.Def, end, size})
	}
	sort.SliceStable(items, func(a, b int) bool {
		if items[a].size != items[b].size {
			return items[a].size > items[b].size
		}
		return items[a].start < items[b].start
	})
	type placed struct {
		start, end  int
		offset, top int64
	}
	var done []placed
	var arena int64
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
		p.Values[it.v].Offset = off
		done = append(done, placed{it.start, it.end, off, off + it.size})
		if off+it.size > arena {
			arena = off + it.size
		}
	}
	p.ArenaBytes = arena
	// Peak: the largest sum of live arena bytes at any step.
	var peak int64
	for si := range p.Steps {
		var live int64
		for _, it := range items {
			if it.start <= si && si <= it.end {
				live += p.Values[it.v].Bytes
			}
		}
		peak = max(peak, live)
	}
	p.PeakBytes = peak
}

// checkArena verifies that no two arena values that are live at the same
// step overlap in memory. Tests call it.
func (p *Plan) checkArena() error {
	for i, a := range p.Values {
		if a.Storage != InArena {
			continue
		}
		if a.Offset < 0 || a.Offset+a.Bytes > p.ArenaBytes || a.Offset%arenaAlign != 0 {
			return fmt.Errorf("value %d at %d+%d is outside the arena of %d bytes or misaligned", i, a.Offset, a.Bytes, p.ArenaBytes)
		}
		for j := i + 1; j < len(p.Values); j++ {
			b := p.Values[j]
			if b.Storage != InArena || a.Bytes == 0 || b.Bytes == 0 {
				continue
			}
			ae, be := max(a.Last, a.Def), max(b.Last, b.Def)
			if a.Def <= be && b.Def <= ae && a.Offset < b.Offset+b.Bytes && b.Offset < a.Offset+a.Bytes {
				return fmt.Errorf("values %d and %d are live together and overlap", i, j)
			}
		}
	}
	return nil
}
