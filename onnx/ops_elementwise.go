package onnx

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The elementwise operators. Binary operators broadcast multidirectionally
// as NumPy (ONNX "Broadcasting in ONNX", docs/Broadcasting.md), which is
// loom's rule; before opset 7 they broadcast only B to A's shape, when the
// "broadcast" attribute is 1, with "axis" placing B's dimensions within A's
// (legacyBroadcast).

func unary(f func(x *graph.Node) *graph.Node) opDef {
	return opDef{fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{f(x)}, nil
	}}
}

func unaryA(attrs []string, f func(n *onode, x *graph.Node) (*graph.Node, error)) opDef {
	return opDef{attrs: attrs, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		y, err := f(n, x)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{y}, nil
	}}
}

func binaryOp(f func(a, b *graph.Node) *graph.Node) opDef {
	return opDef{attrs: legacyBroadcastAttrs, fn: func(n *onode) ([]*graph.Node, error) {
		a, err := n.need(0)
		if err != nil {
			return nil, err
		}
		b, err := n.need(1)
		if err != nil {
			return nil, err
		}
		if a.DType() != b.DType() {
			return nil, fmt.Errorf("operands are %s and %s: ONNX requires one type", a.DType(), b.DType())
		}
		if b, err = legacyBroadcast(n, a, b); err != nil {
			return nil, err
		}
		return []*graph.Node{f(a, b)}, nil
	}}
}

// legacyBroadcastAttrs are the binary operators' attributes before opset 7
// (consumed_inputs, opset 1's in-place hint, changes no value).
var legacyBroadcastAttrs = []string{"broadcast", "axis", "consumed_inputs"}

// legacyBroadcast applies the binary operators' broadcasting before opset 7
// (Operators.md's Add-1 and Add-6, and the same for the others): without
// "broadcast" (or 0) A and B have one shape; with broadcast 1, B's shape
// is a contiguous run of A's dimensions (each equal, or 1) starting at
// "axis" (default: aligned at the end, so a scalar or a 1-element B is a
// scalar), and B is reshaped so that NumPy broadcasting gives A's shape.
// From opset 7 on, the attributes do not exist and B is returned as it is.
func legacyBroadcast(n *onode, a, b *graph.Node) (*graph.Node, error) {
	if n.opset() >= 7 {
		for _, at := range legacyBroadcastAttrs {
			if n.hasAttr(at) {
				return nil, fmt.Errorf("%w: attribute %q (removed in opset 7)", ErrUnsupported, at)
			}
		}
		return b, nil
	}
	as, bs := a.Shape(), b.Shape()
	if n.attrInt("broadcast", 0) == 0 {
		if n.hasAttr("axis") {
			return nil, fmt.Errorf("attribute axis without broadcast=1")
		}
		if !as.Equal(bs) {
			return nil, fmt.Errorf("shapes %v and %v differ and broadcast is 0 (opset %d broadcasts only with broadcast=1)", as, bs, n.opset())
		}
		return b, nil
	}
	if bs.Size() == 1 {
		return ops.Reshape(b), nil // a scalar
	}
	axis := as.Rank() - bs.Rank()
	if n.hasAttr("axis") {
		var err error
		if axis, err = n.axis(n.attrInt("axis", 0), as.Rank()); err != nil {
			return nil, err
		}
	}
	if axis < 0 || axis+bs.Rank() > as.Rank() {
		return nil, fmt.Errorf("B %v does not fit A %v at axis %d", bs, as, axis)
	}
	shape := make([]int, as.Rank())
	for i := range shape {
		shape[i] = 1
		if j := i - axis; j >= 0 && j < bs.Rank() {
			if bs[j] != as[i] && bs[j] != 1 {
				return nil, fmt.Errorf("B %v does not broadcast to A %v at axis %d (dimension %d is %d, A's %d)", bs, as, axis, j, bs[j], as[i])
			}
			shape[i] = bs[j]
		}
	}
	return ops.Reshape(b, shape...), nil
}

// variadic folds f over every input (Sum, Max, Min, Mean).
func variadic(f func(a, b *graph.Node) *graph.Node, mean bool) opDef {
	return opDef{fn: func(n *onode) ([]*graph.Node, error) {
		xs := n.ins()
		if len(xs) == 0 {
			return nil, fmt.Errorf("at least one input is required")
		}
		y := xs[0]
		for _, x := range xs[1:] {
			y = f(y, x)
		}
		if len(xs) == 1 {
			_ = y
		}
		if mean && len(xs) > 1 {
			y = ops.Div(y, scalarLike(y, float64(len(xs))))
		}
		return []*graph.Node{y}, nil
	}}
}

