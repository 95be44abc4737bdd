package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loomgraph/loom/exec/cpu"
)

// EngineNames are the engines of the comparison, in table order.
var EngineNames = []string{"loom", "gorgonia", "pytorch"}

// Config is what the runner (cmd/peers) runs.
type Config struct {
	Threads      int           // threads of every engine (GOMAXPROCS, cpu.Threads, torch.set_num_threads)
	Rounds       int           // timings per engine and workload; medians are reported
	Target       time.Duration // how long one timing lasts (iterations are calibrated to it)
	Filter       string        // regexp on workload names; "" = all
	Quick        bool          // small workloads only
	Engines      []string      // subset of EngineNames; nil = all
	GorgoniaVM   string        // "tape" (default) or "lisp"
	Python       string        // interpreter for PyTorch; "" = DefaultPython
	InstallTorch bool          // apt-get install python3-torch when it is missing
	TorchInPlace bool          // PyTorch chains with in-place ops instead of out-of-place
	ResultsDir   string        // where the JSON goes; "" = nowhere
	Out          io.Writer     // the table
	Log          io.Writer     // progress and engine messages; nil = discard
}

// Machine describes where the benchmark ran.
type Machine struct {
	CPU         string            `json:"cpu"`
	LogicalCPUs int               `json:"logical_cpus"`
	Go          string            `json:"go"`
	Platform    string            `json:"platform"`
	Versions    map[string]string `json:"versions"` // engine -> version
}

// EngineResult is one engine on one workload.
type EngineResult struct {
	Engine    string    `json:"engine"`
	Error     string    `json:"error,omitempty"` // why it did not run ("n/a")
	Iters     int       `json:"iters,omitempty"` // iterations per timing
	NsPerIter []float64 `json:"ns_per_iter,omitempty"`
	MedianNs  float64   `json:"median_ns,omitempty"`
	Allocs    *float64  `json:"allocs_per_iter,omitempty"` // Go engines only
	GFLOPs    float64   `json:"gflops,omitempty"`          // at the median, where FLOPs are defined
	GBs       float64   `json:"gbs,omitempty"`             // at the median, where Spec.Bytes is defined
}

func (r *EngineResult) ok() bool { return r != nil && r.Error == "" && r.MedianNs > 0 }

// WorkloadResult is one row of the table.
type WorkloadResult struct {
	Spec    Spec                     `json:"spec"`
	Engines map[string]*EngineResult `json:"engines"`
	// Speedup is the peer's median over loom's, per peer (>1: loom faster).
	Speedup map[string]float64 `json:"loom_speedup,omitempty"`
}

// Report is the whole run, as written to results/<timestamp>.json.
type Report struct {
	Time      time.Time         `json:"time"`
	Machine   Machine           `json:"machine"`
	Threads   int               `json:"threads"`
	Rounds    int               `json:"rounds"`
	TargetS   float64           `json:"target_s"`
	Quick     bool              `json:"quick"`
	Filter    string            `json:"filter,omitempty"`
	Unavail   map[string]string `json:"unavailable,omitempty"` // engine -> why
	Workloads []*WorkloadResult `json:"workloads"`
	File      string            `json:"-"`
}

