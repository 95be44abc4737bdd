//go:build linux

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
)

// The steps that call cuSOLVER, cuBLAS's solvers and cuFFT (the rows of
// cudagen's table with the Solver and FFT libraries). Each is planned at
// Lower (its shapes, its generated helper kernels: copies, transposes,
// packing, scaling), sets up at the program's setup (library plans,
// workspaces and constant tables on the device, page-locked parameter
// blocks), so that a Run only enqueues calls and launches and allocates
// nothing; the LAPACK-style info words of the factorisations are copied
// back with the outputs and turned into errors after the stream
// synchronises.

// libStep is one such step.
type libStep interface {
	// funcs are the generated kernels the step launches (compiled with
	// the program's module).
	funcs() []cudagen.Func
	// setup runs on the device goroutine after the program's memory is
	// laid out.
	setup(e *executable, mod cu.Module) error
	// enqueue puts step i on the program's stream.
	enqueue(e *executable, i int) error
	// check turns the info words read back by the last run into an error.
	check() error
	// free releases what setup acquired (device goroutine; the device
	// memory from e.ownedAlloc is freed with the program's).
	free(e *executable) error
}

// newLibStep plans node n for library lib.
func (b *Backend) newLibStep(n *graph.Node, lib cudagen.Library) (libStep, error) {
	switch lib {
	case cudagen.Solver:
		if err := b.ext.loadSolver(); err != nil {
			return nil, err
		}
		return newLinalgStep(b, n)
	case cudagen.FFT:
		if err := b.ext.loadFFT(); err != nil {
			return nil, err
		}
		return newFFTStep(b, n)
	}
	return nil, fmt.Errorf("no library step for %v", lib)
}

// libExt holds a Backend's cuSOLVER and cuFFT: the libraries are loaded at
// the first program that needs them (a missing libcufft does not stop the
// rest of the backend), the cuSOLVER handle is made on the device
// goroutine at the first setup, and Close destroys it and any plan left.
type libExt struct {
	mu        sync.Mutex
	solver    *cu.CUSOLVER
	bsolve    *cu.BLASSolve
	solverErr error
	fft       *cu.CUFFT
	fftErr    error

	// Device goroutine only.
	sh     cu.SolverHandle
	hasSH  bool
	plans  map[cu.FFTHandle]bool
	closed bool
}

// The libraries, opened once per process.
var (
	extMu     sync.Mutex
	extSolver *cu.CUSOLVER
	extBSolve *cu.BLASSolve
	extFFT    *cu.CUFFT
)

func (x *libExt) loadSolver() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.solver != nil {
		return nil
	}
	extMu.Lock()
	defer extMu.Unlock()
	if extSolver == nil {
		s, err := cu.LoadCUSOLVER()
		if err != nil {
			return fmt.Errorf("%w: the linear-algebra ops need cuSOLVER: %v", exec.ErrUnsupported, err)
		}
		bs, err := cu.LoadBLASSolve()
		if err != nil {
			return fmt.Errorf("%w: the linear-algebra ops need cuBLAS's solvers: %v", exec.ErrUnsupported, err)
		}
		extSolver, extBSolve = s, bs
	}
	x.solver, x.bsolve = extSolver, extBSolve
	return nil
}

func (x *libExt) loadFFT() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fft != nil {
		return nil
	}
	extMu.Lock()
	defer extMu.Unlock()
	if extFFT == nil {
		f, err := cu.LoadCUFFT()
		if err != nil {
			return fmt.Errorf("%w: the FFT ops need cuFFT: %v", exec.ErrUnsupported, err)
		}
		extFFT = f
	}
	x.fft = extFFT
	return nil
}

// solverHandle returns the backend's cuSOLVER handle, made on first use
// (device goroutine).
func (x *libExt) solverHandle() (cu.SolverHandle, error) {
	if x.hasSH {
		return x.sh, nil
	}
	h, err := x.solver.Create()
	if err != nil {
		return 0, fmt.Errorf("cusolverDnCreate: %w", err)
	}
	x.sh, x.hasSH = h, true
	return h, nil
}

// newPlan makes an empty cuFFT plan that the caller provides a work area
// for (device goroutine).
func (x *libExt) newPlan() (cu.FFTHandle, error) {
	h, err := x.fft.Create()
	if err != nil {
		return 0, fmt.Errorf("cufftCreate: %w", err)
	}
	if x.plans == nil {
		x.plans = map[cu.FFTHandle]bool{}
	}
	x.plans[h] = true
	if err := x.fft.SetAutoAllocation(h, false); err != nil {
		x.destroyPlan(h)
		return 0, fmt.Errorf("cufftSetAutoAllocation: %w", err)
	}
	return h, nil
}

func (x *libExt) destroyPlan(h cu.FFTHandle) error {
	if x.closed || !x.plans[h] {
		return nil
	}
	delete(x.plans, h)
	return x.fft.Destroy(h)
}

// close destroys the handle and the plans left (device goroutine, from
// Backend.Close).
func (x *libExt) close() error {
	var errs firstErr
	x.closed = true
	for h := range x.plans {
		errs.keep(x.fft.Destroy(h))
	}
	x.plans = nil
	if x.hasSH {
		errs.keep(x.solver.Destroy(x.sh))
		x.hasSH = false
	}
	return errs.err
}

