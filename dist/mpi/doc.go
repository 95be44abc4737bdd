// Package mpi is a dist.Communicator over Open MPI's C library
// (libmpi.so.40, Debian's openmpi-bin/libopenmpi3 packages), loaded at
// run time with purego: no cgo, so loom still builds everywhere, and a
// machine without MPI gets an error wrapping ErrUnavailable from Open.
//
// Launch a program using it with mpirun, one process per rank:
//
//	mpirun -np 2 ./train                       # 2 ranks on this machine
//	mpirun -np 8 --hostfile hosts ./train      # hosts: "node1 slots=4" lines
//
// Open joins the job: every rank calls it, and gets its Rank and the Size.
// A program not started by mpirun is a group of one.
//
// # Binding MPI without its header
//
// An MPI program names MPI's predefined objects through macros of mpi.h:
// MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM... In Open MPI each expands to the
// address of a global object of libmpi, for example
//
//	#define MPI_COMM_WORLD OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world)
//	#define MPI_FLOAT      OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_float)
//
// where OMPI_PREDEFINED_GLOBAL(type, global) is ((type) &(global)). A
// handle (MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request) is a pointer, so
// this package looks up those symbols (ompi_mpi_comm_world,
// ompi_mpi_float, ompi_mpi_op_sum, ompi_mpi_errors_return, ...) with
// dlsym and passes their addresses as the handles, exactly the values a
// C program compiled against mpi.h passes. The functions (MPI_Iallreduce,
// MPI_Test...) are called through purego.SyscallN; MPI_IN_PLACE is
// (void *)1; MPI_Status, which this package only gives MPI_Test room
// for, is 24 bytes (four ints and a size_t). These are Open MPI's ABI
// from 3.0 to 5.x (soname libmpi.so.40). MPICH and its derivatives
// (Intel MPI, MVAPICH, Cray MPICH) define their handles as integer
// constants in their mpi.h, which cannot be looked up at run time: they
// are not supported yet (Open reports "not Open MPI"); binding them
// means copying those constants (the MPICH ABI is stable) into a second
// handle table.
//
// # Collectives, timeouts and threads
//
// Each collective runs on a duplicate of MPI_COMM_WORLD (MPI_Comm_dup),
// so loom's messages never match those of a program that uses MPI
// itself, with MPI_ERRORS_RETURN so that MPI errors come back as Go
// errors instead of aborting the job. Every wait ends when the
// collective completes, the context ends, or the communicator's timeout
// passes (WithTimeout; $LOOM_DIST_TIMEOUT, a Go duration or seconds;
// DefaultTimeout, 5 minutes): a rank that died or hangs gives the others
// an error wrapping dist.ErrTimeout naming the collective, its bytes,
// the rank and the size, instead of a hang; a cancelled context gives
// the context's error.
//
// Where MPI is thread-multiple (the usual case) the collective is MPI's
// blocking one (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block,
// MPI_Bcast, MPI_Barrier) called on a goroutine of its own while the
// caller waits for it, the context and a timer. Otherwise it is the
// non-blocking one (MPI_Iallreduce, MPI_Iallgather,
// MPI_Ireduce_scatter_block, MPI_Ibcast, MPI_Ibarrier) polled with
// MPI_Test: spinning for 20 ms plus 10 ns a byte (Open MPI moves
// non-blocking collectives only inside MPI calls, so a sleeping rank
// slows the whole group), then sleeping between tests, growing from
// 10 µs to 1 ms. Both paths are tested; the blocking one is the default
// because Open MPI 4.1's non-blocking collectives (its libnbc component)
// use slower algorithms than the blocking ones (coll/tuned): measured
// on this 2-core machine with 2 ranks, a C loop of MPI_Iallreduce and
// MPI_Test ran at 40 to 70% of the C loop of MPI_Allreduce for 1 to 64
// MB, and loom's polling path no better, while the goroutine path
// reaches 93 to 100% of the blocking C loop's bandwidth from 1 to 64 MB
// (make bench-mpi). Its cost is a goroutine and a wake-up per call, a
// few microseconds: small collectives (4 kB: a third of C's rate) pay
// it in full.
//
// A collective that timed out or was cancelled is still in flight in
// MPI (a blocked goroutine, or a request), and its buffers may still be
// written: the communicator is broken (every later call fails at once),
// and MPI is not finalized (it would wait for the missing rank): end the
// process, or call Abort to end every rank.
//
// MPI is initialised with MPI_Init_thread asking for
// MPI_THREAD_MULTIPLE: goroutines move between OS threads, so
// MPI_THREAD_FUNNELED (only the main thread calls MPI) cannot be
// promised, and while a Comm serialises its own calls, several Comms,
// the program's own MPI calls or a timed-out collective's leftovers may
// meet in MPI at once (a collective that timed out stays inside MPI
// while the program goes on). Open MPI 4 provides MULTIPLE with its
// shared memory and TCP transports. Where MPI was initialised before
// Open at a lower level, this package serialises every MPI call of its
// own behind a process-wide lock and polls the non-blocking collectives,
// so that no call holds the lock while it waits for other ranks.
//
// # Element types
//
// AllGather and Broadcast move bytes (MPI_BYTE). AllReduce and
// ReduceScatter map int8, int16, int32, int64, uint8, float32 and
// float64 to MPI_INT8_T ... MPI_DOUBLE with MPI_SUM, MPI_MAX and MPI_MIN;
// complex64 and complex128 to MPI_C_FLOAT_COMPLEX and
// MPI_C_DOUBLE_COMPLEX, sum only; bool to MPI_C_BOOL with max as
// MPI_LOR and min as MPI_LAND (sum is an error). float16 and bfloat16,
// which MPI lacks, are widened to float32, reduced, and rounded once
// back (exact for max and min; a sum rounds once instead of at every
// step, and every rank gets the same bits).
package mpi
