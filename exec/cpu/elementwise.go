package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// grainElems is the smallest number of elements worth a goroutine for
// cheap elementwise work (a few microseconds at memory speed).
const grainElems = 1 << 15

// bcast describes an elementwise iteration over the output in row-major
// order with NumPy broadcasting. Dimensions are coalesced: adjacent
// dimensions merge when every operand steps through them contiguously (or
// not at all), so a same-shape op becomes one flat run and a row-vector
// broadcast becomes rows.
type bcast struct {
	dims    []int   // coalesced output dims, at least one
	strides [][]int // per operand, per dim, in elements (0 = broadcast)
	n       int     // output elements
	inner   int     // dims[len(dims)-1]
	vec     []int   // per operand: stride along the inner dim (0 or 1)
}

func newBcast(out tensor.Shape, ins []tensor.Shape) *bcast {
	var dims []int
	strides := make([][]int, len(ins))
	for i, d := range out {
		if d == 1 {
			continue
		}
		dims = append(dims, d)
		for k, s := range ins {
			off := len(out) - len(s)
			st := 0
			if j := i - off; j >= 0 && s[j] == d {
				st = 1
				for _, e := range s[j+1:] {
					st *= e
				}
			}
			strides[k] = append(strides[k], st)
		}
	}
	if len(dims) == 0 {
		dims = []int{1}
		for k := range strides {
			strides[k] = []int{1}
		}
	}
	// Coalesce from the inside out.
	for i := len(dims) - 2; i >= 0; i-- {
		ok := true
		for k := range strides {
			if strides[k][i] != strides[k][i+1]*dims[i+1] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		dims[i] *= dims[i+1]
		dims = append(dims[:i+1], dims[i+2:]...)
		for k := range strides {
			strides[k][i] = strides[k][i+1]
			strides[k] = append(strides[k][:i+1], strides[k][i+2:]...)
		}
	}
	b := &bcast{dims: dims, strides: strides, n: out.Size(), inner: dims[len(dims)-1], vec: make([]int, len(ins))}
	for k := range strides {
		b.vec[k] = strides[k][len(dims)-1]
		if b.inner == 1 {
			b.vec[k] = 1
		}
	}
	return b
}

// offsets computes each operand's element offset at output position p.
func (b *bcast) offsets(p int, offs []int) {
	outer, j := p/b.inner, p%b.inner
	for k := range offs {
		offs[k] = j * b.strides[k][len(b.dims)-1]
	}
	for d := len(b.dims) - 2; d >= 0 && outer > 0; d-- {
		idx := outer % b.dims[d]
		outer /= b.dims[d]
		for k := range offs {
			offs[k] += idx * b.strides[k][d]
		}
	}
}

// walk calls fn for each run of output positions in [lo,hi) that lies
// within one inner row: fn(p, length, offs), offs[k] being operand k's
// offset at p. offs must have one entry per operand.
func (b *bcast) walk(lo, hi int, offs []int, fn func(p, length int, offs []int)) {
	for p := lo; p < hi; {
		b.offsets(p, offs)
		run := b.inner - p%b.inner
		if run > hi-p {
			run = hi - p
		}
		fn(p, run, offs)
		p += run
	}
}

func init() {
	for _, op := range []graph.Op{ops.OpAdd, ops.OpSub, ops.OpMul, ops.OpDiv, ops.OpPow, ops.OpMaximum, ops.OpMinimum} {
		kernels[op] = prepareArith
	}
	for _, op := range []graph.Op{ops.OpEqual, ops.OpNotEqual, ops.OpLess, ops.OpLessEqual, ops.OpGreater, ops.OpGreaterEqual} {
		kernels[op] = prepareCompare
	}
	kernels[ops.OpAnd] = prepareLogic
	kernels[ops.OpOr] = prepareLogic
	kernels[ops.OpNot] = prepareUnary
	for _, op := range []graph.Op{ops.OpNeg, ops.OpAbs, ops.OpSign, ops.OpExp, ops.OpLog, ops.OpSqrt, ops.OpTanh, ops.OpSigmoid, ops.OpRelu, ops.OpSin, ops.OpCos} {
		kernels[op] = prepareUnary
	}
	kernels[ops.OpWhere] = prepareWhere
	kernels[ops.OpStopGradient] = prepareCopy
}

func shapesOf(ns []*graph.Node) []tensor.Shape {
	out := make([]tensor.Shape, len(ns))
	for i, n := range ns {
		out[i] = n.Shape()
	}
	return out
}

func prepareArith(n *graph.Node) (*kernel, error) {
	bc := newBcast(n.Shape(), shapesOf(n.Inputs()))
	switch n.DType() {
	case tensor.Float32:
		return arith[float32](n.Op(), bc)
	case tensor.Float64:
		return arith[float64](n.Op(), bc)
	case tensor.Int32:
		return arith[int32](n.Op(), bc)
	case tensor.Int64:
		return arith[int64](n.Op(), bc)
	}
	return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.DType())
}

