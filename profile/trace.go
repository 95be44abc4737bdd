package profile

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// generator is the value of otherData's "generator" key.
const generator = "loom profile"

// WriteTrace writes the recorded events as Chrome trace-event JSON in the
// object form, {"traceEvents": [...], "displayTimeUnit": "ms",
// "otherData": {...}}, one event per line. It opens in Perfetto and
// chrome://tracing, and passes Validate when the recording followed the
// rules of Span and Flow with pids and tids from Process and Thread.
//
// Metadata events come first: process_name and process_sort_index for
// every process, then thread_name and thread_sort_index for every thread
// (a pid or tid used without Process or Thread gets a made-up name). Then
// come the recorded events sorted by timestamp, the longer first among
// slices that start together (so parents precede children), then in
// recording order. ts and dur are microseconds, with three decimals but
// for the few values that need more to be read right (see micros).
// Process-scoped events (process metadata, counters) carry tid 0, which
// no thread uses, because Perfetto attaches every event to a thread and
// would otherwise take tid == pid, which may be another process's thread.
//
// WriteTrace may run while other goroutines record: it writes the events
// recorded when it starts.
//
// A nil w is an error; a nil Recorder writes a trace of no events.
func (r *Recorder) WriteTrace(w io.Writer) error {
	if w == nil {
		return errors.New("profile: WriteTrace to a nil io.Writer")
	}
	s := r.snapshot()
	bw := bufio.NewWriter(w)
	var b []byte
	first := true
	emit := func() {
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		bw.Write(b)
	}
	bw.WriteString("{\"traceEvents\":[\n")
	for _, m := range metadata(&s) {
		b = m.append(b[:0])
		emit()
	}
	for _, e := range sortEvents(s.events) {
		if e.ph == 'C' && !hasFinite(e.series) {
			continue
		}
		b = e.append(b[:0])
		emit()
	}
	bw.WriteString("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":")
	bw.Write(appendOtherData(b[:0], s.meta))
	bw.WriteString("}\n")
	return bw.Flush()
}

// sortEvents returns pointers to the events in trace order: by ts, then
// longer dur first, then recording order.
func sortEvents(events []event) []*event {
	order := make([]*event, len(events))
	for i := range events {
		order[i] = &events[i]
	}
	slices.SortStableFunc(order, func(a, b *event) int {
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return cmp.Compare(b.dur, a.dur)
	})
	return order
}

// meta is one "M" event.
type meta struct {
	name     string // process_name, thread_name, ...
	pid, tid int
	key      string // the args key: "name" or "sort_index"
	str      string // the value when key is "name"
	num      int    // the value when key is "sort_index"
}

func (m meta) append(b []byte) []byte {
	b = append(b, `{"name":"`...)
	b = append(b, m.name...)
	b = append(b, `","ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(m.pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(m.tid), 10)
	b = append(b, `,"args":{"`...)
	b = append(b, m.key...)
	b = append(b, `":`...)
	if m.key == "name" {
		b = appendString(b, m.str)
	} else {
		b = strconv.AppendInt(b, int64(m.num), 10)
	}
	return append(b, "}}"...)
}

// metadata returns the M events naming and ordering every process and
// thread that was created or is used by an event.
func metadata(s *snapshot) []meta {
	pids := map[int]bool{}
	type pt struct{ pid, tid int }
	tids := map[pt]bool{}
	for pid := 1; pid <= len(s.procs); pid++ {
		pids[pid] = true
	}
	for i, t := range s.threads {
		pids[t.pid] = true
		tids[pt{t.pid, i + 1}] = true
	}
	for i := range s.events {
		e := &s.events[i]
		pids[e.pid] = true
		if e.ph != 'C' {
			tids[pt{e.pid, e.tid}] = true
		}
	}

	var ms []meta
	for _, pid := range slices.Sorted(maps.Keys(pids)) {
		name, sort := fmt.Sprintf("process %d", pid), pid
		if pid >= 1 && pid <= len(s.procs) {
			name, sort = s.procs[pid-1].name, s.procs[pid-1].sort
		}
		ms = append(ms,
			meta{name: "process_name", pid: pid, key: "name", str: name},
			meta{name: "process_sort_index", pid: pid, key: "sort_index", num: sort})
	}
	keys := slices.SortedFunc(maps.Keys(tids), func(a, b pt) int {
		return cmp.Or(cmp.Compare(a.tid, b.tid), cmp.Compare(a.pid, b.pid))
	})
	for _, k := range keys {
		name, sort := fmt.Sprintf("thread %d", k.tid), k.tid
		if k.tid >= 1 && k.tid <= len(s.threads) && s.threads[k.tid-1].pid == k.pid {
			name, sort = s.threads[k.tid-1].name, s.threads[k.tid-1].sort
		}
		ms = append(ms,
			meta{name: "thread_name", pid: k.pid, tid: k.tid, key: "name", str: name},
			meta{name: "thread_sort_index", pid: k.pid, tid: k.tid, key: "sort_index", num: sort})
	}
	return ms
}

// append appends e as one JSON object.
func (e *event) append(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, e.name)
	if e.cat != "" {
		b = append(b, `,"cat":`...)
		b = appendString(b, e.cat)
	}
	b = append(b, `,"ph":"`...)
	b = append(b, e.ph, '"')
	b = append(b, `,"ts":`...)
	b = appendMicros(b, micros(e.ts))
	if e.ph == 'X' {
		b = append(b, `,"dur":`...)
		b = appendMicros(b, micros(e.dur))
	}
	tid := e.tid
	if e.ph == 'C' {
		tid = 0
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	switch e.ph {
	case 's', 'f':
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, e.id, 10)
		if e.ph == 'f' {
			b = append(b, `,"bp":"e"`...)
		}
	case 'i':
		b = append(b, `,"s":"t"`...)
	}

	o := object{b: b}
	if e.ph == 'C' {
		for _, k := range slices.Sorted(maps.Keys(e.series)) {
			if v := e.series[k]; !math.IsInf(v, 0) && !math.IsNaN(v) {
				o.key(",\"args\":", k)
				o.b = appendFloat(o.b, v)
			}
		}
	} else {
		if k := e.kernel; k != nil {
			o.kernel(k, e.args)
		}
		for _, k := range slices.Sorted(maps.Keys(e.args)) {
			o.key(",\"args\":", k)
			o.b = appendValue(o.b, e.args[k])
		}
	}
	return append(o.close(), '}')
}

// object writes the members of a JSON object that is opened lazily, so
// that an empty one is left out.
type object struct {
	b    []byte
	open bool
}

// key opens the object with prefix if it is the first member, and writes
// the member's key.
func (o *object) key(prefix, k string) {
	if o.open {
		o.b = append(o.b, ',')
	} else {
		o.b = append(o.b, prefix...)
		o.b = append(o.b, '{')
		o.open = true
	}
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *object) close() []byte {
	if o.open {
		o.b = append(o.b, '}')
	}
	return o.b
}

// kernel writes k's fields as args, leaving out those that extra
// overrides and fused when k fused nothing.
func (o *object) kernel(k *Kernel, extra map[string]any) {
	field := func(name string, v any) {
		if _, ok := extra[name]; !ok {
			o.key(",\"args\":", name)
			o.b = appendValue(o.b, v)
		}
	}
	field("op", k.Op)
	if len(k.Fused) > 0 {
		field("fused", k.Fused)
	}
	field("nodes", k.Nodes)
	field("inputs", k.Inputs)
	field("outputs", k.Outputs)
	field("bytes_read", k.BytesRead)
	field("bytes_written", k.BytesWritten)
	field("flops", k.FLOPs)
	field("site", k.Site)
	field("device", k.Device)
}

func appendOtherData(b []byte, m map[string]string) []byte {
	b = append(b, `{"generator":`...)
	b = appendString(b, generator)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "generator" {
			continue
		}
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// micros converts ns nanoseconds to the microseconds written to the
// trace: float64(ns)/1000, with one exception. Perfetto turns a
// fractional timestamp into nanoseconds as int64(value*1000) in float64,
// which truncates: 1.005*1000 is 1004.9999999999999. For about one value
// in 250 the nearest float64 would arrive a nanosecond early, enough to
// make touching slices overlap. For those micros returns the next float64
// up, written "1.0050000000000001", which Perfetto reads as 1005 ns and
// exact decimal readers round to 1005 ns.
func micros(ns int64) float64 {
	us := float64(ns) / 1000
	if int64(us*1000) == ns {
		return us
	}
	if up := math.Nextafter(us, math.Inf(1)); int64(up*1000) == ns {
		return up
	}
	return us // beyond float64's precision
}

// appendMicros appends us, a value from micros, with three decimals
// ("1.005") when they are exact and in its shortest form otherwise
// ("1.0050000000000001").
func appendMicros(b []byte, us float64) []byte {
	if n := math.Round(us * 1000); n/1000 == us {
		return strconv.AppendFloat(b, us, 'f', 3, 64)
	}
	return strconv.AppendFloat(b, us, 'f', -1, 64)
}

// appendFloat appends a finite f as a JSON number and a non-finite one as
// the string "NaN", "+Inf" or "-Inf", since JSON has no such numbers.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return appendString(b, "NaN")
	case math.IsInf(f, 0):
		return appendString(b, strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}

// appendValue appends an arg value as JSON.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float32:
		return appendFloat(b, float64(v))
	case float64:
		return appendFloat(b, v)
	case []string:
		return appendArray(b, v, appendString)
	case []int:
		return appendArray(b, v, func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(i), 10) })
	case []float64:
		return appendArray(b, v, appendFloat)
	case fmt.Stringer:
		return appendString(b, v.String())
	case error:
		return appendString(b, v.Error())
	}
	if j, err := json.Marshal(v); err == nil {
		return append(b, j...)
	}
	return appendString(b, fmt.Sprint(v))
}

// appendArray appends s as a JSON array; nil is the empty array.
func appendArray[T any](b []byte, s []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string. It writes no \u escapes, which
// older Perfetto importers reject: control characters without a short
// escape (and DEL, which Perfetto's tokenizer also refuses) become U+FFFD,
// as do bytes that are not UTF-8.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c < 0x20 || c == 0x7f:
			b = utf8.AppendRune(b, utf8.RuneError)
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// hasFinite reports whether a counter sample has a value JSON can hold.
func hasFinite(series map[string]float64) bool {
	for _, v := range series {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			return true
		}
	}
	return false
}
