// Command onnx-conformance runs the ONNX backend test data (the layout of
// onnx/backend/test/data: one directory per test holding model.onnx and
// test_data_set_N/input_K.pb, output_K.pb) through loom's importer and a
// backend, and compares the outputs at the suite's tolerances (rtol 1e-3,
// atol 1e-7).
//
//	go run ./onnx/cmd/onnx-conformance [-device cpu|cuda] [-j N] [-expect FILE] DIR...
//
// Each DIR is a test directory or a directory of them (searched
// recursively). One line per test: "pass NAME", "fail NAME: reason" or
// "skip NAME: reason" (an unsupported operator, attribute or type); the
// last line is "onnx backend tests: P passed, F failed, S skipped". With
// -expect FILE (one test name per line, '#' comments), the command fails
// when a test listed there does not pass; -write-expect FILE writes the
// tests that passed. -j N runs N tests at once on the one backend (the
// output keeps the tests' order).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	_ "github.com/loomgraph/loom/exec/cuda"
	"github.com/loomgraph/loom/onnx"
	"github.com/loomgraph/loom/tensor"
)

const (
	rtol = 1e-3
	atol = 1e-7
)

func main() {
	device := flag.String("device", "cpu", `backend: "cpu", "cuda", "cuda:N"`)
	expect := flag.String("expect", "", "file of tests that must pass (one name per line)")
	writeExpect := flag.String("write-expect", "", "write the names of the tests that passed to this file")
	run := flag.String("run", "", "run only the tests whose name matches this regular expression")
	quiet := flag.Bool("q", false, "print only failures, skips of expected tests, and the summary")
	jobs := flag.Int("j", 1, "tests run at once (the CUDA emulator compiles each program with the host C++ compiler, one core each)")
	flag.Parse()
	if *jobs < 1 {
		fatal(fmt.Errorf("-j %d: want at least 1", *jobs))
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: onnx-conformance [-device cpu|cuda] [-j N] [-expect FILE] DIR...")
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *run != "" {
		var err error
		if filter, err = regexp.Compile(*run); err != nil {
			fatal(err)
		}
	}
	be, err := exec.Open(*device)
	if err != nil {
		fatal(err)
	}
	defer be.Close()
	var want map[string]bool
	if *expect != "" {
		if want, err = readList(*expect); err != nil {
			fatal(err)
		}
	}
	var tests []string
	for _, d := range flag.Args() {
		found, err := findTests(d)
		if err != nil {
			fatal(err)
		}
		tests = append(tests, found...)
	}
	if filter != nil {
		tests = slices.DeleteFunc(tests, func(dir string) bool { return !filter.MatchString(testName(dir)) })
	}
	// -j workers take the tests in order; the lines come out in that
	// order whatever finishes first.
	type result struct {
		status, why string
		done        chan struct{}
	}
	results := make([]result, len(tests))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	next := make(chan int)
	go func() {
		for i := range tests {
			next <- i
		}
		close(next)
	}()
	for range *jobs {
		go func() {
			for i := range next {
				results[i].status, results[i].why = runTest(be, tests[i])
				close(results[i].done)
			}
		}()
	}
	var passed []string
	var nfail, nskip int
	var regressions []string
	for i, dir := range tests {
		name := testName(dir)
		<-results[i].done
		status, why := results[i].status, results[i].why
		switch status {
		case "pass":
			passed = append(passed, name)
			if !*quiet {
				fmt.Printf("pass %s\n", name)
			}
			continue
		case "fail":
			nfail++
		default:
			nskip++
		}
		if want[name] {
			regressions = append(regressions, name)
		}
		if !*quiet || status == "fail" || want[name] {
			fmt.Printf("%s %s: %s\n", status, name, why)
		}
	}
	fmt.Printf("onnx backend tests: %d passed, %d failed, %d skipped\n", len(passed), nfail, nskip)
	if *writeExpect != "" {
		sort.Strings(passed)
		body := "# Tests of the ONNX backend test data that pass on loom's CPU backend\n" +
			"# (written by onnx-conformance -write-expect; make test fails when one stops passing).\n" +
			strings.Join(passed, "\n") + "\n"
		if err := os.WriteFile(*writeExpect, []byte(body), 0o644); err != nil {
			fatal(err)
		}
	}
	if len(regressions) > 0 {
		fmt.Printf("FAIL: %d expected passes did not pass: %s\n", len(regressions), strings.Join(regressions, ", "))
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "onnx-conformance:", err)
	os.Exit(2)
}

// testName is the test's directory relative to the suite's data root:
// "node/test_abs", "pytorch-converted/test_Conv2d".
func testName(dir string) string {
	return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir)))
}

func readList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			m[l] = true
		}
	}
	return m, sc.Err()
}

