//go:build linux

package cu

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NCCLComm is an ncclComm_t, one rank's handle of a communicator.
type NCCLComm uintptr

// NCCLUniqueIDBytes is NCCL_UNIQUE_ID_BYTES, the size of an ncclUniqueId.
const NCCLUniqueIDBytes = 128

// NCCLUniqueID is an ncclUniqueId (typedef struct { char
// internal[NCCL_UNIQUE_ID_BYTES]; }): made by one rank with GetUniqueID
// and handed to every rank (by MPI, a file, the environment) before
// CommInitRank.
type NCCLUniqueID [NCCLUniqueIDBytes]byte

// NCCLDataType is an ncclDataType_t.
type NCCLDataType int32

// The ncclDataType_t values of nccl.h.
const (
	NCCLInt8     NCCLDataType = 0 // ncclInt8 (ncclChar)
	NCCLUint8    NCCLDataType = 1 // ncclUint8
	NCCLInt32    NCCLDataType = 2 // ncclInt32 (ncclInt)
	NCCLUint32   NCCLDataType = 3 // ncclUint32
	NCCLInt64    NCCLDataType = 4 // ncclInt64
	NCCLUint64   NCCLDataType = 5 // ncclUint64
	NCCLFloat16  NCCLDataType = 6 // ncclFloat16 (ncclHalf)
	NCCLFloat32  NCCLDataType = 7 // ncclFloat32 (ncclFloat)
	NCCLFloat64  NCCLDataType = 8 // ncclFloat64 (ncclDouble)
	NCCLBfloat16 NCCLDataType = 9 // ncclBfloat16 (NCCL 2.10 and later)
)

// NCCLRedOp is an ncclRedOp_t.
type NCCLRedOp int32

// The built-in ncclRedOp_t values of nccl.h.
const (
	NCCLSum  NCCLRedOp = 0 // ncclSum
	NCCLProd NCCLRedOp = 1 // ncclProd
	NCCLMax  NCCLRedOp = 2 // ncclMax
	NCCLMin  NCCLRedOp = 3 // ncclMin
	NCCLAvg  NCCLRedOp = 4 // ncclAvg (NCCL 2.10 and later)
)

// NCCLResult is an ncclResult_t. Every non-zero NCCLResult is an error.
type NCCLResult int32

// The ncclResult_t values of nccl.h.
const (
	NCCLSuccess            NCCLResult = 0 // ncclSuccess
	NCCLUnhandledCudaError NCCLResult = 1 // ncclUnhandledCudaError
	NCCLSystemError        NCCLResult = 2 // ncclSystemError
	NCCLInternalError      NCCLResult = 3 // ncclInternalError
	NCCLInvalidArgument    NCCLResult = 4 // ncclInvalidArgument
	NCCLInvalidUsage       NCCLResult = 5 // ncclInvalidUsage
	NCCLRemoteError        NCCLResult = 6 // ncclRemoteError
	NCCLInProgress         NCCLResult = 7 // ncclInProgress
)

var ncclNames = [...]string{"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"}

// NCCLError is a failed NCCL call: its result and NCCL's message for it
// (ncclGetErrorString).
type NCCLError struct {
	Result NCCLResult
	Msg    string
}

// Error formats the error as "ncclRemoteError (6): remote process exited
// or there was a network error".
func (e *NCCLError) Error() string {
	name := fmt.Sprintf("ncclResult_t(%d)", int32(e.Result))
	if e.Result >= 0 && int(e.Result) < len(ncclNames) {
		name = ncclNames[e.Result]
	}
	if e.Msg == "" {
		return fmt.Sprintf("%s (%d)", name, int32(e.Result))
	}
	return fmt.Sprintf("%s (%d): %s", name, int32(e.Result), e.Msg)
}

// ncclByValueABI: CommInitRank's layout of the by-value id is the System
// V AMD64 one.
const ncclByValueABI = runtime.GOARCH == "amd64"

var ncclSpec = libSpec{
	what:    "libnccl (NCCL)",
	env:     "LOOM_LIBNCCL",
	sonames: []string{"libnccl.so.2"},
	dirs:    stdDirs,
}

