// fakecusolver.c: an emulated dense cuSOLVER (libcusolver) for testing
// loom's CUDA backend without a GPU, and, compiled with
// -DLOOM_FAKE_CUBLAS_PART into the fake libcublas beside fakecublas.c, the
// cuBLAS routines of the linear-algebra kernels (triangular solves and
// the batched LU). Matrices are column-major on the emulated device memory
// of fakecuda.c (host memory); every routine converts its operands to
// double, runs an unblocked textbook algorithm (Cholesky, LU with partial
// pivoting, Householder QR, cyclic Jacobi for the symmetric eigenproblem,
// one-sided Jacobi for the SVD) and converts back. Only the symbols loom
// uses are exported, with the real prototypes of cusolverDn.h and
// cublas_api.h and their argument checks (the complex Cholesky and LU,
// C and Z, in double complex): a bad argument gives
// CUSOLVER_STATUS_INVALID_VALUE and, where cuSOLVER writes one, info = -i
// for argument i (counting the handle as 1); numerical failures give
// LAPACK's info > 0 (the order of the minor that is not positive
// definite, the first zero pivot). The workspace of a routine is written
// over (as the real library may) and must hold the lwork elements that
// its _bufferSize reported. gesvd supports jobu and jobvt 'A', 'S' and
// 'N' ('O' gives CUSOLVER_STATUS_NOT_SUPPORTED).
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
// The helpers are unused in the cuBLAS part, in part.
#define HELPER static __attribute__((unused))

typedef enum {
	CUBLAS_FILL_MODE_LOWER = 0,
	CUBLAS_FILL_MODE_UPPER = 1,
} cublasFillMode_t;

typedef enum {
	CUBLAS_OP_N = 0,
	CUBLAS_OP_T = 1,
	CUBLAS_OP_C = 2,
} cublasOperation_t;

typedef enum {
	CUBLAS_SIDE_LEFT = 0,
	CUBLAS_SIDE_RIGHT = 1,
} cublasSideMode_t;

typedef enum {
	CUBLAS_DIAG_NON_UNIT = 0,
	CUBLAS_DIAG_UNIT = 1,
} cublasDiagType_t;

typedef struct CUstream_st *cudaStream_t;

// The shared numerical kernels, in double, column-major with leading
// dimension ld.

#define AT(A, ld, i, j) (A)[(long long)(i) + (long long)(j) * (ld)]

// load copies the rows×cols matrix at p (leading dimension ld, float or
// double) into a new double array with leading dimension rows.
HELPER double *load(int dbl, const void *p, int rows, int cols, int ld) {
	double *a = malloc(sizeof *a * (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1));
	if (!a)
		abort();
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < rows; i++)
			AT(a, rows, i, j) = dbl ? AT((const double *)p, ld, i, j) : AT((const float *)p, ld, i, j);
	return a;
}

// store copies a (leading dimension rows) back to p.
HELPER void store(int dbl, void *p, const double *a, int rows, int cols, int ld) {
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < rows; i++) {
			if (dbl)
				AT((double *)p, ld, i, j) = AT(a, rows, i, j);
			else
				AT((float *)p, ld, i, j) = (float)AT(a, rows, i, j);
		}
}

// potrf: Cholesky of the n×n matrix a in the triangle lower (a = L·Lᵀ) or
// upper (a = Uᵀ·U), the other triangle untouched. Returns LAPACK's info.
HELPER int potrf(double *a, int n, int lower) {
	for (int j = 0; j < n; j++) {
		double d = lower ? AT(a, n, j, j) : AT(a, n, j, j);
		for (int k = 0; k < j; k++) {
			double l = lower ? AT(a, n, j, k) : AT(a, n, k, j);
			d -= l * l;
		}
		if (!(d > 0))
			return j + 1;
		d = sqrt(d);
		AT(a, n, j, j) = d;
		for (int i = j + 1; i < n; i++) {
			double s = lower ? AT(a, n, i, j) : AT(a, n, j, i);
			for (int k = 0; k < j; k++)
				s -= lower ? AT(a, n, i, k) * AT(a, n, j, k) : AT(a, n, k, i) * AT(a, n, k, j);
			if (lower)
				AT(a, n, i, j) = s / d;
			else
				AT(a, n, j, i) = s / d;
		}
	}
	return 0;
}

// trsv solves op(T)·x = x in place, T the n×n triangle (lower or upper,
// leading dimension ld) of t, transposed when trans, with a unit diagonal
// when unit; x has stride inc.
HELPER void trsv(const double *t, int ld, int n, int lower, int trans, int unit, double *x, long long inc) {
	int low = lower ^ trans; // the effective triangle of op(T)
#define OPT(i, j) (trans ? AT(t, ld, j, i) : AT(t, ld, i, j))
	if (low) {
		for (int i = 0; i < n; i++) {
			double s = x[i * inc];
			for (int k = 0; k < i; k++)
				s -= OPT(i, k) * x[k * inc];
			x[i * inc] = unit ? s : s / OPT(i, i);
		}
	} else {
		for (int i = n - 1; i >= 0; i--) {
			double s = x[i * inc];
			for (int k = i + 1; k < n; k++)
				s -= OPT(i, k) * x[k * inc];
			x[i * inc] = unit ? s : s / OPT(i, i);
		}
	}
#undef OPT
}

// getrf: LU with partial pivoting of the m×n matrix a, ipiv 1-based (may
// be NULL: no pivoting). Returns the first zero pivot (1-based) or 0; as
// LAPACK, the factorisation goes on past it.
HELPER int getrf(double *a, int m, int n, int *ipiv) {
	int info = 0, k = m < n ? m : n;
	for (int j = 0; j < k; j++) {
		int p = j;
		if (ipiv) {
			for (int i = j + 1; i < m; i++)
				if (fabs(AT(a, m, i, j)) > fabs(AT(a, m, p, j)))
					p = i;
			ipiv[j] = p + 1;
			if (p != j)
				for (int c = 0; c < n; c++) {
					double t = AT(a, m, j, c);
					AT(a, m, j, c) = AT(a, m, p, c);
					AT(a, m, p, c) = t;
				}
		}
		double d = AT(a, m, j, j);
		if (d == 0) {
			if (!info)
				info = j + 1;
			continue;
		}
		for (int i = j + 1; i < m; i++)
			AT(a, m, i, j) /= d;
		for (int c = j + 1; c < n; c++)
			for (int i = j + 1; i < m; i++)
				AT(a, m, i, c) -= AT(a, m, i, j) * AT(a, m, j, c);
	}
	return info;
}

// getrs solves op(A)·X = B (n×nrhs, leading dimension n) with the LU of
// getrf in a.
HELPER void getrs(const double *a, int n, const int *ipiv, int trans, double *b, int nrhs) {
	for (int c = 0; c < nrhs; c++) {
		double *x = b + (long long)c * n;
		if (!trans) {
			if (ipiv)
				for (int i = 0; i < n; i++) {
					int p = ipiv[i] - 1;
					double t = x[i];
					x[i] = x[p];
					x[p] = t;
				}
			trsv(a, n, n, 1, 0, 1, x, 1);
			trsv(a, n, n, 0, 0, 0, x, 1);
		} else {
			trsv(a, n, n, 0, 1, 0, x, 1);
			trsv(a, n, n, 1, 1, 1, x, 1);
			if (ipiv)
				for (int i = n - 1; i >= 0; i--) {
					int p = ipiv[i] - 1;
					double t = x[i];
					x[i] = x[p];
					x[p] = t;
				}
		}
	}
}

