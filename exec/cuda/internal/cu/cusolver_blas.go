//go:build linux

package cu

import (
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// Side is a cublasSideMode_t: whether the triangular matrix of Trsm
// multiplies from the left or the right.
type Side int32

const (
	Left  Side = 0 // CUBLAS_SIDE_LEFT
	Right Side = 1 // CUBLAS_SIDE_RIGHT
)

// Diag is a cublasDiagType_t: whether a triangular matrix has a unit
// diagonal (not read).
type Diag int32

const (
	NonUnit Diag = 0 // CUBLAS_DIAG_NON_UNIT
	Unit    Diag = 1 // CUBLAS_DIAG_UNIT
)

// BLASSolve is the part of cuBLAS that the linear-algebra kernels use
// beside cuSOLVER: the triangular solves and the batched LU of small
// matrices. It is loaded from the same library as CUBLAS (found the same
// way, $LOOM_LIBCUBLAS first) and uses CUBLAS's handles. Every call goes
// through purego.SyscallN.
type BLASSolve struct {
	path string
	sc   wideCaller
	hot  struct {
		trsm, trsmBatched, getrfBatched, getrsBatched [2]uintptr
	}
	// scal holds the host scalars cuBLAS reads through pointers, in
	// memory that does not move, under mu.
	mu   sync.Mutex
	scal *struct {
		alpha32 float32
		alpha64 float64
		info    int32
	}
}

// LoadBLASSolve opens libcublas as LoadCUBLAS and binds the routines of
// BLASSolve.
func LoadBLASSolve() (*BLASSolve, error) {
	return loadBLASSolve(cublasSpec.candidates(os.Getenv))
}

func loadBLASSolve(cands []candidate) (*BLASSolve, error) {
	b := &BLASSolve{}
	b.scal = &struct {
		alpha32 float32
		alpha64 float64
		info    int32
	}{}
	p, err := load(cublasSpec, cands, b.symbols())
	if err != nil {
		return nil, err
	}
	b.path = p
	return b, nil
}

func (b *BLASSolve) symbols() []symbol {
	var syms []symbol
	for p := Single; p <= Double; p++ {
		x := "cublas" + p.String()
		syms = append(syms,
			symbol{x + "trsm_v2", addrOf{&b.hot.trsm[p]}},
			symbol{x + "trsmBatched", addrOf{&b.hot.trsmBatched[p]}},
			symbol{x + "getrfBatched", addrOf{&b.hot.getrfBatched[p]}},
			symbol{x + "getrsBatched", addrOf{&b.hot.getrsBatched[p]}},
		)
	}
	return syms
}

// Path returns the file that was opened.
func (b *BLASSolve) Path() string { return b.path }

func (b *BLASSolve) call(fn uintptr, args ...uintptr) error {
	return BLASStatus(int32(b.sc.call(fn, args...))).err()
}

// alpha stores alpha in host memory that does not move and returns its
// address; the caller holds b.mu until the call returns.
func (b *BLASSolve) alpha(p Precision, a float64) uintptr {
	if p == Double {
		b.scal.alpha64 = a
		return uintptrOf(&b.scal.alpha64)
	}
	b.scal.alpha32 = float32(a)
	return uintptrOf(&b.scal.alpha32)
}

// Trsm solves op(A)·X = alpha·B (side Left; A m×m) or X·op(A) = alpha·B
// (Right; A n×n) for the m×n matrix B in place, A triangular (the uplo
// triangle): cublas[SD]trsm_v2.
func (b *BLASSolve) Trsm(h Handle, p Precision, side Side, uplo Fill, trans Op, diag Diag, m, n int, alpha float64, A DevicePtr, lda int, B DevicePtr, ldb int) error {
	v, err := cints("Trsm", m, n, lda, ldb)
	if err == nil && !p.valid() {
		err = errPrecision("Trsm", p)
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.alpha(p, alpha)
	return b.call(b.hot.trsm[p], uintptr(h), uintptr(side), uintptr(uplo), uintptr(trans), uintptr(diag), uintptr(v[0]), uintptr(v[1]),
		a, uintptr(A), uintptr(v[2]), uintptr(B), uintptr(v[3]))
}

// TrsmBatched is Trsm of batch problems whose matrices' device addresses
// are in the device arrays Aarray and Barray: cublas[SD]trsmBatched.
func (b *BLASSolve) TrsmBatched(h Handle, p Precision, side Side, uplo Fill, trans Op, diag Diag, m, n int, alpha float64, Aarray DevicePtr, lda int, Barray DevicePtr, ldb int, batch int) error {
	v, err := cints("TrsmBatched", m, n, lda, ldb, batch)
	if err == nil && !p.valid() {
		err = errPrecision("TrsmBatched", p)
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.alpha(p, alpha)
	return b.call(b.hot.trsmBatched[p], uintptr(h), uintptr(side), uintptr(uplo), uintptr(trans), uintptr(diag), uintptr(v[0]), uintptr(v[1]),
		a, uintptr(Aarray), uintptr(v[2]), uintptr(Barray), uintptr(v[3]), uintptr(v[4]))
}

// GetrfBatched factors batch n×n matrices (device addresses in the device
// array Aarray) in place as P·L·U with partial pivoting (P: batch·n device
// ints, 1-based; info: batch device ints, > 0 for a zero pivot):
// cublas[SD]getrfBatched.
func (b *BLASSolve) GetrfBatched(h Handle, p Precision, n int, Aarray DevicePtr, lda int, P, info DevicePtr, batch int) error {
	v, err := cints("GetrfBatched", n, lda, batch)
	if err == nil && !p.valid() {
		err = errPrecision("GetrfBatched", p)
	}
	if err != nil {
		return err
	}
	return b.call(b.hot.getrfBatched[p], uintptr(h), uintptr(v[0]), uintptr(Aarray), uintptr(v[1]), uintptr(P), uintptr(info), uintptr(v[2]))
}

// GetrsBatched solves op(A_i)·X_i = B_i in place for batch systems
// factored by GetrfBatched. cuBLAS reports a bad argument in a host int,
// returned here as the second result (0: none, -i: argument i):
// cublas[SD]getrsBatched.
func (b *BLASSolve) GetrsBatched(h Handle, p Precision, trans Op, n, nrhs int, Aarray DevicePtr, lda int, P, Barray DevicePtr, ldb int, batch int) (int, error) {
	v, err := cints("GetrsBatched", n, nrhs, lda, ldb, batch)
	if err == nil && !p.valid() {
		err = errPrecision("GetrsBatched", p)
	}
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.scal.info = 0
	err = b.call(b.hot.getrsBatched[p], uintptr(h), uintptr(trans), uintptr(v[0]), uintptr(v[1]), uintptr(Aarray), uintptr(v[2]), uintptr(P),
		uintptr(Barray), uintptr(v[3]), uintptrOf(&b.scal.info), uintptr(v[4]))
	return int(b.scal.info), err
}

func uintptrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

func errPrecision(fn string, p Precision) error { return fmt.Errorf("cu: %s: precision %d", fn, p) }
