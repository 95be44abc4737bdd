package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Movement kernels copy element bits (bitsType of the element size), so
// one kernel serves every dtype of a size, float16, bfloat16 and bool
// included.

// copyKernel generates Reshape and CustomGrad: a copy.
func copyKernel(g *gen, n *graph.Node) {
	g.gather(n.DType(), []dim{{size: int64(n.Shape().Size()), strides: []int64{1}}}, 0)
}

// transpose generates Transpose: a tiled transpose when the input's
// contiguous axis moves, else a gather.
func (g *gen) transpose(n *graph.Node) {
	perm := n.Attr().(opdef.PermAttr).Perm
	in := n.Input(0).Shape().Strides()
	st := make([]int64, len(perm))
	for i, p := range perm {
		st[i] = int64(in[p])
	}
	dims := coalesce(n.Shape(), [][]int64{st}, nil)
	if !g.transposeTiled(n.DType(), dims) {
		g.gather(n.DType(), dims, 0)
	}
}

// broadcastTo generates BroadcastTo: a gather with zero strides.
func (g *gen) broadcastTo(n *graph.Node) {
	g.gather(n.DType(), coalesce(n.Shape(), [][]int64{broadcastStrides(n.Input(0).Shape(), n.Shape())}, nil), 0)
}

// slice generates Slice: a gather from the first element with the steps'
// strides.
func (g *gen) slice(n *graph.Node) {
	rs := n.Attr().(opdef.SliceAttr).Ranges
	in := n.Input(0).Shape().Strides()
	st := make([]int64, len(rs))
	base := int64(0)
	for i, r := range rs {
		st[i] = int64(in[i]) * int64(r.Step)
		base += int64(r.Start) * int64(in[i])
	}
	g.gather(n.DType(), coalesce(n.Shape(), [][]int64{st}, nil), base)
}