// geqrf: Householder QR of the m×n matrix a as LAPACK's dgeqr2 (dlarfg's
// reflectors H = I - tau·v·vᵀ with v[0] = 1 implicit).
HELPER void geqrf(double *a, int m, int n, double *tau) {
	int k = m < n ? m : n;
	for (int j = 0; j < k; j++) {
		double alpha = AT(a, m, j, j), xn = 0;
		for (int i = j + 1; i < m; i++)
			xn += AT(a, m, i, j) * AT(a, m, i, j);
		if (xn == 0) {
			tau[j] = 0;
			continue;
		}
		double beta = -copysign(sqrt(alpha * alpha + xn), alpha);
		tau[j] = (beta - alpha) / beta;
		for (int i = j + 1; i < m; i++)
			AT(a, m, i, j) /= alpha - beta;
		AT(a, m, j, j) = beta;
		// Apply H to the trailing columns.
		for (int c = j + 1; c < n; c++) {
			double s = AT(a, m, j, c);
			for (int i = j + 1; i < m; i++)
				s += AT(a, m, i, j) * AT(a, m, i, c);
			s *= tau[j];
			AT(a, m, j, c) -= s;
			for (int i = j + 1; i < m; i++)
				AT(a, m, i, c) -= s * AT(a, m, i, j);
		}
	}
}

// orgqr: the first n columns of H_0·…·H_{k-1} from the reflectors in a
// (m×n) and tau, into a (LAPACK's dorg2r).
HELPER void orgqr(double *a, int m, int n, int k, const double *tau) {
	for (int j = k; j < n; j++)
		for (int i = 0; i < m; i++)
			AT(a, m, i, j) = i == j;
	for (int j = k - 1; j >= 0; j--) {
		// Apply H_j to columns j+1..n-1 (column j is done below).
		for (int c = j + 1; c < n; c++) {
			double s = AT(a, m, j, c);
			for (int i = j + 1; i < m; i++)
				s += AT(a, m, i, j) * AT(a, m, i, c);
			s *= tau[j];
			AT(a, m, j, c) -= s;
			for (int i = j + 1; i < m; i++)
				AT(a, m, i, c) -= s * AT(a, m, i, j);
		}
		for (int i = j + 1; i < m; i++)
			AT(a, m, i, j) *= -tau[j];
		AT(a, m, j, j) = 1 - tau[j];
		for (int i = 0; i < j; i++)
			AT(a, m, i, j) = 0;
	}
}

// syev: eigenvalues (ascending, into w) and, with vec, eigenvectors (the
// columns of a) of the symmetric n×n matrix whose triangle lower or upper
// a holds, by cyclic Jacobi rotations.
HELPER void syev(double *a, int n, int lower, double *w, int vec) {
	double *v = calloc((size_t)n * n + 1, sizeof *v);
	if (!v)
		abort();
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			if (i > j)
				AT(a, n, i, j) = AT(a, n, j, i) = lower ? AT(a, n, i, j) : AT(a, n, j, i);
	for (int i = 0; i < n; i++)
		AT(v, n, i, i) = 1;
	for (int sweep = 0; sweep < 100; sweep++) {
		double off = 0, tot = 0;
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++) {
				tot += AT(a, n, i, j) * AT(a, n, i, j);
				if (i != j)
					off += AT(a, n, i, j) * AT(a, n, i, j);
			}
		if (off <= 1e-30 * tot || off == 0)
			break;
		for (int p = 0; p < n - 1; p++)
			for (int q = p + 1; q < n; q++) {
				double apq = AT(a, n, p, q);
				if (apq == 0)
					continue;
				double theta = (AT(a, n, q, q) - AT(a, n, p, p)) / (2 * apq);
				double t = copysign(1.0, theta) / (fabs(theta) + sqrt(theta * theta + 1));
				double c = 1 / sqrt(t * t + 1), s = t * c;
				for (int k = 0; k < n; k++) { // columns p, q
					double x = AT(a, n, k, p), y = AT(a, n, k, q);
					AT(a, n, k, p) = c * x - s * y;
					AT(a, n, k, q) = s * x + c * y;
				}
				for (int k = 0; k < n; k++) { // rows p, q
					double x = AT(a, n, p, k), y = AT(a, n, q, k);
					AT(a, n, p, k) = c * x - s * y;
					AT(a, n, q, k) = s * x + c * y;
				}
				for (int k = 0; k < n; k++) {
					double x = AT(v, n, k, p), y = AT(v, n, k, q);
					AT(v, n, k, p) = c * x - s * y;
					AT(v, n, k, q) = s * x + c * y;
				}
			}
	}
	// Sort ascending (selection sort, carrying the vectors).
	for (int i = 0; i < n; i++)
		w[i] = AT(a, n, i, i);
	for (int i = 0; i < n; i++) {
		int m = i;
		for (int j = i + 1; j < n; j++)
			if (w[j] < w[m])
				m = j;
		double t = w[i];
		w[i] = w[m];
		w[m] = t;
		for (int k = 0; k < n; k++) {
			t = AT(v, n, k, i);
			AT(v, n, k, i) = AT(v, n, k, m);
			AT(v, n, k, m) = t;
		}
	}
	if (vec)
		memcpy(a, v, sizeof *a * (size_t)n * n);
	free(v);
}

// complete fills the columns of q (m×m) that are not yet orthonormal
// (those from `have` on, and those among the first `have` with ok[j] == 0)
// with an orthonormal completion: for each, the unit vector whose
// component orthogonal to the columns already set is largest (Gram-
// Schmidt, twice), normalised.
HELPER void complete(double *q, int m, int have, const int *ok) {
	int *done = calloc((size_t)m + 1, sizeof *done);
	double *c = malloc(sizeof *c * ((size_t)m + 1)), *best = malloc(sizeof *best * ((size_t)m + 1));
	if (!done || !c || !best)
		abort();
	for (int j = 0; j < have && j < m; j++)
		done[j] = ok[j];
	for (int j = 0; j < m; j++) {
		if (done[j])
			continue;
		double bn = -1;
		for (int e = 0; e < m; e++) {
			for (int i = 0; i < m; i++)
				c[i] = i == e;
			for (int pass = 0; pass < 2; pass++)
				for (int k = 0; k < m; k++) {
					if (!done[k])
						continue;
					double s = 0;
					for (int i = 0; i < m; i++)
						s += AT(q, m, i, k) * c[i];
					for (int i = 0; i < m; i++)
						c[i] -= s * AT(q, m, i, k);
				}
			double nn = 0;
			for (int i = 0; i < m; i++)
				nn += c[i] * c[i];
			if (nn > bn) {
				bn = nn;
				memcpy(best, c, sizeof *c * (size_t)m);
			}
			if (nn > 0.5)
				break;
		}
		bn = sqrt(bn);
		for (int i = 0; i < m; i++)
			AT(q, m, i, j) = best[i] / bn;
		done[j] = 1;
	}
	free(done);
	free(c);
	free(best);
}