func (c *Config) defaults() error {
	if c.Threads < 1 {
		c.Threads = 1
	}
	if c.Rounds < 1 {
		c.Rounds = 1
	}
	if c.Target <= 0 {
		c.Target = 300 * time.Millisecond
	}
	if c.Engines == nil {
		c.Engines = EngineNames
	}
	for _, e := range c.Engines {
		if !contains(EngineNames, e) {
			return fmt.Errorf("unknown engine %q (have %s)", e, strings.Join(EngineNames, ", "))
		}
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// openEngines opens the selected engines; one that is unavailable is left
// out with its reason.
func openEngines(c *Config) (map[string]Engine, map[string]string, error) {
	engs, unavail := map[string]Engine{}, map[string]string{}
	for _, name := range EngineNames {
		if !contains(c.Engines, name) {
			unavail[name] = "not selected"
			continue
		}
		var e Engine
		var err error
		switch name {
		case "loom":
			e, err = NewLoom(c.Threads)
		case "gorgonia":
			e, err = NewGorgonia(c.GorgoniaVM)
		case "pytorch":
			e, err = NewTorch(TorchOptions{Python: c.Python, Threads: c.Threads, Install: c.InstallTorch, Log: c.Log, InPlace: c.TorchInPlace})
		}
		switch {
		case errors.Is(err, ErrUnavailable):
			unavail[name] = err.Error()
			fmt.Fprintf(c.Log, "%s: n/a: %v\n", name, err)
		case err != nil:
			closeAll(engs)
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		default:
			engs[name] = e
		}
	}
	return engs, unavail, nil
}

func closeAll(engs map[string]Engine) {
	for _, e := range engs {
		e.Close()
	}
}

// Run runs the benchmark: for every workload, each engine builds it and
// calibrates its iteration count to Target, then Rounds rounds time every
// engine in turn (the order rotating from round to round), so that all
// engines see the same machine; it prints the table to Out and returns
// the report (written as JSON under ResultsDir).
func Run(c Config) (*Report, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	specs, err := selectWorkloads(c.Quick, c.Filter)
	if err != nil {
		return nil, err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Threads))

	engs, unavail, err := openEngines(&c)
	if err != nil {
		return nil, err
	}
	defer closeAll(engs)

	rep := &Report{
		Time: time.Now().UTC(), Threads: c.Threads, Rounds: c.Rounds, TargetS: c.Target.Seconds(),
		Quick: c.Quick, Filter: c.Filter, Unavail: unavail,
		Machine: Machine{
			CPU: cpu.Model(), LogicalCPUs: runtime.NumCPU(), Go: runtime.Version(),
			Platform: runtime.GOOS + "/" + runtime.GOARCH, Versions: map[string]string{},
		},
	}
	for n, e := range engs {
		rep.Machine.Versions[n] = e.Version()
	}
	for _, s := range specs {
		w, err := runWorkload(&c, engs, s)
		if err != nil {
			return nil, err
		}
		for n, why := range unavail {
			w.Engines[n] = &EngineResult{Engine: n, Error: why}
		}
		rep.Workloads = append(rep.Workloads, w)
	}
	rep.WriteTable(c.Out)
	if c.ResultsDir != "" {
		if err := writeResults(c.ResultsDir, "", rep.Time, rep, &rep.File); err != nil {
			return rep, err
		}
		fmt.Fprintf(c.Out, "# results: %s\n", rep.File)
	}
	return rep, nil
}

// selectWorkloads is the workloads (quick: the small ones) whose names
// match the regular expression filter ("" = all), and an error when the
// filter is bad or matches none.
func selectWorkloads(quick bool, filter string) ([]Spec, error) {
	var re *regexp.Regexp
	if filter != "" {
		var err error
		if re, err = regexp.Compile(filter); err != nil {
			return nil, fmt.Errorf("-filter: %w", err)
		}
	}
	specs := Filter(Workloads(quick), re)
	if len(specs) == 0 {
		return nil, fmt.Errorf("no workload matches %q", filter)
	}
	return specs, nil
}

// writeResults writes rep as indented JSON to dir/<prefix><time>.json,
// setting *file (rep's File field, set before marshalling so the JSON
// names its own file) to the path.
func writeResults(dir, prefix string, t time.Time, rep any, file *string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	*file = filepath.Join(dir, prefix+t.Format("20060102T150405Z")+".json")
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*file, append(b, '\n'), 0o644)
}

func runWorkload(c *Config, engs map[string]Engine, s Spec) (*WorkloadResult, error) {
	var cs []contender
	for _, name := range EngineNames {
		if e, ok := engs[name]; ok {
			cs = append(cs, contender{name: name, eng: e})
		}
	}
	w := &WorkloadResult{Spec: s, Engines: map[string]*EngineResult{}}
	for _, r := range measure(s, cs, c.Rounds, c.Target, c.Log) {
		w.Engines[r.Engine] = r
	}
	if l := w.Engines["loom"]; l.ok() {
		w.Speedup = map[string]float64{}
		for _, n := range EngineNames[1:] {
			if p := w.Engines[n]; p.ok() {
				w.Speedup[n] = p.MedianNs / l.MedianNs
			}
		}
	}
	return w, nil
}

