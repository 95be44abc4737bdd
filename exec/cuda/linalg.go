//go:build linux

package cuda

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The linear-algebra ops on cuSOLVER and cuBLAS. loom's matrices are
// row-major, the libraries' column-major: a row-major matrix read
// column-major is its transpose, which most ops use directly (Cholesky
// factors Aᵀ = Uᵀ·U in place, which read row-major is A = L·Lᵀ; Inv
// solves Aᵀ·Z = I, Z read row-major being A⁻¹; TriangularSolve solves
// Xᵀ·op(A)ᵀ = Bᵀ from the right; the determinant of Aᵀ is A's; the SVD of
// a wide A is that of the tall Aᵀ with the factors swapped). Solve, QR and
// the SVD of a tall A transpose with a generated kernel. Each matrix of a
// batch is one library call (the batched cuSOLVER forms are for small
// matrices); the generated kernels (copies with the batch broadcasting
// of two-operand ops, transposes, the packing of QR, Eigh and SVD with
// their sign conventions, determinants, the pseudo-inverse of LstSq) run
// over the whole batch. Every factorisation's LAPACK info is read back
// with the outputs: a zero pivot (Solve, Inv, and a zero diagonal element
// in TriangularSolve) or a minor that is not positive definite (Cholesky)
// is a run error naming the op, the matrix of the batch and the call
// site, as on the CPU.
type linalgStep struct {
	b    *Backend
	node *graph.Node
	op   graph.Op
	prec cu.Precision
	es   int64 // element size
	nb   int   // matrices in the batch (of the result)
	// m×n is A's matrix (n×n for the square ops), k = min(m, n), kk the
	// columns of B (Solve, TriangularSolve, LstSq); rows is the row
	// count of the column-major matrix given to gesvd (max(m, n)).
	m, n, k, kk, rows int
	wide              bool // SVD and LstSq: n >= m (gesvd of Aᵀ)
	tri               opdef.TriangularAttr
	offA, offB        []int64 // element offsets of A's and B's matrices per result matrix

	ks                                         kernSet
	kA, kB, kOut, kEye, kZero, kDiag, kF1, kF2 *kern

	// Device memory, laid out at setup.
	dOffA, dOffB, wA, wB, work, ipiv, info, dummy, tau, ev, sv, gU, gVT, rwork, c1 cu.DevicePtr
	lwork                                                                          int
	// batched: small matrices (n <= batchedMax) of a batch go through the
	// batched routines (cuSOLVER's potrfBatched, cuBLAS's getrfBatched
	// and getrsBatched), one call for the batch, with device arrays of
	// the matrices' addresses (ptrA, ptrB: in the step's workspaces).
	batched    bool
	ptrA, ptrB cu.DevicePtr
	// jacobi: batches of small matrices of Eigh, SVD and LstSq go through
	// cuSOLVER's batched Jacobi solvers (syevjBatched, gesvdjBatched; n
	// and m at most 32), one call for the batch, with their parameters.
	jacobi  bool
	sparams cu.SyevjInfo
	gparams cu.GesvdjInfo
	hasPar  bool
	// errors: the info words are errors (0: none, 1: not positive
	// definite, 2: singular, 3: NaN or Inf where an iteration cannot
	// converge).
	errKind int
	infoN   int
	kFinite *kern        // Eigh, SVD, LstSq: NaN or Inf in the operand
	jinfo   cu.DevicePtr // the Jacobi solvers' info words (not errors)
}

// batchedMax is the largest matrix order that takes the batched
// factorisations (cuBLAS's getrfBatched is meant for small matrices).
const batchedMax = 32

func tname(p cu.Precision) string {
	if p == cu.Double {
		return "double"
	}
	return "float"
}

