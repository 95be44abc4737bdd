//go:build linux

package cu

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// The fake NCCL (cufake's fakenccl.c) needs no CUDA context: its device
// pointers are host addresses, and its ranks are threads of this process.
// The buffers below are Go heap memory (which does not move), passed as
// device pointers.

func loadFakeNCCL(t *testing.T) *NCCL {
	t.Helper()
	loadFakes(t)
	t.Setenv("LOOM_LIBNCCL", fakeLibs.NCCL)
	n, err := LoadNCCL()
	if err != nil {
		t.Fatal(err)
	}
	if n.Path() != fakeLibs.NCCL {
		t.Errorf("Path() = %q, want %q", n.Path(), fakeLibs.NCCL)
	}
	return n
}

func dptr[T any](s []T) DevicePtr { return DevicePtr(uintptr(unsafe.Pointer(&s[0]))) }

func wantNCCL(t *testing.T, err error, want NCCLResult, what string) {
	t.Helper()
	var ne *NCCLError
	if !errors.As(err, &ne) || ne.Result != want {
		t.Fatalf("%s: got %v, want result %d", what, err, want)
	}
}

// TestNCCLUniqueIDByValue checks CommInitRank's System V layout of the
// by-value 128-byte id: the fake checks the id's checksum (its last
// word, over the other 15) and the rank (rdx, after the id in the C
// prototype but before it in the registers).
func TestNCCLUniqueIDByValue(t *testing.T) {
	n := loadFakeNCCL(t)
	v, err := n.Version()
	if err != nil || v != 22704 { // the fake reports NCCL 2.27.4 (fakenccl.c)
		t.Fatalf("Version() = %d, %v; want 22704", v, err)
	}
	t.Setenv("NCCL_COMM_ID", "")
	id, err := n.GetUniqueID()
	must(t, err)
	c, err := n.CommInitRank(1, id, 0)
	must(t, err)
	// A 1-rank AllReduce is a copy: [1.5, -2] (hand).
	send, recv := []float32{1.5, -2}, make([]float32, 2)
	must(t, n.AllReduce(dptr(send), dptr(recv), 2, NCCLFloat32, NCCLSum, c, 0))
	if recv[0] != 1.5 || recv[1] != -2 {
		t.Errorf("1-rank AllReduce = %v, want [1.5 -2]", recv)
	}
	must(t, n.CommDestroy(c))
	// The first and the last word of the id reach the callee: flipping a
	// bit of either breaks the checksum.
	for _, byteAt := range []int{0, 7, 64, 120, 127} {
		bad := id
		bad[byteAt] ^= 1
		_, err := n.CommInitRank(1, bad, 0)
		wantNCCL(t, err, NCCLInvalidArgument, "CommInitRank with a corrupted id")
	}
	// rank 1 of 1 is out of range: the rank is not read from the stack.
	_, err = n.CommInitRank(1, id, 1)
	wantNCCL(t, err, NCCLInvalidArgument, "CommInitRank(1, id, 1)")
	if !strings.Contains(err.Error(), "ncclInvalidArgument (4): invalid argument") {
		t.Errorf("error %q lacks NCCL's name and message", err)
	}
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
}

// TestNCCLEnvID checks that with NCCL_COMM_ID set every call of
// ncclGetUniqueId gives the same id (NCCL's environment bootstrap), and
// otherwise a new one.
func TestNCCLEnvID(t *testing.T) {
	n := loadFakeNCCL(t)
	t.Setenv("NCCL_COMM_ID", "")
	a, _ := n.GetUniqueID()
	b, _ := n.GetUniqueID()
	if a == b {
		t.Error("two ids without NCCL_COMM_ID are equal")
	}
	t.Setenv("NCCL_COMM_ID", "127.0.0.1:29500")
	a, _ = n.GetUniqueID()
	b, _ = n.GetUniqueID()
	if a != b {
		t.Error("two ids with NCCL_COMM_ID differ")
	}
}

