//go:build linux

package cu

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ebitengine/purego"
)

// ErrNotFound is wrapped by the errors of LoadDriver, LoadNVRTC and
// LoadCUBLAS when no candidate file of the library could be opened.
var ErrNotFound = errors.New("library not found")

// ErrMissingSymbol is wrapped by the errors of LoadDriver, LoadNVRTC and
// LoadCUBLAS when the library opened but lacks a function this package binds.
var ErrMissingSymbol = errors.New("missing symbol")

// libSpec says how to find one library.
type libSpec struct {
	what    string   // for messages: "libcuda (CUDA driver)"
	env     string   // environment variable holding a full path, tried first
	sonames []string // tried through the loader, then in every directory
	dirs    []string // directories tried after the loader, in order; "$CUDA_HOME/lib64" is expanded
}

// The standard directories, after $CUDA_HOME/lib64.
var stdDirs = []string{"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", "/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu"}

var (
	cudaSpec = libSpec{
		what:    "libcuda (CUDA driver)",
		env:     "LOOM_LIBCUDA",
		sonames: []string{"libcuda.so.1"},
		dirs:    append(append([]string(nil), stdDirs...), "/usr/local/nvidia/lib"),
	}
	nvrtcSpec = libSpec{
		what:    "libnvrtc (NVRTC)",
		env:     "LOOM_LIBNVRTC",
		sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12"},
		dirs:    stdDirs,
	}
	cublasSpec = libSpec{
		what:    "libcublas (cuBLAS)",
		env:     "LOOM_LIBCUBLAS",
		sonames: []string{"libcublas.so.13", "libcublas.so.12"},
		dirs:    stdDirs,
	}
)

// candidate is one path handed to dlopen, with where it came from.
type candidate struct {
	path, from string
}

// candidates lists the paths to try for s, in order, without duplicates.
func (s libSpec) candidates(getenv func(string) string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(p, from string) {
		if p == "" || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, candidate{p, from})
	}
	if s.env != "" {
		add(getenv(s.env), "$"+s.env)
	}
	for _, so := range s.sonames {
		add(so, "loader")
	}
	for _, d := range s.dirs {
		if strings.HasPrefix(d, "$CUDA_HOME") {
			home := getenv("CUDA_HOME")
			if home == "" {
				continue
			}
			d = filepath.Join(home, strings.TrimPrefix(d, "$CUDA_HOME"))
		}
		for _, so := range s.sonames {
			add(filepath.Join(d, so), d)
		}
	}
	return out
}

// Attempt is one failed dlopen: the path and dlopen's message.
type Attempt struct {
	Path string // as passed to dlopen
	From string // where the path came from: "$LOOM_LIBCUDA", "loader" or a directory
	Err  string // dlopen's message
}

// LoadError is returned when no candidate of a library opens. It wraps
// ErrNotFound.
type LoadError struct {
	Library string    // the library, e.g. "libcuda (CUDA driver)"
	Tried   []Attempt // every path tried, in order
}

// Error names the library and lists every path tried with dlopen's message.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cu: %s: %v; tried %d paths:", e.Library, ErrNotFound, len(e.Tried))
	for _, a := range e.Tried {
		fmt.Fprintf(&b, "\n\t%s (%s): %s", a.Path, a.From, a.Err)
	}
	return b.String()
}

// Unwrap returns ErrNotFound.
func (e *LoadError) Unwrap() error { return ErrNotFound }

// library is an opened shared object.
type library struct {
	handle uintptr
	name   string // the name dlopen was given
}

// open tries the candidates of s in order and returns the first that opens.
func open(s libSpec, cands []candidate) (*library, error) {
	// dlerror is per thread: keep dlopen and dlerror on the same one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e := &LoadError{Library: s.what}
	for _, c := range cands {
		h, err := purego.Dlopen(c.path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return &library{handle: h, name: c.path}, nil
		}
		msg := err.Error()
		if msg == "" {
			msg = "dlopen failed"
		}
		e.Tried = append(e.Tried, Attempt{Path: c.path, From: c.from, Err: msg})
	}
	return nil, e
}

// symbol pairs a C function name with the Go function variable bound to it.
type symbol struct {
	name string
	fn   any // pointer to a func variable
}

// addrOf is a symbol's fn for a function called through purego.SyscallN:
// bind stores the function's address in the variable.
type addrOf struct{ p *uintptr }

// bind resolves every symbol before registering any, so that a missing one
// leaves the variables untouched. It returns the address of the first.
func (l *library) bind(what string, syms []symbol) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addrs := make([]uintptr, len(syms))
	for i, s := range syms {
		a, err := purego.Dlsym(l.handle, s.name)
		if err != nil || a == 0 {
			msg := "not found"
			if err != nil && err.Error() != "" {
				msg = err.Error()
			}
			return 0, fmt.Errorf("cu: %s %s: %w %s (%s)", what, l.name, ErrMissingSymbol, s.name, msg)
		}
		addrs[i] = a
	}
	for i, s := range syms {
		if a, ok := s.fn.(addrOf); ok {
			*a.p = addrs[i]
			continue
		}
		purego.RegisterFunc(s.fn, addrs[i])
	}
	return addrs[0], nil
}

func (l *library) close() { _ = purego.Dlclose(l.handle) }

// load finds, opens and binds one library, and returns the file that was
// opened (found through /proc/self/maps from the first symbol's address,
// else the name given to dlopen).
func load(s libSpec, cands []candidate, syms []symbol) (string, error) {
	l, err := open(s, cands)
	if err != nil {
		return "", err
	}
	addr, err := l.bind(s.what, syms)
	if err != nil {
		l.close()
		return "", err
	}
	if p := mappedFile(addr); p != "" {
		return p, nil
	}
	return l.name, nil
}

// mappedFile returns the file mapped at addr in this process, or "".
func mappedFile(addr uintptr) string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if uint64(addr) >= start && uint64(addr) < end && strings.HasPrefix(fields[5], "/") {
			return strings.Join(fields[5:], " ")
		}
	}
	return ""
}
