// loom_emu.h: the CUDA device dialect emulated in host C++ (part of loom's
// fake CUDA libraries, exec/cuda/internal/cufake).
//
// The fake NVRTC writes a program as
//
//     #include "loom_emu.h"
//     #line 1 "<program name>"
//     <the CUDA source, with the __shared__ of extern and static shared
//      declarations blanked out>
//     LOOM_EMU_EXPORT(kernel)   // one line per extern "C" __global__ definition
//
// and builds it with the host C++ compiler into a shared object. The fake
// driver dlopens it and, for cuLaunchKernel, calls the launcher that
// LOOM_EMU_EXPORT defined:
//
//     extern "C" void loom_emu_launch_NAME(unsigned gx, unsigned gy, unsigned gz,
//         unsigned bx, unsigned by, unsigned bz, unsigned shared, void** params);
//
// and afterwards loom_emu_status for the outcome. A launch runs the blocks
// one after another; inside a block each CUDA thread is a cooperative fiber
// on a 64 KiB heap (mmap) stack with a guard page, so __syncthreads and the
// warp-level *_sync operations are real barriers: every ready thread runs,
// in thread order, until it waits or returns, and then switches straight to
// the next ready thread's fiber. A thread that returns hands its fiber to
// the next thread that has not started, so a block without barriers runs
// on one fiber (two stack switches per block), and each barrier costs about
// two switches per thread. Stacks are allocated when first needed and
// reused by later blocks; after a launch at most LOOM_EMU_KEEP_STACKS idle
// ones are kept for later launches (each stack is two memory maps, the
// guard page and the stack, and a process that loads thousands of modules,
// as the conformance suite does, would otherwise reach the kernel's limit
// on maps, vm.max_map_count, 65530 by default); the rest are freed when
// the object is unloaded.
//
// The state is global (one object is one program; the driver serialises
// launches), so the object is not reentrant. No signals are used.
#ifndef LOOM_EMU_H
#define LOOM_EMU_H

#ifndef __cplusplus
#error "loom_emu.h is C++"
#endif

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__) || defined(LOOM_EMU_UCONTEXT)
#define LOOM_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

// ---------------------------------------------------------------------------
// Qualifiers.

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
// Shared variables are static: blocks run one after another, so one
// instance serves every block. `used` keeps GCC from proving that the
// barrier functions cannot touch them (they are not address-taken), which
// would let it cache or drop their loads and stores across a barrier. The
// fake NVRTC removes __shared__ from `extern __shared__` declarations (the
// arrays are linked to the dynamic shared memory buffer) and the static of
// `static __shared__` ones.
#define __shared__ static __attribute__((used))

#ifndef LOOM_EMU_STACK_SIZE
#define LOOM_EMU_STACK_SIZE (64 * 1024)
#endif
#define LOOM_EMU_MAX_THREADS 1024
#define LOOM_EMU_MAX_SHARED (48 * 1024)

// ---------------------------------------------------------------------------
// Built-in types and variables.

struct uint3 {
	unsigned int x, y, z;
};
struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define LOOM_EMU_VEC1(T, N, A)                                  \
	struct __attribute__((aligned(A))) N##1 { T x; };             \
	static inline N##1 make_##N##1(T x) { return N##1{x}; }
#define LOOM_EMU_VEC2(T, N, A)                                  \
	struct __attribute__((aligned(A))) N##2 { T x, y; };          \
	static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define LOOM_EMU_VEC3(T, N)                                     \
	struct N##3 { T x, y, z; };                                     \
	static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define LOOM_EMU_VEC4(T, N, A)                                  \
	struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };    \
	static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }

LOOM_EMU_VEC1(char, char, 1)
LOOM_EMU_VEC2(char, char, 2)
LOOM_EMU_VEC4(char, char, 4)
LOOM_EMU_VEC1(unsigned char, uchar, 1)
LOOM_EMU_VEC2(unsigned char, uchar, 2)
LOOM_EMU_VEC4(unsigned char, uchar, 4)
LOOM_EMU_VEC2(short, short, 4)
LOOM_EMU_VEC4(short, short, 8)
LOOM_EMU_VEC2(unsigned short, ushort, 4)
LOOM_EMU_VEC4(unsigned short, ushort, 8)
LOOM_EMU_VEC1(int, int, 4)
LOOM_EMU_VEC2(int, int, 8)
LOOM_EMU_VEC3(int, int)
LOOM_EMU_VEC4(int, int, 16)
LOOM_EMU_VEC1(unsigned int, uint, 4)
LOOM_EMU_VEC2(unsigned int, uint, 8)
LOOM_EMU_VEC4(unsigned int, uint, 16)
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
LOOM_EMU_VEC1(float, float, 4)
LOOM_EMU_VEC2(float, float, 8)
LOOM_EMU_VEC3(float, float)
LOOM_EMU_VEC4(float, float, 16)
LOOM_EMU_VEC1(double, double, 8)
LOOM_EMU_VEC2(double, double, 16)
LOOM_EMU_VEC3(double, double)
LOOM_EMU_VEC4(double, double, 16)
LOOM_EMU_VEC1(long long, longlong, 8)
LOOM_EMU_VEC2(long long, longlong, 16)
LOOM_EMU_VEC4(long long, longlong, 16)
LOOM_EMU_VEC1(unsigned long long, ulonglong, 8)
LOOM_EMU_VEC2(unsigned long long, ulonglong, 16)
LOOM_EMU_VEC4(unsigned long long, ulonglong, 16)

