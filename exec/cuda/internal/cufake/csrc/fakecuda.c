// fakecuda.c: an emulated CUDA driver (libcuda) for testing loom's CUDA
// backend without a GPU. Device memory is host memory, streams are
// synchronous, kernels are host shared objects built by the fake NVRTC
// (fakenvrtc.c) from loom_emu.h, and cuLaunchKernel runs them on the
// calling thread. Only the symbols loom uses are exported, with the real
// prototypes of cuda.h.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_DEINITIALIZED = 4,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_INVALID_SOURCE = 300,
	CUDA_ERROR_FILE_NOT_FOUND = 301,
	CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
	CUDA_ERROR_OPERATING_SYSTEM = 304,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_NOT_PERMITTED = 800,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_UNKNOWN = 999,
};

// The emulated device.
#define DEVICE_NAME "Loom Emulated GPU"
#define DEVICE_MEMORY (8ull << 30)
#define DRIVER_VERSION 13000
#define CC_MAJOR 9
#define CC_MINOR 0
#define SM_COUNT 4
#define MAX_THREADS_PER_BLOCK 1024
#define MAX_SHARED_PER_BLOCK (48 * 1024)
#define WARP_SIZE 32
#define ALLOC_ALIGN 256 // cuMemAlloc's guarantee on real devices

// Image format written by the fake NVRTC (little endian):
//   "LOOMEMU1", u32 arch (e.g. 90), u32 flags (1: virtual architecture),
//   u64 size of the shared object, the shared object.
#define IMAGE_MAGIC "LOOMEMU1"
#define IMAGE_HEADER 24

typedef void (*launcher_fn)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void **);
typedef int (*status_fn)(const char **);

struct CUctx_st {
	int refs;   // primary context retains
	int active; // refs > 0
};

struct CUmod_st {
	void *dl;
	status_fn status;
	struct CUfunc_st *funcs;
};

struct CUfunc_st {
	struct CUfunc_st *next;
	CUmodule mod;
	launcher_fn launch;
	char *name;
};

struct CUstream_st {
	unsigned flags;
};

struct CUevent_st {
	unsigned flags;
	int recorded;
	struct timespec t;
};

struct alloc {
	uintptr_t base;
	size_t size;
};

// A growable set of allocations sorted by base address.
struct allocs {
	struct alloc *a;
	size_t n, cap;
};

// A growable set of handles.
struct handles {
	void **p;
	size_t n, cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized_; // read with is_init, written with mu held
#define is_init() __atomic_load_n(&initialized_, __ATOMIC_ACQUIRE)
static struct CUctx_st primary;
static __thread CUcontext current; // contexts are current per thread, as in CUDA
static struct allocs dev_mem, host_mem;
static size_t dev_used;
static struct handles streams, events, modules, funcs;

// ---------------------------------------------------------------------------
// Bookkeeping.

static size_t alloc_search(const struct allocs *s, uintptr_t p) {
	// The index of the first allocation with base > p.
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->a[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int alloc_add(struct allocs *s, uintptr_t base, size_t size) {
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct alloc *a = realloc(s->a, cap * sizeof *a);
		if (!a)
			return 0;
		s->a = a;
		s->cap = cap;
	}
	size_t i = alloc_search(s, base);
	memmove(&s->a[i + 1], &s->a[i], (s->n - i) * sizeof s->a[0]);
	s->a[i].base = base;
	s->a[i].size = size;
	s->n++;
	return 1;
}

// Removes the allocation starting at base; returns its size or 0.
static size_t alloc_remove(struct allocs *s, uintptr_t base) {
	size_t i = alloc_search(s, base);
	if (i == 0 || s->a[i - 1].base != base)
		return 0;
	i--;
	size_t size = s->a[i].size;
	memmove(&s->a[i], &s->a[i + 1], (s->n - i - 1) * sizeof s->a[0]);
	s->n--;
	return size;
}

// Whether [p, p+n) lies in one allocation.
static int alloc_contains(const struct allocs *s, uintptr_t p, size_t n) {
	size_t i = alloc_search(s, p);
	if (i == 0)
		return 0;
	const struct alloc *a = &s->a[i - 1];
	return p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base);
}

static int handle_add(struct handles *h, void *p) {
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		void **q = realloc(h->p, cap * sizeof *q);
		if (!q)
			return 0;
		h->p = q;
		h->cap = cap;
	}
	h->p[h->n++] = p;
	return 1;
}