// svd: A (m×n, leading dimension m) = U·diag(s)·Vᵀ with U m×m and V n×n
// (both with orthonormal columns, full), s descending (min(m,n) values),
// by one-sided Jacobi.
HELPER void svd(const double *A, int m, int n, double *s, double *U, double *V) {
	if (m < n) {
		// Aᵀ = V'·S·U'ᵀ gives A = U'·S·V'ᵀ.
		double *t = malloc(sizeof *t * (size_t)m * n + 1);
		if (!t)
			abort();
		for (int j = 0; j < n; j++)
			for (int i = 0; i < m; i++)
				AT(t, n, j, i) = AT(A, m, i, j);
		svd(t, n, m, s, V, U);
		free(t);
		return;
	}
	// m >= n: orthogonalise the columns of W = A·V.
	double *w = malloc(sizeof *w * (size_t)m * m + 1);
	int *ok = calloc((size_t)m + 1, sizeof *ok);
	if (!w || !ok)
		abort();
	memcpy(w, A, sizeof *w * (size_t)m * n);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			AT(V, n, i, j) = i == j;
	for (int sweep = 0; sweep < 100; sweep++) {
		int rotated = 0;
		for (int p = 0; p < n - 1; p++)
			for (int q = p + 1; q < n; q++) {
				double al = 0, be = 0, ga = 0;
				for (int i = 0; i < m; i++) {
					al += AT(w, m, i, p) * AT(w, m, i, p);
					be += AT(w, m, i, q) * AT(w, m, i, q);
					ga += AT(w, m, i, p) * AT(w, m, i, q);
				}
				if (fabs(ga) <= 1e-15 * sqrt(al * be) || ga == 0)
					continue;
				rotated = 1;
				double zeta = (be - al) / (2 * ga);
				double t = copysign(1.0, zeta) / (fabs(zeta) + sqrt(1 + zeta * zeta));
				double c = 1 / sqrt(1 + t * t), sn = c * t;
				for (int i = 0; i < m; i++) {
					double x = AT(w, m, i, p), y = AT(w, m, i, q);
					AT(w, m, i, p) = c * x - sn * y;
					AT(w, m, i, q) = sn * x + c * y;
				}
				for (int i = 0; i < n; i++) {
					double x = AT(V, n, i, p), y = AT(V, n, i, q);
					AT(V, n, i, p) = c * x - sn * y;
					AT(V, n, i, q) = sn * x + c * y;
				}
			}
		if (!rotated)
			break;
	}
	double big = 0;
	for (int j = 0; j < n; j++) {
		double nn = 0;
		for (int i = 0; i < m; i++)
			nn += AT(w, m, i, j) * AT(w, m, i, j);
		s[j] = sqrt(nn);
		if (s[j] > big)
			big = s[j];
	}
	// Sort descending, carrying the columns of w and V.
	for (int i = 0; i < n; i++) {
		int k = i;
		for (int j = i + 1; j < n; j++)
			if (s[j] > s[k])
				k = j;
		double t = s[i];
		s[i] = s[k];
		s[k] = t;
		for (int r = 0; r < m; r++) {
			t = AT(w, m, r, i);
			AT(w, m, r, i) = AT(w, m, r, k);
			AT(w, m, r, k) = t;
		}
		for (int r = 0; r < n; r++) {
			t = AT(V, n, r, i);
			AT(V, n, r, i) = AT(V, n, r, k);
			AT(V, n, r, k) = t;
		}
	}
	for (int j = 0; j < n; j++) {
		ok[j] = s[j] > 1e-300 && s[j] > big * 1e-15 * m;
		for (int i = 0; i < m; i++)
			AT(w, m, i, j) = ok[j] ? AT(w, m, i, j) / s[j] : 0;
	}
	complete(w, m, n, ok);
	memcpy(U, w, sizeof *U * (size_t)m * m);
	free(w);
	free(ok);
}

// poison writes NaN bytes over a workspace of n elements.
HELPER void poison(void *work, long long n, int dbl) {
	if (work && n > 0)
		memset(work, 0xff, (size_t)n * (dbl ? 8 : 4));
}

HELPER int max1(int a) { return a > 1 ? a : 1; }

#ifndef LOOM_FAKE_CUBLAS_PART

typedef enum {
	CUSOLVER_STATUS_SUCCESS = 0,
	CUSOLVER_STATUS_NOT_INITIALIZED = 1,
	CUSOLVER_STATUS_ALLOC_FAILED = 2,
	CUSOLVER_STATUS_INVALID_VALUE = 3,
	CUSOLVER_STATUS_EXECUTION_FAILED = 6,
	CUSOLVER_STATUS_INTERNAL_ERROR = 7,
	CUSOLVER_STATUS_NOT_SUPPORTED = 9,
} cusolverStatus_t;

typedef enum {
	CUSOLVER_EIG_MODE_NOVECTOR = 0,
	CUSOLVER_EIG_MODE_VECTOR = 1,
} cusolverEigMode_t;

typedef struct cusolverDnContext *cusolverDnHandle_t;
typedef struct syevjInfo *syevjInfo_t;
typedef struct gesvdjInfo *gesvdjInfo_t;

struct cusolverDnContext {
	cudaStream_t stream;
};
struct syevjInfo {
	double tol;
};
struct gesvdjInfo {
	double tol;
};

#define CUSOLVER_VERSION 12000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void **live;
static size_t nlive, caplive;

// The live handles and parameter objects.
static int track(void *p) {
	pthread_mutex_lock(&mu);
	if (nlive == caplive) {
		size_t cap = caplive ? 2 * caplive : 16;
		void **q = realloc(live, cap * sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&mu);
			return 0;
		}
		live = q;
		caplive = cap;
	}
	live[nlive++] = p;
	pthread_mutex_unlock(&mu);
	return 1;
}

static int untrack(void *p) {
	int found = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nlive; i++)
		if (live[i] == p) {
			live[i] = live[--nlive];
			found = 1;
			break;
		}
	pthread_mutex_unlock(&mu);
	return found;
}

static int valid(const void *p) {
	int ok = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nlive && !ok; i++)
		ok = live[i] == p;
	pthread_mutex_unlock(&mu);
	return p && ok;
}

