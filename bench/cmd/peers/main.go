// Command peers runs loom's peer benchmarks (issue 7): the same workloads
// in loom, Gorgonia and PyTorch (CPU), timed alternately in one process,
// printed as one table of medians and speed-ups, and written as JSON to
// results/<timestamp>.json.
//
//	go run ./cmd/peers                      # everything, 1 thread, 5 rounds
//	go run ./cmd/peers -threads 2 -rounds 8
//	go run ./cmd/peers -filter 'matmul|mlp'
//	go run ./cmd/peers -quick -rounds 1     # smoke test
//	go run ./cmd/peers -check               # cross-check the engines' numbers
//
// From the repository root: make bench-peers ARGS='-threads 2'.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loomgraph/loom/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		threads = fs.Int("threads", 1, "threads for every engine: GOMAXPROCS, loom's cpu.Threads, torch.set_num_threads")
		rounds  = fs.Int("rounds", 5, "timing rounds per workload (engines alternate within a round); medians are reported")
		target  = fs.Duration("target", 300*time.Millisecond, "duration of one timing (iterations are calibrated to it)")
		filter  = fs.String("filter", "", "regexp: run only the workloads whose names match")
		quick   = fs.Bool("quick", false, "small workloads only (smoke test)")
		engines = fs.String("engines", strings.Join(bench.EngineNames, ","), "engines to run, comma-separated")
		vm      = fs.String("gorgonia-vm", "tape", "Gorgonia VM: tape (faster) or lisp (wrong training after the first step in v0.9.18)")
		python  = fs.String("python", bench.DefaultPython, "Python interpreter with torch (Debian's python3-torch lives in /usr/bin/python3)")
		install = fs.Bool("install-torch", true, "apt-get install python3-torch python3-numpy when torch is missing")
		inplace = fs.Bool("torch-inplace", false, "PyTorch chains with in-place ops (y.mul_, y.add_, tanh(out=y)) after one clone, instead of out-of-place")
		results = fs.String("results", "results", "directory for the JSON results (\"\" = none)")
		check   = fs.Bool("check", false, "cross-check the engines' outputs against loom instead of timing")
		quiet   = fs.Bool("q", false, "no progress on stderr")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "peers: unexpected arguments %q\n", fs.Args())
		return 2
	}
	log := stderr
	if *quiet {
		log = io.Discard
	}
	cfg := bench.Config{
		Threads: *threads, Rounds: *rounds, Target: *target, Filter: *filter, Quick: *quick,
		Engines: strings.Split(*engines, ","), GorgoniaVM: *vm, Python: *python,
		InstallTorch: *install, TorchInPlace: *inplace, ResultsDir: *results, Out: stdout, Log: log,
	}
	if *check {
		if _, err := bench.CrossCheckAll(cfg); err != nil {
			fmt.Fprintf(stderr, "peers: %v\n", err)
			return 1
		}
		return 0
	}
	if _, err := bench.Run(cfg); err != nil {
		fmt.Fprintf(stderr, "peers: %v\n", err)
		return 1
	}
	return 0
}
