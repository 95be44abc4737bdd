package cpu

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

func init() {
	if err := exec.Register("cpu", func(index int) (exec.Backend, error) {
		if index != 0 {
			return nil, fmt.Errorf("cpu: device %d: %w: the CPU backend has one device, cpu:0", index, exec.ErrUnavailable)
		}
		b, err := New()
		if err != nil {
			return nil, err // not a nil *Backend in the interface
		}
		return b, nil
	}); err != nil {
		panic(err)
	}
}

// Option configures the CPU backend.
type Option func(*Backend)

// Threads sets how many goroutines kernels use (default: GOMAXPROCS, or
// $LOOM_CPU_THREADS when set). 1 makes every kernel sequential.
func Threads(n int) Option {
	return func(b *Backend) {
		if n >= 1 {
			b.threads = n
		}
	}
}

// Backend is the CPU backend: the reference implementation of every op,
// with kernels parallel across cores for large tensors and matrix
// multiplication through gonum's BLAS.
type Backend struct {
	threads int
	pool    *pool
	device  exec.Device
	mu      sync.RWMutex // held for reading by every Run, for writing by Close
	closed  bool
}

// New opens a CPU backend.
func New(opts ...Option) (*Backend, error) {
	b := &Backend{threads: runtime.GOMAXPROCS(0)}
	if s := os.Getenv("LOOM_CPU_THREADS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("cpu: LOOM_CPU_THREADS=%q is not a positive integer", s)
		}
		b.threads = n
	}
	for _, o := range opts {
		o(b)
	}
	b.pool = newPool(b.threads)
	b.device = exec.Device{
		Name:        "cpu",
		Kind:        exec.CPU,
		Memory:      tensor.HostMemory(),
		Processors:  runtime.NumCPU(),
		Description: fmt.Sprintf("%s, %s/%s, %d threads", Model(), runtime.GOOS, runtime.GOARCH, b.threads),
	}
	return b, nil
}

// Name returns "cpu".
func (b *Backend) Name() string { return "cpu" }

// Device describes the host CPU.
func (b *Backend) Device() exec.Device { return b.device }

// Threads returns the number of goroutines kernels use.
func (b *Backend) Threads() int { return b.threads }

// Close stops the worker goroutines. Programs compiled for the backend
// fail with exec.ErrClosed afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.pool.close()
	}
	return nil
}

// Supports reports whether there is a kernel for n.
func (b *Backend) Supports(n *graph.Node) error {
	if _, ok := table[n.Op()]; !ok {
		return fmt.Errorf("%w: cpu has no kernel for %s", exec.ErrUnsupported, n.Op())
	}
	if n.Op() == opdef.OpFused {
		if err := fusedSupported(n); err != nil {
			return fmt.Errorf("%w: cpu: %v", exec.ErrUnsupported, err)
		}
	}
	return nil
}

// buffer is host memory for a variable.
type buffer struct {
	data []byte
}

// NewBuffer returns host memory holding a copy of t.
func (b *Backend) NewBuffer(t *tensor.Tensor) (exec.Buffer, error) {
	c := t.Clone()
	return &buffer{data: c.Bytes()}, nil
}

func (m *buffer) Read(dst *tensor.Tensor) error {
	if len(dst.Bytes()) != len(m.data) {
		return fmt.Errorf("cpu: buffer of %d bytes read into %s", len(m.data), dst.Type())
	}
	copy(dst.Bytes(), m.data)
	return nil
}

func (m *buffer) Write(src *tensor.Tensor) error {
	if len(src.Bytes()) != len(m.data) {
		return fmt.Errorf("cpu: %s written to a buffer of %d bytes", src.Type(), len(m.data))
	}
	copy(m.data, src.Bytes())
	return nil
}

func (m *buffer) Free() { m.data = nil }

// Model returns the host CPU's model name (from /proc/cpuinfo on Linux,
// the architecture elsewhere).
func Model() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH + " CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH + " CPU"
}

// kernelFor returns the prepare function of n's op, nil if it has none.
func kernelFor(n *graph.Node) prepareFn { return table[n.Op()].prepare }

// String describes the backend: "cpu (model, threads)".
func (b *Backend) String() string { return "cpu (" + b.device.Description + ")" }