static int handle_index(const struct handles *h, const void *p) {
	if (!p)
		return -1;
	for (size_t i = h->n; i-- > 0;)
		if (h->p[i] == p)
			return (int)i;
	return -1;
}

static int handle_remove(struct handles *h, const void *p) {
	int i = handle_index(h, p);
	if (i < 0)
		return 0;
	h->p[i] = h->p[--h->n];
	return 1;
}

static size_t env_size(const char *name, size_t def) {
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return def;
	return (size_t)v;
}

// The device memory: 8 GiB, or LOOM_FAKE_CUDA_MEMLIMIT bytes if less.
static size_t total_memory(void) {
	size_t lim = env_size("LOOM_FAKE_CUDA_MEMLIMIT", DEVICE_MEMORY);
	return lim < DEVICE_MEMORY ? lim : DEVICE_MEMORY;
}

static void unload_module(CUmodule m) {
	struct CUfunc_st *f = m->funcs;
	while (f) {
		struct CUfunc_st *next = f->next;
		handle_remove(&funcs, f);
		free(f->name);
		free(f);
		f = next;
	}
	if (m->dl)
		dlclose(m->dl);
	free(m);
}

// Destroys everything the primary context owns (its last release).
static void destroy_context(void) {
	for (size_t i = 0; i < dev_mem.n; i++)
		free((void *)dev_mem.a[i].base);
	dev_mem.n = 0;
	dev_used = 0;
	for (size_t i = 0; i < host_mem.n; i++)
		free((void *)host_mem.a[i].base);
	host_mem.n = 0;
	for (size_t i = 0; i < streams.n; i++)
		free(streams.p[i]);
	streams.n = 0;
	for (size_t i = 0; i < events.n; i++)
		free(events.p[i]);
	events.n = 0;
	while (modules.n > 0) {
		CUmodule m = modules.p[modules.n - 1];
		modules.n--;
		unload_module(m);
	}
}

