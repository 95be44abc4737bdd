//go:build linux

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
)

// realNVRTC opens a real NVRTC for checking the generated CUDA C on a
// machine without a GPU (findNVRTC), or skips the test.
func realNVRTC(t *testing.T) *cu.NVRTC {
	t.Helper()
	if n := findNVRTC(); n != nil {
		return n
	}
	t.Skip(noNVRTC)
	return nil
}

const noNVRTC = "no real NVRTC (install Debian's libnvrtc11.2 from non-free, or set LOOM_CHECK_NVRTC)"

// findNVRTC opens a real NVRTC: $LOOM_CHECK_NVRTC, else Debian's
// libnvrtc11.2 (package libnvrtc11.2 in non-free, which .ci/run installs
// when it can), else, on a GPU, whatever the normal search finds; nil
// when there is none. NVRTC needs no GPU.
func findNVRTC() *cu.NVRTC {
	var paths []string
	if p := os.Getenv("LOOM_CHECK_NVRTC"); p != "" {
		paths = append(paths, p)
	}
	paths = append(paths, "/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2", "libnvrtc.so.11.2")
	saved, had := os.LookupEnv("LOOM_LIBNVRTC")
	defer func() {
		if had {
			os.Setenv("LOOM_LIBNVRTC", saved)
		} else {
			os.Unsetenv("LOOM_LIBNVRTC")
		}
	}()
	for _, p := range paths {
		os.Setenv("LOOM_LIBNVRTC", p)
		if n, err := cu.LoadNVRTC(); err == nil && !strings.Contains(n.Path(), "cufake") && !strings.Contains(n.Path(), "loom-cufake") {
			return n
		}
	}
	if mode == "gpu" {
		n, err := cu.LoadNVRTC()
		if err == nil {
			return n
		}
	}
	return nil
}

// checkArch is the architecture the real NVRTC checks for: sm_90 (NVRTC
// also runs ptxas and returns a cubin, which checks more than the PTX:
// resources, registers), or sm_80 for NVRTCs older than 11.8.
func checkArch(n *cu.NVRTC) string {
	major, minor, _ := n.Version()
	if major < 11 || (major == 11 && minor < 8) {
		return "sm_80"
	}
	return "sm_90"
}

// TestNVRTCCompilesGeneratedKernels compiles every distinct function the
// conformance suite generates, with a real NVRTC, for compute capability
// 9.0 (a cubin, through ptxas: no GPU needed). The emulator accepts a superset of CUDA C
// (it is the host C++ compiler), so this is the check that the generated
// code is CUDA C as NVRTC reads it.
func TestNVRTCCompilesGeneratedKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite's lowering")
	}
	n := realNVRTC(t)
	major, minor, _ := n.Version()
	t.Logf("NVRTC %d.%d at %s", major, minor, n.Path())
	if mode == "" {
		t.Skip(skipWhy)
	}
	var mu sync.Mutex
	funcs := map[string]string{}
	generated := errors.New("generated")
	lowerHook = func(fs []cudagen.Func) error {
		mu.Lock()
		for _, f := range fs {
			funcs[f.Name] = f.Source
		}
		mu.Unlock()
		return generated // stop before compiling: only the sources matter
	}
	defer func() { lowerHook = nil }()
	// The conformance cases' kernels, fused and one per op (the results
	// are checked by TestConformance).
	b := open(t)
	for _, opts := range [][]exec.Option{nil, {exec.DisablePasses("precision", "simplify", "constfold", "cse", "fuse")}} {
		for _, c := range exectest.Cases() {
			g := graph.New()
			outs, _ := c.Build(g)
			if g.Err() != nil {
				continue
			}
			if _, err := exec.Compile(b, outs, opts...); !errors.Is(err, generated) {
				t.Errorf("%s: Compile = %v", c.Name, err)
			}
		}
	}
	b.Close()
	lowerHook = nil
	names := make([]string, 0, len(funcs))
	for name := range funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	// Batches of functions per NVRTC call keep the check to seconds.
	const batch = 150
	arch := checkArch(n)
	for lo := 0; lo < len(names); lo += batch {
		hi := min(lo+batch, len(names))
		var src strings.Builder
		src.WriteString(cudagen.Prelude())
		for _, name := range names[lo:hi] {
			src.WriteString("\n")
			src.WriteString(funcs[name])
		}
		out, err := n.Compile(src.String(), "loom_check.cu", nvrtcOptions(arch))
		if err != nil {
			t.Fatalf("NVRTC rejects generated kernels %d-%d: %v", lo, hi, err)
		}
		if len(out.CUBIN) == 0 || len(out.PTX) == 0 {
			t.Fatalf("kernels %d-%d: %d bytes of cubin, %d of PTX", lo, hi, len(out.CUBIN), len(out.PTX))
		}
		for _, name := range names[lo:hi] {
			if !strings.Contains(string(out.PTX), ".entry "+name) {
				t.Errorf("PTX lacks the entry %s", name)
			}
		}
		if strings.Contains(out.Log, "warning") {
			t.Errorf("NVRTC warns about kernels %d-%d:\n%s", lo, hi, out.Log)
		}
	}
	t.Logf("%d distinct generated functions compile with NVRTC %d.%d for %s", len(names), major, minor, arch)
}

