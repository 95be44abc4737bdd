//go:build linux

package cu

import (
	"fmt"
	"math"
	"os"
)

// SolverHandle is a cusolverDnHandle_t.
type SolverHandle uintptr

// SyevjInfo is a syevjInfo_t, the parameters of the Jacobi eigensolver.
type SyevjInfo uintptr

// GesvdjInfo is a gesvdjInfo_t, the parameters of the Jacobi SVD.
type GesvdjInfo uintptr

// Precision picks the S (float32), D (float64), C (complex64) or Z
// (complex128) variant of a cuSOLVER or cuBLAS routine. The complex ones
// are bound for the Cholesky and LU routines (potrf, potrs, getrf, getrs
// and their workspace queries) only.
type Precision uint8

const (
	Single        Precision = iota // float: cusolverDnS..., cublasS...
	Double                         // double: cusolverDnD..., cublasD...
	SingleComplex                  // cuComplex: cusolverDnC...
	DoubleComplex                  // cuDoubleComplex: cusolverDnZ...
)

func (p Precision) String() string {
	switch p {
	case Double:
		return "D"
	case SingleComplex:
		return "C"
	case DoubleComplex:
		return "Z"
	}
	return "S"
}

// valid reports whether p is a real precision (every routine has it).
func (p Precision) valid() bool { return p <= Double }

// Fill is a cublasFillMode_t: the triangle of a symmetric or triangular
// matrix that is read (column-major).
type Fill int32

const (
	Lower Fill = 0 // CUBLAS_FILL_MODE_LOWER
	Upper Fill = 1 // CUBLAS_FILL_MODE_UPPER
)

// Op is a cublasOperation_t.
type Op int32

const (
	NoTrans   Op = 0 // CUBLAS_OP_N
	Trans     Op = 1 // CUBLAS_OP_T
	ConjTrans Op = 2 // CUBLAS_OP_C
)

// EigMode is a cusolverEigMode_t: whether eigen- (or singular) vectors are
// computed.
type EigMode int32

const (
	NoVectors EigMode = 0 // CUSOLVER_EIG_MODE_NOVECTOR
	Vectors   EigMode = 1 // CUSOLVER_EIG_MODE_VECTOR
)

// CUSOLVER is the loaded dense cuSOLVER library (libcusolver). Every
// routine leaves a LAPACK-style info code in device memory (0: success,
// -i: argument i was bad, i > 0: a numerical failure such as a zero pivot
// or a minor that is not positive definite), read after the stream
// synchronises. The routines called per run (SetStream and the
// factorisations and solves) go through purego.SyscallN, which does not
// allocate; the workspace queries, handle and parameter functions through
// RegisterFunc. Make the calls from the goroutine that holds the current
// context (see the package comment).
type CUSOLVER struct {
	path string
	sc   wideCaller
	hot  struct {
		setStream     uintptr
		potrf         [4]uintptr
		potrs         [4]uintptr
		potrfBatched  [2]uintptr
		potrsBatched  [2]uintptr
		getrf         [4]uintptr
		getrs         [4]uintptr
		geqrf         [2]uintptr
		orgqr         [2]uintptr
		syevd         [2]uintptr
		gesvd         [2]uintptr
		syevjBatched  [2]uintptr
		gesvdjBatched [2]uintptr
	}
	bs struct {
		potrf         [4]func(h SolverHandle, uplo Fill, n int32, A DevicePtr, lda int32, lwork *int32) SolverStatus
		getrf         [4]func(h SolverHandle, m, n int32, A DevicePtr, lda int32, lwork *int32) SolverStatus
		geqrf         [2]func(h SolverHandle, m, n int32, A DevicePtr, lda int32, lwork *int32) SolverStatus
		orgqr         [2]func(h SolverHandle, m, n, k int32, A DevicePtr, lda int32, tau DevicePtr, lwork *int32) SolverStatus
		syevd         [2]func(h SolverHandle, jobz EigMode, uplo Fill, n int32, A DevicePtr, lda int32, W DevicePtr, lwork *int32) SolverStatus
		gesvd         [2]func(h SolverHandle, m, n int32, lwork *int32) SolverStatus
		syevjBatched  [2]func(h SolverHandle, jobz EigMode, uplo Fill, n int32, A DevicePtr, lda int32, W DevicePtr, lwork *int32, p SyevjInfo, batch int32) SolverStatus
		gesvdjBatched [2]func(h SolverHandle, jobz EigMode, m, n int32, A DevicePtr, lda int32, S, U DevicePtr, ldu int32, V DevicePtr, ldv int32, lwork *int32, p GesvdjInfo, batch int32) SolverStatus
	}
	cusolverDnCreate            func(h *SolverHandle) SolverStatus
	cusolverDnDestroy           func(h SolverHandle) SolverStatus
	cusolverGetVersion          func(v *int32) SolverStatus
	cusolverDnCreateSyevjInfo   func(p *SyevjInfo) SolverStatus
	cusolverDnDestroySyevjInfo  func(p SyevjInfo) SolverStatus
	cusolverDnCreateGesvdjInfo  func(p *GesvdjInfo) SolverStatus
	cusolverDnDestroyGesvdjInfo func(p GesvdjInfo) SolverStatus
}

