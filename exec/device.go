package exec

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Errors that backend errors wrap; test them with errors.Is.
var (
	// ErrUnavailable: the backend or device cannot be used here (no driver,
	// no such device, backend not built in).
	ErrUnavailable = errors.New("device unavailable")
	// ErrUnsupported: the backend has no kernel for an op or dtype.
	ErrUnsupported = errors.New("unsupported by backend")
	// ErrUnknownDevice: no backend is registered under the name.
	ErrUnknownDevice = errors.New("unknown device")
	// ErrFeed: a missing, extra, nil or mistyped feed (and a value of the
	// wrong type given to Program.Write).
	ErrFeed = errors.New("bad feed")
	// ErrClosed: the Program or Backend was closed.
	ErrClosed = errors.New("closed")
	// ErrNonFinite: under CheckNumerics, a kernel produced NaN or Inf from
	// finite operands.
	ErrNonFinite = errors.New("non-finite value")
)

// DeviceKind says whether a device is a CPU or a GPU.
type DeviceKind uint8

const (
	CPU DeviceKind = iota + 1
	GPU
)

func (k DeviceKind) String() string {
	switch k {
	case CPU:
		return "CPU"
	case GPU:
		return "GPU"
	}
	return "unknown"
}

// Device describes one device a backend can run on.
type Device struct {
	Name        string     // what Open takes: "cpu", "cuda:0"
	Kind        DeviceKind // CPU or GPU
	Memory      int64      // bytes of memory the device has
	Processors  int        // cores (CPU) or streaming multiprocessors (GPU)
	Description string     // model name and details
	Compute     string     // GPU compute capability ("9.0"); empty for CPUs
	Driver      string     // GPU driver version ("13.0"); empty for CPUs
}

func (d Device) String() string {
	s := fmt.Sprintf("%s (%s, %d processors, %.1f GiB", d.Name, d.Kind, d.Processors, float64(d.Memory)/(1<<30))
	if d.Compute != "" {
		s += ", compute " + d.Compute
	}
	if d.Driver != "" {
		s += ", driver " + d.Driver
	}
	return s + "): " + d.Description
}

// Driver is what a backend registers: it lists the devices it can open
// and opens one by index.
type Driver interface {
	// Devices lists the devices; an error wrapping ErrUnavailable means the
	// driver cannot run on this machine (no GPU, no library).
	Devices() ([]Device, error)
	// Open opens device index (0 for "name", N for "name:N").
	Open(index int) (Backend, error)
}

// OpenFunc opens device index of a backend.
type OpenFunc func(index int) (Backend, error)

type funcDriver OpenFunc

func (f funcDriver) Open(i int) (Backend, error) { return f(i) }
func (f funcDriver) Devices() ([]Device, error) {
	b, err := f(0)
	if err != nil {
		return nil, err
	}
	if isNilBackend(b) {
		return nil, fmt.Errorf("%w: the backend's open function returned no backend", ErrUnavailable)
	}
	defer b.Close()
	return []Device{b.Device()}, nil
}

var (
	regMu   sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a backend available to Open under name. It is how the
// built-in backends ("cpu", "cuda") install themselves when their package
// is imported, and how users plug in a backend of their own.
func Register(name string, open OpenFunc) error { return RegisterDriver(name, funcDriver(open)) }

// RegisterDriver is Register for a backend that can list its devices
// without opening them.
func RegisterDriver(name string, d Driver) error {
	if name == "" || strings.ContainsAny(name, ": ") {
		return fmt.Errorf("exec: Register: invalid backend name %q", name)
	}
	if d == nil {
		return fmt.Errorf("exec: Register(%q): nil driver", name)
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := drivers[name]; dup {
		return fmt.Errorf("exec: Register: backend %q is already registered", name)
	}
	drivers[name] = d
	return nil
}

func registered() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// backendHints names the import that registers each built-in backend.
var backendHints = map[string]string{
	"cpu":  "github.com/loomgraph/loom/exec/cpu",
	"cuda": "github.com/loomgraph/loom/exec/cuda",
}

// Open opens a device by name: "cpu", "cuda" (the first GPU) or "cuda:N".
// Backends register when their package is imported (import _
// "github.com/loomgraph/loom/exec/cpu"). An unknown name is an error
// listing the registered ones; a known backend without a usable device
// returns an error wrapping ErrUnavailable.
func Open(name string) (Backend, error) {
	base, idx, err := splitDeviceName(name)
	if err != nil {
		return nil, err
	}
	regMu.RLock()
	d := drivers[base]
	regMu.RUnlock()
	if d == nil {
		if hint, ok := backendHints[base]; ok {
			return nil, fmt.Errorf("exec: Open(%q): %w: the %s backend is not linked into this program (import _ %q); registered: %s",
				name, ErrUnavailable, base, hint, knownList())
		}
		return nil, fmt.Errorf("exec: Open(%q): %w: registered backends: %s", name, ErrUnknownDevice, knownList())
	}
	b, err := d.Open(idx)
	if err != nil {
		// A driver may return a typed nil (a nil *T in the interface) with
		// its error; the caller must get a nil Backend.
		return nil, err
	}
	if isNilBackend(b) {
		return nil, fmt.Errorf("exec: Open(%q): the %s driver returned no backend and no error", name, base)
	}
	return b, nil
}

// isNilBackend reports whether b is nil or holds a nil pointer.
func isNilBackend(b Backend) bool {
	if b == nil {
		return true
	}
	v := reflect.ValueOf(b)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func knownList() string {
	names := registered()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func splitDeviceName(name string) (string, int, error) {
	base, num, found := strings.Cut(strings.TrimSpace(name), ":")
	if base == "" {
		return "", 0, fmt.Errorf("exec: Open(%q): %w: empty name; registered backends: %s", name, ErrUnknownDevice, knownList())
	}
	if !found {
		return base, 0, nil
	}
	idx, err := strconv.Atoi(num)
	if err != nil || idx < 0 {
		return "", 0, fmt.Errorf("exec: Open(%q): %w: device index %q is not a non-negative integer", name, ErrUnknownDevice, num)
	}
	return base, idx, nil
}

// Devices lists the devices of every registered backend that is available
// on this machine, CPUs first.
func Devices() []Device {
	var out []Device
	for _, name := range registered() {
		regMu.RLock()
		d := drivers[name]
		regMu.RUnlock()
		devs, err := d.Devices()
		if err != nil {
			continue
		}
		out = append(out, devs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Default opens the default device: the one SetDefaultDevice named, else
// $LOOM_DEVICE if it is set, else the first GPU, else the CPU. The caller
// owns the backend and closes it. To set the default for a context rather
// than the process, and for the compile precision, see WithBackend,
// WithPrecision and CompileContext (defaults.go).
func Default() (Backend, error) {
	if name := defaultDevice(); name != "" {
		return Open(name)
	}
	return firstGPUOrCPU()
}

// firstGPUOrCPU opens the first GPU that opens, else the CPU.
func firstGPUOrCPU() (Backend, error) {
	for _, d := range Devices() {
		if d.Kind == GPU {
			if b, err := Open(d.Name); err == nil {
				return b, nil
			}
		}
	}
	return Open("cpu")
}
