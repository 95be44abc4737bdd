package profile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Validate reads a trace in Chrome's trace-event JSON and checks it
// against what Perfetto's importer needs to show every event as written
// (chrome://tracing needs the same). It returns nil for a valid trace, and
// otherwise an error listing the problems, ordered by the index of the
// event in the trace's event list ("event 7: missing dur"), the first 20
// of them and then a count.
//
// The rules:
//   - The top level is an array of events or an object whose
//     "traceEvents" is one; "displayTimeUnit", if present, is "ms" or "ns";
//     nothing follows the JSON value.
//   - Every event is an object with a one-letter "ph" that Perfetto
//     imports: X B E i I R C M s t f b e n. "name" and "cat" are strings
//     and "args" an object where present.
//   - "pid" is present on every event and "tid" on every event that lives
//     on a thread (X, B, E, thread-scoped instants, flow events and thread
//     metadata); both are integers in [0, 2³²).
//   - "ts" is present on every event but M, a finite number >= 0.
//     Timestamps are compared in nanoseconds computed the way Perfetto
//     does: an integer n as n*1000, a fraction x as int64(x*1000) in
//     float64 (truncated).
//   - X has a numeric "dur" >= 0. B and E pair up per thread, E not before
//     its B, with the same name where both have one.
//   - On each thread the slices (X, and B/E pairs) nest: a slice that
//     starts inside another ends at or before the other's end. Touching
//     is fine; Perfetto cuts a slice that partially overlaps another.
//   - A tid belongs to one pid: Perfetto applies thread_name by tid alone.
//   - Every pid used by an event has a process_name M event, and every
//     thread used by an event has a thread_name M event.
//   - C has an "args" object with at least one value, all finite numbers.
//   - Instants have "s" in {g, p, t} where present.
//   - Flow events (s, t, f) have an "id" (an integer, or a hex string, as
//     Perfetto reads it), and "bp", where present, is "e". Flows match by
//     (cat, name, id): each has exactly one s and at least one f, and no t
//     or f before its s. Perfetto binds s, t, and f with "bp":"e" to the
//     slice enclosing them on their thread, and f without it to the next
//     slice to begin there, and drops the arrow when there is none, so
//     such a slice must exist.
//   - Async events (b, e, n) have an "id" or an "id2" with "local" or
//     "global".
//   - M events are process_name, process_labels, process_sort_index,
//     thread_name or thread_sort_index, with an "args" object holding
//     "name" (a string), "labels" (a string) or "sort_index" (an integer).
func Validate(rd io.Reader) error {
	if rd == nil {
		return errors.New("profile: Validate of a nil io.Reader")
	}
	dec := json.NewDecoder(rd)
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("profile: trace is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("profile: trace has data after its JSON value")
	}
	events, err := traceEvents(top)
	if err != nil {
		return err
	}
	v := validator{
		threads:   map[threadID]*threadLog{},
		procNamed: map[uint32]bool{},
		thrNamed:  map[threadID]bool{},
		pidUse:    map[uint32]int{},
		thrUse:    map[threadID]int{},
		tidOwner:  map[uint32]owner{},
		shared:    map[threadID]bool{},
		flows:     map[flowKey]*flow{},
	}
	for i, e := range events {
		v.event(i, e)
	}
	v.finish()
	return v.err()
}

// traceEvents returns the event list of either container form.
func traceEvents(top any) ([]any, error) {
	switch t := top.(type) {
	case []any:
		return t, nil
	case map[string]any:
		events, ok := t["traceEvents"].([]any)
		if !ok {
			return nil, errors.New("profile: trace object has no traceEvents array")
		}
		if u, ok := t["displayTimeUnit"]; ok && u != "ms" && u != "ns" {
			return nil, fmt.Errorf("profile: displayTimeUnit is %v, not \"ms\" or \"ns\"", u)
		}
		return events, nil
	}
	return nil, fmt.Errorf("profile: trace is a JSON %s, not an array of events or an object with traceEvents", jsonType(top))
}

// maxProblems is how many problems Validate's error lists.
const maxProblems = 20

// phases are the event phases Perfetto's JSON importer handles.
const phases = "XBEiIRCMstfben"

type threadID struct{ pid, tid uint32 }

