//go:build linux

package cu

import (
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"
)

// Handle is a cublasHandle_t.
type Handle uintptr

// cublasOperation_t values.
const (
	opN int32 = 0 // CUBLAS_OP_N
	opT int32 = 1 // CUBLAS_OP_T
)

// CUBLAS is the loaded cuBLAS library (libcublas). Its calls are
// asynchronous on the handle's stream; make them from the goroutine that
// holds the current context (see the package comment).
type CUBLAS struct {
	path string

	// hot are called per matrix product, through purego.SyscallN (which
	// does not allocate); scal holds their alpha and beta, which cuBLAS
	// reads through host pointers, in memory that does not move.
	hot struct {
		cublasSetStream_v2, cublasSgemm_v2, cublasDgemm_v2, cublasCgemm_v2, cublasZgemm_v2 uintptr
	}
	sc   caller
	mu   sync.Mutex
	scal *scalars

	cublasCreate_v2           func(h *Handle) BLASStatus
	cublasDestroy_v2          func(h Handle) BLASStatus
	cublasGetVersion_v2       func(h Handle, v *int32) BLASStatus
	cublasSgemmStridedBatched func(h Handle, ta, tb, m, n, k int32, alpha *float32, A DevicePtr, lda int32, strideA int64,
		B DevicePtr, ldb int32, strideB int64, beta *float32, C DevicePtr, ldc int32, strideC int64, batch int32) BLASStatus
	cublasDgemmStridedBatched func(h Handle, ta, tb, m, n, k int32, alpha *float64, A DevicePtr, lda int32, strideA int64,
		B DevicePtr, ldb int32, strideB int64, beta *float64, C DevicePtr, ldc int32, strideC int64, batch int32) BLASStatus
	// The complex ones: cuComplex and cuDoubleComplex are laid out as Go's
	// complex64 and complex128 (the real part, then the imaginary part).
	cublasCgemmStridedBatched func(h Handle, ta, tb, m, n, k int32, alpha *complex64, A DevicePtr, lda int32, strideA int64,
		B DevicePtr, ldb int32, strideB int64, beta *complex64, C DevicePtr, ldc int32, strideC int64, batch int32) BLASStatus
	cublasZgemmStridedBatched func(h Handle, ta, tb, m, n, k int32, alpha *complex128, A DevicePtr, lda int32, strideA int64,
		B DevicePtr, ldb int32, strideB int64, beta *complex128, C DevicePtr, ldc int32, strideC int64, batch int32) BLASStatus
}

// LoadCUBLAS opens libcublas: the file named by $LOOM_LIBCUBLAS, then
// libcublas.so.13 and libcublas.so.12 through the loader, then in
// $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/nvidia/lib64 and
// /usr/lib/x86_64-linux-gnu. Errors are as for LoadDriver.
func LoadCUBLAS() (*CUBLAS, error) {
	return loadCUBLAS(cublasSpec.candidates(os.Getenv))
}

func loadCUBLAS(cands []candidate) (*CUBLAS, error) {
	b := &CUBLAS{scal: new(scalars)}
	p, err := load(cublasSpec, cands, b.symbols())
	if err != nil {
		return nil, err
	}
	b.path = p
	return b, nil
}

func (b *CUBLAS) symbols() []symbol {
	return []symbol{
		{"cublasCreate_v2", &b.cublasCreate_v2},
		{"cublasDestroy_v2", &b.cublasDestroy_v2},
		{"cublasSetStream_v2", addrOf{&b.hot.cublasSetStream_v2}},
		{"cublasGetVersion_v2", &b.cublasGetVersion_v2},
		{"cublasSgemm_v2", addrOf{&b.hot.cublasSgemm_v2}},
		{"cublasDgemm_v2", addrOf{&b.hot.cublasDgemm_v2}},
		{"cublasSgemmStridedBatched", &b.cublasSgemmStridedBatched},
		{"cublasDgemmStridedBatched", &b.cublasDgemmStridedBatched},
		{"cublasCgemm_v2", addrOf{&b.hot.cublasCgemm_v2}},
		{"cublasZgemm_v2", addrOf{&b.hot.cublasZgemm_v2}},
		{"cublasCgemmStridedBatched", &b.cublasCgemmStridedBatched},
		{"cublasZgemmStridedBatched", &b.cublasZgemmStridedBatched},
	}
}

