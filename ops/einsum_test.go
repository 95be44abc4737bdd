package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// einsumRef is a brute-force float64 Einstein sum for an explicit
// equation of letters only: every assignment of every letter, the product
// of the operands' elements (a length-1 axis broadcast), added into the
// output element. It shares nothing with ops.Einsum's lowering.
func einsumRef(eq string, xs []*tensor.Tensor) ([]float64, []int) {
	lhs, out, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	size := map[byte]int{}
	var letters []byte
	for i, t := range terms {
		for a := 0; a < len(t); a++ {
			if _, ok := size[t[a]]; !ok {
				letters = append(letters, t[a])
			}
			size[t[a]] = max(size[t[a]], xs[i].Shape()[a])
		}
	}
	outShape := make([]int, len(out))
	total := 1
	for k := range out {
		outShape[k] = size[out[k]]
		total *= outShape[k]
	}
	res := make([]float64, total)
	val := map[byte]int{}
	var walk func(n int)
	walk = func(n int) {
		if n < len(letters) {
			for v := 0; v < size[letters[n]]; v++ {
				val[letters[n]] = v
				walk(n + 1)
			}
			return
		}
		p := 1.0
		for i, t := range terms {
			off, stride := 0, 1
			for a := len(t) - 1; a >= 0; a-- {
				d := xs[i].Shape()[a]
				off += min(val[t[a]], d-1) * stride
				stride *= d
			}
			p *= xs[i].Float64(off)
		}
		o := 0
		for k := range out {
			o = o*outShape[k] + val[out[k]]
		}
		res[o] += p
	}
	walk(0)
	return res, outShape
}

type einsumCase struct {
	eq, ref string // ref: the same sum with letters only and "->", for einsumRef
	shapes  [][]int
}

var einsumCases = []einsumCase{
	{"ij,jk->ik", "", [][]int{{3, 4}, {4, 5}}},                                                        // matmul
	{"ij,jk", "ij,jk->ik", [][]int{{3, 4}, {4, 5}}},                                                   // implicit
	{"bij,bjk->bik", "", [][]int{{2, 3, 4}, {2, 4, 5}}},                                               // batch matmul
	{"ii->", "", [][]int{{4, 4}}},                                                                     // trace
	{"ii", "ii->", [][]int{{4, 4}}},                                                                   // implicit trace
	{"ii->i", "", [][]int{{4, 4}}},                                                                    // diagonal
	{"iii->i", "", [][]int{{3, 3, 3}}},                                                                // diagonal of three axes
	{"iij->ji", "", [][]int{{3, 3, 2}}},                                                               // diagonal, then transposed
	{"i,j->ij", "", [][]int{{3}, {4}}},                                                                // outer
	{"ij->ji", "", [][]int{{3, 4}}},                                                                   // transpose
	{"ji", "ji->ij", [][]int{{3, 4}}},                                                                 // implicit: the letters sorted
	{"ij->", "", [][]int{{3, 4}}},                                                                     // sum of all
	{"ij->j", "", [][]int{{3, 4}}},                                                                    // column sums
	{"ij,ij->", "", [][]int{{3, 4}, {3, 4}}},                                                          // Frobenius product
	{"i,i", "i,i->", [][]int{{5}, {5}}},                                                               // dot
	{"i,i,i->i", "", [][]int{{5}, {5}, {5}}},                                                          // Hadamard of three
	{"bn,anm,bm->ba", "", [][]int{{2, 3}, {4, 3, 5}, {2, 5}}},                                         // bilinear
	{"bhqd,bhkd->bhqk", "", [][]int{{2, 3, 4, 5}, {2, 3, 6, 5}}},                                      // attention scores
	{"bhqk,bhkd->bqhd", "", [][]int{{2, 3, 4, 6}, {2, 3, 6, 5}}},                                      // attention output, heads moved
	{"ij,jk,kl->il", "", [][]int{{2, 30}, {30, 3}, {3, 40}}},                                          // a chain (order by cost)
	{"ab,bc,cd,de->ae", "", [][]int{{3, 4}, {4, 5}, {5, 2}, {2, 6}}},                                  // four operands
	{"ab,cd,bd->ac", "", [][]int{{2, 3}, {4, 5}, {3, 5}}},                                             // no pair shares every label
	{"ij,kj->ik", "", [][]int{{3, 1}, {2, 4}}},                                                        // length 1 broadcast
	{"ijk,jl->ilk", "", [][]int{{2, 3, 4}, {3, 5}}},                                                   // contraction in the middle
	{"...ij,...jk->...ik", "bij,jk->bik", [][]int{{2, 3, 4}, {4, 5}}},                                 // ellipsis, broadcast
	{"...ii->...i", "bii->bi", [][]int{{2, 3, 3}}},                                                    // batched diagonal
	{"i...,i...", "iab,iab->ab", [][]int{{3, 2, 4}, {3, 2, 4}}},                                       // implicit ellipsis first
	{"...,...->...", "ab,b->ab", [][]int{{2, 3}, {3}}},                                                // elementwise, broadcast
	{"a...->a", "abc->a", [][]int{{3, 2, 4}}},                                                         // explicit output without "...": summed
	{",->", ",->", [][]int{{}, {}}},                                                                   // scalars
	{"i j , j k -> i k", "ij,jk->ik", [][]int{{2, 3}, {3, 2}}},                                        // spaces
	{"bij,bkj->", "", [][]int{{2, 0, 3}, {2, 4, 3}}},                                                  // an empty axis
	{"Ab,bA->A", "", [][]int{{3, 2}, {2, 3}}},                                                         // capitals
	{"ij,jk->ki", "", [][]int{{3, 4}, {4, 5}}},                                                        // transposed result
	{"abc,cd,db->a", "", [][]int{{2, 3, 4}, {4, 5}, {5, 3}}},                                          // a ring
	{"i,ij,j->", "", [][]int{{7}, {7, 6}, {6}}},                                                       // quadratic form
	{"ii,i->i", "", [][]int{{3, 3}, {3}}},                                                             // a diagonal times a vector
	{"ij,ij->ij", "", [][]int{{3, 4}, {3, 4}}},                                                        // Hadamard (nothing contracted)
	{"ij,ij,ij->", "", [][]int{{2, 3}, {2, 3}, {2, 3}}},                                               // a label in three operands
	{"i->i", "", [][]int{{4}}},                                                                        // identity
	{"ab,bc,cd,de,ef,fg,gh->ah", "", [][]int{{2, 3}, {3, 2}, {2, 3}, {3, 2}, {2, 3}, {3, 2}, {2, 3}}}, // seven: the greedy order
	{"ijk,kji->", "", [][]int{{1, 3, 2}, {2, 3, 4}}},                                                  // broadcast inside a contraction
}

