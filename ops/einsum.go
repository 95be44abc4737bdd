package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Einsum evaluates the Einstein summation convention on the operands, as
// numpy.einsum(equation, *operands):
//
//   - Each operand gets a term of subscript letters (a-z, A-Z), one per
//     axis, the terms separated by commas; spaces are ignored.
//   - A letter repeated within a term takes the diagonal of those axes
//     ("ii->i"); a letter missing from the output is summed over ("ii"
//     is the trace, "ij,jk->ik" the matrix product).
//   - With "->" the output's letters (each at most once, each in some
//     term) give the result's axes in order; without it the output is the
//     letters that occur exactly once, in alphabetical (ASCII) order.
//   - "..." in a term stands for the axes not named by letters; those of
//     all the operands broadcast (NumPy's rules, aligned at the right) and
//     come first in an implicit output, where "..." in an explicit output
//     puts them. An explicit output without "..." sums them.
//   - A letter's axes must have one length, or length 1 (broadcast, as
//     NumPy's einsum allows), except that a repeated letter within one
//     term needs equal lengths.
//
// The operands must share one dtype (float or integer). Einsum is
// lowered to the existing ops: Diagonal for repeated letters, Sum for
// letters only one operand has, and for each pair of operands a
// Transpose and Reshape to [batch, m, k] and [batch, k, n] and one MatMul
// (a broadcast Mul and a Sum for integers or when nothing is contracted),
// so its gradient is theirs. Letters only one operand has (and the
// output lacks) are summed before any product. With three to six
// operands the order of the pairwise contractions is the one of fewest
// multiply-adds in total, found by a search over subsets
// (numpy.einsum_path's "optimal"); with more, pairs are contracted
// greedily, the cheapest (fewest multiply-adds, then the smallest result)
// first, as numpy.einsum_path's "greedy" (which measures by the size a
// contraction removes instead). Bad equations are build errors naming the
// equation and the operands' shapes.
func Einsum(equation string, operands ...*graph.Node) *graph.Node {
	if _, bad := graph.Operands("Einsum", operands...); bad != nil {
		return bad
	}
	e, err := parseEinsum(equation, operands)
	if err != nil {
		return fail(graph.ErrInvalid, "Einsum", operands, "equation %q: %v", equation, err)
	}
	dt := operands[0].DType()
	for i, x := range operands {
		if x.DType() != dt {
			return fail(graph.ErrDType, "Einsum", operands, "equation %q: operand %d is %v, operand 0 %v; Einsum needs one dtype (ops.Cast first)", equation, i, x.DType(), dt)
		}
	}
	if !dt.IsFloat() && !dt.IsInt() || dt == tensor.Float16 || dt == tensor.BFloat16 {
		return fail(graph.ErrDType, "Einsum", operands, "equation %q: dtype %v; Einsum needs f32, f64 or an integer dtype", equation, dt)
	}
	if err := e.sizes(operands); err != nil {
		return fail(graph.ErrShape, "Einsum", operands, "equation %q: %v", equation, err)
	}
	return e.lower(operands)
}

// An einsum label: a letter, or -1-j for the j-th broadcast ("...") axis.
type label = int

type einsumEq struct {
	ins  [][]label
	out  []label
	size map[label]int
}

func labelName(l label) string {
	if l < 0 {
		return fmt.Sprintf("...[%d]", -1-l)
	}
	return string(rune(l))
}

// parseTerm splits one term into letters and the position of "..." (-1
// when absent).
func parseTerm(t string) (letters []label, ell int, err error) {
	ell = -1
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = append(letters, label(c))
		case c == '.':
			if !strings.HasPrefix(t[i:], "...") {
				return nil, 0, fmt.Errorf("term %q has a '.' that is not part of \"...\"", t)
			}
			if ell >= 0 {
				return nil, 0, fmt.Errorf("term %q has \"...\" twice", t)
			}
			ell = len(letters)
			i += 2
		default:
			return nil, 0, fmt.Errorf("term %q has %q, which is not a subscript letter (a-z, A-Z)", t, c)
		}
	}
	return letters, ell, nil
}