func arith[T num](op graph.Op, bc *bcast) (*kernel, error) {
	vv, vs, sv, ok := binaryOps[T](op)
	if !ok {
		return nil, fmt.Errorf("%s is not arithmetic", op)
	}
	return &kernel{bind: func(a *args) func() {
		offsets := make([][2]int, a.Threads())
		l := a.Loop(func(lo, hi, part int) {
			x, y, d := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			bc.walk(lo, hi, offsets[part][:], func(p, m int, o []int) {
				switch {
				case bc.vec[0] == 1 && bc.vec[1] == 1:
					vv(d[p:p+m], x[o[0]:], y[o[1]:])
				case bc.vec[0] == 1:
					vs(d[p:p+m], x[o[0]:], y[o[1]])
				default:
					sv(d[p:p+m], x[o[0]], y[o[1]:])
				}
			})
		})
		return func() { l.Run(bc.n, grainElems, stepElems) }
	}}, nil
}

func prepareCompare(n *graph.Node) (*kernel, error) {
	bc := newBcast(n.Shape(), shapesOf(n.Inputs()))
	switch n.Input(0).DType() {
	case tensor.Float32:
		return compare[float32](n.Op(), bc), nil
	case tensor.Float64:
		return compare[float64](n.Op(), bc), nil
	case tensor.Int32:
		return compare[int32](n.Op(), bc), nil
	case tensor.Int64:
		return compare[int64](n.Op(), bc), nil
	case tensor.Bool:
		return compare[uint8](n.Op(), bc), nil
	}
	return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.Input(0).DType())
}

func compare[T ordered](op graph.Op, bc *bcast) *kernel {
	f := compareRun[T](op)
	return &kernel{bind: func(a *args) func() {
		offsets := make([][2]int, a.Threads())
		l := a.Loop(func(lo, hi, part int) {
			x, y, d := as[T](a.In(0)), as[T](a.In(1)), a.Out()
			bc.walk(lo, hi, offsets[part][:], func(p, m int, o []int) {
				f(d[p:p+m], x[o[0]:], bc.vec[0], y[o[1]:], bc.vec[1])
			})
		})
		return func() { l.Run(bc.n, grainElems, stepElems) }
	}}
}

func prepareLogic(n *graph.Node) (*kernel, error) {
	bc := newBcast(n.Shape(), shapesOf(n.Inputs()))
	and := n.Op() == ops.OpAnd
	return &kernel{bind: func(a *args) func() {
		offsets := make([][2]int, a.Threads())
		l := a.Loop(func(lo, hi, part int) {
			x, y, d := a.In(0), a.In(1), a.Out()
			bc.walk(lo, hi, offsets[part][:], func(p, m int, o []int) {
				xs, ys := bc.vec[0], bc.vec[1]
				for i := 0; i < m; i++ {
					u, v := x[o[0]+i*xs], y[o[1]+i*ys]
					if and {
						d[p+i] = u & v
					} else {
						d[p+i] = u | v
					}
				}
			})
		})
		return func() { l.Run(bc.n, grainElems, stepElems) }
	}}, nil
}

func prepareUnary(n *graph.Node) (*kernel, error) {
	switch n.DType() {
	case tensor.Float32:
		return unary(unaryFloat[float32](n.Op()), n)
	case tensor.Float64:
		return unary(unaryFloat[float64](n.Op()), n)
	case tensor.Int32:
		return unary(unaryInt[int32](n.Op()), n)
	case tensor.Int64:
		return unary(unaryInt[int64](n.Op()), n)
	case tensor.Bool:
		if n.Op() == ops.OpNot {
			return unary(func(d, a []uint8) {
				a = a[:len(d)]
				for i := range d {
					d[i] = a[i] ^ 1
				}
			}, n)
		}
	}
	return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.DType())
}

func unary[T any](f func(d, a []T), n *graph.Node) (*kernel, error) {
	if f == nil {
		return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.DType())
	}
	size := n.Shape().Size()
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			f(as[T](a.Out())[lo:hi], as[T](a.In(0))[lo:hi])
		})
		return func() { l.Run(size, grainElems, stepElems) }
	}}, nil
}

func prepareWhere(n *graph.Node) (*kernel, error) {
	bc := newBcast(n.Shape(), shapesOf(n.Inputs()))
	switch n.DType().Size() {
	case 1:
		return where[uint8](bc), nil
	case 2:
		return where[uint16](bc), nil
	case 4:
		return where[uint32](bc), nil
	case 8:
		return where[uint64](bc), nil
	}
	return nil, fmt.Errorf("no Where kernel for %v", n.DType())
}

func where[T uint8 | uint16 | uint32 | uint64](bc *bcast) *kernel {
	return &kernel{bind: func(a *args) func() {
		offsets := make([][3]int, a.Threads())
		l := a.Loop(func(lo, hi, part int) {
			c, x, y, d := a.In(0), as[T](a.In(1)), as[T](a.In(2)), as[T](a.Out())
			cs, xs, ys := bc.vec[0], bc.vec[1], bc.vec[2]
			bc.walk(lo, hi, offsets[part][:], func(p, m int, o []int) {
				selectRun(d[p:p+m], c[o[0]:], cs, x[o[1]:], xs, y[o[2]:], ys)
			})
		})
		return func() { l.Run(bc.n, grainElems, stepElems) }
	}}
}

func prepareCopy(n *graph.Node) (*kernel, error) {
	return &kernel{bind: copyLoop}, nil
}
