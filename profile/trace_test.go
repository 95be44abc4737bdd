package profile

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRecording is a small recording with fixed timestamps (ns): a
// compile pass, then one run on the CPU whose run thread hands a fused
// kernel to a worker, with a memory counter and two instants.
func goldenRecording() *Recorder {
	r := New()
	r.SetMeta("loom_version", "v0.0.0-test")
	r.SetMeta("backend", "cpu")
	r.SetMeta("generator", "ignored: the generator is always loom profile")
	cpu := r.Process("cpu", 0)
	compile := r.Process("compile", -1) // sorted before cpu
	run := r.Thread(cpu, "run 0", 0)
	worker := r.Thread(cpu, "worker 1", 1)
	passes := r.Thread(compile, "passes", 0)

	r.Span(compile, passes, "compile", "fusion", 0, 1500, nil, map[string]any{"groups": 1})
	// 1005 ns is one of the values whose three-decimal form Perfetto
	// would read as 1004 ns; it is written as 1.0050000000000001.
	r.Instant(compile, passes, "fused 2 ops", 1005, map[string]any{"ops": []string{"Add", "Tanh"}})

	r.Span(cpu, run, "run", "run 0", 2000, 10000, nil, nil)
	r.Counter(cpu, "memory", 2000, map[string]float64{"bytes": 204800})
	r.Instant(cpu, run, "feeds checked", 2050, nil)
	matmul := &Kernel{
		Name: "MatMul", Op: "MatMul", Nodes: []int{3},
		Inputs: []string{"f32[64,784]", "f32[784,10]"}, Outputs: []string{"f32[64,10]"},
		BytesRead:    (64*784 + 784*10) * 4, // 232064
		BytesWritten: 64 * 10 * 4,           // 2560
		FLOPs:        2 * 64 * 784 * 10,     // 1003520
		Site:         "model.go:38", Device: "cpu",
	}
	r.Span(cpu, run, "kernel", "", 2100, 6100, matmul, nil)
	r.Flow("launch", cpu, run, 6100, cpu, worker, 6100)
	fused := &Kernel{
		Name: "fused[Add,Tanh]", Op: "Fused", Fused: []string{"Add", "Tanh"}, Nodes: []int{4, 5},
		Inputs: []string{"f32[64,10]", "f32[10]"}, Outputs: []string{"f32[64,10]"},
		BytesRead: 2600, BytesWritten: 2560, FLOPs: 1280,
		Site: "model.go:39", Device: "cpu",
	}
	// The extra arg "device" overrides the kernel's.
	r.Span(cpu, worker, "kernel", "", 6100, 9001, fused, map[string]any{"chunks": 4, "device": "cpu/worker"})
	r.Counter(cpu, "memory", 9001, map[string]float64{"bytes": 2560, "bad": math.NaN()})
	r.Counter(cpu, "memory", 9500, map[string]float64{"bad": math.Inf(1)}) // dropped: no finite value
	return r
}

func TestWriteTraceGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenRecording().WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "trace.golden.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteTrace differs from %s (run go test -update to accept):\n%s", golden, buf.Bytes())
	}
	if err := Validate(bytes.NewReader(buf.Bytes())); err != nil {
		t.Errorf("golden trace does not validate:\n%v", err)
	}
}

// TestWriteTraceShape checks the parts of the golden trace that matter to
// viewers by decoding it, so that a wrong -update would not hide them.
func TestWriteTraceShape(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenRecording().WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents     []map[string]any  `json:"traceEvents"`
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.DisplayTimeUnit != "ms" {
		t.Errorf("displayTimeUnit = %q, want ms", tr.DisplayTimeUnit)
	}
	wantMeta := map[string]string{"generator": "loom profile", "loom_version": "v0.0.0-test", "backend": "cpu"}
	for k, v := range wantMeta {
		if tr.OtherData[k] != v {
			t.Errorf("otherData[%q] = %q, want %q", k, tr.OtherData[k], v)
		}
	}
	// 2 processes and 3 threads, 2 M events each: 10 metadata events, then
	// 1 compile span, 2 instants, 1 run span, 2 counters (the third has no
	// finite value), 2 kernels, 2 flow events: 10 events.
	if got, want := len(tr.TraceEvents), 20; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}
	var phs []byte
	var lastTs float64
	for i, e := range tr.TraceEvents {
		ph := e["ph"].(string)
		phs = append(phs, ph[0])
		if i < 10 {
			continue
		}
		ts := e["ts"].(float64)
		if ts < lastTs {
			t.Errorf("event %d: ts %v before %v", i, ts, lastTs)
		}
		lastTs = ts
	}
	// Metadata first; at 6.1 µs the fused kernel (longer) precedes the
	// flow events recorded before it.
	if got, want := string(phs), "MMMMMMMMMM"+"XiXCiXXsfC"; got != want {
		t.Errorf("phases %s, want %s", got, want)
	}
	k := tr.TraceEvents[16] // the fused kernel
	args := k["args"].(map[string]any)
	for key, want := range map[string]any{
		"op": "Fused", "site": "model.go:39", "device": "cpu/worker", "chunks": 4.0,
		"flops": 1280.0, "bytes_read": 2600.0, "bytes_written": 2560.0,
	} {
		if args[key] != want {
			t.Errorf("fused kernel args[%q] = %v, want %v", key, args[key], want)
		}
	}
	if k["ts"] != 6.1 || k["dur"] != 2.901 { // 6100 ns and 9001-6100 ns
		t.Errorf("fused kernel ts, dur = %v, %v; want 6.1, 2.901", k["ts"], k["dur"])
	}
}