// Checks, with mu held, that the driver is initialised and this thread has a
// live current context.
static CUresult need_ctx(void) {
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (current != &primary || !primary.active)
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

static int valid_stream(CUstream s) {
	uintptr_t v = (uintptr_t)s;
	return v <= 2 || handle_index(&streams, s) >= 0; // NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
}

#define LOCKED(expr)                  \
	do {                              \
		pthread_mutex_lock(&mu);      \
		CUresult r_ = (expr);         \
		pthread_mutex_unlock(&mu);    \
		return r_;                    \
	} while (0)

// ---------------------------------------------------------------------------
// Initialisation and devices.

API CUresult cuInit(unsigned int flags) {
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	__atomic_store_n(&initialized_, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *version) {
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = DRIVER_VERSION;
	return CUDA_SUCCESS;
}

static CUresult check_device(CUdevice dev) {
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *count) {
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
	CUresult r = check_device(dev);
	if (r)
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", DEVICE_NAME);
	return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
	CUresult r = check_device(dev);
	if (r)
		return r;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = total_memory();
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attr, CUdevice dev) {
	CUresult r = check_device(dev);
	if (r)
		return r;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	int v;
	switch (attr) {
	case 1: // MAX_THREADS_PER_BLOCK
	case 2: // MAX_BLOCK_DIM_X
	case 3: // MAX_BLOCK_DIM_Y
		v = MAX_THREADS_PER_BLOCK;
		break;
	case 4: // MAX_BLOCK_DIM_Z
		v = 64;
		break;
	case 5: // MAX_GRID_DIM_X
		v = 2147483647;
		break;
	case 6: // MAX_GRID_DIM_Y
	case 7: // MAX_GRID_DIM_Z
		v = 65535;
		break;
	case 8:  // MAX_SHARED_MEMORY_PER_BLOCK
	case 97: // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (no opt-in beyond 48 KiB)
		v = MAX_SHARED_PER_BLOCK;
		break;
	case 9: // TOTAL_CONSTANT_MEMORY
		v = 65536;
		break;
	case 10: // WARP_SIZE
		v = WARP_SIZE;
		break;
	case 11: // MAX_PITCH
		v = 2147483647;
		break;
	case 12: // MAX_REGISTERS_PER_BLOCK
	case 82: // MAX_REGISTERS_PER_MULTIPROCESSOR
		v = 65536;
		break;
	case 13: // CLOCK_RATE (kHz)
		v = 1000000;
		break;
	case 14: // TEXTURE_ALIGNMENT
		v = 512;
		break;
	case 15: // GPU_OVERLAP
	case 19: // CAN_MAP_HOST_MEMORY
	case 31: // CONCURRENT_KERNELS
	case 41: // UNIFIED_ADDRESSING
	case 83: // MANAGED_MEMORY
		v = 1;
		break;
	case 16: // MULTIPROCESSOR_COUNT
		v = SM_COUNT;
		break;
	case 17: // KERNEL_EXEC_TIMEOUT
	case 18: // INTEGRATED
	case 20: // COMPUTE_MODE (default)
	case 32: // ECC_ENABLED
	case 33: // PCI_BUS_ID
	case 34: // PCI_DEVICE_ID
	case 35: // TCC_DRIVER
	case 50: // PCI_DOMAIN_ID
	case 84: // MULTI_GPU_BOARD
		v = 0;
		break;
	case 30: // SURFACE_ALIGNMENT
		v = 512;
		break;
	case 36: // MEMORY_CLOCK_RATE (kHz)
		v = 1000000;
		break;
	case 37: // GLOBAL_MEMORY_BUS_WIDTH
		v = 256;
		break;
	case 38: // L2_CACHE_SIZE
		v = 4 << 20;
		break;
	case 39: // MAX_THREADS_PER_MULTIPROCESSOR
		v = 2048;
		break;
	case 40: // ASYNC_ENGINE_COUNT
		v = 1;
		break;
	case 75: // COMPUTE_CAPABILITY_MAJOR
		v = CC_MAJOR;
		break;
	case 76: // COMPUTE_CAPABILITY_MINOR
		v = CC_MINOR;
		break;
	case 81: // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
		v = 2 * MAX_SHARED_PER_BLOCK;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pi = v;
	return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Contexts.

static CUresult retain(CUcontext *pctx, CUdevice dev) {
	CUresult r = check_device(dev);
	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	primary.refs++;
	primary.active = 1;
	*pctx = &primary;
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) { LOCKED(retain(pctx, dev)); }

static CUresult release(CUdevice dev) {
	CUresult r = check_device(dev);
	if (r)
		return r;
	if (primary.refs <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary.refs == 0) {
		primary.active = 0;
		destroy_context();
	}
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { LOCKED(release(dev)); }

static CUresult set_current(CUcontext ctx) {
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx && (ctx != &primary || !primary.active))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = ctx;
	return CUDA_SUCCESS;
}

API CUresult cuCtxSetCurrent(CUcontext ctx) { LOCKED(set_current(ctx)); }

API CUresult cuCtxSynchronize(void) { LOCKED(need_ctx()); }

// ---------------------------------------------------------------------------
// Memory.

static CUresult mem_get_info(size_t *free_, size_t *total) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!free_ || !total)
		return CUDA_ERROR_INVALID_VALUE;
	size_t t = total_memory();
	*total = t;
	*free_ = dev_used < t ? t - dev_used : 0;
	return CUDA_SUCCESS;
}

API CUresult cuMemGetInfo_v2(size_t *free_, size_t *total) { LOCKED(mem_get_info(free_, total)); }

static CUresult mem_alloc(CUdeviceptr *dptr, size_t size) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!dptr || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t t = total_memory();
	if (size > t || dev_used > t - size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	void *p = NULL;
	if (posix_memalign(&p, ALLOC_ALIGN, size) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!alloc_add(&dev_mem, (uintptr_t)p, size)) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	// Fresh device memory is undefined: make reads of it visible (NaN, -1).
	memset(p, 0xff, size);
	dev_used += size;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size) { LOCKED(mem_alloc(dptr, size)); }

static CUresult mem_free(CUdeviceptr dptr) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (dptr == 0)
		return CUDA_SUCCESS; // as cudaFree(NULL)
	size_t size = alloc_remove(&dev_mem, (uintptr_t)dptr);
	if (size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	dev_used -= size;
	free((void *)(uintptr_t)dptr);
	return CUDA_SUCCESS;
}

API CUresult cuMemFree_v2(CUdeviceptr dptr) { LOCKED(mem_free(dptr)); }

static CUresult mem_alloc_host(void **pp, size_t size) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!pp || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = NULL;
	if (posix_memalign(&p, 4096, size) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!alloc_add(&host_mem, (uintptr_t)p, size)) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

API CUresult cuMemAllocHost_v2(void **pp, size_t size) { LOCKED(mem_alloc_host(pp, size)); }

static CUresult mem_free_host(void *p) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!p || alloc_remove(&host_mem, (uintptr_t)p) == 0)
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

API CUresult cuMemFreeHost(void *p) { LOCKED(mem_free_host(p)); }

// Copies between host and device memory: the device ranges must lie in
// allocations (as on a device with unified addressing).
static CUresult copy(uintptr_t dst, int dst_dev, uintptr_t src, int src_dev, size_t n, CUstream s, int check_stream) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (check_stream && !valid_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	if (dst_dev && !alloc_contains(&dev_mem, dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	if (src_dev && !alloc_contains(&dev_mem, src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)dst, (const void *)src, n);
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	LOCKED(copy((uintptr_t)dst, 1, (uintptr_t)src, 0, n, NULL, 0));
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	LOCKED(copy((uintptr_t)dst, 0, (uintptr_t)src, 1, n, NULL, 0));
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
	LOCKED(copy((uintptr_t)dst, 1, (uintptr_t)src, 0, n, s, 1));
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
	LOCKED(copy((uintptr_t)dst, 0, (uintptr_t)src, 1, n, s, 1));
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	LOCKED(copy((uintptr_t)dst, 1, (uintptr_t)src, 1, n, s, 1));
}

static CUresult memset8(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!valid_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!alloc_contains(&dev_mem, (uintptr_t)dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memset((void *)(uintptr_t)dst, v, n);
	return CUDA_SUCCESS;
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) { LOCKED(memset8(dst, v, n, s)); }

// ---------------------------------------------------------------------------
// Streams and events.

static CUresult stream_create(CUstream *ps, unsigned flags) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!ps || (flags & ~1u)) // CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING
		return CUDA_ERROR_INVALID_VALUE;
	CUstream s = calloc(1, sizeof *s);
	if (!s || !handle_add(&streams, s)) {
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	s->flags = flags;
	*ps = s;
	return CUDA_SUCCESS;
}

API CUresult cuStreamCreate(CUstream *ps, unsigned int flags) { LOCKED(stream_create(ps, flags)); }

static CUresult stream_destroy(CUstream s) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!handle_remove(&streams, s))
		return CUDA_ERROR_INVALID_HANDLE;
	free(s);
	return CUDA_SUCCESS;
}

API CUresult cuStreamDestroy_v2(CUstream s) { LOCKED(stream_destroy(s)); }

static CUresult stream_sync(CUstream s) {
	CUresult r = need_ctx();
	if (r)
		return r;
	return valid_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuStreamSynchronize(CUstream s) { LOCKED(stream_sync(s)); }

static CUresult event_create(CUevent *pe, unsigned flags) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!pe || (flags & ~7u)) // DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & 4) && !(flags & 2)) // INTERPROCESS needs DISABLE_TIMING
		return CUDA_ERROR_INVALID_VALUE;
	CUevent e = calloc(1, sizeof *e);
	if (!e || !handle_add(&events, e)) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	e->flags = flags;
	*pe = e;
	return CUDA_SUCCESS;
}