// Path returns the file that was opened.
func (b *CUBLAS) Path() string { return b.path }

// Create creates a handle on the current context, with the default
// (host) pointer mode and the legacy default stream: cublasCreate_v2.
func (b *CUBLAS) Create() (Handle, error) {
	var h Handle
	err := b.cublasCreate_v2(&h).err()
	return h, err
}

// Destroy destroys a handle: cublasDestroy_v2.
func (b *CUBLAS) Destroy(h Handle) error { return b.cublasDestroy_v2(h).err() }

// SetStream makes the handle queue its work on s: cublasSetStream_v2.
func (b *CUBLAS) SetStream(h Handle, s Stream) error {
	return b.call(b.hot.cublasSetStream_v2, uintptr(h), uintptr(s))
}

// Version returns cuBLAS's version, e.g. 130001 for 13.0.1:
// cublasGetVersion_v2.
func (b *CUBLAS) Version(h Handle) (int, error) {
	var v int32
	err := b.cublasGetVersion_v2(h, &v).err()
	return int(v), err
}

func op(trans bool) int32 {
	if trans {
		return opT
	}
	return opN
}

// scalars are gemm's alpha and beta, on the heap.
type scalars struct {
	a32, b32     float32
	a64, b64     float64
	ac64, bc64   complex64
	ac128, bc128 complex128
}

// call calls a cuBLAS function and returns its status as an error.
func (b *CUBLAS) call(fn uintptr, args ...uintptr) error {
	return BLASStatus(int32(b.sc.call(fn, args...))).err()
}

// ints converts gemm dimensions to C ints, refusing those out of range.
func ints(fn string, vals ...int) (out [7]int32, err error) {
	for i, v := range vals {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return out, fmt.Errorf("cu: %s: argument %d does not fit a C int", fn, v)
		}
		out[i] = int32(v)
	}
	return out, nil
}

