package exec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

var update = flag.Bool("update", false, "rewrite golden files")

// normalise replaces what varies from run to run and machine to machine
// in a trace (timestamps, durations, the device description) so that the
// rest can be compared with a golden file.
func normalise(t *testing.T, trace []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(trace, &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range doc["traceEvents"].([]any) {
		ev := e.(map[string]any)
		for _, k := range []string{"ts", "dur"} {
			if _, ok := ev[k]; ok {
				ev[k] = 0
			}
		}
	}
	doc["otherData"].(map[string]any)["device"] = "<device>"
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestTraceGolden records the compile pipeline and one run of a tiny
// deterministic program, validates the trace, and compares it (timestamps
// normalised) with testdata/trace.golden.json (go test -run TraceGolden
// -update rewrites it).
func TestTraceGolden(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	w := g.Variable("w", exectest.Rand(tensor.Float32, tensor.Shape{3, 2}, -1, 1, 1))
	h := ops.Tanh(ops.Add(ops.MatMul(x, w), ops.Scalar(x, 0.5)))
	y := ops.Sum(ops.Softmax(h, -1), 0)
	rec := profile.New()
	p, err := exec.Compile(be, []*graph.Node{y, h}, exec.Record(rec), exec.Update(w, ops.Mul(w, ops.Scalar(w, 0.9))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := profile.NewContext(context.Background(), rec)
	if _, err := p.Run(ctx, exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{2, 3}, -1, 1, 2)}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rec.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("trace does not validate: %v\n%s", err, buf.String())
	}
	got := normalise(t, buf.Bytes())
	golden := filepath.Join("testdata", "trace.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("trace differs from %s (run with -update after checking):\n%s", golden, got)
	}
	// Spot checks that do not depend on the golden file.
	s := buf.String()
	for _, want := range []string{`"name":"Run"`, `"name":"MatMul"`, `"cat":"compile"`, `"name":"fuse"`, `"ph":"C"`,
		`"loom_version":"` + exec.Version + `"`, `"backend":"cpu"`, `"inputs":["f32[2,3]","f32[3,2]"]`, `"site":"profile_test.go:`} {
		if !strings.Contains(s, want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	var sum bytes.Buffer
	if err := rec.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "MatMul") || !strings.Contains(sum.String(), "Fused") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

// TestTraceConcurrentRuns: two goroutines run the same program into one
// Recorder; every run gets its own thread, and the trace is valid.
func TestTraceConcurrentRuns(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 64)
	y := ops.Sum(ops.MatMul(ops.Tanh(x), x))
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := profile.New()
	ctx := profile.NewContext(context.Background(), rec)
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{64, 64}, -1, 1, 3)}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if _, err := p.Run(ctx, feeds); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if rec.Runs() != 40 {
		t.Errorf("%d runs recorded, want 40", rec.Runs())
	}
	var buf bytes.Buffer
	if err := rec.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(&buf); err != nil {
		t.Fatalf("concurrent trace: %v", err)
	}
}

// TestTraceWorkers: a kernel large enough to run in parallel records its
// pieces on worker threads with flow arrows from the run thread.
func TestTraceWorkers(t *testing.T) {
	be := cpuBackend(t)
	if be.(interface{ Threads() int }).Threads() < 2 {
		t.Skip("one thread: no worker pieces")
	}
	g := graph.New()
	// 8M elements: a part lasts a millisecond or more, long enough for a
	// parked worker to wake and claim the second one on a loaded machine
	// (with 1M, under make test's parallel race runs, the caller
	// sometimes claimed both parts in twenty runs).
	const n = 1 << 23
	x := g.Input("x", tensor.Float32, n)
	y := ops.Tanh(x)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The parts of a loop are claimed by whoever runs first: a worker that
	// wakes late (a busy machine, the race detector) finds them done by
	// the caller, so a run may have no worker piece. Twenty runs without
	// one would mean that workers never help.
	var s string
	feed := tensor.Zeros(tensor.Float32, n)
	for range 20 {
		rec := profile.New()
		if _, err := p.Run(profile.NewContext(context.Background(), rec), exec.Feeds{x: feed}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := rec.WriteTrace(&buf); err != nil {
			t.Fatal(err)
		}
		if s = buf.String(); strings.Contains(s, `"cat":"kernel-part"`) {
			break
		}
	}
	if !strings.Contains(s, `"name":"worker 1"`) || !strings.Contains(s, `"ph":"s"`) || !strings.Contains(s, `"cat":"kernel-part"`) {
		t.Errorf("no worker thread, piece or flow in the trace:\n%s", s)
	}
	if err := profile.Validate(strings.NewReader(s)); err != nil {
		t.Fatal(err)
	}
}

// TestNoRecorderNoCost: without a Recorder a Run records nothing and
// allocates nothing more (RunInto stays at zero).
func TestNoRecorderNoCost(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 16)
	p, err := exec.Compile(be, []*graph.Node{ops.Exp(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32, 16)}
	feeds := exec.Feeds{x: tensor.Zeros(tensor.Float32, 16)}
	if a := testing.AllocsPerRun(50, func() { p.RunInto(context.Background(), feeds, out) }); a != 0 {
		t.Errorf("%v allocations per run without a recorder", a)
	}
}