API CUresult cuEventCreate(CUevent *pe, unsigned int flags) { LOCKED(event_create(pe, flags)); }

static CUresult event_record(CUevent e, CUstream s) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (handle_index(&events, e) < 0 || !valid_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	clock_gettime(CLOCK_MONOTONIC, &e->t);
	e->recorded = 1;
	return CUDA_SUCCESS;
}

API CUresult cuEventRecord(CUevent e, CUstream s) { LOCKED(event_record(e, s)); }

static CUresult event_sync(CUevent e) {
	CUresult r = need_ctx();
	if (r)
		return r;
	return handle_index(&events, e) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventSynchronize(CUevent e) { LOCKED(event_sync(e)); }

static CUresult event_elapsed(float *ms, CUevent a, CUevent b) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (handle_index(&events, a) < 0 || handle_index(&events, b) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!a->recorded || !b->recorded || (a->flags & 2) || (b->flags & 2))
		return CUDA_ERROR_INVALID_HANDLE;
	double d = (double)(b->t.tv_sec - a->t.tv_sec) * 1e3 + (double)(b->t.tv_nsec - a->t.tv_nsec) * 1e-6;
	*ms = (float)d;
	return CUDA_SUCCESS;
}

API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { LOCKED(event_elapsed(ms, start, end)); }