// Set by the scheduler before it switches into a thread's fiber.
static uint3 threadIdx;
static uint3 blockIdx;
static dim3 blockDim;
static dim3 gridDim;
static const int warpSize = 32;

// ---------------------------------------------------------------------------
// Scheduler.

// The dynamic shared memory of every block (blocks run one at a time). The
// fake NVRTC links each `extern __shared__` array to this symbol.
extern "C" __attribute__((visibility("hidden"), aligned(256))) unsigned char loom_emu_dyn_smem[LOOM_EMU_MAX_SHARED];
unsigned char loom_emu_dyn_smem[LOOM_EMU_MAX_SHARED];

namespace loom_emu {

enum : unsigned char { ST_NEW, ST_READY, ST_WARP, ST_BLOCK, ST_DONE };

struct Worker {
	void *sp;        // saved stack pointer while switched out
	char *mem;       // mapping: guard page + stack
	size_t memsize;
	char *top;       // highest address of the stack
	bool fresh;      // needs its initial frame before the next switch
#ifdef LOOM_EMU_USE_UCONTEXT
	ucontext_t uc;
#endif
};

struct Thread {
	uint3 idx;
	unsigned char state;
	Worker *w;
	unsigned wmask; // lanes of the warp barrier this thread waits at
};

static Thread g_thr[LOOM_EMU_MAX_THREADS];
static Worker *g_pool[LOOM_EMU_MAX_THREADS + 1];
static int g_npool;
static Worker *g_free[LOOM_EMU_MAX_THREADS + 1];
static int g_nfree;
static int g_queue[LOOM_EMU_MAX_THREADS];
static int g_qhead, g_qlen;
static int g_n;      // threads in a block
static int g_cur;    // the running thread
static Worker *g_cur_w;
static int g_ndone, g_nblock;
static void (*g_body)(void **);
static void **g_params;
static int g_status;
static char g_err[512];
// Warp exchanges: two slots per thread, used alternately.
static uint64_t g_wslot[2][LOOM_EMU_MAX_THREADS];
static unsigned char g_wpar[LOOM_EMU_MAX_THREADS];
// __syncthreads_count and friends.
static unsigned g_bgen;
static int g_bacc[2];
static int g_bres[2];

#ifdef LOOM_EMU_USE_UCONTEXT
static ucontext_t g_sched_uc;
static Worker *g_boot;
#else
static void *g_sched_sp;
extern "C" void loom_emu_ctx_switch(void **save, void *to) __attribute__((visibility("hidden")));
extern "C" void loom_emu_ctx_boot(void) __attribute__((visibility("hidden")));
// loom_emu_ctx_switch saves the callee-saved registers on the current stack,
// stores the stack pointer in *save, switches to `to` and restores the
// registers saved there. loom_emu_ctx_boot is the first return address of
// a fresh fiber: it calls r13(r12).
__asm__(
    ".pushsection .text\n"
    ".p2align 4\n"
    ".type loom_emu_ctx_switch,@function\n"
    "loom_emu_ctx_switch:\n"
    "\tpushq %rbp\n"
    "\tpushq %rbx\n"
    "\tpushq %r12\n"
    "\tpushq %r13\n"
    "\tpushq %r14\n"
    "\tpushq %r15\n"
    "\tmovq %rsp, (%rdi)\n"
    "\tmovq %rsi, %rsp\n"
    "\tpopq %r15\n"
    "\tpopq %r14\n"
    "\tpopq %r13\n"
    "\tpopq %r12\n"
    "\tpopq %rbx\n"
    "\tpopq %rbp\n"
    "\tret\n"
    ".size loom_emu_ctx_switch,.-loom_emu_ctx_switch\n"
    ".p2align 4\n"
    ".type loom_emu_ctx_boot,@function\n"
    "loom_emu_ctx_boot:\n"
    "\tmovq %r12, %rdi\n"
    "\tcallq *%r13\n"
    "\tud2\n"
    ".size loom_emu_ctx_boot,.-loom_emu_ctx_boot\n"
    ".popsection\n");
#endif

#define LOOM_EMU_CLOBBER() __asm__ __volatile__("" ::: "memory")

static void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int status, const char *fmt, ...) {
	if (g_status != 0)
		return;
	g_status = status;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_err, sizeof g_err, fmt, ap);
	va_end(ap);
}

