package profile

import (
	"strconv"
	"strings"
	"testing"
)

// named is the metadata naming pid 1 and its threads 1 and 2: events 0 to
// 2 of every trace built by events, so a case's own events start at 3.
const named = `{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"cpu"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"run 0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"worker 1"}}`

// events returns a trace in the array form: named, then evs.
func events(evs ...string) string {
	return "[" + strings.Join(append([]string{named}, evs...), ",\n") + "]"
}

// x returns an X event on pid 1 with the given tid, ts and dur (µs).
func x(name string, tid int, ts, dur string) string {
	return `{"name":"` + name + `","ph":"X","pid":1,"tid":` + strconv.Itoa(tid) + `,"ts":` + ts + `,"dur":` + dur + `}`
}

var validTraces = []struct{ name, trace string }{
	{"array form", events(x("run", 1, "0", "10"), x("k", 1, "1", "2"))},
	{"object form", `{"traceEvents":` + events(x("run", 1, "0", "10")) + `,"displayTimeUnit":"ns","otherData":{"a":"b"}}`},
	{"empty", `[]`},
	{"empty object form", `{"traceEvents":[]}`},
	{"B/E nesting", events(
		`{"name":"outer","ph":"B","pid":1,"tid":1,"ts":0}`,
		`{"name":"inner","ph":"B","pid":1,"tid":1,"ts":1}`,
		`{"name":"inner","ph":"E","pid":1,"tid":1,"ts":2}`,
		`{"ph":"E","pid":1,"tid":1,"ts":3}`, // an E without a name matches any B
		x("after", 1, "3", "1"),
	)},
	{"B/E around X", events(
		`{"name":"outer","ph":"B","pid":1,"tid":1,"ts":0}`,
		x("k", 1, "1", "1"),
		`{"name":"outer","ph":"E","pid":1,"tid":1,"ts":2}`,
	)},
	{"touching slices", events(
		x("a", 1, "0", "1.5"), x("b", 1, "1.5", "1"), // b starts where a ends
		x("parent", 2, "0", "4"), x("first", 2, "0", "2"), x("last", 2, "2", "2"), // children fill the parent exactly
	)},
	{"equal slices and zero durations", events(x("a", 1, "1", "2"), x("b", 1, "1", "2"), x("c", 1, "3", "0"), x("d", 1, "3", "0"))},
	// 1.0050000000000001 µs is 1005 ns to Perfetto, so the two touch (see
	// the invalid "overlap only as Perfetto reads it" for 1.005).
	{"fractions as Perfetto reads them", events(x("a", 1, "0", "1.0050000000000001"), x("b", 1, "1.0050000000000001", "1"))},
	{"nested child listed first", events(x("child", 1, "1", "1"), x("parent", 1, "0", "5"))},
	{"flow with t steps", events(
		x("launch", 1, "0", "10"), x("k1", 2, "2", "2"), x("k2", 2, "5", "3"),
		`{"name":"h2d","cat":"flow","ph":"s","id":7,"pid":1,"tid":1,"ts":1}`,
		`{"name":"h2d","cat":"flow","ph":"t","id":7,"pid":1,"tid":2,"ts":3}`,
		`{"name":"h2d","cat":"flow","ph":"f","id":7,"pid":1,"tid":2,"ts":6,"bp":"e"}`,
	)},
	{"flow bound to the next slice", events(
		x("launch", 1, "0", "10"), x("k", 2, "5", "1"),
		`{"name":"go","ph":"s","id":"0x1f","pid":1,"tid":1,"ts":1}`,
		`{"name":"go","ph":"f","id":31,"pid":1,"tid":2,"ts":2}`, // hex 0x1f is 31; binds to k at 5
	)},
	{"counters and instants", events(
		`{"name":"memory","ph":"C","pid":1,"ts":0,"args":{"bytes":1024,"peak":2048.5}}`,
		`{"name":"mark","ph":"i","pid":1,"tid":1,"ts":1,"s":"t"}`,
		`{"name":"mark","ph":"I","pid":1,"tid":1,"ts":1}`,
		`{"name":"global","ph":"i","pid":1,"ts":1,"s":"g"}`,
		`{"name":"process","ph":"i","pid":1,"ts":1,"s":"p"}`,
	)},
	{"all metadata kinds", events(
		`{"name":"process_labels","ph":"M","pid":1,"args":{"labels":"GPU"}}`,
		`{"name":"process_sort_index","ph":"M","pid":1,"args":{"sort_index":-2}}`,
		`{"name":"thread_sort_index","ph":"M","pid":1,"tid":1,"args":{"sort_index":3}}`,
	)},
	{"async events", events(
		`{"name":"load","cat":"io","ph":"b","id":"0x1","pid":1,"ts":0}`,
		`{"name":"load","cat":"io","ph":"n","id2":{"local":"0x1"},"pid":1,"ts":1}`,
		`{"name":"load","cat":"io","ph":"e","id":"0x1","pid":1,"ts":2}`,
	)},
	{"big integer and exponent timestamps", events(x("a", 1, "1e3", "5"), x("b", 1, "9000000000000", "1"))},
}

