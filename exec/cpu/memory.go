package cpu

import (
	"runtime"
	"runtime/debug"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/tensor"
)

// HostBytes returns the buffer's memory: Programs read a device feed's
// bytes and write a kept output in place (exec.HostBuffer).
func (m *buffer) HostBytes() []byte { return m.data }

// AllocBuffer returns n bytes of zeroed host memory (exec.Resident).
func (b *Backend) AllocBuffer(n int64) (exec.Buffer, error) {
	t, err := tensor.Make(tensor.Uint8, int(n))
	if err != nil {
		return nil, err
	}
	return &buffer{data: t.Bytes()}, nil
}

// BindsBuffers is false: the CPU's buffers are host memory, which exec
// hands to Runs as host tensors (exec.Resident).
func (b *Backend) BindsBuffers() bool { return false }

// Memory reports the machine's memory (Total: tensor.HostMemory; Free:
// tensor.HostAvailable) and the Go heap's: InUse its in-use bytes, Cached the idle bytes
// the runtime keeps without returning them to the operating system
// (exec.MemoryBackend).
func (b *Backend) Memory() (exec.Memory, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return exec.Memory{
		Total:  tensor.HostMemory(),
		Free:   tensor.HostAvailable(),
		InUse:  int64(ms.HeapInuse),
		Cached: int64(ms.HeapIdle - ms.HeapReleased),
	}, nil
}

// ReleaseCache runs a garbage collection and returns as much idle heap as
// possible to the operating system (debug.FreeOSMemory), reporting the
// bytes of idle heap that went back.
func (b *Backend) ReleaseCache() (int64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	return max(0, int64(after.HeapReleased)-int64(before.HeapReleased)), nil
}