// NCCL is the loaded NCCL library (libnccl.so.2). Every function is called
// through purego.SyscallN, never under a lock: NCCL's calls block until the other ranks take part (the
// communicator's creation always; the collectives in the fake library,
// where ranks are threads of one process), so two ranks in one process
// must be able to be inside NCCL at the same time.
//
// The collectives take device pointers and a stream and are enqueued on
// the stream; call them (and CommInitRank) from the goroutine that holds
// the device's current context. CommAbort and CommGetAsyncError may be
// called from any goroutine (a watchdog's).
type NCCL struct {
	path string
	// ncclGetErrorString returns a static C string, which purego copies.
	ncclGetErrorString func(r NCCLResult) string
	fn                 struct {
		ncclGetVersion, ncclGetUniqueId, ncclCommInitRank, ncclCommDestroy, ncclCommAbort uintptr
		ncclCommGetAsyncError                                                             uintptr
		ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclBroadcast, ncclReduce        uintptr
	}
}

// LoadNCCL opens libnccl: the file named by $LOOM_LIBNCCL, then
// libnccl.so.2 through the loader, then in $CUDA_HOME/lib64,
// /usr/local/cuda/lib64, /usr/local/nvidia/lib64 and
// /usr/lib/x86_64-linux-gnu. The error is a *LoadError listing every path
// tried (wrapping ErrNotFound), or wraps ErrMissingSymbol.
func LoadNCCL() (*NCCL, error) {
	return loadNCCL(ncclSpec.candidates(os.Getenv))
}

func loadNCCL(cands []candidate) (*NCCL, error) {
	n := &NCCL{}
	f := &n.fn
	p, err := load(ncclSpec, cands, []symbol{
		{"ncclGetVersion", addrOf{&f.ncclGetVersion}},
		{"ncclGetUniqueId", addrOf{&f.ncclGetUniqueId}},
		{"ncclCommInitRank", addrOf{&f.ncclCommInitRank}},
		{"ncclCommDestroy", addrOf{&f.ncclCommDestroy}},
		{"ncclCommAbort", addrOf{&f.ncclCommAbort}},
		{"ncclCommGetAsyncError", addrOf{&f.ncclCommGetAsyncError}},
		{"ncclGetErrorString", &n.ncclGetErrorString},
		{"ncclAllReduce", addrOf{&f.ncclAllReduce}},
		{"ncclAllGather", addrOf{&f.ncclAllGather}},
		{"ncclReduceScatter", addrOf{&f.ncclReduceScatter}},
		{"ncclBroadcast", addrOf{&f.ncclBroadcast}},
		{"ncclReduce", addrOf{&f.ncclReduce}},
	})
	if err != nil {
		return nil, err
	}
	n.path = p
	return n, nil
}

// Path returns the file that was opened.
func (n *NCCL) Path() string { return n.path }

// err turns a returned ncclResult_t (the low 32 bits of the return
// register) into an error with NCCL's message.
func (n *NCCL) err(r uintptr) error {
	res := NCCLResult(int32(r))
	if res == NCCLSuccess {
		return nil
	}
	return &NCCLError{Result: res, Msg: n.ErrorString(res)}
}

// ErrorString is NCCL's message for r: ncclGetErrorString.
func (n *NCCL) ErrorString(r NCCLResult) string { return n.ncclGetErrorString(r) }

// Version returns NCCL's version code, e.g. 22704 for 2.27.4
// (major·10000 + minor·100 + patch): ncclGetVersion.
func (n *NCCL) Version() (int, error) {
	var v int32
	r, _, _ := purego.SyscallN(n.fn.ncclGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), n.err(r)
}

// GetUniqueID makes a new unique id: ncclGetUniqueId. With NCCL_COMM_ID
// (host:port) set in the environment every process gets the same id,
// naming the bootstrap server that rank 0 runs at that address.
func (n *NCCL) GetUniqueID() (NCCLUniqueID, error) {
	var id NCCLUniqueID
	r, _, _ := purego.SyscallN(n.fn.ncclGetUniqueId, uintptr(unsafe.Pointer(&id)))
	return id, n.err(r)
}