// contender is one named way of building a workload in a timed
// comparison: an engine (cmd/peers) or an engine at one thread count
// (cmd/scaling).
type contender struct {
	name string
	eng  Engine
}

type running struct {
	name   string
	inst   Instance
	res    *EngineResult
	allocs []float64
}

// measure is the timing loop of both runners. Every contender, in order,
// builds s and calibrates its iteration count to target; then each of
// rounds rounds times every instance once, the order rotating from round
// to round, so that all contenders see the same machine. It returns one
// result per contender, in order (Engine is the contender's name): the
// timings, their median, the median allocations per iteration where the
// engine counts them, and GFLOP/s or GB/s where s defines them; a
// contender that fails to build, calibrate or run has Error set (and the
// reason logged). The instances are closed before it returns.
func measure(s Spec, cs []contender, rounds int, target time.Duration, log io.Writer) []*EngineResult {
	var (
		rs  []*running
		all []*EngineResult
	)
	defer func() {
		for _, r := range rs {
			r.inst.Close()
		}
		runtime.GC() // the 16M workloads hold gigabytes
	}()
	for _, c := range cs {
		res := &EngineResult{Engine: c.name}
		all = append(all, res)
		inst, err := c.eng.New(s)
		if err != nil {
			res.Error = err.Error()
			fmt.Fprintf(log, "%s: %s: %v\n", s.Name, c.name, err)
			continue
		}
		r := &running{name: c.name, inst: inst, res: res}
		rs = append(rs, r)
		if res.Iters, err = calibrate(inst, target); err != nil {
			res.Error = err.Error()
			fmt.Fprintf(log, "%s: %s: %v\n", s.Name, c.name, err)
		}
	}
	for round := 0; round < rounds; round++ {
		fmt.Fprintf(log, "%s round %d/%d:", s.Name, round+1, rounds)
		for k := range rs {
			r := rs[(k+round)%len(rs)]
			if r.res.Error != "" {
				continue
			}
			d, allocs, err := r.inst.Run(r.res.Iters)
			if err != nil {
				r.res.Error = err.Error()
				fmt.Fprintf(log, " %s: %v", r.name, err)
				continue
			}
			ns := float64(d.Nanoseconds()) / float64(r.res.Iters)
			r.res.NsPerIter = append(r.res.NsPerIter, ns)
			if !math.IsNaN(allocs) {
				r.allocs = append(r.allocs, allocs)
			}
			fmt.Fprintf(log, " %s %s", r.name, fmtDur(ns))
		}
		fmt.Fprintln(log)
	}
	for _, r := range rs {
		if r.res.Error != "" || len(r.res.NsPerIter) == 0 {
			continue
		}
		r.res.MedianNs = median(r.res.NsPerIter)
		if len(r.allocs) > 0 {
			a := median(r.allocs)
			r.res.Allocs = &a
		}
		if f := s.FLOPs(); f > 0 {
			r.res.GFLOPs = f / r.res.MedianNs
		}
		if b := s.Bytes(); b > 0 {
			r.res.GBs = b / r.res.MedianNs
		}
	}
	return all
}