// gather launches out[i] = in0[base + sum(idx_d * stride_d)] over the
// row-major positions i of dims (one stride per dim).
func (g *gen) gather(dt tensor.DType, dims []dim, base int64) {
	size := int64(1)
	for _, d := range dims {
		size *= d.size
	}
	ct := bitsType(dt)
	var c code
	c.gridStride("i", size)
	var off string
	if len(dims) == 0 || (len(dims) == 1 && dims[0].strides[0] == 1) {
		off = "i" // a contiguous copy
	} else {
		idx := c.decompose("i", "d", dims)
		off = dot(idx, dims, 0)
	}
	if base != 0 {
		off = ll(base) + " + " + off
	}
	c.line("out[i] = in0[%s];", off)
	c.line("}")
	prefix := "gather"
	if off == "i" {
		prefix = "copy"
	}
	fn := g.function(prefix, "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: Out})
}

// tileSide is the side of a transpose tile.
const tileSide = 32

// transposeTiled launches a transpose through shared-memory tiles of
// 32x32 elements when the input's contiguous dimension is not the
// output's, so that both the reads and the writes are coalesced: dims are
// the output's coalesced dimensions with the input strides. It reports
// false when the tiled kernel does not apply.
func (g *gen) transposeTiled(dt tensor.DType, dims []dim) bool {
	k := len(dims)
	if k < 2 || dims[k-1].strides[0] == 1 || g.t.MaxThreads < tileSide*8 {
		return false
	}
	a := -1
	for i, d := range dims {
		if d.strides[0] == 1 {
			a = i
		}
	}
	if a < 0 || dims[a].size < 8 || dims[k-1].size < 8 {
		return false
	}
	if int64(tileSide*(tileSide+1))*int64(dt.Size()) > int64(g.t.SharedBytes) {
		return false
	}
	// Output strides (row-major over the coalesced output dims).
	ost := make([]int64, k)
	s := int64(1)
	for i := k - 1; i >= 0; i-- {
		ost[i] = s
		s *= dims[i].size
	}
	b := k - 1
	da, db := dims[a].size, dims[b].size
	ta, tb := ceilDiv(da, tileSide), ceilDiv(db, tileSide)
	var batch []dim
	for i, d := range dims {
		if i != a && i != b {
			batch = append(batch, dim{size: d.size, strides: []int64{d.strides[0], ost[i]}})
		}
	}
	nb := int64(1)
	for _, d := range batch {
		nb *= d.size
	}
	items := nb * ta * tb
	ct := bitsType(dt)
	var c code
	c.line("%s* tile = (%s*)loom_smem;", ct, ct)
	c.line("const long long tx = threadIdx.x;")
	c.line("const long long ty = threadIdx.y;")
	c.line("for (long long w = blockIdx.x; w < %s; w += gridDim.x) {", ll(items))
	c.line("const long long jb = (w %% %s) * %d;", ll(tb), tileSide)
	c.line("const long long ja = ((w / %s) %% %s) * %d;", ll(tb), ll(ta), tileSide)
	inBase, outBase := "0LL", "0LL"
	if len(batch) > 0 {
		c.line("const long long bt = w / %s;", ll(tb*ta))
		idx := c.decompose("bt", "n", batch)
		inBase, outBase = dot(idx, batch, 0), dot(idx, batch, 1)
	}
	c.line("const long long ib = %s;", inBase)
	c.line("const long long ob = %s;", outBase)
	// Read: threads along x step through the input's contiguous dim a.
	c.line("for (long long y = ty; y < %d; y += %d) {", tileSide, 8)
	c.line("if (ja + tx < %s && jb + y < %s) tile[y * %d + tx] = in0[ib + (ja + tx) + (jb + y) * %s];", ll(da), ll(db), tileSide+1, ll(dims[b].strides[0]))
	c.line("}")
	c.line("__syncthreads();")
	// Write: threads along x step through the output's contiguous dim b.
	c.line("for (long long y = ty; y < %d; y += %d) {", tileSide, 8)
	c.line("if (ja + y < %s && jb + tx < %s) out[ob + (ja + y) * %s + (jb + tx)] = tile[tx * %d + y];", ll(da), ll(db), ll(ost[a]), tileSide+1)
	c.line("}")
	c.line("__syncthreads();")
	c.line("}")
	fn := g.function("transpose", "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", c.String())
	g.launch(fn, min(items, g.t.maxGrid()), [3]int{tileSide, 8, 1}, tileSide*(tileSide+1)*dt.Size(), Arg{Kind: In}, Arg{Kind: Out})
	return true
}

// concat launches a gather that reads each output element from the
// operand whose block of the concatenation axis holds it.
func (g *gen) concat(n *graph.Node) {
	axis := n.Attr().(opdef.AxisAttr).Axis
	out := n.Shape()
	inner := int64(1)
	for _, d := range out[axis+1:] {
		inner *= int64(d)
	}
	row := int64(out[axis]) * inner
	size := int64(out.Size())
	ct := bitsType(n.DType())
	var c code
	c.gridStride("i", size)
	if size == row {
		c.line("const long long o = 0;")
		c.line("const long long j = i;")
	} else {
		c.line("const long long o = i / %s;", ll(row))
		c.line("const long long j = i - o * %s;", ll(row))
	}
	params := ""
	off := int64(0)
	var live []int
	for k, in := range n.Inputs() {
		params += fmt.Sprintf("const %s* __restrict__ in%d, ", ct, k)
		if in.Shape()[axis] > 0 {
			live = append(live, k)
		}
	}
	for i, k := range live {
		l := int64(n.Input(k).Shape()[axis]) * inner
		read := fmt.Sprintf("out[i] = in%d[o * %s + (j - %s)];", k, ll(l), ll(off))
		switch {
		case len(live) == 1:
			c.line("%s", read)
		case i == 0:
			c.line("if (j < %s) {", ll(off+l))
			c.line("%s", read)
		case i == len(live)-1:
			c.line("} else {")
			c.line("%s", read)
			c.line("}")
		default:
			c.line("} else if (j < %s) {", ll(off+l))
			c.line("%s", read)
		}
		off += l
	}
	c.line("}")
	fn := g.function("concat", params+ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, append(inArgs(len(n.Inputs())), Arg{Kind: Out})...)
}

// pad launches a gather over the result: each element reads the operand
// element it holds, or is 0 in the padding.
func (g *gen) pad(n *graph.Node) {
	ws := n.Attr().(opdef.PadAttr).Widths
	x := n.Input(0)
	size := int64(n.Shape().Size())
	if x.Shape().Size() == 0 {
		g.fill(n.DType(), size)
		return
	}
	// Dimensions of the result; unpadded neighbours merge.
	type pdim struct {
		out, in, stride int64
		low, interior   int64
		padded          bool
	}
	inSt := x.Shape().Strides()
	var ds []pdim
	for i, w := range ws {
		d := pdim{out: int64(n.Shape()[i]), in: int64(x.Shape()[i]), stride: int64(inSt[i]), low: int64(w.Low), interior: int64(w.Interior)}
		d.padded = w.Low != 0 || w.High != 0 || (w.Interior != 0 && x.Shape()[i] > 1)
		if d.out == 1 && !d.padded {
			continue
		}
		if k := len(ds) - 1; k >= 0 && !d.padded && !ds[k].padded && ds[k].stride == d.stride*d.in {
			ds[k].out *= d.out
			ds[k].in *= d.in
			ds[k].stride = d.stride
			continue
		}
		ds = append(ds, d)
	}
	ct := bitsType(n.DType())
	var c code
	c.gridStride("i", size)
	c.line("long long q = i;")
	c.line("long long src = 0;")
	c.line("bool ok = true;")
	for k := len(ds) - 1; k >= 0; k-- {
		d := ds[k]
		idx := fmt.Sprintf("p%d", k)
		if k > 0 {
			c.line("const long long %s = q %% %s;", idx, ll(d.out))
			c.line("q /= %s;", ll(d.out))
		} else {
			c.line("const long long %s = q;", idx)
		}
		if !d.padded {
			c.line("src += %s * %s;", idx, ll(d.stride))
			continue
		}
		t := fmt.Sprintf("(%s - %s)", idx, ll(d.low))
		if d.interior > 0 {
			c.line("ok = ok && %s >= 0 && %s %% %s == 0 && %s / %s < %s;", t, t, ll(d.interior+1), t, ll(d.interior+1), ll(d.in))
			c.line("src += (%s / %s) * %s;", t, ll(d.interior+1), ll(d.stride))
		} else {
			c.line("ok = ok && %s >= 0 && %s < %s;", t, t, ll(d.in))
			c.line("src += %s * %s;", t, ll(d.stride))
		}
	}
	c.line("out[i] = ok ? in0[src] : %s;", zeroOf(ct))
	c.line("}")
	fn := g.function("pad", "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: Out})
}

// segmentDims are the sizes of Repeat and SumRuns: outer rows before
// the axis, inner elements after it, the long axis (the counts' sum) and
// the short one (one position per count).
func segmentDims(n *graph.Node) (outer, inner, long, short int64) {
	a := n.Attr().(opdef.RepeatAttr)
	s := n.Input(0).Shape()
	outer, inner = 1, 1
	for _, d := range s[:a.Axis] {
		outer *= int64(d)
	}
	for _, d := range s[a.Axis+1:] {
		inner *= int64(d)
	}
	short = int64(len(a.Counts))
	for _, c := range a.Counts {
		long += int64(c)
	}
	return outer, inner, long, short
}

// repeat launches Repeat as a gather: result position j along the axis
// reads the element of the count whose run holds j, found by a binary
// search of the offsets (operand 1, short+1 int64 running sums; any
// values give an index in range).
func (g *gen) repeat(n *graph.Node) {
	_, inner, long, short := segmentDims(n)
	size := int64(n.Shape().Size())
	ct := bitsType(n.DType())
	var c code
	c.gridStride("i", size)
	c.line("const long long k = i %% %s;", ll(inner))
	c.line("const long long u = i / %s;", ll(inner))
	c.line("const long long j = u %% %s;", ll(long))
	c.line("const long long o = u / %s;", ll(long))
	c.line("long long lo = 0, hi = %s;", ll(short))
	c.line("while (hi - lo > 1) {")
	c.line("const long long mid = lo + (hi - lo) / 2;")
	c.line("if (in1[mid] <= j) lo = mid; else hi = mid;")
	c.line("}")
	c.line("out[i] = in0[(o * %s + lo) * %s + k];", ll(short), ll(inner))
	c.line("}")
	fn := g.function("repeat", "const "+ct+"* __restrict__ in0, const long long* __restrict__ in1, "+ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: In, Index: 1}, Arg{Kind: Out})
}

// sumRuns launches SumRuns: each result element adds its run of
// the operand (the offsets, clamped to the axis, bound it) in order, in
// double for the float types and in wrapping 64-bit integers for the
// integers.
func (g *gen) sumRuns(n *graph.Node) {
	_, inner, long, short := segmentDims(n)
	size := int64(n.Shape().Size())
	ct := segmentTypes[n.DType()]
	acc, conv, back := "double", "(double)", "("+ct+")acc"
	if n.DType().IsInt() {
		acc, conv, back = "unsigned long long", "(unsigned long long)(long long)", "("+ct+")(long long)acc"
	}
	var c code
	c.gridStride("i", size)
	c.line("const long long k = i %% %s;", ll(inner))
	c.line("const long long u = i / %s;", ll(inner))
	c.line("const long long s = u %% %s;", ll(short))
	c.line("const long long o = u / %s;", ll(short))
	// The offsets clamped to [0, long] and b >= a, with conditionals: the
	// long long overloads of min and max are CUDA's, not the emulator's.
	c.line("const long long a0 = in1[s] < 0LL ? 0LL : in1[s];")
	c.line("const long long a = a0 > %s ? %s : a0;", ll(long), ll(long))
	c.line("const long long b0 = in1[s + 1] < a ? a : in1[s + 1];")
	c.line("const long long b = b0 > %s ? %s : b0;", ll(long), ll(long))
	c.line("%s acc = 0;", acc)
	c.line("for (long long j = a; j < b; j++) acc += %sin0[(o * %s + j) * %s + k];", conv, ll(long), ll(inner))
	c.line("out[i] = %s;", back)
	c.line("}")
	fn := g.function("segsum", "const "+ct+"* __restrict__ in0, const long long* __restrict__ in1, "+ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: In, Index: 1}, Arg{Kind: Out})
}

