package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestProcessThreadIDs(t *testing.T) {
	r := New()
	// Pids and tids count from 1 in order of first use; tids are unique
	// across processes.
	cpu := r.Process("cpu", 0)
	gpu := r.Process("cuda:0", 1)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"cpu pid", cpu, 1},
		{"cuda:0 pid", gpu, 2},
		{"cpu again", r.Process("cpu", 5), 1},
		{"cpu run 0", r.Thread(cpu, "run 0", 0), 1},
		{"cuda:0 stream 0", r.Thread(gpu, "stream 0", 0), 2},
		{"cpu run 0 again", r.Thread(cpu, "run 0", 3), 1},
		{"cuda:0 run 0 (same name, other pid)", r.Thread(gpu, "run 0", 0), 3},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	// The first sortIndex stays.
	if s := r.snapshot(); s.procs[0].sort != 0 || s.threads[0].sort != 0 {
		t.Errorf("sort indexes changed: %+v %+v", s.procs[0], s.threads[0])
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	// Every method is a no-op on nil; none panics.
	r.SetMeta("k", "v")
	r.Span(1, 1, "kernel", "k", 0, 1, &Kernel{}, nil)
	r.Counter(1, "memory", 0, map[string]float64{"bytes": 1})
	r.Flow("f", 1, 1, 0, 1, 2, 0)
	r.Instant(1, 1, "i", 0, nil)
	r.Reset()
	for name, got := range map[string]int{
		"Now": int(r.Now()), "Process": r.Process("cpu", 0), "Thread": r.Thread(1, "t", 0), "Runs": r.Runs(),
	} {
		if got != 0 {
			t.Errorf("%s on nil = %d, want 0", name, got)
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if FromContext(ctx) != nil {
		t.Error("FromContext of an empty context is not nil")
	}
	r := New()
	ctx = NewContext(ctx, r)
	if FromContext(ctx) != r {
		t.Error("FromContext does not return the Recorder NewContext stored")
	}
	if FromContext(NewContext(ctx, nil)) != nil {
		t.Error("NewContext(ctx, nil) does not hide the outer Recorder")
	}
}

func TestFromContextAllocs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), struct{ k int }{1}, "other"))
	defer cancel()
	var r *Recorder
	allocs := testing.AllocsPerRun(1000, func() { r = FromContext(ctx) })
	if allocs != 0 || r != nil {
		t.Errorf("FromContext without a Recorder: %v allocations, %v; want 0, nil", allocs, r)
	}
}

func TestNowMonotonic(t *testing.T) {
	r := New()
	a := r.Now()
	b := r.Now()
	if a < 0 || b < a {
		t.Errorf("Now went from %d to %d", a, b)
	}
}