func newLinalgStep(b *Backend, nd *graph.Node) (*linalgStep, error) {
	s := &linalgStep{b: b, node: nd, op: nd.Op(), prec: cu.Single, es: int64(nd.DType().Size())}
	switch nd.DType() {
	case tensor.Float32:
	case tensor.Float64:
		s.prec = cu.Double
	default:
		return nil, fmt.Errorf("cuSOLVER runs float32 and float64, not %v", nd.DType())
	}
	T := tname(s.prec)
	as := nd.Input(0).Shape()
	s.m, s.n = as[len(as)-2], as[len(as)-1]
	s.k = min(s.m, s.n)
	batchOf := func(sh tensor.Shape, drop int) tensor.Shape { return sh[:len(sh)-drop] }
	contiguous := func(nb int, size int) []int64 {
		o := make([]int64, nb)
		for i := range o {
			o[i] = int64(i * size)
		}
		return o
	}
	toI64 := func(v []int) []int64 {
		o := make([]int64, len(v))
		for i, x := range v {
			o[i] = int64(x)
		}
		return o
	}
	out := nd.Shape()
	m, n, k := s.m, s.n, s.k
	nb := func(sh tensor.Shape) int { return max(sh.Size(), 0) }
	c := func(v int) string { return fmt.Sprint(v) }
	// Kernel bodies use t (the item), and the sizes as constants.
	gather := func(S int) *kern {
		return s.ks.add(newKern("la_gather", "const "+T+"* __restrict__ src, const long long* __restrict__ off, "+T+"* __restrict__ dst",
			"\t\tlong long b = t / "+c(S)+", i = t % "+c(S)+";\n\t\tdst[t] = src[off[b] + i];\n", int64(s.nb*S)))
	}
	// transposeIn: the row-major R×C matrices at off[b] into column-major
	// ones (leading dimension R), packed.
	transposeIn := func(R, C int) *kern {
		return s.ks.add(newKern("la_tin", "const "+T+"* __restrict__ src, const long long* __restrict__ off, "+T+"* __restrict__ dst",
			"\t\tlong long b = t / "+c(R*C)+", q = t % "+c(R*C)+", cc = q / "+c(R)+", r = q % "+c(R)+";\n"+
				"\t\tdst[t] = src[off[b] + r * "+c(C)+" + cc];\n", int64(s.nb*R*C)))
	}
	// transposeOut: packed column-major R×C matrices into row-major ones.
	transposeOut := func(R, C int) *kern {
		return s.ks.add(newKern("la_tout", "const "+T+"* __restrict__ src, "+T+"* __restrict__ dst",
			"\t\tlong long b = t / "+c(R*C)+", q = t % "+c(R*C)+", r = q / "+c(C)+", cc = q % "+c(C)+";\n"+
				"\t\tdst[t] = src[b * "+c(R*C)+" + cc * "+c(R)+" + r];\n", int64(s.nb*R*C)))
	}
	switch s.op {
	case ops.OpCholesky, ops.OpInv, ops.OpDet, ops.OpSLogDet, ops.OpEigh:
		s.nb = nb(batchOf(as, 2))
		s.offA = contiguous(s.nb, n*n)
	case ops.OpQR, ops.OpSVD:
		s.nb = nb(batchOf(as, 2))
		s.offA = contiguous(s.nb, m*n)
	case ops.OpSolve, ops.OpTriangularSolve, ops.OpLstSq:
		bs := nd.Input(1).Shape()
		s.kk = bs[len(bs)-1]
		batch := batchOf(out, 2)
		s.nb = nb(batch)
		s.offA = toI64(opdef.BatchOffsets(batch, as))
		s.offB = toI64(opdef.BatchOffsets(batch, bs))
	default:
		return nil, fmt.Errorf("no cuSOLVER kernel for %v", s.op)
	}
	switch s.op {
	case ops.OpCholesky, ops.OpSolve, ops.OpInv, ops.OpDet, ops.OpSLogDet:
		s.batched = n <= batchedMax && s.nb >= 2
	case ops.OpEigh:
		s.jacobi = n <= batchedMax && s.nb >= 2
	}
	// The iterative ops fail on NaN or Inf as on the CPU: the matrix's
	// read part (Eigh's lower triangle) is checked first.
	switch s.op {
	case ops.OpEigh:
		s.errKind = 3
		s.kFinite = s.ks.add(newKern("la_finite", "const "+T+"* __restrict__ a, const long long* __restrict__ off, int* __restrict__ info",
			"\t\tint bad = 0;\n\t\tfor (long long i = 0; i < "+c(n)+" && !bad; i++)\n\t\t\tfor (long long j = 0; j <= i; j++)\n"+
				"\t\t\t\tif (!isfinite((double)a[off[t] + i * "+c(n)+" + j])) { bad = 1; break; }\n\t\tinfo[t] = bad;\n", int64(s.nb)))
	case ops.OpSVD, ops.OpLstSq:
		s.errKind = 3
		s.kFinite = s.ks.add(newKern("la_finite", "const "+T+"* __restrict__ a, const long long* __restrict__ off, int* __restrict__ info",
			"\t\tint bad = 0;\n\t\tfor (long long i = 0; i < "+c(m*n)+"; i++)\n"+
				"\t\t\tif (!isfinite((double)a[off[t] + i])) { bad = 1; break; }\n\t\tinfo[t] = bad;\n", int64(s.nb)))
	}
	switch s.op {
	case ops.OpCholesky:
		s.errKind = 1
		s.kZero = s.ks.add(newKern("la_triu0", T+"* __restrict__ o",
			"\t\tlong long q = t % "+c(n*n)+";\n\t\tif (q % "+c(n)+" > q / "+c(n)+") o[t] = 0;\n", int64(s.nb*n*n)))
	case ops.OpTriangularSolve:
		s.tri = nd.Attr().(opdef.TriangularAttr)
		s.kB = gather(n * s.kk)
		if !s.tri.UnitDiagonal {
			s.errKind = 2
			s.kDiag = s.ks.add(newKern("la_diag0", "const "+T+"* __restrict__ a, const long long* __restrict__ off, int* __restrict__ info",
				"\t\tint z = 0;\n\t\tfor (long long i = 0; i < "+c(n)+"; i++)\n\t\t\tif (a[off[t] + i * "+c(n+1)+"] == 0) { z = (int)i + 1; break; }\n\t\tinfo[t] = z;\n", int64(s.nb)))
		}
	case ops.OpSolve:
		s.errKind = 2
		s.kA = gather(n * n)
		s.kB = transposeIn(n, s.kk)
		s.kOut = transposeOut(n, s.kk)
	case ops.OpInv:
		s.errKind = 2
		s.kEye = s.ks.add(newKern("la_eye", T+"* __restrict__ o",
			"\t\tlong long q = t % "+c(n*n)+";\n\t\to[t] = q / "+c(n)+" == q % "+c(n)+" ? 1 : 0;\n", int64(s.nb*n*n)))
	case ops.OpDet, ops.OpSLogDet:
		st, zdecl, zset := "\t\to[t] = ("+T+")(neg ? -prod : prod);\n", "", ""
		if s.op == ops.OpSLogDet {
			zdecl, zset = ", zero = 0", "\t\t\tif (d == 0) zero = 1;\n"
			st = "\t\to[2 * t] = (" + T + ")(zero ? 0.0 : (neg ? -1.0 : 1.0));\n\t\to[2 * t + 1] = (" + T + ")logabs;\n"
		}
		s.kF1 = s.ks.add(newKern("la_det", "const "+T+"* __restrict__ lu, const int* __restrict__ ipiv, "+T+"* __restrict__ o",
			"\t\tconst "+T+"* a = lu + t * "+c(n*n)+";\n\t\tconst int* p = ipiv + t * "+c(n)+";\n"+
				"\t\tint neg = 0"+zdecl+";\n\t\tdouble prod = 1, logabs = 0;\n"+
				"\t\tfor (long long i = 0; i < "+c(n)+"; i++) {\n"+
				"\t\t\tdouble d = a[i * "+c(n+1)+"];\n"+
				"\t\t\tif (p[i] != i + 1) neg = !neg;\n"+
				"\t\t\tif (d < 0) neg = !neg;\n"+
				zset+
				"\t\t\tprod *= fabs(d);\n\t\t\tlogabs += log(fabs(d));\n\t\t}\n"+st, int64(s.nb)))
	case ops.OpQR:
		s.kA = transposeIn(m, n)
		if k > 0 {
			ob := c((m + k) * n)
			s.kF1 = s.ks.add(newKern("la_qr_r", "const "+T+"* __restrict__ w, "+T+"* __restrict__ o",
				"\t\tlong long b = t / "+c(k*n)+", q = t % "+c(k*n)+", i = q / "+c(n)+", cc = q % "+c(n)+";\n"+
					"\t\tif (cc >= i) o[b * "+ob+" + ("+c(m)+" + i) * "+c(n)+" + cc] = w[b * "+c(m*n)+" + i + cc * "+c(m)+"];\n", int64(s.nb*k*n)))
			s.kF2 = s.ks.add(newKern("la_qr_q", "const "+T+"* __restrict__ w, "+T+"* __restrict__ o",
				"\t\tlong long b = t / "+c(k)+", j = t % "+c(k)+";\n"+
					"\t\t"+T+"* ob = o + b * "+ob+";\n"+
					"\t\t"+T+" s = ob[("+c(m)+" + j) * "+c(n)+" + j] < 0 ? -1 : 1;\n"+
					"\t\tfor (long long i = 0; i < "+c(m)+"; i++) ob[i * "+c(n)+" + j] = w[b * "+c(m*n)+" + i + j * "+c(m)+"] * s;\n"+
					"\t\tfor (long long cc = 0; cc < "+c(n)+"; cc++) ob[("+c(m)+" + j) * "+c(n)+" + cc] *= s;\n", int64(s.nb*k)))
		}
	case ops.OpEigh:
		s.kF1 = s.ks.add(newKern("la_eigh", "const "+T+"* __restrict__ v, const "+T+"* __restrict__ ev, "+T+"* __restrict__ o",
			"\t\tlong long b = t / "+c(n)+", j = t % "+c(n)+";\n"+
				"\t\tconst "+T+"* vb = v + b * "+c(n*n)+";\n\t\t"+T+"* ob = o + b * "+c((n+1)*n)+";\n"+
				"\t\tlong long arg = 0;\n\t\t"+T+" best = -1;\n"+
				"\t\tfor (long long i = 0; i < "+c(n)+"; i++) { "+T+" a = fabs(vb[i + j * "+c(n)+"]); if (a > best) { best = a; arg = i; } }\n"+
				"\t\t"+T+" s = vb[arg + j * "+c(n)+"] < 0 ? -1 : 1;\n"+
				"\t\tob[j] = ev[b * "+c(n)+" + j];\n"+
				"\t\tfor (long long i = 0; i < "+c(n)+"; i++) ob[(1 + i) * "+c(n)+" + j] = vb[i + j * "+c(n)+"] * s;\n", int64(s.nb*n)))
	case ops.OpSVD, ops.OpLstSq:
		s.wide = n >= m
		s.rows = max(m, n)
		if k == 0 {
			break
		}
		s.jacobi = s.rows <= batchedMax && s.nb >= 2
		// gesvdj gives U (rows×rows) and V (k×k) where gesvd gives U
		// (rows×k, the same columns first) and Vᵀ: vt(j, cc) below reads
		// either.
		vt := func(j, cc string) string { return "[" + j + " + " + cc + " * " + c(k) + "]" }
		if s.jacobi {
			vt = func(j, cc string) string { return "[" + cc + " + " + j + " * " + c(k) + "]" }
		}
		// U(i,j) of A and Vh(j,cc) as C expressions over ub and vb, the
		// batch's gesvd outputs.
		var uexp, vexp, ubuf, vbuf string
		if s.wide {
			// gesvd of Aᵀ (n×m): Aᵀ = U'·S·V'ᵀ, so U = V' (gVT read
			// transposed) and Vh = U'ᵀ.
			uexp, vexp = "ub"+vt("j", "i"), "vb[cc + j * "+c(s.rows)+"]"
			ubuf, vbuf = "gvt", "gu"
			s.kA = gather(m * n)
		} else {
			uexp, vexp = "ub[i + j * "+c(s.rows)+"]", "vb"+vt("j", "cc")
			ubuf, vbuf = "gu", "gvt"
			s.kA = transposeIn(m, n)
		}
		size := map[string]string{"gu": c(s.rows * k), "gvt": c(k * k)}
		if s.jacobi {
			size["gu"] = c(s.rows * s.rows)
		}
		// pre declares ub and vb where body uses them.
		pre := func(body string) string {
			var p string
			if strings.Contains(body, "ub[") {
				p += "\t\tconst " + T + "* ub = " + ubuf + " + b * " + size[ubuf] + ";\n"
			}
			if strings.Contains(body, "vb[") {
				p += "\t\tconst " + T + "* vb = " + vbuf + " + b * " + size[vbuf] + ";\n"
			}
			return p
		}
		U := func(i, j string) string {
			return strings.NewReplacer("i", i, "j", j).Replace(uexp)
		}
		V := func(j, cc string) string {
			return strings.NewReplacer("j", j, "cc", cc).Replace(vexp)
		}
		if s.op == ops.OpSVD {
			ob := c((m + 1 + k) * n)
			body := "\t\t" + T + "* ob = o + b * " + ob + ";\n" +
				"\t\tlong long arg = 0;\n\t\t" + T + " best = -1;\n" +
				"\t\tfor (long long i = 0; i < " + c(m) + "; i++) { " + T + " a = fabs(" + U("i", "j") + "); if (a > best) { best = a; arg = i; } }\n" +
				"\t\t" + T + " s = " + U("arg", "j") + " < 0 ? -1 : 1;\n" +
				"\t\tfor (long long i = 0; i < " + c(m) + "; i++) ob[i * " + c(n) + " + j] = " + U("i", "j") + " * s;\n" +
				"\t\tob[" + c(m*n) + " + j] = sv[b * " + c(k) + " + j];\n" +
				"\t\tfor (long long cc = 0; cc < " + c(n) + "; cc++) ob[(" + c(m+1) + " + j) * " + c(n) + " + cc] = " + V("j", "cc") + " * s;\n"
			s.kF1 = s.ks.add(newKern("la_svd", "const "+T+"* __restrict__ gu, const "+T+"* __restrict__ gvt, const "+T+"* __restrict__ sv, "+T+"* __restrict__ o",
				"\t\tlong long b = t / "+c(k)+", j = t % "+c(k)+";\n"+pre(body)+body, int64(s.nb*k)))
		} else {
			kk := s.kk
			cut := opdef.LstSqCutoff(nd.DType(), m, n)
			body1 := "\t\tdouble smax = sv[b * " + c(k) + "], sj = sv[b * " + c(k) + " + j];\n" +
				fmt.Sprintf("\t\tdouble inv = sj > %.17g * smax ? 1.0 / sj : 0.0;\n", cut) +
				"\t\tdouble acc = 0;\n" +
				"\t\tfor (long long r = 0; r < " + c(m) + "; r++) acc += (double)" + U("r", "j") + " * (double)bsrc[offb[b] + r * " + c(kk) + " + cc];\n" +
				"\t\tc1[t] = (" + T + ")(acc * inv);\n"
			s.kF1 = s.ks.add(newKern("la_lsq1", "const "+T+"* __restrict__ gu, const "+T+"* __restrict__ gvt, const "+T+"* __restrict__ sv, const "+T+"* __restrict__ bsrc, const long long* __restrict__ offb, "+T+"* __restrict__ c1",
				"\t\tlong long b = t / "+c(k*kk)+", q = t % "+c(k*kk)+", j = q / "+c(kk)+", cc = q % "+c(kk)+";\n"+pre(body1)+body1, int64(s.nb*k*kk)))
			body2 := "\t\tdouble acc = 0;\n" +
				"\t\tfor (long long j = 0; j < " + c(k) + "; j++) acc += (double)" + V("j", "i") + " * (double)c1[b * " + c(k*kk) + " + j * " + c(kk) + " + cc];\n" +
				"\t\to[t] = (" + T + ")acc;\n"
			s.kF2 = s.ks.add(newKern("la_lsq2", "const "+T+"* __restrict__ gu, const "+T+"* __restrict__ gvt, const "+T+"* __restrict__ c1, "+T+"* __restrict__ o",
				"\t\tlong long b = t / "+c(n*kk)+", q = t % "+c(n*kk)+", i = q / "+c(kk)+", cc = q % "+c(kk)+";\n"+pre(body2)+body2, int64(s.nb*n*kk)))
		}
	}
	return s, nil
}