// gemmV2 calls a cublas?gemm_v2 (fn, named name) with the scalars alpha
// and beta stored in the handle's slots as and bs (host memory that
// outlives the call, written under the lock), without allocating.
func gemmV2[T float32 | float64 | complex64 | complex128](b *CUBLAS, name string, fn uintptr, as, bs *T, h Handle, transA, transB bool, m, n, k int, alpha T, A DevicePtr, lda int, B DevicePtr, ldb int, beta T, C DevicePtr, ldc int) error {
	v, err := ints(name, m, n, k, lda, ldb, ldc)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	*as, *bs = alpha, beta
	return b.call(fn, uintptr(h), uintptr(op(transA)), uintptr(op(transB)), uintptr(v[0]), uintptr(v[1]), uintptr(v[2]),
		uintptr(unsafe.Pointer(as)), uintptr(A), uintptr(v[3]), uintptr(B), uintptr(v[4]), uintptr(unsafe.Pointer(bs)), uintptr(C), uintptr(v[5]))
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32 with cuBLAS's
// column-major layout: op(A) is m×k, op(B) is k×n, C is m×n, and
// op(X) is Xᵀ when transX is true (CUBLAS_OP_T), X otherwise (CUBLAS_OP_N).
// alpha and beta are passed as host pointers: cublasSgemm_v2.
func (b *CUBLAS) Sgemm(h Handle, transA, transB bool, m, n, k int, alpha float32, A DevicePtr, lda int, B DevicePtr, ldb int, beta float32, C DevicePtr, ldc int) error {
	return gemmV2(b, "Sgemm", b.hot.cublasSgemm_v2, &b.scal.a32, &b.scal.b32, h, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
}

// Dgemm is Sgemm in float64: cublasDgemm_v2.
func (b *CUBLAS) Dgemm(h Handle, transA, transB bool, m, n, k int, alpha float64, A DevicePtr, lda int, B DevicePtr, ldb int, beta float64, C DevicePtr, ldc int) error {
	return gemmV2(b, "Dgemm", b.hot.cublasDgemm_v2, &b.scal.a64, &b.scal.b64, h, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
}

// SgemmStridedBatched computes batch independent Sgemm products, the i-th
// on A+i·strideA, B+i·strideB and C+i·strideC (strides in elements):
// cublasSgemmStridedBatched.
func (b *CUBLAS) SgemmStridedBatched(h Handle, transA, transB bool, m, n, k int, alpha float32, A DevicePtr, lda int, strideA int64, B DevicePtr, ldb int, strideB int64, beta float32, C DevicePtr, ldc int, strideC int64, batch int) error {
	v, err := ints("SgemmStridedBatched", m, n, k, lda, ldb, ldc, batch)
	if err != nil {
		return err
	}
	return b.cublasSgemmStridedBatched(h, op(transA), op(transB), v[0], v[1], v[2], &alpha, A, v[3], strideA,
		B, v[4], strideB, &beta, C, v[5], strideC, v[6]).err()
}

// DgemmStridedBatched is SgemmStridedBatched in float64:
// cublasDgemmStridedBatched.
func (b *CUBLAS) DgemmStridedBatched(h Handle, transA, transB bool, m, n, k int, alpha float64, A DevicePtr, lda int, strideA int64, B DevicePtr, ldb int, strideB int64, beta float64, C DevicePtr, ldc int, strideC int64, batch int) error {
	v, err := ints("DgemmStridedBatched", m, n, k, lda, ldb, ldc, batch)
	if err != nil {
		return err
	}
	return b.cublasDgemmStridedBatched(h, op(transA), op(transB), v[0], v[1], v[2], &alpha, A, v[3], strideA,
		B, v[4], strideB, &beta, C, v[5], strideC, v[6]).err()
}

// Cgemm is Sgemm in complex64 (cuComplex): cublasCgemm_v2. op(X) is X
// or Xᵀ (CUBLAS_OP_T); the conjugate transpose (CUBLAS_OP_C) is not
// bound, as loom's MatMul has no use for it.
func (b *CUBLAS) Cgemm(h Handle, transA, transB bool, m, n, k int, alpha complex64, A DevicePtr, lda int, B DevicePtr, ldb int, beta complex64, C DevicePtr, ldc int) error {
	return gemmV2(b, "Cgemm", b.hot.cublasCgemm_v2, &b.scal.ac64, &b.scal.bc64, h, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
}

// Zgemm is Sgemm in complex128 (cuDoubleComplex): cublasZgemm_v2.
func (b *CUBLAS) Zgemm(h Handle, transA, transB bool, m, n, k int, alpha complex128, A DevicePtr, lda int, B DevicePtr, ldb int, beta complex128, C DevicePtr, ldc int) error {
	return gemmV2(b, "Zgemm", b.hot.cublasZgemm_v2, &b.scal.ac128, &b.scal.bc128, h, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
}

// CgemmStridedBatched is SgemmStridedBatched in complex64:
// cublasCgemmStridedBatched.
func (b *CUBLAS) CgemmStridedBatched(h Handle, transA, transB bool, m, n, k int, alpha complex64, A DevicePtr, lda int, strideA int64, B DevicePtr, ldb int, strideB int64, beta complex64, C DevicePtr, ldc int, strideC int64, batch int) error {
	v, err := ints("CgemmStridedBatched", m, n, k, lda, ldb, ldc, batch)
	if err != nil {
		return err
	}
	return b.cublasCgemmStridedBatched(h, op(transA), op(transB), v[0], v[1], v[2], &alpha, A, v[3], strideA,
		B, v[4], strideB, &beta, C, v[5], strideC, v[6]).err()
}

// ZgemmStridedBatched is SgemmStridedBatched in complex128:
// cublasZgemmStridedBatched.
func (b *CUBLAS) ZgemmStridedBatched(h Handle, transA, transB bool, m, n, k int, alpha complex128, A DevicePtr, lda int, strideA int64, B DevicePtr, ldb int, strideB int64, beta complex128, C DevicePtr, ldc int, strideC int64, batch int) error {
	v, err := ints("ZgemmStridedBatched", m, n, k, lda, ldb, ldc, batch)
	if err != nil {
		return err
	}
	return b.cublasZgemmStridedBatched(h, op(transA), op(transB), v[0], v[1], v[2], &alpha, A, v[3], strideA,
		B, v[4], strideB, &beta, C, v[5], strideC, v[6]).err()
}
