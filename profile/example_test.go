package profile_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/loomgraph/loom/profile"
)

// An executor records a run and its kernels; the summary shows where the
// time went and the trace passes the validator. (Real recordings take
// their timestamps from Recorder.Now.)
func Example() {
	rec := profile.New()
	cpu := rec.Process("cpu", 0)
	run := rec.Thread(cpu, "run 0", 0)
	rec.Span(cpu, run, "run", "run 0", 0, 10_000, nil, nil)
	rec.Span(cpu, run, "kernel", "", 1_000, 9_000, &profile.Kernel{
		Name: "MatMul", Op: "MatMul", Nodes: []int{3},
		Inputs: []string{"f32[64,784]", "f32[784,10]"}, Outputs: []string{"f32[64,10]"},
		FLOPs:        2 * 64 * 784 * 10,     // 1003520 in 8 µs: 125.44 GFLOP/s
		BytesRead:    (64*784 + 784*10) * 4, // 232064
		BytesWritten: 64 * 10 * 4,           // 2560, with the reads 234624 B in 8 µs: 29.33 GB/s
		Site:         "model.go:38", Device: "cpu",
	}, nil)
	rec.Span(cpu, run, "kernel", "Tanh", 9_000, 10_000, &profile.Kernel{Name: "Tanh", Op: "Tanh", Nodes: []int{4}}, nil)

	if err := rec.WriteSummary(os.Stdout); err != nil {
		fmt.Println(err)
	}
	var trace bytes.Buffer
	if err := rec.WriteTrace(&trace); err != nil {
		fmt.Println(err)
	}
	fmt.Println("valid:", profile.Validate(&trace) == nil)
	// Output:
	// Runs: 1, total run time 10.00 µs, mean 10.00 µs per run.
	// Kernel time: 9.00 µs in 2 kernel calls.
	//
	// By op:
	// op      count    total     mean  % time  GFLOP/s   GB/s
	// MatMul      1  8.00 µs  8.00 µs    88.9   125.44  29.33
	// Tanh        1  1.00 µs  1.00 µs    11.1        -      -
	//
	// By kernel:
	// kernel  site         nodes  count    total     mean  % time  GFLOP/s   GB/s
	// MatMul  model.go:38  3          1  8.00 µs  8.00 µs    88.9   125.44  29.33
	// Tanh    -            4          1  1.00 µs  1.00 µs    11.1        -      -
	// valid: true
}

// Function profiles a function like phiml's profile_function: warm-up
// calls first, then recorded ones, whose Recorder it returns.
func ExampleFunction() {
	calls := 0
	rec, err := profile.Function(context.Background(), 2, 3, func(ctx context.Context) error {
		calls++
		// A Program.Run(ctx, feeds) here records into
		// profile.FromContext(ctx), which is nil in the warm-up calls.
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var summary strings.Builder
	if err := rec.WriteSummary(&summary); err != nil {
		fmt.Println(err)
	}
	fmt.Println(calls, "calls")
	fmt.Print(summary.String())
	// Output:
	// 5 calls
	// Function: 3 recorded calls after 2 warm-up calls.
	// No kernel or copy spans recorded.
}

// Validate lists what a trace gets wrong, by event index.
func ExampleValidate() {
	trace := `[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"cpu"}},
{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},
{"name":"b","ph":"X","pid":1,"tid":1,"ts":5,"dur":10},
{"name":"c","ph":"X","pid":1,"tid":1,"ts":20}
]`
	fmt.Println(profile.Validate(strings.NewReader(trace)))
	// Output:
	// event 1: pid 1 tid 1 has no thread_name metadata event
	// event 2: slice [5µs, 15µs] partially overlaps slice [0µs, 10µs] (event 1) on pid 1 tid 1; slices on a thread must nest
	// event 3: missing dur
}