func (s *linalgStep) funcs() []cudagen.Func { return s.ks.funcs() }

// setup allocates the workspaces, uploads the offset tables and sizes
// cuSOLVER's workspace (device goroutine).
func (s *linalgStep) setup(e *executable, mod cu.Module) error {
	x := &s.b.ext
	d := e.be.lib.drv
	h, err := x.solverHandle()
	if err != nil {
		return err
	}
	es, nb := s.es, int64(s.nb)
	m, n, k := int64(s.m), int64(s.n), int64(s.k)
	alloc := func(p *cu.DevicePtr, bytes int64) {
		if err == nil {
			*p, err = e.ownedAlloc(max(bytes, 1))
		}
	}
	if s.dOffA, err = e.uploadOwned(int64Bytes(s.offA)); err != nil {
		return err
	}
	if s.dOffB, err = e.uploadOwned(int64Bytes(s.offB)); err != nil {
		return err
	}
	s.infoN = s.nb
	alloc(&s.info, 4*nb)
	alloc(&s.dummy, 4)
	alloc(&s.jinfo, 4*nb)
	lw := 0
	q := func(v int, qerr error) {
		if qerr != nil && err == nil {
			err = qerr
		}
		lw = max(lw, v)
	}
	sv := x.solver
	p := s.prec
	switch s.op {
	case ops.OpCholesky:
		if s.batched {
			alloc(&s.wA, nb*n*n*es)
		} else if n > 0 {
			q(sv.PotrfBufferSize(h, p, cu.Upper, s.n, 0, s.n))
		}
	case ops.OpSolve, ops.OpInv, ops.OpDet, ops.OpSLogDet:
		alloc(&s.wA, nb*n*n*es)
		alloc(&s.ipiv, 4*nb*n)
		if s.op == ops.OpSolve {
			alloc(&s.wB, nb*n*int64(s.kk)*es)
		}
		if s.op == ops.OpInv && s.batched {
			alloc(&s.wB, nb*n*n*es)
		}
		if n > 0 && err == nil && !s.batched {
			q(sv.GetrfBufferSize(h, p, s.n, s.n, s.wA, s.n))
		}
	case ops.OpQR:
		alloc(&s.wA, nb*m*n*es)
		alloc(&s.tau, nb*k*es)
		if k > 0 && err == nil {
			q(sv.GeqrfBufferSize(h, p, s.m, s.n, s.wA, s.m))
			q(sv.OrgqrBufferSize(h, p, s.m, s.k, s.k, s.wA, s.m, s.tau))
		}
	case ops.OpEigh:
		alloc(&s.wA, nb*n*n*es)
		alloc(&s.ev, nb*n*es)
		switch {
		case n == 0 || err != nil:
		case s.jacobi:
			if s.sparams, err = sv.CreateSyevjInfo(); err != nil {
				return fmt.Errorf("cusolverDnCreateSyevjInfo: %w", err)
			}
			s.hasPar = true
			q(sv.SyevjBatchedBufferSize(h, p, cu.Vectors, cu.Upper, s.n, s.wA, s.n, s.ev, s.sparams, s.nb))
		default:
			q(sv.SyevdBufferSize(h, p, cu.Vectors, cu.Upper, s.n, s.wA, s.n, s.ev))
		}
	case ops.OpSVD, ops.OpLstSq:
		rows := int64(s.rows)
		alloc(&s.wA, nb*m*n*es)
		alloc(&s.sv, nb*k*es)
		ucols := k
		if s.jacobi {
			ucols = rows
		}
		alloc(&s.gU, nb*rows*ucols*es)
		alloc(&s.gVT, nb*k*k*es)
		alloc(&s.rwork, k*es)
		if s.op == ops.OpLstSq {
			alloc(&s.c1, nb*k*int64(s.kk)*es)
		}
		switch {
		case k == 0 || err != nil:
		case s.jacobi:
			if s.gparams, err = sv.CreateGesvdjInfo(); err != nil {
				return fmt.Errorf("cusolverDnCreateGesvdjInfo: %w", err)
			}
			s.hasPar = true
			q(sv.GesvdjBatchedBufferSize(h, p, cu.Vectors, s.rows, s.k, s.wA, s.rows, s.sv, s.gU, s.rows, s.gVT, s.k, s.gparams, s.nb))
		default:
			q(sv.GesvdBufferSize(h, p, s.rows, s.k))
		}
	}
	s.lwork = lw
	alloc(&s.work, int64(lw)*es)
	if err != nil {
		return err
	}
	if s.batched {
		// The matrices' addresses in the workspaces, for the batched
		// routines.
		ptrs := func(base cu.DevicePtr, size int64) (cu.DevicePtr, error) {
			v := make([]int64, s.nb)
			for b := range v {
				v[b] = int64(base) + int64(b)*size*es
			}
			return e.uploadOwned(int64Bytes(v))
		}
		if s.ptrA, err = ptrs(s.wA, n*n); err != nil {
			return err
		}
		if s.wB != 0 {
			cols := int64(s.kk) // Solve's right-hand sides, Inv's identity
			if s.op == ops.OpInv {
				cols = n
			}
			if s.ptrB, err = ptrs(s.wB, n*cols); err != nil {
				return err
			}
		}
	}
	return s.ks.setup(d, mod, 4*nb)
}