API cusolverStatus_t cusolverGetVersion(int *version) {
	if (!version)
		return CUSOLVER_STATUS_INVALID_VALUE;
	*version = CUSOLVER_VERSION;
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle) {
	if (!handle)
		return CUSOLVER_STATUS_INVALID_VALUE;
	cusolverDnHandle_t h = calloc(1, sizeof *h);
	if (!h || !track(h)) {
		free(h);
		return CUSOLVER_STATUS_ALLOC_FAILED;
	}
	*handle = h;
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
	if (!untrack(handle))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	free(handle);
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
	if (!valid(handle))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	handle->stream = stream; // every call is synchronous anyway
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnCreateSyevjInfo(syevjInfo_t *info) {
	if (!info)
		return CUSOLVER_STATUS_INVALID_VALUE;
	syevjInfo_t p = calloc(1, sizeof *p);
	if (!p || !track(p)) {
		free(p);
		return CUSOLVER_STATUS_ALLOC_FAILED;
	}
	*info = p;
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnDestroySyevjInfo(syevjInfo_t info) {
	if (!untrack(info))
		return CUSOLVER_STATUS_INVALID_VALUE;
	free(info);
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnCreateGesvdjInfo(gesvdjInfo_t *info) {
	if (!info)
		return CUSOLVER_STATUS_INVALID_VALUE;
	gesvdjInfo_t p = calloc(1, sizeof *p);
	if (!p || !track(p)) {
		free(p);
		return CUSOLVER_STATUS_ALLOC_FAILED;
	}
	*info = p;
	return CUSOLVER_STATUS_SUCCESS;
}

API cusolverStatus_t cusolverDnDestroyGesvdjInfo(gesvdjInfo_t info) {
	if (!untrack(info))
		return CUSOLVER_STATUS_INVALID_VALUE;
	free(info);
	return CUSOLVER_STATUS_SUCCESS;
}

// bad reports argument i as invalid: info = -i where there is one.
static cusolverStatus_t bad(int *info, int i) {
	if (info)
		*info = -i;
	return CUSOLVER_STATUS_INVALID_VALUE;
}

// The workspace sizes, in elements.
static int ws_potrf(int n) { return max1(n * 8); }
static int ws_getrf(int m, int n) { return max1((m > n ? m : n) * 8); }
static int ws_geqrf(int n) { return max1(n * 8); }
static int ws_orgqr(int n) { return max1(n * 8); }
static int ws_syevd(int n) { return max1(2 * n * n + 6 * n + 1); }
static int ws_gesvd(int m, int n) { return max1(5 * (m > n ? m : n)); }
static int ws_syevj(int n, int batch) { return max1(n * n * batch); }
static int ws_gesvdj(int m, int n, int batch) { return max1((m + n) * (m + n) * batch); }

// ---- potrf, potrs

#define POTRF(P, T, DBL)                                                                                           \
	API cusolverStatus_t cusolverDn##P##potrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,  \
	                                                     T *A, int lda, int *Lwork) {                              \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || lda < max1(n) ||  \
		    !Lwork)                                                                                            \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		*Lwork = ws_potrf(n);                                                                                  \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *A,       \
	                                          int lda, T *Workspace, int Lwork, int *devInfo) {                    \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 5);                                                                        \
		if (Lwork < ws_potrf(n) || !Workspace)                                                                 \
			return bad(devInfo, 7);                                                                        \
		if (!devInfo || (n > 0 && !A))                                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(Workspace, Lwork, DBL);                                                                         \
		double *a = load(DBL, A, n, n, lda);                                                                   \
		*devInfo = potrf(a, n, uplo == CUBLAS_FILL_MODE_LOWER);                                                \
		store(DBL, A, a, n, n, lda);                                                                           \
		free(a);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs,   \
	                                          const T *A, int lda, T *B, int ldb, int *devInfo) {                  \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (nrhs < 0)                                                                                          \
			return bad(devInfo, 4);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 6);                                                                        \
		if (ldb < max1(n))                                                                                     \
			return bad(devInfo, 8);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		int lower = uplo == CUBLAS_FILL_MODE_LOWER;                                                            \
		double *a = load(DBL, A, n, n, lda), *b = load(DBL, B, n, nrhs, ldb);                                  \
		for (int c = 0; c < nrhs; c++) {                                                                       \
			/* lower: L·Lᵀ·x = b; upper: Uᵀ·U·x = b */                                                   \
			trsv(a, n, n, lower, !lower, 0, b + (long long)c * n, 1);                                      \
			trsv(a, n, n, lower, lower, 0, b + (long long)c * n, 1);                                       \
		}                                                                                                      \
		store(DBL, B, b, n, nrhs, ldb);                                                                        \
		free(a);                                                                                               \
		free(b);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrfBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,      \
	                                                 T *Aarray[], int lda, int *infoArray, int batchSize) {        \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || lda < max1(n) ||  \
		    batchSize < 0 || !infoArray || (batchSize > 0 && !Aarray))                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		for (int b = 0; b < batchSize; b++) {                                                                  \
			double *a = load(DBL, Aarray[b], n, n, lda);                                                   \
			infoArray[b] = potrf(a, n, uplo == CUBLAS_FILL_MODE_LOWER);                                    \
			store(DBL, Aarray[b], a, n, n, lda);                                                           \
			free(a);                                                                                       \
		}                                                                                                      \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrsBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,      \
	                                                 int nrhs, T *Aarray[], int lda, T *Barray[], int ldb,         \
	                                                 int *d_info, int batchSize) {                                 \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		/* cuSOLVER supports one right-hand side only */                                                     \
		if ((uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || nrhs != 1 ||      \
		    lda < max1(n) || ldb < max1(n) || batchSize < 0 || !d_info ||                                      \
		    (batchSize > 0 && (!Aarray || !Barray)))                                                           \
			return bad(d_info, nrhs != 1 ? 4 : 2);                                                         \
		int lower = uplo == CUBLAS_FILL_MODE_LOWER;                                                            \
		for (int b = 0; b < batchSize; b++) {                                                                  \
			double *a = load(DBL, Aarray[b], n, n, lda), *x = load(DBL, Barray[b], n, 1, ldb);             \
			trsv(a, n, n, lower, !lower, 0, x, 1);                                                         \
			trsv(a, n, n, lower, lower, 0, x, 1);                                                          \
			store(DBL, Barray[b], x, n, 1, ldb);                                                           \
			free(a);                                                                                       \
			free(x);                                                                                       \
		}                                                                                                      \
		*d_info = 0;                                                                                           \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

POTRF(S, float, 0)
POTRF(D, double, 1)

// ---- getrf, getrs

#define GETRF(P, T, DBL)                                                                                           \
	API cusolverStatus_t cusolverDn##P##getrf_bufferSize(cusolverDnHandle_t handle, int m, int n, T *A, int lda,   \
	                                                     int *Lwork) {                                             \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0 || n < 0 || lda < max1(m) || !Lwork)                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		*Lwork = ws_getrf(m, n);                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##getrf(cusolverDnHandle_t handle, int m, int n, T *A, int lda,              \
	                                          T *Workspace, int *devIpiv, int *devInfo) {                          \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0)                                                                                             \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (lda < max1(m))                                                                                     \
			return bad(devInfo, 5);                                                                        \
		if (!Workspace)                                                                                        \
			return bad(devInfo, 6);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(Workspace, ws_getrf(m, n), DBL);                                                                \
		double *a = load(DBL, A, m, n, lda);                                                                   \
		*devInfo = getrf(a, m, n, devIpiv);                                                                    \
		store(DBL, A, a, m, n, lda);                                                                           \
		free(a);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##getrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, \
	                                          const T *A, int lda, const int *devIpiv, T *B, int ldb,              \
	                                          int *devInfo) {                                                      \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C)                              \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (nrhs < 0)                                                                                          \
			return bad(devInfo, 4);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 6);                                                                        \
		if (ldb < max1(n))                                                                                     \
			return bad(devInfo, 9);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		double *a = load(DBL, A, n, n, lda), *b = load(DBL, B, n, nrhs, ldb);                                  \
		getrs(a, n, devIpiv, trans != CUBLAS_OP_N, b, nrhs);                                                   \
		store(DBL, B, b, n, nrhs, ldb);                                                                        \
		free(a);                                                                                               \
		free(b);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

GETRF(S, float, 0)
GETRF(D, double, 1)

// ---- geqrf, orgqr

