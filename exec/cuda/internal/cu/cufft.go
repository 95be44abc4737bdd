//go:build linux

package cu

import (
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/ebitengine/purego"
)

// FFTHandle is a cufftHandle (a C int naming a plan).
type FFTHandle int32

// FFTType is a cufftType: the transform's input and output kinds.
type FFTType int32

// The cufftType values of cufft.h.
const (
	FFTR2C FFTType = 0x2a // CUFFT_R2C: float -> complex64
	FFTC2R FFTType = 0x2c // CUFFT_C2R: complex64 -> float
	FFTC2C FFTType = 0x29 // CUFFT_C2C: complex64 -> complex64
	FFTD2Z FFTType = 0x6a // CUFFT_D2Z: double -> complex128
	FFTZ2D FFTType = 0x6c // CUFFT_Z2D: complex128 -> double
	FFTZ2Z FFTType = 0x69 // CUFFT_Z2Z: complex128 -> complex128
)

// String names t as cufft.h does ("CUFFT_C2C").
func (t FFTType) String() string {
	switch t {
	case FFTR2C:
		return "CUFFT_R2C"
	case FFTC2R:
		return "CUFFT_C2R"
	case FFTC2C:
		return "CUFFT_C2C"
	case FFTD2Z:
		return "CUFFT_D2Z"
	case FFTZ2D:
		return "CUFFT_Z2D"
	case FFTZ2Z:
		return "CUFFT_Z2Z"
	}
	return fmt.Sprintf("cufftType(%#x)", int32(t))
}

// The directions of the complex-to-complex transforms (CUFFT_FORWARD and
// CUFFT_INVERSE): the sign of the exponent. Neither direction scales.
const (
	FFTForward = -1
	FFTInverse = 1
)

// CUFFT is the loaded cuFFT library (libcufft). Plans are made once (Create,
// SetAutoAllocation, MakePlanMany, SetWorkArea) and executed many times on
// the plan's stream; the execution functions and SetStream go through
// purego.SyscallN, which does not allocate. Make the calls from the
// goroutine that holds the current context (see the package comment).
type CUFFT struct {
	path string
	sc   wideCaller
	hot  struct {
		cufftSetStream                                                                     uintptr
		cufftExecC2C, cufftExecZ2Z, cufftExecR2C, cufftExecD2Z, cufftExecC2R, cufftExecZ2D uintptr
		cufftSetWorkArea                                                                   uintptr
	}

	cufftCreate            func(h *FFTHandle) FFTResult
	cufftDestroy           func(h FFTHandle) FFTResult
	cufftGetVersion        func(v *int32) FFTResult
	cufftSetAutoAllocation func(h FFTHandle, auto int32) FFTResult
	cufftMakePlanMany64    func(h FFTHandle, rank int32, n *int64, inembed *int64, istride, idist int64,
		onembed *int64, ostride, odist int64, typ FFTType, batch int64, workSize *uint64) FFTResult
}

var cufftSpec = libSpec{
	what:    "libcufft (cuFFT)",
	env:     "LOOM_LIBCUFFT",
	sonames: []string{"libcufft.so.12", "libcufft.so.11"},
	dirs:    stdDirs,
}

// LoadCUFFT opens libcufft: the file named by $LOOM_LIBCUFFT, then
// libcufft.so.12 (CUDA 13) and libcufft.so.11 (CUDA 12) through the loader,
// then in the standard directories (as LoadCUBLAS). Errors are as for
// LoadDriver.
func LoadCUFFT() (*CUFFT, error) {
	return loadCUFFT(cufftSpec.candidates(os.Getenv))
}

func loadCUFFT(cands []candidate) (*CUFFT, error) {
	f := &CUFFT{}
	p, err := load(cufftSpec, cands, f.symbols())
	if err != nil {
		return nil, err
	}
	f.path = p
	return f, nil
}

func (f *CUFFT) symbols() []symbol {
	return []symbol{
		{"cufftCreate", &f.cufftCreate},
		{"cufftDestroy", &f.cufftDestroy},
		{"cufftGetVersion", &f.cufftGetVersion},
		{"cufftSetAutoAllocation", &f.cufftSetAutoAllocation},
		{"cufftMakePlanMany64", &f.cufftMakePlanMany64},
		{"cufftSetWorkArea", addrOf{&f.hot.cufftSetWorkArea}},
		{"cufftSetStream", addrOf{&f.hot.cufftSetStream}},
		{"cufftExecC2C", addrOf{&f.hot.cufftExecC2C}},
		{"cufftExecZ2Z", addrOf{&f.hot.cufftExecZ2Z}},
		{"cufftExecR2C", addrOf{&f.hot.cufftExecR2C}},
		{"cufftExecD2Z", addrOf{&f.hot.cufftExecD2Z}},
		{"cufftExecC2R", addrOf{&f.hot.cufftExecC2R}},
		{"cufftExecZ2D", addrOf{&f.hot.cufftExecZ2D}},
	}
}

