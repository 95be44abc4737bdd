package cudagen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A test-only stand-in for the CUDA compiler and runtime: generated
// source is compiled by the host C++ compiler after syntaxHeader, which
// defines the CUDA keywords, the built-in variables and the bit casts.
// hostRuntime runs a launch's blocks one after the other on blockDim
// host threads (so __syncthreads is a real barrier and shared memory is
// shared); kernels without __syncthreads run thread by thread. The
// program reads a script of launches (see emu_test.go), so that one
// compilation serves every case.

// syntaxHeader is enough to compile generated code on the host.
const syntaxHeader = `#include <math.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
struct loom_dim3 { unsigned int x, y, z; };
extern loom_dim3 threadIdx, blockIdx;
extern loom_dim3 blockDim, gridDim;
void __syncthreads();
static inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
static inline float __uint_as_float(unsigned int v) { float f; memcpy(&f, &v, 4); return f; }
static inline int __float_as_int(float f) { int v; memcpy(&v, &f, 4); return v; }
static inline unsigned int __float_as_uint(float f) { unsigned int v; memcpy(&v, &f, 4); return v; }
static inline double __longlong_as_double(long long v) { double f; memcpy(&f, &v, 8); return f; }
static inline long long __double_as_longlong(double f) { long long v; memcpy(&v, &f, 8); return v; }
`