var cusolverSpec = libSpec{
	what:    "libcusolver (cuSOLVER)",
	env:     "LOOM_LIBCUSOLVER",
	sonames: []string{"libcusolver.so.12", "libcusolver.so.11"},
	dirs:    stdDirs,
}

// LoadCUSOLVER opens libcusolver: the file named by $LOOM_LIBCUSOLVER, then
// libcusolver.so.12 (CUDA 13) and libcusolver.so.11 (CUDA 12) through the
// loader, then in the standard directories (as LoadCUBLAS). Errors are as
// for LoadDriver.
func LoadCUSOLVER() (*CUSOLVER, error) {
	return loadCUSOLVER(cusolverSpec.candidates(os.Getenv))
}

func loadCUSOLVER(cands []candidate) (*CUSOLVER, error) {
	s := &CUSOLVER{}
	p, err := load(cusolverSpec, cands, s.symbols())
	if err != nil {
		return nil, err
	}
	s.path = p
	return s, nil
}

func (s *CUSOLVER) symbols() []symbol {
	syms := []symbol{
		{"cusolverDnCreate", &s.cusolverDnCreate},
		{"cusolverDnDestroy", &s.cusolverDnDestroy},
		{"cusolverGetVersion", &s.cusolverGetVersion},
		{"cusolverDnSetStream", addrOf{&s.hot.setStream}},
		{"cusolverDnCreateSyevjInfo", &s.cusolverDnCreateSyevjInfo},
		{"cusolverDnDestroySyevjInfo", &s.cusolverDnDestroySyevjInfo},
		{"cusolverDnCreateGesvdjInfo", &s.cusolverDnCreateGesvdjInfo},
		{"cusolverDnDestroyGesvdjInfo", &s.cusolverDnDestroyGesvdjInfo},
	}
	for p := Single; p <= DoubleComplex; p++ {
		x := "cusolverDn" + p.String()
		syms = append(syms,
			symbol{x + "potrf", addrOf{&s.hot.potrf[p]}},
			symbol{x + "potrs", addrOf{&s.hot.potrs[p]}},
			symbol{x + "getrf", addrOf{&s.hot.getrf[p]}},
			symbol{x + "getrs", addrOf{&s.hot.getrs[p]}},
			symbol{x + "potrf_bufferSize", &s.bs.potrf[p]},
			symbol{x + "getrf_bufferSize", &s.bs.getrf[p]},
		)
		if !p.valid() {
			continue
		}
		syms = append(syms,
			symbol{x + "potrfBatched", addrOf{&s.hot.potrfBatched[p]}},
			symbol{x + "potrsBatched", addrOf{&s.hot.potrsBatched[p]}},
			symbol{x + "geqrf", addrOf{&s.hot.geqrf[p]}},
			symbol{x + "orgqr", addrOf{&s.hot.orgqr[p]}},
			symbol{x + "syevd", addrOf{&s.hot.syevd[p]}},
			symbol{x + "gesvd", addrOf{&s.hot.gesvd[p]}},
			symbol{x + "syevjBatched", addrOf{&s.hot.syevjBatched[p]}},
			symbol{x + "gesvdjBatched", addrOf{&s.hot.gesvdjBatched[p]}},
			symbol{x + "geqrf_bufferSize", &s.bs.geqrf[p]},
			symbol{x + "orgqr_bufferSize", &s.bs.orgqr[p]},
			symbol{x + "syevd_bufferSize", &s.bs.syevd[p]},
			symbol{x + "gesvd_bufferSize", &s.bs.gesvd[p]},
			symbol{x + "syevjBatched_bufferSize", &s.bs.syevjBatched[p]},
			symbol{x + "gesvdjBatched_bufferSize", &s.bs.gesvdjBatched[p]},
		)
	}
	return syms
}

