//go:build linux

package cu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// NVRTC is the loaded NVRTC library (libnvrtc), which compiles CUDA C++
// to PTX and cubins at run time. Its methods may be called from any
// goroutine; NVRTC needs no context.
type NVRTC struct {
	path string

	nvrtcVersion           func(major, minor *int32) NVRTCResult
	nvrtcCreateProgram     func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames **byte) NVRTCResult
	nvrtcCompileProgram    func(prog uintptr, numOptions int32, options **byte) NVRTCResult
	nvrtcGetProgramLogSize func(prog uintptr, n *uint64) NVRTCResult
	nvrtcGetProgramLog     func(prog uintptr, log *byte) NVRTCResult
	nvrtcGetPTXSize        func(prog uintptr, n *uint64) NVRTCResult
	nvrtcGetPTX            func(prog uintptr, ptx *byte) NVRTCResult
	nvrtcGetCUBINSize      func(prog uintptr, n *uint64) NVRTCResult
	nvrtcGetCUBIN          func(prog uintptr, cubin *byte) NVRTCResult
	nvrtcDestroyProgram    func(prog *uintptr) NVRTCResult
	nvrtcGetErrorString    func(r NVRTCResult) *byte
}

// LoadNVRTC opens libnvrtc: the file named by $LOOM_LIBNVRTC, then
// libnvrtc.so.13 and libnvrtc.so.12 through the loader, then in
// $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/nvidia/lib64 and
// /usr/lib/x86_64-linux-gnu. Errors are as for LoadDriver.
func LoadNVRTC() (*NVRTC, error) {
	return loadNVRTC(nvrtcSpec.candidates(os.Getenv))
}

func loadNVRTC(cands []candidate) (*NVRTC, error) {
	n := &NVRTC{}
	p, err := load(nvrtcSpec, cands, n.symbols())
	if err != nil {
		return nil, err
	}
	n.path = p
	nvrtcErrorString.Store(&n.nvrtcGetErrorString)
	return n, nil
}

func (n *NVRTC) symbols() []symbol {
	return []symbol{
		{"nvrtcVersion", &n.nvrtcVersion},
		{"nvrtcCreateProgram", &n.nvrtcCreateProgram},
		{"nvrtcCompileProgram", &n.nvrtcCompileProgram},
		{"nvrtcGetProgramLogSize", &n.nvrtcGetProgramLogSize},
		{"nvrtcGetProgramLog", &n.nvrtcGetProgramLog},
		{"nvrtcGetPTXSize", &n.nvrtcGetPTXSize},
		{"nvrtcGetPTX", &n.nvrtcGetPTX},
		{"nvrtcGetCUBINSize", &n.nvrtcGetCUBINSize},
		{"nvrtcGetCUBIN", &n.nvrtcGetCUBIN},
		{"nvrtcDestroyProgram", &n.nvrtcDestroyProgram},
		{"nvrtcGetErrorString", &n.nvrtcGetErrorString},
	}
}

// Path returns the file that was opened.
func (n *NVRTC) Path() string { return n.path }

// Version returns NVRTC's CUDA version: nvrtcVersion.
func (n *NVRTC) Version() (major, minor int, err error) {
	var ma, mi int32
	if err := n.nvrtcVersion(&ma, &mi).err(); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}

// Output is what Compile produces.
type Output struct {
	CUBIN []byte // the cubin; empty when compiled for a virtual architecture (compute_XX)
	PTX   []byte // the PTX text, without a trailing NUL; empty if NVRTC gives none
	Log   string // the compiler's log (warnings), without a trailing NUL
}

// CompileError is returned by Compile when the program does not compile.
type CompileError struct {
	Name   string      // the program's name
	Result NVRTCResult // NVRTC_ERROR_COMPILATION, usually
	Log    string      // NVRTC's program log: the diagnostics
}

// Error includes the program log.
func (e *CompileError) Error() string {
	return fmt.Sprintf("cu: nvrtc: compiling %s: %v:\n%s", e.Name, e.Result, strings.TrimRight(e.Log, "\n"))
}

// Unwrap returns the NVRTCResult.
func (e *CompileError) Unwrap() error { return e.Result }

// Compile compiles CUDA C++ source src, called name in diagnostics, with
// NVRTC options such as "--gpu-architecture=sm_90" or "-default-device":
// nvrtcCreateProgram (no headers), nvrtcCompileProgram, then the log,
// cubin and PTX, and always nvrtcDestroyProgram. A compilation failure is
// a *CompileError carrying the log; other failures are NVRTCResult errors.
// When only one of the cubin and the PTX is available (a virtual or a real
// architecture), the other is left empty.
func (n *NVRTC) Compile(src, name string, opts []string) (Output, error) {
	var out Output
	if strings.IndexByte(src, 0) >= 0 || strings.IndexByte(name, 0) >= 0 {
		return out, errors.New("cu: nvrtc: NUL byte in source or name")
	}
	// The options as an array of C strings in Go memory, pinned for the
	// compile call because the array holds Go pointers.
	var pin runtime.Pinner
	defer pin.Unpin()
	var copt **byte
	if len(opts) > 0 {
		arr := make([]*byte, len(opts))
		for i, o := range opts {
			if strings.IndexByte(o, 0) >= 0 {
				return out, fmt.Errorf("cu: nvrtc: NUL byte in option %q", o)
			}
			b := make([]byte, len(o)+1)
			copy(b, o)
			arr[i] = &b[0]
			pin.Pin(&b[0])
		}
		copt = &arr[0]
		pin.Pin(copt)
	}

	var prog uintptr
	if err := n.nvrtcCreateProgram(&prog, src, name, 0, nil, nil).err(); err != nil {
		return out, fmt.Errorf("cu: nvrtcCreateProgram %s: %w", name, err)
	}
	defer n.nvrtcDestroyProgram(&prog)

	cr := n.nvrtcCompileProgram(prog, int32(len(opts)), copt)
	log, lerr := n.fetch(prog, n.nvrtcGetProgramLogSize, n.nvrtcGetProgramLog)
	out.Log = strings.TrimRight(string(log), "\x00")
	if cr != NVRTCSuccess {
		return Output{}, &CompileError{Name: name, Result: cr, Log: out.Log}
	}
	if lerr != nil {
		return Output{}, fmt.Errorf("cu: nvrtc program log of %s: %w", name, lerr)
	}
	cubin, cerr := n.fetch(prog, n.nvrtcGetCUBINSize, n.nvrtcGetCUBIN)
	ptx, perr := n.fetch(prog, n.nvrtcGetPTXSize, n.nvrtcGetPTX)
	if cerr != nil && perr != nil {
		return Output{}, fmt.Errorf("cu: nvrtc output of %s: cubin: %w; ptx: %w", name, cerr, perr)
	}
	out.CUBIN = cubin
	if len(ptx) > 0 && ptx[len(ptx)-1] == 0 {
		ptx = ptx[:len(ptx)-1]
	}
	out.PTX = ptx
	return out, nil
}

// fetch reads one of the program's outputs with its size and get functions.
func (n *NVRTC) fetch(prog uintptr, sizeFn func(uintptr, *uint64) NVRTCResult, getFn func(uintptr, *byte) NVRTCResult) ([]byte, error) {
	var sz uint64
	if err := sizeFn(prog, &sz).err(); err != nil {
		return nil, err
	}
	if sz == 0 {
		return nil, nil
	}
	buf := make([]byte, sz)
	if err := getFn(prog, &buf[0]).err(); err != nil {
		return nil, err
	}
	return buf, nil
}