// hostRuntime implements launches on host threads and the script
// interpreter; it follows the kernels and their table (loom_table).
const hostRuntime = `
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((aligned(16))) unsigned char loom_smem[1 << 16];
loom_dim3 threadIdx, blockIdx, blockDim, gridDim;

// The threads of a block are fibers on one host thread: __syncthreads
// switches back to the scheduler, which resumes every thread of the block
// in turn once all of them have reached the barrier.
static char* loom_stack[1024];
static int loom_state[1024]; // 0 runnable, 1 at a barrier, 2 finished
static int loom_cur;
static void (*loom_fn)(void**);
static void** loom_args;
enum { loom_stack_bytes = 256 << 10 };

#if defined(__x86_64__)
// On x86-64 a switch saves the six callee-saved registers on the old
// stack and pops them off the new one (loom_fiber_switch). glibc's
// swapcontext also saves the signal mask, a system call each time: it was
// more than half of TestConformanceOnHost's run.
static void* loom_sched_sp;
static void* loom_fib_sp[1024];
extern "C" void loom_fiber_switch(void** save, void* to);
extern "C" void loom_fiber_start(void);
extern "C" void loom_fiber_run(void);
__asm__(
    ".pushsection .text\n"
    ".p2align 4\n"
    "loom_fiber_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    // A new fiber 'returns' here on a 16-byte aligned stack.
    "loom_fiber_start:\n"
    "  call loom_fiber_run\n"
    "  ud2\n"
    ".popsection\n");

extern "C" void loom_fiber_run(void) {
    loom_fn(loom_args);
    loom_state[loom_cur] = 2;
    loom_fiber_switch(&loom_fib_sp[loom_cur], loom_sched_sp); // never resumed
}

static void loom_fiber_init(int i) {
    if (!loom_stack[i]) loom_stack[i] = (char*)malloc(loom_stack_bytes);
    void** sp = (void**)(((unsigned long long)(loom_stack[i] + loom_stack_bytes)) & ~15ull);
    *--sp = (void*)loom_fiber_start;  // where the first switch returns to
    for (int r = 0; r < 6; r++) *--sp = 0; // rbp, rbx, r12-r15
    loom_fib_sp[i] = sp;
}

static inline void loom_to_fiber(int i) { loom_fiber_switch(&loom_sched_sp, loom_fib_sp[i]); }

void __syncthreads() {
    loom_state[loom_cur] = 1;
    loom_fiber_switch(&loom_fib_sp[loom_cur], loom_sched_sp);
}
#else
#include <ucontext.h>
static ucontext_t loom_sched;
static ucontext_t loom_fib[1024];

static void loom_fiber() {
    loom_fn(loom_args);
    loom_state[loom_cur] = 2;
}

static void loom_fiber_init(int i) {
    if (!loom_stack[i]) {
        loom_stack[i] = (char*)malloc(loom_stack_bytes);
        getcontext(&loom_fib[i]);
    }
    loom_fib[i].uc_stack.ss_sp = loom_stack[i];
    loom_fib[i].uc_stack.ss_size = loom_stack_bytes;
    loom_fib[i].uc_link = &loom_sched;
    makecontext(&loom_fib[i], loom_fiber, 0);
}

static inline void loom_to_fiber(int i) { swapcontext(&loom_sched, &loom_fib[i]); }

void __syncthreads() {
    loom_state[loom_cur] = 1;
    swapcontext(&loom_fib[loom_cur], &loom_sched);
}
#endif

static void loom_set_thread(int i) {
    threadIdx.x = i % blockDim.x;
    threadIdx.y = (i / blockDim.x) % blockDim.y;
    threadIdx.z = i / (blockDim.x * blockDim.y);
}

static void loom_launch(void (*fn)(void**), void** args, int sync, unsigned int grid, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared) {
    if (shared > sizeof(loom_smem)) { fprintf(stderr, "shared memory %u too large\n", shared); exit(2); }
    gridDim.x = grid; gridDim.y = 1; gridDim.z = 1;
    blockDim.x = bx; blockDim.y = by; blockDim.z = bz;
    int n = (int)(bx * by * bz);
    if (n > 1024 || n < 1) { fprintf(stderr, "%d threads per block\n", n); exit(2); }
    memset(loom_smem, 0xA5, sizeof(loom_smem)); // garbage, as on a device
    loom_fn = fn; loom_args = args;
    for (unsigned int b = 0; b < grid; b++) {
        blockIdx.x = b; blockIdx.y = 0; blockIdx.z = 0;
        if (!sync) {
            for (int i = 0; i < n; i++) {
                loom_set_thread(i);
                fn(args);
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            loom_fiber_init(i);
            loom_state[i] = 0;
        }
        for (;;) {
            for (int i = 0; i < n; i++) {
                loom_cur = i;
                loom_set_thread(i);
                loom_state[i] = 0;
                loom_to_fiber(i);
            }
            int done = 0;
            for (int i = 0; i < n; i++) done += loom_state[i] == 2;
            if (done == n) break;
            if (done != 0) { fprintf(stderr, "__syncthreads not reached by every thread\n"); exit(2); }
        }
    }
}

static void loom_fail(const char* what, const char* s) { fprintf(stderr, "script: %s %s\n", what, s); exit(2); }

static void* loom_alloc(long long bytes, int fill) {
    void* p = malloc(bytes > 0 ? bytes : 1);
    memset(p, fill, bytes > 0 ? bytes : 1);
    return p;
}

static void loom_read(void* p, const char* path, long long bytes) {
    FILE* f = fopen(path, "rb");
    if (!f || (bytes > 0 && fread(p, 1, bytes, f) != (size_t)bytes)) loom_fail("read", path);
    fclose(f);
}

static void loom_write(const char* path, void* p, long long bytes) {
    FILE* f = fopen(path, "wb");
    if (!f || (bytes > 0 && fwrite(p, 1, bytes, f) != (size_t)bytes)) loom_fail("write", path);
    fclose(f);
}

// The script: one command per line.
//   case              frees the previous case's buffers
//   buf B BYTES [FILE] allocates buffer B (garbage, or FILE's bytes)
//   launch F GRID BX BY BZ SHARED N B+OFF...  runs kernel F
//   copy B+OFF B+OFF BYTES
//   write B FILE BYTES
static unsigned char* loom_bufs[4096];
static unsigned char* loom_ptr(const char* tok) {
    int b; long long off;
    if (sscanf(tok, "%d+%lld", &b, &off) != 2 || b < 0 || b >= 4096 || !loom_bufs[b]) loom_fail("pointer", tok);
    return loom_bufs[b] + off;
}

int main(int argc, char** argv) {
    FILE* f = fopen(argv[1], "r");
    if (!f) loom_fail("open", argv[1]);
    static char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        char* save;
        char* cmd = strtok_r(line, " \n", &save);
        if (!cmd) continue;
        if (!strcmp(cmd, "case")) {
            static struct timespec t0; struct timespec t1; static char prev[256];
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double dt = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
            if (getenv("CUDAGEN_HOST_TIMES") && prev[0] && dt > 0.05) fprintf(stderr, "%.3f s %s\n", dt, prev);
            t0 = t1;
            char* nm = strtok_r(0, "\n", &save);
            snprintf(prev, sizeof prev, "%s", nm ? nm : "");
            for (int i = 0; i < 4096; i++) { free(loom_bufs[i]); loom_bufs[i] = 0; }
        } else if (!strcmp(cmd, "buf")) {
            int b = atoi(strtok_r(0, " \n", &save));
            long long bytes = atoll(strtok_r(0, " \n", &save));
            char* file = strtok_r(0, " \n", &save);
            loom_bufs[b] = (unsigned char*)loom_alloc(bytes, 0x7f);
            if (file) loom_read(loom_bufs[b], file, bytes);
        } else if (!strcmp(cmd, "launch")) {
            char* name = strtok_r(0, " \n", &save);
            unsigned int v[6];
            for (int i = 0; i < 6; i++) v[i] = (unsigned int)atoll(strtok_r(0, " \n", &save));
            void* args[64];
            for (unsigned int i = 0; i < v[5]; i++) args[i] = loom_ptr(strtok_r(0, " \n", &save));
            int k = 0;
            while (loom_table[k].name && strcmp(loom_table[k].name, name)) k++;
            if (!loom_table[k].name) loom_fail("no kernel", name);
            loom_launch(loom_table[k].fn, args, loom_table[k].sync, v[0], v[1], v[2], v[3], v[4]);
        } else if (!strcmp(cmd, "copy")) {
            unsigned char* d = loom_ptr(strtok_r(0, " \n", &save));
            unsigned char* s = loom_ptr(strtok_r(0, " \n", &save));
            memcpy(d, s, atoll(strtok_r(0, " \n", &save)));
        } else if (!strcmp(cmd, "write")) {
            unsigned char* p = loom_ptr(strtok_r(0, " \n", &save));
            char* file = strtok_r(0, " \n", &save);
            loom_write(file, p, atoll(strtok_r(0, " \n", &save)));
        } else {
            loom_fail("command", cmd);
        }
    }
    return 0;
}
`

