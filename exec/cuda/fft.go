//go:build linux

package cuda

import (
	"fmt"
	"slices"

	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The Fourier transforms (FFT, RFFT, IRFFT) on cuFFT. The transformed
// axes are brought innermost, in the attribute's order (the real axis of
// RFFT and IRFFT last), by a generated transpose unless they already are;
// cuFFT then transforms them in passes of up to three axes (its largest
// rank): the real pass (R2C, or C2R last) over the innermost group in the
// basic layout, the complex passes in place over the others in the
// advanced layout (the inner axes as the stride, the outer ones as the
// batch, or as a loop of executions when both are larger than one); a
// last generated kernel transposes back and applies the norm mode's scale
// (or only scales, in place, when nothing moved). IRFFT (and an RFFT of
// several axes) transforms a copy of its operand, since cuFFT's
// complex-to-real transforms overwrite their input. The plans and their shared work area (cuFFT's automatic
// allocation is off) are made at setup, so a run only launches.
type fftStep struct {
	b    *Backend
	node *graph.Node
	kind int // 0 FFT, 1 RFFT, 2 IRFFT
	attr opdef.FFTAttr

	cplx, real tensor.DType // the complex dtype and its real one
	ces        int64        // bytes of a complex element

	// perm: the operand's axes, untransformed first, then the transformed
	// ones in the attribute's order; moved says whether it is not the
	// identity.
	perm   []int
	moved  bool
	empty  bool
	copyIn bool // IRFFT (or a multi-axis RFFT) without a move: a plain copy of the operand

	passes []*fftPass
	ks     kernSet
	kIn    *kern // the operand into the permuted layout (nil: none)
	kOut   *kern // back to the result's layout and scaled (nil: none)

	inBytes, outBytes int64
	w1, w2, work      cu.DevicePtr
}

// fftPass is one cuFFT plan and how it runs: count executions at
// pointer offsets step elements apart (of the input's and the output's
// element types), from the pass's source buffer to its destination.
type fftPass struct {
	typ             cu.FFTType
	dir             int
	layout          cu.FFTLayout
	count           int64
	stepIn, stepOut int64 // elements between executions
	esIn, esOut     int64 // element sizes
	src, dst        int   // 0 operand, 1 w1, 2 w2, 3 result
	h               cu.FFTHandle
	made            bool
}

// fftElem is the C type of a transform's element for the generated
// kernels.
func fftElem(dt tensor.DType) string {
	switch dt {
	case tensor.Float32:
		return "float"
	case tensor.Float64:
		return "double"
	case tensor.Complex64:
		return "float2"
	}
	return "double2"
}

func newFFTStep(b *Backend, nd *graph.Node) (*fftStep, error) {
	a, ok := nd.Attr().(opdef.FFTAttr)
	if !ok {
		return nil, fmt.Errorf("attribute %T", nd.Attr())
	}
	s := &fftStep{b: b, node: nd, attr: a}
	switch nd.Op() {
	case ops.OpFFT:
		s.kind = 0
	case ops.OpRFFT:
		s.kind = 1
	case ops.OpIRFFT:
		s.kind = 2
	default:
		return nil, fmt.Errorf("no cuFFT kernel for %v", nd.Op())
	}
	inT, outT := nd.Input(0).DType(), nd.DType()
	s.cplx = outT
	if s.kind == 2 {
		s.cplx = inT
	}
	if s.cplx != tensor.Complex64 && s.cplx != tensor.Complex128 {
		return nil, fmt.Errorf("cuFFT runs complex64 and complex128, not %v", s.cplx)
	}
	s.real = s.cplx.RealDType()
	s.ces = int64(s.cplx.Size())
	inS, outS := nd.Input(0).Shape(), nd.Shape()
	s.inBytes = int64(max(inS.Size(), 0) * inT.Size())
	s.outBytes = int64(max(outS.Size(), 0) * outT.Size())
	if inS.Size() <= 0 || outS.Size() <= 0 {
		s.empty = true
		return s, nil
	}
	r := len(inS)
	for i := range r {
		if !slices.Contains(a.Axes, i) {
			s.perm = append(s.perm, i)
		}
	}
	s.perm = append(s.perm, a.Axes...)
	for i, p := range s.perm {
		if p != i {
			s.moved = true
		}
	}
	nt := len(a.Axes)
	permute := func(sh tensor.Shape) []int {
		out := make([]int, r)
		for i, p := range s.perm {
			out[i] = sh[p]
		}
		return out
	}
	pin, pout := permute(inS), permute(outS)
	// The complex side's lengths, and the logical (real side's) ones.
	cside := pin
	if s.kind == 1 {
		cside = pout
	}
	logical := slices.Clone(cside[r-nt:])
	switch s.kind {
	case 1:
		logical[nt-1] = pin[r-1]
	case 2:
		logical[nt-1] = a.N
	}
	outer := int64(1)
	for _, v := range cside[:r-nt] {
		outer *= int64(v)
	}
	scale := opdef.FFTScale(a.Norm, s.kind == 0 && a.Inverse || s.kind == 2, prod(logical))

	// Buffers: the operand (0), w1 (the permuted or copied operand), w2
	// (the permuted result), the result (3).
	src := 0
	if s.moved {
		s.kIn = s.ks.add(permuteKern(inT, inS, s.perm, 1, "fft_in"))
		src = 1
	} else if s.kind == 2 || (s.kind == 1 && nt > 1) {
		// cuFFT's complex-to-real transforms overwrite their input, and
		// its documentation does not promise that multi-dimensional
		// real-to-complex ones keep theirs: they read a copy.
		s.copyIn = true
		src = 1
	}
	dst := 3
	if s.moved {
		dst = 2
	}
	// The passes over groups of up to three axes of the nt innermost;
	// the real one (RFFT, IRFFT) is the innermost group.
	var groups [][2]int // [lo, hi) in 0..nt
	hi := nt
	for hi > 0 {
		lo := max(hi-3, 0)
		groups = append(groups, [2]int{lo, hi})
		hi = lo
	}
	slices.Reverse(groups) // outermost first
	cTyp, rTyp := cu.FFTC2C, cu.FFTR2C
	if s.cplx == tensor.Complex128 {
		cTyp, rTyp = cu.FFTZ2Z, cu.FFTD2Z
	}
	dir := cu.FFTForward
	if (s.kind == 0 && a.Inverse) || s.kind == 2 {
		dir = cu.FFTInverse
	}
	complexPass := func(g [2]int, from, to int) *fftPass {
		n := make([]int64, 0, 3)
		size := int64(1)
		for _, v := range cside[r-nt+g[0] : r-nt+g[1]] {
			n = append(n, int64(v))
			size *= int64(v)
		}
		inner := int64(1)
		for _, v := range cside[r-nt+g[1]:] {
			inner *= int64(v)
		}
		out := outer
		for _, v := range cside[r-nt : r-nt+g[0]] {
			out *= int64(v)
		}
		p := &fftPass{typ: cTyp, dir: dir, src: from, dst: to, esIn: s.ces, esOut: s.ces}
		switch {
		case inner == 1:
			p.layout = cu.FFTLayout{N: n, Batch: out}
			p.count = 1
		case out <= inner:
			// Batch over the inner elements, a loop over the outer.
			p.layout = cu.FFTLayout{N: n, InEmbed: n, InStride: inner, InDist: 1, OutEmbed: n, OutStride: inner, OutDist: 1, Batch: inner}
			p.count, p.stepIn, p.stepOut = out, size*inner, size*inner
		default:
			p.layout = cu.FFTLayout{N: n, InEmbed: n, InStride: inner, InDist: size * inner, OutEmbed: n, OutStride: inner, OutDist: size * inner, Batch: out}
			p.count, p.stepIn, p.stepOut = inner, 1, 1
		}
		return p
	}
	realPass := func(g [2]int, from, to int) *fftPass {
		n := make([]int64, 0, 3)
		for _, v := range logical[g[0]:g[1]] {
			n = append(n, int64(v))
		}
		out := outer
		for _, v := range cside[r-nt : r-nt+g[0]] {
			out *= int64(v)
		}
		p := &fftPass{typ: rTyp, dir: cu.FFTForward, src: from, dst: to, esIn: s.ces / 2, esOut: s.ces, count: 1,
			layout: cu.FFTLayout{N: n, Batch: out}}
		if s.kind == 2 {
			p.typ, p.dir, p.esIn, p.esOut = cu.FFTC2R, cu.FFTInverse, s.ces, s.ces/2
			if s.cplx == tensor.Complex128 {
				p.typ = cu.FFTZ2D
			}
		}
		return p
	}
	switch s.kind {
	case 0:
		for i, g := range groups {
			from := src
			if i > 0 {
				from = dst
			}
			s.passes = append(s.passes, complexPass(g, from, dst))
		}
	case 1:
		last := len(groups) - 1
		s.passes = append(s.passes, realPass(groups[last], src, dst))
		for _, g := range groups[:last] {
			s.passes = append(s.passes, complexPass(g, dst, dst))
		}
	case 2:
		last := len(groups) - 1
		for _, g := range groups[:last] {
			s.passes = append(s.passes, complexPass(g, 1, 1))
		}
		s.passes = append(s.passes, realPass(groups[last], 1, dst))
	}
	if s.moved {
		inv := make([]int, r)
		for i, p := range s.perm {
			inv[p] = i
		}
		ps := make(tensor.Shape, r)
		for i := range r {
			ps[i] = pout[i]
		}
		s.kOut = s.ks.add(permuteKern(outT, ps, inv, scale, "fft_out"))
	} else if scale != 1 {
		s.kOut = s.ks.add(scaleKern(outT, int64(outS.Size()), scale))
	}
	return s, nil
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// permuteKern is dst = scale·transpose(src, perm): src of shape sh,
// dst[i_0, ..., i_{r-1}] (of shape sh permuted) = src at the index whose
// axis perm[d] is i_d.
func permuteKern(dt tensor.DType, sh tensor.Shape, perm []int, scale float64, prefix string) *kern {
	T := fftElem(dt)
	r := len(sh)
	strides := make([]int64, r)
	acc := int64(1)
	for i := r - 1; i >= 0; i-- {
		strides[i] = acc
		acc *= int64(sh[i])
	}
	body := "\t\tlong long q = t, off = 0, i;\n"
	for d := r - 1; d >= 0; d-- {
		n := sh[perm[d]]
		body += fmt.Sprintf("\t\ti = q %% %d; q /= %d; off += i * %dLL;\n", n, n, strides[perm[d]])
	}
	body += "\t\t" + T + " v = src[off];\n" + scaleStmt(dt, scale) + "\t\tdst[t] = v;\n"
	return newKern(prefix, "const "+T+"* __restrict__ src, "+T+"* __restrict__ dst", body, acc)
}

// scaleKern multiplies the n elements of o by scale in place.
func scaleKern(dt tensor.DType, n int64, scale float64) *kern {
	T := fftElem(dt)
	return newKern("fft_scale", T+"* __restrict__ dst", "\t\t"+T+" v = dst[t];\n"+scaleStmt(dt, scale)+"\t\tdst[t] = v;\n", n)
}

func scaleStmt(dt tensor.DType, scale float64) string {
	if scale == 1 {
		return ""
	}
	c := "(float)"
	if dt == tensor.Float64 || dt == tensor.Complex128 {
		c = "(double)"
	}
	k := fmt.Sprintf("%s%.17g", c, scale)
	if dt.IsComplex() {
		return "\t\tv.x *= " + k + "; v.y *= " + k + ";\n"
	}
	return "\t\tv *= " + k + ";\n"
}

func (s *fftStep) funcs() []cudagen.Func { return s.ks.funcs() }

// setup makes the plans and their work area (device goroutine).
func (s *fftStep) setup(e *executable, mod cu.Module) error {
	if err := s.ks.setup(e.be.lib.drv, mod, 0); err != nil {
		return err
	}
	if s.empty {
		return nil
	}
	x := &s.b.ext
	var err error
	if s.kIn != nil || s.copyIn {
		if s.w1, err = e.ownedAlloc(s.inBytes); err != nil {
			return err
		}
	}
	if s.moved {
		if s.w2, err = e.ownedAlloc(s.outBytes); err != nil {
			return err
		}
	}
	var ws int64
	for _, p := range s.passes {
		if p.h, err = x.newPlan(); err != nil {
			return err
		}
		p.made = true
		sz, err := x.fft.MakePlanMany(p.h, p.layout, p.typ)
		if err != nil {
			return fmt.Errorf("cufftMakePlanMany64(%v, n=%v, batch %d): %w", p.typ, p.layout.N, p.layout.Batch, err)
		}
		ws = max(ws, sz)
		if err := x.fft.SetStream(p.h, e.stream); err != nil {
			return fmt.Errorf("cufftSetStream: %w", err)
		}
	}
	if s.work, err = e.ownedAlloc(max(ws, 1)); err != nil {
		return err
	}
	for _, p := range s.passes {
		if err := x.fft.SetWorkArea(p.h, s.work); err != nil {
			return fmt.Errorf("cufftSetWorkArea: %w", err)
		}
	}
	return nil
}

// enqueue launches the transpose, the transforms and the scaling.
func (s *fftStep) enqueue(e *executable, i int) error {
	if s.empty {
		return nil
	}
	st := e.plan.Steps[i]
	d, f := e.be.lib.drv, s.b.ext.fft
	bufs := [4]cu.DevicePtr{e.ptr[st.In[0]], s.w1, s.w2, e.ptr[st.Out]}
	switch {
	case s.kIn != nil:
		if err := s.kIn.launch(e, bufs[0], s.w1); err != nil {
			return err
		}
	case s.copyIn:
		if err := d.MemcpyDtoDAsync(s.w1, bufs[0], s.inBytes, e.stream); err != nil {
			return err
		}
	}
	for _, p := range s.passes {
		for c := int64(0); c < p.count; c++ {
			in := bufs[p.src] + cu.DevicePtr(c*p.stepIn*p.esIn)
			out := bufs[p.dst] + cu.DevicePtr(c*p.stepOut*p.esOut)
			if err := f.Exec(p.h, p.typ, in, out, p.dir); err != nil {
				return fmt.Errorf("cufftExec (%v, n=%v): %w", p.typ, p.layout.N, err)
			}
		}
	}
	if s.kOut != nil {
		if s.moved {
			return s.kOut.launch(e, s.w2, bufs[3])
		}
		return s.kOut.launch(e, bufs[3])
	}
	return nil
}

func (s *fftStep) check() error { return nil }

func (s *fftStep) free(e *executable) error {
	var errs firstErr
	for _, p := range s.passes {
		if p.made {
			errs.keep(s.b.ext.destroyPlan(p.h))
			p.made = false
		}
	}
	errs.keep(s.ks.free(e.be.lib.drv))
	return errs.err
}