static inline int pop_ready() {
	int i = g_queue[g_qhead];
	if (++g_qhead == LOOM_EMU_MAX_THREADS)
		g_qhead = 0;
	g_qlen--;
	return i;
}

static inline void push_ready(int i) {
	g_thr[i].state = ST_READY;
	int at = g_qhead + g_qlen;
	if (at >= LOOM_EMU_MAX_THREADS)
		at -= LOOM_EMU_MAX_THREADS;
	g_queue[at] = i;
	g_qlen++;
}

static void worker_main(void *arg);

#ifdef LOOM_EMU_USE_UCONTEXT
static void worker_boot_uc(void) { worker_main(g_boot); }
#endif

static Worker *new_worker() {
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	size_t size = (size_t)page + (((size_t)LOOM_EMU_STACK_SIZE + 4096 + (size_t)page - 1) & ~((size_t)page - 1));
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	mprotect(mem, (size_t)page, PROT_NONE); // guard page: an overflow faults
	Worker *w = (Worker *)calloc(1, sizeof(Worker));
	if (!w) {
		munmap(mem, size);
		return NULL;
	}
	w->mem = (char *)mem;
	w->memsize = size;
	// Stagger the stack tops so that the fibers' hot frames do not all map to
	// the same cache sets.
	w->top = (char *)mem + size - (size_t)(g_npool % 64) * 64;
	w->fresh = true;
	g_pool[g_npool++] = w;
	return w;
}

static void fiber_prepare(Worker *w) {
#ifdef LOOM_EMU_USE_UCONTEXT
	getcontext(&w->uc);
	w->uc.uc_stack.ss_sp = w->top - LOOM_EMU_STACK_SIZE;
	w->uc.uc_stack.ss_size = LOOM_EMU_STACK_SIZE;
	w->uc.uc_link = NULL;
	makecontext(&w->uc, worker_boot_uc, 0);
#else
	uintptr_t top = (uintptr_t)w->top & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)top;
	*--sp = (uint64_t)(uintptr_t)&loom_emu_ctx_boot; // return address
	*--sp = 0;                                         // rbp
	*--sp = 0;                                         // rbx
	*--sp = (uint64_t)(uintptr_t)w;                    // r12: argument
	*--sp = (uint64_t)(uintptr_t)&worker_main;         // r13: entry
	*--sp = 0;                                         // r14
	*--sp = 0;                                         // r15
	w->sp = sp;
#endif
	w->fresh = false;
}

// Switches from the fiber `from` (NULL: the scheduler) to the fiber `to`
// (NULL: the scheduler).
static inline void transfer(Worker *from, Worker *to) {
	LOOM_EMU_CLOBBER();
	if (to && to->fresh) {
		fiber_prepare(to);
#ifdef LOOM_EMU_USE_UCONTEXT
		g_boot = to;
#endif
	}
#ifdef LOOM_EMU_USE_UCONTEXT
	swapcontext(from ? &from->uc : &g_sched_uc, to ? &to->uc : &g_sched_uc);
#else
	loom_emu_ctx_switch(from ? &from->sp : &g_sched_sp, to ? to->sp : g_sched_sp);
#endif
	LOOM_EMU_CLOBBER();
}

static inline unsigned live_lanes(int i) {
	int base = i & ~31;
	int n = g_n - base;
	return n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
}

// A thread has reached a warp barrier: when every lane of its mask waits,
// they all become ready (in lane order).
static void warp_arrived(int i) {
	int base = i & ~31;
	unsigned m = g_thr[i].wmask;
	for (unsigned r = m; r; r &= r - 1) {
		if (g_thr[base + __builtin_ctz(r)].state != ST_WARP)
			return;
	}
	for (unsigned r = m; r; r &= r - 1)
		push_ready(base + __builtin_ctz(r));
}

static const char *state_name(unsigned char s) {
	switch (s) {
	case ST_NEW:
		return "not started";
	case ST_READY:
		return "ready";
	case ST_WARP:
		return "at a warp barrier";
	case ST_BLOCK:
		return "at __syncthreads";
	default:
		return "returned";
	}
}

