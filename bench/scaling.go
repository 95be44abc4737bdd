package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loomgraph/loom/exec/cpu"
)

// ScalingTolerance is how much slower than the machine's own core count
// an oversubscribed loom pool may be (issue 20: 16 and 64 workers on a
// 2-core machine at most 10% slower than 2).
const ScalingTolerance = 0.10

// ScalingConfig is what cmd/scaling runs (issue 20): loom at several
// thread counts, and optionally PyTorch at several, side by side.
type ScalingConfig struct {
	Threads      []int         // loom's cpu.Threads counts; nil = DefaultScalingThreads
	TorchThreads []int         // PyTorch's torch.set_num_threads counts, one process each; nil = none
	Rounds       int           // timings per instance and workload; medians are reported
	Target       time.Duration // how long one timing lasts (iterations are calibrated to it)
	Filter       string        // regexp on workload names; "" = all
	Quick        bool          // small workloads only
	Python       string        // interpreter for PyTorch; "" = DefaultPython
	InstallTorch bool          // apt-get install python3-torch when it is missing
	ResultsDir   string        // where the JSON goes; "" = nowhere
	Markdown     bool          // the table as Markdown instead of aligned text
	Out          io.Writer     // the table
	Log          io.Writer     // progress and engine messages; nil = discard
}

// DefaultScalingThreads are the loom thread counts of issue 20: 1 and 2
// (the cores of the machine it was written on) and 16 and 64
// (oversubscribed: a simulated many-core pool).
var DefaultScalingThreads = []int{1, 2, 16, 64}

// Ratio is one comparison of the scaling table: the median time of loom
// at Of threads over its median time at Base threads (<1: Of is faster).
type Ratio struct {
	Of   int `json:"of"`
	Base int `json:"base"`
	// Tolerance is how much slower Of may be before the verdict flags it:
	// 0 where both counts are real cores (more cores must never be
	// slower), ScalingTolerance where Of is oversubscribed.
	Tolerance float64 `json:"tolerance"`
	Value     float64 `json:"value,omitempty"` // 0: a time is missing
	Slower    bool    `json:"slower,omitempty"`
}

// Name is the column title: "2 vs 1".
func (r Ratio) Name() string { return fmt.Sprintf("%d vs %d", r.Of, r.Base) }

// ScalingWorkload is one row of the scaling table.
type ScalingWorkload struct {
	Spec    Spec                  `json:"spec"`
	Loom    map[int]*EngineResult `json:"loom"`              // by thread count
	PyTorch map[int]*EngineResult `json:"pytorch,omitempty"` // by thread count
	Ratios  []Ratio               `json:"ratios"`
	// VsTorch is loom's median over PyTorch's at the same thread count (<1:
	// loom faster), for the counts both ran at.
	VsTorch map[int]float64 `json:"loom_vs_pytorch,omitempty"`
	Verdict string          `json:"verdict"`
}

// ScalingReport is the whole run, as written to results/scaling-<timestamp>.json.
type ScalingReport struct {
	Time         time.Time          `json:"time"`
	Machine      Machine            `json:"machine"`
	GOMAXPROCS   int                `json:"gomaxprocs"`
	Threads      []int              `json:"loom_threads"`
	TorchThreads []int              `json:"torch_threads,omitempty"`
	Rounds       int                `json:"rounds"`
	TargetS      float64            `json:"target_s"`
	Quick        bool               `json:"quick"`
	Filter       string             `json:"filter,omitempty"`
	Unavail      map[string]string  `json:"unavailable,omitempty"` // "pytorch@2" -> why
	Workloads    []*ScalingWorkload `json:"workloads"`
	File         string             `json:"-"`
}

// ParseThreads parses a comma-separated list of thread counts ("1,2,16,64";
// "" = none) into sorted, distinct positive counts.
func ParseThreads(s string) ([]int, error) {
	var ts []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 1 || fmt.Sprint(n) != f {
			return nil, fmt.Errorf("thread count %q is not a positive integer", f)
		}
		ts = append(ts, n)
	}
	return sortedDistinct(ts), nil
}

