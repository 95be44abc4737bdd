package cpu

import "github.com/loomgraph/loom/tensor"

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
