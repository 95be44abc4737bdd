//go:build linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/tensor"
)

// DefaultNCCLTimeout is how long an NCCL collective may take (from the
// first NCCL call of a Run to the Run's synchronisation) when neither
// WithNCCLTimeout nor $LOOM_DIST_TIMEOUT says otherwise.
const DefaultNCCLTimeout = 5 * time.Minute

// NCCL is a dist.Communicator over NVIDIA's NCCL (libnccl.so.2, loaded at
// run time like the other CUDA libraries: $LOOM_LIBNCCL, then the loader,
// then the CUDA directories), bound to one Backend's GPU. A Program
// compiled for that Backend with exec.WithCommunicator(n) runs its
// collective ops (ops.AllReduce, AllGather, ReduceScatter, Broadcast,
// Reduce) as NCCL calls enqueued on the program's stream on device
// memory: no copy to the host, no synchronisation between the kernels
// before and after. Every rank is one process (or, in tests, one
// goroutine) with one Backend.
//
// The Communicator methods (AllReduce, AllGather, ... on host bytes, which
// exec uses for the plan fingerprint check of the first Run) stage the
// bytes through device memory and NCCL, on the Backend's device goroutine.
//
// Timeouts: a watchdog is armed at the first NCCL call of a Run (or of a
// host-byte collective) and disarmed after the stream's synchronisation;
// when it fires (WithNCCLTimeout, else $LOOM_DIST_TIMEOUT, a Go duration
// or seconds, else DefaultNCCLTimeout) or the Run's context ends, it calls
// ncclCommAbort: the Run fails with an error wrapping dist.ErrTimeout (or
// the context's error) naming the op, the ranks and "nccl", the
// communicator is broken (every later collective fails at once), and the
// Backend stays usable for programs without it. Creating the
// communicator (ncclCommInitRank) waits for every rank with NCCL's own
// bootstrap timeout.
//
// Element types: NCCL reduces int8, uint8, int32, int64, float32 and
// float64 (and float16, bfloat16) itself; complex64 and complex128 sums
// and means are reductions of their float parts; ReduceMean is ncclAvg
// (NCCL 2.10 or later). Int16 has no NCCL type: its reductions in a
// program take the host-staged path (copied to page-locked memory,
// widened to int32, reduced by NCCL through staging device memory,
// narrowed, copied back). AllGather and ReduceScatter along an axis > 0,
// whose ranks' blocks interleave, run NCCL on a scratch buffer in rank
// order and rearrange it on the device with device-to-device copies.
type NCCL struct {
	be         *Backend
	lib        *cu.NCCL
	comm       cu.NCCLComm
	rank, size int
	timeout    time.Duration

	mu      sync.Mutex
	broken  error // set when aborted; every later collective fails with it
	aborted bool
	closed  bool

	// Host-byte collectives (device goroutine only): device staging
	// memory, pinned host memory and a stream of their own.
	stage      cu.DevicePtr
	stageBytes int64
	stream     cu.Stream
}

// NCCLOption configures NewNCCL and NewNCCLFromEnv.
type NCCLOption func(*ncclConfig) error

type ncclConfig struct{ timeout time.Duration }

// WithNCCLTimeout sets how long the NCCL collectives of a Run may take
// before the communicator is aborted and the Run fails with an error
// wrapping dist.ErrTimeout (d > 0). It overrides $LOOM_DIST_TIMEOUT.
func WithNCCLTimeout(d time.Duration) NCCLOption {
	return func(c *ncclConfig) error {
		if d <= 0 {
			return fmt.Errorf("WithNCCLTimeout(%v): the timeout must be positive", d)
		}
		c.timeout = d
		return nil
	}
}

// loadNCCLLib opens libnccl once per process (retried until it loads).
func loadNCCLLib(l *libs) (*cu.NCCL, error) {
	libsMu.Lock()
	defer libsMu.Unlock()
	if l.nccl == nil {
		n, err := cu.LoadNCCL()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", exec.ErrUnavailable, err)
		}
		l.nccl = n
	}
	return l.nccl, nil
}