var invalidTraces = []struct{ name, trace, want string }{
	// The container.
	{"top level string", `"hello"`, "trace is a JSON string, not an array of events or an object"},
	{"top level number", `42`, "trace is a JSON number"},
	{"object without traceEvents", `{"events":[]}`, "no traceEvents array"},
	{"not JSON", `[{"ph":"X",]`, "trace is not JSON"},
	{"NaN literal", `[{"ph":"i","ts":NaN}]`, "trace is not JSON"},
	{"trailing data", `[] []`, "data after its JSON value"},
	{"bad displayTimeUnit", `{"traceEvents":[],"displayTimeUnit":"us"}`, `displayTimeUnit is us`},
	{"event not an object", `[1]`, "event 0: event is a JSON number, not an object"},

	// Fields of every event.
	{"missing ph", events(`{"name":"a","pid":1,"tid":1,"ts":0}`), "event 3: missing ph"},
	{"unknown ph", events(`{"name":"a","ph":"Z","pid":1,"tid":1,"ts":0}`), `event 3: unknown ph "Z"`},
	{"ph not a string", events(`{"ph":88,"pid":1,"tid":1,"ts":0}`), `event 3: unknown ph 88`},
	{"name not a string", events(`{"name":5,"ph":"X","pid":1,"tid":1,"ts":0,"dur":1}`), "event 3: name is a number, not a string"},
	{"args not an object", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"args":[1]}`), "event 3: args is an array, not an object"},
	{"missing pid", events(`{"name":"a","ph":"X","tid":1,"ts":0,"dur":1}`), "event 3: missing pid"},
	{"negative pid", events(`{"name":"a","ph":"X","pid":-1,"tid":1,"ts":0,"dur":1}`), "event 3: pid -1 is negative"},
	{"fractional pid", events(`{"name":"a","ph":"X","pid":1.5,"tid":1,"ts":0,"dur":1}`), "event 3: pid 1.5 is not an integer"},
	{"pid beyond uint32", events(`{"name":"a","ph":"X","pid":4294967296,"tid":1,"ts":0,"dur":1}`), "event 3: pid 4294967296 does not fit in 32 bits"},
	{"string tid", events(`{"name":"a","ph":"X","pid":1,"tid":"main","ts":0,"dur":1}`), "event 3: tid is a string, not a number"},
	{"missing tid on a slice", events(`{"name":"a","ph":"X","pid":1,"ts":0,"dur":1}`), "event 3: missing tid"},
	{"missing ts", events(`{"name":"a","ph":"X","pid":1,"tid":1,"dur":1}`), "event 3: missing ts"},
	{"string ts", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":"NaN","dur":1}`), "event 3: ts is a string, not a number"},
	{"infinite ts", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":1e999,"dur":1}`), "event 3: ts 1e999 is not finite"},
	{"negative ts", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":-0.5,"dur":1}`), "event 3: ts -0.5 is negative"},
	{"ts out of range", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":1e17,"dur":1}`), "event 3: ts 1e17 is out of range"},

	// Slices.
	{"X without dur", events(`{"name":"a","ph":"X","pid":1,"tid":1,"ts":0}`), "event 3: missing dur"},
	{"negative dur", events(x("a", 1, "0", "-1")), "event 3: dur -1 is negative"},
	{"partial overlap", events(x("a", 1, "0", "10"), x("b", 1, "5", "10")),
		"event 4: slice [5µs, 15µs] partially overlaps slice [0µs, 10µs] (event 3) on pid 1 tid 1"},
	// 1.005 µs is 1004 ns to Perfetto (1.005*1000 truncates), so b starts
	// a nanosecond before a's end at 1.0050000000000001 µs (1005 ns) and
	// ends after it.
	{"overlap only as Perfetto reads it", events(x("a", 1, "0", "1.0050000000000001"), x("b", 1, "1.005", "1")),
		"event 4: slice [1.004µs, 2.004µs] partially overlaps"},
	{"B without E", events(`{"name":"a","ph":"B","pid":1,"tid":1,"ts":0}`), "event 3: B without a matching E on pid 1 tid 1"},
	{"E without B", events(`{"name":"a","ph":"E","pid":1,"tid":1,"ts":0}`), "event 3: E without a matching B"},
	{"E before B", events(`{"name":"a","ph":"B","pid":1,"tid":1,"ts":10}`, `{"name":"a","ph":"E","pid":1,"tid":1,"ts":5}`),
		"event 4: E at 5µs is before its B (event 3) at 10µs"},
	{"E name differs", events(`{"name":"a","ph":"B","pid":1,"tid":1,"ts":0}`, `{"name":"b","ph":"E","pid":1,"tid":1,"ts":5}`),
		`event 4: E name "b" does not match B name "a" (event 3)`},
	{"B/E crossing an X", events(`{"name":"a","ph":"B","pid":1,"tid":1,"ts":0}`, x("k", 1, "1", "5"), `{"name":"a","ph":"E","pid":1,"tid":1,"ts":3}`),
		"event 4: slice [1µs, 6µs] partially overlaps slice [0µs, 3µs] (event 3)"},

	// Names.
	{"pid without process_name", events(
		`{"name":"thread_name","ph":"M","pid":2,"tid":9,"args":{"name":"t"}}`,
		`{"name":"a","ph":"X","pid":2,"tid":9,"ts":0,"dur":1}`),
		"event 3: pid 2 has no process_name metadata event"},
	{"tid without thread_name", events(x("a", 3, "0", "1")), "event 3: pid 1 tid 3 has no thread_name metadata event"},
	{"tid in two pids", `[{"name":"process_name","ph":"M","pid":1,"args":{"name":"a"}},
{"name":"process_name","ph":"M","pid":2,"args":{"name":"b"}},
{"name":"thread_name","ph":"M","pid":1,"tid":5,"args":{"name":"t"}},
{"name":"thread_name","ph":"M","pid":2,"tid":5,"args":{"name":"t"}}]`,
		"event 3: tid 5 is used in pid 2 and in pid 1 (event 2)"},
	{"unknown metadata", events(`{"name":"process_color","ph":"M","pid":1,"args":{"color":"red"}}`), `event 3: unknown metadata name "process_color"`},
	{"metadata without args", events(`{"name":"process_name","ph":"M","pid":1}`), "event 3: process_name has no args.name"},
	{"process_name not a string", events(`{"name":"process_name","ph":"M","pid":1,"args":{"name":1}}`), "event 3: process_name args.name is a number, not a string"},
	{"sort_index not an integer", events(`{"name":"thread_sort_index","ph":"M","pid":1,"tid":1,"args":{"sort_index":"1"}}`),
		`event 3: thread_sort_index args.sort_index is "1", not an integer`},
	{"thread metadata without tid", events(`{"name":"thread_name","ph":"M","pid":1,"args":{"name":"t"}}`), "event 3: missing tid"},

	// Counters and instants.
	{"non-numeric counter", events(`{"name":"memory","ph":"C","pid":1,"ts":0,"args":{"bytes":"lots"}}`),
		`event 3: counter value "bytes" is a string, not a number`},
	{"infinite counter", events(`{"name":"memory","ph":"C","pid":1,"ts":0,"args":{"bytes":1e400}}`), `event 3: counter value "bytes" is not finite`},
	{"counter without args", events(`{"name":"memory","ph":"C","pid":1,"ts":0}`), "event 3: counter has no args"},
	{"counter with empty args", events(`{"name":"memory","ph":"C","pid":1,"ts":0,"args":{}}`), "event 3: counter has no values in args"},
	{"instant scope", events(`{"name":"m","ph":"i","pid":1,"tid":1,"ts":0,"s":"x"}`), `event 3: instant scope s is "x"`},
	{"async without id", events(`{"name":"a","ph":"b","pid":1,"ts":0}`), "event 3: async event has neither id nor id2"},

	// Flows.
	{"flow s without f", events(x("a", 1, "0", "5"), `{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":1}`), "event 4: flow s without an f"},
	{"flow f without s", events(x("a", 1, "0", "5"), `{"name":"h","ph":"f","bp":"e","id":1,"pid":1,"tid":1,"ts":1}`), "event 4: flow f without an s"},
	{"flow t without s", events(x("a", 1, "0", "5"), `{"name":"h","ph":"t","id":1,"pid":1,"tid":1,"ts":1}`), "event 4: flow t without an s"},
	{"flow without id", events(x("a", 1, "0", "5"), `{"name":"h","ph":"s","pid":1,"tid":1,"ts":1}`),
		"event 4: flow event id is missing, not an integer or a hex string"},
	{"flow with bad id", events(x("a", 1, "0", "5"), `{"name":"h","ph":"s","id":"xyz","pid":1,"tid":1,"ts":1}`), `flow event id is "xyz"`},
	{"flow ids differ", events(x("a", 1, "0", "5"), x("b", 2, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":1}`, `{"name":"h","ph":"f","bp":"e","id":2,"pid":1,"tid":2,"ts":2}`),
		"event 5: flow s without an f"},
	{"flow f before s", events(x("a", 1, "0", "5"), x("b", 2, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":3}`, `{"name":"h","ph":"f","bp":"e","id":1,"pid":1,"tid":2,"ts":2}`),
		"event 6: flow f at 2µs is before its s (event 5) at 3µs"},
	{"flow s repeated", events(x("a", 1, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":1}`, `{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":2}`,
		`{"name":"h","ph":"f","bp":"e","id":1,"pid":1,"tid":1,"ts":3}`),
		"event 5: flow s repeats the id of the s of event 4"},
	{"flow outside any slice", events(x("a", 1, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":6}`, `{"name":"h","ph":"f","bp":"e","id":1,"pid":1,"tid":1,"ts":7}`),
		"event 4: flow s at 6µs is in no slice on pid 1 tid 1"},
	{"flow f with no next slice", events(x("a", 1, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":1}`, `{"name":"h","ph":"f","id":1,"pid":1,"tid":1,"ts":2}`),
		"event 5: flow f at 2µs has no slice starting after it"},
	{"flow bp not e", events(x("a", 1, "0", "5"),
		`{"name":"h","ph":"s","id":1,"pid":1,"tid":1,"ts":1}`, `{"name":"h","ph":"f","bp":"n","id":1,"pid":1,"tid":1,"ts":2}`),
		`event 5: bp is "n", not "e"`},
}

func TestValidateValid(t *testing.T) {
	for _, c := range validTraces {
		if err := Validate(strings.NewReader(c.trace)); err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, c.trace)
		}
	}
}

func TestValidateInvalid(t *testing.T) {
	for _, c := range invalidTraces {
		err := Validate(strings.NewReader(c.trace))
		if err == nil {
			t.Errorf("%s: no error, want %q", c.name, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error\n%v\nlacks %q", c.name, err, c.want)
		}
	}
}

// TestValidateManyProblems checks that problems are listed in event order
// and cut off after maxProblems.
func TestValidateManyProblems(t *testing.T) {
	var evs []string
	for range 30 {
		evs = append(evs, `{"name":"a","ph":"X","pid":1,"tid":1,"ts":0}`) // no dur
	}
	err := Validate(strings.NewReader(events(evs...)))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	// maxProblems lines, then one saying how many more: 30 - 20 = 10.
	if len(lines) != maxProblems+1 || lines[maxProblems] != "and 10 more problems" {
		t.Fatalf("got %d lines:\n%v", len(lines), err)
	}
	if lines[0] != "event 3: missing dur" || lines[1] != "event 4: missing dur" {
		t.Errorf("problems not in event order:\n%v", err)
	}
}
