/*
 * allreduce.c: the C side of make bench-mpi (bench/cmd/mpibench, which
 * compiles it with mpicc). On every rank, for each size in megabytes
 * given on the command line: an in-place MPI_Allreduce (MPI_SUM of
 * float32) of that many bytes, a few untimed calls, a barrier, then
 * `iters` timed calls back to back. Rank 0 prints one line per size:
 *
 *   c <bytes> <iterations> <seconds per call>
 *
 * usage: mpirun -np 2 ./allreduce ITERS_FOR_1MB MB...
 * (each size runs max(5, ITERS_FOR_1MB/MB) timed calls).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: allreduce ITERS_FOR_1MB MB...\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int base = atoi(argv[1]);
	for (int a = 2; a < argc; a++) {
		int mb = atoi(argv[a]);
		size_t bytes = (size_t)mb << 20, n = bytes / sizeof(float);
		int iters = base / mb;
		if (iters < 5)
			iters = 5;
		float *buf = malloc(bytes);
		for (size_t i = 0; i < n; i++)
			buf[i] = 1.0f;
		for (int i = 0; i < 3; i++)
			MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double t = (MPI_Wtime() - t0) / iters;
		if (rank == 0)
			printf("c %zu %d %.9f\n", bytes, iters, t);
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