// Path returns the file that was opened.
func (f *CUFFT) Path() string { return f.path }

// Version returns cuFFT's version, e.g. 11300 for 11.3.0: cufftGetVersion.
func (f *CUFFT) Version() (int, error) {
	var v int32
	err := f.cufftGetVersion(&v).err()
	return int(v), err
}

// Create makes an empty plan: cufftCreate.
func (f *CUFFT) Create() (FFTHandle, error) {
	var h FFTHandle
	err := f.cufftCreate(&h).err()
	return h, err
}

// Destroy frees a plan: cufftDestroy.
func (f *CUFFT) Destroy(h FFTHandle) error { return f.cufftDestroy(h).err() }

// SetAutoAllocation says whether cuFFT allocates the plan's work area
// itself (the default) or the caller provides it with SetWorkArea; call it
// between Create and MakePlanMany: cufftSetAutoAllocation.
func (f *CUFFT) SetAutoAllocation(h FFTHandle, auto bool) error {
	v := int32(0)
	if auto {
		v = 1
	}
	return f.cufftSetAutoAllocation(h, v).err()
}

// SetWorkArea gives the plan its work area, of at least the size
// MakePlanMany returned: cufftSetWorkArea.
func (f *CUFFT) SetWorkArea(h FFTHandle, work DevicePtr) error {
	return f.call(f.hot.cufftSetWorkArea, uintptr(h), uintptr(work))
}

// SetStream makes the plan's executions run on s: cufftSetStream.
func (f *CUFFT) SetStream(h FFTHandle, s Stream) error {
	return f.call(f.hot.cufftSetStream, uintptr(h), uintptr(s))
}

// FFTLayout is the advanced data layout of cufftMakePlanMany64: Batch
// transforms of the sizes N (rank len(N), outermost first). Element
// (x_0, ..., x_{r-1}) of transform b of the input is at
// b·InDist + ((x_0·InEmbed[1] + x_1)·InEmbed[2] + ...)·InStride, and
// likewise for the output; InEmbed[0] is not read. A nil InEmbed (and
// OutEmbed; both or neither) is the basic layout: contiguous transforms,
// the strides and distances ignored. For R2C and D2Z the output's last
// dimension is N[r-1]/2+1; for C2R and Z2D the input's.
type FFTLayout struct {
	N                  []int64
	InEmbed            []int64
	InStride, InDist   int64
	OutEmbed           []int64
	OutStride, OutDist int64
	Batch              int64
}

// MakePlanMany plans the transforms of layout l of type t on an empty plan
// and returns the size in bytes of the work area the plan needs:
// cufftMakePlanMany64.
func (f *CUFFT) MakePlanMany(h FFTHandle, l FFTLayout, t FFTType) (int64, error) {
	r := len(l.N)
	if r < 1 || r > 3 {
		return 0, fmt.Errorf("cu: MakePlanMany: rank %d (cuFFT plans ranks 1 to 3)", r)
	}
	if (l.InEmbed == nil) != (l.OutEmbed == nil) || (l.InEmbed != nil && (len(l.InEmbed) != r || len(l.OutEmbed) != r)) {
		return 0, fmt.Errorf("cu: MakePlanMany: embeddings of %d and %d dimensions for rank %d", len(l.InEmbed), len(l.OutEmbed), r)
	}
	var ie, oe *int64
	if l.InEmbed != nil {
		ie, oe = &l.InEmbed[0], &l.OutEmbed[0]
	}
	var ws uint64
	err := f.cufftMakePlanMany64(h, int32(r), &l.N[0], ie, l.InStride, l.InDist, oe, l.OutStride, l.OutDist, t, l.Batch, &ws).err()
	if err != nil {
		return 0, err
	}
	if ws > math.MaxInt64 {
		return 0, fmt.Errorf("cu: MakePlanMany: work area of %d bytes", ws)
	}
	return int64(ws), nil
}