static int first_in(unsigned char s) {
	for (int i = 0; i < g_n; i++)
		if (g_thr[i].state == s)
			return i;
	return -1;
}

static void divergence(const char *what) {
	int nd = 0, nb = 0, nw = 0;
	for (int i = 0; i < g_n; i++) {
		nd += g_thr[i].state == ST_DONE;
		nb += g_thr[i].state == ST_BLOCK;
		nw += g_thr[i].state == ST_WARP;
	}
	int d = first_in(ST_DONE), b = first_in(ST_BLOCK), wp = first_in(ST_WARP);
	char eg[160] = "";
	if (d >= 0 && (b >= 0 || wp >= 0)) {
		int o = b >= 0 ? b : wp;
		snprintf(eg, sizeof eg, "; e.g. thread (%u,%u,%u) returned while thread (%u,%u,%u) is %s",
		         g_thr[d].idx.x, g_thr[d].idx.y, g_thr[d].idx.z, g_thr[o].idx.x, g_thr[o].idx.y,
		         g_thr[o].idx.z, state_name(g_thr[o].state));
	} else if (b >= 0 && wp >= 0) {
		snprintf(eg, sizeof eg, "; e.g. thread (%u,%u,%u) is at __syncthreads while thread (%u,%u,%u) is at a warp barrier",
		         g_thr[b].idx.x, g_thr[b].idx.y, g_thr[b].idx.z, g_thr[wp].idx.x, g_thr[wp].idx.y,
		         g_thr[wp].idx.z);
	}
	fail(2,
	     "%s in block (%u,%u,%u) of %d threads: %d returned, %d at __syncthreads, %d at a warp "
	     "barrier%s (CUDA requires every thread of the block to reach each __syncthreads, and every "
	     "lane of the mask to reach each warp-level *_sync)",
	     what, blockIdx.x, blockIdx.y, blockIdx.z, g_n, nd, nb, nw, eg);
}

// Bookkeeping once the current thread has stopped: returned (ST_DONE), or
// waiting at __syncthreads (ST_BLOCK) or a warp barrier (ST_WARP). False
// when the launch fails.
static bool stopped() {
	Thread *t = &g_thr[g_cur];
	switch (t->state) {
	case ST_DONE:
		// Its fiber is free (and still running: it may take the next thread).
		g_free[g_nfree++] = t->w;
		t->w = NULL;
		g_ndone++;
		if (g_nblock > 0 && g_nblock == g_n - g_ndone) {
			divergence("divergent __syncthreads");
			return false;
		}
		return true;
	case ST_BLOCK:
		g_nblock++;
		if (g_nblock == g_n - g_ndone) {
			if (g_ndone > 0) {
				divergence("divergent __syncthreads");
				return false;
			}
			g_bres[g_bgen & 1] = g_bacc[g_bgen & 1];
			g_bacc[(g_bgen + 1) & 1] = 0;
			g_bgen++;
			g_nblock = 0;
			for (int j = 0; j < g_n; j++)
				push_ready(j);
		}
		return true;
	case ST_WARP:
		warp_arrived(g_cur);
		return true;
	default:
		fail(2, "thread %d stopped in a bad state", g_cur);
		return false;
	}
}

// Makes the next ready thread current and returns its fiber (a free one if
// it has not started), or NULL when no thread is ready.
static Worker *next() {
	if (g_qlen == 0)
		return NULL;
	int i = pop_ready();
	Thread *t = &g_thr[i];
	Worker *w = t->w;
	if (!w) {
		w = g_nfree > 0 ? g_free[--g_nfree] : new_worker();
		if (!w) {
			fail(2, "cannot map a fiber stack");
			return NULL;
		}
		t->w = w;
	}
	t->state = ST_READY;
	threadIdx = t->idx;
	g_cur = i;
	g_cur_w = w;
	return w;
}

// On the fiber self, whose thread has stopped: switch straight to the next
// ready thread's fiber, or back to the scheduler when there is none (the
// block is over, deadlocked or failed). Returns when self runs again. A
// thread that returns frees its fiber, which then usually takes the next
// thread itself without switching: a block without barriers runs on one
// fiber.
static void stop(Worker *self) {
	Worker *w = stopped() ? next() : NULL;
	if (w != self)
		transfer(self, w);
}

// The body of every fiber: run the current thread's kernel, then the next.
static void worker_main(void *arg) {
	Worker *self = (Worker *)arg;
	for (;;) {
		g_body(g_params);
		g_thr[g_cur].state = ST_DONE;
		stop(self);
	}
}