// segmentTypes are the C types SumRuns adds in (the integers through
// 64-bit wrapping sums).
var segmentTypes = map[tensor.DType]string{
	tensor.Float32: "float", tensor.Float64: "double",
	tensor.Int8: "signed char", tensor.Int16: "short", tensor.Int32: "int", tensor.Int64: "long long", tensor.Uint8: "unsigned char",
}

// checkSumRuns admits the dtypes SumRuns has arithmetic for.
func checkSumRuns(n *graph.Node) error {
	if segmentTypes[n.DType()] == "" {
		return fmt.Errorf("no SumRuns for %v", n.DType())
	}
	return nil
}

// iota launches Iota: element i holds (i / stride) % length, its index
// along the attribute's axis. It has no operands.
func (g *gen) iota(n *graph.Node) {
	a := n.Attr().(opdef.IotaAttr)
	stride := int64(1)
	for _, d := range n.Shape()[a.Axis+1:] {
		stride *= int64(d)
	}
	size := int64(n.Shape().Size())
	ct := cType(n.DType())
	var c code
	c.gridStride("i", size)
	c.line("out[i] = (%s)((i / %s) %% %s);", ct, ll(stride), ll(int64(n.Shape()[a.Axis])))
	c.line("}")
	fn := g.function("iota", ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: Out})
}
