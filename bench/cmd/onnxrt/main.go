// Command onnxrt times ONNX models in loom (package onnx on the CPU
// backend) and in onnxruntime, the reference runtime (npm's
// onnxruntime-node, its CPU execution provider, driven by
// bench/onnxrt/ort_bench.js in one long-lived node process), side by side:
// within every round each engine runs the same model on the same input
// values with the same number of threads, the engines alternating, and the
// medians over the rounds are printed as one table. Before timing, the
// first outputs of both engines are compared.
//
// The models: examples/onnx's CNN (trained in PyTorch) at batch 1 and 64,
// and the largest models of ONNX's pytorch-converted backend test data
// (Debian's libonnx-testdata; by the size of their test inputs), each with
// its test_data_set_0 inputs.
//
//	make bench-onnx                        # from the repository root
//	go run ./cmd/onnxrt -threads 2 -rounds 7
//
// onnxruntime-node is installed by `npm ci --ignore-scripts` in
// bench/onnxrt (make bench-onnx does it); the package ships
// libonnxruntime for linux x64, nothing is downloaded at run time.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loomgraph/loom/bench"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/onnx"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	threads int
	rounds  int
	target  time.Duration
	data    string // pytorch-converted directory ("" or missing: skipped)
	largest int
	cnn     string
	harness string // directory of ort_bench.js and its node_modules
	node    string
	filter  string
	profile bool      // print loom's per-kernel summary of one run of each case
	log     io.Writer // progress (io.Discard with -q)
	stderr  io.Writer // the profiles
}

// a case is one model with its input values.
type benchCase struct {
	name   string
	model  string
	inputs map[string]*tensor.Tensor
	order  []string // input names, in the model's order
}