#define GEQRF(P, T, DBL)                                                                                           \
	API cusolverStatus_t cusolverDn##P##geqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, T *A, int lda,   \
	                                                     int *lwork) {                                             \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0 || n < 0 || lda < max1(m) || !lwork)                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		*lwork = ws_geqrf(n);                                                                                  \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##geqrf(cusolverDnHandle_t handle, int m, int n, T *A, int lda, T *TAU,      \
	                                          T *Workspace, int Lwork, int *devInfo) {                             \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0)                                                                                             \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (lda < max1(m))                                                                                     \
			return bad(devInfo, 5);                                                                        \
		if (Lwork < ws_geqrf(n) || !Workspace)                                                                 \
			return bad(devInfo, 8);                                                                        \
		if (!devInfo || (m > 0 && n > 0 && !TAU))                                                              \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(Workspace, Lwork, DBL);                                                                         \
		int k = m < n ? m : n;                                                                                 \
		double *a = load(DBL, A, m, n, lda), *tau = malloc(sizeof *tau * (size_t)(k + 1));                     \
		geqrf(a, m, n, tau);                                                                                   \
		store(DBL, A, a, m, n, lda);                                                                           \
		store(DBL, TAU, tau, k, 1, max1(k));                                                                   \
		free(a);                                                                                               \
		free(tau);                                                                                             \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##orgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k,           \
	                                                     const T *A, int lda, const T *tau, int *lwork) {          \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0 || n < 0 || n > m || k < 0 || k > n || lda < max1(m) || !lwork)                              \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		(void)tau;                                                                                             \
		*lwork = ws_orgqr(n);                                                                                  \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##orgqr(cusolverDnHandle_t handle, int m, int n, int k, T *A, int lda,       \
	                                          const T *tau, T *work, int lwork, int *info) {                       \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0)                                                                                             \
			return bad(info, 2);                                                                           \
		if (n < 0 || n > m)                                                                                    \
			return bad(info, 3);                                                                           \
		if (k < 0 || k > n)                                                                                    \
			return bad(info, 4);                                                                           \
		if (lda < max1(m))                                                                                     \
			return bad(info, 6);                                                                           \
		if (lwork < ws_orgqr(n) || !work)                                                                      \
			return bad(info, 9);                                                                           \
		if (!info || (k > 0 && !tau))                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(work, lwork, DBL);                                                                              \
		double *a = load(DBL, A, m, n, lda), *t = load(DBL, tau, k, 1, max1(k));                               \
		orgqr(a, m, n, k, t);                                                                                  \
		store(DBL, A, a, m, n, lda);                                                                           \
		free(a);                                                                                               \
		free(t);                                                                                               \
		*info = 0;                                                                                             \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

GEQRF(S, float, 0)
GEQRF(D, double, 1)

// ---- syevd, syevjBatched

#define SYEVD(P, T, DBL)                                                                                           \
	API cusolverStatus_t cusolverDn##P##syevd_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz,        \
	                                                     cublasFillMode_t uplo, int n, const T *A, int lda,        \
	                                                     const T *W, int *lwork) {                                 \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR) ||                        \
		    (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || lda < max1(n) ||  \
		    !lwork)                                                                                            \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		(void)W;                                                                                               \
		*lwork = ws_syevd(n);                                                                                  \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##syevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz,                   \
	                                          cublasFillMode_t uplo, int n, T *A, int lda, T *W, T *work,          \
	                                          int lwork, int *devInfo) {                                           \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR)                            \
			return bad(devInfo, 2);                                                                        \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(devInfo, 3);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 4);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 6);                                                                        \
		if (lwork < ws_syevd(n) || !work)                                                                      \
			return bad(devInfo, 9);                                                                        \
		if (!devInfo || (n > 0 && !W))                                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(work, lwork, DBL);                                                                              \
		double *a = load(DBL, A, n, n, lda), *w = malloc(sizeof *w * (size_t)(n + 1));                         \
		syev(a, n, uplo == CUBLAS_FILL_MODE_LOWER, w, jobz == CUSOLVER_EIG_MODE_VECTOR);                       \
		if (jobz == CUSOLVER_EIG_MODE_VECTOR)                                                                  \
			store(DBL, A, a, n, n, lda);                                                                   \
		store(DBL, W, w, n, 1, max1(n));                                                                       \
		free(a);                                                                                               \
		free(w);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##syevjBatched_bufferSize(                                                   \
	    cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const T *A, int lda,      \
	    const T *W, int *lwork, syevjInfo_t params, int batchSize) {                                               \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR) ||                        \
		    (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || n > 32 ||         \
		    lda < max1(n) || !lwork || !valid(params) || batchSize < 0)                                        \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		(void)W;                                                                                               \
		*lwork = ws_syevj(n, batchSize);                                                                       \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##syevjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz,            \
	                                                 cublasFillMode_t uplo, int n, T *A, int lda, T *W, T *work,   \
	                                                 int lwork, int *info, syevjInfo_t params, int batchSize) {    \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR)                            \
			return bad(info, 2);                                                                           \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(info, 3);                                                                           \
		if (n < 0 || n > 32)                                                                                   \
			return bad(info, 4);                                                                           \
		if (lda < max1(n))                                                                                     \
			return bad(info, 6);                                                                           \
		if (lwork < ws_syevj(n, batchSize) || !work)                                                           \
			return bad(info, 9);                                                                           \
		if (!valid(params))                                                                                    \
			return bad(info, 11);                                                                          \
		if (batchSize < 0)                                                                                     \
			return bad(info, 12);                                                                          \
		if (!info || (n > 0 && batchSize > 0 && (!A || !W)))                                                   \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(work, lwork, DBL);                                                                              \
		double *w = malloc(sizeof *w * (size_t)(n + 1));                                                       \
		for (int b = 0; b < batchSize; b++) {                                                                  \
			T *Ab = A + (long long)b * lda * n;                                                            \
			double *a = load(DBL, Ab, n, n, lda);                                                          \
			syev(a, n, uplo == CUBLAS_FILL_MODE_LOWER, w, jobz == CUSOLVER_EIG_MODE_VECTOR);               \
			if (jobz == CUSOLVER_EIG_MODE_VECTOR)                                                          \
				store(DBL, Ab, a, n, n, lda);                                                          \
			store(DBL, W + (long long)b * n, w, n, 1, max1(n));                                            \
			info[b] = 0;                                                                                   \
			free(a);                                                                                       \
		}                                                                                                      \
		free(w);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

SYEVD(S, float, 0)
SYEVD(D, double, 1)

// ---- gesvd, gesvdjBatched

static int jobok(signed char j) { return j == 'A' || j == 'S' || j == 'N' || j == 'O'; }

