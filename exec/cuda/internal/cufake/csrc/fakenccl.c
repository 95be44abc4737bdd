// fakenccl.c: an in-process NCCL (libnccl.so.2) for testing loom's NCCL
// path without a GPU. The ranks of a communicator are threads of one
// process (each with its own fake CUDA backend); device memory is host
// memory (fakecuda.c), so a collective is memcpy and loops. Only the
// symbols loom uses are exported, with the prototypes of nccl.h.
//
// A collective runs when the last rank of the communicator calls it: that
// thread reads every rank's send buffer, computes the result in rank
// order (deterministic; a reduction accumulates rank 0, then 1, ... in
// the element type, float16 and bfloat16 in float and rounded once),
// writes every rank's receive buffer, and wakes the others. Until then
// each caller blocks: the stream is synchronous, as in fakecuda.c. A
// caller whose communicator is aborted (ncclCommAbort, from another
// thread) returns ncclSystemError; the other ranks' callers, pending or
// later, return ncclRemoteError. $LOOM_FAKE_NCCL_TIMEOUT seconds (default
// 60) is a safety net: a wait longer than that returns ncclSystemError.
// Ranks calling different collectives (or different sizes, types, ops or
// roots) all get ncclInvalidUsage (real NCCL would hang or corrupt).
//
// ncclGetUniqueId makes a random id; with $NCCL_COMM_ID set (host:port,
// NCCL's own bootstrap) every caller gets the same id, derived from it.
// An id's last 8 bytes are a checksum of the others: ncclCommInitRank
// rejects (ncclInvalidArgument) an id it did not issue, which catches an
// id passed with the wrong ABI (it is a 128-byte struct by value).
// ncclCommInitRank blocks until the communicator's every rank has called
// it with the same id and number of ranks.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct CUstream_st *cudaStream_t;
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
typedef struct ncclComm *ncclComm_t;

enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
};

enum { ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclNumTypes };
enum { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg, ncclNumOps };

#define NCCL_VERSION_CODE 22704 // the fake reports NCCL 2.27.4

enum kind { ALL_REDUCE = 1, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE };
static const char *kind_names[] = {"", "ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce"};

// One rank's call of the collective in progress.
struct call {
	int kind;
	const void *send;
	void *recv;
	size_t count;
	int dt, op, root;
};

// A communicator: the ranks' shared state.
struct clique {
	struct clique *next;
	char id[NCCL_UNIQUE_ID_BYTES];
	int nranks;
	int joined;  // ranks that called ncclCommInitRank
	int formed;  // every rank joined: the id no longer names this clique
	int alive;   // comms not yet destroyed or aborted
	int aborted; // a rank aborted: every wait ends
	struct call *calls;
	int arrived;     // ranks in the current collective
	unsigned long gen; // completed collectives (and the formation)
	int status;        // the last completed collective's result
};

struct ncclComm {
	struct clique *c;
	int rank;
	int aborted; // this handle was aborted
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct clique *forming; // cliques some of whose ranks have not joined

// ---------------------------------------------------------------------------
// Unique ids.

static uint64_t mix(uint64_t x) { // splitmix64
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t checksum(const char *id) {
	uint64_t h = 0x6c6f6f6d6e63636cull; // "loomnccl"
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES - 8; i++)
		h = mix(h ^ (unsigned char)id[i]);
	return h;
}

// fill writes 120 bytes derived from seed and the checksum.
static void fill(char *id, uint64_t seed) {
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES - 8; i += 8) {
		seed = mix(seed);
		memcpy(id + i, &seed, 8);
	}
	uint64_t h = checksum(id);
	memcpy(id + NCCL_UNIQUE_ID_BYTES - 8, &h, 8);
}

static int valid_id(const char *id) {
	uint64_t h;
	memcpy(&h, id + NCCL_UNIQUE_ID_BYTES - 8, 8);
	return h == checksum(id);
}

API ncclResult_t ncclGetVersion(int *version) {
	if (!version)
		return ncclInvalidArgument;
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

API ncclResult_t ncclGetUniqueId(ncclUniqueId *out) {
	if (!out)
		return ncclInvalidArgument;
	const char *env = getenv("NCCL_COMM_ID");
	uint64_t seed;
	if (env && *env) {
		seed = 0x656e76; // "env": the same id for every caller
		for (const char *p = env; *p; p++)
			seed = mix(seed ^ (unsigned char)*p);
	} else {
		static unsigned long counter;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		pthread_mutex_lock(&mu);
		unsigned long n = ++counter;
		pthread_mutex_unlock(&mu);
		seed = mix(((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20)) ^ mix(n);
	}
	fill(out->internal, seed);
	return ncclSuccess;
}

API const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ncclSuccess:
		return "no error";
	case ncclUnhandledCudaError:
		return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError:
		return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError:
		return "remote process exited or there was a network error";
	case ncclInProgress:
		return "NCCL operation in progress";
	}
	return "unknown result code";
}

