//go:build linux

package cu

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Result is a CUresult, the status of a driver call. Every non-zero Result
// is an error.
type Result int32

// Some CUresult values.
const (
	Success              Result = 0   // CUDA_SUCCESS
	ErrorInvalidValue    Result = 1   // CUDA_ERROR_INVALID_VALUE
	ErrorOutOfMemory     Result = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrorNotInitialized  Result = 3   // CUDA_ERROR_NOT_INITIALIZED
	ErrorNoDevice        Result = 100 // CUDA_ERROR_NO_DEVICE
	ErrorInvalidDevice   Result = 101 // CUDA_ERROR_INVALID_DEVICE
	ErrorInvalidImage    Result = 200 // CUDA_ERROR_INVALID_IMAGE
	ErrorInvalidContext  Result = 201 // CUDA_ERROR_INVALID_CONTEXT
	ErrorNoBinaryForGPU  Result = 209 // CUDA_ERROR_NO_BINARY_FOR_GPU
	ErrorInvalidHandle   Result = 400 // CUDA_ERROR_INVALID_HANDLE
	ErrorNotFound        Result = 500 // CUDA_ERROR_NOT_FOUND
	ErrorNotReady        Result = 600 // CUDA_ERROR_NOT_READY
	ErrorIllegalAddress  Result = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	ErrorLaunchResources Result = 701 // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	ErrorLaunchFailed    Result = 719 // CUDA_ERROR_LAUNCH_FAILED
	ErrorNotSupported    Result = 801 // CUDA_ERROR_NOT_SUPPORTED
	ErrorUnknown         Result = 999 // CUDA_ERROR_UNKNOWN
)

