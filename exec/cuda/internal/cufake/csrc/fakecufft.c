// fakecufft.c: an emulated cuFFT (libcufft) for testing loom's CUDA
// backend without a GPU. Plans of rank 1 to 3 in cuFFT's advanced layout
// (cufftMakePlanMany64) are executed on the host as naive DFTs (O(n^2) per
// one-dimensional line, accumulated in double) on the emulated device
// memory of fakecuda.c, which is host memory. Only the symbols loom uses
// are exported, with the real prototypes of cufft.h and the argument
// checks of cuFFT. A plan whose automatic work-area allocation was turned
// off must be given a work area before it runs (CUFFT_NO_WORKSPACE, as
// cuFFT documents); the fake writes over the whole reported work area at
// every execution, as the real library may.
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef enum {
	CUFFT_SUCCESS = 0,
	CUFFT_INVALID_PLAN = 1,
	CUFFT_ALLOC_FAILED = 2,
	CUFFT_INVALID_TYPE = 3,
	CUFFT_INVALID_VALUE = 4,
	CUFFT_INTERNAL_ERROR = 5,
	CUFFT_EXEC_FAILED = 6,
	CUFFT_SETUP_FAILED = 7,
	CUFFT_INVALID_SIZE = 8,
	CUFFT_UNALIGNED_DATA = 9,
	CUFFT_NO_WORKSPACE = 13,
	CUFFT_NOT_SUPPORTED = 16,
} cufftResult;

typedef enum {
	CUFFT_R2C = 0x2a,
	CUFFT_C2R = 0x2c,
	CUFFT_C2C = 0x29,
	CUFFT_D2Z = 0x6a,
	CUFFT_Z2D = 0x6c,
	CUFFT_Z2Z = 0x69,
} cufftType;

#define CUFFT_FORWARD -1
#define CUFFT_INVERSE 1

typedef int cufftHandle;
typedef struct CUstream_st *cudaStream_t;
typedef float cufftReal;
typedef double cufftDoubleReal;
typedef struct { float x, y; } cufftComplex;
typedef struct { double x, y; } cufftDoubleComplex;

#define CUFFT_VERSION 12000

