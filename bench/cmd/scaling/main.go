// Command scaling times loom at several thread counts side by side on
// every peer-benchmark workload (issue 20: more cores must never make loom
// slower), and optionally PyTorch at several: one table of medians, the
// ratios 2 vs 1, 16 vs 2 and 64 vs 2 (time over time, <1: faster), loom's
// allocations per iteration and a verdict; JSON in
// results/scaling-<timestamp>.json.
//
// GOMAXPROCS is runtime.NumCPU() for the whole run; loom@n is a CPU
// backend with cpu.Threads(n), so counts above the CPUs oversubscribe the
// pool (the simulated many-core check). Every instance is calibrated,
// then timed once per round, the order rotating from round to round, as
// cmd/peers does.
//
//	go run ./cmd/scaling                      # threads 1,2,16,64; 5 rounds
//	go run ./cmd/scaling -filter xent -torch 1,2
//	go run ./cmd/scaling -markdown -results "" # the README's table
//	go run ./cmd/scaling -quick -rounds 1     # smoke test
//
// From the repository root: make bench-scaling ARGS='-torch 2'.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loomgraph/loom/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scaling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		threads  = fs.String("threads", "1,2,16,64", "loom thread counts (cpu.Threads), comma-separated; counts above the CPUs oversubscribe the pool")
		torch    = fs.String("torch", "", "PyTorch thread counts (torch.set_num_threads, one Python process each), comma-separated; \"\" = no PyTorch")
		rounds   = fs.Int("rounds", 5, "timing rounds per workload (instances alternate within a round); medians are reported")
		target   = fs.Duration("target", 300*time.Millisecond, "duration of one timing (iterations are calibrated to it)")
		filter   = fs.String("filter", "", "regexp: run only the workloads whose names match")
		quick    = fs.Bool("quick", false, "small workloads only (smoke test)")
		python   = fs.String("python", bench.DefaultPython, "Python interpreter with torch (Debian's python3-torch lives in /usr/bin/python3)")
		install  = fs.Bool("install-torch", true, "with -torch: apt-get install python3-torch python3-numpy when torch is missing")
		results  = fs.String("results", "results", "directory for the JSON results (\"\" = none)")
		markdown = fs.Bool("markdown", false, "print the table as Markdown (for the README)")
		quiet    = fs.Bool("q", false, "no progress on stderr")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scaling: unexpected arguments %q\n", fs.Args())
		return 2
	}
	ts, err := bench.ParseThreads(*threads)
	if err == nil && len(ts) == 0 {
		err = fmt.Errorf("no thread count")
	}
	if err != nil {
		fmt.Fprintf(stderr, "scaling: -threads: %v\n", err)
		return 2
	}
	tts, err := bench.ParseThreads(*torch)
	if err != nil {
		fmt.Fprintf(stderr, "scaling: -torch: %v\n", err)
		return 2
	}
	log := stderr
	if *quiet {
		log = io.Discard
	}
	cfg := bench.ScalingConfig{
		Threads: ts, TorchThreads: tts, Rounds: *rounds, Target: *target, Filter: *filter, Quick: *quick,
		Python: *python, InstallTorch: *install, ResultsDir: *results, Markdown: *markdown, Out: stdout, Log: log,
	}
	if _, err := bench.RunScaling(cfg); err != nil {
		fmt.Fprintf(stderr, "scaling: %v\n", err)
		return 1
	}
	return 0
}
