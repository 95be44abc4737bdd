package mpi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/tensor"
)

// ErrUnavailable is wrapped by the error of Open when Open MPI's libmpi
// cannot be used in this process (not installed, not Open MPI, not
// linux, or MPI already finalized). Tests skip with it.
var ErrUnavailable = errors.New("mpi: Open MPI unavailable")

// DefaultTimeout is how long a collective waits for the other ranks
// when neither WithTimeout nor $LOOM_DIST_TIMEOUT says otherwise.
const DefaultTimeout = 5 * time.Minute

// Constants of Open MPI's mpi.h.
const (
	mpiSuccess        = 0
	mpiThreadMultiple = 3
	mpiInPlace        = 1 // MPI_IN_PLACE is ((void *) 1)
	maxErrorString    = 256
	maxLibraryVersion = 256
	statusSize        = 24 // struct ompi_status_public_t: 4 ints and a size_t
)

// maxCount bounds the element count of one MPI call (its count is a C
// int); AllReduce and Broadcast split longer buffers into pieces of it.
var maxCount = 1 << 30

// The process-wide state: libmpi is loaded and initialised once.
var (
	pkgMu     sync.Mutex
	theLib    *lib
	libErr    error
	weInit    bool  // this package called MPI_Init_thread
	threadLvl int32 // the thread level MPI provides
	openComms int   // Comms not yet closed
	inFlight  int   // Comms with a collective that never completed: no Finalize
	finalized bool  // this package called MPI_Finalize
	initOut   struct {
		flag, provided int32
		text           [maxLibraryVersion]byte
		n              int32
	}
	// callMu serialises every MPI call when MPI provides less than
	// MPI_THREAD_MULTIPLE (MPI was initialised before Open, at a lower
	// level).
	callMu    sync.Mutex
	serialize atomic.Bool
)

// mcall calls an MPI function, under callMu where MPI is not
// thread-multiple.
func mcall(fn uintptr, args ...uintptr) int32 {
	if serialize.Load() {
		callMu.Lock()
		defer callMu.Unlock()
	}
	return call(fn, args...)
}

// Option configures Open.
type Option func(*Comm)