// calibrate warms inst up and returns the iteration count whose timing
// lasts about target (at least 1).
func calibrate(inst Instance, target time.Duration) (int, error) {
	d, _, err := inst.Run(1) // warm-up
	if err != nil {
		return 0, err
	}
	n := 1
	for d < target/2 && n < 1<<30 {
		grow := 100.0
		if d > 0 {
			grow = math.Min(100, math.Max(2, 0.6*float64(target)/float64(d)))
		}
		n = int(math.Ceil(float64(n) * grow))
		if d, _, err = inst.Run(n); err != nil {
			return 0, err
		}
	}
	iters := int(math.Round(float64(n) * float64(target) / float64(max(d, 1))))
	return max(1, iters), nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fmtDur prints nanoseconds with three significant digits and a unit.
func fmtDur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// WriteTable prints the report as one table with a header that says how
// it was measured.
func (rep *Report) WriteTable(out io.Writer) {
	fmt.Fprintf(out, "# threads: %d for every engine (GOMAXPROCS=%d; loom cpu.Threads(%d); torch.set_num_threads(%d))\n",
		rep.Threads, rep.Threads, rep.Threads, rep.Threads)
	vers := []string{rep.Machine.Go + " " + rep.Machine.Platform}
	for _, n := range EngineNames {
		if v, ok := rep.Machine.Versions[n]; ok {
			if n == "loom" {
				v = "loom " + v
			}
			vers = append(vers, v)
		} else {
			vers = append(vers, n+" n/a")
		}
	}
	fmt.Fprintf(out, "# machine: %s, %d logical CPUs; %s\n", rep.Machine.CPU, rep.Machine.LogicalCPUs, strings.Join(vers, "; "))
	fmt.Fprintf(out, "# time per iteration: median of %d round(s) (engines alternate within a round, ~%.2g s per timing); speed-up = peer / loom (>1: loom faster); allocs = heap allocations per iteration\n",
		rep.Rounds, rep.TargetS)
	for _, n := range EngineNames {
		if why, ok := rep.Unavail[n]; ok && why != "not selected" {
			fmt.Fprintf(out, "# %s n/a: %s\n", n, why)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tloom\tgorgonia\tpytorch\tloom vs gorgonia\tloom vs pytorch\tallocs loom\tallocs gorgonia\tGFLOP/s (GB/s) loom/gorgonia/pytorch\t")
	for _, w := range rep.Workloads {
		cells := []string{w.Spec.Name}
		for _, n := range EngineNames {
			if r := w.Engines[n]; r.ok() {
				cells = append(cells, fmtDur(r.MedianNs))
			} else {
				cells = append(cells, "n/a")
			}
		}
		for _, n := range EngineNames[1:] {
			if v, ok := w.Speedup[n]; ok {
				cells = append(cells, fmt.Sprintf("%.2fx", v))
			} else {
				cells = append(cells, "n/a")
			}
		}
		for _, n := range EngineNames[:2] {
			if r := w.Engines[n]; r.ok() && r.Allocs != nil {
				cells = append(cells, fmtAllocs(*r.Allocs))
			} else {
				cells = append(cells, "n/a")
			}
		}
		if w.Spec.FLOPs() > 0 {
			var g []string
			for _, n := range EngineNames {
				if r := w.Engines[n]; r.ok() {
					g = append(g, fmt.Sprintf("%.1f", r.GFLOPs))
				} else {
					g = append(g, "n/a")
				}
			}
			cells = append(cells, strings.Join(g, " / "))
		} else if w.Spec.Bytes() > 0 {
			var g []string
			for _, n := range EngineNames {
				if r := w.Engines[n]; r.ok() {
					g = append(g, fmt.Sprintf("%.1f", r.GBs))
				} else {
					g = append(g, "n/a")
				}
			}
			cells = append(cells, "("+strings.Join(g, " / ")+" GB/s)")
		} else {
			cells = append(cells, "")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
}

func fmtAllocs(a float64) string {
	if a < 10 && a != math.Trunc(a) {
		return fmt.Sprintf("%.1f", a)
	}
	return fmt.Sprintf("%.0f", a)
}

// CrossCheckAll compares every available engine with loom on CheckSpecs
// and prints the largest relative difference of each output.
func CrossCheckAll(c Config) ([]Diff, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Threads))
	engs, unavail, err := openEngines(&c)
	if err != nil {
		return nil, err
	}
	defer closeAll(engs)
	ref, ok := engs["loom"]
	if !ok {
		return nil, errors.New("the cross-check needs loom")
	}
	for n, why := range unavail {
		fmt.Fprintf(c.Out, "# %s n/a: %s\n", n, why)
	}
	var all []Diff
	tw := tabwriter.NewWriter(c.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tengine\toutput\tmax rel diff vs loom\tmax |loom|")
	for _, s := range CheckSpecs() {
		for _, n := range EngineNames[1:] {
			e, ok := engs[n]
			if !ok {
				continue
			}
			diffs, err := Compare(ref, e, s)
			if err != nil {
				fmt.Fprintf(tw, "%s\t%s\terror: %v\t\t\n", s.Name, n, err)
				continue
			}
			for _, d := range diffs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.2e\t%.3g\n", d.Workload, d.Engine, d.Output, d.MaxRel, d.Ref)
			}
			all = append(all, diffs...)
		}
	}
	tw.Flush()
	return all, nil
}
