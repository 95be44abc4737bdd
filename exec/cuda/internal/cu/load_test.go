//go:build linux

package cu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCandidatesOrder checks the search order of the three libraries: the
// override, the sonames through the loader, then the directories.
func TestCandidatesOrder(t *testing.T) {
	env := map[string]string{
		"LOOM_LIBCUDA":   "/opt/x/libcuda.so",
		"LOOM_LIBNVRTC":  "",
		"LOOM_LIBCUBLAS": "/opt/x/libcublas.so",
		"CUDA_HOME":      "/opt/cuda",
	}
	getenv := func(k string) string { return env[k] }
	paths := func(cs []candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.path)
		}
		return out
	}
	want := []string{
		"/opt/x/libcuda.so",
		"libcuda.so.1",
		"/opt/cuda/lib64/libcuda.so.1",
		"/usr/local/cuda/lib64/libcuda.so.1",
		"/usr/local/nvidia/lib64/libcuda.so.1",
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		"/usr/local/nvidia/lib/libcuda.so.1",
	}
	if got := paths(cudaSpec.candidates(getenv)); !reflect.DeepEqual(got, want) {
		t.Errorf("libcuda candidates:\n got %q\nwant %q", got, want)
	}
	want = []string{
		"libnvrtc.so.13", "libnvrtc.so.12",
		"/opt/cuda/lib64/libnvrtc.so.13", "/opt/cuda/lib64/libnvrtc.so.12",
		"/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
		"/usr/local/nvidia/lib64/libnvrtc.so.13", "/usr/local/nvidia/lib64/libnvrtc.so.12",
		"/usr/lib/x86_64-linux-gnu/libnvrtc.so.13", "/usr/lib/x86_64-linux-gnu/libnvrtc.so.12",
	}
	if got := paths(nvrtcSpec.candidates(getenv)); !reflect.DeepEqual(got, want) {
		t.Errorf("libnvrtc candidates:\n got %q\nwant %q", got, want)
	}
	// Without CUDA_HOME, and with CUDA_HOME equal to a standard directory,
	// the directory appears once.
	env["CUDA_HOME"] = "/usr/local/cuda"
	want = []string{
		"/opt/x/libcublas.so",
		"libcublas.so.13", "libcublas.so.12",
		"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
		"/usr/local/nvidia/lib64/libcublas.so.13", "/usr/local/nvidia/lib64/libcublas.so.12",
		"/usr/lib/x86_64-linux-gnu/libcublas.so.13", "/usr/lib/x86_64-linux-gnu/libcublas.so.12",
	}
	if got := paths(cublasSpec.candidates(getenv)); !reflect.DeepEqual(got, want) {
		t.Errorf("libcublas candidates:\n got %q\nwant %q", got, want)
	}
	delete(env, "CUDA_HOME")
	if got := paths(cublasSpec.candidates(getenv)); !reflect.DeepEqual(got, want) {
		t.Errorf("libcublas candidates without CUDA_HOME:\n got %q\nwant %q", got, want)
	}
}

// TestLoadNotFound points the override at a missing file and the search
// at empty directories and a file that is not a shared object: the error
// wraps ErrNotFound and lists every path with dlopen's message.
func TestLoadNotFound(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	missing := filepath.Join(t.TempDir(), "nope", "libcuda.so.1")
	t.Setenv("LOOM_LIBCUDA", missing)
	const soname = "libloom-cu-test-no-such-library.so.1"
	garbage := filepath.Join(dir2, soname)
	if err := os.WriteFile(garbage, []byte("this is not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := cudaSpec
	spec.sonames = []string{soname}
	spec.dirs = []string{dir1, "$CUDA_HOME/lib64", dir2}
	t.Setenv("CUDA_HOME", "")
	cands := spec.candidates(os.Getenv)

	for _, load := range []struct {
		name string
		fn   func([]candidate) error
	}{
		{"driver", func(c []candidate) error { _, err := loadDriver(c); return err }},
		{"nvrtc", func(c []candidate) error { _, err := loadNVRTC(c); return err }},
		{"cublas", func(c []candidate) error { _, err := loadCUBLAS(c); return err }},
	} {
		err := load.fn(cands)
		if err == nil {
			t.Fatalf("%s: loaded a library from %v", load.name, cands)
		}
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: error does not wrap ErrNotFound: %v", load.name, err)
		}
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("%s: error is not a *LoadError: %v", load.name, err)
		}
		wantPaths := []string{missing, soname, filepath.Join(dir1, soname), garbage}
		if len(le.Tried) != len(wantPaths) {
			t.Fatalf("%s: tried %d paths, want %d: %v", load.name, len(le.Tried), len(wantPaths), err)
		}
		msg := err.Error()
		for i, p := range wantPaths {
			a := le.Tried[i]
			if a.Path != p {
				t.Errorf("%s: attempt %d is %s, want %s", load.name, i, a.Path, p)
			}
			if a.Err == "" {
				t.Errorf("%s: attempt %d (%s) has no dlopen message", load.name, i, p)
			}
			if line := fmt.Sprintf("%s (%s): %s", a.Path, a.From, a.Err); !strings.Contains(msg, line) {
				t.Errorf("%s: error lacks %q:\n%s", load.name, line, msg)
			}
		}
		if !strings.Contains(le.Tried[0].From, "LOOM_LIBCUDA") {
			t.Errorf("%s: first attempt comes from %q, want the override", load.name, le.Tried[0].From)
		}
		if !strings.Contains(le.Tried[0].Err, "No such file") {
			t.Errorf("%s: dlopen message for a missing file: %q", load.name, le.Tried[0].Err)
		}
		if strings.Contains(le.Tried[3].Err, "No such file") {
			t.Errorf("%s: dlopen message for a non-ELF file: %q", load.name, le.Tried[3].Err)
		}
		t.Logf("%s: %v", load.name, err)
	}
}

