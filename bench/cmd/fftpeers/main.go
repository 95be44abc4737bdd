// Command fftpeers times loom's FFT (issue 16) against FFTW 3 (Debian's
// libfftw3, single precision, FFTW_MEASURE plans, called from the C
// harness bench/fftw/fftw_bench.c, which this command compiles with cc),
// numpy.fft and torch.fft (bench/fft_bench.py under /usr/bin/python3), on
// one thread, and prints the medians side by side with loom's ratio to
// each (peer time / loom time: above 1 means loom is faster). Each round
// times every engine once, in turn; the table shows medians over rounds.
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
	"slices"
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

	// Every round times every engine once (loom, FFTW, numpy/torch), so
	// that the machine's load drifts over all of them alike; the table
	// shows the medians over the rounds.
	times := map[string]map[string][]float64{} // engine -> workload -> ns per round
	add := func(engine, name string, ns float64) {
		if times[engine] == nil {
			times[engine] = map[string][]float64{}
		}
		times[engine][name] = append(times[engine][name], ns)
	}
	var notes []string
	note := func(n string) {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	fftwBin, cleanup, fftwErr := buildFFTW()
	defer cleanup()
	if fftwErr != nil {
		note("FFTW: n/a (" + fftwErr.Error() + ")")
	}
	for r := range *rounds {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", r+1, *rounds)
		for _, w := range bench.FFTWorkloads {
			if !strings.Contains(w.Name, *filter) {
				continue
			}
			run, _, closeFn, err := w.LoomFFT(1)
			if err != nil {
				fmt.Fprintln(os.Stderr, "loom:", err)
				os.Exit(1)
			}
			d, err := bench.TimeMedian(run, *target, 1)
			closeFn()
			if err != nil {
				fmt.Fprintln(os.Stderr, "loom:", err)
				os.Exit(1)
			}
			add("loom", w.Name, float64(d.Nanoseconds()))
		}
		if fftwErr == nil {
			lines, err := runFFTW(fftwBin, *target, *filter)
			if err != nil {
				note("FFTW: n/a (" + err.Error() + ")")
			}
			for _, l := range lines {
				add("FFTW", l.Name, l.NS)
			}
		}
		out, err := exec.Command(*python, "fft_bench.py", fmt.Sprint(target.Milliseconds()), "1", *filter).Output()
		if err != nil {
			note(fmt.Sprintf("numpy/torch: n/a (%s fft_bench.py: %v)", *python, err))
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var raw map[string]any
			if json.Unmarshal(sc.Bytes(), &raw) != nil {
				continue
			}
			if raw["engine"] == "versions" {
				note(fmt.Sprintf("numpy %v, torch %v", raw["numpy"], raw["torch"]))
				continue
			}
			name, _ := raw["name"].(string)
			engine, _ := raw["engine"].(string)
			ns, _ := raw["ns"].(float64)
			add(engine, name, ns)
		}
	}
	res := map[string]map[string]float64{}
	for e, ws := range times {
		res[e] = map[string]float64{}
		for name, ts := range ws {
			slices.Sort(ts)
			res[e][name] = ts[len(ts)/2]
		}
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
	fmt.Println()
	for _, n := range notes {
		fmt.Println(n)
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

// buildFFTW compiles fftw/fftw_bench.c; it fails, saying why, without a
// C compiler or libfftw3-dev.
func buildFFTW() (bin string, cleanup func(), err error) {
	cleanup = func() {}
	if _, err := exec.LookPath("cc"); err != nil {
		return "", cleanup, fmt.Errorf("no C compiler (cc)")
	}
	if _, err := os.Stat("/usr/include/fftw3.h"); err != nil {
		return "", cleanup, fmt.Errorf("fftw3.h not found: apt-get install libfftw3-dev")
	}
	dir, err := os.MkdirTemp("", "fftw_bench")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "fftw_bench")
	if out, err := exec.Command("cc", "-O2", "-o", bin, filepath.Join("fftw", "fftw_bench.c"), "-lfftw3f", "-lm").CombinedOutput(); err != nil {
		return "", cleanup, fmt.Errorf("cc: %v: %s", err, out)
	}
	return bin, cleanup, nil
}

type fftwLine struct {
	Name string  `json:"name"`
	NS   float64 `json:"ns"`
}

// runFFTW runs one round of the harness (it plans with FFTW_MEASURE every
// time; the planning is not timed).
func runFFTW(bin string, target time.Duration, filter string) ([]fftwLine, error) {
	out, err := exec.Command(bin, fmt.Sprint(target.Milliseconds()), "1", filter).Output()
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
