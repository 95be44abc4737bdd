package profile

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteSummary writes a plain-text report of where the kernel time went:
// a header, a table per op kind (Kernel.Op, or the span's name when it has
// no Kernel) and a table per kernel instance (its name, Site and Nodes).
// Only spans of cat "kernel" and "copy" count as kernel time. Each table
// has the columns count, total time, mean time per call, share of the
// total kernel time, achieved GFLOP/s (FLOPs over time) and GB/s (bytes
// read and written over time), and is sorted by total time, largest first.
//
// When the recording covers several runs, count and total are means per
// run: per recorded call of fn for a Recorder from Function, else per span
// of cat "run" (see Runs). Mean, share and rates do not depend on that.
//
// A nil w is an error; a nil Recorder writes the summary of no events.
func (r *Recorder) WriteSummary(w io.Writer) error {
	if w == nil {
		return errors.New("profile: WriteSummary to a nil io.Writer")
	}
	s := r.snapshot()
	perOp := map[string]*stat{}
	perKernel := map[string]*stat{}
	var kernelNs, runNs int64
	var kernels int
	for i := range s.events {
		e := &s.events[i]
		if e.ph != 'X' {
			continue
		}
		if e.cat == "run" {
			runNs += e.dur
		}
		if e.cat != "kernel" && e.cat != "copy" {
			continue
		}
		kernels++
		kernelNs += e.dur
		op, cols, key := e.name, []string{e.name, "", ""}, e.name
		if k := e.kernel; k != nil {
			op = cmp.Or(k.Op, e.name)
			cols = []string{e.name, k.Site, formatNodes(k.Nodes)}
			key = e.name + "\x00" + k.Site + "\x00" + fmt.Sprint(k.Nodes)
		}
		add(perOp, op, []string{op}, e)
		add(perKernel, key, cols, e)
	}

	n, unit := 1, ""
	bw := bufio.NewWriter(w)
	switch {
	case s.calls > 0:
		n, unit = s.calls, "call"
		fmt.Fprintf(bw, "Function: %d recorded calls after %d warm-up calls.\n", s.calls, s.warmup)
	case s.runs > 1:
		n, unit = s.runs, "run"
	}
	if s.runs > 0 {
		fmt.Fprintf(bw, "Runs: %d, total run time %s, mean %s per run.\n",
			s.runs, formatNs(float64(runNs)), formatNs(float64(runNs)/float64(s.runs)))
	}
	if kernels == 0 {
		bw.WriteString("No kernel or copy spans recorded.\n")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "Kernel time: %s in %d kernel calls", formatNs(float64(kernelNs)), kernels)
	if n > 1 {
		fmt.Fprintf(bw, "; count and total are means per %s (of %d)", unit, n)
	}
	bw.WriteString(".\n\n")

	bw.WriteString("By op:\n")
	statTable([]string{"op"}, perOp, n, kernelNs).write(bw)
	bw.WriteString("\nBy kernel:\n")
	statTable([]string{"kernel", "site", "nodes"}, perKernel, n, kernelNs).write(bw)
	return bw.Flush()
}

// stat aggregates the kernel spans of one row of a summary table.
type stat struct {
	key   string
	cols  []string // the row's text columns
	count int
	ns    int64
	flops float64
	bytes float64
}

func add(m map[string]*stat, key string, cols []string, e *event) {
	st := m[key]
	if st == nil {
		st = &stat{key: key, cols: cols}
		m[key] = st
	}
	st.count++
	st.ns += e.dur
	if k := e.kernel; k != nil {
		if !math.IsNaN(k.FLOPs) && !math.IsInf(k.FLOPs, 0) {
			st.flops += k.FLOPs
		}
		st.bytes += float64(k.BytesRead) + float64(k.BytesWritten)
	}
}

// statTable makes a table of the rows in m, whose text columns are named
// by text, sorted by total time, largest first, then by key.
func statTable(text []string, m map[string]*stat, n int, totalNs int64) *table {
	rows := slices.SortedFunc(maps.Values(m), func(a, b *stat) int {
		return cmp.Or(cmp.Compare(b.ns, a.ns), cmp.Compare(a.key, b.key))
	})
	t := &table{text: len(text), header: append(text, "count", "total", "mean", "% time", "GFLOP/s", "GB/s")}
	for _, st := range rows {
		t.rows = append(t.rows, append(st.cols, st.numbers(n, totalNs)...))
	}
	return t
}

// numbers formats the numeric columns of a row: count and total divided by
// n, mean per call, share of totalNs, GFLOP/s and GB/s.
func (st *stat) numbers(n int, totalNs int64) []string {
	count := strconv.FormatFloat(float64(st.count)/float64(n), 'f', -1, 64)
	if st.count%n != 0 {
		count = strconv.FormatFloat(float64(st.count)/float64(n), 'f', 1, 64)
	}
	share := "-"
	if totalNs > 0 {
		share = strconv.FormatFloat(100*float64(st.ns)/float64(totalNs), 'f', 1, 64)
	}
	return []string{
		count,
		formatNs(float64(st.ns) / float64(n)),
		formatNs(float64(st.ns) / float64(st.count)),
		share,
		rate(st.flops, st.ns), // FLOP per ns is GFLOP/s
		rate(st.bytes, st.ns), // byte per ns is GB/s
	}
}

// rate formats amount/ns with two decimals, or "-" when either is zero.
func rate(amount float64, ns int64) string {
	if amount == 0 || ns <= 0 {
		return "-"
	}
	return strconv.FormatFloat(amount/float64(ns), 'f', 2, 64)
}

// formatNs formats a duration in human units: ns, µs, ms or s.
func formatNs(ns float64) string {
	switch {
	case ns < 1e3:
		return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
	case ns < 1e6:
		return strconv.FormatFloat(ns/1e3, 'f', 2, 64) + " µs"
	case ns < 1e9:
		return strconv.FormatFloat(ns/1e6, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(ns/1e9, 'f', 3, 64) + " s"
}

// maxNodes is how many node ids the summary shows for one kernel.
const maxNodes = 8

// formatNodes lists node ids, "3,4,5", eliding all after the first
// maxNodes: "1,2,3,4,5,6,7,8,…+4".
func formatNodes(nodes []int) string {
	var b strings.Builder
	for i, id := range nodes {
		if i == maxNodes {
			fmt.Fprintf(&b, ",…+%d", len(nodes)-maxNodes)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// table is a plain-text table whose first text columns are aligned left
// and the others right, with "-" in empty cells.
type table struct {
	text   int
	header []string
	rows   [][]string
}

func (t *table) write(w *bufio.Writer) {
	width := make([]int, len(t.header))
	all := append([][]string{t.header}, t.rows...)
	for _, row := range all {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cmp.Or(c, "-")))
		}
	}
	for _, row := range all {
		var line strings.Builder
		for i, c := range row {
			c = cmp.Or(c, "-")
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < t.text {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		w.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