struct plan {
	int live, made, autoalloc;
	void *work;
	cudaStream_t stream;
	cufftType type;
	int rank;
	long long n[3], inembed[3], onembed[3];
	long long istride, idist, ostride, odist, batch;
	size_t worksize;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct plan *plans;
static int nplans, capplans;

// get returns live plan h or NULL (under mu: plans may move).
static struct plan *get(cufftHandle h) {
	if (h < 0 || h >= nplans || !plans[h].live)
		return NULL;
	return &plans[h];
}

API cufftResult cufftGetVersion(int *version) {
	if (!version)
		return CUFFT_INVALID_VALUE;
	*version = CUFFT_VERSION;
	return CUFFT_SUCCESS;
}

API cufftResult cufftCreate(cufftHandle *handle) {
	if (!handle)
		return CUFFT_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	int h = -1;
	for (int i = 0; i < nplans; i++)
		if (!plans[i].live) {
			h = i;
			break;
		}
	if (h < 0) {
		if (nplans == capplans) {
			int cap = capplans ? 2 * capplans : 16;
			struct plan *p = realloc(plans, cap * sizeof *p);
			if (!p) {
				pthread_mutex_unlock(&mu);
				return CUFFT_ALLOC_FAILED;
			}
			plans = p;
			capplans = cap;
		}
		h = nplans++;
	}
	memset(&plans[h], 0, sizeof plans[h]);
	plans[h].live = 1;
	plans[h].autoalloc = 1;
	pthread_mutex_unlock(&mu);
	*handle = h;
	return CUFFT_SUCCESS;
}

API cufftResult cufftDestroy(cufftHandle plan) {
	pthread_mutex_lock(&mu);
	struct plan *p = get(plan);
	if (p)
		p->live = 0;
	pthread_mutex_unlock(&mu);
	return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

API cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream) {
	pthread_mutex_lock(&mu);
	struct plan *p = get(plan);
	if (p)
		p->stream = stream; // every execution is synchronous anyway
	pthread_mutex_unlock(&mu);
	return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

API cufftResult cufftSetAutoAllocation(cufftHandle plan, int autoAllocate) {
	pthread_mutex_lock(&mu);
	struct plan *p = get(plan);
	if (p)
		p->autoalloc = autoAllocate != 0;
	pthread_mutex_unlock(&mu);
	return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

API cufftResult cufftSetWorkArea(cufftHandle plan, void *workArea) {
	pthread_mutex_lock(&mu);
	struct plan *p = get(plan);
	if (p)
		p->work = workArea;
	pthread_mutex_unlock(&mu);
	return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

static int real_in(cufftType t) { return t == CUFFT_R2C || t == CUFFT_D2Z; }
static int real_out(cufftType t) { return t == CUFFT_C2R || t == CUFFT_Z2D; }
static int dbl(cufftType t) { return t == CUFFT_D2Z || t == CUFFT_Z2D || t == CUFFT_Z2Z; }

API cufftResult cufftMakePlanMany64(cufftHandle plan, int rank, long long int *n, long long int *inembed,
                                    long long int istride, long long int idist, long long int *onembed,
                                    long long int ostride, long long int odist, cufftType type,
                                    long long int batch, size_t *workSize) {
	if (type != CUFFT_R2C && type != CUFFT_C2R && type != CUFFT_C2C && type != CUFFT_D2Z && type != CUFFT_Z2D &&
	    type != CUFFT_Z2Z)
		return CUFFT_INVALID_TYPE;
	if (rank < 1 || rank > 3 || !n || !workSize)
		return CUFFT_INVALID_VALUE;
	if (batch < 1)
		return CUFFT_INVALID_SIZE;
	long long total = 1;
	for (int i = 0; i < rank; i++) {
		if (n[i] < 1)
			return CUFFT_INVALID_SIZE;
		total *= n[i];
	}
	struct plan q;
	memset(&q, 0, sizeof q);
	q.type = type;
	q.rank = rank;
	q.batch = batch;
	// The logical input and output shapes: the halved dimension of the
	// real transforms is the last.
	long long in[3], out[3], nin = 1, nout = 1;
	for (int i = 0; i < rank; i++) {
		q.n[i] = n[i];
		in[i] = out[i] = n[i];
	}
	if (real_in(type))
		out[rank - 1] = n[rank - 1] / 2 + 1;
	if (real_out(type))
		in[rank - 1] = n[rank - 1] / 2 + 1;
	for (int i = 0; i < rank; i++) {
		nin *= in[i];
		nout *= out[i];
	}
	if (inembed && onembed) {
		// The advanced layout; inembed[0] and onembed[0] are not read.
		if (istride < 1 || ostride < 1 || idist < 0 || odist < 0)
			return CUFFT_INVALID_VALUE;
		for (int i = 0; i < rank; i++) {
			q.inembed[i] = i ? inembed[i] : in[0];
			q.onembed[i] = i ? onembed[i] : out[0];
			if (q.inembed[i] < in[i] || q.onembed[i] < out[i])
				return CUFFT_INVALID_VALUE;
		}
		q.istride = istride;
		q.idist = idist;
		q.ostride = ostride;
		q.odist = odist;
	} else {
		for (int i = 0; i < rank; i++) {
			q.inembed[i] = in[i];
			q.onembed[i] = out[i];
		}
		q.istride = q.ostride = 1;
		q.idist = nin;
		q.odist = nout;
	}
	(void)total;
	// A plausible work area: one transform's worth of complex elements.
	q.worksize = (size_t)(nin > nout ? nin : nout) * (dbl(type) ? 16 : 8);
	pthread_mutex_lock(&mu);
	struct plan *p = get(plan);
	if (!p) {
		pthread_mutex_unlock(&mu);
		return CUFFT_INVALID_PLAN;
	}
	if (p->made) {
		pthread_mutex_unlock(&mu);
		return CUFFT_INVALID_PLAN; // a plan is made once
	}
	q.live = q.made = 1;
	q.autoalloc = p->autoalloc;
	q.work = p->work;
	q.stream = p->stream;
	*p = q;
	pthread_mutex_unlock(&mu);
	*workSize = q.worksize;
	return CUFFT_SUCCESS;
}

// dft transforms, in place, the lines along axis of the row-major array a
// of dims (rank r) with exponent sign sgn.
static void dft_axis(double complex *a, const long long *dims, int r, int axis, int sgn, double complex *line,
                     double complex *tw) {
	long long len = dims[axis], inner = 1, outer = 1;
	for (int i = axis + 1; i < r; i++)
		inner *= dims[i];
	for (int i = 0; i < axis; i++)
		outer *= dims[i];
	for (long long k = 0; k < len; k++)
		tw[k] = cexp(sgn * 2 * M_PI * I * (double)k / (double)len);
	for (long long o = 0; o < outer; o++)
		for (long long in = 0; in < inner; in++) {
			double complex *x = a + o * len * inner + in;
			for (long long k = 0; k < len; k++) {
				double complex acc = 0;
				for (long long j = 0; j < len; j++)
					acc += x[j * inner] * tw[(j * k) % len];
				line[k] = acc;
			}
			for (long long k = 0; k < len; k++)
				x[k * inner] = line[k];
		}
}

// offset is the element offset of logical index idx (row-major over dims of
// rank r) in an embedded layout.
static long long offset(long long idx, const long long *dims, const long long *embed, int r, long long stride) {
	long long off = 0, mul = 1;
	for (int i = r - 1; i >= 0; i--) {
		long long x = idx % dims[i];
		idx /= dims[i];
		off += x * mul;
		mul *= embed[i];
	}
	return off * stride;
}

static cufftResult exec(cufftHandle h, cufftType t, void *idata, void *odata, int sgn) {
	pthread_mutex_lock(&mu);
	struct plan *pp = get(h);
	struct plan p;
	if (pp)
		p = *pp;
	pthread_mutex_unlock(&mu);
	if (!pp || !p.made)
		return CUFFT_INVALID_PLAN;
	if (p.type != t)
		return CUFFT_INVALID_TYPE;
	if (!idata || !odata)
		return CUFFT_INVALID_VALUE;
	if (sgn != CUFFT_FORWARD && sgn != CUFFT_INVERSE)
		return CUFFT_INVALID_VALUE;
	if (!p.autoalloc && p.worksize > 0 && !p.work)
		return CUFFT_NO_WORKSPACE;
	if (p.work)
		memset(p.work, 0xff, p.worksize);
	int r = p.rank;
	long long in[3], out[3], full = 1, nin = 1, nout = 1;
	for (int i = 0; i < r; i++) {
		in[i] = out[i] = p.n[i];
		full *= p.n[i];
	}
	if (real_in(t))
		out[r - 1] = p.n[r - 1] / 2 + 1;
	if (real_out(t))
		in[r - 1] = p.n[r - 1] / 2 + 1;
	for (int i = 0; i < r; i++) {
		nin *= in[i];
		nout *= out[i];
	}
	long long maxlen = 1;
	for (int i = 0; i < r; i++)
		if (p.n[i] > maxlen)
			maxlen = p.n[i];
	double complex *a = malloc(sizeof *a * (size_t)(full > nin ? full : nin));
	double complex *line = malloc(sizeof *line * (size_t)maxlen);
	double complex *tw = malloc(sizeof *tw * (size_t)maxlen);
	// The whole batch is read before anything is written: in-place
	// transforms (idata == odata) then work.
	double complex *res = malloc(sizeof *res * (size_t)(nout * p.batch));
	if (!a || !line || !tw || !res) {
		free(a), free(line), free(tw), free(res);
		return CUFFT_ALLOC_FAILED;
	}
	int d = dbl(t);
	for (long long b = 0; b < p.batch; b++) {
		for (long long i = 0; i < nin; i++) {
			long long o = b * p.idist + offset(i, in, p.inembed, r, p.istride);
			if (real_in(t))
				a[i] = d ? ((double *)idata)[o] : ((float *)idata)[o];
			else if (d)
				a[i] = ((cufftDoubleComplex *)idata)[o].x + I * ((cufftDoubleComplex *)idata)[o].y;
			else
				a[i] = ((cufftComplex *)idata)[o].x + I * ((cufftComplex *)idata)[o].y;
		}
		double complex *y = res + b * nout;
		if (real_out(t)) {
			// The other axes first, then the last as a Hermitian line:
			// the imaginary parts of its zero (and, for even lengths,
			// Nyquist) terms do not contribute.
			for (int ax = 0; ax < r - 1; ax++)
				dft_axis(a, in, r, ax, CUFFT_INVERSE, line, tw);
			long long n = p.n[r - 1], h = in[r - 1];
			for (long long k = 0; k < n; k++)
				tw[k] = cexp(2 * M_PI * I * (double)k / (double)n);
			for (long long l = 0; l < nin / h; l++) {
				double complex *x = a + l * h;
				for (long long j = 0; j < n; j++) {
					double acc = 0;
					for (long long k = 0; k < n; k++) {
						double complex z = k < h ? x[k] : conj(x[n - k]);
						acc += creal(z * tw[(j * k) % n]);
					}
					y[l * n + j] = acc;
				}
			}
		} else {
			long long *dims = in;
			for (int ax = 0; ax < r; ax++)
				dft_axis(a, dims, r, ax, real_in(t) ? CUFFT_FORWARD : sgn, line, tw);
			if (real_in(t)) {
				long long n = p.n[r - 1], h = out[r - 1];
				for (long long l = 0; l < full / n; l++)
					for (long long k = 0; k < h; k++)
						y[l * h + k] = a[l * n + k];
			} else {
				memcpy(y, a, sizeof *y * (size_t)nout);
			}
		}
	}
	for (long long b = 0; b < p.batch; b++) {
		double complex *y = res + b * nout;
		for (long long i = 0; i < nout; i++) {
			long long o = b * p.odist + offset(i, out, p.onembed, r, p.ostride);
			if (real_out(t)) {
				if (d)
					((double *)odata)[o] = creal(y[i]);
				else
					((float *)odata)[o] = (float)creal(y[i]);
			} else if (d) {
				((cufftDoubleComplex *)odata)[o].x = creal(y[i]);
				((cufftDoubleComplex *)odata)[o].y = cimag(y[i]);
			} else {
				((cufftComplex *)odata)[o].x = (float)creal(y[i]);
				((cufftComplex *)odata)[o].y = (float)cimag(y[i]);
			}
		}
	}
	free(a), free(line), free(tw), free(res);
	return CUFFT_SUCCESS;
}

API cufftResult cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata, int direction) {
	return exec(plan, CUFFT_C2C, idata, odata, direction);
}

API cufftResult cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleComplex *odata,
                             int direction) {
	return exec(plan, CUFFT_Z2Z, idata, odata, direction);
}

API cufftResult cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata) {
	return exec(plan, CUFFT_R2C, idata, odata, CUFFT_FORWARD);
}

API cufftResult cufftExecD2Z(cufftHandle plan, cufftDoubleReal *idata, cufftDoubleComplex *odata) {
	return exec(plan, CUFFT_D2Z, idata, odata, CUFFT_FORWARD);
}

API cufftResult cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata) {
	return exec(plan, CUFFT_C2R, idata, odata, CUFFT_INVERSE);
}

API cufftResult cufftExecZ2D(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleReal *odata) {
	return exec(plan, CUFFT_Z2D, idata, odata, CUFFT_INVERSE);
}