// Path returns the file that was opened.
func (s *CUSOLVER) Path() string { return s.path }

// Version returns cuSOLVER's version, e.g. 11700 for 11.7.0:
// cusolverGetVersion.
func (s *CUSOLVER) Version() (int, error) {
	var v int32
	err := s.cusolverGetVersion(&v).err()
	return int(v), err
}

// Create creates a handle on the current context: cusolverDnCreate.
func (s *CUSOLVER) Create() (SolverHandle, error) {
	var h SolverHandle
	err := s.cusolverDnCreate(&h).err()
	return h, err
}

// Destroy destroys a handle: cusolverDnDestroy.
func (s *CUSOLVER) Destroy(h SolverHandle) error { return s.cusolverDnDestroy(h).err() }

// SetStream makes the handle queue its work on st: cusolverDnSetStream.
func (s *CUSOLVER) SetStream(h SolverHandle, st Stream) error {
	return s.call(s.hot.setStream, uintptr(h), uintptr(st))
}

// CreateSyevjInfo makes the default parameters of the Jacobi eigensolver
// (SyevjBatched): cusolverDnCreateSyevjInfo.
func (s *CUSOLVER) CreateSyevjInfo() (SyevjInfo, error) {
	var p SyevjInfo
	err := s.cusolverDnCreateSyevjInfo(&p).err()
	return p, err
}

// DestroySyevjInfo frees p: cusolverDnDestroySyevjInfo.
func (s *CUSOLVER) DestroySyevjInfo(p SyevjInfo) error { return s.cusolverDnDestroySyevjInfo(p).err() }

// CreateGesvdjInfo makes the default parameters of the Jacobi SVD
// (GesvdjBatched): cusolverDnCreateGesvdjInfo.
func (s *CUSOLVER) CreateGesvdjInfo() (GesvdjInfo, error) {
	var p GesvdjInfo
	err := s.cusolverDnCreateGesvdjInfo(&p).err()
	return p, err
}

// DestroyGesvdjInfo frees p: cusolverDnDestroyGesvdjInfo.
func (s *CUSOLVER) DestroyGesvdjInfo(p GesvdjInfo) error {
	return s.cusolverDnDestroyGesvdjInfo(p).err()
}

// cints converts dimensions to C ints, refusing those out of range.
func cints(fn string, vals ...int) (out [8]int32, err error) {
	for i, v := range vals {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return out, fmt.Errorf("cu: %s: argument %d does not fit a C int", fn, v)
		}
		out[i] = int32(v)
	}
	return out, nil
}

func (s *CUSOLVER) prec(fn string, p Precision) error {
	if !p.valid() {
		return errPrecision(fn, p)
	}
	return nil
}

// precC admits the complex precisions too (the Cholesky and LU routines).
func (s *CUSOLVER) precC(fn string, p Precision) error {
	if p > DoubleComplex {
		return errPrecision(fn, p)
	}
	return nil
}

// lwork returns a workspace query's result in elements.
func lwork(fn string, p Precision, st SolverStatus, n int32) (int, error) {
	if err := st.err(); err != nil {
		return 0, fmt.Errorf("cu: cusolverDn%s%s_bufferSize: %w", p, fn, err)
	}
	return int(n), nil
}

// All matrices below are column-major in device memory; lda and the other
// leading dimensions are in elements; lwork counts elements of the
// precision; info points at one device int (an array of batch ints for
// the batched routines).