// ---------------------------------------------------------------------------
// Waiting.

static double timeout_seconds(void) {
	const char *s = getenv("LOOM_FAKE_NCCL_TIMEOUT");
	if (s && *s) {
		char *end;
		double v = strtod(s, &end);
		if (!*end && v > 0)
			return v;
	}
	return 60;
}

static struct timespec deadline(void) {
	double t = timeout_seconds();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	time_t sec = (time_t)t;
	long ns = ts.tv_nsec + (long)((t - (double)sec) * 1e9);
	ts.tv_sec += sec + ns / 1000000000L;
	ts.tv_nsec = ns % 1000000000L;
	return ts;
}

// wait_gen waits (mu held) until c->gen passes gen, the comm or the
// clique is aborted, or the safety timeout passes.
static ncclResult_t wait_gen(ncclComm_t comm, unsigned long gen, const char *what) {
	struct clique *c = comm->c;
	struct timespec dl = deadline();
	while (c->gen == gen) {
		if (comm->aborted)
			return ncclSystemError;
		if (c->aborted)
			return ncclRemoteError;
		if (pthread_cond_timedwait(&cv, &mu, &dl) == ETIMEDOUT && c->gen == gen) {
			fprintf(stderr, "loom fake NCCL: %s on rank %d of %d: the other ranks did not come within %g s ($LOOM_FAKE_NCCL_TIMEOUT)\n",
			        what, comm->rank, c->nranks, timeout_seconds());
			return ncclSystemError;
		}
	}
	return ncclSuccess;
}

// ---------------------------------------------------------------------------
// Communicators.

API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank) {
	if (!out || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	if (!valid_id(id.internal)) {
		fprintf(stderr, "loom fake NCCL: ncclCommInitRank: not a unique id from ncclGetUniqueId (bad checksum)\n");
		return ncclInvalidArgument;
	}
	pthread_mutex_lock(&mu);
	struct clique *c = forming;
	while (c && memcmp(c->id, id.internal, NCCL_UNIQUE_ID_BYTES) != 0)
		c = c->next;
	if (!c) {
		c = calloc(1, sizeof *c);
		if (c)
			c->calls = calloc((size_t)nranks, sizeof *c->calls);
		if (!c || !c->calls) {
			free(c);
			pthread_mutex_unlock(&mu);
			return ncclSystemError;
		}
		memcpy(c->id, id.internal, NCCL_UNIQUE_ID_BYTES);
		c->nranks = nranks;
		c->next = forming;
		forming = c;
	}
	if (c->nranks != nranks || c->calls[rank].kind != 0) {
		fprintf(stderr, "loom fake NCCL: ncclCommInitRank: rank %d of %d joins a communicator of %d ranks%s\n", rank, nranks,
		        c->nranks, c->nranks == nranks ? " where that rank already joined" : "");
		pthread_mutex_unlock(&mu);
		return ncclInvalidUsage;
	}
	ncclComm_t comm = calloc(1, sizeof *comm);
	if (!comm) {
		pthread_mutex_unlock(&mu);
		return ncclSystemError;
	}
	comm->c = c;
	comm->rank = rank;
	c->calls[rank].kind = -1; // joined
	c->joined++;
	c->alive++;
	ncclResult_t r = ncclSuccess;
	if (c->joined == nranks) {
		// Formed: the id may name a new communicator from now on.
		struct clique **p = &forming;
		while (*p != c)
			p = &(*p)->next;
		*p = c->next;
		c->next = NULL;
		c->formed = 1;
		memset(c->calls, 0, (size_t)nranks * sizeof *c->calls);
		c->gen++;
		pthread_cond_broadcast(&cv);
	} else {
		r = wait_gen(comm, c->gen, "ncclCommInitRank");
	}
	if (r != ncclSuccess) {
		// Leave the forming communicator (it may still form without us
		// only if this rank joins again).
		c->calls[rank].kind = 0;
		c->joined--;
		c->alive--;
		free(comm);
		pthread_mutex_unlock(&mu);
		return r;
	}
	pthread_mutex_unlock(&mu);
	*out = comm;
	return ncclSuccess;
}

static void release(ncclComm_t comm) {
	struct clique *c = comm->c;
	if (--c->alive == 0) {
		free(c->calls);
		free(c);
	}
}

API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
	if (!comm)
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	release(comm);
	free(comm);
	pthread_mutex_unlock(&mu);
	return ncclSuccess;
}

