package bench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestParseThreads(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"1,2,16,64", []int{1, 2, 16, 64}},
		{"64, 2,1,2,16,", []int{1, 2, 16, 64}}, // sorted, duplicates and empty fields dropped
		{"", nil},
		{"3", []int{3}},
	} {
		got, err := ParseThreads(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseThreads(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"0", "-1", "a", "1x", "2,x", "01"} {
		if got, err := ParseThreads(in); err == nil {
			t.Errorf("ParseThreads(%q) = %v, want an error", in, got)
		}
	}
}

func TestScalingRatios(t *testing.T) {
	tol := ScalingTolerance
	for _, c := range []struct {
		ts   []int
		ncpu int
		want []Ratio
	}{
		// Issue 20 on its 2-core machine: 2 vs 1 on real cores (no
		// tolerance), 16 and 64 oversubscribed, each against 2.
		{[]int{1, 2, 16, 64}, 2, []Ratio{{Of: 2, Base: 1}, {Of: 16, Base: 2, Tolerance: tol}, {Of: 64, Base: 2, Tolerance: tol}}},
		// 32 CPUs: 16 is a real core count, compared with the previous
		// count (2); only 64 is oversubscribed, against 16 (the largest ≤ 32).
		{[]int{1, 2, 16, 64}, 32, []Ratio{{Of: 2, Base: 1}, {Of: 16, Base: 2}, {Of: 64, Base: 16, Tolerance: tol}}},
		// 1 CPU: every count after 1 is oversubscribed, against 1.
		{[]int{1, 2, 16}, 1, []Ratio{{Of: 2, Base: 1, Tolerance: tol}, {Of: 16, Base: 1, Tolerance: tol}}},
		// No count ≤ ncpu: the first count is the base.
		{[]int{4, 8}, 2, []Ratio{{Of: 8, Base: 4, Tolerance: tol}}},
		// One count: nothing to compare.
		{[]int{2}, 2, nil},
	} {
		if got := ScalingRatios(c.ts, c.ncpu); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ScalingRatios(%v, %d) = %+v, want %+v", c.ts, c.ncpu, got, c.want)
		}
	}
	if n := (Ratio{Of: 64, Base: 2}).Name(); n != "64 vs 2" {
		t.Errorf("Name = %q", n)
	}
}

// res is a result with median ns and allocs allocations per iteration.
func res(engine string, ns, allocs float64) *EngineResult {
	return &EngineResult{Engine: engine, Iters: 1, NsPerIter: []float64{ns}, MedianNs: ns, Allocs: &allocs}
}

// loomAt is loom's results at 1, 2, 16 and 64 threads with the medians ns
// (in that order; 0 = failed) and no allocations.
func loomAt(ns ...float64) map[int]*EngineResult {
	m := map[int]*EngineResult{}
	for i, n := range []int{1, 2, 16, 64} {
		if ns[i] == 0 {
			m[n] = &EngineResult{Engine: loomLabel(n), Error: "failed"}
			continue
		}
		m[n] = res(loomLabel(n), ns[i], 0)
	}
	return m
}

func TestJudge(t *testing.T) {
	ratios := ScalingRatios([]int{1, 2, 16, 64}, 2) // 2 vs 1, 16 vs 2, 64 vs 2
	for _, c := range []struct {
		name    string
		loom    map[int]*EngineResult
		values  []float64 // the ratios' values, in order
		verdict string
	}{
		// 240/300 = 0.80, 252/240 = 1.05 (within 10%), 216/240 = 0.90:
		// none slower than allowed.
		{"ok", loomAt(300e3, 240e3, 252e3, 216e3), []float64{0.8, 1.05, 0.9}, "ok"},
		// 250/200 = 1.25 (2 slower than 1 by 25%), 240/250 = 0.96,
		// 300/250 = 1.20 (64 more than 10% slower than 2 by 20%).
		{"slower", loomAt(200e3, 250e3, 240e3, 300e3), []float64{1.25, 0.96, 1.2}, "SLOWER: 2 vs 1 +25%, 64 vs 2 +20%"},
		// 101/100: 2 vs 1 has no tolerance, +1% is flagged; 16 and 64
		// at 108/101 = 1.069... and 110/101 = 1.089... stay within 10%.
		{"strict", loomAt(100e3, 101e3, 108e3, 110e3), []float64{1.01, 108.0 / 101, 110.0 / 101}, "SLOWER: 2 vs 1 +1%"},
		// loom@64 failed: its ratio is missing (0) and the verdict n/a.
		{"missing", loomAt(300e3, 240e3, 252e3, 0), []float64{0.8, 1.05, 0}, "n/a"},
		// A slower comparison outweighs a missing one.
		{"missing and slower", loomAt(200e3, 250e3, 0, 240e3), []float64{1.25, 0, 0.96}, "SLOWER: 2 vs 1 +25%"},
	} {
		w := &ScalingWorkload{Loom: c.loom}
		w.judge(ratios)
		if w.Verdict != c.verdict {
			t.Errorf("%s: verdict %q, want %q", c.name, w.Verdict, c.verdict)
		}
		for i, r := range w.Ratios {
			if d := r.Value - c.values[i]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%s: %s = %v, want %v", c.name, r.Name(), r.Value, c.values[i])
			}
			if want := c.values[i] > 1+r.Tolerance; r.Slower != want {
				t.Errorf("%s: %s slower = %v, want %v", c.name, r.Name(), r.Slower, want)
			}
		}
	}
	if len(ratios) != 3 || ratios[0].Value != 0 {
		t.Errorf("judge changed its argument: %+v", ratios)
	}
}