// WithTimeout sets how long a collective waits for the other ranks
// before failing with an error wrapping dist.ErrTimeout (d > 0). It
// overrides $LOOM_DIST_TIMEOUT.
func WithTimeout(d time.Duration) Option {
	return func(c *Comm) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Comm is a dist.Communicator over a duplicate of Open MPI's
// MPI_COMM_WORLD. Its methods are safe for concurrent use (calls are
// serialised); every rank must call the collectives in the same order.
type Comm struct {
	mu      sync.Mutex
	l       *lib
	comm    uintptr // our MPI_Comm, a duplicate of MPI_COMM_WORLD
	rank    int
	size    int
	timeout time.Duration
	closed  bool
	broken  error // the error that broke the group; later calls fail with it
	// inFlight: the request in sc.req never completed (a timeout, a
	// cancellation): MPI may still read and write its buffers.
	inFlight bool
	pending  func() bool // reports whether the collective in flight completed
	// stuck keeps the buffers of collectives that never completed pinned
	// and reachable: MPI may still write them.
	stuck []*runtime.Pinner
	// sc is the memory MPI writes during a call and a request's life:
	// on the heap, which Go's collector does not move.
	sc *scratch
}

type scratch struct {
	req    uintptr
	flag   int32
	status [statusSize]byte
	n      int32
	text   [maxErrorString]byte
	dummy  [16]byte // the address passed for empty buffers
}

var _ dist.Communicator = (*Comm)(nil)

// Open loads libmpi ($LOOM_MPI_LIB, else libmpi.so.40), initialises MPI
// if nothing did yet (MPI_Init_thread asking for MPI_THREAD_MULTIPLE;
// Close finalizes it then) and returns a communicator over a duplicate
// of MPI_COMM_WORLD, so loom's messages never match the program's own.
// Every rank must call Open (the duplication is collective, and fails
// with an error wrapping dist.ErrTimeout when a rank does not come in
// time). A process
// not started by mpirun is a group of one (MPI's singleton init). Errors
// from a missing or foreign library wrap ErrUnavailable.
func Open(opts ...Option) (*Comm, error) {
	c := &Comm{timeout: DefaultTimeout, sc: new(scratch)}
	if s := os.Getenv("LOOM_DIST_TIMEOUT"); s != "" {
		d, err := dist.ParseTimeout(s)
		if err != nil {
			return nil, fmt.Errorf("mpi: Open: $LOOM_DIST_TIMEOUT=%q: %v (want a duration like 30s or 5m, or seconds)", s, err)
		}
		c.timeout = d
	}
	for _, o := range opts {
		o(c)
	}
	pkgMu.Lock()
	defer pkgMu.Unlock()
	if theLib == nil && libErr == nil {
		theLib, libErr = loadLib()
	}
	if libErr != nil {
		return nil, libErr
	}
	l := theLib
	c.l = l
	if finalized {
		return nil, fmt.Errorf("%w: MPI was finalized when the last Comm was closed; MPI cannot be initialised twice in a process (keep one Comm open)", ErrUnavailable)
	}
	o := &initOut
	if call(l.finalized, uintptr(unsafe.Pointer(&o.flag))) == mpiSuccess && o.flag != 0 {
		return nil, fmt.Errorf("%w: MPI was already finalized in this process", ErrUnavailable)
	}
	if rc := call(l.initialized, uintptr(unsafe.Pointer(&o.flag))); rc != mpiSuccess {
		return nil, fmt.Errorf("mpi: MPI_Initialized: error %d", rc)
	}
	if o.flag == 0 {
		// argc and argv may be NULL since MPI-2.
		if rc := call(l.initThread, 0, 0, mpiThreadMultiple, uintptr(unsafe.Pointer(&o.provided))); rc != mpiSuccess {
			return nil, fmt.Errorf("%w: MPI_Init_thread failed with error %d", ErrUnavailable, rc)
		}
		weInit = true
	} else if rc := call(l.queryThread, uintptr(unsafe.Pointer(&o.provided))); rc != mpiSuccess {
		return nil, fmt.Errorf("mpi: MPI_Query_thread: error %d", rc)
	}
	threadLvl = o.provided
	serialize.Store(threadLvl < mpiThreadMultiple || forcePoll)
	// MPI_Comm_dup is collective over every rank: wait for it under the
	// timeout where MPI is thread-multiple (a goroutine stays in MPI if a
	// rank never comes).
	dup := new(uintptr)
	var rc int32
	if serialize.Load() {
		rc = mcall(l.commDup, l.commWorld, uintptr(unsafe.Pointer(dup)))
	} else {
		done := make(chan int32, 1)
		go func() { done <- call(l.commDup, l.commWorld, uintptr(unsafe.Pointer(dup))) }()
		timer := time.NewTimer(c.timeout)
		defer timer.Stop()
		select {
		case rc = <-done:
		case <-timer.C:
			// No Finalize while the duplication is in MPI; free the
			// communicator if it completes after all.
			inFlight++
			go func() {
				rc := <-done
				pkgMu.Lock()
				defer pkgMu.Unlock()
				inFlight--
				if rc == mpiSuccess {
					call(l.commFree, uintptr(unsafe.Pointer(dup)))
				}
			}()
			return nil, fmt.Errorf("mpi: Open: MPI_Comm_dup of MPI_COMM_WORLD not complete after %v (every rank must call Open; one died or hangs): %w", c.timeout, dist.ErrTimeout)
		}
	}
	if rc != mpiSuccess {
		return nil, c.mpiErr("MPI_Comm_dup", rc)
	}
	c.comm = *dup
	// Errors on our communicator come back as codes instead of aborting
	// the job (MPI_ERRORS_ARE_FATAL, the default).
	if rc := mcall(l.commSetErrhandler, c.comm, l.errorsReturn); rc != mpiSuccess {
		return nil, c.mpiErr("MPI_Comm_set_errhandler", rc)
	}
	if rc := mcall(l.commRank, c.comm, uintptr(unsafe.Pointer(&o.provided))); rc != mpiSuccess {
		return nil, c.mpiErr("MPI_Comm_rank", rc)
	}
	c.rank = int(o.provided)
	if rc := mcall(l.commSize, c.comm, uintptr(unsafe.Pointer(&o.provided))); rc != mpiSuccess {
		return nil, c.mpiErr("MPI_Comm_size", rc)
	}
	c.size = int(o.provided)
	openComms++
	return c, nil
}

// Version is the MPI library's own description (MPI_Get_library_version).
func Version() (string, error) {
	pkgMu.Lock()
	defer pkgMu.Unlock()
	if theLib == nil && libErr == nil {
		theLib, libErr = loadLib()
	}
	if libErr != nil {
		return "", libErr
	}
	o := &initOut
	if rc := call(theLib.libraryVersion, uintptr(unsafe.Pointer(&o.text[0])), uintptr(unsafe.Pointer(&o.n))); rc != mpiSuccess {
		return "", fmt.Errorf("mpi: MPI_Get_library_version: error %d", rc)
	}
	return strings.TrimSpace(cstring(o.text[:], o.n)), nil
}

func cstring(b []byte, n int32) string {
	if n < 0 || int(n) > len(b) {
		n = int32(len(b))
	}
	b = b[:n]
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// mpiErr describes an MPI error code with MPI_Error_string.
func (c *Comm) mpiErr(fn string, rc int32) error {
	msg := ""
	if c.sc != nil && call(c.l.errorString, uintptr(rc), uintptr(unsafe.Pointer(&c.sc.text[0])), uintptr(unsafe.Pointer(&c.sc.n))) == mpiSuccess {
		msg = ": " + cstring(c.sc.text[:], c.sc.n)
	}
	return fmt.Errorf("mpi: %s: error %d%s", fn, rc, msg)
}

func (c *Comm) Name() string { return "mpi" }
func (c *Comm) Rank() int    { return c.rank }
func (c *Comm) Size() int    { return c.size }

// Timeout is how long a collective waits for the other ranks.
func (c *Comm) Timeout() time.Duration { return c.timeout }

// Close frees the communicator and, when Open initialised MPI and this
// was the last open Comm, finalizes MPI (after which Open fails: MPI
// cannot be initialised twice). A Comm whose collective timed out or was
// cancelled, and has not completed since (Close tests it for 100 ms), is
// not freed, and MPI is then never finalized, since MPI_Finalize would
// wait for the missing ranks: such a process should end with Abort or
// exit.
func (c *Comm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.l == nil {
		return nil
	}
	c.closed = true
	if c.inFlight {
		// The late ranks may have joined since.
		for end := time.Now().Add(100 * time.Millisecond); ; time.Sleep(time.Millisecond) {
			if c.pending() {
				c.inFlight = false
				for _, p := range c.stuck {
					p.Unpin()
				}
				c.stuck = nil
				pkgMu.Lock()
				inFlight--
				pkgMu.Unlock()
				break
			}
			if time.Now().After(end) {
				break
			}
		}
	}
	pkgMu.Lock()
	defer pkgMu.Unlock()
	openComms--
	var err error
	if !c.inFlight {
		if rc := mcall(c.l.commFree, uintptr(unsafe.Pointer(&c.comm))); rc != mpiSuccess {
			err = c.mpiErr("MPI_Comm_free", rc)
		}
	}
	// An Open that timed out may still be completing its duplication:
	// give it a second.
	for end := time.Now().Add(time.Second); openComms == 0 && weInit && inFlight > 0 && !c.inFlight && time.Now().Before(end); {
		pkgMu.Unlock()
		time.Sleep(time.Millisecond)
		pkgMu.Lock()
	}
	if openComms == 0 && weInit && inFlight == 0 && !finalized {
		finalized = true
		if rc := mcall(c.l.finalize); rc != mpiSuccess && err == nil {
			err = c.mpiErr("MPI_Finalize", rc)
		}
	}
	return err
}

// Abort ends every process of the job (MPI_Abort on this communicator)
// with the exit code: the way out after a collective timed out.
func (c *Comm) Abort(code int) {
	if c.l == nil {
		os.Exit(code)
	}
	mcall(c.l.abort, c.comm, uintptr(code))
	os.Exit(code) // MPI_Abort does not return; in case it does
}

// op describes one collective call for messages.
type op struct {
	what  string // "AllReduce"
	bytes int
	dt    tensor.DType
	rop   dist.ReduceOp
	red   bool // dt and rop apply
}

func (o op) String() string {
	if o.red {
		return fmt.Sprintf("%s (%s %s) of %d bytes", o.what, o.dt, o.rop, o.bytes)
	}
	return fmt.Sprintf("%s of %d bytes", o.what, o.bytes)
}

// begin checks the group can run a collective now; it locks c.mu
// unless it returns an error.
func (c *Comm) begin(ctx context.Context, o op) (err error) {
	c.mu.Lock()
	defer func() {
		if err != nil {
			c.mu.Unlock()
		}
	}()
	switch {
	case c.l == nil:
		return fmt.Errorf("mpi: %v: Comm not opened (use mpi.Open)", o)
	case c.closed:
		return fmt.Errorf("mpi: %v on rank %d of %d: Comm is closed", o, c.rank, c.size)
	case c.broken != nil:
		return fmt.Errorf("mpi: %v on rank %d of %d: the group is broken by an earlier error: %w", o, c.rank, c.size, c.broken)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mpi: %v on rank %d of %d: not started: %w", o, c.rank, c.size, err)
	}
	return nil
}

// datatype maps a loom dtype and reduction to MPI's datatype and op
// handles (Float16 and BFloat16 are handled by the caller).
func (c *Comm) datatype(o op) (uintptr, uintptr, error) {
	l := c.l
	var mop uintptr
	switch o.rop {
	case dist.Sum:
		mop = l.opSum
	case dist.Max:
		mop = l.opMax
	case dist.Min:
		mop = l.opMin
	default:
		return 0, 0, fmt.Errorf("mpi: %v: unknown reduction %v", o, o.rop)
	}
	switch o.dt {
	case tensor.Bool:
		// MPI defines the logical ops on C's _Bool; loom's bools are
		// bytes 0 and 1 like it. max is or, min is and; a sum of bools
		// has no bool result.
		switch o.rop {
		case dist.Max:
			return l.tBool, l.opLor, nil
		case dist.Min:
			return l.tBool, l.opLand, nil
		}
		return 0, 0, fmt.Errorf("mpi: %v: bool has no sum (use max for or, min for and)", o)
	case tensor.Int8:
		return l.tI8, mop, nil
	case tensor.Int16:
		return l.tI16, mop, nil
	case tensor.Int32:
		return l.tI32, mop, nil
	case tensor.Int64:
		return l.tI64, mop, nil
	case tensor.Uint8:
		return l.tU8, mop, nil
	case tensor.Float32:
		return l.tF32, mop, nil
	case tensor.Float64:
		return l.tF64, mop, nil
	case tensor.Complex64, tensor.Complex128:
		if o.rop != dist.Sum {
			return 0, 0, fmt.Errorf("mpi: %v: complex numbers have no order; only sum reduces them", o)
		}
		if o.dt == tensor.Complex64 {
			return l.tC64, mop, nil
		}
		return l.tC128, mop, nil
	}
	return 0, 0, fmt.Errorf("mpi: %v: dtype %v has no MPI equivalent", o, o.dt)
}

// checkLen checks buf holds whole elements of dt.
func checkLen(o op, name string, n int, dt tensor.DType) error {
	if !dt.Valid() {
		return fmt.Errorf("mpi: %v: invalid dtype %v", o, dt)
	}
	if n%dt.Size() != 0 {
		return fmt.Errorf("mpi: %v: %s holds %d bytes, not a whole number of %v elements (%d bytes each)", o, name, n, dt, dt.Size())
	}
	return nil
}

// ptr is the address of b's first byte, or of a dummy for an empty b.
func (c *Comm) ptr(b []byte) uintptr {
	if len(b) == 0 {
		return uintptr(unsafe.Pointer(&c.sc.dummy[0]))
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// run runs one collective and waits for it under the context and the
// timeout. Where MPI is thread-multiple, it calls the blocking function
// (block) on a goroutine of its own and waits for it; otherwise it
// starts the non-blocking one (start, which writes its request to
// c.sc.req) and polls it with MPI_Test (see wait). bufs are what MPI
// reads and writes.
func (c *Comm) run(ctx context.Context, o op, fn string, start, block func() int32, bufs ...[]byte) error {
	if !serialize.Load() {
		return c.runBlocking(ctx, o, fn, block, bufs)
	}
	pin := new(runtime.Pinner)
	for _, b := range bufs {
		if len(b) > 0 {
			pin.Pin(unsafe.SliceData(b))
		}
	}
	if rc := start(); rc != mpiSuccess {
		pin.Unpin()
		return fmt.Errorf("mpi: %v on rank %d of %d: %w", o, c.rank, c.size, c.mpiErr("MPI_I"+strings.ToLower(fn[4:5])+fn[5:], rc))
	}
	err := c.wait(ctx, o)
	if err == nil {
		pin.Unpin()
		return nil
	}
	// The request is still in flight: MPI may write the buffers later.
	// Keep them pinned and reachable for the life of the process.
	c.stuck = append(c.stuck, pin)
	c.pending = func() bool {
		rc := mcall(c.l.test, uintptr(unsafe.Pointer(&c.sc.req)), uintptr(unsafe.Pointer(&c.sc.flag)), uintptr(unsafe.Pointer(&c.sc.status[0])))
		return rc == mpiSuccess && c.sc.flag != 0
	}
	c.setBroken(err)
	return err
}

// forcePoll makes Open behave as if MPI were not thread-multiple:
// serialised calls, polled non-blocking collectives (the tests run both
// paths).
var forcePoll = false

// runBlocking calls block on a goroutine of its own and waits for it,
// the context or the timeout. A call that does not return in time stays
// in MPI, blocking its goroutine and thread, with bufs reachable from it.
func (c *Comm) runBlocking(ctx context.Context, o op, fn string, block func() int32, bufs [][]byte) error {
	done := make(chan int32, 1)
	go func() {
		done <- block()
		runtime.KeepAlive(bufs)
	}()
	start := time.Now()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	var err error
	select {
	case rc := <-done:
		if rc != mpiSuccess {
			return fmt.Errorf("mpi: %v on rank %d of %d: %w", o, c.rank, c.size, c.mpiErr(fn, rc))
		}
		return nil
	case <-ctx.Done():
		err = c.expired(ctx, o, start)
	case <-timer.C:
		err = c.expired(nil, o, start)
	}
	c.pending = func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	c.setBroken(err)
	return err
}

// setBroken marks the group broken by err, with a collective in flight.
func (c *Comm) setBroken(err error) {
	c.broken = err
	c.inFlight = true
	pkgMu.Lock()
	inFlight++
	pkgMu.Unlock()
}

// expired is the error of a collective that ctx ended (nil ctx: the
// communicator's timeout passed) after it started at start.
func (c *Comm) expired(ctx context.Context, o op, start time.Time) error {
	if ctx == nil {
		return fmt.Errorf("mpi: %v on rank %d of %d: not complete after %v (a rank died, hangs or called another collective; the group is now broken): %w", o, c.rank, c.size, c.timeout, dist.ErrTimeout)
	}
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("mpi: %v on rank %d of %d: the context's deadline passed after %v (the group is now broken): %w: %w", o, c.rank, c.size, time.Since(start).Round(time.Millisecond), dist.ErrTimeout, err)
	}
	return fmt.Errorf("mpi: %v on rank %d of %d: the group is now broken: %w", o, c.rank, c.size, err)
}

// Polling: MPI_Test without pause while the collective may plausibly
// still be moving data (Open MPI progresses non-blocking collectives
// only inside MPI calls, so a sleeping rank slows the whole group),
// then sleeps growing from 10 µs to 1 ms between tests.
const (
	spinBase    = 20 * time.Millisecond
	spinPerByte = 10 * time.Nanosecond // 100 MB/s: a slow transport
	sleepMin    = 10 * time.Microsecond
	sleepMax    = time.Millisecond
)

// wait polls c.sc.req with MPI_Test until the collective completes, ctx
// ends or the timeout passes.
func (c *Comm) wait(ctx context.Context, o op) error {
	l, sc := c.l, c.sc
	start := time.Now()
	deadline := start.Add(c.timeout)
	spinUntil := start.Add(spinBase + time.Duration(o.bytes)*spinPerByte)
	var sleep time.Duration
	done := ctx.Done()
	for i := 0; ; i++ {
		rc := mcall(l.test, uintptr(unsafe.Pointer(&sc.req)), uintptr(unsafe.Pointer(&sc.flag)), uintptr(unsafe.Pointer(&sc.status[0])))
		if rc != mpiSuccess {
			return fmt.Errorf("mpi: %v on rank %d of %d: %w", o, c.rank, c.size, c.mpiErr("MPI_Test", rc))
		}
		if sc.flag != 0 {
			return nil
		}
		if sleep == 0 && i&63 != 63 {
			continue
		}
		select {
		case <-done:
			return c.expired(ctx, o, start)
		default:
		}
		if time.Now().After(deadline) {
			return c.expired(nil, o, start)
		}
		if time.Now().After(spinUntil) {
			sleep = min(max(2*sleep, sleepMin), sleepMax)
			time.Sleep(sleep)
		}
	}
}

// AllReduce reduces buf over the ranks in place. Float16 and BFloat16
// are reduced in float32 (converted, reduced, rounded once back), bool
// max and min are or and and, complex numbers reduce by sum only.
func (c *Comm) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, rop dist.ReduceOp) error {
	o := op{what: "AllReduce", bytes: len(buf), dt: dt, rop: rop, red: true}
	if err := c.begin(ctx, o); err != nil {
		return err
	}
	defer c.mu.Unlock()
	if err := checkLen(o, "buf", len(buf), dt); err != nil {
		return err
	}
	if dt.IsStorage() {
		f := toFloat32(buf, dt)
		if err := c.allReduce(ctx, o, f, tensor.Float32, rop); err != nil {
			return err
		}
		fromFloat32(buf, f, dt)
		return nil
	}
	return c.allReduce(ctx, o, buf, dt, rop)
}

func (c *Comm) allReduce(ctx context.Context, o op, buf []byte, dt tensor.DType, rop dist.ReduceOp) error {
	o2 := o
	o2.dt = dt
	mt, mop, err := c.datatype(o2)
	if err != nil {
		return err
	}
	es := dt.Size()
	n := len(buf) / es
	for off := 0; off < n || n == 0; off += maxCount {
		cnt := min(maxCount, n-off)
		part := buf[off*es : (off+cnt)*es]
		err := c.run(ctx, o, "MPI_Allreduce", func() int32 {
			return mcall(c.l.iallreduce, mpiInPlace, c.ptr(part), uintptr(cnt), mt, mop, c.comm, uintptr(unsafe.Pointer(&c.sc.req)))
		}, func() int32 {
			return call(c.l.allreduce, mpiInPlace, c.ptr(part), uintptr(cnt), mt, mop, c.comm)
		}, part)
		if err != nil || n == 0 {
			return err
		}
	}
	return nil
}

// AllGather concatenates every rank's send, in rank order, into recv.
func (c *Comm) AllGather(ctx context.Context, send, recv []byte) error {
	o := op{what: "AllGather", bytes: len(send)}
	if err := c.begin(ctx, o); err != nil {
		return err
	}
	defer c.mu.Unlock()
	if len(recv) != c.size*len(send) {
		return fmt.Errorf("mpi: %v on rank %d of %d: recv holds %d bytes, want %d (size %d times %d sent)", o, c.rank, c.size, len(recv), c.size*len(send), c.size, len(send))
	}
	if len(send) > math.MaxInt32 {
		return fmt.Errorf("mpi: %v on rank %d of %d: more than 2^31-1 bytes per rank is not supported", o, c.rank, c.size)
	}
	return c.run(ctx, o, "MPI_Allgather", func() int32 {
		return mcall(c.l.iallgather, c.ptr(send), uintptr(len(send)), c.l.tByte, c.ptr(recv), uintptr(len(send)), c.l.tByte, c.comm, uintptr(unsafe.Pointer(&c.sc.req)))
	}, func() int32 {
		return call(c.l.allgather, c.ptr(send), uintptr(len(send)), c.l.tByte, c.ptr(recv), uintptr(len(send)), c.l.tByte, c.comm)
	}, send, recv)
}

// ReduceScatter reduces send (Size blocks) over the ranks and leaves
// block Rank in recv. Dtypes as in AllReduce.
func (c *Comm) ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, rop dist.ReduceOp) error {
	o := op{what: "ReduceScatter", bytes: len(send), dt: dt, rop: rop, red: true}
	if err := c.begin(ctx, o); err != nil {
		return err
	}
	defer c.mu.Unlock()
	if err := checkLen(o, "recv", len(recv), dt); err != nil {
		return err
	}
	if len(send) != c.size*len(recv) {
		return fmt.Errorf("mpi: %v on rank %d of %d: send holds %d bytes, want %d (size %d times the %d bytes of recv)", o, c.rank, c.size, len(send), c.size*len(recv), c.size, len(recv))
	}
	if dt.IsStorage() {
		s32, r32 := toFloat32(send, dt), make([]byte, len(recv)/dt.Size()*4)
		if err := c.reduceScatter(ctx, o, s32, r32, tensor.Float32, rop); err != nil {
			return err
		}
		fromFloat32(recv, r32, dt)
		return nil
	}
	return c.reduceScatter(ctx, o, send, recv, dt, rop)
}

func (c *Comm) reduceScatter(ctx context.Context, o op, send, recv []byte, dt tensor.DType, rop dist.ReduceOp) error {
	o2 := o
	o2.dt = dt
	mt, mop, err := c.datatype(o2)
	if err != nil {
		return err
	}
	cnt := len(recv) / dt.Size()
	if cnt > math.MaxInt32 {
		return fmt.Errorf("mpi: %v on rank %d of %d: more than 2^31-1 elements per rank is not supported", o, c.rank, c.size)
	}
	return c.run(ctx, o, "MPI_Reduce_scatter_block", func() int32 {
		return mcall(c.l.ireduceScatterBlock, c.ptr(send), c.ptr(recv), uintptr(cnt), mt, mop, c.comm, uintptr(unsafe.Pointer(&c.sc.req)))
	}, func() int32 {
		return call(c.l.reduceScatterBlock, c.ptr(send), c.ptr(recv), uintptr(cnt), mt, mop, c.comm)
	}, send, recv)
}

// Broadcast copies root's buf into every rank's buf.
func (c *Comm) Broadcast(ctx context.Context, buf []byte, root int) error {
	o := op{what: "Broadcast", bytes: len(buf)}
	if err := c.begin(ctx, o); err != nil {
		return err
	}
	defer c.mu.Unlock()
	if root < 0 || root >= c.size {
		return fmt.Errorf("mpi: %v on rank %d of %d: root %d out of range", o, c.rank, c.size, root)
	}
	n := len(buf)
	for off := 0; off < n || n == 0; off += maxCount {
		part := buf[off:min(off+maxCount, n)]
		err := c.run(ctx, o, "MPI_Bcast", func() int32 {
			return mcall(c.l.ibcast, c.ptr(part), uintptr(len(part)), c.l.tByte, uintptr(root), c.comm, uintptr(unsafe.Pointer(&c.sc.req)))
		}, func() int32 {
			return call(c.l.bcast, c.ptr(part), uintptr(len(part)), c.l.tByte, uintptr(root), c.comm)
		}, part)
		if err != nil || n == 0 {
			return err
		}
	}
	return nil
}

// Barrier returns when every rank has called it.
func (c *Comm) Barrier(ctx context.Context) error {
	o := op{what: "Barrier"}
	if err := c.begin(ctx, o); err != nil {
		return err
	}
	defer c.mu.Unlock()
	return c.run(ctx, o, "MPI_Barrier", func() int32 {
		return mcall(c.l.ibarrier, c.comm, uintptr(unsafe.Pointer(&c.sc.req)))
	}, func() int32 {
		return call(c.l.barrier, c.comm)
	})
}

// toFloat32 widens Float16 or BFloat16 elements to float32 bytes.
func toFloat32(b []byte, dt tensor.DType) []byte {
	n := len(b) / 2
	out := make([]byte, 4*n)
	for i := range n {
		h := binary.LittleEndian.Uint16(b[2*i:])
		var f float32
		if dt == tensor.Float16 {
			f = tensor.F16(h).Float32()
		} else {
			f = tensor.BF16(h).Float32()
		}
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// fromFloat32 rounds float32 bytes f back into dst's Float16 or BFloat16.
func fromFloat32(dst, f []byte, dt tensor.DType) {
	for i := range len(dst) / 2 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:]))
		var h uint16
		if dt == tensor.Float16 {
			h = uint16(tensor.F16FromFloat32(v))
		} else {
			h = uint16(tensor.BF16FromFloat32(v))
		}
		binary.LittleEndian.PutUint16(dst[2*i:], h)
	}
}