// ownedAlloc allocates device memory freed with the program.
func (e *executable) ownedAlloc(n int64) (cu.DevicePtr, error) {
	p, err := e.be.alloc.alloc(n)
	if err == nil {
		e.owned = append(e.owned, p)
	}
	return p, err
}

// upload copies host data into new program-owned device memory.
func (e *executable) uploadOwned(b []byte) (cu.DevicePtr, error) {
	p, err := e.ownedAlloc(int64(len(b)))
	if err != nil || len(b) == 0 {
		return p, err
	}
	return p, e.be.lib.drv.MemcpyHtoD(p, ptrOf(b), int64(len(b)))
}

// int64Bytes views v as bytes.
func int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// kern is a generated helper kernel of a library step: a grid-stride loop
// over total items (variable t), the body's text given, and pointer
// parameters only (the sizes are constants of the source).
type kern struct {
	fn     cudagen.Func
	total  int64
	fnh    cu.Function
	vals   []cu.DevicePtr   // the argument values, in page-locked memory
	params []unsafe.Pointer // pointers to them, likewise
}

// newKern writes a kernel: prefix names it, params is the C parameter
// list ("const double* __restrict__ a, double* o"), body the loop body.
func newKern(prefix, params, body string, total int64) *kern {
	src := "{\n\tfor (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < " + fmt.Sprint(total) +
		"LL; t += (long long)gridDim.x * blockDim.x) {\n" + body + "\t}\n}\n"
	h := sha256.Sum256([]byte(prefix + "\x00" + params + "\x00" + src))
	name := "loom_" + prefix + "_" + hex.EncodeToString(h[:8])
	return &kern{
		fn:    cudagen.Func{Name: name, Source: "extern \"C\" __global__ void " + name + "(" + params + ")\n" + src},
		total: total,
	}
}

// nparams counts a kernel's parameters.
func (k *kern) nparams() int {
	src := k.fn.Source
	open := strings.IndexByte(src, '(')
	cl := strings.IndexByte(src, ')')
	if strings.TrimSpace(src[open+1:cl]) == "" {
		return 0
	}
	return strings.Count(src[open+1:cl], ",") + 1
}

// kernSet is the kernels of one step (those of no items are neither
// compiled nor launched) with their parameter blocks in one
// page-locked allocation, plus extra bytes of page-locked memory (for the
// info words read back).
type kernSet struct {
	ks    []*kern
	host  []byte
	extra []byte
}

func (s *kernSet) add(k *kern) *kern {
	s.ks = append(s.ks, k)
	return k
}

func (s *kernSet) funcs() []cudagen.Func {
	var out []cudagen.Func
	seen := map[string]bool{}
	for _, k := range s.ks {
		if k.total > 0 && !seen[k.fn.Name] {
			seen[k.fn.Name] = true
			out = append(out, k.fn)
		}
	}
	return out
}

// setup resolves the kernels in mod and lays out the parameter blocks and
// extra bytes of page-locked memory.
func (s *kernSet) setup(d *cu.Driver, mod cu.Module, extra int64) error {
	var n int64
	for _, k := range s.ks {
		if k.total > 0 {
			n += 16 * int64(k.nparams())
		}
	}
	extra = (extra + 15) &^ 15
	if n+extra == 0 {
		return nil
	}
	mem, err := d.MemAllocHost(n + extra)
	if err != nil {
		return fmt.Errorf("allocating parameter blocks: %w", err)
	}
	s.host = mem
	base := unsafe.Pointer(unsafe.SliceData(mem))
	off := uintptr(0)
	for _, k := range s.ks {
		if k.total <= 0 {
			continue // never launched (an empty result), not compiled
		}
		f, err := d.ModuleGetFunction(mod, k.fn.Name)
		if err != nil {
			return fmt.Errorf("cuModuleGetFunction(%s): %w", k.fn.Name, err)
		}
		k.fnh = f
		np := uintptr(k.nparams())
		if np == 0 {
			continue
		}
		k.vals = unsafe.Slice((*cu.DevicePtr)(unsafe.Add(base, off)), np)
		k.params = unsafe.Slice((*unsafe.Pointer)(unsafe.Add(base, off+8*np)), np)
		for a := range k.vals {
			k.params[a] = unsafe.Pointer(&k.vals[a])
		}
		off += 16 * np
	}
	s.extra = mem[n : n+extra]
	return nil
}

func (s *kernSet) free(d *cu.Driver) error {
	if s.host == nil {
		return nil
	}
	err := d.MemFreeHost(s.host)
	s.host, s.extra = nil, nil
	return err
}

// launch enqueues k with the arguments args.
func (k *kern) launch(e *executable, args ...cu.DevicePtr) error {
	if k.total <= 0 {
		return nil
	}
	copy(k.vals, args)
	const block = 256
	grid := min((k.total+block-1)/block, 4096)
	if err := e.be.lib.drv.LaunchKernel(k.fnh, [3]uint32{uint32(grid), 1, 1}, [3]uint32{block, 1, 1}, 0, e.stream, k.params); err != nil {
		return fmt.Errorf("cuLaunchKernel(%s): %w", k.fn.Name, err)
	}
	return nil
}