// slice is a span of time on one thread: an X event or a B/E pair.
type slice struct {
	start, end int64 // ns
	index      int   // the X or B event
}

// begin is a B event waiting for its E.
type begin struct {
	index   int
	ts      int64
	name    string
	hasName bool
}

// point is a flow event, to be bound to a slice of its thread.
type point struct {
	index     int
	ph        byte
	ts        int64
	enclosing bool // bound to the enclosing slice, not the next one
	thread    threadID
}

// threadLog gathers one thread's events.
type threadLog struct {
	slices []slice
	open   []begin
	maxEnd []int64 // maxEnd[i] is the latest end of slices[:i+1], once sorted
}

type flowKey struct {
	cat, name string
	id        uint64
}

type flow struct {
	starts []point
	others []point // t and f
}

// owner is the pid a tid was first seen with, and where.
type owner struct {
	pid   uint32
	index int
}

type problem struct {
	index int
	msg   string
}

type validator struct {
	problems  []problem
	threads   map[threadID]*threadLog
	procNamed map[uint32]bool
	thrNamed  map[threadID]bool
	pidUse    map[uint32]int   // pid -> first event using it
	thrUse    map[threadID]int // thread -> first event using it
	tidOwner  map[uint32]owner
	shared    map[threadID]bool // threads reported for a tid another pid owns
	flows     map[flowKey]*flow
	points    []point
}

func (v *validator) add(index int, format string, a ...any) {
	v.problems = append(v.problems, problem{index, fmt.Sprintf(format, a...)})
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(v.problems, func(a, b problem) int { return cmp.Compare(a.index, b.index) })
	var errs []error
	for i, p := range v.problems {
		if i == maxProblems {
			errs = append(errs, fmt.Errorf("and %d more problems", len(v.problems)-maxProblems))
			break
		}
		errs = append(errs, fmt.Errorf("event %d: %s", p.index, p.msg))
	}
	return errors.Join(errs...)
}

func (v *validator) thread(id threadID) *threadLog {
	t := v.threads[id]
	if t == nil {
		t = &threadLog{}
		v.threads[id] = t
	}
	return t
}

// event checks one event and records what the checks across events need.
func (v *validator) event(i int, raw any) {
	e, ok := raw.(map[string]any)
	if !ok {
		v.add(i, "event is a JSON %s, not an object", jsonType(raw))
		return
	}
	phv, ok := e["ph"]
	if !ok {
		v.add(i, "missing ph")
		return
	}
	ph, ok := phv.(string)
	if !ok || len(ph) != 1 || !strings.Contains(phases, ph) {
		v.add(i, "unknown ph %s", compact(phv))
		return
	}
	p := ph[0]
	for _, k := range []string{"name", "cat"} {
		if x, ok := e[k]; ok {
			if _, ok := x.(string); !ok {
				v.add(i, "%s is %s, not a string", k, aJSONType(x))
			}
		}
	}
	if x, ok := e["args"]; ok {
		if _, ok := x.(map[string]any); !ok {
			v.add(i, "args is %s, not an object", aJSONType(x))
		}
	}

	pid, pidOK := v.id(i, e, "pid", true)
	tid, tidOK := v.id(i, e, "tid", onThread(p, e))
	th := threadID{pid, tid}
	ts, tsOK := v.time(i, e, "ts", p != 'M')

	if pidOK && !(p == 'M' && strings.HasPrefix(str(e["name"]), "process_")) {
		if _, ok := v.pidUse[pid]; !ok {
			v.pidUse[pid] = i
		}
	}
	if pidOK && tidOK && onThread(p, e) {
		v.useThread(i, th, p != 'M')
	}

	switch p {
	case 'X':
		dur, ok := v.time(i, e, "dur", true)
		if ok && tsOK && pidOK && tidOK {
			if ts > math.MaxInt64-dur {
				v.add(i, "ts + dur is out of range")
				return
			}
			t := v.thread(th)
			t.slices = append(t.slices, slice{ts, ts + dur, i})
		}
	case 'B', 'E':
		if tsOK && pidOK && tidOK {
			v.beginEnd(i, p, th, ts, e["name"])
		}
	case 'C':
		v.counter(i, e)
	case 'i', 'I', 'R':
		if s, ok := e["s"]; ok && s != "g" && s != "p" && s != "t" {
			v.add(i, "instant scope s is %s, not \"g\", \"p\" or \"t\"", compact(s))
		}
	case 's', 't', 'f':
		v.flowEvent(i, p, e, th, ts, tsOK && pidOK && tidOK)
	case 'b', 'e', 'n':
		_, hasID := e["id"]
		id2, _ := e["id2"].(map[string]any)
		if !hasID && id2["local"] == nil && id2["global"] == nil {
			v.add(i, "async event has neither id nor id2")
		}
	case 'M':
		v.metadata(i, e, pid, th, pidOK, tidOK)
	}
}

