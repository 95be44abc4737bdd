/*
 * allreduce.c: the C side of make bench-mpi (bench/cmd/mpibench, which
 * compiles it with mpicc). On every rank, for each size in bytes given
 * on the command line: an in-place MPI_Allreduce (MPI_SUM of float32) of
 * that many bytes, a few untimed calls, a barrier, then the timed calls
 * back to back. Rank 0 prints one line per size:
 *
 *   c <bytes> <iterations> <seconds per call>
 *
 * usage: mpirun -np 2 ./allreduce ITERS_FOR_1MB BYTES...
 * (each size runs ITERS_FOR_1MB * 1 MB / BYTES timed calls, at least 5
 * and at most 100000; mpibench computes the same count).
 *
 * Compiled with -DLOOM_BENCH_LIB -shared, it is instead the library of
 * loom_allreduce_loop, the same timed loop, which mpibench's Go ranks
 * call (through purego) in turn with loom's own loop, in one process.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* loom_allreduce_loop: iters in-place MPI_Allreduce calls of n floats
 * on MPI_COMM_WORLD after a barrier; returns seconds per call. */
double loom_allreduce_loop(float *buf, long n, int iters) {
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	return (MPI_Wtime() - t0) / iters;
}

#ifndef LOOM_BENCH_LIB
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: allreduce ITERS_FOR_1MB BYTES...\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int base = atoi(argv[1]);
	for (int a = 2; a < argc; a++) {
		size_t bytes = (size_t)atoll(argv[a]), n = bytes / sizeof(float);
		double it = (double)base * (1 << 20) / (double)bytes;
		int iters = it < 5 ? 5 : it > 100000 ? 100000 : (int)it;
		float *buf = malloc(bytes);
		for (size_t i = 0; i < n; i++)
			buf[i] = 1.0f;
		for (int i = 0; i < 3; i++)
			MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double t = loom_allreduce_loop(buf, (long)n, iters);
		if (rank == 0)
			printf("c %zu %d %.9f\n", bytes, iters, t);
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
#endif