func ncclConfigure(opts []NCCLOption) (ncclConfig, error) {
	cfg := ncclConfig{timeout: DefaultNCCLTimeout}
	if s := os.Getenv("LOOM_DIST_TIMEOUT"); s != "" {
		d, err := dist.ParseTimeout(s)
		if err != nil {
			return cfg, fmt.Errorf("$LOOM_DIST_TIMEOUT=%q: %v (want a duration like 30s or 5m, or seconds)", s, err)
		}
		cfg.timeout = d
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// NewNCCL creates the NCCL communicator of boot's ranks on be's GPU: rank
// 0 of boot makes NCCL's unique id (ncclGetUniqueId) and broadcasts it
// over boot (an *mpi.Comm of dist/mpi, say), then every rank joins
// (ncclCommInitRank) with boot's rank and size. Every rank of boot must
// call it; it returns when all have joined. The error wraps
// exec.ErrUnavailable when libnccl cannot be loaded (naming every path
// tried).
//
//	comm, err := mpi.Open()                  // mpirun -np 4 ./train
//	be, err := cuda.Open(localRank)          // one GPU per rank
//	nc, err := cuda.NewNCCL(ctx, be, comm)
//	defer nc.Close()
//	p, err := exec.Compile(be, outs, exec.WithCommunicator(nc))
func NewNCCL(ctx context.Context, be *Backend, boot dist.Communicator, opts ...NCCLOption) (*NCCL, error) {
	if be == nil || boot == nil {
		return nil, fmt.Errorf("cuda: NewNCCL: a nil Backend or boot communicator")
	}
	cfg, err := ncclConfigure(opts)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCL: %w", err)
	}
	lib, err := loadNCCLLib(be.lib)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCL: %w", err)
	}
	rank, size := boot.Rank(), boot.Size()
	var id cu.NCCLUniqueID
	if rank == 0 {
		if id, err = lib.GetUniqueID(); err != nil {
			return nil, fmt.Errorf("cuda: NewNCCL: ncclGetUniqueId: %w", err)
		}
	}
	if err := boot.Broadcast(ctx, id[:], 0); err != nil {
		return nil, fmt.Errorf("cuda: NewNCCL: broadcasting NCCL's unique id over %s (rank %d of %d): %w", boot.Name(), rank, size, err)
	}
	return newNCCL(be, lib, id, rank, size, cfg)
}

// NewNCCLFromEnv creates the NCCL communicator with NCCL's own bootstrap:
// $NCCL_COMM_ID (host:port, where rank 0 listens) makes every rank's
// ncclGetUniqueId return the same id. The rank and the number of ranks
// come from $LOOM_NCCL_RANK and $LOOM_NCCL_SIZE, else from Open MPI's
// launcher ($OMPI_COMM_WORLD_RANK, $OMPI_COMM_WORLD_SIZE). Every rank
// must call it; it returns when all have joined.
//
//	NCCL_COMM_ID=node0:29500 LOOM_NCCL_RANK=1 LOOM_NCCL_SIZE=2 ./train
func NewNCCLFromEnv(be *Backend, opts ...NCCLOption) (*NCCL, error) {
	return newNCCLFromEnv(be, os.Getenv, opts)
}

// newNCCLFromEnv reads the rank and size with getenv (tests give each
// in-process rank its own).
func newNCCLFromEnv(be *Backend, getenv func(string) string, opts []NCCLOption) (*NCCL, error) {
	if be == nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: a nil Backend")
	}
	if os.Getenv("NCCL_COMM_ID") == "" {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: $NCCL_COMM_ID is not set (host:port of rank 0's bootstrap, the same on every rank); or use NewNCCL with an MPI communicator")
	}
	rank, err := envInt(getenv, "LOOM_NCCL_RANK", "OMPI_COMM_WORLD_RANK")
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: the rank: %w", err)
	}
	size, err := envInt(getenv, "LOOM_NCCL_SIZE", "OMPI_COMM_WORLD_SIZE")
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: the number of ranks: %w", err)
	}
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: rank %d of %d ranks is out of range (0 <= rank < size)", rank, size)
	}
	cfg, err := ncclConfigure(opts)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: %w", err)
	}
	lib, err := loadNCCLLib(be.lib)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: %w", err)
	}
	id, err := lib.GetUniqueID()
	if err != nil {
		return nil, fmt.Errorf("cuda: NewNCCLFromEnv: ncclGetUniqueId with NCCL_COMM_ID=%s: %w", os.Getenv("NCCL_COMM_ID"), err)
	}
	return newNCCL(be, lib, id, rank, size, cfg)
}