// onThread reports whether an event of phase p lives on a thread, so that
// it needs a tid and that thread a name.
func onThread(p byte, e map[string]any) bool {
	switch p {
	case 'X', 'B', 'E', 's', 't', 'f':
		return true
	case 'i', 'I', 'R':
		s, ok := e["s"]
		return !ok || s == "t"
	case 'M':
		return strings.HasPrefix(str(e["name"]), "thread_")
	}
	return false
}

// useThread notes that event i uses thread th; needsName is false for
// the thread's own metadata, which names it rather than needing a name.
func (v *validator) useThread(i int, th threadID, needsName bool) {
	if needsName {
		if _, ok := v.thrUse[th]; !ok {
			v.thrUse[th] = i
		}
	}
	if o, ok := v.tidOwner[th.tid]; !ok {
		v.tidOwner[th.tid] = owner{th.pid, i}
	} else if o.pid != th.pid && !v.shared[th] {
		v.shared[th] = true
		v.add(i, "tid %d is used in pid %d and in pid %d (event %d); Perfetto names threads by tid alone",
			th.tid, th.pid, o.pid, o.index)
	}
}

// id checks the pid or tid key of event i.
func (v *validator) id(i int, e map[string]any, key string, required bool) (uint32, bool) {
	x, ok := e[key]
	if !ok {
		if required {
			v.add(i, "missing %s", key)
		}
		return 0, false
	}
	n, ok := x.(json.Number)
	if !ok {
		v.add(i, "%s is %s, not a number", key, aJSONType(x))
		return 0, false
	}
	u, err := strconv.ParseUint(string(n), 10, 32)
	if err != nil {
		switch f, _ := n.Float64(); {
		case f < 0:
			v.add(i, "%s %s is negative", key, n)
		case strings.ContainsAny(string(n), ".eE"):
			v.add(i, "%s %s is not an integer", key, n)
		default:
			v.add(i, "%s %s does not fit in 32 bits", key, n)
		}
		return 0, false
	}
	return uint32(u), true
}

// time checks the ts or dur key of event i and returns it in nanoseconds.
func (v *validator) time(i int, e map[string]any, key string, required bool) (int64, bool) {
	x, ok := e[key]
	if !ok {
		if required {
			v.add(i, "missing %s", key)
		}
		return 0, false
	}
	n, ok := x.(json.Number)
	if !ok {
		v.add(i, "%s is %s, not a number", key, aJSONType(x))
		return 0, false
	}
	ns, err := nanos(n)
	if err != nil {
		v.add(i, "%s %s %v", key, n, err)
		return 0, false
	}
	return ns, true
}

var (
	errNegative   = errors.New("is negative")
	errNotFinite  = errors.New("is not finite")
	errOutOfRange = errors.New("is out of range")
)

// nanos converts a number of microseconds to nanoseconds the way
// Perfetto's importer does: an integer exactly, a number with a fraction
// or exponent as int64(x*1000) in float64, which truncates.
func nanos(n json.Number) (int64, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err == nil && i < 0:
			return 0, errNegative
		case err != nil || i > math.MaxInt64/1000:
			if strings.HasPrefix(s, "-") {
				return 0, errNegative
			}
			return 0, errOutOfRange
		}
		return i * 1000, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0, errNotFinite // out of float64's range
	case f < 0:
		return 0, errNegative
	case f*1000 >= math.MaxInt64:
		return 0, errOutOfRange
	}
	return int64(f * 1000), nil
}

