// fftw_bench times FFTW 3 (single precision, one thread, FFTW_MEASURE
// plans, out of place) on the FFT workloads of bench/cmd/fftpeers and
// prints one JSON line per workload: {"name": ..., "ns": median ns per
// transform, "rounds": ...}. Build: cc -O2 fftw_bench.c -lfftw3f -lm.
// Usage: fftw_bench [target_ms] [rounds]
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// The inputs: bench.Uniform(seed, n, -1, 1) (bench/data.go), so every
// engine transforms the same numbers.
static float uniform(unsigned long long seed, unsigned long long i) {
	unsigned long long z = seed * 0xD1B54A32D192ED03ULL + (i + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z = z ^ (z >> 31);
	double u = (double)(z >> 40) / (double)(1ULL << 24);
	return (float)(2.0 * u + -1.0);
}

static void run(const char *name, fftwf_plan p, double target_ms, int rounds) {
	fftwf_execute(p);
	int iters = 1;
	for (;;) {
		double t0 = now_ns();
		for (int i = 0; i < iters; i++) fftwf_execute(p);
		double dt = now_ns() - t0;
		if (dt > target_ms * 1e6 || iters > (1 << 24)) break;
		iters *= 2;
	}
	double *med = malloc(sizeof(double) * rounds);
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < iters; i++) fftwf_execute(p);
		med[r] = (now_ns() - t0) / iters;
	}
	qsort(med, rounds, sizeof(double), cmp);
	printf("{\"name\": \"%s\", \"ns\": %.1f, \"rounds\": %d, \"iters\": %d}\n", name, med[rounds / 2], rounds, iters);
	fflush(stdout);
	free(med);
}

int main(int argc, char **argv) {
	double target = argc > 1 ? atof(argv[1]) : 300;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	const char *filter = argc > 3 ? argv[3] : "";
	struct { const char *name; int kind, n0, n1; } w[] = {
		{"fft/c64/1d-1048576", 0, 1 << 20, 0},
		{"fft/c64/1d-1000", 0, 1000, 0},
		{"fft/c64/2d-4096x4096", 1, 4096, 4096},
		{"rfft2/f32/1024x1024", 2, 1024, 1024},
	};
	for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
		if (*filter && !strstr(w[k].name, filter)) continue;
		size_t n = (size_t)w[k].n0 * (w[k].n1 ? w[k].n1 : 1);
		fftwf_plan p;
		if (w[k].kind == 2) {
			float *in = fftwf_malloc(sizeof(float) * n);
			fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * w[k].n0 * (w[k].n1 / 2 + 1));
			p = fftwf_plan_dft_r2c_2d(w[k].n0, w[k].n1, in, out, FFTW_MEASURE);
			for (size_t i = 0; i < n; i++) in[i] = uniform(2, i);
			run(w[k].name, p, target, rounds);
			fftwf_destroy_plan(p);
			fftwf_free(in);
			fftwf_free(out);
			continue;
		}
		fftwf_complex *in = fftwf_malloc(sizeof(fftwf_complex) * n), *out = fftwf_malloc(sizeof(fftwf_complex) * n);
		if (w[k].kind == 0)
			p = fftwf_plan_dft_1d(w[k].n0, in, out, FFTW_FORWARD, FFTW_MEASURE);
		else
			p = fftwf_plan_dft_2d(w[k].n0, w[k].n1, in, out, FFTW_FORWARD, FFTW_MEASURE);
		for (size_t i = 0; i < n; i++) {
			in[i][0] = uniform(1, 2 * i);
			in[i][1] = uniform(1, 2 * i + 1);
		}
		run(w[k].name, p, target, rounds);
		fftwf_destroy_plan(p);
		fftwf_free(in);
		fftwf_free(out);
	}
	return 0;
}