#define GESVD(P, T, DBL)                                                                                           \
	API cusolverStatus_t cusolverDn##P##gesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int *lwork) {    \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0 || n < 0 || !lwork)                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		*lwork = ws_gesvd(m, n);                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##gesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt,      \
	                                          int m, int n, T *A, int lda, T *S, T *U, int ldu, T *VT, int ldvt,   \
	                                          T *work, int lwork, T *rwork, int *devInfo) {                        \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (!jobok(jobu))                                                                                      \
			return bad(devInfo, 2);                                                                        \
		if (!jobok(jobvt))                                                                                     \
			return bad(devInfo, 3);                                                                        \
		if (m < 0)                                                                                             \
			return bad(devInfo, 4);                                                                        \
		if (n < 0 || n > m) /* cuSOLVER's gesvd needs m >= n */                                                \
			return bad(devInfo, 5);                                                                        \
		if (lda < max1(m))                                                                                     \
			return bad(devInfo, 7);                                                                        \
		if (ldu < 1 || (jobu != 'N' && ldu < m))                                                               \
			return bad(devInfo, 10);                                                                       \
		if (ldvt < 1 || (jobvt == 'A' && ldvt < n) || (jobvt == 'S' && ldvt < (m < n ? m : n)))                \
			return bad(devInfo, 12);                                                                       \
		if (lwork < ws_gesvd(m, n) || !work)                                                                   \
			return bad(devInfo, 14);                                                                       \
		if (jobu == 'O' || jobvt == 'O')                                                                       \
			return CUSOLVER_STATUS_NOT_SUPPORTED;                                                          \
		if (!devInfo || (n > 0 && !S) || (jobu != 'N' && !U) || (jobvt != 'N' && !VT))                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(work, lwork, DBL);                                                                              \
		int k = n; /* min(m, n) */                                                                             \
		double *a = load(DBL, A, m, n, lda), *s = malloc(sizeof *s * (size_t)(k + 1));                         \
		double *u = malloc(sizeof *u * ((size_t)m * m + 1)), *v = malloc(sizeof *v * ((size_t)n * n + 1));     \
		svd(a, m, n, s, u, v);                                                                                 \
		store(DBL, S, s, k, 1, max1(k));                                                                       \
		if (jobu != 'N')                                                                                       \
			store(DBL, U, u, m, jobu == 'A' ? m : k, ldu);                                                 \
		if (jobvt != 'N') {                                                                                    \
			int rows = jobvt == 'A' ? n : k;                                                               \
			double *vt = malloc(sizeof *vt * ((size_t)rows * n + 1));                                      \
			for (int j = 0; j < n; j++)                                                                    \
				for (int i = 0; i < rows; i++) /* Vᵀ[i][j] = V[j][i] */                                \
					AT(vt, rows, i, j) = AT(v, n, j, i);                                           \
			store(DBL, VT, vt, rows, n, ldvt);                                                             \
			free(vt);                                                                                      \
		}                                                                                                      \
		if (rwork && k > 1)                                                                                    \
			for (int i = 0; i < k - 1; i++)                                                                \
				rwork[i] = 0;                                                                          \
		free(a);                                                                                               \
		free(s);                                                                                               \
		free(u);                                                                                               \
		free(v);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##gesvdjBatched_bufferSize(                                                  \
	    cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m, int n, const T *A, int lda, const T *S,          \
	    const T *U, int ldu, const T *V, int ldv, int *lwork, gesvdjInfo_t params, int batchSize) {                \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR) || m < 0 || m > 32 ||   \
		    n < 0 || n > 32 || lda < max1(m) || ldu < max1(m) || ldv < max1(n) || !lwork || !valid(params) || \
		    batchSize < 0)                                                                                     \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A, (void)S, (void)U, (void)V;                                                                    \
		*lwork = ws_gesvdj(m, n, batchSize);                                                                   \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##gesvdjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m,    \
	                                                  int n, T *A, int lda, T *S, T *U, int ldu, T *V, int ldv,    \
	                                                  T *work, int lwork, int *info, gesvdjInfo_t params,          \
	                                                  int batchSize) {                                             \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR)                            \
			return bad(info, 2);                                                                           \
		if (m < 0 || m > 32)                                                                                   \
			return bad(info, 3);                                                                           \
		if (n < 0 || n > 32)                                                                                   \
			return bad(info, 4);                                                                           \
		if (lda < max1(m))                                                                                     \
			return bad(info, 6);                                                                           \
		if (ldu < max1(m))                                                                                     \
			return bad(info, 9);                                                                           \
		if (ldv < max1(n))                                                                                     \
			return bad(info, 11);                                                                          \
		if (lwork < ws_gesvdj(m, n, batchSize) || !work)                                                       \
			return bad(info, 13);                                                                          \
		if (!valid(params))                                                                                    \
			return bad(info, 15);                                                                          \
		if (batchSize < 0)                                                                                     \
			return bad(info, 16);                                                                          \
		if (!info || (batchSize > 0 && (!A || !S || (jobz && (!U || !V)))))                                   \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(work, lwork, DBL);                                                                              \
		int k = m < n ? m : n;                                                                                 \
		double *s = malloc(sizeof *s * (size_t)(k + 1));                                                       \
		double *u = malloc(sizeof *u * ((size_t)m * m + 1)), *v = malloc(sizeof *v * ((size_t)n * n + 1));     \
		for (int b = 0; b < batchSize; b++) {                                                                  \
			double *a = load(DBL, A + (long long)b * lda * n, m, n, lda);                                  \
			svd(a, m, n, s, u, v);                                                                         \
			store(DBL, S + (long long)b * k, s, k, 1, max1(k));                                            \
			if (jobz) {                                                                                    \
				store(DBL, U + (long long)b * ldu * m, u, m, m, ldu);                                  \
				store(DBL, V + (long long)b * ldv * n, v, n, n, ldv);                                  \
			}                                                                                              \
			info[b] = 0;                                                                                   \
			free(a);                                                                                       \
		}                                                                                                      \
		free(s);                                                                                               \
		free(u);                                                                                               \
		free(v);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

GESVD(S, float, 0)
GESVD(D, double, 1)

// ---- the complex Cholesky and LU (C: cuComplex, Z: cuDoubleComplex)

typedef double complex zc;
typedef struct {
	float x, y;
} cuComplex;
typedef struct {
	double x, y;
} cuDoubleComplex;

static zc *zload(int dbl, const void *p, int rows, int cols, int ld) {
	zc *a = malloc(sizeof *a * (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1));
	if (!a)
		abort();
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < rows; i++) {
			long long o = (long long)i + (long long)j * ld;
			AT(a, rows, i, j) = dbl ? ((const cuDoubleComplex *)p)[o].x + I * ((const cuDoubleComplex *)p)[o].y
			                        : ((const cuComplex *)p)[o].x + I * ((const cuComplex *)p)[o].y;
		}
	return a;
}

static void zstore(int dbl, void *p, const zc *a, int rows, int cols, int ld) {
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < rows; i++) {
			long long o = (long long)i + (long long)j * ld;
			zc v = AT(a, rows, i, j);
			if (dbl) {
				((cuDoubleComplex *)p)[o].x = creal(v);
				((cuDoubleComplex *)p)[o].y = cimag(v);
			} else {
				((cuComplex *)p)[o].x = (float)creal(v);
				((cuComplex *)p)[o].y = (float)cimag(v);
			}
		}
}

// zpotrf: A = L·Lᴴ (lower) or Uᴴ·U (upper) of the Hermitian n×n a (the
// triangle read; the diagonal's imaginary parts ignored), the other
// triangle untouched; LAPACK's info.
static int zpotrf(zc *a, int n, int lower) {
	for (int j = 0; j < n; j++) {
		double d = creal(AT(a, n, j, j));
		for (int k = 0; k < j; k++) {
			zc l = lower ? AT(a, n, j, k) : AT(a, n, k, j);
			d -= creal(l * conj(l));
		}
		if (!(d > 0))
			return j + 1;
		d = sqrt(d);
		AT(a, n, j, j) = d;
		for (int i = j + 1; i < n; i++) {
			if (lower) {
				zc s = AT(a, n, i, j);
				for (int k = 0; k < j; k++)
					s -= AT(a, n, i, k) * conj(AT(a, n, j, k));
				AT(a, n, i, j) = s / d;
			} else {
				zc s = AT(a, n, j, i);
				for (int k = 0; k < j; k++)
					s -= conj(AT(a, n, k, j)) * AT(a, n, k, i);
				AT(a, n, j, i) = s / d;
			}
		}
	}
	return 0;
}