// beginEnd pairs B and E events per thread, in the order they appear.
func (v *validator) beginEnd(i int, p byte, th threadID, ts int64, nameValue any) {
	t := v.thread(th)
	name, hasName := nameValue.(string)
	if p == 'B' {
		t.open = append(t.open, begin{i, ts, name, hasName})
		return
	}
	if len(t.open) == 0 {
		v.add(i, "E without a matching B on pid %d tid %d", th.pid, th.tid)
		return
	}
	b := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	if ts < b.ts {
		v.add(i, "E at %s is before its B (event %d) at %s", fmtMicros(ts), b.index, fmtMicros(b.ts))
		return
	}
	if b.hasName && hasName && b.name != name {
		v.add(i, "E name %q does not match B name %q (event %d)", name, b.name, b.index)
	}
	t.slices = append(t.slices, slice{b.ts, ts, b.index})
}

func (v *validator) counter(i int, e map[string]any) {
	args, ok := e["args"].(map[string]any)
	if !ok {
		if _, present := e["args"]; !present {
			v.add(i, "counter has no args")
		}
		return
	}
	if len(args) == 0 {
		v.add(i, "counter has no values in args")
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		n, ok := args[k].(json.Number)
		if !ok {
			v.add(i, "counter value %q is %s, not a number", k, aJSONType(args[k]))
			continue
		}
		if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
			v.add(i, "counter value %q is not finite", k)
		}
	}
}

func (v *validator) flowEvent(i int, p byte, e map[string]any, th threadID, ts int64, ok bool) {
	id, idOK := flowID(e["id"])
	if !idOK {
		v.add(i, "flow event id is %s, not an integer or a hex string", compact(e["id"]))
	}
	bp, hasBP := e["bp"]
	if hasBP && bp != "e" {
		v.add(i, "bp is %s, not \"e\"", compact(bp))
	}
	if !ok || !idOK {
		return
	}
	k := flowKey{str(e["cat"]), str(e["name"]), id}
	f := v.flows[k]
	if f == nil {
		f = &flow{}
		v.flows[k] = f
	}
	pt := point{index: i, ph: p, ts: ts, enclosing: p != 'f' || hasBP, thread: th}
	if p == 's' {
		f.starts = append(f.starts, pt)
	} else {
		f.others = append(f.others, pt)
	}
	v.points = append(v.points, pt)
}

// flowID reads a flow id as Perfetto does: a number, or a string in hex.
func flowID(x any) (uint64, bool) {
	switch x := x.(type) {
	case json.Number:
		u, err := strconv.ParseUint(string(x), 10, 64)
		return u, err == nil
	case string:
		h := strings.TrimPrefix(strings.TrimPrefix(x, "0x"), "0X")
		u, err := strconv.ParseUint(h, 16, 64)
		return u, err == nil
	}
	return 0, false
}

// metaArgs says which arg each kind of metadata event needs, and whether
// it is a string (else an integer).
var metaArgs = map[string]struct {
	key    string
	string bool
}{
	"process_name":       {"name", true},
	"process_labels":     {"labels", true},
	"process_sort_index": {"sort_index", false},
	"thread_name":        {"name", true},
	"thread_sort_index":  {"sort_index", false},
}

func (v *validator) metadata(i int, e map[string]any, pid uint32, th threadID, pidOK, tidOK bool) {
	name := str(e["name"])
	want, ok := metaArgs[name]
	if !ok {
		v.add(i, "unknown metadata name %s", compact(e["name"]))
		return
	}
	args, _ := e["args"].(map[string]any)
	x, present := args[want.key]
	switch _, isString := x.(string); {
	case !present:
		v.add(i, "%s has no args.%s", name, want.key)
		return
	case want.string && !isString:
		v.add(i, "%s args.%s is %s, not a string", name, want.key, aJSONType(x))
		return
	case !want.string:
		n, isNumber := x.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, 64); !isNumber || err != nil {
			v.add(i, "%s args.%s is %s, not an integer", name, want.key, compact(x))
			return
		}
	}
	switch {
	case name == "process_name" && pidOK:
		v.procNamed[pid] = true
	case name == "thread_name" && pidOK && tidOK:
		v.thrNamed[th] = true
	}
}

