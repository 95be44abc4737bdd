package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
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
// that every op has an expression for its dtypes.
func programOf(n *graph.Node) (*program, error) {
	p := &program{ins: n.Inputs()}
	if a, ok := n.Attr().(*opdef.FusedAttr); ok && n.Op() == opdef.OpFused {
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
	if n.Op() == opdef.OpFused {
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

// opExpr returns the C expression of one elementwise op applied to the
// argument expressions args of dtypes dts, or an error when there is none.
func opExpr(o opdef.FusedOp, dts []tensor.DType, args []string) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("no expression for %v of %v", o.Op, dts)
	}
	if len(dts) != len(args) {
		return bad()
	}
	dt := o.DType
	isF := dt == tensor.Float32 || dt == tensor.Float64
	isI := dt == tensor.Int32 || dt == tensor.Int64
	sfx := map[tensor.DType]string{tensor.Float32: "f32", tensor.Float64: "f64", tensor.Int32: "i32", tensor.Int64: "i64"}[dt]
	same := func(n int, want tensor.DType) bool {
		if len(dts) != n {
			return false
		}
		for _, d := range dts {
			if d != want {
				return false
			}
		}
		return true
	}
	fn := func(f32, f64 string) string {
		if dt == tensor.Float32 {
			return f32
		}
		return f64
	}
	switch o.Op {
	case ops.OpAdd, ops.OpSub, ops.OpMul:
		if !same(2, dt) || !(isF || isI) {
			return bad()
		}
		sym := map[graph.Op]string{ops.OpAdd: "+", ops.OpSub: "-", ops.OpMul: "*"}[o.Op]
		name := map[graph.Op]string{ops.OpAdd: "add", ops.OpSub: "sub", ops.OpMul: "mul"}[o.Op]
		if isF {
			return args[0] + " " + sym + " " + args[1], nil
		}
		return fmt.Sprintf("loom_%s_%s(%s, %s)", name, sfx, args[0], args[1]), nil
	case ops.OpDiv:
		if !same(2, dt) || !(isF || isI) {
			return bad()
		}
		if isF {
			return args[0] + " / " + args[1], nil
		}
		return fmt.Sprintf("loom_div_%s(%s, %s)", sfx, args[0], args[1]), nil
	case ops.OpPow:
		if !same(2, dt) || !(isF || isI) {
			return bad()
		}
		switch dt {
		case tensor.Float32:
			// In double and rounded once, as the CPU (math.Pow) does.
			return fmt.Sprintf("(float)pow((double)%s, (double)%s)", args[0], args[1]), nil
		case tensor.Float64:
			return fmt.Sprintf("pow(%s, %s)", args[0], args[1]), nil
		}
		return fmt.Sprintf("loom_pow_%s(%s, %s)", sfx, args[0], args[1]), nil
	case ops.OpMaximum, ops.OpMinimum:
		if !same(2, dt) || !(isF || isI) {
			return bad()
		}
		name := "max"
		cmp := ">"
		if o.Op == ops.OpMinimum {
			name, cmp = "min", "<"
		}
		if isF {
			return fmt.Sprintf("loom_%s_%s(%s, %s)", name, sfx, args[0], args[1]), nil
		}
		return fmt.Sprintf("(%s %s %s ? %s : %s)", args[0], cmp, args[1], args[0], args[1]), nil
	case ops.OpEqual, ops.OpNotEqual, ops.OpLess, ops.OpLessEqual, ops.OpGreater, ops.OpGreaterEqual:
		if dt != tensor.Bool || len(dts) != 2 || dts[0] != dts[1] || dts[0].IsStorage() {
			return bad()
		}
		if dts[0] == tensor.Bool && o.Op != ops.OpEqual && o.Op != ops.OpNotEqual {
			return bad()
		}
		sym := map[graph.Op]string{ops.OpEqual: "==", ops.OpNotEqual: "!=", ops.OpLess: "<", ops.OpLessEqual: "<=", ops.OpGreater: ">", ops.OpGreaterEqual: ">="}[o.Op]
		return fmt.Sprintf("(unsigned char)(%s %s %s)", args[0], sym, args[1]), nil
	case ops.OpAnd, ops.OpOr:
		if !same(2, tensor.Bool) || dt != tensor.Bool {
			return bad()
		}
		sym := "&"
		if o.Op == ops.OpOr {
			sym = "|"
		}
		return fmt.Sprintf("(unsigned char)(%s %s %s)", args[0], sym, args[1]), nil
	case ops.OpNot:
		if !same(1, tensor.Bool) || dt != tensor.Bool {
			return bad()
		}
		return fmt.Sprintf("(unsigned char)(%s ^ 1)", args[0]), nil
	case ops.OpNeg, ops.OpAbs, ops.OpSign, ops.OpRelu:
		if !same(1, dt) || !(isF || isI) {
			return bad()
		}
		x := args[0]
		switch {
		case o.Op == ops.OpNeg && isF:
			return "-" + x, nil
		case o.Op == ops.OpNeg:
			return fmt.Sprintf("loom_neg_%s(%s)", sfx, x), nil
		case o.Op == ops.OpAbs && isF:
			return fmt.Sprintf("%s(%s)", fn("fabsf", "fabs"), x), nil
		case o.Op == ops.OpAbs:
			return fmt.Sprintf("loom_abs_%s(%s)", sfx, x), nil
		case o.Op == ops.OpSign && isF:
			return fmt.Sprintf("loom_sign_%s(%s)", sfx, x), nil
		case o.Op == ops.OpSign:
			return fmt.Sprintf("(%s)((%s > 0) - (%s < 0))", cType(dt), x, x), nil
		case isF: // Relu
			return fmt.Sprintf("loom_relu_%s(%s)", sfx, x), nil
		}
		return fmt.Sprintf("(%s > 0 ? %s : %s)", x, x, zeroOf(cType(dt))), nil
	case ops.OpExp, ops.OpLog, ops.OpSqrt, ops.OpTanh, ops.OpSin, ops.OpCos, ops.OpSigmoid:
		if !same(1, dt) || !isF {
			return bad()
		}
		if o.Op == ops.OpSigmoid {
			return fmt.Sprintf("loom_sigmoid_%s(%s)", sfx, args[0]), nil
		}
		base := map[graph.Op]string{ops.OpExp: "exp", ops.OpLog: "log", ops.OpSqrt: "sqrt", ops.OpTanh: "tanh", ops.OpSin: "sin", ops.OpCos: "cos"}[o.Op]
		return fmt.Sprintf("%s(%s)", fn(base+"f", base), args[0]), nil
	case ops.OpWhere:
		if len(dts) != 3 || dts[0] != tensor.Bool || dts[1] != dt || dts[2] != dt || cType(dt) == "" {
			return bad()
		}
		return fmt.Sprintf("(%s != 0 ? %s : %s)", args[0], args[1], args[2]), nil
	case ops.OpStopGradient:
		if !same(1, dt) || cType(dt) == "" {
			return bad()
		}
		return args[0], nil
	case ops.OpCast:
		if len(dts) != 1 || cType(dts[0]) == "" || cType(dt) == "" {
			return bad()
		}
		return castExpr(dts[0], dt, args[0]), nil
	}
	return bad()
}

// castExpr converts x from dtype from to dtype to as the CPU's Cast does:
// float to integer truncates and saturates (NaN gives 0), anything to
// Bool is x != 0, and the storage types go through float32.
func castExpr(from, to tensor.DType, x string) string {
	if from == to {
		return x
	}
	if from.IsStorage() || to.IsStorage() {
		var f string
		switch from {
		case tensor.Float16:
			f = "loom_f16_to_f32(" + x + ")"
		case tensor.BFloat16:
			f = "loom_bf16_to_f32(" + x + ")"
		case tensor.Float32:
			f = x
		default:
			f = "(float)" + x
		}
		switch to {
		case tensor.Float16:
			return "loom_f32_to_f16(" + f + ")"
		case tensor.BFloat16:
			return "loom_f32_to_bf16(" + f + ")"
		case tensor.Bool:
			return "(unsigned char)(" + f + " != 0.0f)"
		case tensor.Int32:
			return "loom_d2i32((double)" + f + ")"
		case tensor.Int64:
			return "loom_d2i64((double)" + f + ")"
		case tensor.Float32:
			return f
		case tensor.Float64:
			return "(double)" + f
		}
	}
	switch {
	case to == tensor.Bool:
		return "(unsigned char)(" + x + " != 0)"
	case from.IsFloat() && to == tensor.Int32:
		return "loom_d2i32((double)" + x + ")"
	case from.IsFloat() && to == tensor.Int64:
		return "loom_d2i64((double)" + x + ")"
	}
	return "(" + cType(to) + ")" + x
}