// enqueue puts the calls and launches on the stream.
func (s *linalgStep) enqueue(e *executable, i int) error {
	if s.nb == 0 {
		return nil
	}
	st := e.plan.Steps[i]
	d, x := e.be.lib.drv, &s.be().ext
	h := x.sh
	sv := x.solver
	p, es := s.prec, s.es
	in := func(j int) cu.DevicePtr { return e.ptr[st.In[j]] }
	out := e.ptr[st.Out]
	m, n, k, kk := s.m, s.n, s.k, s.kk
	mat := func(base cu.DevicePtr, b, size int) cu.DevicePtr { return base + cu.DevicePtr(int64(b)*int64(size)*es) }
	info := func(b int) cu.DevicePtr { return s.info + cu.DevicePtr(4*b) }
	if err := sv.SetStream(h, e.stream); err != nil {
		return fmt.Errorf("cusolverDnSetStream: %w", err)
	}
	if s.errKind != 0 {
		if err := d.MemsetD8Async(s.info, 0, 4*int64(s.nb), e.stream); err != nil {
			return err
		}
	}
	if s.kFinite != nil {
		if err := s.kFinite.launch(e, in(0), s.dOffA, s.info); err != nil {
			return err
		}
	}
	var err error
	keep := func(e error) {
		if err == nil && e != nil {
			err = e
		}
	}
	outBytes := e.plan.Values[st.Out].Bytes
	switch s.op {
	case ops.OpCholesky:
		if s.batched {
			keep(d.MemcpyDtoDAsync(s.wA, in(0), outBytes, e.stream))
			if err == nil && n > 0 {
				keep(sv.PotrfBatched(h, p, cu.Upper, n, s.ptrA, n, s.info, s.nb))
			}
			keep(d.MemcpyDtoDAsync(out, s.wA, outBytes, e.stream))
		} else {
			keep(d.MemcpyDtoDAsync(out, in(0), outBytes, e.stream))
			for b := 0; b < s.nb && n > 0 && err == nil; b++ {
				keep(sv.Potrf(h, p, cu.Upper, n, mat(out, b, n*n), n, s.work, s.lwork, info(b)))
			}
		}
		keep(s.kZero.launch(e, out))
	case ops.OpTriangularSolve:
		if s.kDiag != nil {
			keep(s.kDiag.launch(e, in(0), s.dOffA, s.info))
		}
		keep(s.kB.launch(e, in(1), s.dOffB, out))
		if err == nil && n > 0 && kk > 0 {
			bs := s.b.ext.bsolve
			keep(e.be.lib.blas.SetStream(e.be.blas, e.stream))
			uplo, op := cu.Upper, cu.NoTrans
			if s.tri.Upper {
				uplo = cu.Lower
			}
			if s.tri.Transpose {
				op = cu.Trans
			}
			diag := cu.NonUnit
			if s.tri.UnitDiagonal {
				diag = cu.Unit
			}
			for b := 0; b < s.nb && err == nil; b++ {
				a := in(0) + cu.DevicePtr(s.offA[b]*es)
				keep(bs.Trsm(e.be.blas, p, cu.Right, uplo, op, diag, kk, n, 1, a, n, mat(out, b, n*kk), kk))
			}
		}
	case ops.OpSolve, ops.OpInv, ops.OpDet, ops.OpSLogDet:
		if s.op == ops.OpSolve {
			keep(s.kA.launch(e, in(0), s.dOffA, s.wA))
		} else {
			keep(d.MemcpyDtoDAsync(s.wA, in(0), int64(s.nb*n*n)*es, e.stream))
		}
		bs := s.b.ext.bsolve
		if s.batched && n > 0 {
			keep(e.be.lib.blas.SetStream(e.be.blas, e.stream))
			if err == nil {
				keep(bs.GetrfBatched(e.be.blas, p, n, s.ptrA, n, s.ipiv, s.info, s.nb))
			}
		}
		for b := 0; b < s.nb && n > 0 && err == nil && !s.batched; b++ {
			keep(sv.Getrf(h, p, n, n, mat(s.wA, b, n*n), n, s.work, s.ipiv+cu.DevicePtr(4*b*n), info(b)))
		}
		// getrs: cuBLAS's batched solve, which reports a bad argument in
		// a host int.
		getrsBatched := func(tr cu.Op, nrhs int) {
			if err != nil || nrhs == 0 || n == 0 {
				return
			}
			bad, gerr := bs.GetrsBatched(e.be.blas, p, tr, n, nrhs, s.ptrA, n, s.ipiv, s.ptrB, n, s.nb)
			keep(gerr)
			if bad != 0 {
				keep(fmt.Errorf("cublasGetrsBatched: argument %d is invalid", -bad))
			}
		}
		switch {
		case s.batched && s.op == ops.OpSolve:
			keep(s.kB.launch(e, in(1), s.dOffB, s.wB))
			getrsBatched(cu.Trans, kk)
			keep(s.kOut.launch(e, s.wB, out))
		case s.batched && s.op == ops.OpInv:
			keep(s.kEye.launch(e, s.wB))
			getrsBatched(cu.NoTrans, n)
			keep(d.MemcpyDtoDAsync(out, s.wB, outBytes, e.stream))
		case s.op == ops.OpSolve:
			keep(s.kB.launch(e, in(1), s.dOffB, s.wB))
			for b := 0; b < s.nb && n > 0 && kk > 0 && err == nil; b++ {
				keep(sv.Getrs(h, p, cu.Trans, n, kk, mat(s.wA, b, n*n), n, s.ipiv+cu.DevicePtr(4*b*n), mat(s.wB, b, n*kk), n, s.dummy))
			}
			keep(s.kOut.launch(e, s.wB, out))
		case s.op == ops.OpInv:
			keep(s.kEye.launch(e, out))
			for b := 0; b < s.nb && n > 0 && err == nil; b++ {
				keep(sv.Getrs(h, p, cu.NoTrans, n, n, mat(s.wA, b, n*n), n, s.ipiv+cu.DevicePtr(4*b*n), mat(out, b, n*n), n, s.dummy))
			}
		default:
			keep(s.kF1.launch(e, s.wA, s.ipiv, out))
		}
	case ops.OpQR:
		keep(d.MemsetD8Async(out, 0, outBytes, e.stream))
		if k == 0 {
			break
		}
		keep(s.kA.launch(e, in(0), s.dOffA, s.wA))
		for b := 0; b < s.nb && err == nil; b++ {
			keep(sv.Geqrf(h, p, m, n, mat(s.wA, b, m*n), m, mat(s.tau, b, k), s.work, s.lwork, s.dummy))
		}
		keep(s.kF1.launch(e, s.wA, out))
		for b := 0; b < s.nb && err == nil; b++ {
			keep(sv.Orgqr(h, p, m, k, k, mat(s.wA, b, m*n), m, mat(s.tau, b, k), s.work, s.lwork, s.dummy))
		}
		keep(s.kF2.launch(e, s.wA, out))
	case ops.OpEigh:
		if n == 0 {
			break
		}
		keep(d.MemcpyDtoDAsync(s.wA, in(0), int64(s.nb*n*n)*es, e.stream))
		if s.jacobi && err == nil {
			keep(sv.SyevjBatched(h, p, cu.Vectors, cu.Upper, n, s.wA, n, s.ev, s.work, s.lwork, s.jinfo, s.sparams, s.nb))
		}
		for b := 0; b < s.nb && err == nil && !s.jacobi; b++ {
			keep(sv.Syevd(h, p, cu.Vectors, cu.Upper, n, mat(s.wA, b, n*n), n, mat(s.ev, b, n), s.work, s.lwork, s.dummy))
		}
		keep(s.kF1.launch(e, s.wA, s.ev, out))
	case ops.OpSVD, ops.OpLstSq:
		keep(d.MemsetD8Async(out, 0, outBytes, e.stream))
		if k == 0 {
			break
		}
		keep(s.kA.launch(e, in(0), s.dOffA, s.wA))
		rows := s.rows
		if s.jacobi && err == nil {
			keep(sv.GesvdjBatched(h, p, cu.Vectors, rows, k, s.wA, rows, s.sv, s.gU, rows, s.gVT, k, s.work, s.lwork, s.jinfo, s.gparams, s.nb))
		}
		for b := 0; b < s.nb && err == nil && !s.jacobi; b++ {
			keep(sv.Gesvd(h, p, 'S', 'S', rows, k, mat(s.wA, b, m*n), rows, mat(s.sv, b, k), mat(s.gU, b, rows*k), rows,
				mat(s.gVT, b, k*k), k, s.work, s.lwork, s.rwork, s.dummy))
		}
		if s.op == ops.OpSVD {
			keep(s.kF1.launch(e, s.gU, s.gVT, s.sv, out))
		} else if kk > 0 {
			keep(s.kF1.launch(e, s.gU, s.gVT, s.sv, in(1), s.dOffB, s.c1))
			keep(s.kF2.launch(e, s.gU, s.gVT, s.c1, out))
		}
	}
	if err != nil {
		return fmt.Errorf("%v: %w", s.op, err)
	}
	if s.errKind != 0 {
		return d.MemcpyDtoHAsync(ptrOf(s.ks.extra), s.info, 4*int64(s.nb), e.stream)
	}
	return nil
}

