package exec

import (
	"context"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Backend is a device that can run compiled programs. Implementations must
// be safe for concurrent use.
type Backend interface {
	// Name is the name the backend is registered under ("cpu", "cuda").
	Name() string
	// Device describes the device this backend instance runs on.
	Device() Device
	// Supports returns nil if the backend has a kernel for node n (its op,
	// attribute and dtypes), else an error wrapping ErrUnsupported that
	// names the op.
	Supports(n *graph.Node) error
	// Lower turns a planned program into an executable.
	Lower(p *Plan) (Executable, error)
	// NewBuffer allocates device memory holding a copy of t: the storage
	// of a Variable.
	NewBuffer(t *tensor.Tensor) (Buffer, error)
	// Close releases the backend. Programs compiled for it must be closed
	// first.
	Close() error
}

// Buffer is device memory holding one tensor value.
type Buffer interface {
	// Read copies the buffer into dst, which has the buffer's type.
	Read(dst *tensor.Tensor) error
	// Write copies src, which has the buffer's type, into the buffer.
	Write(src *tensor.Tensor) error
	// Free releases the memory.
	Free()
}

// Executable is a lowered Plan. Run may be called concurrently with
// different Frames.
type Executable interface {
	Run(ctx context.Context, f *Frame) error
	Close() error
}

// Frame carries one Run's operands to an Executable, each slice indexed
// like the Plan's lists.
type Frame struct {
	Inputs  []*tensor.Tensor // host values of Plan.Inputs, already checked
	Vars    []Buffer         // current values of Plan.Vars
	Next    []Buffer         // where updated values of Plan.Vars go
	Outputs []*tensor.Tensor // host destinations of Plan.Outputs, of the right types
	// InputBufs and OutputBufs are set only for backends that implement
	// Resident and bind buffers (Program.RunDevice): where InputBufs[i]
	// is non-nil, feed i lies in that Buffer (Inputs[i] is nil) and is
	// read from there; where OutputBufs[i] is non-nil, output i is
	// written into that Buffer (Outputs[i] is nil). In a plain Run every
	// entry is nil (the slices themselves may be nil).
	InputBufs, OutputBufs []Buffer
	// Observer, when non-nil, is told about every step (the profiler's hook).
	Observer StepObserver
	id       int              // stable number of the frame in its Program (the trace's "run N" thread)
	checks   []*tensor.Tensor // CheckNumerics' outputs (Outputs' tail), owned by the frame
}

// StepObserver receives the timing of every executed step (the profiler's
// hook). Times are nanoseconds on the observer's clock (Now).
type StepObserver interface {
	Now() int64
	// Step reports step (an index into Plan.Steps) from start to end, on
	// the goroutine that ran the Run.
	Step(step int, start, end int64)
	// Part reports a piece of a parallel step that ran on another worker
	// goroutine (numbered from 1; the Run's own goroutine is 0): handed
	// over at dispatched, run from start to end.
	Part(step, worker int, dispatched, start, end int64)
}

// IterationObserver is a StepObserver that also takes the number of
// iterations a control-flow step ran (a While's trips, a Scan's steps,
// 1 for a Cond), reported before the step's Step. Backends check for it
// with a type assertion; the profiler's observer has it and shows the
// count as the step's "iterations" arg.
type IterationObserver interface {
	StepObserver
	Iterations(step, n int)
}

// DeviceObserver is a StepObserver that also takes the timings of work
// that ran on a device queue (a CUDA stream). Backends with such queues
// check for it with a type assertion; the profiler's observer has it.
type DeviceObserver interface {
	StepObserver
	// DeviceSpan reports work on queue (numbered from 0 per Program):
	// step (an index into Plan.Steps, or -1 for a transfer that is not a
	// step, such as a feed's upload, named name and moving bytes),
	// enqueued by the host at launched and running on the device from
	// start to end. Times are on the observer's clock. On such backends
	// Step reports the host's launch of the step.
	DeviceSpan(queue, step int, name string, bytes int64, launched, start, end int64)
	// DeviceMemory reports the bytes of device memory in use at time t.
	DeviceMemory(t, bytes int64)
}