static void abandon_workers() {
	// Fibers stopped midway are dropped: their workers start afresh.
	for (int i = 0; i < g_n; i++) {
		if (g_thr[i].w) {
			g_thr[i].w->fresh = true;
			g_free[g_nfree++] = g_thr[i].w;
			g_thr[i].w = NULL;
		}
	}
}

static bool run_block() {
	const int n = g_n;
	for (int i = 0; i < n; i++) {
		g_thr[i].state = ST_NEW;
		g_thr[i].w = NULL;
		g_wpar[i] = 0;
		g_queue[i] = i;
	}
	g_qhead = 0;
	g_qlen = n;
	g_ndone = 0;
	g_nblock = 0;
	g_bgen = 0;
	g_bacc[0] = g_bacc[1] = 0;
	Worker *w = next();
	if (w)
		transfer(NULL, w); // back when no thread is ready
	if (g_status == 0 && g_ndone != n)
		divergence("deadlock");
	if (g_status != 0) {
		abandon_workers();
		return false;
	}
	return true;
}

static void run_grid(void (*body)(void **), void **params, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned shared) {
	unsigned long long n = (unsigned long long)bx * by * bz;
	if (gx == 0 || gy == 0 || gz == 0 || n == 0 || n > LOOM_EMU_MAX_THREADS) {
		fail(1, "bad launch configuration: grid (%u,%u,%u), block (%u,%u,%u)", gx, gy, gz, bx, by, bz);
		return;
	}
	if (shared > LOOM_EMU_MAX_SHARED) {
		fail(1, "%u bytes of dynamic shared memory exceed %d", shared, LOOM_EMU_MAX_SHARED);
		return;
	}
	g_body = body;
	g_params = params;
	g_n = (int)n;
	gridDim = dim3(gx, gy, gz);
	blockDim = dim3(bx, by, bz);
	for (int i = 0; i < g_n; i++) {
		unsigned u = (unsigned)i;
		g_thr[i].idx = uint3{u % bx, (u / bx) % by, u / (bx * by)};
	}
	for (unsigned z = 0; z < gz; z++) {
		for (unsigned y = 0; y < gy; y++) {
			for (unsigned x = 0; x < gx; x++) {
				blockIdx = uint3{x, y, z};
				// Shared memory starts undefined in CUDA: poison it (NaN, -1).
				memset(loom_emu_dyn_smem, 0xff, shared);
				if (!run_block())
					return;
			}
		}
	}
}

// Kernel argument unpacking: params[i] points at argument i.
template <size_t... I> struct seq {};
template <size_t N, size_t... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <size_t... I> struct make_seq<0, I...> {
	typedef seq<I...> type;
};

template <typename F, F K> struct Thunk;
template <typename... A, void (*K)(A...)> struct Thunk<void (*)(A...), K> {
	template <size_t... I> static void call(void **p, seq<I...>) {
		(void)p;
		K(*static_cast<A *>(p[I])...);
	}
	static void run(void **p) { call(p, typename make_seq<sizeof...(A)>::type()); }
	static size_t nargs() { return sizeof...(A); }
};

#ifndef LOOM_EMU_KEEP_STACKS
#define LOOM_EMU_KEEP_STACKS 16
#endif

// Frees idle stacks beyond LOOM_EMU_KEEP_STACKS. Called between launches,
// on the caller's stack: no fiber runs, and a free fiber that stopped
// midway is never resumed once it leaves the pool.
static void trim_pool() {
	while (g_nfree > LOOM_EMU_KEEP_STACKS) {
		Worker *w = g_free[--g_nfree];
		for (int i = 0; i < g_npool; i++) {
			if (g_pool[i] == w) {
				g_pool[i] = g_pool[--g_npool];
				break;
			}
		}
		munmap(w->mem, w->memsize);
		free(w);
	}
}

template <typename F, F K>
static void launch(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void **params) {
	typedef Thunk<F, K> T;
	g_status = 0;
	g_err[0] = 0;
	if (T::nargs() > 0 && params == NULL) {
		fail(1, "kernel %s takes %zu parameters but kernelParams is NULL", name, T::nargs());
		return;
	}
	run_grid(&T::run, params, gx, gy, gz, bx, by, bz, shared);
	trim_pool();
}

__attribute__((destructor)) static void unload() {
	for (int i = 0; i < g_npool; i++) {
		munmap(g_pool[i]->mem, g_pool[i]->memsize);
		free(g_pool[i]);
	}
	g_npool = 0;
	g_nfree = 0;
}