// ztrsv solves op(T)·x = x in place (op 0: T, 1: Tᵀ, 2: Tᴴ), T the n×n
// triangle lower or upper of t (leading dimension ld).
static void ztrsv(const zc *t, int ld, int n, int lower, int op, int unit, zc *x) {
	int low = lower ^ (op != 0);
#define ZOPT(i, j) (op == 0 ? AT(t, ld, i, j) : op == 1 ? AT(t, ld, j, i) : conj(AT(t, ld, j, i)))
	if (low) {
		for (int i = 0; i < n; i++) {
			zc s = x[i];
			for (int k = 0; k < i; k++)
				s -= ZOPT(i, k) * x[k];
			x[i] = unit ? s : s / ZOPT(i, i);
		}
	} else {
		for (int i = n - 1; i >= 0; i--) {
			zc s = x[i];
			for (int k = i + 1; k < n; k++)
				s -= ZOPT(i, k) * x[k];
			x[i] = unit ? s : s / ZOPT(i, i);
		}
	}
#undef ZOPT
}

// zgetrf: LU with partial pivoting (largest modulus), as getrf.
static int zgetrf(zc *a, int m, int n, int *ipiv) {
	int info = 0, k = m < n ? m : n;
	for (int j = 0; j < k; j++) {
		int p = j;
		if (ipiv) {
			for (int i = j + 1; i < m; i++)
				if (cabs(AT(a, m, i, j)) > cabs(AT(a, m, p, j)))
					p = i;
			ipiv[j] = p + 1;
			if (p != j)
				for (int c = 0; c < n; c++) {
					zc t = AT(a, m, j, c);
					AT(a, m, j, c) = AT(a, m, p, c);
					AT(a, m, p, c) = t;
				}
		}
		zc d = AT(a, m, j, j);
		if (d == 0) {
			if (!info)
				info = j + 1;
			continue;
		}
		for (int i = j + 1; i < m; i++)
			AT(a, m, i, j) /= d;
		for (int c = j + 1; c < n; c++)
			for (int i = j + 1; i < m; i++)
				AT(a, m, i, c) -= AT(a, m, i, j) * AT(a, m, j, c);
	}
	return info;
}

static void zgetrs(const zc *a, int n, const int *ipiv, int op, zc *b, int nrhs) {
	for (int c = 0; c < nrhs; c++) {
		zc *x = b + (long long)c * n;
		if (op == 0) {
			if (ipiv)
				for (int i = 0; i < n; i++) {
					int p = ipiv[i] - 1;
					zc t = x[i];
					x[i] = x[p];
					x[p] = t;
				}
			ztrsv(a, n, n, 1, 0, 1, x);
			ztrsv(a, n, n, 0, 0, 0, x);
		} else {
			ztrsv(a, n, n, 0, op, 0, x);
			ztrsv(a, n, n, 1, op, 1, x);
			if (ipiv)
				for (int i = n - 1; i >= 0; i--) {
					int p = ipiv[i] - 1;
					zc t = x[i];
					x[i] = x[p];
					x[p] = t;
				}
		}
	}
}

#define ZLU(P, T, DBL)                                                                                             \
	API cusolverStatus_t cusolverDn##P##potrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,  \
	                                                     T *A, int lda, int *Lwork) {                              \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if ((uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0 || lda < max1(n) ||  \
		    !Lwork)                                                                                            \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		*Lwork = ws_potrf(n);                                                                                  \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *A,       \
	                                          int lda, T *Workspace, int Lwork, int *devInfo) {                    \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 5);                                                                        \
		if (Lwork < ws_potrf(n) || !Workspace)                                                                 \
			return bad(devInfo, 7);                                                                        \
		if (!devInfo || (n > 0 && !A))                                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(Workspace, 2 * (long long)Lwork, DBL);                                                          \
		zc *a = zload(DBL, A, n, n, lda);                                                                      \
		*devInfo = zpotrf(a, n, uplo == CUBLAS_FILL_MODE_LOWER);                                               \
		zstore(DBL, A, a, n, n, lda);                                                                          \
		free(a);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##potrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs,   \
	                                          const T *A, int lda, T *B, int ldb, int *devInfo) {                  \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)                                  \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (nrhs < 0)                                                                                          \
			return bad(devInfo, 4);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 6);                                                                        \
		if (ldb < max1(n))                                                                                     \
			return bad(devInfo, 8);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		int lower = uplo == CUBLAS_FILL_MODE_LOWER;                                                            \
		zc *a = zload(DBL, A, n, n, lda), *b = zload(DBL, B, n, nrhs, ldb);                                    \
		for (int c = 0; c < nrhs; c++) {                                                                       \
			/* lower: L·Lᴴ·x = b; upper: Uᴴ·U·x = b */                                                   \
			ztrsv(a, n, n, lower, lower ? 0 : 2, 0, b + (long long)c * n);                                 \
			ztrsv(a, n, n, lower, lower ? 2 : 0, 0, b + (long long)c * n);                                 \
		}                                                                                                      \
		zstore(DBL, B, b, n, nrhs, ldb);                                                                       \
		free(a);                                                                                               \
		free(b);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##getrf_bufferSize(cusolverDnHandle_t handle, int m, int n, T *A, int lda,   \
	                                                     int *Lwork) {                                             \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0 || n < 0 || lda < max1(m) || !Lwork)                                                         \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		(void)A;                                                                                               \
		*Lwork = ws_getrf(m, n);                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##getrf(cusolverDnHandle_t handle, int m, int n, T *A, int lda,              \
	                                          T *Workspace, int *devIpiv, int *devInfo) {                          \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (m < 0)                                                                                             \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (lda < max1(m))                                                                                     \
			return bad(devInfo, 5);                                                                        \
		if (!Workspace)                                                                                        \
			return bad(devInfo, 6);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		poison(Workspace, 2 * (long long)ws_getrf(m, n), DBL);                                                 \
		zc *a = zload(DBL, A, m, n, lda);                                                                      \
		*devInfo = zgetrf(a, m, n, devIpiv);                                                                   \
		zstore(DBL, A, a, m, n, lda);                                                                          \
		free(a);                                                                                               \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}                                                                                                              \
	API cusolverStatus_t cusolverDn##P##getrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, \
	                                          const T *A, int lda, const int *devIpiv, T *B, int ldb,              \
	                                          int *devInfo) {                                                      \
		if (!valid(handle))                                                                                    \
			return CUSOLVER_STATUS_NOT_INITIALIZED;                                                        \
		if (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C)                              \
			return bad(devInfo, 2);                                                                        \
		if (n < 0)                                                                                             \
			return bad(devInfo, 3);                                                                        \
		if (nrhs < 0)                                                                                          \
			return bad(devInfo, 4);                                                                        \
		if (lda < max1(n))                                                                                     \
			return bad(devInfo, 6);                                                                        \
		if (ldb < max1(n))                                                                                     \
			return bad(devInfo, 9);                                                                        \
		if (!devInfo)                                                                                          \
			return CUSOLVER_STATUS_INVALID_VALUE;                                                          \
		zc *a = zload(DBL, A, n, n, lda), *b = zload(DBL, B, n, nrhs, ldb);                                    \
		zgetrs(a, n, devIpiv, (int)trans, b, nrhs);                                                            \
		zstore(DBL, B, b, n, nrhs, ldb);                                                                       \
		free(a);                                                                                               \
		free(b);                                                                                               \
		*devInfo = 0;                                                                                          \
		return CUSOLVER_STATUS_SUCCESS;                                                                        \
	}

ZLU(C, cuComplex, 0)
ZLU(Z, cuDoubleComplex, 1)

