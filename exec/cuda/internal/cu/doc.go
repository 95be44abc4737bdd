// Package cu binds the CUDA driver API (libcuda), NVRTC (libnvrtc) and
// cuBLAS (libcublas) from pure Go: the libraries are opened at run time
// with github.com/ebitengine/purego, so the package builds with
// CGO_ENABLED=0 and a binary that uses it starts on machines without CUDA
// (LoadDriver then returns an error wrapping ErrNotFound).
//
// Only the versioned ABI symbols that the driver keeps exporting are bound
// (cuMemAlloc_v2, cuStreamDestroy_v2, cublasSgemm_v2, ...), with Go function
// variables of the exact C prototypes: CUdeviceptr is DevicePtr (uint64),
// size_t is uint64, CUdevice is Device (int32), and handles (CUcontext,
// CUstream, cublasHandle_t, ...) are uintptr-based types.
//
// # Threads
//
// The CUDA current context is a property of the OS thread. Callers make
// every driver and cuBLAS call from one goroutine that has called
// runtime.LockOSThread and then Driver.CtxSetCurrent with the primary
// context (Driver.PrimaryCtxRetain). The methods themselves hold no locks
// around the library calls, except LaunchKernel, which serialises the use of
// its reusable runtime.Pinner.
//
// # Errors
//
// Driver calls return Result (CUresult) values, NVRTC calls NVRTCResult and
// cuBLAS calls BLASStatus; all three implement error, and a zero (success)
// code is never returned as an error. Kernels, asynchronous copies and
// cuBLAS calls report their failures at the next synchronisation.
package cu