// Waits at the warp barrier of the lanes in mask (the calling lane is always
// included; lanes past the end of a partial warp are left out).
static inline void warp_wait(unsigned mask) {
	int i = g_cur;
	g_thr[i].wmask = (mask | (1u << (i & 31))) & live_lanes(i);
	g_thr[i].state = ST_WARP;
	stop(g_cur_w);
}

template <typename T> static inline uint64_t to_bits(T v) {
	static_assert(sizeof(T) <= 8, "warp exchange of a value wider than 8 bytes");
	uint64_t b = 0;
	memcpy(&b, &v, sizeof(T));
	return b;
}
template <typename T> static inline T from_bits(uint64_t b) {
	T v;
	memcpy(&v, &b, sizeof(T));
	return v;
}

// Posts v for the lanes of mask, waits for them, returns the parity of the
// slots to read.
static inline int exchange(unsigned mask, uint64_t v) {
	int i = g_cur;
	int p = g_wpar[i];
	g_wpar[i] = (unsigned char)(p ^ 1);
	g_wslot[p][i] = v;
	warp_wait(mask);
	return p;
}

enum { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR };

template <typename T> static inline T shfl(unsigned mask, T v, int mode, int arg, int width) {
	int i = g_cur;
	int p = exchange(mask, to_bits(v));
	int lane = i & 31;
	if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
		width = 32;
	int seg = lane & ~(width - 1);
	int src;
	switch (mode) {
	case SHFL_IDX:
		src = seg + (arg & (width - 1));
		break;
	case SHFL_UP:
		src = lane - arg;
		if (src < seg)
			src = lane;
		break;
	case SHFL_DOWN:
		src = lane + arg;
		if (src >= seg + width)
			src = lane;
		break;
	default:
		src = lane ^ arg;
		if (src >= seg + width || src < 0)
			src = lane;
		break;
	}
	int j = (i & ~31) + src;
	if (j >= g_n)
		j = i;
	return from_bits<T>(g_wslot[p][j]);
}

// Ballot over the lanes of the caller's barrier group.
static inline unsigned ballot(unsigned mask, int pred) {
	int i = g_cur;
	int p = exchange(mask, pred != 0);
	int base = i & ~31;
	unsigned m = g_thr[i].wmask, r = 0;
	for (unsigned b = m; b; b &= b - 1) {
		int l = __builtin_ctz(b);
		if (g_wslot[p][base + l])
			r |= 1u << l;
	}
	return r;
}

enum { RED_ADD, RED_MIN, RED_MAX, RED_AND, RED_OR, RED_XOR };

template <typename T> static inline T warp_reduce(unsigned mask, T v, int op) {
	int i = g_cur;
	int p = exchange(mask, to_bits(v));
	int base = i & ~31;
	unsigned m = g_thr[i].wmask;
	bool first = true;
	T r = v;
	for (unsigned b = m; b; b &= b - 1) {
		T x = from_bits<T>(g_wslot[p][base + __builtin_ctz(b)]);
		if (first) {
			r = x;
			first = false;
			continue;
		}
		switch (op) {
		case RED_ADD:
			r = (T)(r + x);
			break;
		case RED_MIN:
			r = x < r ? x : r;
			break;
		case RED_MAX:
			r = x > r ? x : r;
			break;
		case RED_AND:
			r = r & x;
			break;
		case RED_OR:
			r = r | x;
			break;
		default:
			r = r ^ x;
			break;
		}
	}
	return r;
}

static inline int block_wait(int pred) {
	unsigned gen = g_bgen;
	g_bacc[gen & 1] += pred;
	g_thr[g_cur].state = ST_BLOCK;
	stop(g_cur_w);
	return g_bres[gen & 1];
}

} // namespace loom_emu

extern "C" __attribute__((visibility("default"))) int loom_emu_status(const char **msg) {
	if (msg)
		*msg = loom_emu::g_err;
	return loom_emu::g_status;
}

