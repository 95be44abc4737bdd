// Command fftpeers times loom's FFT (issue 16) against FFTW 3 (Debian's
// libfftw3, single precision, FFTW_MEASURE plans, called from the C
// harness bench/fftw/fftw_bench.c, which this command compiles with cc),
// numpy.fft and torch.fft (bench/fft_bench.py under /usr/bin/python3), on
// one thread, and prints the medians side by side with loom's ratio to
// each (peer time / loom time: above 1 means loom is faster).
//
//	go run ./cmd/fftpeers                  # from bench/
//	go run ./cmd/fftpeers -rounds 7 -target 500ms -filter 1d
//	make bench-fft                         # from the repository root
//
// FFTW is skipped, with the reason printed, when fftw3.h or cc is missing
// (apt-get install libfftw3-dev); numpy/torch likewise when the Python
// script fails.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/loomgraph/loom/bench"
)

func main() {
	rounds := flag.Int("rounds", 5, "timing rounds per workload and engine (medians are reported)")
	target := flag.Duration("target", 300*time.Millisecond, "duration of one timing")
	filter := flag.String("filter", "", "substring: run only the workloads whose names contain it")
	python := flag.String("python", bench.DefaultPython, "Python with numpy and torch")
	flag.Parse()
	runtime.GOMAXPROCS(1)

	res := map[string]map[string]float64{} // engine -> workload -> ns
	set := func(engine, name string, ns float64) {
		if res[engine] == nil {
			res[engine] = map[string]float64{}
		}
		res[engine][name] = ns
	}
	notes := []string{}

	// loom
	for _, w := range bench.FFTWorkloads {
		if !strings.Contains(w.Name, *filter) {
			continue
		}
		run, _, closeFn, err := w.LoomFFT(1)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loom:", err)
			os.Exit(1)
		}
		d, err := bench.TimeMedian(run, *target, *rounds)
		closeFn()
		if err != nil {
			fmt.Fprintln(os.Stderr, "loom:", err)
			os.Exit(1)
		}
		set("loom", w.Name, float64(d.Nanoseconds()))
		fmt.Fprintf(os.Stderr, "loom  %-24s %v\n", w.Name, d)
	}

	// FFTW
	if reason := fftwMissing(); reason != "" {
		notes = append(notes, "FFTW: n/a ("+reason+")")
	} else if lines, err := runFFTW(*target, *rounds, *filter); err != nil {
		notes = append(notes, "FFTW: n/a ("+err.Error()+")")
	} else {
		for _, l := range lines {
			set("FFTW", l.Name, l.NS)
		}
	}

	// numpy and torch
	script := "fft_bench.py"
	out, err := exec.Command(*python, script, fmt.Sprint(target.Milliseconds()), fmt.Sprint(*rounds), *filter).Output()
	if err != nil {
		notes = append(notes, fmt.Sprintf("numpy/torch: n/a (%s %s: %v)", *python, script, err))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var l struct {
			Engine string  `json:"engine"`
			Name   string  `json:"name"`
			NS     float64 `json:"ns"`
		}
		var raw map[string]any
		if json.Unmarshal(sc.Bytes(), &raw) != nil {
			continue
		}
		if raw["engine"] == "versions" {
			notes = append(notes, fmt.Sprintf("numpy %v, torch %v", raw["numpy"], raw["torch"]))
			continue
		}
		_ = json.Unmarshal(sc.Bytes(), &l)
		set(l.Engine, l.Name, l.NS)
	}

	engines := []string{"loom", "FFTW", "numpy", "torch"}
	fmt.Printf("| workload (1 thread, median) | %s | loom/FFTW | numpy/loom | torch/loom |\n", strings.Join(engines, " | "))
	fmt.Printf("|---|%s---|---|---|\n", strings.Repeat("---|", len(engines)))
	for _, w := range bench.FFTWorkloads {
		if !strings.Contains(w.Name, *filter) {
			continue
		}
		row := []string{w.Name}
		for _, e := range engines {
			row = append(row, fmtNS(res[e][w.Name]))
		}
		l := res["loom"][w.Name]
		row = append(row, ratio(l, res["FFTW"][w.Name]), ratio(res["numpy"][w.Name], l), ratio(res["torch"][w.Name], l))
		fmt.Printf("| %s |\n", strings.Join(row, " | "))
	}
	for _, n := range notes {
		fmt.Println("\n" + n)
	}
}

func fmtNS(ns float64) string {
	switch {
	case ns == 0:
		return "n/a"
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.2f ms", ns/1e6)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// fftwMissing says why the FFTW harness cannot be built ("" when it can).
func fftwMissing() string {
	if _, err := exec.LookPath("cc"); err != nil {
		return "no C compiler (cc)"
	}
	if _, err := os.Stat("/usr/include/fftw3.h"); err != nil {
		return "fftw3.h not found: apt-get install libfftw3-dev"
	}
	return ""
}

type fftwLine struct {
	Name string  `json:"name"`
	NS   float64 `json:"ns"`
}

func runFFTW(target time.Duration, rounds int, filter string) ([]fftwLine, error) {
	dir, err := os.MkdirTemp("", "fftw_bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "fftw_bench")
	if out, err := exec.Command("cc", "-O2", "-o", bin, filepath.Join("fftw", "fftw_bench.c"), "-lfftw3f", "-lm").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cc: %v: %s", err, out)
	}
	out, err := exec.Command(bin, fmt.Sprint(target.Milliseconds()), fmt.Sprint(rounds), filter).Output()
	if err != nil {
		return nil, err
	}
	var lines []fftwLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var l fftwLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