func parseEinsum(equation string, xs []*graph.Node) (*einsumEq, error) {
	eq := strings.ReplaceAll(equation, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	if strings.Contains(rhs, "->") {
		return nil, fmt.Errorf("more than one \"->\"")
	}
	if strings.ContainsAny(rhs, ",") {
		return nil, fmt.Errorf("the output %q has a ','", rhs)
	}
	terms := strings.Split(lhs, ",")
	if len(terms) != len(xs) {
		return nil, fmt.Errorf("%d terms for %d operands", len(terms), len(xs))
	}
	e := &einsumEq{}
	nEll := 0
	type parsed struct {
		letters []label
		ell     int
	}
	ps := make([]parsed, len(terms))
	for i, t := range terms {
		letters, ell, err := parseTerm(t)
		if err != nil {
			return nil, err
		}
		r := xs[i].Rank()
		switch {
		case ell < 0 && len(letters) != r:
			return nil, fmt.Errorf("term %q of operand %d has %d subscripts for %d axes", t, i, len(letters), r)
		case ell >= 0 && len(letters) > r:
			return nil, fmt.Errorf("term %q of operand %d has %d subscripts for %d axes", t, i, len(letters), r)
		}
		if ell >= 0 {
			nEll = max(nEll, r-len(letters))
		}
		ps[i] = parsed{letters, ell}
	}
	count := map[label]int{}
	for i, p := range ps {
		ls := p.letters
		if p.ell >= 0 {
			k := xs[i].Rank() - len(p.letters) // axes of this operand's "..."
			var ells []label
			for j := range k {
				ells = append(ells, -1-(nEll-k+j))
			}
			ls = slices.Concat(p.letters[:p.ell], ells, p.letters[p.ell:])
		}
		for _, l := range ls {
			count[l]++
		}
		e.ins = append(e.ins, ls)
	}
	ellLabels := make([]label, nEll)
	for j := range ellLabels {
		ellLabels[j] = -1 - j
	}
	if !explicit {
		var singles []label
		for l, c := range count {
			if l >= 0 && c == 1 {
				singles = append(singles, l)
			}
		}
		slices.Sort(singles)
		e.out = append(ellLabels, singles...)
		return e, nil
	}
	letters, ell, err := parseTerm(rhs)
	if err != nil {
		return nil, fmt.Errorf("output: %v", err)
	}
	seen := map[label]bool{}
	for _, l := range letters {
		if seen[l] {
			return nil, fmt.Errorf("output %q has %q twice", rhs, rune(l))
		}
		if count[l] == 0 {
			return nil, fmt.Errorf("output %q has %q, which no operand's term has", rhs, rune(l))
		}
		seen[l] = true
	}
	if ell >= 0 {
		e.out = slices.Concat(letters[:ell], ellLabels, letters[ell:])
	} else {
		e.out = letters
	}
	return e, nil
}

// sizes gives every label its length: the largest of its axes, whose
// lengths must be that or 1 (broadcast); a label repeated within a term
// needs one length there.
func (e *einsumEq) sizes(xs []*graph.Node) error {
	e.size = map[label]int{}
	for i, ls := range e.ins {
		within := map[label]int{}
		for a, l := range ls {
			d := xs[i].Shape()[a]
			if w, ok := within[l]; ok && w != d {
				return fmt.Errorf("subscript %s of operand %d labels axes of lengths %d and %d (a repeated subscript takes a diagonal)", labelName(l), i, w, d)
			}
			within[l] = d
			if s, ok := e.size[l]; !ok || s == 1 {
				e.size[l] = d
			} else if d != s && d != 1 {
				return fmt.Errorf("subscript %s has lengths %d and %d, which do not broadcast", labelName(l), s, d)
			}
		}
	}
	return nil
}

// term is an operand during lowering: a node and the label of each axis
// (all distinct once prepared).
type term struct {
	x  *graph.Node
	ls []label
}

func (e *einsumEq) lower(xs []*graph.Node) *graph.Node {
	pool := make([]term, len(xs))
	for i, x := range xs {
		pool[i] = e.prepare(x, e.ins[i])
	}
	// needed reports whether label l is in the output or in a pool term
	// other than those at skip.
	needed := func(l label, skip ...int) bool {
		if slices.Contains(e.out, l) {
			return true
		}
		for k, t := range pool {
			if !slices.Contains(skip, k) && slices.Contains(t.ls, l) {
				return true
			}
		}
		return false
	}
	for i := range pool {
		var drop []label
		for _, l := range pool[i].ls {
			if !needed(l, i) {
				drop = append(drop, l)
			}
		}
		pool[i] = sumLabels(pool[i], drop)
	}
	if len(pool) > 2 && len(pool) <= optimalMax {
		pool = []term{e.optimal(pool)}
	}
	for len(pool) > 1 {
		bi, bj := 0, 1
		var bestCost, bestSize float64 = -1, -1
		for i := range pool {
			for j := i + 1; j < len(pool); j++ {
				all := union(pool[i].ls, pool[j].ls)
				cost := e.volume(all)
				var keep []label
				for _, l := range all {
					if needed(l, i, j) {
						keep = append(keep, l)
					}
				}
				size := e.volume(keep)
				if bestCost < 0 || cost < bestCost || cost == bestCost && size < bestSize {
					bi, bj, bestCost, bestSize = i, j, cost, size
				}
			}
		}
		a, b := pool[bi], pool[bj]
		keep := func(l label) bool { return needed(l, bi, bj) }
		c := e.contract(a, b, keep)
		pool = slices.Delete(pool, bj, bj+1)
		pool[bi] = c
	}
	t := pool[0]
	perm := make([]int, len(e.out))
	for k, l := range e.out {
		perm[k] = slices.Index(t.ls, l)
	}
	return transposeIf(t.x, perm)
}

// optimalMax is the most operands whose contraction order is searched
// exhaustively (3ⁿ subset pairs); more are ordered greedily.
const optimalMax = 6

// optimal contracts the terms in the order of fewest multiply-adds in
// total (numpy.einsum_path's "optimal"): a dynamic program over subsets,
// where contracting a set costs its two halves' costs plus the volume of
// the union of their results' labels, a set's result keeping the labels
// the output or a term outside it needs.
func (e *einsumEq) optimal(pool []term) term {
	n := len(pool)
	full := 1<<n - 1
	labels := make([][]label, full+1) // the labels of each subset's result
	for set := 1; set <= full; set++ {
		var in []label
		outside := slices.Clone(e.out)
		for k, t := range pool {
			if set>>k&1 == 1 {
				in = union(in, t.ls)
			} else {
				outside = union(outside, t.ls)
			}
		}
		for _, l := range in {
			if slices.Contains(outside, l) {
				labels[set] = append(labels[set], l)
			}
		}
	}
	cost := make([]float64, full+1)
	split := make([]int, full+1)
	for set := 1; set <= full; set++ {
		if set&(set-1) == 0 {
			continue // one term
		}
		cost[set] = -1
		for a := (set - 1) & set; a > 0; a = (a - 1) & set {
			b := set ^ a
			if a > b {
				continue // each split once
			}
			c := cost[a] + cost[b] + e.volume(union(labels[a], labels[b]))
			if cost[set] < 0 || c < cost[set] {
				cost[set], split[set] = c, a
			}
		}
	}
	var build func(set int) term
	build = func(set int) term {
		if set&(set-1) == 0 {
			for k := range pool {
				if set == 1<<k {
					return pool[k]
				}
			}
		}
		a := split[set]
		keep := labels[set]
		return e.contract(build(a), build(set^a), func(l label) bool { return slices.Contains(keep, l) })
	}
	return build(full)
}

// prepare squeezes the broadcast (length-1) axes of a label that is
// longer elsewhere and takes the diagonals of repeated labels.
func (e *einsumEq) prepare(x *graph.Node, ls []label) term {
	var squeeze []int
	var kept []label
	for a, l := range ls {
		if x.Shape()[a] == 1 && e.size[l] != 1 {
			squeeze = append(squeeze, a)
		} else {
			kept = append(kept, l)
		}
	}
	if len(squeeze) > 0 {
		x = Squeeze(x, squeeze...)
	}
	ls = kept
	for {
		p, q := -1, -1
		for i := range ls {
			if j := slices.Index(ls[i+1:], ls[i]); j >= 0 {
				p, q = i, i+1+j
				break
			}
		}
		if p < 0 {
			return term{x, ls}
		}
		l := ls[p]
		x = Diagonal(x, 0, p, q)
		ls = append(slices.Delete(slices.Delete(slices.Clone(ls), q, q+1), p, p+1), l)
	}
}

// sumLabels sums t over the given labels.
func sumLabels(t term, drop []label) term {
	if len(drop) == 0 {
		return t
	}
	var axes []int
	var kept []label
	for a, l := range t.ls {
		if slices.Contains(drop, l) {
			axes = append(axes, a)
		} else {
			kept = append(kept, l)
		}
	}
	return term{reduce(OpSum, t.x, axes, false), kept}
}

func union(a, b []label) []label {
	u := slices.Clone(a)
	for _, l := range b {
		if !slices.Contains(u, l) {
			u = append(u, l)
		}
	}
	return u
}

func (e *einsumEq) volume(ls []label) float64 {
	v := 1.0
	for _, l := range ls {
		v *= float64(e.size[l])
	}
	return v
}

func (e *einsumEq) dims(ls []label) []int {
	d := make([]int, len(ls))
	for i, l := range ls {
		d[i] = e.size[l]
	}
	return d
}

// contract multiplies a and b and sums the labels they share that keep
// rejects. The result's labels are the kept shared ones (batch), then
// a's own, then b's own.
func (e *einsumEq) contract(a, b term, keep func(label) bool) term {
	var batch, contr, aOnly, bOnly []label
	for _, l := range a.ls {
		switch {
		case !slices.Contains(b.ls, l):
			aOnly = append(aOnly, l)
		case keep(l):
			batch = append(batch, l)
		default:
			contr = append(contr, l)
		}
	}
	for _, l := range b.ls {
		if !slices.Contains(a.ls, l) {
			bOnly = append(bOnly, l)
		}
	}
	outLs := slices.Concat(batch, aOnly, bOnly)
	outDims := e.dims(outLs)
	if len(contr) > 0 && a.x.DType().IsFloat() {
		// [batch, m, k]·[batch, k, n], or a transposed operand when that
		// order is its axes' own and the other is not (MatMulT's flags
		// read it in place): q·kᵀ of attention moves no data.
		var lead []int
		if len(batch) > 0 {
			lead = []int{int(e.volume(batch))}
		}
		m, k, n := int(e.volume(aOnly)), int(e.volume(contr)), int(e.volume(bOnly))
		transA := !inOrder(a, slices.Concat(batch, aOnly, contr)) && inOrder(a, slices.Concat(batch, contr, aOnly))
		transB := !inOrder(b, slices.Concat(batch, contr, bOnly)) && inOrder(b, slices.Concat(batch, bOnly, contr))
		var ax, bx *graph.Node
		if transA {
			ax = e.arrange(a, slices.Concat(batch, contr, aOnly), append(lead, k, m))
		} else {
			ax = e.arrange(a, slices.Concat(batch, aOnly, contr), append(lead, m, k))
		}
		if transB {
			bx = e.arrange(b, slices.Concat(batch, bOnly, contr), append(lead, n, k))
		} else {
			bx = e.arrange(b, slices.Concat(batch, contr, bOnly), append(lead, k, n))
		}
		return term{reshapeIf(MatMulT(ax, bx, transA, transB), outDims), outLs}
	}
	// A broadcast product over [batch, aOnly, bOnly, contr], then the sum
	// over contr.
	ones := func(n int) []int { return slices.Repeat([]int{1}, n) }
	ax := e.arrange(a, slices.Concat(batch, aOnly, contr), slices.Concat(e.dims(batch), e.dims(aOnly), ones(len(bOnly)), e.dims(contr)))
	bx := e.arrange(b, slices.Concat(batch, bOnly, contr), slices.Concat(e.dims(batch), ones(len(aOnly)), e.dims(bOnly), e.dims(contr)))
	p := Mul(ax, bx)
	if len(contr) > 0 {
		axes := make([]int, len(contr))
		for i := range axes {
			axes[i] = len(outLs) + i
		}
		p = reduce(OpSum, p, axes, false)
	}
	return term{p, outLs}
}

// inOrder reports whether t's axes are labelled ls, in that order.
func inOrder(t term, ls []label) bool { return slices.Equal(t.ls, ls) }

// arrange transposes t's axes into the order of ls and reshapes to dims.
func (e *einsumEq) arrange(t term, ls []label, dims []int) *graph.Node {
	perm := make([]int, len(ls))
	for i, l := range ls {
		perm[i] = slices.Index(t.ls, l)
	}
	return reshapeIf(transposeIf(t.x, perm), dims)
}

func transposeIf(x *graph.Node, perm []int) *graph.Node {
	for i, p := range perm {
		if i != p {
			return Transpose(x, perm...)
		}
	}
	return x
}

func reshapeIf(x *graph.Node, dims []int) *graph.Node {
	if x.Shape().Equal(dims) {
		return x
	}
	return Reshape(x, dims...)
}
