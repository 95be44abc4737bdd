package exec

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Defaults: the device and compile precision used where the caller names
// none, set for a context (WithBackend, WithPrecision: what a Python
// user writes as `with device:` and a precision context, scoped to the
// calls that get the context) or for the process (SetDefaultDevice,
// SetDefaultPrecision, whose restore functions end the scope:
// `defer restore()`). They apply in Default, BackendFrom, PrecisionFrom
// and CompileContext; Compile itself is explicit (its backend and options
// are the whole request) and never reads them.

var defaults struct {
	mu        sync.Mutex
	device    string       // SetDefaultDevice; "" = none
	precision tensor.DType // SetDefaultPrecision; Invalid = none
	shared    map[string]Backend
}

// SetDefaultDevice makes Default open the named device ("cpu", "cuda:0")
// instead of consulting $LOOM_DEVICE and looking for a GPU, for the whole
// process, until the returned function restores the previous choice. An
// empty name removes the choice. The name is checked (its backend must be
// registered; the device is not opened).
func SetDefaultDevice(name string) (restore func(), err error) {
	if name != "" {
		base, _, err := splitDeviceName(name)
		if err != nil {
			return nil, fmt.Errorf("exec: SetDefaultDevice: %w", err)
		}
		regMu.RLock()
		_, ok := drivers[base]
		regMu.RUnlock()
		if !ok {
			return nil, fmt.Errorf("exec: SetDefaultDevice(%q): %w: registered backends: %s", name, ErrUnknownDevice, knownList())
		}
	}
	return setDefault(&defaults.device, name), nil
}

// SetDefaultPrecision makes CompileContext compile in dt (as the option
// Precision(dt)) when neither the context nor the call says otherwise,
// for the whole process, until the returned function restores the
// previous choice. tensor.Invalid removes the choice (graphs compute in
// the precisions they were built in).
func SetDefaultPrecision(dt tensor.DType) (restore func(), err error) {
	if dt != tensor.Invalid && dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("exec: SetDefaultPrecision(%v): only float32 and float64 are compute precisions", dt)
	}
	return setDefault(&defaults.precision, dt), nil
}

// setDefault sets *p to v under the defaults' lock and returns the
// function that puts the previous value back.
func setDefault[T any](p *T, v T) (restore func()) {
	defaults.mu.Lock()
	prev := *p
	*p = v
	defaults.mu.Unlock()
	return func() {
		defaults.mu.Lock()
		*p = prev
		defaults.mu.Unlock()
	}
}

// defaultDevice is the device Default opens by name, or "".
func defaultDevice() string {
	defaults.mu.Lock()
	defer defaults.mu.Unlock()
	if defaults.device != "" {
		return defaults.device
	}
	return os.Getenv("LOOM_DEVICE")
}

type backendKey struct{}
type precisionKey struct{}

// WithBackend returns a copy of ctx that carries be: BackendFrom and
// CompileContext use it. The context does not own be: whoever opened it
// closes it.
func WithBackend(ctx context.Context, be Backend) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, backendKey{}, be)
}

// WithPrecision returns a copy of ctx that carries a compile precision
// (float32 or float64): CompileContext compiles as with Precision(dt).
// tensor.Invalid in an inner context cancels an outer one's.
func WithPrecision(ctx context.Context, dt tensor.DType) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, precisionKey{}, dt)
}

// BackendFrom returns the backend ctx carries (WithBackend), else the
// process's shared backend for the default device (the one Default would
// open: SetDefaultDevice's, $LOOM_DEVICE, a GPU, the CPU), opened on first
// use and kept open for the life of the process, so that every caller
// without a backend of its own gets the same one (and so can share
// variables and DeviceTensors). Do not Close a backend BackendFrom
// returns: it is not the caller's.
func BackendFrom(ctx context.Context) (Backend, error) {
	if ctx != nil {
		if be, ok := ctx.Value(backendKey{}).(Backend); ok && !isNilBackend(be) {
			return be, nil
		}
	}
	name := defaultDevice()
	defaults.mu.Lock()
	defer defaults.mu.Unlock()
	if be := defaults.shared[name]; be != nil {
		return be, nil
	}
	var be Backend
	var err error
	if name != "" {
		be, err = Open(name)
	} else {
		be, err = firstGPUOrCPU()
	}
	if err != nil {
		return nil, err
	}
	if defaults.shared == nil {
		defaults.shared = map[string]Backend{}
	}
	defaults.shared[name] = be
	return be, nil
}

// PrecisionFrom returns the compile precision ctx carries
// (WithPrecision), else the process's (SetDefaultPrecision), else
// tensor.Invalid: none, graphs compute in the precisions they were built in.
func PrecisionFrom(ctx context.Context) tensor.DType {
	if ctx != nil {
		if dt, ok := ctx.Value(precisionKey{}).(tensor.DType); ok {
			return dt
		}
	}
	defaults.mu.Lock()
	defer defaults.mu.Unlock()
	return defaults.precision
}

// CompileContext is Compile on BackendFrom(ctx), with Precision of
// PrecisionFrom(ctx) when there is one; options given here come after it,
// so an explicit Precision wins.
func CompileContext(ctx context.Context, outputs []*graph.Node, opts ...Option) (*Program, error) {
	be, err := BackendFrom(ctx)
	if err != nil {
		return nil, fmt.Errorf("exec: CompileContext: %w", err)
	}
	if dt := PrecisionFrom(ctx); dt != tensor.Invalid {
		opts = append([]Option{Precision(dt)}, opts...)
	}
	return Compile(be, outputs, opts...)
}
