package profile

import (
	"context"
	"strings"
	"testing"
)

// summaryRecording has two runs of 10 µs on one CPU thread, each a copy,
// two MatMuls from different call sites and a fused kernel, plus a
// compile pass that is not kernel time:
//
//	run 1: copy 1000 ns, MatMul@38 4000 ns, MatMul@52 500 ns, fused 1000 ns
//	run 2: copy 2500 ns, MatMul@38 6000 ns, MatMul@52 500 ns, fused 1000 ns
func summaryRecording() *Recorder {
	r := New()
	cpu := r.Process("cpu", 0)
	compile := r.Process("compile", 1)
	th := r.Thread(cpu, "run", 0)
	pass := r.Thread(compile, "passes", 0)
	r.Span(compile, pass, "compile", "fusion", 0, 50000, nil, nil)
	mm38 := &Kernel{Name: "MatMul", Op: "MatMul", Nodes: []int{3}, Site: "model.go:38", FLOPs: 1e6, BytesRead: 30000, BytesWritten: 2000}
	mm52 := &Kernel{Name: "MatMul", Op: "MatMul", Nodes: []int{7}, Site: "model.go:52", FLOPs: 1e5, BytesRead: 3000, BytesWritten: 1000}
	fused := &Kernel{Name: "fused[Add,Tanh]", Op: "Fused", Fused: []string{"Add", "Tanh"}, Nodes: []int{4, 5},
		Site: "model.go:39", FLOPs: 2000, BytesRead: 6000, BytesWritten: 2000}
	for _, run := range []struct{ start, copy, mm int64 }{{100000, 1000, 4000}, {200000, 2500, 6000}} {
		s := run.start
		r.Span(cpu, th, "run", "run", s, s+10000, nil, nil)
		r.Span(cpu, th, "copy", "copy h2d", s, s+run.copy, nil, nil)
		s += run.copy
		r.Span(cpu, th, "kernel", "", s, s+run.mm, mm38, nil)
		s += run.mm
		r.Span(cpu, th, "kernel", "", s, s+500, mm52, nil)
		s += 500
		r.Span(cpu, th, "kernel", "", s, s+1000, fused, nil)
	}
	return r
}

