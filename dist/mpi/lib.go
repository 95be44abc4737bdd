//go:build linux

package mpi

import (
	"fmt"
	"os"
	"strings"

	"github.com/ebitengine/purego"
)

// defaultLib is Open MPI's C library as Debian and most distributions
// install it (ABI version 40: Open MPI 3.x, 4.x and 5.x).
const defaultLib = "libmpi.so.40"

// loadLib opens libmpi ($LOOM_MPI_LIB or libmpi.so.40 through the
// loader) and looks up every function and predefined object. Its errors
// wrap ErrUnavailable.
func loadLib() (*lib, error) {
	path := os.Getenv("LOOM_MPI_LIB")
	from := "$LOOM_MPI_LIB"
	if path == "" {
		path, from = defaultLib, "the loader"
	}
	// RTLD_GLOBAL: Open MPI dlopens its components (mca_*.so), which
	// resolve their references to libmpi and libopen-pal through the
	// global namespace.
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot open %s (from %s): %v; install Open MPI (Debian: apt-get install openmpi-bin) or set $LOOM_MPI_LIB", ErrUnavailable, path, from, err)
	}
	l := &lib{path: path}
	var missing []string
	sym := func(dst *uintptr, name string) {
		a, err := purego.Dlsym(h, name)
		if err != nil || a == 0 {
			missing = append(missing, name)
			return
		}
		*dst = a
	}
	// Open MPI's predefined handles first: their absence means another
	// MPI (MPICH and its derivatives define the handles as integer
	// constants in mpi.h, which a program without the header cannot see).
	sym(&l.commWorld, "ompi_mpi_comm_world")
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s is not Open MPI (no symbol ompi_mpi_comm_world); only Open MPI's libmpi is supported (MPICH's handles are integer constants of its mpi.h, not yet bound)", ErrUnavailable, path)
	}
	for _, f := range []struct {
		dst  *uintptr
		name string
	}{
		{&l.initialized, "MPI_Initialized"},
		{&l.finalized, "MPI_Finalized"},
		{&l.initThread, "MPI_Init_thread"},
		{&l.queryThread, "MPI_Query_thread"},
		{&l.finalize, "MPI_Finalize"},
		{&l.abort, "MPI_Abort"},
		{&l.commRank, "MPI_Comm_rank"},
		{&l.commSize, "MPI_Comm_size"},
		{&l.commDup, "MPI_Comm_dup"},
		{&l.commFree, "MPI_Comm_free"},
		{&l.commSetErrhandler, "MPI_Comm_set_errhandler"},
		{&l.iallreduce, "MPI_Iallreduce"},
		{&l.iallgather, "MPI_Iallgather"},
		{&l.ireduceScatterBlock, "MPI_Ireduce_scatter_block"},
		{&l.ibcast, "MPI_Ibcast"},
		{&l.ibarrier, "MPI_Ibarrier"},
		{&l.allreduce, "MPI_Allreduce"},
		{&l.allgather, "MPI_Allgather"},
		{&l.reduceScatterBlock, "MPI_Reduce_scatter_block"},
		{&l.bcast, "MPI_Bcast"},
		{&l.barrier, "MPI_Barrier"},
		{&l.test, "MPI_Test"},
		{&l.errorString, "MPI_Error_string"},
		{&l.libraryVersion, "MPI_Get_library_version"},
		{&l.errorsReturn, "ompi_mpi_errors_return"},
		{&l.opSum, "ompi_mpi_op_sum"},
		{&l.opMax, "ompi_mpi_op_max"},
		{&l.opMin, "ompi_mpi_op_min"},
		{&l.opLor, "ompi_mpi_op_lor"},
		{&l.opLand, "ompi_mpi_op_land"},
		{&l.tByte, "ompi_mpi_byte"},
		{&l.tBool, "ompi_mpi_c_bool"},
		{&l.tI8, "ompi_mpi_int8_t"},
		{&l.tI16, "ompi_mpi_int16_t"},
		{&l.tI32, "ompi_mpi_int32_t"},
		{&l.tI64, "ompi_mpi_int64_t"},
		{&l.tU8, "ompi_mpi_uint8_t"},
		{&l.tF32, "ompi_mpi_float"},
		{&l.tF64, "ompi_mpi_double"},
		{&l.tC64, "ompi_mpi_c_float_complex"},
		{&l.tC128, "ompi_mpi_c_double_complex"},
	} {
		sym(f.dst, f.name)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s lacks %s (Open MPI older than 3.0?)", ErrUnavailable, path, strings.Join(missing, ", "))
	}
	return l, nil
}

// call calls fn with args and returns its int result.
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}
