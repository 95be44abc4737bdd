// fakecublas.c: an emulated cuBLAS (libcublas) for testing loom's CUDA
// backend without a GPU: the GEMMs loom uses (real and complex), computed
// on the host with naive loops accumulating in double, on the emulated device memory of
// fakecuda.c (which is host memory). Only the symbols loom uses are
// exported, with the real prototypes of cublas_api.h.
#include <pthread.h>
#include <stdlib.h>

#define API __attribute__((visibility("default")))

typedef enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_ALLOC_FAILED = 3,
	CUBLAS_STATUS_INVALID_VALUE = 7,
	CUBLAS_STATUS_ARCH_MISMATCH = 8,
	CUBLAS_STATUS_MAPPING_ERROR = 11,
	CUBLAS_STATUS_EXECUTION_FAILED = 13,
	CUBLAS_STATUS_INTERNAL_ERROR = 14,
	CUBLAS_STATUS_NOT_SUPPORTED = 15,
	CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

typedef enum {
	CUBLAS_OP_N = 0,
	CUBLAS_OP_T = 1,
	CUBLAS_OP_C = 2,
} cublasOperation_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct cublasContext *cublasHandle_t;

struct cublasContext {
	cudaStream_t stream;
};

#define CUBLAS_VERSION 130000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t *handles;
static size_t nhandles, caphandles;

static int handle_valid(cublasHandle_t h) {
	int ok = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nhandles && !ok; i++)
		ok = handles[i] == h;
	pthread_mutex_unlock(&mu);
	return h && ok;
}

API cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	cublasHandle_t h = calloc(1, sizeof *h);
	if (!h)
		return CUBLAS_STATUS_ALLOC_FAILED;
	pthread_mutex_lock(&mu);
	if (nhandles == caphandles) {
		size_t cap = caphandles ? 2 * caphandles : 16;
		cublasHandle_t *p = realloc(handles, cap * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&mu);
			free(h);
			return CUBLAS_STATUS_ALLOC_FAILED;
		}
		handles = p;
		caphandles = cap;
	}
	handles[nhandles++] = h;
	pthread_mutex_unlock(&mu);
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
	int found = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nhandles; i++) {
		if (handles[i] == handle) {
			handles[i] = handles[--nhandles];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	if (!found)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
	if (!handle_valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = stream; // every operation is synchronous anyway
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version) {
	if (handle && !handle_valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!version)
		return CUBLAS_STATUS_INVALID_VALUE;
	*version = CUBLAS_VERSION;
	return CUBLAS_STATUS_SUCCESS;
}

static int max1(int a) { return a > 1 ? a : 1; }

// The argument checks of cublas<t>gemm.
static cublasStatus_t check(cublasHandle_t handle, int ta, int tb, int m, int n, int k, const void *alpha,
                            int lda, int ldb, const void *beta, int ldc, int batch) {
	if (!handle_valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (ta < CUBLAS_OP_N || ta > CUBLAS_OP_C || tb < CUBLAS_OP_N || tb > CUBLAS_OP_C)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (lda < max1(ta == CUBLAS_OP_N ? m : k) || ldb < max1(tb == CUBLAS_OP_N ? k : n) || ldc < max1(m))
		return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

// C = alpha op(A) op(B) + beta C, column major, op(A) m×k, op(B) k×n. With
// beta == 0, C is not read; with alpha == 0 or k == 0, A and B are not.
#define GEMM(NAME, T)                                                                                          \
	static void NAME(int ta, int tb, int m, int n, int k, double alpha, const T *A, long long lda, const T *B, \
	                 long long ldb, double beta, T *C, long long ldc) {                                          \
		long long sai = ta == CUBLAS_OP_N ? 1 : lda, sal = ta == CUBLAS_OP_N ? lda : 1;                         \
		long long sbl = tb == CUBLAS_OP_N ? 1 : ldb, sbj = tb == CUBLAS_OP_N ? ldb : 1;                         \
		for (int j = 0; j < n; j++) {                                                                          \
			for (int i = 0; i < m; i++) {                                                                      \
				double acc = 0;                                                                                \
				if (alpha != 0) {                                                                              \
					for (int l = 0; l < k; l++)                                                                \
						acc += (double)A[i * sai + l * sal] * (double)B[l * sbl + j * sbj];                    \
				}                                                                                              \
				T *c = &C[i + j * ldc];                                                                        \
				double v = alpha * acc;                                                                        \
				if (beta != 0)                                                                                 \
					v += beta * (double)*c;                                                                    \
				*c = (T)v;                                                                                     \
			}                                                                                                  \
		}                                                                                                      \
	}

GEMM(sgemm, float)
GEMM(dgemm, double)

// cuComplex and cuDoubleComplex: the real part, then the imaginary part.
typedef struct {
	float x, y;
} cuComplex;
typedef struct {
	double x, y;
} cuDoubleComplex;

// The complex GEMM: as GEMM, with the real and imaginary parts of the
// sums in double; CUBLAS_OP_C conjugates the transposed operand.
#define CGEMM(NAME, T)                                                                                          \
	static void NAME(int ta, int tb, int m, int n, int k, T alpha, const T *A, long long lda, const T *B,       \
	                 long long ldb, T beta, T *C, long long ldc) {                                                \
		long long sai = ta == CUBLAS_OP_N ? 1 : lda, sal = ta == CUBLAS_OP_N ? lda : 1;                          \
		long long sbl = tb == CUBLAS_OP_N ? 1 : ldb, sbj = tb == CUBLAS_OP_N ? ldb : 1;                          \
		double ca = ta == CUBLAS_OP_C ? -1 : 1, cb = tb == CUBLAS_OP_C ? -1 : 1;                                 \
		int zero_alpha = alpha.x == 0 && alpha.y == 0, zero_beta = beta.x == 0 && beta.y == 0;                  \
		for (int j = 0; j < n; j++) {                                                                           \
			for (int i = 0; i < m; i++) {                                                                       \
				double re = 0, im = 0;                                                                          \
				if (!zero_alpha) {                                                                              \
					for (int l = 0; l < k; l++) {                                                               \
						T a = A[i * sai + l * sal], b = B[l * sbl + j * sbj];                                   \
						double ar = a.x, ai = ca * a.y, br = b.x, bi = cb * b.y;                                \
						re += ar * br - ai * bi;                                                                \
						im += ar * bi + ai * br;                                                                \
					}                                                                                           \
				}                                                                                               \
				T *c = &C[i + j * ldc];                                                                         \
				double vr = alpha.x * re - alpha.y * im, vi = alpha.x * im + alpha.y * re;                      \
				if (!zero_beta) {                                                                               \
					vr += beta.x * (double)c->x - beta.y * (double)c->y;                                        \
					vi += beta.x * (double)c->y + beta.y * (double)c->x;                                        \
				}                                                                                               \
				c->x = vr;                                                                                      \
				c->y = vi;                                                                                      \
			}                                                                                                   \
		}                                                                                                       \
	}

CGEMM(cgemm, cuComplex)
CGEMM(zgemm, cuDoubleComplex)

API cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                  const float *beta, float *C, int ldc) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
	if (st)
		return st;
	sgemm(transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const double *alpha, const double *A, int lda, const double *B,
                                  int ldb, const double *beta, double *C, int ldc) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
	if (st)
		return st;
	dgemm(transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                             const float *A, int lda, long long int strideA, const float *B, int ldb,
                                             long long int strideB, const float *beta, float *C, int ldc,
                                             long long int strideC, int batchCount) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount);
	if (st)
		return st;
	for (int b = 0; b < batchCount; b++)
		sgemm(transa, transb, m, n, k, *alpha, A + b * strideA, lda, B + b * strideB, ldb, *beta, C + b * strideC,
		      ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                             const double *A, int lda, long long int strideA, const double *B,
                                             int ldb, long long int strideB, const double *beta, double *C, int ldc,
                                             long long int strideC, int batchCount) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount);
	if (st)
		return st;
	for (int b = 0; b < batchCount; b++)
		dgemm(transa, transb, m, n, k, *alpha, A + b * strideA, lda, B + b * strideB, ldb, *beta, C + b * strideC,
		      ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B,
                                  int ldb, const cuComplex *beta, cuComplex *C, int ldc) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
	if (st)
		return st;
	cgemm(transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
                                  const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
                                  int ldc) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
	if (st)
		return st;
	zgemm(transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k, const cuComplex *alpha,
                                             const cuComplex *A, int lda, long long int strideA, const cuComplex *B,
                                             int ldb, long long int strideB, const cuComplex *beta, cuComplex *C,
                                             int ldc, long long int strideC, int batchCount) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount);
	if (st)
		return st;
	for (int b = 0; b < batchCount; b++)
		cgemm(transa, transb, m, n, k, *alpha, A + b * strideA, lda, B + b * strideB, ldb, *beta, C + b * strideC,
		      ldc);
	return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
                                             long long int strideA, const cuDoubleComplex *B, int ldb,
                                             long long int strideB, const cuDoubleComplex *beta, cuDoubleComplex *C,
                                             int ldc, long long int strideC, int batchCount) {
	cublasStatus_t st = check(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount);
	if (st)
		return st;
	for (int b = 0; b < batchCount; b++)
		zgemm(transa, transb, m, n, k, *alpha, A + b * strideA, lda, B + b * strideB, ldb, *beta, C + b * strideC,
		      ldc);
	return CUBLAS_STATUS_SUCCESS;
}