func (s *linalgStep) be() *Backend { return s.b }

// check reports the first matrix of the batch whose factorisation failed.
func (s *linalgStep) check() error {
	if s.errKind == 0 || s.nb == 0 {
		return nil
	}
	for b := 0; b < s.nb; b++ {
		v := int32(uint32(s.ks.extra[4*b]) | uint32(s.ks.extra[4*b+1])<<8 | uint32(s.ks.extra[4*b+2])<<16 | uint32(s.ks.extra[4*b+3])<<24)
		if v <= 0 {
			continue
		}
		var err error
		switch s.errKind {
		case 1:
			err = opdef.NotPositiveDefiniteError(s.op.String(), b, int(v)-1)
		case 2:
			err = opdef.SingularError(s.op.String(), b, int(v)-1)
		default: // the words of the CPU's and the reference's error
			err = fmt.Errorf("%s: the iteration did not converge for matrix %d of the batch (does it hold NaN or Inf?)", s.op, b)
		}
		return fmt.Errorf("%w (built at %s)", err, s.node.Site())
	}
	return nil
}

func (s *linalgStep) free(e *executable) error {
	var errs firstErr
	if s.hasPar {
		sv := s.b.ext.solver
		if s.op == ops.OpEigh {
			errs.keep(sv.DestroySyevjInfo(s.sparams))
		} else {
			errs.keep(sv.DestroyGesvdjInfo(s.gparams))
		}
		s.hasPar = false
	}
	errs.keep(s.ks.free(e.be.lib.drv))
	return errs.err
}