// TestEinsumValues checks Einsum against einsumRef in float64, float32
// and int32 (operands: small integers for int32).
func TestEinsumValues(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for ci, c := range einsumCases {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Int32} {
			t.Run(fmt.Sprintf("%s/%v", c.eq, dt), func(t *testing.T) {
				g := graph.New()
				var ts []*tensor.Tensor
				for i, s := range c.shapes {
					lo, hi := -2.0, 2.0
					if dt == tensor.Int32 {
						lo, hi = -5, 6
					}
					ts = append(ts, exectest.Rand(dt, s, lo, hi, uint64(100*ci+i)))
				}
				ins, feeds := exectest.Inputs(g, ts...)
				y := ops.Einsum(c.eq, ins...)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				ref := c.ref
				if ref == "" {
					ref = c.eq
				}
				want, shape := einsumRef(ref, ts)
				got := runOn(t, be, []*graph.Node{y}, feeds)[0]
				if !got.Shape().Equal(shape) || got.DType() != dt {
					t.Fatalf("result %v, want %v", got.Type(), tensor.TypeString(dt, shape))
				}
				tol := map[tensor.DType]float64{tensor.Float64: 1e-12, tensor.Float32: 1e-5, tensor.Int32: 0}[dt]
				for i, w := range want {
					if d := math.Abs(got.Float64(i) - w); d > tol*(1+math.Abs(w)) {
						t.Fatalf("element %d: %v, want %v (float64 reference)", i, got.Float64(i), w)
					}
				}
			})
		}
	}
}

