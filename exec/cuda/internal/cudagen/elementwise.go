package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// program is a fused group of elementwise ops over a domain: a single
// elementwise node is a program of one op. Operands are read with NumPy
// broadcasting into the domain. With no ops the value is operand 0 (a
// plain reduction's element).
type program struct {
	domain tensor.Shape
	ins    []*graph.Node
	ops    []opdef.FusedOp
	reduce *opdef.FusedReduce
}

// programOf builds the program of an elementwise or Fused node and checks
// that every op's row of the table has an expression for its dtypes.
func programOf(n *graph.Node) (*program, error) {
	p := &program{ins: n.Inputs()}
	if a, ok := n.Attr().(*opdef.FusedAttr); ok {
		p.domain, p.ops, p.reduce = a.Domain, a.Ops, a.Reduce
	} else {
		args := make([]int, len(n.Inputs()))
		for i := range args {
			args[i] = -i - 1
		}
		p.domain = n.Shape()
		p.ops = []opdef.FusedOp{{Op: n.Op(), Attr: n.Attr(), Args: args, DType: n.DType()}}
	}
	for _, in := range p.ins {
		if cType(in.DType()) == "" {
			return nil, fmt.Errorf("operand dtype %v", in.DType())
		}
	}
	if len(p.ops) == 0 {
		return nil, fmt.Errorf("empty program")
	}
	for i, o := range p.ops {
		args := make([]string, len(o.Args))
		dts := make([]tensor.DType, len(o.Args))
		for k, r := range o.Args {
			switch {
			case r < 0 && -r-1 < len(p.ins):
				dts[k] = p.ins[-r-1].DType()
			case r >= 0 && r < i:
				dts[k] = p.ops[r].DType
			default:
				return nil, fmt.Errorf("op %d: argument %d out of range", i, r)
			}
			args[k] = "x"
		}
		if _, err := opExpr(o, dts, args); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// outDType is the dtype of the program's value.
func (p *program) outDType() tensor.DType { return p.ops[len(p.ops)-1].DType }

// operandStrides returns each operand's broadcast strides over the domain.
func (p *program) operandStrides() [][]int64 {
	st := make([][]int64, len(p.ins))
	for k, in := range p.ins {
		st[k] = broadcastStrides(in.Shape(), p.domain)
	}
	return st
}

// used reports which operands the program reads.
func (p *program) used() []bool {
	u := make([]bool, len(p.ins))
	for _, o := range p.ops {
		for _, r := range o.Args {
			if r < 0 {
				u[-r-1] = true
			}
		}
	}
	return u
}

// emitOps writes the program's ops as statements t0, t1, ... reading the
// operands from variables a0, a1, ... and returns the variable that holds
// the value.
func (p *program) emitOps(c *code) string {
	for i, o := range p.ops {
		args := make([]string, len(o.Args))
		dts := make([]tensor.DType, len(o.Args))
		for k, r := range o.Args {
			if r < 0 {
				args[k] = fmt.Sprintf("a%d", -r-1)
				dts[k] = p.ins[-r-1].DType()
			} else {
				args[k] = fmt.Sprintf("t%d", r)
				dts[k] = p.ops[r].DType
			}
		}
		e, _ := opExpr(o, dts, args)
		c.line("const %s t%d = %s;", cType(o.DType), i, e)
	}
	return fmt.Sprintf("t%d", len(p.ops)-1)
}

// inParams returns the operands' parameters: "const T0* __restrict__
// in0, const T1* __restrict__ in1, " (with the trailing separator).
func inParams(ins []*graph.Node) string {
	s := ""
	for k, in := range ins {
		s += fmt.Sprintf("const %s* __restrict__ in%d, ", cType(in.DType()), k)
	}
	return s
}

// program generates an elementwise or fused kernel for node n.
func (g *gen) program(p *program, n *graph.Node) error {
	if p.reduce != nil {
		return g.fusedReduction(p, n)
	}
	size := int64(p.domain.Size())
	if size == 0 {
		return nil
	}
	used := p.used()
	strides := p.operandStrides()
	// Operands: full (the domain's shape: index i), scalar (one element:
	// read once) or broadcast (offset from the multi-index).
	full := make([]bool, len(p.ins))
	scalar := make([]bool, len(p.ins))
	var bcast []int
	for k, in := range p.ins {
		switch {
		case !used[k]:
		case sameElems(in.Shape(), p.domain):
			full[k] = true
		case in.Shape().Size() == 1:
			scalar[k] = true
		default:
			bcast = append(bcast, k)
		}
	}
	var c code
	for k, in := range p.ins {
		if scalar[k] {
			c.line("const %s a%d = in%d[0];", cType(in.DType()), k, k)
		}
	}
	c.gridStride("i", size)
	if len(bcast) > 0 {
		st := make([][]int64, len(bcast))
		for j, k := range bcast {
			st[j] = strides[k]
		}
		dims := coalesce(p.domain, st, nil)
		idx := c.decompose("i", "d", dims)
		for j, k := range bcast {
			c.line("const %s a%d = in%d[%s];", cType(p.ins[k].DType()), k, k, dot(idx, dims, j))
		}
	}
	for k, in := range p.ins {
		if full[k] {
			c.line("const %s a%d = in%d[i];", cType(in.DType()), k, k)
		}
	}
	v := p.emitOps(&c)
	c.line("out[i] = %s;", v)
	c.line("}")
	params := inParams(p.ins) + cType(p.outDType()) + "* __restrict__ out"
	prefix := "ew"
	if _, ok := n.Attr().(*opdef.FusedAttr); ok {
		prefix = "fused"
	}
	fn := g.function(prefix, params, c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, append(inArgs(len(p.ins)), Arg{Kind: Out})...)
	return nil
}

// sameElems reports whether an operand of shape s read over domain is
// read contiguously: s equals the domain after dropping size-1 leading
// dimensions (so element i of the domain is element i of the operand).
func sameElems(s, domain tensor.Shape) bool {
	if s.Size() != domain.Size() {
		return false
	}
	off := len(domain) - len(s)
	if off < 0 {
		return false
	}
	for _, d := range domain[:off] {
		if d != 1 {
			return false
		}
	}
	for i := range s {
		if s[i] != domain[off+i] {
			return false
		}
	}
	return true
}