// envInt reads the first of the variables that is set.
func envInt(getenv func(string) string, names ...string) (int, error) {
	for _, k := range names {
		if s := getenv(k); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				return 0, fmt.Errorf("$%s=%q is not an integer", k, s)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("neither $%s nor $%s is set", names[0], names[1])
}

func newNCCL(be *Backend, lib *cu.NCCL, id cu.NCCLUniqueID, rank, size int, cfg ncclConfig) (*NCCL, error) {
	n := &NCCL{be: be, lib: lib, rank: rank, size: size, timeout: cfg.timeout}
	err := be.do(func() error {
		c, err := lib.CommInitRank(size, id, rank)
		if err != nil {
			return fmt.Errorf("ncclCommInitRank(rank %d of %d): %w", rank, size, err)
		}
		n.comm = c
		if n.stream, err = be.lib.drv.StreamCreate(0); err != nil {
			lib.CommDestroy(c)
			return fmt.Errorf("cuStreamCreate: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: creating the NCCL communicator on %s: %w", be.device.Name, err)
	}
	return n, nil
}

// Name is "nccl".
func (n *NCCL) Name() string { return "nccl" }

// Rank is this process's rank.
func (n *NCCL) Rank() int { return n.rank }

// Size is the number of ranks.
func (n *NCCL) Size() int { return n.size }

// Timeout is how long the collectives of a Run may take.
func (n *NCCL) Timeout() time.Duration { return n.timeout }

// Backend is the backend whose GPU the communicator runs on.
func (n *NCCL) Backend() *Backend { return n.be }

// Close frees the communicator (ncclCommDestroy; nothing after an abort,
// which freed it) and its staging memory. Programs using it must not run
// afterwards.
func (n *NCCL) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	aborted := n.aborted
	n.mu.Unlock()
	err := n.be.do(func() error {
		var errs firstErr
		if !aborted {
			errs.keep(n.lib.CommDestroy(n.comm))
		}
		if n.stage != 0 {
			errs.keep(n.be.alloc.put(n.stage))
			n.stage = 0
		}
		if n.stream != 0 {
			errs.keep(n.be.lib.drv.StreamDestroy(n.stream))
			n.stream = 0
		}
		return errs.err
	})
	if err != nil && !errors.Is(err, exec.ErrClosed) {
		return fmt.Errorf("cuda: NCCL.Close: %w", err)
	}
	return nil
}

// usable returns the error that stops a collective: closed or broken.
func (n *NCCL) usable() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return fmt.Errorf("the NCCL communicator is closed")
	}
	if n.broken != nil {
		return fmt.Errorf("the NCCL communicator is broken by an earlier error: %w", n.broken)
	}
	return nil
}

// abort breaks the communicator with err and calls ncclCommAbort (any
// goroutine), once.
func (n *NCCL) abort(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.aborted || n.closed {
		return
	}
	n.aborted = true
	n.broken = err
	n.lib.CommAbort(n.comm)
}

// ncclWatch is the watchdog of the NCCL calls in flight on a stream: armed
// at the first call, disarmed after the stream's synchronisation.
type ncclWatch struct {
	n       *NCCL
	what    atomic.Pointer[string] // the latest collective enqueued
	timer   *time.Timer
	stopCtx func() bool
	fired   atomic.Pointer[error] // the error the watchdog aborted with
}

// arm starts a watchdog for a collective what (named in the error).
func (n *NCCL) arm(ctx context.Context, what string) *ncclWatch {
	w := &ncclWatch{n: n}
	w.what.Store(&what)
	fire := func(err error) {
		if w.fired.CompareAndSwap(nil, &err) {
			n.abort(err)
		}
	}
	w.timer = time.AfterFunc(n.timeout, func() {
		fire(fmt.Errorf("nccl: %s on rank %d of %d: not complete after %v (a rank died, hangs or called another collective; the communicator is aborted and broken): %w",
			*w.what.Load(), n.rank, n.size, n.timeout, dist.ErrTimeout))
	})
	if ctx != nil && ctx.Done() != nil {
		w.stopCtx = context.AfterFunc(ctx, func() {
			err := ctx.Err()
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", dist.ErrTimeout, err)
			}
			fire(fmt.Errorf("nccl: %s on rank %d of %d: the context ended (the communicator is aborted and broken): %w", *w.what.Load(), n.rank, n.size, err))
		})
	}
	return w
}