// resultNames is the fallback when cuGetErrorName/cuGetErrorString are not
// available or fail: names and messages as the CUDA 12/13 driver gives them.
var resultNames = map[Result][2]string{
	0:   {"CUDA_SUCCESS", "no error"},
	1:   {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	2:   {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	3:   {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	4:   {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
	34:  {"CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	46:  {"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
	100: {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	101: {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	200: {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	201: {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	209: {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	218: {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	222: {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	300: {"CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid"},
	301: {"CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
	400: {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	500: {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	600: {"CUDA_ERROR_NOT_READY", "device not ready"},
	700: {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	701: {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	702: {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	710: {"CUDA_ERROR_ASSERT", "device-side assert triggered"},
	715: {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
	716: {"CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
	719: {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	800: {"CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
	801: {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
	999: {"CUDA_ERROR_UNKNOWN", "unknown error"},
}

// errorFuncs are cuGetErrorName and cuGetErrorString of the last loaded
// driver; Result.Error uses them.
type errorFuncs struct {
	name, str func(r Result, p **byte) Result
}

var driverErrors atomic.Pointer[errorFuncs]

// Name returns the CUDA name of r, e.g. "CUDA_ERROR_OUT_OF_MEMORY", from
// cuGetErrorName when a driver is loaded, else from a built-in table, else
// "CUresult(<n>)".
func (r Result) Name() string {
	if f := driverErrors.Load(); f != nil {
		var p *byte
		if f.name(r, &p) == Success && p != nil {
			return goString(p)
		}
	}
	if n, ok := resultNames[r]; ok {
		return n[0]
	}
	return fmt.Sprintf("CUresult(%d)", int32(r))
}

// Description returns the driver's message for r (cuGetErrorString), or
// the built-in one, or "unknown CUresult".
func (r Result) Description() string {
	if f := driverErrors.Load(); f != nil {
		var p *byte
		if f.str(r, &p) == Success && p != nil {
			return goString(p)
		}
	}
	if n, ok := resultNames[r]; ok {
		return n[1]
	}
	return "unknown CUresult"
}

// Error formats r as "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
func (r Result) Error() string {
	return fmt.Sprintf("%s (%d): %s", r.Name(), int32(r), r.Description())
}

// err returns nil for Success and r otherwise.
func (r Result) err() error {
	if r == Success {
		return nil
	}
	return r
}

// NVRTCResult is an nvrtcResult. Every non-zero NVRTCResult is an error.
type NVRTCResult int32

// Some nvrtcResult values.
const (
	NVRTCSuccess          NVRTCResult = 0 // NVRTC_SUCCESS
	NVRTCErrorInvalidOpt  NVRTCResult = 5 // NVRTC_ERROR_INVALID_OPTION
	NVRTCErrorCompilation NVRTCResult = 6 // NVRTC_ERROR_COMPILATION
)

var nvrtcNames = map[NVRTCResult]string{
	0:  "NVRTC_SUCCESS",
	1:  "NVRTC_ERROR_OUT_OF_MEMORY",
	2:  "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	3:  "NVRTC_ERROR_INVALID_INPUT",
	4:  "NVRTC_ERROR_INVALID_PROGRAM",
	5:  "NVRTC_ERROR_INVALID_OPTION",
	6:  "NVRTC_ERROR_COMPILATION",
	7:  "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8:  "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	9:  "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	11: "NVRTC_ERROR_INTERNAL_ERROR",
}

var nvrtcErrorString atomic.Pointer[func(NVRTCResult) *byte]

// Error formats r as "NVRTC_ERROR_COMPILATION (6)", with the name from
// nvrtcGetErrorString when NVRTC is loaded.
func (r NVRTCResult) Error() string {
	name := ""
	if f := nvrtcErrorString.Load(); f != nil {
		if p := (*f)(r); p != nil {
			name = goString(p)
		}
	}
	if name == "" {
		name = nvrtcNames[r]
	}
	if name == "" {
		name = "nvrtcResult"
	}
	return fmt.Sprintf("%s (%d)", name, int32(r))
}

func (r NVRTCResult) err() error {
	if r == NVRTCSuccess {
		return nil
	}
	return r
}

// BLASStatus is a cublasStatus_t. Every non-zero BLASStatus is an error.
type BLASStatus int32

// The cublasStatus_t values.
const (
	BLASSuccess         BLASStatus = 0  // CUBLAS_STATUS_SUCCESS
	BLASNotInitialized  BLASStatus = 1  // CUBLAS_STATUS_NOT_INITIALIZED
	BLASAllocFailed     BLASStatus = 3  // CUBLAS_STATUS_ALLOC_FAILED
	BLASInvalidValue    BLASStatus = 7  // CUBLAS_STATUS_INVALID_VALUE
	BLASArchMismatch    BLASStatus = 8  // CUBLAS_STATUS_ARCH_MISMATCH
	BLASMappingError    BLASStatus = 11 // CUBLAS_STATUS_MAPPING_ERROR
	BLASExecutionFailed BLASStatus = 13 // CUBLAS_STATUS_EXECUTION_FAILED
	BLASInternalError   BLASStatus = 14 // CUBLAS_STATUS_INTERNAL_ERROR
	BLASNotSupported    BLASStatus = 15 // CUBLAS_STATUS_NOT_SUPPORTED
	BLASLicenseError    BLASStatus = 16 // CUBLAS_STATUS_LICENSE_ERROR
)

var blasNames = map[BLASStatus][2]string{
	0:  {"CUBLAS_STATUS_SUCCESS", "success"},
	1:  {"CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
	3:  {"CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
	7:  {"CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument"},
	8:  {"CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
	11: {"CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
	13: {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	14: {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
	15: {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
	16: {"CUBLAS_STATUS_LICENSE_ERROR", "license error"},
}

// Error formats s as "CUBLAS_STATUS_INVALID_VALUE (7): an invalid numeric
// value was used as an argument".
func (s BLASStatus) Error() string {
	if n, ok := blasNames[s]; ok {
		return fmt.Sprintf("%s (%d): %s", n[0], int32(s), n[1])
	}
	return fmt.Sprintf("cublasStatus_t(%d)", int32(s))
}

func (s BLASStatus) err() error {
	if s == BLASSuccess {
		return nil
	}
	return s
}

// goString copies the NUL-terminated C string at p (at most 64 KiB).
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < 1<<16 && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
