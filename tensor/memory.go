package tensor

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrTooLarge is wrapped by the errors of constructors asked for a tensor
// whose byte size overflows or exceeds the memory limit (see MemoryLimit).
var ErrTooLarge = errors.New("too large")

// maxAddressable is the most bytes one Go allocation can have on a 64-bit
// platform (the runtime's heap address space is 48 bits); on 32-bit ones
// it is MaxInt.
const maxAddressable = int64(min(uint64(math.MaxInt), 1<<48))

var (
	hostOnce   sync.Once
	hostMemory int64
	limit      atomic.Int64 // 0: the default, HostMemory (or maxAddressable)
)

// HostMemory returns the bytes of memory this process may use: the
// machine's physical memory, or the memory limit of its control group
// (a container's limit) when that is lower. It is 0 when the platform does
// not tell (only Linux is read today).
func HostMemory() int64 {
	hostOnce.Do(func() { hostMemory = readHostMemory() })
	return hostMemory
}

func readHostMemory() int64 {
	total := meminfoTotal()
	// cgroup v2, then v1. "max" (v2) or a huge number (v1) means no limit.
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && v > 0 && (total == 0 || v < total) {
			total = v
		}
		break
	}
	return total
}

func meminfoTotal() int64 { return meminfo("MemTotal:") }

// meminfo returns the bytes of a field of /proc/meminfo ("MemTotal:"),
// 0 where it cannot be read.
func meminfo(field string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == field {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb > math.MaxInt64/1024 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// HostAvailable returns the bytes of memory the machine can still give
// this process: /proc/meminfo's MemAvailable, lowered to what the
// control group's limit leaves (cgroup v2 memory.max - memory.current)
// when that is less; 0 when the platform does not tell (Linux only).
func HostAvailable() int64 {
	free := meminfo("MemAvailable:")
	lim, err1 := readInt("/sys/fs/cgroup/memory.max")
	cur, err2 := readInt("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil && lim > 0 {
		if left := max(0, lim-cur); free == 0 || left < free {
			free = left
		}
	}
	return free
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max" (no limit) is an error
}

// MemoryLimit returns the largest tensor, in bytes, that the constructors
// (Make, Zeros, Full, FromFloat64s, Clone) allocate. By default it is
// HostMemory (or, where that is unknown, the most a Go allocation can
// have). A larger request is an error wrapping ErrTooLarge, checked by
// arithmetic before anything is allocated: asking for more memory than the
// machine has would otherwise end the process with the Go runtime's fatal
// "out of memory", which no caller can recover from.
func MemoryLimit() int64 {
	if l := limit.Load(); l > 0 {
		return l
	}
	if h := HostMemory(); h > 0 {
		return min(h, maxAddressable)
	}
	return maxAddressable
}

// SetMemoryLimit sets the limit MemoryLimit returns and returns the
// previous one. n <= 0 restores the default. Values above the most a Go
// allocation can have are lowered to it. It is safe for concurrent use.
func SetMemoryLimit(n int64) int64 {
	old := MemoryLimit()
	if n <= 0 {
		limit.Store(0)
	} else {
		limit.Store(min(n, maxAddressable))
	}
	return old
}

// ByteSize returns the bytes a tensor of dtype dt and shape s occupies, or
// an error wrapping ErrTooLarge when the product of the non-zero
// dimensions times the element size overflows an int (so that byte
// strides and offsets cannot overflow, even for an empty tensor, whatever
// the order of the dimensions), or the error of s.Validate.
func ByteSize(dt DType, s Shape) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	n, zero := dt.Size(), false
	for _, d := range s {
		switch {
		case d == 0:
			zero = true
		case n > math.MaxInt/d:
			return 0, fmt.Errorf("%s: %w: its byte size overflows an int", TypeString(dt, s), ErrTooLarge)
		default:
			n *= d
		}
	}
	if zero {
		return 0, nil
	}
	return n, nil
}

// checkAlloc returns the byte size of a new tensor of dtype dt and shape s,
// or an error if the shape is invalid or the size exceeds MemoryLimit.
func checkAlloc(dt DType, s Shape) (int, error) {
	b, err := ByteSize(dt, s)
	if err != nil {
		return 0, err
	}
	if lim := MemoryLimit(); int64(b) > lim {
		return 0, fmt.Errorf("%s: %w: %d bytes exceed the memory limit of %d bytes (tensor.SetMemoryLimit)", TypeString(dt, s), ErrTooLarge, b, lim)
	}
	return b, nil
}