func TestSpanClamps(t *testing.T) {
	r := New()
	r.Span(1, 1, "kernel", "", -5, -10, &Kernel{Name: "Neg"}, nil) // starts at 0, ends at its start
	r.Span(1, 1, "run", "run", 10, 5, nil, nil)
	s := r.snapshot()
	want := []event{
		{ph: 'X', pid: 1, tid: 1, ts: 0, dur: 0, cat: "kernel", name: "Neg"}, // name from the Kernel
		{ph: 'X', pid: 1, tid: 1, ts: 10, dur: 0, cat: "run", name: "run"},
	}
	for i, w := range want {
		e := s.events[i]
		e.kernel = nil
		if fmt.Sprint(e) != fmt.Sprint(w) {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
	}
	if r.Runs() != 1 {
		t.Errorf("Runs = %d, want 1", r.Runs())
	}
}

func TestReset(t *testing.T) {
	r := goldenRecording()
	if r.Runs() != 1 {
		t.Fatalf("Runs = %d, want 1", r.Runs())
	}
	r.Reset()
	if r.Runs() != 0 {
		t.Errorf("Runs after Reset = %d, want 0", r.Runs())
	}
	var buf bytes.Buffer
	if err := r.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	// Metadata, processes and threads stay: 2 processes and 3 threads, 2 M
	// events each, and no other events.
	if n := strings.Count(buf.String(), `"ph":"M"`); n != 10 || strings.Count(buf.String(), `"ph":`) != 10 {
		t.Errorf("after Reset: %d M events in\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), `"loom_version":"v0.0.0-test"`) {
		t.Errorf("Reset dropped the metadata:\n%s", buf.String())
	}
	if pid := r.Process("cpu", 9); pid != 1 {
		t.Errorf("Process(cpu) after Reset = %d, want 1", pid)
	}
}

// TestConcurrentRecording has 8 goroutines record nested spans, counters,
// instants and flows on their own threads into one Recorder at once,
// while others write the trace and the summary. Run it with -race.
func TestConcurrentRecording(t *testing.T) {
	const workers, iterations = 8, 200
	r := New()
	dev := r.Process("cpu", 0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			host := r.Thread(dev, fmt.Sprintf("worker %d", w), w)
			stream := r.Thread(r.Process(fmt.Sprintf("cuda:%d", w%2), 1), fmt.Sprintf("stream %d", w), 0)
			for i := range iterations {
				runStart := r.Now()
				launchStart := r.Now()
				kStart := r.Now()
				r.Flow("launch", dev, host, launchStart, r.Process(fmt.Sprintf("cuda:%d", w%2), 1), stream, kStart)
				kEnd := r.Now()
				r.Span(r.Process(fmt.Sprintf("cuda:%d", w%2), 1), stream, "kernel", "", kStart, kEnd,
					&Kernel{Name: "Add", Op: "Add", FLOPs: 10}, map[string]any{"i": i})
				r.Span(dev, host, "launch", "launch", launchStart, r.Now(), nil, nil)
				r.Counter(dev, "memory", r.Now(), map[string]float64{"bytes": float64(i)})
				r.Instant(dev, host, "done", r.Now(), nil)
				r.Span(dev, host, "run", "run", runStart, r.Now(), nil, nil)
			}
		}()
	}
	readers := make(chan struct{})
	go func() {
		defer close(readers)
		for range 5 {
			if err := r.WriteTrace(io.Discard); err != nil {
				t.Error(err)
			}
			if err := r.WriteSummary(io.Discard); err != nil {
				t.Error(err)
			}
			r.Runs()
		}
	}()
	wg.Wait()
	<-readers

	if got := r.Runs(); got != workers*iterations {
		t.Errorf("Runs = %d, want %d", got, workers*iterations)
	}
	var buf bytes.Buffer
	if err := r.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := Validate(&buf); err != nil {
		t.Fatal(err)
	}
}

func TestFunction(t *testing.T) {
	outer := New()
	ctx := NewContext(context.Background(), outer)
	var warm, recorded int
	var recs []*Recorder
	r, err := Function(ctx, 2, 3, func(ctx context.Context) error {
		rec := FromContext(ctx)
		if rec == nil {
			warm++
			return nil
		}
		recorded++
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 2 warm-up calls see no Recorder (not even the outer one), then 3
	// calls see the returned one.
	if warm != 2 || recorded != 3 {
		t.Errorf("%d warm-up and %d recorded calls, want 2 and 3", warm, recorded)
	}
	for _, rec := range recs {
		if rec != r || rec == outer {
			t.Errorf("fn saw Recorder %p, want the returned %p", rec, r)
		}
	}
	if s := r.snapshot(); s.calls != 3 || s.warmup != 2 || len(s.events) != 3 {
		t.Errorf("calls, warmup, events = %d, %d, %d; want 3, 2, 3 (one call span each)", s.calls, s.warmup, len(s.events))
	}
	var buf bytes.Buffer
	if err := r.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := Validate(&buf); err != nil {
		t.Error(err)
	}
}

func TestFunctionErrors(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	failOn := func(n int) func(context.Context) error {
		return func(context.Context) error {
			calls++
			if calls == n {
				return boom
			}
			return nil
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		name          string
		warmup, runs  int
		fn            func(context.Context) error
		want          string
		wantRecorder  bool
		wantCallsMade int
	}{
		{"negative warmup", -1, 1, failOn(0), "warmup >= 0 and runs >= 1", false, 0},
		{"no runs", 0, 0, failOn(0), "warmup >= 0 and runs >= 1", false, 0},
		{"nil fn", 0, 1, nil, "nil function", false, 0},
		{"warm-up fails", 2, 3, failOn(2), "warm-up call 1: boom", false, 2},
		// Recorded call 1 is the 4th call; the Recorder keeps calls 0 and 1.
		{"recorded call fails", 2, 3, failOn(4), "call 1: boom", true, 4},
	} {
		calls = 0
		r, err := Function(ctx, c.warmup, c.runs, c.fn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if (r != nil) != c.wantRecorder || calls != c.wantCallsMade {
			t.Errorf("%s: recorder %v after %d calls; want recorder %v after %d", c.name, r != nil, calls, c.wantRecorder, c.wantCallsMade)
		}
		if c.fn != nil && strings.Contains(c.want, "boom") && !errors.Is(err, boom) {
			t.Errorf("%s: %v does not wrap fn's error", c.name, err)
		}
		if r != nil && r.snapshot().calls != 2 {
			t.Errorf("%s: %d calls recorded, want 2", c.name, r.snapshot().calls)
		}
	}
}

// TestNilArguments (issue 12, defect 13): nil writers, readers and
// contexts are errors or defaults, and a zero Recorder records; nothing
// panics.
func TestNilArguments(t *testing.T) {
	r := goldenRecording()
	if err := r.WriteSummary(nil); err == nil || !strings.Contains(err.Error(), "nil io.Writer") {
		t.Errorf("WriteSummary(nil) = %v", err)
	}
	if err := r.WriteTrace(nil); err == nil || !strings.Contains(err.Error(), "nil io.Writer") {
		t.Errorf("WriteTrace(nil) = %v", err)
	}
	var nr *Recorder
	if err := nr.WriteSummary(nil); err == nil {
		t.Errorf("(*Recorder)(nil).WriteSummary(nil) succeeded")
	}
	var buf bytes.Buffer
	if err := nr.WriteSummary(&buf); err != nil || !strings.Contains(buf.String(), "No kernel or copy spans recorded") {
		t.Errorf("(*Recorder)(nil).WriteSummary = %v, %q", err, buf.String())
	}
	if err := Validate(nil); err == nil {
		t.Errorf("Validate(nil) succeeded")
	}
	var nilCtx context.Context // a variable, as a literal nil is flagged by vet tools
	if FromContext(NewContext(nilCtx, r)) != r {
		t.Errorf("NewContext(nil, r) does not carry r")
	}
	if FromContext(nilCtx) != nil {
		t.Errorf("FromContext(nil) is not nil")
	}
	var z Recorder
	z.SetMeta("k", "v")
	pid := z.Process("cpu", 0)
	tid := z.Thread(pid, "run 0", 0)
	z.Span(pid, tid, "kernel", "k", 0, 1, &Kernel{Op: "Exp"}, nil)
	if pid != 1 || tid != 1 {
		t.Errorf("a zero Recorder gave pid %d tid %d, want 1 and 1", pid, tid)
	}
	buf.Reset()
	if err := z.WriteTrace(&buf); err != nil || !strings.Contains(buf.String(), `"k":"v"`) {
		t.Errorf("a zero Recorder's trace: %v\n%s", err, buf.String())
	}
}