// Exec runs plan h of type t from in to out (which may be the same
// buffer). dir is FFTForward or FFTInverse for the complex-to-complex
// types and ignored for the others (R2C and D2Z are forward, C2R and Z2D
// inverse). No transform is scaled: cufftExecC2C, cufftExecZ2Z,
// cufftExecR2C, cufftExecD2Z, cufftExecC2R, cufftExecZ2D.
func (f *CUFFT) Exec(h FFTHandle, t FFTType, in, out DevicePtr, dir int) error {
	switch t {
	case FFTC2C:
		return f.call(f.hot.cufftExecC2C, uintptr(h), uintptr(in), uintptr(out), uintptr(int64(dir)))
	case FFTZ2Z:
		return f.call(f.hot.cufftExecZ2Z, uintptr(h), uintptr(in), uintptr(out), uintptr(int64(dir)))
	case FFTR2C:
		return f.call(f.hot.cufftExecR2C, uintptr(h), uintptr(in), uintptr(out))
	case FFTD2Z:
		return f.call(f.hot.cufftExecD2Z, uintptr(h), uintptr(in), uintptr(out))
	case FFTC2R:
		return f.call(f.hot.cufftExecC2R, uintptr(h), uintptr(in), uintptr(out))
	case FFTZ2D:
		return f.call(f.hot.cufftExecZ2D, uintptr(h), uintptr(in), uintptr(out))
	}
	return fmt.Errorf("cu: cufftExec: %v is not a transform type", t)
}

func (f *CUFFT) call(fn uintptr, args ...uintptr) error {
	return FFTResult(int32(f.sc.call(fn, args...))).err()
}

// FFTResult is a cufftResult. Every non-zero FFTResult is an error.
type FFTResult int32

// Some cufftResult values.
const (
	FFTSuccess      FFTResult = 0  // CUFFT_SUCCESS
	FFTInvalidPlan  FFTResult = 1  // CUFFT_INVALID_PLAN
	FFTAllocFailed  FFTResult = 2  // CUFFT_ALLOC_FAILED
	FFTInvalidType  FFTResult = 3  // CUFFT_INVALID_TYPE
	FFTInvalidValue FFTResult = 4  // CUFFT_INVALID_VALUE
	FFTExecFailed   FFTResult = 6  // CUFFT_EXEC_FAILED
	FFTInvalidSize  FFTResult = 8  // CUFFT_INVALID_SIZE
	FFTNoWorkspace  FFTResult = 13 // CUFFT_NO_WORKSPACE
)

var fftNames = map[FFTResult][2]string{
	0:  {"CUFFT_SUCCESS", "success"},
	1:  {"CUFFT_INVALID_PLAN", "the plan handle is not a valid plan"},
	2:  {"CUFFT_ALLOC_FAILED", "cuFFT failed to allocate GPU or CPU memory"},
	3:  {"CUFFT_INVALID_TYPE", "the transform type is not supported"},
	4:  {"CUFFT_INVALID_VALUE", "a bad pointer or parameter was given"},
	5:  {"CUFFT_INTERNAL_ERROR", "an internal driver error"},
	6:  {"CUFFT_EXEC_FAILED", "the transform failed to execute on the GPU"},
	7:  {"CUFFT_SETUP_FAILED", "the cuFFT library failed to initialize"},
	8:  {"CUFFT_INVALID_SIZE", "the transform size is not supported"},
	9:  {"CUFFT_UNALIGNED_DATA", "the data are not aligned"},
	10: {"CUFFT_INCOMPLETE_PARAMETER_LIST", "a parameter is missing"},
	11: {"CUFFT_INVALID_DEVICE", "execution of a plan on a different GPU than the one it was made on"},
	12: {"CUFFT_PARSE_ERROR", "internal plan database error"},
	13: {"CUFFT_NO_WORKSPACE", "no work area was provided before execution"},
	14: {"CUFFT_NOT_IMPLEMENTED", "the functionality is not implemented"},
	15: {"CUFFT_LICENSE_ERROR", "license error"},
	16: {"CUFFT_NOT_SUPPORTED", "the operation is not supported for these parameters"},
}

// Error formats r as "CUFFT_INVALID_SIZE (8): the transform size is not
// supported".
func (r FFTResult) Error() string {
	if n, ok := fftNames[r]; ok {
		return fmt.Sprintf("%s (%d): %s", n[0], int32(r), n[1])
	}
	return fmt.Sprintf("cufftResult(%d)", int32(r))
}

func (r FFTResult) err() error {
	if r == FFTSuccess {
		return nil
	}
	return r
}

// wideCaller is caller (driver.go) for the cuFFT and cuSOLVER functions,
// which take up to 20 arguments.
type wideCaller struct {
	mu  sync.Mutex
	buf [20]uintptr
}

func (c *wideCaller) call(fn uintptr, args ...uintptr) uintptr {
	c.mu.Lock()
	n := copy(c.buf[:], args)
	r, _, _ := purego.SyscallN(fn, c.buf[:n]...)
	c.mu.Unlock()
	return r
}
