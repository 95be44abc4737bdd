package exec

import (
	"fmt"
	"math"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// ---- memory limits (Compile) ----

// deviceLimit is the most bytes of device memory a program may need: the
// MemoryLimit option, else what the device reports (0: unknown, no limit).
func (c *compilation) deviceLimit() int64 {
	if c.cfg.memLimit > 0 {
		return c.cfg.memLimit
	}
	return c.be.Device().Memory
}

// valueBytes returns the bytes of node n's value, or an error naming the
// node when its size overflows or exceeds limit (0: none), or when it is
// an output larger than the host tensors Run allocates may be.
func (c *compilation) valueBytes(n *graph.Node, limit int64) (int64, error) {
	b, err := tensor.ByteSize(n.DType(), n.Shape())
	if err != nil {
		return 0, fmt.Errorf("%s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
	}
	if limit > 0 && int64(b) > limit {
		return 0, fmt.Errorf("%s %s (built at %s) needs %d bytes, more than the %d bytes of memory of %s (exec.MemoryLimit sets the limit): %w",
			n.Op(), n.Type(), n.Site(), b, limit, c.be.Name(), tensor.ErrTooLarge)
	}
	return int64(b), nil
}

// checkTotal refuses a plan whose device memory (arena, constants, and two
// buffers per variable) exceeds the limit, and outputs that Run could not
// allocate on the host.
func (c *compilation) checkTotal() error {
	p := c.plan
	host := tensor.MemoryLimit()
	for _, v := range p.Outputs {
		if b := p.Values[v].Bytes; b > host {
			n := p.Values[v].Node
			return fmt.Errorf("output %s (built at %s) needs %d bytes of host memory, more than tensor.MemoryLimit (%d): %w",
				n.Type(), n.Site(), b, host, tensor.ErrTooLarge)
		}
	}
	limit := c.deviceLimit()
	if limit <= 0 {
		return nil
	}
	var consts, vars int64
	for _, v := range p.Consts {
		consts += p.Values[v].Bytes
	}
	for _, v := range p.Vars {
		vars += 2 * p.Values[v.Value].Bytes
	}
	// Each term is at most a few times limit (every value was checked
	// against it), so the sum cannot overflow for any real plan; saturate
	// anyway.
	total := p.ArenaBytes
	for _, t := range []int64{consts, vars, bodyArenas(p)} {
		if total > math.MaxInt64-t {
			total = math.MaxInt64
			break
		}
		total += t
	}
	if total > limit {
		return fmt.Errorf("the program needs %d bytes of %s memory (arena %d, constants %d, variables %d, control-flow bodies' arenas %d), more than the %d bytes it has (exec.MemoryLimit sets the limit): %w",
			total, c.be.Name(), p.ArenaBytes, consts, vars, bodyArenas(p), limit, tensor.ErrTooLarge)
	}
	return nil
}

// ---- CheckNumerics ----

// checkValue is one value CheckNumerics checks: node (of the compiled
// graph) and, after the user's outputs, the scalar output that is NaN
// exactly when node's value holds a NaN or an Inf.
type checkValue struct {
	node *graph.Node
}

// numerics adds, for every float kernel node n, the output Sum(n - n): an
// exact 0 when every element of n is finite (x - x is +0 for finite x, and
// a sum of zeros is 0), NaN as soon as one is NaN or ±Inf. Storage-only
// float types are cast to float32 first (the cast keeps NaN and Inf).
func numerics(c *compilation) error {
	nodes := append([]*graph.Node(nil), c.g.Nodes()...)
	for _, n := range nodes {
		if n.Op().IsLeaf() || !n.DType().IsFloat() {
			continue
		}
		x := n
		if x.DType() != tensor.Float32 && x.DType() != tensor.Float64 {
			x = ops.Cast(x, tensor.Float32)
		}
		chk := ops.Sub(x, x)
		if chk.Rank() > 0 {
			chk = ops.Sum(chk)
		}
		if !chk.Valid() {
			return chk.Err()
		}
		c.checks = append(c.checks, checkValue{node: n})
		c.gOuts = append(c.gOuts, chk)
	}
	return nil
}

// checkNumerics inspects the checks of a finished run: the first checked
// value (in run order) that is not finite although every operand was is
// the error.
func (p *Program) checkNumerics(f *Frame) error {
	bad := map[*graph.Node]bool{}
	for i, ck := range p.checks {
		if v := f.checks[i].Float64(0); v != 0 {
			bad[ck.node] = true
		}
	}
	if len(bad) == 0 {
		return nil
	}
	for _, ck := range p.checks {
		n := ck.node
		if !bad[n] {
			continue
		}
		blame := true
		for _, in := range n.Inputs() {
			if !p.finiteOperand(f, in, bad) {
				blame = false
				break
			}
		}
		if blame {
			ins := make([]string, len(n.Inputs()))
			for i, in := range n.Inputs() {
				ins[i] = in.Type()
			}
			op := n.Op().String()
			if ta, ok := n.Attr().(opdef.TupleAttr); ok && len(n.Inputs()) == 1 {
				// a loop's result: name the loop
				op = fmt.Sprintf("%s[result %d]", n.Input(0).Op(), ta.Index)
				ins = ins[:0]
				for _, in := range n.Input(0).Inputs() {
					ins = append(ins, in.Type())
				}
			}
			if a, ok := n.Attr().(*opdef.FusedAttr); ok {
				op = "Fused[" + strings.Join(a.OpNames(), ",") + "]"
			}
			return fmt.Errorf("exec: Run: %w: %s(%s) -> %s, built at %s, produced NaN or Inf from finite operands",
				ErrNonFinite, op, strings.Join(ins, ", "), n.Type(), n.Site())
		}
	}
	return nil
}

// finiteOperand reports whether operand in of a checked node held only
// finite values in the run of frame f.
func (p *Program) finiteOperand(f *Frame, in *graph.Node, bad map[*graph.Node]bool) bool {
	if isControl(in) {
		// A loop's results (its TupleGets) are blamed on the loop only
		// when every operand of the loop was finite.
		for _, x := range in.Inputs() {
			if !p.finiteOperand(f, x, bad) {
				return false
			}
		}
		return true
	}
	if !in.DType().IsFloat() {
		return true
	}
	switch in.Op() {
	case graph.OpInput:
		for i, v := range p.plan.Inputs {
			if p.plan.Values[v].Node == in {
				if i < len(f.InputBufs) && f.InputBufs[i] != nil {
					// A device feed (RunDevice): read it to check it.
					t, err := tensor.Make(in.DType(), in.Shape()...)
					if err != nil || f.InputBufs[i].Read(t) != nil {
						return false
					}
					return allFinite(t)
				}
				return allFinite(f.Inputs[i])
			}
		}
	case graph.OpConst:
		return allFinite(in.Value())
	case graph.OpVariable:
		for i, v := range p.plan.Vars {
			if v.Node == in {
				t, err := tensor.Make(p.slots[i].dtype, in.Shape()...)
				if err != nil || p.slots[i].cur.Read(t) != nil {
					return false
				}
				return allFinite(t)
			}
		}
	default:
		return !bad[in]
	}
	return false
}

func allFinite(t *tensor.Tensor) bool {
	for i, n := 0, t.Size(); i < n; i++ {
		c := t.Complex128(i) // real dtypes: imaginary part 0
		for _, v := range [2]float64{real(c), imag(c)} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