// TestEinsumGradients checks the gradient of sum(Einsum(...) · W) with
// respect to every operand against central finite differences in
// float64 (step 1e-6; the loss is multilinear, so the only error is
// rounding: bound 1e-6 relative).
func TestEinsumGradients(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for ci, c := range einsumCases {
		if c.eq == "bij,bkj->" {
			continue // empty
		}
		t.Run(c.eq, func(t *testing.T) {
			g := graph.New()
			var ts []*tensor.Tensor
			for i, s := range c.shapes {
				ts = append(ts, exectest.Rand(tensor.Float64, s, -1, 1, uint64(7000+100*ci+i)))
			}
			ins, feeds := exectest.Inputs(g, ts...)
			y := ops.Einsum(c.eq, ins...)
			w := g.Const(exectest.Rand(tensor.Float64, y.Shape(), -1, 1, uint64(9000+ci)))
			loss := ops.Sum(ops.Mul(y, w))
			grads := autodiff.Grad(loss, ins...)
			p, err := exec.Compile(be, append([]*graph.Node{loss}, grads...))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			out, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatal(err)
			}
			lossAt := func() float64 {
				o, err := p.Run(context.Background(), feeds)
				if err != nil {
					t.Fatal(err)
				}
				return o[0].Float64(0)
			}
			const h = 1e-6
			for k, x := range ts {
				xs, _ := tensor.Values[float64](x)
				for i := range xs {
					v := xs[i]
					xs[i] = v + h
					up := lossAt()
					xs[i] = v - h
					down := lossAt()
					xs[i] = v
					fd := (up - down) / (2 * h)
					if got := out[1+k].Float64(i); math.Abs(got-fd) > 1e-6*(1+math.Abs(fd)) {
						t.Fatalf("operand %d element %d: gradient %v, finite differences %v", k, i, got, fd)
					}
				}
			}
		})
	}
}

// TestEinsumOrder: a chain of three whose cheap order is (AB)C: the
// lowering has two MatMuls and its FLOPs are those of that order
// (hand: 2·2·30·3 + 2·2·3·40 = 840), not A(BC)'s (2·30·3·40 + 2·2·30·40 =
// 12000).
func TestEinsumOrder(t *testing.T) {
	g := graph.New()
	a := g.Input("a", tensor.Float32, 2, 30)
	b := g.Input("b", tensor.Float32, 30, 3)
	c := g.Input("c", tensor.Float32, 3, 40)
	y := ops.Einsum("ij,jk,kl->il", a, b, c)
	flops, matmuls := 0.0, 0
	for _, n := range graph.Ancestors(y) {
		if n.Op() == ops.OpMatMul {
			matmuls++
			flops += 2 * float64(matmulMadds(n))
		}
	}
	if matmuls != 2 || flops != 840 {
		t.Errorf("%d MatMuls, %v FLOPs; want 2 and 840", matmuls, flops)
	}
}

// TestEinsumErrors: bad equations are build errors naming Einsum, the
// equation, the operands' types and the call site.
func TestEinsumErrors(t *testing.T) {
	cases := []struct {
		eq     string
		shapes [][]int
		dt     tensor.DType
		kind   error
		want   string
	}{
		{"ij,jk->ik", [][]int{{3, 4}}, tensor.Float32, graph.ErrInvalid, "2 terms for 1 operands"},
		{"ij->ii", [][]int{{3, 3}}, tensor.Float32, graph.ErrInvalid, "twice"},
		{"ij->k", [][]int{{3, 3}}, tensor.Float32, graph.ErrInvalid, "no operand's term"},
		{"i#", [][]int{{3, 3}}, tensor.Float32, graph.ErrInvalid, "not a subscript letter"},
		{"ij", [][]int{{3}}, tensor.Float32, graph.ErrInvalid, "2 subscripts for 1 axes"},
		{"i.j", [][]int{{3, 3}}, tensor.Float32, graph.ErrInvalid, "not part of"},
		{"i->i->i", [][]int{{3}}, tensor.Float32, graph.ErrInvalid, "more than one"},
		{"ij,jk", [][]int{{3, 4}, {5, 6}}, tensor.Float32, graph.ErrShape, "lengths 4 and 5"},
		{"ii", [][]int{{3, 4}}, tensor.Float32, graph.ErrShape, "lengths 3 and 4"},
		{"ij,jk", [][]int{{3, 4}, {4, 6}}, tensor.Bool, graph.ErrDType, "dtype"},
	}
	for _, c := range cases {
		t.Run(c.eq, func(t *testing.T) {
			g := graph.New()
			var xs []*graph.Node
			for i, s := range c.shapes {
				xs = append(xs, g.Input(fmt.Sprint("x", i), c.dt, s...))
			}
			err := ops.Einsum(c.eq, xs...).Err()
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !errors.Is(err, c.kind) || !strings.Contains(msg, "Einsum") || !strings.Contains(msg, c.want) ||
				!strings.Contains(msg, "einsum_test.go") || !strings.Contains(msg, fmt.Sprintf("%q", c.eq)) || !strings.Contains(msg, xs[0].Type()) {
				t.Errorf("error %q: want %v naming Einsum, the equation, %q, the operand types and the call site", msg, c.kind, c.want)
			}
		})
	}
	g := graph.New()
	if err := ops.Einsum("ij,jk", g.Input("a", tensor.Float32, 2, 2), g.Input("b", tensor.Float64, 2, 2)).Err(); !errors.Is(err, graph.ErrDType) {
		t.Errorf("mixed dtypes: %v", err)
	}
}