#define LOOM_EMU_EXPORT(NAME)                                                                                   \
	extern "C" __attribute__((visibility("default"))) void loom_emu_launch_##NAME(                            \
	    unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,         \
	    void **params) {                                                                                        \
		loom_emu::launch<decltype(&NAME), &NAME>(#NAME, gx, gy, gz, bx, by, bz, shared, params);              \
	}

// ---------------------------------------------------------------------------
// Synchronisation.

static inline void __syncthreads() { (void)loom_emu::block_wait(0); }
static inline int __syncthreads_count(int pred) { return loom_emu::block_wait(pred != 0); }
static inline int __syncthreads_and(int pred) {
	return loom_emu::block_wait(pred != 0) == loom_emu::g_n - loom_emu::g_ndone;
}
static inline int __syncthreads_or(int pred) { return loom_emu::block_wait(pred != 0) != 0; }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { loom_emu::warp_wait(mask); }
static inline void __threadfence() { LOOM_EMU_CLOBBER(); }
static inline void __threadfence_block() { LOOM_EMU_CLOBBER(); }
static inline void __threadfence_system() { LOOM_EMU_CLOBBER(); }

// ---------------------------------------------------------------------------
// Warp-level primitives (the mask's lanes must all reach the call).

template <typename T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
	return loom_emu::shfl(mask, v, loom_emu::SHFL_IDX, src, width);
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	return loom_emu::shfl(mask, v, loom_emu::SHFL_UP, (int)delta, width);
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	return loom_emu::shfl(mask, v, loom_emu::SHFL_DOWN, (int)delta, width);
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int lanes, int width = 32) {
	return loom_emu::shfl(mask, v, loom_emu::SHFL_XOR, lanes, width);
}
static inline unsigned __ballot_sync(unsigned mask, int pred) { return loom_emu::ballot(mask, pred); }
static inline int __all_sync(unsigned mask, int pred) {
	unsigned b = loom_emu::ballot(mask, pred);
	return b == loom_emu::g_thr[loom_emu::g_cur].wmask;
}
static inline int __any_sync(unsigned mask, int pred) { return loom_emu::ballot(mask, pred) != 0; }
static inline unsigned __activemask() {
	int base = loom_emu::g_cur & ~31;
	unsigned live = loom_emu::live_lanes(loom_emu::g_cur), r = 0;
	for (unsigned b = live; b; b &= b - 1) {
		int l = __builtin_ctz(b);
		if (loom_emu::g_thr[base + l].state != loom_emu::ST_DONE)
			r |= 1u << l;
	}
	return r;
}
static inline unsigned __reduce_add_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_ADD); }
static inline int __reduce_add_sync(unsigned mask, int v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_ADD); }
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_MIN); }
static inline int __reduce_min_sync(unsigned mask, int v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_MIN); }
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_MAX); }
static inline int __reduce_max_sync(unsigned mask, int v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_MAX); }
static inline unsigned __reduce_and_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_AND); }
static inline unsigned __reduce_or_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_OR); }
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned v) { return loom_emu::warp_reduce(mask, v, loom_emu::RED_XOR); }

// ---------------------------------------------------------------------------
// Atomics: fibers never run at the same time, so plain read-modify-write is
// atomic.

#define LOOM_EMU_ATOMIC(NAME, T, EXPR)              \
	static inline T NAME(T *a, T v) {                 \
		T o = *a;                                     \
		*a = (EXPR);                                  \
		return o;                                     \
	}
LOOM_EMU_ATOMIC(atomicAdd, int, o + v)
LOOM_EMU_ATOMIC(atomicAdd, unsigned int, o + v)
LOOM_EMU_ATOMIC(atomicAdd, unsigned long long, o + v)
LOOM_EMU_ATOMIC(atomicAdd, float, o + v)
LOOM_EMU_ATOMIC(atomicAdd, double, o + v)
LOOM_EMU_ATOMIC(atomicSub, int, o - v)
LOOM_EMU_ATOMIC(atomicSub, unsigned int, o - v)
LOOM_EMU_ATOMIC(atomicExch, int, v)
LOOM_EMU_ATOMIC(atomicExch, unsigned int, v)
LOOM_EMU_ATOMIC(atomicExch, unsigned long long, v)
LOOM_EMU_ATOMIC(atomicExch, float, v)
LOOM_EMU_ATOMIC(atomicMin, int, v < o ? v : o)
LOOM_EMU_ATOMIC(atomicMin, unsigned int, v < o ? v : o)
LOOM_EMU_ATOMIC(atomicMin, long long, v < o ? v : o)
LOOM_EMU_ATOMIC(atomicMin, unsigned long long, v < o ? v : o)
LOOM_EMU_ATOMIC(atomicMax, int, v > o ? v : o)
LOOM_EMU_ATOMIC(atomicMax, unsigned int, v > o ? v : o)
LOOM_EMU_ATOMIC(atomicMax, long long, v > o ? v : o)
LOOM_EMU_ATOMIC(atomicMax, unsigned long long, v > o ? v : o)
LOOM_EMU_ATOMIC(atomicAnd, int, o & v)
LOOM_EMU_ATOMIC(atomicAnd, unsigned int, o & v)
LOOM_EMU_ATOMIC(atomicAnd, unsigned long long, o & v)
LOOM_EMU_ATOMIC(atomicOr, int, o | v)
LOOM_EMU_ATOMIC(atomicOr, unsigned int, o | v)
LOOM_EMU_ATOMIC(atomicOr, unsigned long long, o | v)
LOOM_EMU_ATOMIC(atomicXor, int, o ^ v)
LOOM_EMU_ATOMIC(atomicXor, unsigned int, o ^ v)
LOOM_EMU_ATOMIC(atomicXor, unsigned long long, o ^ v)
LOOM_EMU_ATOMIC(atomicInc, unsigned int, o >= v ? 0u : o + 1u)
LOOM_EMU_ATOMIC(atomicDec, unsigned int, (o == 0u || o > v) ? v : o - 1u)
#undef LOOM_EMU_ATOMIC
#define LOOM_EMU_CAS(T)                                  \
	static inline T atomicCAS(T *a, T cmp, T v) {        \
		T o = *a;                                        \
		if (o == cmp)                                    \
			*a = v;                                      \
		return o;                                        \
	}