// TestKernelCache: images are cached in memory and on disk under
// LOOM_CUDA_CACHE, keyed by source, options, NVRTC version and
// architecture.
func TestKernelCache(t *testing.T) {
	if mode == "" {
		t.Skip(skipWhy)
	}
	b := open(t)
	defer b.Close()
	dir := t.TempDir()
	t.Setenv("LOOM_CUDA_CACHE", dir)
	src := cudagen.Prelude() + "\nextern \"C\" __global__ void loom_cache_probe(float* __restrict__ out) { out[threadIdx.x] = 1.0f; }\n"
	im, err := compileImage(b.lib.nvrtc, src, b.arch())
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cubin"))
	if len(files) != 1 {
		t.Fatalf("disk cache holds %v, want one cubin", files)
	}
	if again, _ := compileImage(b.lib.nvrtc, src, b.arch()); again != im {
		t.Error("the second compile did not come from the memory cache")
	}
	// A marker written into the disk entry comes back once the memory
	// cache is cleared: the image was read from disk, not recompiled.
	if err := os.WriteFile(files[0], []byte("marker"), 0o644); err != nil {
		t.Fatal(err)
	}
	imagesMu.Lock()
	clear(images)
	imagesMu.Unlock()
	fromDisk, err := compileImage(b.lib.nvrtc, src, b.arch())
	if err != nil || string(fromDisk.data) != "marker" {
		t.Errorf("after clearing the memory cache: %q, %v; want the disk entry", fromDisk.data, err)
	}
	imagesMu.Lock()
	clear(images)
	imagesMu.Unlock()
	// Another architecture is another key.
	if k1, k2 := moduleKey(src, nvrtcOptions("sm_90"), "13.0", "90"), moduleKey(src, nvrtcOptions("sm_80"), "13.0", "80"); k1 == k2 {
		t.Error("the key ignores the architecture")
	}
	if k1, k2 := moduleKey(src, nvrtcOptions("sm_90"), "13.0", "90"), moduleKey(src, nvrtcOptions("sm_90"), "12.8", "90"); k1 == k2 {
		t.Error("the key ignores the NVRTC version")
	}
}

// TestNVRTCFallback: for a device newer than NVRTC knows, the kernels are
// compiled to PTX for an older virtual architecture; a real compile error
// is reported with NVRTC's log.
func TestNVRTCFallback(t *testing.T) {
	if mode != "emu" {
		t.Skip("needs the emulator's NVRTC")
	}
	b := open(t)
	defer b.Close()
	src := cudagen.Prelude() + "\nextern \"C\" __global__ void loom_fallback_probe(float* __restrict__ out) { out[threadIdx.x] = 2.0f; }\n"
	im, err := nvrtcCompile(b.lib.nvrtc, src, "990", "13.0")
	if err != nil {
		t.Fatalf("sm_990: %v", err)
	}
	if !im.ptx {
		t.Error("an unknown architecture did not fall back to PTX")
	}
	_, err = nvrtcCompile(b.lib.nvrtc, src+"\nextern \"C\" __global__ void broken(float* o) { o[0] = undefined_name; }\n", b.arch(), "13.0")
	if err == nil || !strings.Contains(err.Error(), "undefined_name") {
		t.Errorf("compile error = %v, want NVRTC's log naming undefined_name", err)
	}
}