func sortedDistinct(ts []int) []int {
	s := append([]int(nil), ts...)
	sort.Ints(s)
	out := s[:0]
	for i, n := range s {
		if i == 0 || n != s[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// ScalingRatios lists the comparisons of the table for loom's thread
// counts ts (sorted, distinct) on a machine with ncpu logical CPUs. Every
// count after the first is compared with a base:
//   - a count ≤ ncpu (real cores) with the previous count: more cores must
//     never be slower (tolerance 0);
//   - a count > ncpu (oversubscribed: the simulated many-core check) with
//     the largest count ≤ ncpu in ts (the first count when there is none):
//     at most ScalingTolerance slower.
//
// With DefaultScalingThreads on 2 CPUs: 2 vs 1, 16 vs 2, 64 vs 2.
func ScalingRatios(ts []int, ncpu int) []Ratio {
	var rs []Ratio
	for i, n := range ts {
		if i == 0 {
			continue
		}
		if n <= ncpu {
			rs = append(rs, Ratio{Of: n, Base: ts[i-1]})
			continue
		}
		base := ts[0]
		for _, m := range ts {
			if m <= ncpu {
				base = m
			}
		}
		rs = append(rs, Ratio{Of: n, Base: base, Tolerance: ScalingTolerance})
	}
	return rs
}

// judge fills in the ratios' values from the medians of w.Loom and sets
// w.VsTorch and w.Verdict: "ok" when no comparison is slower than its
// tolerance allows, "SLOWER: " and the offending comparisons with how
// much slower ("2 vs 1 +12%") otherwise, "n/a" when no comparison could
// be made (a time is missing or there is a single count) and none is
// slower.
func (w *ScalingWorkload) judge(ratios []Ratio) {
	w.Ratios = append([]Ratio(nil), ratios...)
	var slow []string
	missing := false
	for i := range w.Ratios {
		r := &w.Ratios[i]
		of, base := w.Loom[r.Of], w.Loom[r.Base]
		if !of.ok() || !base.ok() {
			missing = true
			continue
		}
		r.Value = of.MedianNs / base.MedianNs
		if r.Value > 1+r.Tolerance {
			r.Slower = true
			slow = append(slow, fmt.Sprintf("%s %+.0f%%", r.Name(), 100*(r.Value-1)))
		}
	}
	for n, t := range w.PyTorch {
		if l := w.Loom[n]; l.ok() && t.ok() {
			if w.VsTorch == nil {
				w.VsTorch = map[int]float64{}
			}
			w.VsTorch[n] = l.MedianNs / t.MedianNs
		}
	}
	switch {
	case len(slow) > 0:
		w.Verdict = "SLOWER: " + strings.Join(slow, ", ")
	case missing || len(w.Ratios) == 0:
		w.Verdict = "n/a"
	default:
		w.Verdict = "ok"
	}
}

func loomLabel(n int) string  { return fmt.Sprintf("loom@%d", n) }
func torchLabel(n int) string { return fmt.Sprintf("pytorch@%d", n) }

// RunScaling runs the scaling benchmark of issue 20 with GOMAXPROCS at
// runtime.NumCPU() throughout: for every workload, loom at every count of
// Threads (cpu.Threads(n), one backend each) and PyTorch at every count of
// TorchThreads (one Python process each) build it and calibrate their
// iteration counts to Target; then Rounds rounds time every instance in
// turn, the order rotating from round to round (the peers runner's loop).
// It prints the table to Out and returns the report (written as JSON
// under ResultsDir).
func RunScaling(c ScalingConfig) (*ScalingReport, error) {
	if c.Threads == nil {
		c.Threads = DefaultScalingThreads
	}
	c.Threads, c.TorchThreads = sortedDistinct(c.Threads), sortedDistinct(c.TorchThreads)
	if len(c.Threads) == 0 {
		return nil, errors.New("no loom thread count")
	}
	for _, n := range append(append([]int(nil), c.Threads...), c.TorchThreads...) {
		if n < 1 {
			return nil, fmt.Errorf("thread count %d is not positive", n)
		}
	}
	if c.Rounds < 1 {
		c.Rounds = 1
	}
	if c.Target <= 0 {
		c.Target = 300 * time.Millisecond
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	specs, err := selectWorkloads(c.Quick, c.Filter)
	if err != nil {
		return nil, err
	}
	procs := runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))

	rep := &ScalingReport{
		Time: time.Now().UTC(), GOMAXPROCS: procs, Threads: c.Threads, TorchThreads: c.TorchThreads,
		Rounds: c.Rounds, TargetS: c.Target.Seconds(), Quick: c.Quick, Filter: c.Filter,
		Unavail: map[string]string{},
		Machine: Machine{
			CPU: cpu.Model(), LogicalCPUs: procs, Go: runtime.Version(),
			Platform: runtime.GOOS + "/" + runtime.GOARCH, Versions: map[string]string{},
		},
	}
	var (
		cs      []contender
		engs    []Engine
		threads = map[string]int{}
	)
	defer func() {
		for _, e := range engs {
			e.Close()
		}
	}()
	for _, n := range c.Threads {
		e, err := NewLoom(n)
		if err != nil {
			return nil, fmt.Errorf("loom@%d: %w", n, err)
		}
		engs = append(engs, e)
		cs = append(cs, contender{name: loomLabel(n), eng: e})
		threads[loomLabel(n)] = n
		rep.Machine.Versions["loom"] = e.Version()
	}
	for _, n := range c.TorchThreads {
		e, err := NewTorch(TorchOptions{Python: c.Python, Threads: n, Install: c.InstallTorch, Log: c.Log})
		switch {
		case errors.Is(err, ErrUnavailable):
			rep.Unavail[torchLabel(n)] = err.Error()
			fmt.Fprintf(c.Log, "%s: n/a: %v\n", torchLabel(n), err)
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", torchLabel(n), err)
		}
		engs = append(engs, e)
		cs = append(cs, contender{name: torchLabel(n), eng: e})
		threads[torchLabel(n)] = n
		rep.Machine.Versions["pytorch"] = e.Version()
	}
	ratios := ScalingRatios(c.Threads, procs)
	for _, s := range specs {
		w := &ScalingWorkload{Spec: s, Loom: map[int]*EngineResult{}}
		for _, r := range measure(s, cs, c.Rounds, c.Target, c.Log) {
			n := threads[r.Engine]
			if strings.HasPrefix(r.Engine, "loom@") {
				w.Loom[n] = r
				continue
			}
			if w.PyTorch == nil {
				w.PyTorch = map[int]*EngineResult{}
			}
			w.PyTorch[n] = r
		}
		for _, n := range c.TorchThreads {
			if why, ok := rep.Unavail[torchLabel(n)]; ok {
				if w.PyTorch == nil {
					w.PyTorch = map[int]*EngineResult{}
				}
				w.PyTorch[n] = &EngineResult{Engine: torchLabel(n), Error: why}
			}
		}
		w.judge(ratios)
		rep.Workloads = append(rep.Workloads, w)
	}
	if c.Markdown {
		rep.WriteMarkdown(c.Out)
	} else {
		rep.WriteTable(c.Out)
	}
	if c.ResultsDir != "" {
		if err := writeResults(c.ResultsDir, "scaling-", rep.Time, rep, &rep.File); err != nil {
			return rep, err
		}
		if c.Markdown {
			fmt.Fprintf(c.Log, "results: %s\n", rep.File) // stdout stays pure Markdown
		} else {
			fmt.Fprintf(c.Out, "# results: %s\n", rep.File)
		}
	}
	return rep, nil
}

// header is the lines above the table: how it was measured.
func (rep *ScalingReport) header() []string {
	var over []string
	for _, n := range rep.Threads {
		if n > rep.GOMAXPROCS {
			over = append(over, fmt.Sprint(n))
		}
	}
	first := fmt.Sprintf("GOMAXPROCS=%d (runtime.NumCPU()) for the whole run; loom@n = cpu.Threads(n)%s", rep.GOMAXPROCS, oversubscribed(over))
	if len(rep.TorchThreads) > 0 {
		first += "; pytorch@n = torch.set_num_threads(n), one Python process per n"
	}
	lines := []string{first}
	vers := []string{rep.Machine.Go + " " + rep.Machine.Platform}
	if v, ok := rep.Machine.Versions["loom"]; ok {
		vers = append(vers, "loom "+v)
	}
	if len(rep.TorchThreads) > 0 {
		if v, ok := rep.Machine.Versions["pytorch"]; ok {
			vers = append(vers, v)
		} else {
			vers = append(vers, "pytorch n/a")
		}
	}
	vsTorch := ""
	if len(rep.TorchThreads) > 0 {
		vsTorch = " loom vs pytorch@n = time(loom@n) / time(pytorch@n) (<1: loom faster);"
	}
	lines = append(lines,
		fmt.Sprintf("machine: %s, %d logical CPUs; %s", rep.Machine.CPU, rep.Machine.LogicalCPUs, strings.Join(vers, "; ")),
		fmt.Sprintf("time per iteration: median of %d round(s) (all instances alternate within a round, ~%.2g s per timing); a vs b = time(loom@a) / time(loom@b) (<1: a faster);%s allocs = loom's heap allocations per iteration (per thread count when they differ)",
			rep.Rounds, rep.TargetS, vsTorch),
		fmt.Sprintf("verdict: SLOWER where a count ≤ %d CPUs is slower than the previous one, or an oversubscribed count is more than %.0f%% slower than the largest count ≤ %d",
			rep.GOMAXPROCS, 100*ScalingTolerance, rep.GOMAXPROCS))
	var un []string
	for k := range rep.Unavail {
		un = append(un, k)
	}
	sort.Strings(un)
	for _, k := range un {
		lines = append(lines, fmt.Sprintf("%s n/a: %s", k, rep.Unavail[k]))
	}
	return lines
}

func oversubscribed(over []string) string {
	if len(over) == 0 {
		return ""
	}
	return " (" + strings.Join(over, ", ") + ": oversubscribed, the simulated many-core check)"
}

// rows is the table: a title row, then one row per workload.
func (rep *ScalingReport) rows() [][]string {
	ratios := ScalingRatios(rep.Threads, rep.GOMAXPROCS)
	title := []string{"workload"}
	for _, n := range rep.Threads {
		title = append(title, loomLabel(n))
	}
	for _, n := range rep.TorchThreads {
		title = append(title, torchLabel(n))
	}
	for _, r := range ratios {
		title = append(title, r.Name())
	}
	var vs []int // PyTorch counts loom also ran at
	for _, n := range rep.TorchThreads {
		if containsInt(rep.Threads, n) {
			vs = append(vs, n)
			title = append(title, "loom vs "+torchLabel(n))
		}
	}
	title = append(title, "allocs", "verdict")
	rows := [][]string{title}
	for _, w := range rep.Workloads {
		row := []string{w.Spec.Name}
		for _, n := range rep.Threads {
			row = append(row, cellDur(w.Loom[n]))
		}
		for _, n := range rep.TorchThreads {
			row = append(row, cellDur(w.PyTorch[n]))
		}
		for _, r := range w.Ratios {
			row = append(row, cellRatio(r.Value))
		}
		for _, n := range vs {
			row = append(row, cellRatio(w.VsTorch[n]))
		}
		row = append(row, allocsCell(w.Loom, rep.Threads), w.Verdict)
		rows = append(rows, row)
	}
	return rows
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func cellDur(r *EngineResult) string {
	if !r.ok() {
		return "n/a"
	}
	return fmtDur(r.MedianNs)
}

func cellRatio(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// allocsCell is loom's allocations per iteration: one number when every
// thread count allocates the same, else one per count ("0/0/2/5"), n/a
// where a count has none.
func allocsCell(loom map[int]*EngineResult, ts []int) string {
	var cells []string
	same := true
	for i, n := range ts {
		c := "n/a"
		if r := loom[n]; r.ok() && r.Allocs != nil {
			c = fmtAllocs(*r.Allocs)
		}
		cells = append(cells, c)
		if i > 0 && c != cells[0] {
			same = false
		}
	}
	if len(cells) == 0 {
		return "n/a"
	}
	if same {
		return cells[0]
	}
	return strings.Join(cells, "/")
}

// WriteTable prints the report as one aligned table under "# " header
// lines that say how it was measured.
func (rep *ScalingReport) WriteTable(out io.Writer) {
	for _, l := range rep.header() {
		fmt.Fprintf(out, "# %s\n", l)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range rep.rows() {
		// The verdict, not tab-terminated, is no column: left-aligned,
		// two spaces after the right-aligned allocs.
		fmt.Fprintln(tw, strings.Join(row[:len(row)-1], "\t")+"\t  "+row[len(row)-1])
	}
	tw.Flush()
}

// WriteMarkdown prints the report as a Markdown table (for the README),
// the header lines as a list above it.
func (rep *ScalingReport) WriteMarkdown(out io.Writer) {
	for _, l := range rep.header() {
		fmt.Fprintf(out, "- %s\n", l)
	}
	fmt.Fprintln(out)
	rows := rep.rows()
	for i, row := range rows {
		fmt.Fprintf(out, "| %s |\n", strings.Join(row, " | "))
		if i == 0 {
			seps := make([]string, len(row))
			for j := range seps {
				seps[j] = "--:" // numbers right-aligned
			}
			seps[0], seps[len(seps)-1] = "---", "---" // workload, verdict
			fmt.Fprintf(out, "|%s|\n", strings.Join(seps, "|"))
		}
	}
}