// enqueued names the latest collective put on the stream.
func (w *ncclWatch) enqueued(what string) { w.what.Store(&what) }

// finish disarms the watchdog after the stream's synchronisation: when it
// fired, the result is its error (err, NCCL's or the driver's, is a
// consequence); otherwise err, or NCCL's asynchronous error.
func (w *ncclWatch) finish(err error) error {
	w.timer.Stop()
	if w.stopCtx != nil {
		w.stopCtx()
	}
	if f := w.fired.Load(); f != nil {
		return *f
	}
	if err == nil {
		if a, aerr := w.n.lib.CommGetAsyncError(w.n.comm); aerr != nil || (a != cu.NCCLSuccess && a != cu.NCCLInProgress) {
			if aerr == nil {
				aerr = &cu.NCCLError{Result: a, Msg: w.n.lib.ErrorString(a)}
			}
			err = fmt.Errorf("nccl: %s on rank %d of %d: asynchronous error: %w", *w.what.Load(), w.n.rank, w.n.size, aerr)
			w.n.abort(err)
		}
	}
	return err
}

// ncclType maps a dtype and reduction to NCCL's type, and the element
// count multiplier (2 for complex: float parts). ok is false where NCCL
// cannot reduce the dtype (int16; complex max and min).
func ncclType(dt tensor.DType, op dist.ReduceOp) (t cu.NCCLDataType, mult int64, ok bool) {
	switch dt {
	case tensor.Int8:
		return cu.NCCLInt8, 1, true
	case tensor.Uint8:
		return cu.NCCLUint8, 1, true
	case tensor.Bool:
		return cu.NCCLUint8, 1, op != dist.Sum // 0 or 1: max is or, min is and
	case tensor.Int32:
		return cu.NCCLInt32, 1, true
	case tensor.Int64:
		return cu.NCCLInt64, 1, true
	case tensor.Float16:
		return cu.NCCLFloat16, 1, true
	case tensor.BFloat16:
		return cu.NCCLBfloat16, 1, true
	case tensor.Float32:
		return cu.NCCLFloat32, 1, true
	case tensor.Float64:
		return cu.NCCLFloat64, 1, true
	case tensor.Complex64:
		return cu.NCCLFloat32, 2, op == dist.Sum
	case tensor.Complex128:
		return cu.NCCLFloat64, 2, op == dist.Sum
	}
	return 0, 0, false
}

func ncclOp(op dist.ReduceOp) cu.NCCLRedOp {
	switch op {
	case dist.Max:
		return cu.NCCLMax
	case dist.Min:
		return cu.NCCLMin
	}
	return cu.NCCLSum
}

// ---- host-byte collectives (dist.Communicator) ----

// host runs a host-byte collective: the bytes of in go to device staging
// memory at inOff, call enqueues the NCCL call on the communicator's
// stream with the staging memory's address, and out comes back from
// outOff. direct is true on the device goroutine (a program's
// host-staged step); otherwise the work is sent there.
func (n *NCCL) host(ctx context.Context, direct bool, what string, in []byte, inOff int64, out []byte, outOff int64, total int64, call func(base cu.DevicePtr) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := n.usable(); err != nil {
		return fmt.Errorf("nccl: %s on rank %d of %d: %w", what, n.rank, n.size, err)
	}
	if direct {
		return n.hostOnDevice(ctx, what, in, inOff, out, outOff, total, call)
	}
	return n.be.do(func() error { return n.hostOnDevice(ctx, what, in, inOff, out, outOff, total, call) })
}

