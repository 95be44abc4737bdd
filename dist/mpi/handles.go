package mpi

// lib holds the bound functions (addresses for purego.SyscallN) and the
// predefined handles (addresses of Open MPI's global objects).
type lib struct {
	path string

	// functions
	initialized, finalized, initThread, queryThread, finalize, abort uintptr
	commRank, commSize, commDup, commFree, commSetErrhandler         uintptr
	iallreduce, iallgather, ireduceScatterBlock, ibcast, ibarrier    uintptr
	allreduce, allgather, reduceScatterBlock, bcast, barrier         uintptr
	test, errorString, libraryVersion                                uintptr

	// predefined handles: MPI_COMM_WORLD, MPI_ERRORS_RETURN, the ops
	// and the datatypes.
	commWorld, errorsReturn                                           uintptr
	opSum, opMax, opMin, opLor, opLand                                uintptr
	tByte, tBool, tI8, tI16, tI32, tI64, tU8, tF32, tF64, tC64, tC128 uintptr
}