// Einsum writes contractions as equations: the attention scores of a
// batch of heads, q·kᵀ per head, and the trace of a matrix (hand: query
// [1 1] against keys [1 2] and [3 4] scores 3 and 7; trace 1 + 4 = 5).
func ExampleEinsum() {
	g := graph.New()
	q := g.Const(mustNew([]float32{1, 0, 0, 1, 1, 1}, 1, 1, 3, 2)) // [batch, head, query, dim]
	k := g.Const(mustNew([]float32{1, 2, 3, 4}, 1, 1, 2, 2))       // [batch, head, key, dim]
	scores := ops.Einsum("bhqd,bhkd->bhqk", q, k)
	m := g.Const(mustNew([]float32{1, 2, 3, 4}, 2, 2))
	trace := ops.Einsum("ii", m)
	out, err := compute([]*graph.Node{scores, trace}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// f32[1,1,3,2]
	// [[[[1 3]
	//    [2 4]
	//    [3 7]]]]
	// f32[] 5
}

// TestEinsumTransposeFree: contractions whose operands are already laid
// out as a (transposed) matrix product lower to one MatMul and reshapes,
// no Transpose: attention's q·kᵀ and its weighted sum, x·Wᵀ.
func TestEinsumTransposeFree(t *testing.T) {
	for _, c := range []struct {
		eq   string
		a, b []int
	}{
		{"bhqd,bhkd->bhqk", []int{2, 3, 4, 5}, []int{2, 3, 6, 5}},
		{"bhqk,bhkd->bhqd", []int{2, 3, 4, 6}, []int{2, 3, 6, 5}},
		{"ij,kj->ik", []int{3, 4}, []int{5, 4}},
		{"ji,jk->ik", []int{4, 3}, []int{4, 5}},
	} {
		g := graph.New()
		y := ops.Einsum(c.eq, g.Input("a", tensor.Float32, c.a...), g.Input("b", tensor.Float32, c.b...))
		counts := map[graph.Op]int{}
		for _, n := range graph.Ancestors(y) {
			counts[n.Op()]++
		}
		if counts[ops.OpTranspose] != 0 || counts[ops.OpMatMul] != 1 {
			t.Errorf("%s: %d Transposes and %d MatMuls, want 0 and 1", c.eq, counts[ops.OpTranspose], counts[ops.OpMatMul])
		}
	}
}

// TestEinsumOptimalOrder: the chain 'ab,bc,cd,de->ae' with a, b, c, d, e
// = 3, 10, 2, 4, 2, where contracting the cheapest pair first (greedy)
// costs 116 multiply-adds and the best order 88 (both from an exhaustive
// enumeration in Python; the best: (ab·bc) = 60, (cd·de) = 16, then
// ac·ce = 12): the lowering's MatMuls add up to 88.
func TestEinsumOptimalOrder(t *testing.T) {
	g := graph.New()
	dims := map[byte]int{'a': 3, 'b': 10, 'c': 2, 'd': 4, 'e': 2}
	var xs []*graph.Node
	for _, term := range []string{"ab", "bc", "cd", "de"} {
		xs = append(xs, g.Input(term, tensor.Float64, dims[term[0]], dims[term[1]]))
	}
	y := ops.Einsum("ab,bc,cd,de->ae", xs...)
	madds := 0
	for _, n := range graph.Ancestors(y) {
		if n.Op() == ops.OpMatMul {
			madds += matmulMadds(n)
		}
	}
	if madds != 88 {
		t.Errorf("the MatMuls do %d multiply-adds, want 88", madds)
	}
}

// matmulMadds is the multiply-adds of a MatMul node: its result's size
// times the contracted length.
func matmulMadds(n *graph.Node) int {
	a := n.Input(0).Shape()
	k := a[len(a)-1]
	if f, ok := n.Attr().(opdef.MatMulAttr); ok && f.TransA {
		k = a[len(a)-2]
	}
	return n.Shape().Size() * k
}