// hostSource returns the host program of the given functions: the
// prelude, the kernels, a wrapper per kernel (arity from arity) in
// loom_table, and the runtime.
func hostSource(funcs []Func, arity map[string]int) string {
	var src strings.Builder
	src.WriteString(syntaxHeader)
	src.WriteString(Prelude())
	for _, f := range funcs {
		src.WriteString("\n" + f.Source)
	}
	src.WriteString("\nstruct loom_ptr_t {\n    void* p;\n    template <class T> operator T*() const { return (T*)p; }\n};\n")
	for _, f := range funcs {
		var args []string
		for i := 0; i < arity[f.Name]; i++ {
			args = append(args, fmt.Sprintf("loom_ptr_t{a[%d]}", i))
		}
		fmt.Fprintf(&src, "static void w_%s(void** a) { %s(%s); }\n", f.Name, f.Name, strings.Join(args, ", "))
	}
	src.WriteString("static struct { const char* name; void (*fn)(void**); int sync; } loom_table[] = {\n")
	for _, f := range funcs {
		sync := 0
		if strings.Contains(f.Source, "__syncthreads") {
			sync = 1
		}
		fmt.Fprintf(&src, "    {\"%s\", w_%s, %d},\n", f.Name, f.Name, sync)
	}
	src.WriteString("    {0, 0, 0},\n};\n")
	src.WriteString(hostRuntime)
	return src.String()
}

func gxx(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: skipping the host compilation of generated code")
	}
	return p
}

var hostFlags = []string{"-std=c++17", "-O1", "-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable"}

// compileHost compiles a host program and returns the binary's path.
func compileHost(t *testing.T, src string) string {
	t.Helper()
	cxx := gxx(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "kernels.cc")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kernels")
	cmd := exec.Command(cxx, append(hostFlags, "-o", bin, file)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("g++: %v\n%s", err, firstLines(log.String(), 60))
	}
	if log.Len() > 0 {
		t.Logf("g++ warnings:\n%s", firstLines(log.String(), 60))
	}
	return bin
}

// runHost runs a host program on a script.
func runHost(t *testing.T, bin, script string) {
	t.Helper()
	cmd := exec.Command(bin, script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("host run: %v\n%s", err, out.String())
	}
	if out.Len() > 0 {
		t.Logf("host run:\n%s", out.String())
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