// hostOnDevice is host's body (device goroutine).
func (n *NCCL) hostOnDevice(ctx context.Context, what string, in []byte, inOff int64, out []byte, outOff int64, total int64, call func(base cu.DevicePtr) error) error {
	d := n.be.lib.drv
	if total > n.stageBytes {
		if n.stage != 0 {
			n.be.alloc.put(n.stage)
			n.stage, n.stageBytes = 0, 0
		}
		p, err := n.be.alloc.alloc(total)
		if err != nil {
			return fmt.Errorf("nccl: %s: staging memory: %w", what, err)
		}
		n.stage, n.stageBytes = p, total
	}
	if len(in) > 0 {
		if err := d.MemcpyHtoD(n.stage+cu.DevicePtr(inOff), unsafe.Pointer(unsafe.SliceData(in)), int64(len(in))); err != nil {
			return fmt.Errorf("nccl: %s: copying to the device: %w", what, err)
		}
	}
	w := n.arm(ctx, what)
	err := call(n.stage)
	if serr := d.StreamSynchronize(n.stream); err == nil {
		err = serr
	}
	if err = w.finish(err); err != nil {
		return wrapNCCL(what, n, err)
	}
	if len(out) > 0 {
		if err := d.MemcpyDtoH(unsafe.Pointer(unsafe.SliceData(out)), n.stage+cu.DevicePtr(outOff), int64(len(out))); err != nil {
			return fmt.Errorf("nccl: %s: copying to the host: %w", what, err)
		}
	}
	return nil
}

// wrapNCCL names the collective, the rank and the engine in an NCCL
// error (the watchdog's errors already do).
func wrapNCCL(what string, n *NCCL, err error) error {
	var ne *cu.NCCLError
	if errors.As(err, &ne) && !errors.Is(err, dist.ErrTimeout) {
		return fmt.Errorf("nccl: %s on rank %d of %d: %w", what, n.rank, n.size, err)
	}
	return err
}

// widen16 runs fn on int32 copies of the int16 elements of bufs and
// narrows the results back (a sum wraps as int16 arithmetic does: the low
// 16 bits of the int32 sum).
func widen16(bufs [2][]byte, fn func(wide [2][]byte) error) error {
	var wide [2][]byte
	for k, b := range bufs {
		xs := tensor.View[int16](b)
		w := make([]int32, len(xs))
		for i, v := range xs {
			w[i] = int32(v)
		}
		wide[k] = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))
	}
	if err := fn(wide); err != nil {
		return err
	}
	for k, b := range bufs {
		xs := tensor.View[int16](b)
		for i, v := range tensor.View[int32](wide[k]) {
			xs[i] = int16(v)
		}
	}
	return nil
}

// AllReduce reduces buf over the ranks in place (dist.Communicator).
// Int16 is widened to int32 on the host; bool max and min are uint8's.
func (n *NCCL) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op dist.ReduceOp) error {
	return n.allReduce(ctx, false, buf, dt, op)
}

func (n *NCCL) allReduce(ctx context.Context, direct bool, buf []byte, dt tensor.DType, op dist.ReduceOp) error {
	what := fmt.Sprintf("AllReduce(%d bytes of %v, %v)", len(buf), dt, op)
	if dt == tensor.Int16 {
		return widen16([2][]byte{buf, nil}, func(w [2][]byte) error { return n.allReduce(ctx, direct, w[0], tensor.Int32, op) })
	}
	t, mult, ok := ncclType(dt, op)
	if !ok {
		return fmt.Errorf("nccl: %s: NCCL cannot reduce %v with %v", what, dt, op)
	}
	count := int64(len(buf)/dt.Size()) * mult
	return n.host(ctx, direct, what, buf, 0, buf, 0, int64(len(buf)), func(p cu.DevicePtr) error {
		return n.lib.AllReduce(p, p, count, t, ncclOp(op), n.comm, n.stream)
	})
}

// AllGather concatenates the ranks' send into recv (dist.Communicator).
func (n *NCCL) AllGather(ctx context.Context, send, recv []byte) error {
	return n.allGather(ctx, false, send, recv)
}

