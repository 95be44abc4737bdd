package cpu

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

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
// MemAvailable, or what the control group's limit leaves when that is
// less) and the Go heap's: InUse its in-use bytes, Cached the idle bytes
// the runtime keeps without returning them to the operating system
// (exec.MemoryBackend).
func (b *Backend) Memory() (exec.Memory, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return exec.Memory{
		Total:  tensor.HostMemory(),
		Free:   hostFree(),
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

// hostFree is /proc/meminfo's MemAvailable, lowered to what the cgroup v2
// limit leaves (memory.max - memory.current) when that is less; 0 where
// neither is readable.
func hostFree() int64 {
	free := meminfoField("MemAvailable:")
	lim, err1 := readInt("/sys/fs/cgroup/memory.max")
	cur, err2 := readInt("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil && lim > 0 {
		if left := max(0, lim-cur); free == 0 || left < free {
			free = left
		}
	}
	return free
}

func meminfoField(name string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == name {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max": an error, no limit
}