// findTests returns every directory under root holding a model.onnx.
func findTests(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "model.onnx" {
			out = append(out, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// runTest imports, compiles and runs one test directory over every data
// set: "pass", "fail" or "skip" with the reason.
func runTest(be exec.Backend, dir string) (status, why string) {
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		return "skip", "no test_data_set_N directory"
	}
	// Bind the inputs' shapes from the first data set, by position.
	infos, outInfos, err := onnx.SignatureFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return classify(err)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
		if in.Kind != "tensor" {
			return "skip", fmt.Sprintf("input %q is a %s: %v", in.Name, in.Kind, onnx.ErrUnsupported)
		}
	}
	for _, out := range outInfos {
		if out.Kind != "tensor" {
			return "skip", fmt.Sprintf("output %q is a %s: %v", out.Name, out.Kind, onnx.ErrUnsupported)
		}
	}
	type data struct {
		ins, outs []*tensor.Tensor
	}
	var all []data
	for _, s := range sets {
		var d data
		var err error
		if d.ins, err = readTensors(s, "input"); err != nil {
			return classify(err)
		}
		if d.outs, err = readTensors(s, "output"); err != nil {
			return classify(err)
		}
		all = append(all, d)
	}
	if len(names) != len(all[0].ins) {
		return "fail", fmt.Sprintf("the model has %d inputs, the data set %d", len(names), len(all[0].ins))
	}
	first := map[string]*tensor.Tensor{}
	for i, n := range names {
		first[n] = all[0].ins[i]
	}
	// A shape-like operand may come from an input: bind the input the
	// import error names to the first data set's value (as a user of a
	// static-shape engine would), then, for operands computed from
	// inputs, every integer, bool and scalar input; the other data sets
	// must agree (Model.Feeds checks).
	consts := map[string]*tensor.Tensor{}
	m, err := onnx.ImportFile(filepath.Join(dir, "model.onnx"), onnx.ShapesFrom(first))
	for tries := 0; errors.Is(err, onnx.ErrDynamic) && tries <= len(first); tries++ {
		var de *onnx.DynamicError
		if errors.As(err, &de) && first[de.Value] != nil && consts[de.Value] == nil {
			consts[de.Value] = first[de.Value]
		} else {
			for n, t := range first {
				if !t.DType().IsFloat() || t.Rank() == 0 {
					consts[n] = t
				}
			}
		}
		m, err = onnx.ImportFile(filepath.Join(dir, "model.onnx"), onnx.ShapesFrom(first), onnx.Constants(consts))
	}
	if err != nil {
		return classify(err)
	}
	p, err := exec.Compile(be, m.Outputs, exec.IgnoreUnusedFeeds())
	if err != nil {
		return classify(err)
	}
	defer p.Close()
	for si, d := range all {
		named := map[string]*tensor.Tensor{}
		for i, n := range names {
			named[n] = d.ins[i]
		}
		feeds, err := m.Feeds(named)
		if err != nil {
			return "fail", err.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		got, err := p.Run(ctx, feeds)
		cancel()
		if err != nil {
			return "fail", fmt.Sprintf("data set %d: %v", si, err)
		}
		if len(got) != len(d.outs) {
			return "fail", fmt.Sprintf("data set %d: %d outputs, want %d", si, len(got), len(d.outs))
		}
		for k := range got {
			if err := compare(got[k], d.outs[k]); err != nil {
				return "fail", fmt.Sprintf("data set %d, output %d (%s): %v", si, k, m.OutputNames[k], err)
			}
		}
	}
	return "pass", ""
}

// classify turns an import or compile error into a skip (unsupported) or
// a failure.
func classify(err error) (string, string) {
	if errors.Is(err, onnx.ErrUnsupported) {
		return "skip", err.Error()
	}
	return "fail", err.Error()
}

func readTensors(dir, prefix string) ([]*tensor.Tensor, error) {
	var out []*tensor.Tensor
	for k := 0; ; k++ {
		p := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, k))
		if _, err := os.Stat(p); err != nil {
			return out, nil
		}
		_, t, err := onnx.ReadTensorFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
}

// compare checks got against want: same dtype and shape; floats within
// atol + rtol*|want| (NaN where NaN, infinities equal); others exact.
func compare(got, want *tensor.Tensor) error {
	if got.DType() != want.DType() {
		return fmt.Errorf("dtype %s, want %s", got.DType(), want.DType())
	}
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	dt := got.DType()
	worst, at := 0.0, -1
	for i := 0; i < got.Size(); i++ {
		if dt.IsComplex() {
			g, w := got.Complex128(i), want.Complex128(i)
			if d := cmplx.Abs(g - w); d > atol+rtol*cmplx.Abs(w) || cmplx.IsNaN(g) != cmplx.IsNaN(w) {
				return fmt.Errorf("element %d is %v, want %v", i, g, w)
			}
			continue
		}
		g, w := got.Float64(i), want.Float64(i)
		if !dt.IsFloat() {
			if g != w {
				return fmt.Errorf("element %d is %v, want %v", i, g, w)
			}
			continue
		}
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				return fmt.Errorf("element %d is %v, want %v", i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				return fmt.Errorf("element %d is %v, want %v", i, g, w)
			}
		default:
			if d := math.Abs(g - w); d > atol+rtol*math.Abs(w) {
				if d > worst {
					worst, at = d, i
				}
			}
		}
	}
	if at >= 0 {
		return fmt.Errorf("element %d is %v, want %v (difference %.3g beyond atol %g + rtol %g)", at, got.Float64(at), want.Float64(at), worst, atol, rtol)
	}
	return nil
}