func TestWriteSummary(t *testing.T) {
	var b strings.Builder
	if err := summaryRecording().WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	// Run time: 2 runs of 10 µs = 20 µs, 10 µs each. Kernel time, the
	// copies and kernels: 1000+4000+500+1000 + 2500+6000+500+1000 = 16500 ns
	// in 8 calls. Count and total are per run (divided by 2).
	//
	// By op, sorted by total:
	//   MatMul:   4 calls (2 per run), 4000+500+6000+500 = 11000 ns
	//             (5.50 µs per run, 2.75 µs mean), 11000/16500 = 66.7 %,
	//             FLOPs 2*(1e6+1e5) = 2.2e6 / 11000 ns = 200.00 GFLOP/s,
	//             bytes 2*(32000+4000) = 72000 / 11000 ns = 6.55 GB/s
	//   copy h2d: 2 calls, 3500 ns (1.75 µs per run and mean), 21.2 %,
	//             no FLOPs or bytes
	//   Fused:    2 calls, 2000 ns (1.00 µs), 12.1 %,
	//             4000 FLOPs / 2000 ns = 2.00, 16000 B / 2000 ns = 8.00
	// By kernel, MatMul splits by site:
	//   model.go:38: 10000 ns (5.00 µs), 60.6 %, 2e6/10000 = 200.00,
	//                64000/10000 = 6.40
	//   model.go:52: 1000 ns (500 ns), 6.1 %, 2e5/1000 = 200.00,
	//                8000/1000 = 8.00
	want := `Runs: 2, total run time 20.00 µs, mean 10.00 µs per run.
Kernel time: 16.50 µs in 8 kernel calls; count and total are means per run (of 2).

By op:
op        count    total     mean  % time  GFLOP/s  GB/s
MatMul        2  5.50 µs  2.75 µs    66.7   200.00  6.55
copy h2d      1  1.75 µs  1.75 µs    21.2        -     -
Fused         1  1.00 µs  1.00 µs    12.1     2.00  8.00

By kernel:
kernel           site         nodes  count    total     mean  % time  GFLOP/s  GB/s
MatMul           model.go:38  3          1  5.00 µs  5.00 µs    60.6   200.00  6.40
copy h2d         -            -          1  1.75 µs  1.75 µs    21.2        -     -
fused[Add,Tanh]  model.go:39  4,5        1  1.00 µs  1.00 µs    12.1     2.00  8.00
MatMul           model.go:52  7          1   500 ns   500 ns     6.1   200.00  8.00
`
	if got := b.String(); got != want {
		t.Errorf("WriteSummary:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteSummaryCases(t *testing.T) {
	oneRun := New()
	cpu := oneRun.Process("cpu", 0)
	th := oneRun.Thread(cpu, "run", 0)
	oneRun.Span(cpu, th, "run", "run", 0, 3e9, nil, nil)
	// 3 kernels in one run: counts are whole, not per run.
	for i := range int64(3) {
		oneRun.Span(cpu, th, "kernel", "Exp", i*1e9, (i+1)*1e9, &Kernel{Name: "Exp", Op: "Exp"}, nil)
	}

	onlyRun := New()
	onlyRun.Span(1, 1, "run", "run", 0, 8000, nil, nil)

	threeRuns := New()
	for i := range int64(3) {
		threeRuns.Span(1, 1, "run", "run", i*100, i*100+50, nil, nil)
	}
	// 4 kernels over 3 runs: 4/3 = 1.3 per run.
	for i := range int64(4) {
		threeRuns.Span(1, 1, "kernel", "Neg", i*50, i*50+10, nil, nil)
	}

	for _, c := range []struct {
		name string
		r    *Recorder
		want []string
	}{
		{"nil", nil, []string{"No kernel or copy spans recorded.\n"}},
		{"no kernels", onlyRun, []string{"Runs: 1, total run time 8.00 µs, mean 8.00 µs per run.\nNo kernel"}},
		// 3 s in 3 calls of 1 s, 100 % of the kernel time.
		{"one run", oneRun, []string{"Runs: 1, total run time 3.000 s", "Kernel time: 3.000 s in 3 kernel calls.\n",
			"Exp      3  3.000 s  1.000 s   100.0"}},
		// Count 4/3 = 1.3 and total 40/3 = 13 ns per run; mean 10 ns.
		{"fractional counts", threeRuns, []string{"means per run (of 3)", "Neg    1.3  13 ns  10 ns   100.0"}},
	} {
		var b strings.Builder
		if err := c.r.WriteSummary(&b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: summary lacks %q:\n%s", c.name, w, b.String())
			}
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{0, "0 ns"}, {999, "999 ns"}, {1000, "1.00 µs"}, {1234567, "1.23 ms"}, {2.5e9, "2.500 s"},
	} {
		if got := formatNs(c.ns); got != c.want {
			t.Errorf("formatNs(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
	for _, c := range []struct {
		nodes []int
		want  string
	}{
		{nil, ""}, {[]int{3}, "3"}, {[]int{1, 2, 3, 4, 5, 6, 7, 8}, "1,2,3,4,5,6,7,8"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "1,2,3,4,5,6,7,8,…+2"},
	} {
		if got := formatNodes(c.nodes); got != c.want {
			t.Errorf("formatNodes(%v) = %q, want %q", c.nodes, got, c.want)
		}
	}
}

func TestFunctionSummary(t *testing.T) {
	r, err := Function(context.Background(), 1, 4, func(ctx context.Context) error {
		rec := FromContext(ctx)
		pid := rec.Process("cpu", 0)
		tid := rec.Thread(pid, "run", 0)
		start := rec.Now()
		rec.Span(pid, tid, "kernel", "Add", start, start+100, &Kernel{Name: "Add", Op: "Add", FLOPs: 50}, nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	// One Add of 100 ns per call, 4 calls: count 1 and total 100 ns per
	// call, 50 FLOPs / 100 ns = 0.50 GFLOP/s.
	for _, w := range []string{
		"Function: 4 recorded calls after 1 warm-up calls.\n",
		"Kernel time: 400 ns in 4 kernel calls; count and total are means per call (of 4).",
		"Add      1  100 ns  100 ns   100.0     0.50",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, b.String())
		}
	}
}