func TestAppendMicros(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "0.000"},
		{1, "0.001"},
		{999, "0.999"},
		{1000, "1.000"},
		{1500, "1.500"},
		// 1.005*1000 == 1004.9999999999999 in float64: the next float64 up.
		{1005, "1.0050000000000001"},
		{1001, "1.0010000000000001"},
		{123456789, "123456.789"},
	} {
		if got := string(appendMicros(nil, micros(c.ns))); got != c.want {
			t.Errorf("appendMicros(%d) = %s, want %s", c.ns, got, c.want)
		}
	}
}

// TestAppendMicrosPerfetto checks that Perfetto's conversion of what
// appendMicros writes, int64(x*1000), gives back every nanosecond count in
// ranges near 0, 1 ms, 1 s and 3 hours.
func TestAppendMicrosPerfetto(t *testing.T) {
	for _, base := range []int64{0, 1e6, 1e9, 1e13} {
		for ns := base; ns < base+20000; ns++ {
			s := string(appendMicros(nil, micros(ns)))
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || int64(f*1000) != ns {
				t.Fatalf("appendMicros(%d) = %s, which Perfetto reads as %d ns", ns, s, int64(f*1000))
			}
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"a\nb\tc\r", `"a\nb\tc\r"`},
		{"µs ✓", `"µs ✓"`},
		{"\x01\x7f", "\"\uFFFD\uFFFD\""},     // no \u escapes: old Perfetto rejects them
		{"bad\xffutf8", "\"bad\uFFFDutf8\""}, // invalid UTF-8 becomes U+FFFD
	} {
		got := string(appendString(nil, c.in))
		if got != c.want {
			t.Errorf("appendString(%q) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("appendString(%q) = %s is not JSON", c.in, got)
		}
	}
}

func TestAppendValue(t *testing.T) {
	type point struct{ X, Y int }
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{true, "true"},
		{-3, "-3"},
		{uint8(7), "7"},
		{2.5, "2.5"},
		{float32(0.25), "0.25"},
		{1e21, "1e+21"},
		{math.NaN(), `"NaN"`}, // JSON has no NaN: a string instead
		{math.Inf(-1), `"-Inf"`},
		{[]int{1, 2}, "[1,2]"},
		{[]int(nil), "[]"},
		{[]string{"a"}, `["a"]`},
		{[]float64{1, math.Inf(1)}, `[1,"+Inf"]`},
		{point{1, 2}, `{"X":1,"Y":2}`},
		{map[string]float64{"x": math.NaN()}, `"map[x:NaN]"`}, // json.Marshal fails
	} {
		if got := string(appendValue(nil, c.in)); got != c.want {
			t.Errorf("appendValue(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestWriteTraceNilAndEmpty(t *testing.T) {
	for name, r := range map[string]*Recorder{"nil": nil, "empty": New()} {
		var buf bytes.Buffer
		if err := r.WriteTrace(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := "{\"traceEvents\":[\n\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"loom profile\"}}\n"
		if buf.String() != want {
			t.Errorf("%s: got %q, want %q", name, buf.String(), want)
		}
		if err := Validate(&buf); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWriteTraceUnnamed checks that pids and tids used without Process or
// Thread get made-up names, so that the trace still validates.
func TestWriteTraceUnnamed(t *testing.T) {
	r := New()
	r.Span(7, 9, "kernel", "k", 0, 10, nil, nil)
	r.Counter(8, "memory", 5, map[string]float64{"bytes": 1})
	var buf bytes.Buffer
	if err := r.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := Validate(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	for _, want := range []string{`"args":{"name":"process 7"}`, `"args":{"name":"process 8"}`, `"args":{"name":"thread 9"}`} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("trace lacks %s:\n%s", want, buf.Bytes())
		}
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteErrors(t *testing.T) {
	r := goldenRecording()
	if err := r.WriteTrace(errWriter{}); err == nil {
		t.Error("WriteTrace to a failing writer returned nil")
	}
	if err := r.WriteSummary(errWriter{}); err == nil {
		t.Error("WriteSummary to a failing writer returned nil")
	}
}