#else // LOOM_FAKE_CUBLAS_PART: the cuBLAS routines, in libcublas

typedef enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_INVALID_VALUE = 7,
} cublasStatus_t;

typedef struct cublasContext *cublasHandle_t;

// fakecublas.c's, which rejects a handle it did not create.
cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version);

static int handle_ok(cublasHandle_t h) {
	int v;
	return h && cublasGetVersion_v2(h, &v) == CUBLAS_STATUS_SUCCESS;
}

static int side_ok(int s) { return s == CUBLAS_SIDE_LEFT || s == CUBLAS_SIDE_RIGHT; }
static int fill_ok(int u) { return u == CUBLAS_FILL_MODE_LOWER || u == CUBLAS_FILL_MODE_UPPER; }
static int op_ok(int t) { return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C; }
static int diag_ok(int d) { return d == CUBLAS_DIAG_NON_UNIT || d == CUBLAS_DIAG_UNIT; }

// trsm: B (m×n, leading dimension m) = alpha·op(A)⁻¹·B (left) or
// alpha·B·op(A)⁻¹ (right), A k×k with leading dimension k.
static void trsm(int side, int lower, int trans, int unit, int m, int n, double alpha, const double *a, double *b) {
	for (long long i = 0; i < (long long)m * n; i++)
		b[i] *= alpha;
	if (side == CUBLAS_SIDE_LEFT) {
		for (int j = 0; j < n; j++)
			trsv(a, m, m, lower, trans, unit, b + (long long)j * m, 1);
	} else {
		// X·op(A) = B ⇔ op(A)ᵀ·Xᵀ = Bᵀ: each row of B.
		for (int i = 0; i < m; i++)
			trsv(a, n, n, lower, !trans, unit, b + i, m);
	}
}

#define TRSM(P, T, DBL)                                                                                            \
	API cublasStatus_t cublas##P##trsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,     \
	                                      cublasOperation_t trans, cublasDiagType_t diag, int m, int n,            \
	                                      const T *alpha, const T *A, int lda, T *B, int ldb) {                    \
		if (!handle_ok(handle))                                                                                \
			return CUBLAS_STATUS_NOT_INITIALIZED;                                                          \
		int k = side == CUBLAS_SIDE_LEFT ? m : n;                                                              \
		if (!side_ok(side) || !fill_ok(uplo) || !op_ok(trans) || !diag_ok(diag) || m < 0 || n < 0 ||          \
		    lda < max1(k) || ldb < max1(m) || !alpha)                                                          \
			return CUBLAS_STATUS_INVALID_VALUE;                                                            \
		if (m == 0 || n == 0)                                                                                  \
			return CUBLAS_STATUS_SUCCESS;                                                                  \
		double *a = load(DBL, A, k, k, lda), *b = load(DBL, B, m, n, ldb);                                     \
		trsm(side, uplo == CUBLAS_FILL_MODE_LOWER, trans != CUBLAS_OP_N, diag == CUBLAS_DIAG_UNIT, m, n,       \
		     *alpha, a, b);                                                                                    \
		store(DBL, B, b, m, n, ldb);                                                                           \
		free(a);                                                                                               \
		free(b);                                                                                               \
		return CUBLAS_STATUS_SUCCESS;                                                                          \
	}                                                                                                              \
	API cublasStatus_t cublas##P##trsmBatched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, \
	                                          cublasOperation_t trans, cublasDiagType_t diag, int m, int n,        \
	                                          const T *alpha, const T *const A[], int lda, T *const B[], int ldb,  \
	                                          int batchCount) {                                                    \
		if (!handle_ok(handle))                                                                                \
			return CUBLAS_STATUS_NOT_INITIALIZED;                                                          \
		int k = side == CUBLAS_SIDE_LEFT ? m : n;                                                              \
		if (!side_ok(side) || !fill_ok(uplo) || !op_ok(trans) || !diag_ok(diag) || m < 0 || n < 0 ||          \
		    lda < max1(k) || ldb < max1(m) || !alpha || batchCount < 0 || (batchCount > 0 && (!A || !B)))     \
			return CUBLAS_STATUS_INVALID_VALUE;                                                            \
		if (m == 0 || n == 0)                                                                                  \
			return CUBLAS_STATUS_SUCCESS;                                                                  \
		for (int i = 0; i < batchCount; i++) {                                                                 \
			double *a = load(DBL, A[i], k, k, lda), *b = load(DBL, B[i], m, n, ldb);                       \
			trsm(side, uplo == CUBLAS_FILL_MODE_LOWER, trans != CUBLAS_OP_N, diag == CUBLAS_DIAG_UNIT, m,  \
			     n, *alpha, a, b);                                                                         \
			store(DBL, B[i], b, m, n, ldb);                                                                \
			free(a);                                                                                       \
			free(b);                                                                                       \
		}                                                                                                      \
		return CUBLAS_STATUS_SUCCESS;                                                                          \
	}                                                                                                              \
	API cublasStatus_t cublas##P##getrfBatched(cublasHandle_t handle, int n, T *const A[], int lda, int *P_,       \
	                                           int *info, int batchSize) {                                         \
		if (!handle_ok(handle))                                                                                \
			return CUBLAS_STATUS_NOT_INITIALIZED;                                                          \
		if (n < 0 || lda < max1(n) || batchSize < 0 || !info || (batchSize > 0 && !A))                         \
			return CUBLAS_STATUS_INVALID_VALUE;                                                            \
		for (int i = 0; i < batchSize; i++) {                                                                  \
			double *a = load(DBL, A[i], n, n, lda);                                                        \
			info[i] = getrf(a, n, n, P_ ? P_ + (long long)i * n : NULL);                                   \
			store(DBL, A[i], a, n, n, lda);                                                                \
			free(a);                                                                                       \
		}                                                                                                      \
		return CUBLAS_STATUS_SUCCESS;                                                                          \
	}                                                                                                              \
	API cublasStatus_t cublas##P##getrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,    \
	                                           const T *const Aarray[], int lda, const int *devIpiv,               \
	                                           T *const Barray[], int ldb, int *info, int batchSize) {             \
		if (!handle_ok(handle))                                                                                \
			return CUBLAS_STATUS_NOT_INITIALIZED;                                                          \
		/* cuBLAS reports a bad argument in the host int *info */                                           \
		int bad = !op_ok(trans) ? -1 : n < 0 ? -2 : nrhs < 0 ? -3 : lda < max1(n) ? -5 : ldb < max1(n) ? -8   \
		          : batchSize < 0 ? -10 : 0;                                                                   \
		if (!info)                                                                                             \
			return CUBLAS_STATUS_INVALID_VALUE;                                                            \
		*info = bad;                                                                                           \
		if (bad)                                                                                               \
			return CUBLAS_STATUS_INVALID_VALUE;                                                            \
		for (int i = 0; i < batchSize; i++) {                                                                  \
			double *a = load(DBL, Aarray[i], n, n, lda), *b = load(DBL, Barray[i], n, nrhs, ldb);          \
			getrs(a, n, devIpiv ? devIpiv + (long long)i * n : NULL, trans != CUBLAS_OP_N, b, nrhs);       \
			store(DBL, Barray[i], b, n, nrhs, ldb);                                                        \
			free(a);                                                                                       \
			free(b);                                                                                       \
		}                                                                                                      \
		return CUBLAS_STATUS_SUCCESS;                                                                          \
	}

TRSM(S, float, 0)
TRSM(D, double, 1)

#endif
