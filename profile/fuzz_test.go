package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzValidate checks that Validate never panics, whatever it reads. The
// seeds are the valid and invalid traces of the table tests and the
// golden trace.
func FuzzValidate(f *testing.F) {
	for _, c := range validTraces {
		f.Add([]byte(c.trace))
	}
	for _, c := range invalidTraces {
		f.Add([]byte(c.trace))
	}
	var golden bytes.Buffer
	if err := goldenRecording().WriteTrace(&golden); err != nil {
		f.Fatal(err)
	}
	f.Add(golden.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Validate(bytes.NewReader(data))
	})
}

// FuzzTrace checks that what WriteTrace writes for any well-formed
// recording is JSON and passes Validate. A recording is well formed when
// its spans nest on each thread and its flows start and end inside spans,
// in time order; randomRecording makes one from a seed.
func FuzzTrace(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed, uint8(seed*7))
	}
	f.Fuzz(func(t *testing.T, seed uint64, size uint8) {
		r := randomRecording(seed, int(size))
		var buf bytes.Buffer
		if err := r.WriteTrace(&buf); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("WriteTrace wrote invalid JSON:\n%s", buf.Bytes())
		}
		if err := Validate(bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatalf("seed %d size %d: %v\n%s", seed, size, err, buf.Bytes())
		}
		if err := r.WriteSummary(&strings.Builder{}); err != nil {
			t.Fatal(err)
		}
	})
}

// weird are arg and name strings that need escaping or replacing.
var weird = []string{"", "plain", `q"uote\`, "new\nline", "\x00\x01\x1f\x7f", "bad\xff\xfeutf8", "µs ✓", "\u2028"}

// randomRecording records into a new Recorder, from seed, a random but
// well-formed recording of about size spans: processes and threads, spans
// nested up to depth 3 with random kernels and args (NaN and infinities
// included), counters, instants, and flows between spans.
func randomRecording(seed uint64, size int) *Recorder {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	num := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*rng.IntN(2))
		case 2:
			return -rng.Float64() * 1e300
		}
		return rng.Float64() * math.Pow(10, float64(rng.IntN(30)-10))
	}

	r := New()
	r.SetMeta(pick(weird), pick(weird))
	type thread struct{ pid, tid int }
	type span struct {
		thread
		start, end int64
	}
	var threads []thread
	for p := range 1 + rng.IntN(3) {
		pid := r.Process(fmt.Sprintf("dev %d %s", p, pick(weird)), rng.IntN(5)-2)
		for i := range 1 + rng.IntN(3) {
			threads = append(threads, thread{pid, r.Thread(pid, fmt.Sprintf("t%d %s", i, pick(weird)), rng.IntN(3))})
		}
	}
	// Timestamps from 0 up to about 3 hours, at nanosecond resolution.
	scale := int64(1) << rng.IntN(44)
	var spans []span
	budget := size
	var fill func(th thread, start, end int64, depth int)
	fill = func(th thread, start, end int64, depth int) {
		for t := start; t <= end && budget > 0 && rng.IntN(5) != 0; {
			budget--
			s := t + rng.Int64N(end-t+1)/(1+int64(rng.IntN(3)))
			e := s + rng.Int64N(end-s+1)
			var k *Kernel
			cat := pick([]string{"kernel", "copy", "run", "compile", "call"})
			if rng.IntN(2) == 0 {
				k = &Kernel{
					Name: pick(weird), Op: pick([]string{"MatMul", "Fused", "Add", ""}),
					Fused: []string{pick(weird)}[:rng.IntN(2)], Nodes: []int{rng.IntN(100), rng.IntN(100)},
					Inputs: []string{pick(weird)}, BytesRead: rng.Int64(), BytesWritten: rng.Int64N(1 << 40),
					FLOPs: num(), Site: pick(weird), Device: pick(weird),
				}
			}
			args := map[string]any{pick(weird): num(), pick(weird): pick(weird), "ok": rng.IntN(2) == 0, "n": []float64{num()}}
			r.Span(th.pid, th.tid, cat, pick(weird), s, e, k, args)
			spans = append(spans, span{th, s, e})
			if depth < 3 {
				fill(th, s, e, depth+1)
			}
			t = e
		}
	}
	for _, th := range threads {
		fill(th, 0, scale*1000+rng.Int64N(1000), 0)
	}
	for range rng.IntN(size + 1) {
		th := threads[rng.IntN(len(threads))]
		ts := rng.Int64N(scale*1000 + 1)
		switch rng.IntN(3) {
		case 0:
			r.Counter(th.pid, pick(weird), ts, map[string]float64{pick(weird): num(), pick(weird): num()})
		case 1:
			r.Instant(th.pid, th.tid, pick(weird), ts, map[string]any{pick(weird): num()})
		case 2:
			if len(spans) > 0 {
				a, b := spans[rng.IntN(len(spans))], spans[rng.IntN(len(spans))]
				from := a.start + rng.Int64N(a.end-a.start+1)
				to := b.start + rng.Int64N(b.end-b.start+1)
				if to < from {
					a, b, from, to = b, a, to, from
				}
				r.Flow(pick(weird), a.pid, a.tid, from, b.pid, b.tid, to)
			}
		}
	}
	return r
}