LOOM_EMU_CAS(int)
LOOM_EMU_CAS(unsigned int)
LOOM_EMU_CAS(unsigned long long)
LOOM_EMU_CAS(unsigned short)
#undef LOOM_EMU_CAS

// ---------------------------------------------------------------------------
// Bit casts, conversions and integer intrinsics.

static inline float __int_as_float(int x) { return loom_emu::from_bits<float>((uint32_t)x); }
static inline int __float_as_int(float x) { return (int)(uint32_t)loom_emu::to_bits(x); }
static inline float __uint_as_float(unsigned int x) { return loom_emu::from_bits<float>(x); }
static inline unsigned int __float_as_uint(float x) { return (uint32_t)loom_emu::to_bits(x); }
static inline double __longlong_as_double(long long x) { return loom_emu::from_bits<double>((uint64_t)x); }
static inline long long __double_as_longlong(double x) { return (long long)loom_emu::to_bits(x); }

static inline int __float2int_rn(float x) { return (int)rintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned int __float2uint_rn(float x) { return (unsigned int)rintf(x); }
static inline unsigned int __float2uint_rz(float x) { return (unsigned int)x; }
static inline long long __float2ll_rn(float x) { return (long long)rintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned int x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline int __double2int_rn(double x) { return (int)rint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline long long __double2ll_rn(double x) { return (long long)rint(x); }
static inline float __double2float_rn(double x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }

static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
	unsigned r = 0;
	for (int i = 0; i < 32; i++, x >>= 1)
		r = (r << 1) | (x & 1u);
	return r;
}
static inline unsigned long long __brevll(unsigned long long x) {
	unsigned long long r = 0;
	for (int i = 0; i < 64; i++, x >>= 1)
		r = (r << 1) | (x & 1ull);
	return r;
}
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __mul24(int a, int b) { return (int)((unsigned)((a << 8) >> 8) * (unsigned)((b << 8) >> 8)); }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
	unsigned long long v = ((unsigned long long)hi << 32) | lo;
	return (unsigned)((v << (s & 31)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
	unsigned long long v = ((unsigned long long)hi << 32) | lo;
	return (unsigned)(v >> (s & 31));
}

template <typename T> static inline T __ldg(const T *p) { return *p; }
static inline long long clock64() {
	unsigned lo, hi;
#if defined(__x86_64__)
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (long long)(((unsigned long long)hi << 32) | lo);
#else
	(void)lo;
	(void)hi;
	return (long long)clock();
#endif
}

// ---------------------------------------------------------------------------
// Math. <math.h> (libstdc++) already gives the C functions and the float and
// double overloads of exp, log, sqrt, ..., fma, isnan, isinf, signbit, as
// CUDA device code has them; here are the CUDA-only ones.

static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int min(int a, unsigned int b) { return min((unsigned)a, b); }
static inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned)b); }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline unsigned int max(int a, unsigned int b) { return max((unsigned)a, b); }
static inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned)b); }
static inline long max(long a, long b) { return a > b ? a : b; }
static inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }
static inline unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }
static inline unsigned int umax(unsigned int a, unsigned int b) { return max(a, b); }
static inline long long llmin(long long a, long long b) { return min(a, b); }
static inline long long llmax(long long a, long long b) { return max(a, b); }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float fdividef(float a, float b) { return a / b; }
static inline float __fdividef(float a, float b) { return a / b; }
// glibc declares these names itself; in device code they are the fast
// variants, here the accurate ones.
#define __expf expf
#define __exp10f exp10f
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define __sincosf sincosf
#define __powf powf
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }

#endif // LOOM_EMU_H