// PotrfBufferSize is the workspace of Potrf in elements:
// cusolverDn[SD]potrf_bufferSize.
func (s *CUSOLVER) PotrfBufferSize(h SolverHandle, p Precision, uplo Fill, n int, A DevicePtr, lda int) (int, error) {
	v, err := cints("PotrfBufferSize", n, lda)
	if err == nil {
		err = s.precC("PotrfBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("potrf", p, s.bs.potrf[p](h, uplo, v[0], A, v[1], &lw), lw)
}

// Potrf factors the symmetric (Hermitian) positive definite n×n matrix A
// in place as L·Lᵀ (L·Lᴴ) (uplo Lower) or Uᵀ·U (Uᴴ·U) (Upper); *info > 0 is the order of the first
// minor that is not positive definite: cusolverDn[SD]potrf.
func (s *CUSOLVER) Potrf(h SolverHandle, p Precision, uplo Fill, n int, A DevicePtr, lda int, work DevicePtr, lwork int, info DevicePtr) error {
	v, err := cints("Potrf", n, lda, lwork)
	if err == nil {
		err = s.precC("Potrf", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.potrf[p], uintptr(h), uintptr(uplo), uintptr(v[0]), uintptr(A), uintptr(v[1]), uintptr(work), uintptr(v[2]), uintptr(info))
}

// Potrs solves A·X = B for the nrhs columns of B in place, with A factored
// by Potrf: cusolverDn[SD]potrs.
func (s *CUSOLVER) Potrs(h SolverHandle, p Precision, uplo Fill, n, nrhs int, A DevicePtr, lda int, B DevicePtr, ldb int, info DevicePtr) error {
	v, err := cints("Potrs", n, nrhs, lda, ldb)
	if err == nil {
		err = s.precC("Potrs", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.potrs[p], uintptr(h), uintptr(uplo), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]), uintptr(B), uintptr(v[3]), uintptr(info))
}

// PotrfBatched is Potrf of batch matrices whose device addresses are the
// batch elements of the device array Aarray; info holds batch ints:
// cusolverDn[SD]potrfBatched.
func (s *CUSOLVER) PotrfBatched(h SolverHandle, p Precision, uplo Fill, n int, Aarray DevicePtr, lda int, info DevicePtr, batch int) error {
	v, err := cints("PotrfBatched", n, lda, batch)
	if err == nil {
		err = s.prec("PotrfBatched", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.potrfBatched[p], uintptr(h), uintptr(uplo), uintptr(v[0]), uintptr(Aarray), uintptr(v[1]), uintptr(info), uintptr(v[2]))
}

// PotrsBatched is Potrs of batch systems (Aarray and Barray are device
// arrays of device addresses); cuSOLVER accepts only nrhs = 1, and info is
// one int: cusolverDn[SD]potrsBatched.
func (s *CUSOLVER) PotrsBatched(h SolverHandle, p Precision, uplo Fill, n, nrhs int, Aarray DevicePtr, lda int, Barray DevicePtr, ldb int, info DevicePtr, batch int) error {
	v, err := cints("PotrsBatched", n, nrhs, lda, ldb, batch)
	if err == nil {
		err = s.prec("PotrsBatched", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.potrsBatched[p], uintptr(h), uintptr(uplo), uintptr(v[0]), uintptr(v[1]), uintptr(Aarray), uintptr(v[2]),
		uintptr(Barray), uintptr(v[3]), uintptr(info), uintptr(v[4]))
}

// GetrfBufferSize is the workspace of Getrf in elements:
// cusolverDn[SD]getrf_bufferSize.
func (s *CUSOLVER) GetrfBufferSize(h SolverHandle, p Precision, m, n int, A DevicePtr, lda int) (int, error) {
	v, err := cints("GetrfBufferSize", m, n, lda)
	if err == nil {
		err = s.precC("GetrfBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("getrf", p, s.bs.getrf[p](h, v[0], v[1], A, v[2], &lw), lw)
}

// Getrf factors the m×n matrix A in place as P·L·U with partial pivoting;
// ipiv receives min(m,n) 1-based pivot rows (device ints) and *info > 0 is
// the first zero diagonal element of U: cusolverDn[SD]getrf.
func (s *CUSOLVER) Getrf(h SolverHandle, p Precision, m, n int, A DevicePtr, lda int, work, ipiv, info DevicePtr) error {
	v, err := cints("Getrf", m, n, lda)
	if err == nil {
		err = s.precC("Getrf", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.getrf[p], uintptr(h), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]), uintptr(work), uintptr(ipiv), uintptr(info))
}

// Getrs solves op(A)·X = B in place with A factored by Getrf (op: A, Aᵀ,
// or, ConjTrans, Aᴴ):
// cusolverDn[SD]getrs.
func (s *CUSOLVER) Getrs(h SolverHandle, p Precision, trans Op, n, nrhs int, A DevicePtr, lda int, ipiv, B DevicePtr, ldb int, info DevicePtr) error {
	v, err := cints("Getrs", n, nrhs, lda, ldb)
	if err == nil {
		err = s.precC("Getrs", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.getrs[p], uintptr(h), uintptr(trans), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]), uintptr(ipiv), uintptr(B), uintptr(v[3]), uintptr(info))
}

// GeqrfBufferSize is the workspace of Geqrf in elements:
// cusolverDn[SD]geqrf_bufferSize.
func (s *CUSOLVER) GeqrfBufferSize(h SolverHandle, p Precision, m, n int, A DevicePtr, lda int) (int, error) {
	v, err := cints("GeqrfBufferSize", m, n, lda)
	if err == nil {
		err = s.prec("GeqrfBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("geqrf", p, s.bs.geqrf[p](h, v[0], v[1], A, v[2], &lw), lw)
}

// Geqrf computes the QR factorisation of the m×n matrix A in place: R on
// and above the diagonal, the Householder vectors below it with their
// min(m,n) scalars in tau: cusolverDn[SD]geqrf.
func (s *CUSOLVER) Geqrf(h SolverHandle, p Precision, m, n int, A DevicePtr, lda int, tau, work DevicePtr, lwork int, info DevicePtr) error {
	v, err := cints("Geqrf", m, n, lda, lwork)
	if err == nil {
		err = s.prec("Geqrf", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.geqrf[p], uintptr(h), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]), uintptr(tau), uintptr(work), uintptr(v[3]), uintptr(info))
}

// OrgqrBufferSize is the workspace of Orgqr in elements:
// cusolverDn[SD]orgqr_bufferSize.
func (s *CUSOLVER) OrgqrBufferSize(h SolverHandle, p Precision, m, n, k int, A DevicePtr, lda int, tau DevicePtr) (int, error) {
	v, err := cints("OrgqrBufferSize", m, n, k, lda)
	if err == nil {
		err = s.prec("OrgqrBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("orgqr", p, s.bs.orgqr[p](h, v[0], v[1], v[2], A, v[3], tau, &lw), lw)
}

// Orgqr overwrites A (m×n, m >= n >= k) with the first n columns of the
// product of the k reflectors Geqrf left in A and tau: cusolverDn[SD]orgqr.
func (s *CUSOLVER) Orgqr(h SolverHandle, p Precision, m, n, k int, A DevicePtr, lda int, tau, work DevicePtr, lwork int, info DevicePtr) error {
	v, err := cints("Orgqr", m, n, k, lda, lwork)
	if err == nil {
		err = s.prec("Orgqr", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.orgqr[p], uintptr(h), uintptr(v[0]), uintptr(v[1]), uintptr(v[2]), uintptr(A), uintptr(v[3]), uintptr(tau), uintptr(work), uintptr(v[4]), uintptr(info))
}

// SyevdBufferSize is the workspace of Syevd in elements:
// cusolverDn[SD]syevd_bufferSize.
func (s *CUSOLVER) SyevdBufferSize(h SolverHandle, p Precision, jobz EigMode, uplo Fill, n int, A DevicePtr, lda int, W DevicePtr) (int, error) {
	v, err := cints("SyevdBufferSize", n, lda)
	if err == nil {
		err = s.prec("SyevdBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("syevd", p, s.bs.syevd[p](h, jobz, uplo, v[0], A, v[1], W, &lw), lw)
}

// Syevd computes the eigenvalues of the symmetric n×n matrix A (the uplo
// triangle is read) in ascending order into W and, with jobz Vectors, the
// orthonormal eigenvectors into the columns of A; *info > 0 counts the
// off-diagonal elements that did not converge: cusolverDn[SD]syevd.
func (s *CUSOLVER) Syevd(h SolverHandle, p Precision, jobz EigMode, uplo Fill, n int, A DevicePtr, lda int, W, work DevicePtr, lwork int, info DevicePtr) error {
	v, err := cints("Syevd", n, lda, lwork)
	if err == nil {
		err = s.prec("Syevd", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.syevd[p], uintptr(h), uintptr(jobz), uintptr(uplo), uintptr(v[0]), uintptr(A), uintptr(v[1]), uintptr(W), uintptr(work), uintptr(v[2]), uintptr(info))
}

// GesvdBufferSize is the workspace of Gesvd in elements:
// cusolverDn[SD]gesvd_bufferSize.
func (s *CUSOLVER) GesvdBufferSize(h SolverHandle, p Precision, m, n int) (int, error) {
	v, err := cints("GesvdBufferSize", m, n)
	if err == nil {
		err = s.prec("GesvdBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("gesvd", p, s.bs.gesvd[p](h, v[0], v[1], &lw), lw)
}

// Gesvd computes the SVD A = U·diag(S)·Vᵀ of the m×n matrix A (cuSOLVER
// requires m >= n), destroying A. jobu and jobvt are LAPACK's 'A' (all
// columns of U / rows of Vᵀ), 'S' (the first min(m,n)), 'O' (overwrite A)
// or 'N' (none); rwork (min(m,n)-1 elements, may be 0) receives the
// unconverged superdiagonal when *info > 0: cusolverDn[SD]gesvd.
func (s *CUSOLVER) Gesvd(h SolverHandle, p Precision, jobu, jobvt byte, m, n int, A DevicePtr, lda int, S, U DevicePtr, ldu int, VT DevicePtr, ldvt int, work DevicePtr, lwork int, rwork, info DevicePtr) error {
	v, err := cints("Gesvd", m, n, lda, ldu, ldvt, lwork)
	if err == nil {
		err = s.prec("Gesvd", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.gesvd[p], uintptr(h), uintptr(jobu), uintptr(jobvt), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]),
		uintptr(S), uintptr(U), uintptr(v[3]), uintptr(VT), uintptr(v[4]), uintptr(work), uintptr(v[5]), uintptr(rwork), uintptr(info))
}

// SyevjBatchedBufferSize is the workspace of SyevjBatched in elements:
// cusolverDn[SD]syevjBatched_bufferSize.
func (s *CUSOLVER) SyevjBatchedBufferSize(h SolverHandle, p Precision, jobz EigMode, uplo Fill, n int, A DevicePtr, lda int, W DevicePtr, params SyevjInfo, batch int) (int, error) {
	v, err := cints("SyevjBatchedBufferSize", n, lda, batch)
	if err == nil {
		err = s.prec("SyevjBatchedBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("syevjBatched", p, s.bs.syevjBatched[p](h, jobz, uplo, v[0], A, v[1], W, &lw, params, v[2]), lw)
}

// SyevjBatched is Syevd by Jacobi rotations of batch n×n matrices stored
// lda·n elements apart (cuSOLVER requires n <= 32), eigenvalues n apart in
// W, one info per matrix: cusolverDn[SD]syevjBatched.
func (s *CUSOLVER) SyevjBatched(h SolverHandle, p Precision, jobz EigMode, uplo Fill, n int, A DevicePtr, lda int, W, work DevicePtr, lwork int, info DevicePtr, params SyevjInfo, batch int) error {
	v, err := cints("SyevjBatched", n, lda, lwork, batch)
	if err == nil {
		err = s.prec("SyevjBatched", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.syevjBatched[p], uintptr(h), uintptr(jobz), uintptr(uplo), uintptr(v[0]), uintptr(A), uintptr(v[1]), uintptr(W),
		uintptr(work), uintptr(v[2]), uintptr(info), uintptr(params), uintptr(v[3]))
}

// GesvdjBatchedBufferSize is the workspace of GesvdjBatched in elements:
// cusolverDn[SD]gesvdjBatched_bufferSize.
func (s *CUSOLVER) GesvdjBatchedBufferSize(h SolverHandle, p Precision, jobz EigMode, m, n int, A DevicePtr, lda int, S, U DevicePtr, ldu int, V DevicePtr, ldv int, params GesvdjInfo, batch int) (int, error) {
	v, err := cints("GesvdjBatchedBufferSize", m, n, lda, ldu, ldv, batch)
	if err == nil {
		err = s.prec("GesvdjBatchedBufferSize", p)
	}
	if err != nil {
		return 0, err
	}
	var lw int32
	return lwork("gesvdjBatched", p, s.bs.gesvdjBatched[p](h, jobz, v[0], v[1], A, v[2], S, U, v[3], V, v[4], &lw, params, v[5]), lw)
}

// GesvdjBatched computes by Jacobi rotations the economy SVD
// A = U·diag(S)·Vᵀ of batch m×n matrices (cuSOLVER requires m, n <= 32)
// stored lda·n elements apart: S gets min(m,n) values per matrix, U m×m
// and V n×n (ldu·m and ldv·n apart; V, not Vᵀ), one info per matrix:
// cusolverDn[SD]gesvdjBatched.
func (s *CUSOLVER) GesvdjBatched(h SolverHandle, p Precision, jobz EigMode, m, n int, A DevicePtr, lda int, S, U DevicePtr, ldu int, V DevicePtr, ldv int, work DevicePtr, lwork int, info DevicePtr, params GesvdjInfo, batch int) error {
	v, err := cints("GesvdjBatched", m, n, lda, ldu, ldv, lwork, batch)
	if err == nil {
		err = s.prec("GesvdjBatched", p)
	}
	if err != nil {
		return err
	}
	return s.call(s.hot.gesvdjBatched[p], uintptr(h), uintptr(jobz), uintptr(v[0]), uintptr(v[1]), uintptr(A), uintptr(v[2]), uintptr(S),
		uintptr(U), uintptr(v[3]), uintptr(V), uintptr(v[4]), uintptr(work), uintptr(v[5]), uintptr(info), uintptr(params), uintptr(v[6]))
}

func (s *CUSOLVER) call(fn uintptr, args ...uintptr) error {
	return SolverStatus(int32(s.sc.call(fn, args...))).err()
}

// SolverStatus is a cusolverStatus_t. Every non-zero SolverStatus is an
// error.
type SolverStatus int32

// Some cusolverStatus_t values.
const (
	SolverSuccess         SolverStatus = 0 // CUSOLVER_STATUS_SUCCESS
	SolverNotInitialized  SolverStatus = 1 // CUSOLVER_STATUS_NOT_INITIALIZED
	SolverAllocFailed     SolverStatus = 2 // CUSOLVER_STATUS_ALLOC_FAILED
	SolverInvalidValue    SolverStatus = 3 // CUSOLVER_STATUS_INVALID_VALUE
	SolverExecutionFailed SolverStatus = 6 // CUSOLVER_STATUS_EXECUTION_FAILED
	SolverInternalError   SolverStatus = 7 // CUSOLVER_STATUS_INTERNAL_ERROR
	SolverNotSupported    SolverStatus = 9 // CUSOLVER_STATUS_NOT_SUPPORTED
)

var solverNames = map[SolverStatus][2]string{
	0:  {"CUSOLVER_STATUS_SUCCESS", "success"},
	1:  {"CUSOLVER_STATUS_NOT_INITIALIZED", "the library or handle was not initialized"},
	2:  {"CUSOLVER_STATUS_ALLOC_FAILED", "resource allocation failed"},
	3:  {"CUSOLVER_STATUS_INVALID_VALUE", "an invalid value was passed"},
	4:  {"CUSOLVER_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
	5:  {"CUSOLVER_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
	6:  {"CUSOLVER_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	7:  {"CUSOLVER_STATUS_INTERNAL_ERROR", "an internal operation failed"},
	8:  {"CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "the matrix type is not supported"},
	9:  {"CUSOLVER_STATUS_NOT_SUPPORTED", "the parameter combination is not supported"},
	10: {"CUSOLVER_STATUS_ZERO_PIVOT", "zero pivot"},
	11: {"CUSOLVER_STATUS_INVALID_LICENSE", "invalid license"},
}

// Error formats s as "CUSOLVER_STATUS_INVALID_VALUE (3): an invalid value
// was passed".
func (s SolverStatus) Error() string {
	if n, ok := solverNames[s]; ok {
		return fmt.Sprintf("%s (%d): %s", n[0], int32(s), n[1])
	}
	return fmt.Sprintf("cusolverStatus_t(%d)", int32(s))
}

func (s SolverStatus) err() error {
	if s == SolverSuccess {
		return nil
	}
	return s
}