func (n *NCCL) allGather(ctx context.Context, direct bool, send, recv []byte) error {
	if len(recv) != n.size*len(send) {
		return fmt.Errorf("nccl: AllGather: %d bytes received for %d sent by each of %d ranks", len(recv), len(send), n.size)
	}
	what := fmt.Sprintf("AllGather(%d bytes)", len(send))
	ns := int64(len(send))
	return n.host(ctx, direct, what, send, 0, recv, ns, ns+int64(len(recv)), func(p cu.DevicePtr) error {
		return n.lib.AllGather(p, p+cu.DevicePtr(ns), ns, cu.NCCLUint8, n.comm, n.stream)
	})
}

// ReduceScatter reduces send over the ranks and leaves block Rank in recv
// (dist.Communicator). Int16 is widened as in AllReduce.
func (n *NCCL) ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, op dist.ReduceOp) error {
	return n.reduceScatter(ctx, false, send, recv, dt, op)
}

func (n *NCCL) reduceScatter(ctx context.Context, direct bool, send, recv []byte, dt tensor.DType, op dist.ReduceOp) error {
	if len(send) != n.size*len(recv) {
		return fmt.Errorf("nccl: ReduceScatter: %d bytes sent for %d received by each of %d ranks", len(send), len(recv), n.size)
	}
	what := fmt.Sprintf("ReduceScatter(%d bytes of %v, %v)", len(send), dt, op)
	if dt == tensor.Int16 {
		return widen16([2][]byte{send, recv}, func(w [2][]byte) error {
			return n.reduceScatter(ctx, direct, w[0], w[1], tensor.Int32, op)
		})
	}
	t, mult, ok := ncclType(dt, op)
	if !ok {
		return fmt.Errorf("nccl: %s: NCCL cannot reduce %v with %v", what, dt, op)
	}
	ns := int64(len(send))
	count := int64(len(recv)/dt.Size()) * mult
	return n.host(ctx, direct, what, send, 0, recv, ns, ns+int64(len(recv)), func(p cu.DevicePtr) error {
		return n.lib.ReduceScatter(p, p+cu.DevicePtr(ns), count, t, ncclOp(op), n.comm, n.stream)
	})
}

// Broadcast copies root's buf into every rank's (dist.Communicator).
func (n *NCCL) Broadcast(ctx context.Context, buf []byte, root int) error {
	return n.broadcast(ctx, false, buf, root)
}

func (n *NCCL) broadcast(ctx context.Context, direct bool, buf []byte, root int) error {
	if root < 0 || root >= n.size {
		return fmt.Errorf("nccl: Broadcast: root %d of a group of %d", root, n.size)
	}
	what := fmt.Sprintf("Broadcast(%d bytes from %d)", len(buf), root)
	nb := int64(len(buf))
	return n.host(ctx, direct, what, buf, 0, buf, 0, nb, func(p cu.DevicePtr) error {
		return n.lib.Broadcast(p, p, nb, cu.NCCLUint8, root, n.comm, n.stream)
	})
}

// Barrier returns when every rank has called it (a one-byte AllReduce).
func (n *NCCL) Barrier(ctx context.Context) error {
	b := []byte{0}
	return n.host(ctx, false, "Barrier", b, 0, b, 0, 1, func(p cu.DevicePtr) error {
		return n.lib.AllReduce(p, p, 1, cu.NCCLUint8, cu.NCCLMax, n.comm, n.stream)
	})
}

// onDevice is n as a program's host-staged collective step sees it: that
// step already runs on n's device goroutine, so the collectives run
// there directly (n's own methods would wait for the goroutine itself).
type onDevice struct{ *NCCL }

func (o onDevice) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op dist.ReduceOp) error {
	return o.allReduce(ctx, true, buf, dt, op)
}

func (o onDevice) ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, op dist.ReduceOp) error {
	return o.reduceScatter(ctx, true, send, recv, dt, op)
}

func (o onDevice) AllGather(ctx context.Context, send, recv []byte) error {
	return o.allGather(ctx, true, send, recv)
}

func (o onDevice) Broadcast(ctx context.Context, buf []byte, root int) error {
	return o.broadcast(ctx, true, buf, root)
}

func (o onDevice) Barrier(ctx context.Context) error {
	b := []byte{0}
	return o.host(ctx, true, "Barrier", b, 0, b, 0, 1, func(p cu.DevicePtr) error {
		return o.lib.AllReduce(p, p, 1, cu.NCCLUint8, cu.NCCLMax, o.comm, o.stream)
	})
}