// TestNCCLTwoRanks runs every collective over two ranks (goroutines),
// with values by hand.
func TestNCCLTwoRanks(t *testing.T) {
	n := loadFakeNCCL(t)
	t.Setenv("NCCL_COMM_ID", "")
	id, err := n.GetUniqueID()
	must(t, err)
	comms := make([]NCCLComm, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() { comms[r], errs[r] = n.CommInitRank(2, id, r) })
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	defer n.CommDestroy(comms[0])
	defer n.CommDestroy(comms[1])
	// rank r sends [1+10r, 2+10r, 3+10r, 4+10r].
	send := [][]float32{{1, 2, 3, 4}, {11, 12, 13, 14}}
	type out struct{ ar, ag, rs, bc, rd []float32 }
	outs := make([]out, 2)
	for r := range 2 {
		outs[r] = out{make([]float32, 4), make([]float32, 8), make([]float32, 2), make([]float32, 4), []float32{-1, -1, -1, -1}}
	}
	for r := range 2 {
		wg.Go(func() {
			c, s, o := comms[r], dptr(send[r]), &outs[r]
			errs[r] = errors.Join(
				n.AllReduce(s, dptr(o.ar), 4, NCCLFloat32, NCCLSum, c, 0),
				n.AllGather(s, dptr(o.ag), 4, NCCLFloat32, c, 0),
				n.ReduceScatter(s, dptr(o.rs), 2, NCCLFloat32, NCCLMax, c, 0),
				n.Broadcast(s, dptr(o.bc), 4, NCCLFloat32, 1, c, 0),
				n.Reduce(s, dptr(o.rd), 4, NCCLFloat32, NCCLAvg, 0, c, 0),
			)
		})
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	eq := func(what string, r int, got, want []float32) {
		t.Helper()
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("rank %d: %s = %v, want %v", r, what, got, want)
				return
			}
		}
	}
	for r := range 2 {
		o := outs[r]
		eq("AllReduce sum", r, o.ar, []float32{12, 14, 16, 18})                           // 1+11, ... (hand)
		eq("AllGather", r, o.ag, []float32{1, 2, 3, 4, 11, 12, 13, 14})                   // rank order
		eq("ReduceScatter max", r, o.rs, []float32{11 + 2*float32(r), 12 + 2*float32(r)}) // block r of [11..14]
		eq("Broadcast from 1", r, o.bc, send[1])
		if r == 0 {
			eq("Reduce avg to 0", r, o.rd, []float32{6, 7, 8, 9}) // (1+11)/2, ...
		} else {
			eq("Reduce on a non-root rank (untouched)", r, o.rd, []float32{-1, -1, -1, -1})
		}
	}
	runtime.KeepAlive(send)
	runtime.KeepAlive(outs)
}

// TestNCCLAbort checks that ncclCommAbort from another goroutine ends a
// collective waiting for a rank that never comes.
func TestNCCLAbort(t *testing.T) {
	n := loadFakeNCCL(t)
	t.Setenv("NCCL_COMM_ID", "")
	id, err := n.GetUniqueID()
	must(t, err)
	comms := make([]NCCLComm, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() { comms[r], errs[r] = n.CommInitRank(2, id, r) })
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	buf := make([]float64, 3)
	start := time.Now()
	time.AfterFunc(50*time.Millisecond, func() { n.CommAbort(comms[0]) })
	err = n.AllReduce(dptr(buf), dptr(buf), 3, NCCLFloat64, NCCLSum, comms[0], 0)
	wantNCCL(t, err, NCCLSystemError, "AllReduce of an aborted comm")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the abort took %v", d)
	}
	// The other rank now sees a remote error, at once.
	a, err := n.CommGetAsyncError(comms[1])
	if err != nil || a != NCCLRemoteError {
		t.Errorf("CommGetAsyncError of the other rank = %v, %v; want ncclRemoteError", a, err)
	}
	err = n.AllReduce(dptr(buf), dptr(buf), 3, NCCLFloat64, NCCLSum, comms[1], 0)
	wantNCCL(t, err, NCCLRemoteError, "AllReduce of the other rank")
	runtime.KeepAlive(buf)
}

// TestNCCLNotFound checks that a missing libnccl names every path tried.
func TestNCCLNotFound(t *testing.T) {
	env := map[string]string{"LOOM_LIBNCCL": "/nonexistent/loom/libnccl.so.2", "CUDA_HOME": "/nonexistent/cuda"}
	cands := ncclSpec.candidates(func(k string) string { return env[k] })
	// Keep the loader's soname out: a machine with NCCL would find it.
	var keep []candidate
	for _, c := range cands {
		if c.from != "loader" {
			keep = append(keep, c)
		}
	}
	_, err := loadNCCL(keep)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	for _, p := range []string{"/nonexistent/loom/libnccl.so.2 ($LOOM_LIBNCCL)", "/nonexistent/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "libnccl (NCCL)"} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
	if len(cands) != len(keep)+1 || cands[1].path != "libnccl.so.2" {
		t.Errorf("candidates %v: want the override, then libnccl.so.2 through the loader, then the directories", cands)
	}
}