static CUresult event_destroy(CUevent e) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!handle_remove(&events, e))
		return CUDA_ERROR_INVALID_HANDLE;
	free(e);
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy_v2(CUevent e) { LOCKED(event_destroy(e)); }

// ---------------------------------------------------------------------------
// Modules and launches.

static int write_all(int fd, const unsigned char *p, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		p += w;
		n -= (size_t)w;
	}
	return 1;
}

static CUresult module_load(CUmodule *pm, const void *image) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!pm || !image)
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned char *img = image;
	if (memcmp(img, IMAGE_MAGIC, 8) != 0)
		return CUDA_ERROR_INVALID_IMAGE;
	uint32_t arch, flags;
	uint64_t size;
	memcpy(&arch, img + 8, 4);
	memcpy(&flags, img + 12, 4);
	memcpy(&size, img + 16, 8);
	if (size == 0 || size > (1ull << 32))
		return CUDA_ERROR_INVALID_IMAGE;
	if (flags & 1) {
		// PTX is compiled for the device when its virtual architecture is
		// not newer.
		if (arch > CC_MAJOR * 10 + CC_MINOR)
			return CUDA_ERROR_INVALID_PTX;
	} else if (arch / 10 != CC_MAJOR || arch % 10 > CC_MINOR) {
		// A cubin runs on its major version, on later minor versions.
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	}
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/loomfakecuda-XXXXXX.so", tmp);
	int fd = mkstemps(path, 3);
	if (fd < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	int ok = write_all(fd, img + IMAGE_HEADER, (size_t)size);
	close(fd);
	if (!ok) {
		unlink(path);
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	unlink(path);
	if (!dl) {
		fprintf(stderr, "loom fake CUDA: cuModuleLoadData: %s\n", dlerror());
		return CUDA_ERROR_INVALID_IMAGE;
	}
	status_fn st = (status_fn)dlsym(dl, "loom_emu_status");
	if (!st) {
		dlclose(dl);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	CUmodule m = calloc(1, sizeof *m);
	if (!m || !handle_add(&modules, m)) {
		free(m);
		dlclose(dl);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->dl = dl;
	m->status = st;
	*pm = m;
	return CUDA_SUCCESS;
}

API CUresult cuModuleLoadData(CUmodule *pm, const void *image) { LOCKED(module_load(pm, image)); }

static CUresult module_unload(CUmodule m) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!handle_remove(&modules, m))
		return CUDA_ERROR_INVALID_HANDLE;
	unload_module(m);
	return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(CUmodule m) { LOCKED(module_unload(m)); }

static CUresult module_get_function(CUfunction *pf, CUmodule m, const char *name) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (handle_index(&modules, m) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	for (struct CUfunc_st *f = m->funcs; f; f = f->next) {
		if (strcmp(f->name, name) == 0) {
			*pf = f;
			return CUDA_SUCCESS;
		}
	}
	size_t n = strlen(name);
	char *sym = malloc(n + 32);
	if (!sym)
		return CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(sym, n + 32, "loom_emu_launch_%s", name);
	launcher_fn fn = (launcher_fn)dlsym(m->dl, sym);
	free(sym);
	if (!fn)
		return CUDA_ERROR_NOT_FOUND;
	CUfunction f = calloc(1, sizeof *f);
	char *copy = strdup(name);
	if (!f || !copy || !handle_add(&funcs, f)) {
		free(f);
		free(copy);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	f->mod = m;
	f->launch = fn;
	f->name = copy;
	f->next = m->funcs;
	m->funcs = f;
	*pf = f;
	return CUDA_SUCCESS;
}

API CUresult cuModuleGetFunction(CUfunction *pf, CUmodule m, const char *name) {
	LOCKED(module_get_function(pf, m, name));
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream s, void **params, void **extra) {
	CUresult r = need_ctx();
	if (r)
		return r;
	if (handle_index(&funcs, f) < 0 || !valid_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (gy > 65535 || gz > 65535 || gx > 2147483647u || bx > 1024 || by > 1024 || bz > 64)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned long long)bx * by * bz > MAX_THREADS_PER_BLOCK)
		return CUDA_ERROR_INVALID_VALUE;
	if (shared > MAX_SHARED_PER_BLOCK)
		return CUDA_ERROR_INVALID_VALUE;
	if (params && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra)
		return CUDA_ERROR_NOT_SUPPORTED; // CU_LAUNCH_PARAM_BUFFER_* is not emulated
	f->launch(gx, gy, gz, bx, by, bz, shared, params);
	const char *msg = NULL;
	switch (f->mod->status(&msg)) {
	case 0:
		return CUDA_SUCCESS;
	case 1:
		fprintf(stderr, "loom fake CUDA: cuLaunchKernel(%s): %s\n", f->name, msg ? msg : "");
		return CUDA_ERROR_INVALID_VALUE;
	default:
		fprintf(stderr, "loom fake CUDA: cuLaunchKernel(%s): %s\n", f->name, msg ? msg : "");
		return CUDA_ERROR_LAUNCH_FAILED;
	}
}

API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                            unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                            unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
	// Launches are serialised: a kernel object's emulator state is global.
	LOCKED(launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
	              kernelParams, extra));
}

// ---------------------------------------------------------------------------
// Errors.

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_SOURCE, "CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "shared object initialization failed"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult error_lookup(CUresult code, const char **p, int text) {
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
		if (errors[i].code == code) {
			*p = text ? errors[i].text : errors[i].name;
			return CUDA_SUCCESS;
		}
	}
	*p = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorName(CUresult error, const char **pStr) { return error_lookup(error, pStr, 0); }

API CUresult cuGetErrorString(CUresult error, const char **pStr) { return error_lookup(error, pStr, 1); }