// TestLoadDriverNoCUDA runs the real search with a missing override. On a
// machine with a driver it loads one; otherwise the error lists the
// override and the standard places.
func TestLoadDriverNoCUDA(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	t.Setenv("LOOM_LIBCUDA", missing)
	t.Setenv("CUDA_HOME", "")
	d, err := LoadDriver()
	if err == nil {
		t.Skipf("a CUDA driver is installed: %s", d.Path())
	}
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("error does not wrap ErrNotFound: %v", err)
	}
	for _, p := range []string{missing, "libcuda.so.1", "/usr/local/cuda/lib64/libcuda.so.1", "/usr/local/nvidia/lib/libcuda.so.1"} {
		if !strings.Contains(err.Error(), p+" (") {
			t.Errorf("error does not list %s:\n%v", p, err)
		}
	}
}

// buildStub compiles C source into a shared object in a temporary
// directory, skipping the test when there is no C compiler.
func buildStub(t *testing.T, name, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc):", err)
	}
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	so := filepath.Join(dir, name+".so")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return so
}

// stubSource defines every symbol as a function returning 0, except skip.
func stubSource(syms []symbol, skip string) string {
	var b strings.Builder
	for _, s := range syms {
		if s.name != skip {
			fmt.Fprintf(&b, "int %s(void) { return 0; }\n", s.name)
		}
	}
	return b.String()
}

// TestLoadMissingSymbol builds libraries that lack one bound function and
// checks that loading fails with an error naming it, without a panic; and
// that the complete stub loads, with Path giving the file.
func TestLoadMissingSymbol(t *testing.T) {
	for _, c := range []struct {
		lib  string
		syms []symbol
		skip string
		load func(string) (string, error)
	}{
		{"libcuda", (&Driver{}).symbols(), "cuMemsetD8Async", func(p string) (string, error) {
			d, err := loadDriver([]candidate{{p, "test"}})
			if err != nil {
				return "", err
			}
			return d.Path(), nil
		}},
		{"libnvrtc", (&NVRTC{}).symbols(), "nvrtcGetCUBIN", func(p string) (string, error) {
			n, err := loadNVRTC([]candidate{{p, "test"}})
			if err != nil {
				return "", err
			}
			return n.Path(), nil
		}},
		{"libcublas", (&CUBLAS{}).symbols(), "cublasDgemmStridedBatched", func(p string) (string, error) {
			b, err := loadCUBLAS([]candidate{{p, "test"}})
			if err != nil {
				return "", err
			}
			return b.Path(), nil
		}},
	} {
		t.Run(c.lib, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			partial := buildStub(t, c.lib+"-partial", stubSource(c.syms, c.skip))
			_, err := c.load(partial)
			if err == nil {
				t.Fatalf("loaded %s without %s", partial, c.skip)
			}
			if !errors.Is(err, ErrMissingSymbol) || errors.Is(err, ErrNotFound) {
				t.Errorf("error wraps the wrong sentinel: %v", err)
			}
			if !strings.Contains(err.Error(), c.skip) || !strings.Contains(err.Error(), partial) {
				t.Errorf("error does not name the symbol %s and the file: %v", c.skip, err)
			}
			t.Log(err)

			full := buildStub(t, c.lib+"-full", stubSource(c.syms, ""))
			// Load it through a symbolic link: Path reports the mapped file.
			link := filepath.Join(t.TempDir(), c.lib+".so.1")
			if err := os.Symlink(full, link); err != nil {
				t.Fatal(err)
			}
			p, err := c.load(link)
			if err != nil {
				t.Fatalf("complete stub: %v", err)
			}
			if p != full {
				t.Errorf("Path() = %q, want %q", p, full)
			}
		})
	}
	// The stub driver's cuGetErrorName "succeeds" without setting the
	// string: Result.Error falls back to the built-in table.
	if got, want := ErrorOutOfMemory.Error(), "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestErrorStrings checks the built-in tables, without a loaded library.
func TestErrorStrings(t *testing.T) {
	saved := driverErrors.Swap(nil)
	savedN := nvrtcErrorString.Swap(nil)
	defer driverErrors.Store(saved)
	defer nvrtcErrorString.Store(savedN)
	for _, c := range []struct {
		err  error
		want string
	}{
		{ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"},
		{ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE (1): invalid argument"},
		{Result(12345), "CUresult(12345) (12345): unknown CUresult"},
		{NVRTCErrorCompilation, "NVRTC_ERROR_COMPILATION (6)"},
		{BLASInvalidValue, "CUBLAS_STATUS_INVALID_VALUE (7): an invalid numeric value was used as an argument"},
		{BLASNotSupported, "CUBLAS_STATUS_NOT_SUPPORTED (15): the functionality requested is not supported"},
		{BLASStatus(99), "cublasStatus_t(99)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if Success.err() != nil || NVRTCSuccess.err() != nil || BLASSuccess.err() != nil {
		t.Error("a success code is an error")
	}
	for s, n := range map[BLASStatus]string{1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
		11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED"} {
		if !strings.HasPrefix(s.Error(), "CUBLAS_STATUS_"+n+" (") {
			t.Errorf("BLASStatus(%d) = %q", int32(s), s.Error())
		}
	}
}