// CommInitRank creates rank's handle of the communicator of nranks ranks
// named by id, on the current CUDA device; it returns when every rank has
// called it: ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId
// commId, int rank).
//
// The id is a 128-byte struct passed by value. In the System V AMD64 ABI
// an aggregate larger than 16 bytes is of class MEMORY: it is copied onto
// the stack, in the argument area, and consumes no integer register, so
// the integer arguments around it still take the registers in order
// (comm in rdi, nranks in rsi, rank in rdx). purego.SyscallN puts its
// first six words in rdi, rsi, rdx, rcx, r8 and r9 and the rest on the
// stack in order, so the call is SyscallN(f, comm, nranks, rank, 0, 0, 0,
// w0, ..., w15) with w0..w15 the id's bytes as 16 little-endian words:
// three padding words fill the unused registers and the id becomes the
// stack argument area. The fake NCCL's ncclCommInitRank takes the struct
// by value and the tests check it receives the bytes and the rank (so a
// wrong layout fails there, not on a GPU machine). On arm64 (AAPCS64) a
// large aggregate is passed by reference instead; only amd64 is
// supported.
func (n *NCCL) CommInitRank(nranks int, id NCCLUniqueID, rank int) (NCCLComm, error) {
	if !ncclByValueABI {
		return 0, fmt.Errorf("cu: ncclCommInitRank: passing the 128-byte ncclUniqueId by value is implemented for amd64 only")
	}
	var w [NCCLUniqueIDBytes / 8]uintptr
	for i := range w {
		w[i] = uintptr(le64(id[8*i:]))
	}
	// The conversion of &c must be in the call's argument list: SyscallN
	// is go:uintptrescapes, which then moves c to the heap (computed
	// beforehand, the address of a stack variable goes stale when the
	// call grows the goroutine's stack).
	var c NCCLComm
	r, _, _ := purego.SyscallN(n.fn.ncclCommInitRank, uintptr(unsafe.Pointer(&c)), uintptr(nranks), uintptr(rank), 0, 0, 0,
		w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15])
	return c, n.err(r)
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// CommDestroy frees a communicator after its work completes:
// ncclCommDestroy.
func (n *NCCL) CommDestroy(c NCCLComm) error {
	r, _, _ := purego.SyscallN(n.fn.ncclCommDestroy, uintptr(c))
	return n.err(r)
}

// CommAbort stops a communicator's pending work and frees it:
// ncclCommAbort. The handle is invalid afterwards.
func (n *NCCL) CommAbort(c NCCLComm) error {
	r, _, _ := purego.SyscallN(n.fn.ncclCommAbort, uintptr(c))
	return n.err(r)
}

// CommGetAsyncError returns the error of the communicator's work in
// flight (ncclSuccess, ncclInProgress, or an error):
// ncclCommGetAsyncError.
func (n *NCCL) CommGetAsyncError(c NCCLComm) (NCCLResult, error) {
	var a NCCLResult
	r, _, _ := purego.SyscallN(n.fn.ncclCommGetAsyncError, uintptr(c), uintptr(unsafe.Pointer(&a)))
	return a, n.err(r)
}

// AllReduce reduces count elements of send over the ranks into recv
// (which may be send) on every rank: ncclAllReduce.
func (n *NCCL) AllReduce(send, recv DevicePtr, count int64, dt NCCLDataType, op NCCLRedOp, c NCCLComm, s Stream) error {
	r, _, _ := purego.SyscallN(n.fn.ncclAllReduce, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(c), uintptr(s))
	return n.err(r)
}

// AllGather concatenates every rank's count elements of send into recv in
// rank order: ncclAllGather.
func (n *NCCL) AllGather(send, recv DevicePtr, count int64, dt NCCLDataType, c NCCLComm, s Stream) error {
	r, _, _ := purego.SyscallN(n.fn.ncclAllGather, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(c), uintptr(s))
	return n.err(r)
}

// ReduceScatter reduces send (nranks blocks of count elements) over the
// ranks and leaves block rank in recv (count elements):
// ncclReduceScatter.
func (n *NCCL) ReduceScatter(send, recv DevicePtr, count int64, dt NCCLDataType, op NCCLRedOp, c NCCLComm, s Stream) error {
	r, _, _ := purego.SyscallN(n.fn.ncclReduceScatter, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(c), uintptr(s))
	return n.err(r)
}

// Broadcast copies root's count elements of send into every rank's recv:
// ncclBroadcast.
func (n *NCCL) Broadcast(send, recv DevicePtr, count int64, dt NCCLDataType, root int, c NCCLComm, s Stream) error {
	r, _, _ := purego.SyscallN(n.fn.ncclBroadcast, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(root), uintptr(c), uintptr(s))
	return n.err(r)
}

// Reduce reduces count elements of send over the ranks into root's recv
// (the other ranks' recv is not written): ncclReduce.
func (n *NCCL) Reduce(send, recv DevicePtr, count int64, dt NCCLDataType, op NCCLRedOp, root int, c NCCLComm, s Stream) error {
	r, _, _ := purego.SyscallN(n.fn.ncclReduce, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(root), uintptr(c), uintptr(s))
	return n.err(r)
}
