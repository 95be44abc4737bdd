package bench

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed torch_bench.py
var torchScript []byte

// DefaultPython is Debian's interpreter, the one python3-torch installs
// into (a pyenv python3 earlier on PATH would not see it).
const DefaultPython = "/usr/bin/python3"

// TorchOptions configure the PyTorch engine.
type TorchOptions struct {
	Python  string    // interpreter; "" = DefaultPython
	Threads int       // torch.set_num_threads (and OMP_NUM_THREADS, MKL_NUM_THREADS)
	Install bool      // apt-get install python3-torch python3-numpy when import torch fails
	Log     io.Writer // install output and the script's stderr; nil discards
	InPlace bool      // chains with in-place ops (mul_, add_, tanh(out=)) after one clone
}

// Torch is PyTorch on the CPU in one long-lived Python process running
// torch_bench.py, driven over its line protocol; iterations are timed in
// Python (time.perf_counter_ns), so the pipe costs nothing per iteration.
type Torch struct {
	mu      sync.Mutex
	cmd     *osexec.Cmd
	stdin   io.WriteCloser
	stdout  *bufio.Reader
	script  string
	next    int
	Hello   map[string]any // the script's answer to hello: versions and threads
	BLAS    string         // the BLAS library torch uses (a path)
	InPlace bool           // TorchOptions.InPlace
	version string
}

func torchImports(python string) error {
	out, err := osexec.Command(python, "-c", "import torch, numpy").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return fmt.Errorf("%s: import torch, numpy: %v: %s", python, err, msg)
	}
	return nil
}

// aptPackages are what the PyTorch engine needs from Debian: torch, numpy,
// and OpenBLAS (Debian's torch calls libblas.so.3, which is the reference
// BLAS, ~15x slower at sgemm, unless OpenBLAS provides the alternative).
const aptPackages = "python3-torch python3-numpy libopenblas0-pthread"

// installTorch runs apt-get install for pkgs.
func installTorch(log io.Writer, pkgs string) error {
	sh := "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y " + pkgs
	var cmd *osexec.Cmd
	switch {
	case os.Geteuid() == 0:
		cmd = osexec.Command("sh", "-c", sh)
	default:
		if _, err := osexec.LookPath("sudo"); err != nil {
			return errors.New("not root and no sudo: cannot apt-get install python3-torch")
		}
		cmd = osexec.Command("sudo", "-n", "sh", "-c", sh)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", sh, err)
	}
	return nil
}

