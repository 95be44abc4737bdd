// Command linalg times loom's Cholesky and Solve against NumPy's (OpenBLAS
// LAPACK through /usr/bin/python3, bench/linalg_numpy.py) on the same n×n
// float64 matrix, single-threaded, in alternating rounds, and prints the
// medians and the ratio loom/NumPy (issue 16's target: at most 1.5).
//
//	cd bench && go run ./cmd/linalg                  # n = 1024, 7 rounds
//	go run ./cmd/linalg -n 512,1024 -rounds 9 -ops cholesky
//	go run ./cmd/linalg -gonum   # gonum's LAPACK in a third column
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/loomgraph/loom/bench"
)

func main() {
	sizes := flag.String("n", "1024", "matrix sizes, comma-separated")
	opsFlag := flag.String("ops", "cholesky,solve", "workloads")
	rounds := flag.Int("rounds", 7, "alternating rounds")
	reps := flag.Int("reps", 5, "calls per timing")
	python := flag.String("python", "/usr/bin/python3", "python with numpy")
	gonum := flag.Bool("gonum", false, "also time gonum's Dpotrf / Dgetrf+Dgetrs")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	fmt.Printf("%-14s %12s %12s %12s %10s  %s\n", "workload", "loom", "numpy", "gonum", "loom/numpy", "checksums (loom, numpy)")
	for _, op := range strings.Split(*opsFlag, ",") {
		for _, ns := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(ns)
			if err != nil {
				fail(err)
			}
			l, err := bench.NewLinalgLoom(op, n)
			if err != nil {
				fail(err)
			}
			if _, err := l.Time(1); err != nil { // warm up
				fail(err)
			}
			var lt, nt, gt []float64
			var nsum float64
			for r := range *rounds {
				run := func() {
					d, err := l.Time(*reps)
					if err != nil {
						fail(err)
					}
					lt = append(lt, d.Seconds())
				}
				twin := func() {
					s, sum := numpy(*python, op, n, *reps)
					nt = append(nt, s)
					nsum = sum
				}
				if r%2 == 0 {
					run()
					twin()
				} else {
					twin()
					run()
				}
				if *gonum {
					gt = append(gt, bench.GonumLinalg(op, n, max(1, *reps/2)).Seconds())
				}
			}
			lm, nm := median(lt), median(nt)
			gs := "-"
			if len(gt) > 0 {
				gs = fmt.Sprintf("%.2fms", median(gt)*1e3)
			}
			fmt.Printf("%-14s %10.2fms %10.2fms %12s %10.2f  %.6g, %.6g\n", fmt.Sprintf("%s/%d", op, n), lm*1e3, nm*1e3, gs, lm/nm, l.Checksum(), nsum)
			if d := math.Abs(l.Checksum() - nsum); d > 1e-6*(1+math.Abs(nsum)) {
				fmt.Printf("  checksums differ by %g\n", d)
			}
			l.Close()
		}
	}
}

func numpy(python, op string, n, reps int) (float64, float64) {
	cmd := exec.Command(python, "linalg_numpy.py", op, strconv.Itoa(n), strconv.Itoa(reps))
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("%s linalg_numpy.py: %w", python, err))
	}
	var r struct {
		Seconds  float64 `json:"seconds"`
		Checksum float64 `json:"checksum"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		fail(err)
	}
	return r.Seconds, r.Checksum
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "linalg:", err)
	os.Exit(1)
}