// result is one case's measurements.
type result struct {
	name             string
	loom, ort        []float64 // ns per run, one per round
	maxAbs, maxScale float64   // output difference and the outputs' largest magnitude
	err              string    // loom failed or the outputs differ
	skip             string    // onnxruntime cannot run the model
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("onnxrt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := config{}
	fs.IntVar(&c.threads, "threads", runtime.NumCPU(), "threads for both engines: loom's cpu.Threads, onnxruntime's intraOpNumThreads")
	fs.IntVar(&c.rounds, "rounds", 5, "timing rounds (the engines alternate within a round); medians are reported")
	fs.DurationVar(&c.target, "target", 300*time.Millisecond, "duration of one timing (iterations are calibrated on loom)")
	fs.StringVar(&c.data, "data", "/usr/include/onnx/backend/test/data/pytorch-converted", "ONNX's pytorch-converted backend test data")
	fs.IntVar(&c.largest, "largest", 8, "how many of the pytorch-converted models to time, largest test inputs first")
	fs.StringVar(&c.cnn, "cnn", "../examples/onnx/cnn.onnx", "examples/onnx's CNN")
	fs.StringVar(&c.harness, "harness", "onnxrt", "directory of ort_bench.js with onnxruntime-node installed (npm ci --ignore-scripts)")
	fs.StringVar(&c.node, "node", "node", "the node executable")
	fs.StringVar(&c.filter, "filter", "", "run only the cases whose names contain this")
	fs.BoolVar(&c.profile, "profile", false, "print loom's per-kernel profile summary of one run of each case (on stderr)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || c.threads < 1 || c.rounds < 1 {
		fmt.Fprintln(stderr, "onnxrt: bad arguments (see -h)")
		return 2
	}
	c.log, c.stderr = stderr, stderr
	if *quiet {
		c.log = io.Discard
	}
	cases, err := loadCases(c)
	if err != nil {
		fmt.Fprintln(stderr, "onnxrt:", err)
		return 1
	}
	ort, err := startORT(c)
	if err != nil {
		fmt.Fprintln(stderr, "onnxrt:", err)
		return 1
	}
	defer ort.close()
	tmp, err := os.MkdirTemp("", "onnxrt")
	if err != nil {
		fmt.Fprintln(stderr, "onnxrt:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	var results []*result
	for _, bc := range cases {
		fmt.Fprintf(c.log, "%s ...\n", bc.name)
		r := measure(c, ort, bc, tmp)
		results = append(results, r)
	}
	fmt.Fprintf(stdout, "loom vs onnxruntime %s (CPU execution provider), %d threads each, median of %d rounds, %s, %s/%s\n",
		ort.version, c.threads, c.rounds, cpuName(), runtime.GOOS, runtime.GOARCH)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tloom\tonnxruntime\tort / loom\tmax diff\t")
	for _, r := range results {
		if r.err != "" || r.skip != "" {
			why := "loom: " + r.err
			if r.err == "" {
				why = "skipped: " + r.skip
			}
			fmt.Fprintf(tw, "%s\t\t\t\t%s\t\n", r.name, why)
			continue
		}
		l, o := median(r.loom), median(r.ort)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fx\t%.1e\t\n", r.name, fmtDur(l), fmtDur(o), o/l, r.maxAbs/math.Max(r.maxScale, 1e-30))
	}
	tw.Flush()
	fmt.Fprintln(stdout, "ort / loom > 1: loom is faster. max diff: max |loom - ort| / max |ort| over the first output.")
	for _, r := range results {
		if r.err != "" {
			return 1
		}
	}
	return 0
}

// loadCases reads the CNN and the largest pytorch-converted tests.
func loadCases(c config) ([]benchCase, error) {
	var cases []benchCase
	if c.cnn != "" {
		for _, b := range []int{1, 64} {
			x := tensor.Zeros(tensor.Float32, b, 1, 28, 28)
			xv, _ := tensor.Values[float32](x)
			for i := range xv {
				// A deterministic image-like pattern in [0, 1].
				xv[i] = float32(0.5 + 0.5*math.Sin(float64(i)*0.37))
			}
			cases = append(cases, benchCase{name: fmt.Sprintf("examples/onnx CNN, batch %d", b), model: c.cnn,
				inputs: map[string]*tensor.Tensor{"image": x}, order: []string{"image"}})
		}
	}
	if c.data != "" && c.largest > 0 {
		if _, err := os.Stat(c.data); err == nil {
			big, err := largestTests(c.data, c.largest)
			if err != nil {
				return nil, err
			}
			cases = append(cases, big...)
		} else {
			fmt.Fprintf(c.log, "onnxrt: no %s (apt-get install libonnx-testdata): only the CNN\n", c.data)
		}
	}
	var kept []benchCase
	for _, bc := range cases {
		if strings.Contains(bc.name, c.filter) {
			kept = append(kept, bc)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no case to run")
	}
	return kept, nil
}

// largestTests returns the n test directories of dir whose
// test_data_set_0 inputs are largest, with those inputs.
func largestTests(dir string, n int) ([]benchCase, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type sized struct {
		name string
		size int64
	}
	var all []sized
	for _, e := range ents {
		ins, _ := filepath.Glob(filepath.Join(dir, e.Name(), "test_data_set_0", "input_*.pb"))
		var s int64
		for _, f := range ins {
			if st, err := os.Stat(f); err == nil {
				s += st.Size()
			}
		}
		if s > 0 {
			all = append(all, sized{e.Name(), s})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].size != all[j].size {
			return all[i].size > all[j].size
		}
		return all[i].name < all[j].name
	})
	var cases []benchCase
	for _, s := range all[:min(n, len(all))] {
		model := filepath.Join(dir, s.name, "model.onnx")
		sig, _, err := onnx.SignatureFile(model)
		if err != nil {
			return nil, err
		}
		bc := benchCase{name: "pytorch-converted/" + s.name, model: model, inputs: map[string]*tensor.Tensor{}}
		for i, vi := range sig {
			name, t, err := onnx.ReadTensorFile(filepath.Join(dir, s.name, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
			if err != nil {
				return nil, err
			}
			if name == "" {
				name = vi.Name
			}
			bc.inputs[name] = t
			bc.order = append(bc.order, name)
		}
		cases = append(cases, bc)
	}
	return cases, nil
}

// measure imports, checks and times one case on both engines.
func measure(c config, ort *ortProc, bc benchCase, tmp string) *result {
	r := &result{name: bc.name}
	fail := func(err error) *result { r.err = err.Error(); return r }
	m, err := onnx.ImportFile(bc.model, onnx.ShapesFrom(bc.inputs))
	if err != nil {
		return fail(err)
	}
	be, err := cpu.New(cpu.Threads(c.threads))
	if err != nil {
		return fail(err)
	}
	defer be.Close()
	p, err := exec.Compile(be, m.Outputs[:1])
	if err != nil {
		return fail(err)
	}
	defer p.Close()
	feeds, err := m.Feeds(bc.inputs)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	out := []*tensor.Tensor{tensor.Zeros(m.Outputs[0].DType(), m.Outputs[0].Shape()...)}
	loomRun := func() error { return p.RunInto(ctx, feeds, out) }
	if err := loomRun(); err != nil {
		return fail(err)
	}
	if c.profile {
		rec := profile.New()
		for i := 0; i < 10; i++ {
			if err := p.RunInto(profile.NewContext(ctx, rec), feeds, out); err != nil {
				return fail(err)
			}
		}
		fmt.Fprintf(c.stderr, "loom, %s, 10 runs:\n", bc.name)
		rec.WriteSummary(c.stderr)
	}

	// onnxruntime: the same values, from raw files.
	var ins []ortInput
	for i, name := range bc.order {
		t := bc.inputs[name]
		f := filepath.Join(tmp, fmt.Sprintf("in%d.bin", i))
		if err := os.WriteFile(f, t.Bytes(), 0o644); err != nil {
			return fail(err)
		}
		ins = append(ins, ortInput{Name: name, Type: ortType(t.DType()), Dims: t.Shape(), File: f})
	}
	if _, err := ort.call(map[string]any{"cmd": "load", "model": bc.model, "threads": c.threads, "inputs": ins}); err != nil {
		// Not loom's failure: the case is reported and skipped.
		r.skip = err.Error()
		return r
	}
	outFile := filepath.Join(tmp, "out.bin")
	if _, err := ort.call(map[string]any{"cmd": "output", "file": outFile}); err != nil {
		return fail(err)
	}
	if err := compare(r, out[0], outFile); err != nil {
		return fail(err)
	}

	// Calibrate on loom, then alternate.
	iters := 1
	for {
		t0 := time.Now()
		for i := 0; i < iters; i++ {
			if err := loomRun(); err != nil {
				return fail(err)
			}
		}
		d := time.Since(t0)
		if d >= c.target/4 || iters >= 1<<20 {
			iters = max(1, int(float64(iters)*float64(c.target)/float64(max(d, time.Microsecond))))
			break
		}
		iters *= 4
	}
	for round := 0; round < c.rounds; round++ {
		t0 := time.Now()
		for i := 0; i < iters; i++ {
			if err := loomRun(); err != nil {
				return fail(err)
			}
		}
		r.loom = append(r.loom, float64(time.Since(t0).Nanoseconds())/float64(iters))
		ans, err := ort.call(map[string]any{"cmd": "time", "iters": iters})
		if err != nil {
			return fail(err)
		}
		ns, _ := ans["ns"].(float64)
		r.ort = append(r.ort, ns/float64(iters))
	}
	return r
}

// compare reads onnxruntime's first output and records its largest
// difference from loom's.
func compare(r *result, got *tensor.Tensor, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if got.DType() != tensor.Float32 {
		if string(b) != string(got.Bytes()) {
			return fmt.Errorf("the %s outputs differ", got.DType())
		}
		return nil
	}
	gv, _ := tensor.Values[float32](got)
	if len(b) != 4*len(gv) {
		return fmt.Errorf("onnxruntime's output has %d bytes, loom's %d values", len(b), len(gv))
	}
	for i, g := range gv {
		w := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		r.maxAbs = math.Max(r.maxAbs, math.Abs(float64(g-w)))
		r.maxScale = math.Max(r.maxScale, math.Abs(float64(w)))
	}
	if r.maxAbs > 1e-3*math.Max(r.maxScale, 1) {
		return fmt.Errorf("outputs differ: max |loom - ort| = %g (outputs up to %g)", r.maxAbs, r.maxScale)
	}
	return nil
}

type ortInput struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Dims []int  `json:"dims"`
	File string `json:"file"`
}

func ortType(dt tensor.DType) string {
	switch dt {
	case tensor.Float32:
		return "float32"
	case tensor.Float64:
		return "float64"
	case tensor.Int64:
		return "int64"
	case tensor.Int32:
		return "int32"
	case tensor.Int8:
		return "int8"
	case tensor.Uint8:
		return "uint8"
	case tensor.Bool:
		return "bool"
	}
	return dt.String()
}

// ortProc is the node process running ort_bench.js.
type ortProc struct {
	cmd     *osexec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	version string
}

func startORT(c config) (*ortProc, error) {
	script := filepath.Join(c.harness, "ort_bench.js")
	if _, err := os.Stat(filepath.Join(c.harness, "node_modules", "onnxruntime-node")); err != nil {
		return nil, fmt.Errorf("onnxruntime-node is not installed in %s: run npm ci --ignore-scripts there (make bench-onnx does)", c.harness)
	}
	cmd := osexec.Command(c.node, script)
	cmd.Stderr = c.log
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.node, script, err)
	}
	p := &ortProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	ans, err := p.call(map[string]any{"cmd": "hello"})
	if err != nil {
		p.close()
		return nil, err
	}
	p.version, _ = ans["version"].(string)
	return p, nil
}

func (p *ortProc) call(req map[string]any) (map[string]any, error) {
	var ans map[string]any
	_, err := bench.Exchange("onnxruntime", p.in, p.out, req, &ans)
	return ans, err
}

func (p *ortProc) close() {
	p.in.Close()
	p.cmd.Wait()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// fmtDur prints nanoseconds with three significant digits and a unit.
func fmtDur(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.3gns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3gµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3gms", ns/1e6)
	}
	return fmt.Sprintf("%.3gs", ns/1e9)
}

// cpuName is the processor's model name from /proc/cpuinfo.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