// finish runs the checks that need the whole trace.
func (v *validator) finish() {
	for _, th := range slices.SortedFunc(maps.Keys(v.threads), compareThreads) {
		t := v.threads[th]
		for _, b := range t.open {
			v.add(b.index, "B without a matching E on pid %d tid %d", th.pid, th.tid)
		}
		v.nest(th, t)
	}
	v.checkFlows()
	for pid, i := range v.pidUse {
		if !v.procNamed[pid] {
			v.add(i, "pid %d has no process_name metadata event", pid)
		}
	}
	for th, i := range v.thrUse {
		if !v.thrNamed[th] {
			v.add(i, "pid %d tid %d has no thread_name metadata event", th.pid, th.tid)
		}
	}
}

func compareThreads(a, b threadID) int {
	return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid))
}

// nest checks that a thread's slices nest. It sorts them by start and
// fills in maxEnd.
func (v *validator) nest(th threadID, t *threadLog) {
	slices.SortFunc(t.slices, func(a, b slice) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), cmp.Compare(a.index, b.index))
	})
	var stack []slice
	latest := int64(math.MinInt64)
	for _, s := range t.slices {
		latest = max(latest, s.end)
		t.maxEnd = append(t.maxEnd, latest)
		for len(stack) > 0 && stack[len(stack)-1].end <= s.start {
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && s.end > stack[n-1].end {
			o := stack[n-1]
			v.add(s.index, "slice [%s, %s] partially overlaps slice [%s, %s] (event %d) on pid %d tid %d; slices on a thread must nest",
				fmtMicros(s.start), fmtMicros(s.end), fmtMicros(o.start), fmtMicros(o.end), o.index, th.pid, th.tid)
			continue
		}
		stack = append(stack, s)
	}
}

// checkFlows checks that flows are complete and in order, and that every
// flow event has a slice to bind to.
func (v *validator) checkFlows() {
	for _, f := range v.flows {
		if len(f.starts) == 0 {
			for _, p := range f.others {
				v.add(p.index, "flow %c without an s", p.ph)
			}
			continue
		}
		s := f.starts[0]
		for _, d := range f.starts[1:] {
			v.add(d.index, "flow s repeats the id of the s of event %d", s.index)
		}
		ends := 0
		for _, p := range f.others {
			if p.ph == 'f' {
				ends++
			}
			if p.ts < s.ts {
				v.add(p.index, "flow %c at %s is before its s (event %d) at %s", p.ph, fmtMicros(p.ts), s.index, fmtMicros(s.ts))
			}
		}
		if ends == 0 {
			v.add(s.index, "flow s without an f")
		}
	}
	for _, p := range v.points {
		t := v.threads[p.thread]
		if p.enclosing && !encloses(t, p.ts) {
			v.add(p.index, "flow %c at %s is in no slice on pid %d tid %d, so Perfetto drops the arrow",
				p.ph, fmtMicros(p.ts), p.thread.pid, p.thread.tid)
		}
		if !p.enclosing && (t == nil || len(t.slices) == 0 || t.slices[len(t.slices)-1].start < p.ts) {
			v.add(p.index, "flow f at %s has no slice starting after it on pid %d tid %d to bind to",
				fmtMicros(p.ts), p.thread.pid, p.thread.tid)
		}
	}
}

// encloses reports whether one of t's slices (sorted by start) spans ts.
func encloses(t *threadLog, ts int64) bool {
	if t == nil {
		return false
	}
	// n slices start at or before ts.
	n, _ := slices.BinarySearchFunc(t.slices, ts+1, func(s slice, x int64) int { return cmp.Compare(s.start, x) })
	return n > 0 && t.maxEnd[n-1] >= ts
}

// fmtMicros formats nanoseconds as microseconds, the trace's unit.
func fmtMicros(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1000, 'f', -1, 64) + "µs"
}

// str returns x if it is a string, else "".
func str(x any) string {
	s, _ := x.(string)
	return s
}

// compact formats a JSON value for a message, shortened.
func compact(x any) string {
	if x == nil {
		return "missing"
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// jsonType names the JSON type of a decoded value.
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// aJSONType is jsonType with its article, for "x is an array": "null",
// "a number", "an object".
func aJSONType(x any) string {
	switch t := jsonType(x); t {
	case "null":
		return t
	case "array", "object":
		return "an " + t
	default:
		return "a " + t
	}
}