// testReport is a report of two workloads measured on 2 CPUs at loom
// 1, 2, 16, 64 and PyTorch 1, 2 (PyTorch failed at 1 on the first).
func testReport() *ScalingReport {
	rep := &ScalingReport{
		GOMAXPROCS: 2, Threads: []int{1, 2, 16, 64}, TorchThreads: []int{1, 2}, Rounds: 3, TargetS: 0.3,
		Machine: Machine{CPU: "Test CPU", LogicalCPUs: 2, Go: "go1.26", Platform: "linux/amd64",
			Versions: map[string]string{"loom": "0.1.0-dev", "pytorch": "torch 1.13"}},
		Workloads: []*ScalingWorkload{
			{
				Spec: XentSpec(256, 1000),
				Loom: loomAt(300e3, 240e3, 252e3, 216e3),
				PyTorch: map[int]*EngineResult{
					1: {Engine: "pytorch@1", Error: "failed"},
					2: res("pytorch@2", 200e3, 0),
				},
			},
			{
				Spec: MatMulSpec(64),
				Loom: map[int]*EngineResult{
					1: res("loom@1", 4e3, 0), 2: res("loom@2", 5e3, 0),
					16: res("loom@16", 5.5e3, 2), 64: res("loom@64", 6e3, 5),
				},
				PyTorch: map[int]*EngineResult{1: res("pytorch@1", 8e3, 0), 2: res("pytorch@2", 2.5e3, 0)},
			},
		},
	}
	for _, w := range rep.Workloads {
		w.judge(ScalingRatios(rep.Threads, rep.GOMAXPROCS))
	}
	return rep
}

func TestScalingRows(t *testing.T) {
	want := [][]string{
		{"workload", "loom@1", "loom@2", "loom@16", "loom@64", "pytorch@1", "pytorch@2",
			"2 vs 1", "16 vs 2", "64 vs 2", "loom vs pytorch@1", "loom vs pytorch@2", "allocs", "verdict"},
		// Medians 300, 240, 252, 216 µs (loomAt above); ratios 240/300,
		// 252/240, 216/240; loom@2 / pytorch@2 = 240/200 = 1.20; pytorch@1
		// failed, so loom vs pytorch@1 is n/a; no allocations at any count.
		{"xent/256x1000", "300 µs", "240 µs", "252 µs", "216 µs", "n/a", "200 µs",
			"0.80", "1.05", "0.90", "n/a", "1.20", "0", "ok"},
		// 5/4 = 1.25 (+25%), 5.5/5 = 1.10 (exactly at the tolerance, not
		// flagged: 5500.0/5000 and 1+0.10 are the same float64, the one
		// nearest 1.1), 6/5 = 1.20 (+20%);
		// loom/pytorch: 4/8 = 0.50 at 1, 5/2.5 = 2.00 at 2; allocs differ
		// by count: 0, 0, 2, 5.
		{"matmul/64", "4 µs", "5 µs", "5.5 µs", "6 µs", "8 µs", "2.5 µs",
			"1.25", "1.10", "1.20", "0.50", "2.00", "0/0/2/5", "SLOWER: 2 vs 1 +25%, 64 vs 2 +20%"},
	}
	if got := testReport().rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
}

func TestScalingTables(t *testing.T) {
	rep := testReport()
	var text, md bytes.Buffer
	rep.WriteTable(&text)
	rep.WriteMarkdown(&md)
	t.Logf("text:\n%s\nmarkdown:\n%s", text.String(), md.String())
	for _, s := range []string{
		"# GOMAXPROCS=2 (runtime.NumCPU()) for the whole run; loom@n = cpu.Threads(n) (16, 64: oversubscribed, the simulated many-core check); pytorch@n = torch.set_num_threads(n), one Python process per n\n",
		"# machine: Test CPU, 2 logical CPUs; go1.26 linux/amd64; loom 0.1.0-dev; torch 1.13\n",
		"# time per iteration: median of 3 round(s)",
	} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text table lacks %q", s)
		}
	}
	lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if f := strings.Fields(last); f[0] != "matmul/64" || !strings.HasSuffix(last, "SLOWER: 2 vs 1 +25%, 64 vs 2 +20%") {
		t.Errorf("last line %q", last)
	}
	for _, s := range []string{
		"- GOMAXPROCS=2 (runtime.NumCPU()) for the whole run;",
		"\n\n| workload | loom@1 | loom@2 | loom@16 | loom@64 | pytorch@1 | pytorch@2 | 2 vs 1 | 16 vs 2 | 64 vs 2 | loom vs pytorch@1 | loom vs pytorch@2 | allocs | verdict |\n" +
			"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n" +
			"| xent/256x1000 | 300 µs | 240 µs | 252 µs | 216 µs | n/a | 200 µs | 0.80 | 1.05 | 0.90 | n/a | 1.20 | 0 | ok |\n" +
			"| matmul/64 | 4 µs | 5 µs | 5.5 µs | 6 µs | 8 µs | 2.5 µs | 1.25 | 1.10 | 1.20 | 0.50 | 2.00 | 0/0/2/5 | SLOWER: 2 vs 1 +25%, 64 vs 2 +20% |\n",
	} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	if strings.Contains(md.String(), "\n#") {
		t.Errorf("markdown has a # line (a heading)")
	}

	// Without PyTorch the header and the table do not mention it.
	rep.TorchThreads, rep.Machine.Versions = nil, map[string]string{"loom": "0.1.0-dev"}
	for _, w := range rep.Workloads {
		w.PyTorch, w.VsTorch = nil, nil
	}
	text.Reset()
	rep.WriteTable(&text)
	if strings.Contains(text.String(), "pytorch") || strings.Contains(text.String(), "torch") {
		t.Errorf("loom-only table mentions PyTorch:\n%s", text.String())
	}
}