func init() {
	for name, f := range map[string]func(*graph.Node) *graph.Node{
		"Abs": ops.Abs, "Acos": ops.Acos, "Acosh": ops.Acosh, "Asin": ops.Asin, "Asinh": ops.Asinh,
		"Atan": ops.Atan, "Atanh": ops.Atanh, "Ceil": ops.Ceil, "Cos": ops.Cos, "Cosh": ops.Cosh,
		"Erf": ops.Erf, "Exp": ops.Exp, "Floor": ops.Floor, "Log": ops.Log, "Neg": ops.Neg,
		"Reciprocal": ops.Reciprocal, "Relu": ops.Relu, "Round": ops.Round, "Sigmoid": ops.Sigmoid,
		"Sign": ops.Sign, "Sin": ops.Sin, "Sinh": ops.Sinh, "Sqrt": ops.Sqrt, "Tan": ops.Tan,
		"Tanh": ops.Tanh, "Softplus": ops.Softplus, "IsNaN": ops.IsNaN, "Not": ops.Not,
		"Identity": func(x *graph.Node) *graph.Node { return x },
		"Softsign": func(x *graph.Node) *graph.Node {
			return ops.Div(x, ops.Add(scalarLike(x, 1), ops.Abs(x)))
		},
		"HardSwish": func(x *graph.Node) *graph.Node { // x * max(0, min(1, x/6 + 1/2))
			h := ops.Add(ops.Mul(x, scalarLike(x, 1.0/6)), scalarLike(x, 0.5))
			return ops.Mul(x, ops.Clip(h, scalarLike(x, 0), scalarLike(x, 1)))
		},
		"Mish": func(x *graph.Node) *graph.Node { return ops.Mul(x, ops.Tanh(ops.Softplus(x))) },
	} {
		d := unary(f)
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	for name, f := range map[string]func(a, b *graph.Node) *graph.Node{
		"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": onnxDiv,
		"Equal": ops.Equal, "Less": ops.Less, "LessOrEqual": ops.LessEqual, "Greater": ops.Greater,
		"GreaterOrEqual": ops.GreaterEqual, "And": ops.And, "Or": ops.Or, "Xor": ops.Xor,
	} {
		d := binaryOp(f)
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg := func(name string, d opDef) {
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg("Sum", variadic(ops.Add, false))
	reg("Mean", variadic(ops.Add, true))
	reg("Max", variadic(ops.Maximum, false))
	reg("Min", variadic(ops.Minimum, false))
	reg("Pow", opDef{attrs: legacyBroadcastAttrs, fn: func(n *onode) ([]*graph.Node, error) {
		a, err := n.need(0)
		if err != nil {
			return nil, err
		}
		b, err := n.need(1)
		if err != nil {
			return nil, err
		}
		if b, err = legacyBroadcast(n, a, b); err != nil {
			return nil, err
		}
		// Pow-12 lets the exponent's type differ: the result has the base's.
		if b.DType() != a.DType() {
			b = ops.Cast(b, a.DType())
		}
		return []*graph.Node{ops.Pow(a, b)}, nil
	}})
	reg("Mod", opDef{attrs: []string{"fmod"}, fn: func(n *onode) ([]*graph.Node, error) {
		a, b := n.in(0), n.in(1)
		if a == nil || b == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		fm := n.attrInt("fmod", 0)
		if fm == 0 && a.DType().IsFloat() {
			return nil, fmt.Errorf("fmod=0 on %s: the spec requires fmod=1 for floats", a.DType())
		}
		if fm == 1 {
			return []*graph.Node{ops.Fmod(a, b)}, nil
		}
		return []*graph.Node{ops.Remainder(a, b)}, nil
	}})
	reg("BitShift", opDef{attrs: []string{"direction"}, fn: func(n *onode) ([]*graph.Node, error) {
		a, b := n.in(0), n.in(1)
		if a == nil || b == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		switch n.attrString("direction", "") {
		case "LEFT":
			return []*graph.Node{ops.LeftShift(a, b)}, nil
		case "RIGHT":
			return []*graph.Node{ops.RightShift(a, b)}, nil
		}
		return nil, fmt.Errorf("direction %q: want LEFT or RIGHT", n.attrString("direction", ""))
	}})
	reg("Where", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		c, a, b := n.in(0), n.in(1), n.in(2)
		if c == nil || a == nil || b == nil {
			return nil, fmt.Errorf("three inputs are required")
		}
		return []*graph.Node{ops.Where(c, a, b)}, nil
	}})
	reg("PRelu", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		x, s := n.in(0), n.in(1)
		if x == nil || s == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		// slope broadcasts unidirectionally to x; before opset 7 a 1-D
		// slope of x's channel count applies along axis 1.
		if n.opset() < 7 && s.Rank() == 1 && x.Rank() >= 2 && s.Shape()[0] == x.Shape()[1] && s.Shape()[0] != 1 {
			shape := make([]int, x.Rank()-1)
			for i := range shape {
				shape[i] = 1
			}
			shape[0] = s.Shape()[0]
			s = ops.Reshape(s, shape...)
		}
		return []*graph.Node{ops.Where(ops.Less(x, scalarLike(x, 0)), ops.Mul(x, s), x)}, nil
	}})
	reg("IsInf", unaryA([]string{"detect_negative", "detect_positive"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		neg, pos := n.attrInt("detect_negative", 1), n.attrInt("detect_positive", 1)
		switch {
		case neg != 0 && pos != 0:
			return ops.IsInf(x), nil
		case neg != 0:
			return ops.And(ops.IsInf(x), ops.Less(x, scalarLike(x, 0))), nil
		case pos != 0:
			return ops.And(ops.IsInf(x), ops.Greater(x, scalarLike(x, 0))), nil
		}
		return ops.Less(x, x), nil // all false (NaN too)
	}))
	reg("LeakyRelu", unaryA([]string{"alpha"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		return ops.LeakyRelu(x, n.attrFloat("alpha", 0.01)), nil
	}))
	reg("Elu", unaryA([]string{"alpha"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		return ops.Elu(x, n.attrFloat("alpha", 1)), nil
	}))
	reg("Celu", unaryA([]string{"alpha"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		// max(0,x) + min(0, alpha*(exp(x/alpha)-1))
		a := n.attrFloat("alpha", 1)
		e := ops.Mul(scalarLike(x, a), ops.Expm1(ops.Div(x, scalarLike(x, a))))
		return ops.Add(ops.Maximum(x, scalarLike(x, 0)), ops.Minimum(e, scalarLike(x, 0))), nil
	}))
	reg("Selu", unaryA([]string{"alpha", "gamma"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		a := n.attrFloat("alpha", 1.67326319217681884765625)
		gm := n.attrFloat("gamma", 1.05070102214813232421875)
		neg := ops.Mul(scalarLike(x, a), ops.Expm1(x))
		return ops.Mul(scalarLike(x, gm), ops.Where(ops.Greater(x, scalarLike(x, 0)), x, neg)), nil
	}))
	reg("ThresholdedRelu", unaryA([]string{"alpha"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		a := n.attrFloat("alpha", 1)
		return ops.Where(ops.Greater(x, scalarLike(x, a)), x, scalarLike(x, 0)), nil
	}))
	reg("HardSigmoid", unaryA([]string{"alpha", "beta"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		a, b := n.attrFloat("alpha", 0.2), n.attrFloat("beta", 0.5)
		y := ops.Add(ops.Mul(x, scalarLike(x, a)), scalarLike(x, b))
		return ops.Clip(y, scalarLike(x, 0), scalarLike(x, 1)), nil
	}))
	reg("Shrink", unaryA([]string{"bias", "lambd"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		b, l := n.attrFloat("bias", 0), n.attrFloat("lambd", 0.5)
		if x.DType().IsInt() {
			// The constants are floats in the spec; on integers they act as
			// in the reference (x < -lambd: x + bias).
			b, l = math.Trunc(b), math.Trunc(l)
		}
		lo := ops.Add(x, scalarLike(x, b))
		hi := ops.Sub(x, scalarLike(x, b))
		zero := scalarLike(x, 0)
		return ops.Where(ops.Less(x, scalarLike(x, -l)), lo, ops.Where(ops.Greater(x, scalarLike(x, l)), hi, zero)), nil
	}))
	reg("Clip", opDef{attrs: []string{"min", "max"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		y := x
		if n.opset() < 11 {
			if n.hasAttr("min") {
				y = ops.Maximum(y, scalarLike(x, n.attrFloat("min", 0)))
			}
			if n.hasAttr("max") {
				y = ops.Minimum(y, scalarLike(x, n.attrFloat("max", 0)))
			}
		} else {
			if lo := n.in(1); lo != nil {
				y = ops.Maximum(y, lo)
			}
			if hi := n.in(2); hi != nil {
				y = ops.Minimum(y, hi)
			}
		}
		if y == x {
			y = x
		}
		return []*graph.Node{y}, nil
	}})
	castDef := unaryA([]string{"to"}, func(n *onode, x *graph.Node) (*graph.Node, error) {
		dt, err := loomDType(int32(n.attrInt("to", 0)))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
		}
		return ops.Cast(x, dt), nil
	})
	castDef.storageOK = true
	reg("Cast", castDef)
	reg("CastLike", opDef{storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, like := n.in(0), n.in(1)
		if x == nil || like == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		return []*graph.Node{ops.Cast(x, like.DType())}, nil
	}})
}

// onnxDiv is ONNX's Div: for integers it truncates toward zero (C's
// division), where loom's Div floors as Python's //: (a - fmod(a, b)) / b
// is an exact multiple, so flooring it truncates.
func onnxDiv(a, b *graph.Node) *graph.Node {
	if a.DType().IsInt() || a.DType() == tensor.Uint8 {
		return ops.Div(ops.Sub(a, ops.Fmod(a, b)), b)
	}
	return ops.Div(a, b)
}