// ncclCommAbort ends the waits of every rank of the communicator. The
// handle is kept (leaked) while a thread may still be waiting on it.
API ncclResult_t ncclCommAbort(ncclComm_t comm) {
	if (!comm)
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	if (!comm->aborted) {
		comm->aborted = 1;
		comm->c->aborted = 1;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return ncclSuccess;
}

API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err) {
	if (!comm || !err)
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	*err = comm->aborted ? ncclSystemError : comm->c->aborted ? ncclRemoteError : ncclSuccess;
	pthread_mutex_unlock(&mu);
	return ncclSuccess;
}

// ---------------------------------------------------------------------------
// Element types.

static size_t type_size(int dt) {
	switch (dt) {
	case ncclInt8:
	case ncclUint8:
		return 1;
	case ncclFloat16:
	case ncclBfloat16:
		return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32:
		return 4;
	case ncclInt64:
	case ncclUint64:
	case ncclFloat64:
		return 8;
	}
	return 0;
}

static float half_to_float(uint16_t h) {
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else { // subnormal
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 0x400));
			bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | (man << 13);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t float_to_half(float f) { // round to nearest even
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t ax = x & 0x7fffffff;
	if (ax >= 0x7f800000u)
		return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
	if (ax >= 0x477ff000u) // rounds to 65520 or more: infinity
		return (uint16_t)(sign | 0x7c00);
	if (ax < 0x38800000u) { // subnormal or zero
		float a;
		memcpy(&a, &ax, 4);
		uint32_t m = (uint32_t)(a * 16777216.0f + 0.5f); // units of 2^-24
		float back = (float)m / 16777216.0f;
		if (back - a == 0.5f / 16777216.0f && (m & 1))
			m--;
		return (uint16_t)(sign | m);
	}
	uint32_t r = ax + 0xfff + ((ax >> 13) & 1);
	return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static float bf16_to_float(uint16_t b) {
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t float_to_bf16(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* REDUCE_AS reduces n elements of storage type ST from every rank into out,
   accumulating in ACC: LOAD widens an element, STORE narrows the result
   (empty for the types that accumulate in themselves, the half-precision
   conversions for float16 and bfloat16). */
#define REDUCE_AS(ST, ACC, LOAD, STORE)                                                               \
	do {                                                                                          \
		ST *o = out;                                                                          \
		for (size_t i = 0; i < n; i++) {                                                      \
			ACC acc = LOAD(((const ST *)in[0])[off + i]);                                 \
			for (int r = 1; r < nranks; r++) {                                            \
				ACC v = LOAD(((const ST *)in[r])[off + i]);                           \
				switch (op) {                                                         \
				case ncclSum:                                                         \
				case ncclAvg:                                                         \
					acc = (ACC)(acc + v);                                         \
					break;                                                        \
				case ncclProd:                                                        \
					acc = (ACC)(acc * v);                                         \
					break;                                                        \
				case ncclMax:                                                         \
					acc = v > acc ? v : acc;                                      \
					break;                                                        \
				case ncclMin:                                                         \
					acc = v < acc ? v : acc;                                      \
					break;                                                        \
				}                                                                     \
			}                                                                             \
			if (op == ncclAvg)                                                            \
				acc = (ACC)(acc / (ACC)nranks);                                       \
			o[i] = STORE(acc);                                                            \
		}                                                                                     \
	} while (0)

#define REDUCE_LOOP(T) REDUCE_AS(T, T, , )
#define REDUCE_LOOP16(TO_F, FROM_F) REDUCE_AS(uint16_t, float, TO_F, FROM_F)

// reduce writes to out the n elements from element off of the ranks'
// buffers in, reduced in rank order.
static void reduce(void *out, const void *const *in, int nranks, size_t off, size_t n, int dt, int op) {
	switch (dt) {
	case ncclInt8:
		REDUCE_LOOP(int8_t);
		break;
	case ncclUint8:
		REDUCE_LOOP(uint8_t);
		break;
	case ncclInt32:
		REDUCE_LOOP(int32_t);
		break;
	case ncclUint32:
		REDUCE_LOOP(uint32_t);
		break;
	case ncclInt64:
		REDUCE_LOOP(int64_t);
		break;
	case ncclUint64:
		REDUCE_LOOP(uint64_t);
		break;
	case ncclFloat32:
		REDUCE_LOOP(float);
		break;
	case ncclFloat64:
		REDUCE_LOOP(double);
		break;
	case ncclFloat16:
		REDUCE_LOOP16(half_to_float, float_to_half);
		break;
	case ncclBfloat16:
		REDUCE_LOOP16(bf16_to_float, float_to_bf16);
		break;
	}
}

// ---------------------------------------------------------------------------
// Collectives.

static int same_call(const struct call *a, const struct call *b) {
	return a->kind == b->kind && a->count == b->count && a->dt == b->dt && a->op == b->op && a->root == b->root;
}

// run computes the collective every rank has called (mu held) into the
// ranks' receive buffers, through a temporary buffer (send and receive
// buffers may overlap, as in place).
static ncclResult_t run(struct clique *c) {
	int n = c->nranks;
	struct call *k = &c->calls[0];
	for (int r = 1; r < n; r++) {
		if (!same_call(k, &c->calls[r])) {
			struct call *o = &c->calls[r];
			fprintf(stderr,
			        "loom fake NCCL: rank 0 called %s(count %zu, type %d, op %d, root %d) and rank %d %s(count %zu, type %d, op %d, root %d)\n",
			        kind_names[k->kind], k->count, k->dt, k->op, k->root, r, kind_names[o->kind], o->count, o->dt, o->op, o->root);
			return ncclInvalidUsage;
		}
	}
	size_t es = type_size(k->dt), cnt = k->count, bytes = cnt * es;
	const void *in[n > 0 ? n : 1];
	for (int r = 0; r < n; r++)
		in[r] = c->calls[r].send;
	size_t total = bytes;
	if (k->kind == ALL_GATHER || k->kind == REDUCE_SCATTER)
		total = bytes * (size_t)n;
	char *tmp = malloc(total ? total : 1);
	if (!tmp)
		return ncclSystemError;
	switch (k->kind) {
	case ALL_REDUCE:
	case REDUCE:
		reduce(tmp, in, n, 0, cnt, k->dt, k->op);
		for (int r = 0; r < n; r++)
			if (k->kind == ALL_REDUCE || r == k->root)
				memcpy(c->calls[r].recv, tmp, bytes);
		break;
	case REDUCE_SCATTER:
		reduce(tmp, in, n, 0, cnt * (size_t)n, k->dt, k->op);
		for (int r = 0; r < n; r++)
			memcpy(c->calls[r].recv, tmp + (size_t)r * bytes, bytes);
		break;
	case ALL_GATHER:
		for (int r = 0; r < n; r++)
			memcpy(tmp + (size_t)r * bytes, in[r], bytes);
		for (int r = 0; r < n; r++)
			memcpy(c->calls[r].recv, tmp, total);
		break;
	case BROADCAST:
		memcpy(tmp, in[k->root], bytes);
		for (int r = 0; r < n; r++)
			memcpy(c->calls[r].recv, tmp, bytes);
		break;
	}
	free(tmp);
	return ncclSuccess;
}

// collective enters this rank's call and returns when the collective has
// run (or failed) for every rank.
static ncclResult_t collective(ncclComm_t comm, struct call call) {
	if (!comm)
		return ncclInvalidArgument;
	const char *what = kind_names[call.kind];
	if (call.dt < 0 || call.dt >= ncclNumTypes || call.op < 0 || call.op >= ncclNumOps) {
		fprintf(stderr, "loom fake NCCL: %s: unknown data type %d or reduction %d\n", what, call.dt, call.op);
		return ncclInvalidArgument;
	}
	if (call.root < 0 || call.root >= comm->c->nranks) {
		fprintf(stderr, "loom fake NCCL: %s: root %d of %d ranks\n", what, call.root, comm->c->nranks);
		return ncclInvalidArgument;
	}
	if (call.count > 0 && (!call.send || !call.recv))
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	struct clique *c = comm->c;
	if (comm->aborted || c->aborted) {
		pthread_mutex_unlock(&mu);
		return comm->aborted ? ncclSystemError : ncclRemoteError;
	}
	c->calls[comm->rank] = call;
	unsigned long gen = c->gen;
	ncclResult_t r;
	if (++c->arrived == c->nranks) {
		c->status = run(c);
		c->arrived = 0;
		c->gen++;
		pthread_cond_broadcast(&cv);
		r = c->status;
	} else {
		r = wait_gen(comm, gen, what);
		if (r == ncclSuccess)
			r = c->status;
		else
			c->arrived--; // left the collective
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
	(void)stream;
	return collective(comm, (struct call){ALL_REDUCE, send, recv, count, dt, op, 0});
}

API ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclComm_t comm, cudaStream_t stream) {
	(void)stream;
	return collective(comm, (struct call){ALL_GATHER, send, recv, count, dt, 0, 0});
}

API ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op, ncclComm_t comm,
                                   cudaStream_t stream) {
	(void)stream;
	return collective(comm, (struct call){REDUCE_SCATTER, send, recv, count, dt, op, 0});
}

API ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
                               cudaStream_t stream) {
	(void)stream;
	return collective(comm, (struct call){BROADCAST, send, recv, count, dt, 0, root});
}

API ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op, int root, ncclComm_t comm,
                            cudaStream_t stream) {
	(void)stream;
	return collective(comm, (struct call){REDUCE, send, recv, count, dt, op, root});
}