// NewTorch starts the PyTorch engine. When torch cannot be imported (and
// the install, if allowed, does not help) the error wraps ErrUnavailable.
func NewTorch(o TorchOptions) (*Torch, error) {
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.Threads < 1 {
		o.Threads = 1
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if _, err := osexec.LookPath(o.Python); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := torchImports(o.Python); err != nil {
		if !o.Install {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		fmt.Fprintf(o.Log, "torch: %v; installing %s\n", err, aptPackages)
		if ierr := installTorch(o.Log, aptPackages); ierr != nil {
			return nil, fmt.Errorf("%w: %v; install failed: %v", ErrUnavailable, err, ierr)
		}
		if err := torchImports(o.Python); err != nil {
			return nil, fmt.Errorf("%w: after install: %v", ErrUnavailable, err)
		}
	}
	f, err := os.CreateTemp("", "loom-torch-bench-*.py")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(torchScript); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	f.Close()
	if o.Install && isReferenceBLAS(blasOf(o.Python, f.Name())) {
		fmt.Fprintf(o.Log, "torch: uses the reference BLAS; installing libopenblas0-pthread\n")
		if err := installTorch(o.Log, "libopenblas0-pthread"); err != nil {
			fmt.Fprintf(o.Log, "torch: %v (matmuls stay on the reference BLAS)\n", err)
		}
	}
	t, err := startTorch(o, f.Name())
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return t, nil
}

// blasOf asks python which BLAS library torch maps.
func blasOf(python, script string) string {
	out, err := osexec.Command(python, script, "blas").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// isReferenceBLAS says whether path is Debian's reference BLAS.
func isReferenceBLAS(path string) bool {
	return strings.HasSuffix(path, "/blas/libblas.so.3")
}

// startTorch starts script in python and says hello; on error the caller
// removes the script.
func startTorch(o TorchOptions, script string) (*Torch, error) {
	t := &Torch{script: script, InPlace: o.InPlace}
	n := fmt.Sprint(o.Threads)
	t.cmd = osexec.Command(o.Python, "-u", script)
	// torch.set_num_threads covers OpenMP (and MKL); OpenBLAS has its own
	// pool, sized by its variable when the library loads.
	t.cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+n, "MKL_NUM_THREADS="+n, "OPENBLAS_NUM_THREADS="+n)
	t.cmd.Stderr = o.Log
	var err error
	if t.stdin, err = t.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t.stdout = bufio.NewReaderSize(out, 1<<16)
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var hello struct {
		Torch, Python, BLAS string
		Threads             int
	}
	raw, err := t.call(map[string]any{"cmd": "hello", "threads": o.Threads, "inplace": o.InPlace}, &hello)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	_ = json.Unmarshal(raw, &t.Hello)
	if hello.Threads != o.Threads {
		t.Close()
		return nil, fmt.Errorf("torch: asked for %d threads, torch.get_num_threads() = %d", o.Threads, hello.Threads)
	}
	t.BLAS = hello.BLAS
	blas := filepath.Base(filepath.Dir(hello.BLAS)) // openblas-pthread, blas (the reference), ...
	if isReferenceBLAS(hello.BLAS) {
		blas = "reference BLAS (slow: apt-get install libopenblas0-pthread)"
	}
	if o.InPlace {
		blas += ", in-place chains"
	}
	t.version = "torch " + hello.Torch + " (Python " + hello.Python + ", " + blas + ")"
	return t, nil
}

func (t *Torch) Name() string    { return "pytorch" }
func (t *Torch) Version() string { return t.version }

// call sends one request and decodes the reply into v (when non-nil); it
// returns the raw reply.
func (t *Torch) call(req map[string]any, v any) (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Exchange("torch", t.stdin, t.stdout, req, v)
}

// Exchange is one request of a line protocol (a peer's script driven over
// its stdin and stdout: torch_bench.py, bench/onnxrt/ort_bench.js): req as
// one JSON line to w, one JSON line back from r, which must say "ok":
// true (else its "error" is the error, prefixed by who and the request's
// cmd). The reply is decoded into v when v is not nil, and returned raw.
func Exchange(who string, w io.Writer, r *bufio.Reader, req map[string]any, v any) (json.RawMessage, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("%s: write: %w", who, err)
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: read reply to %s: %w", who, req["cmd"], err)
	}
	var st struct {
		OK    bool
		Error string
	}
	if err := json.Unmarshal(line, &st); err != nil {
		return nil, fmt.Errorf("%s: bad reply %.200q: %w", who, line, err)
	}
	if !st.OK {
		return nil, fmt.Errorf("%s: %s: %s", who, req["cmd"], st.Error)
	}
	if v != nil {
		if err := json.Unmarshal(line, v); err != nil {
			return nil, fmt.Errorf("%s: bad reply %.200q: %w", who, line, err)
		}
	}
	return line, nil
}

// Close asks the script to quit (killing it after 5 s) and removes it.
func (t *Torch) Close() error {
	if t.cmd == nil || t.cmd.Process == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		t.stdin.Write([]byte(`{"cmd": "quit"}` + "\n"))
		t.stdin.Close()
		done <- t.cmd.Wait()
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.cmd.Process.Kill()
		err = <-done
	}
	os.Remove(t.script)
	t.cmd = nil
	return err
}

type torchInst struct {
	t  *Torch
	id int
}

// New builds the workload in Python: nn.Sequential of nn.Linear/nn.ReLU,
// F.cross_entropy and torch.optim.SGD for mlp; eager out-of-place ops under
// torch.no_grad for chain; torch.mm(a, b, out=c) for matmul;
// F.cross_entropy and backward for xent.
func (t *Torch) New(s Spec) (Instance, error) {
	t.mu.Lock()
	t.next++
	id := t.next
	t.mu.Unlock()
	if _, err := t.call(map[string]any{"cmd": "new", "id": id, "spec": s}, nil); err != nil {
		return nil, err
	}
	return &torchInst{t: t, id: id}, nil
}

func (in *torchInst) Run(iters int) (time.Duration, float64, error) {
	var r struct{ NS int64 }
	if _, err := in.t.call(map[string]any{"cmd": "run", "id": in.id, "iters": iters}, &r); err != nil {
		return 0, math.NaN(), err
	}
	return time.Duration(r.NS), math.NaN(), nil
}

func (in *torchInst) Check() (map[string][]float64, error) {
	var r struct{ Out map[string][]float64 }
	if _, err := in.t.call(map[string]any{"cmd": "check", "id": in.id}, &r); err != nil {
		return nil, err
	}
	return r.Out, nil
}

func (in *torchInst) Close() error {
	_, err := in.t.call(map[string]any{"cmd": "close", "id": in.id}, nil)
	return err
}
