package profile

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// Recorder collects the events of one or more runs: spans (kernels, copies,
// runs, compile passes), counters, instants and flow arrows, each on a
// process (a device, or the compile pipeline) and a thread (a run, a
// worker goroutine, a stream).
//
// A Recorder is safe for concurrent use by many goroutines: several Runs
// may record into one Recorder at once. All methods are no-ops on a nil
// *Recorder (Now, Process, Thread and Runs return 0), so callers may write
// profile.FromContext(ctx).Span(...) without a check, though a hot path
// should test for nil once to skip building its arguments.
//
// Create Recorders with New. (A zero Recorder records too, but its clock
// counts from the zero time.) Timestamps are nanoseconds on the Recorder's
// clock (see Now); negative ones count as 0. The Recorder keeps the *Kernel and args maps it is given
// without copying them: an executor can build one Kernel per step when it
// compiles and pass the same pointer on every run, but nobody may modify a
// Kernel or a map after passing it.
type Recorder struct {
	start time.Time // the clock's origin; Now is time.Since(start)

	mu      sync.Mutex
	meta    map[string]string
	procs   []process // pid i+1 is procs[i]
	threads []thread  // tid i+1 is threads[i]
	byProc  map[string]int
	byThr   map[threadKey]int
	events  []event
	nextID  uint64 // last flow id handed out
	runs    int    // spans of cat "run" recorded since the last Reset
	calls   int    // recorded calls of Function's fn, 0 if not from Function
	warmup  int    // Function's unrecorded warm-up calls
}

type process struct {
	name string
	sort int
}

type thread struct {
	pid  int
	name string
	sort int
}

type threadKey struct {
	pid  int
	name string
}

// event is one recorded trace event. Its place in Recorder.events is its
// insertion order, the last tie-breaker when events are sorted.
type event struct {
	ph       byte // 'X', 'C', 'i', 's' or 'f'
	pid, tid int
	ts, dur  int64 // ns; dur only for 'X'
	cat      string
	name     string
	kernel   *Kernel            // 'X' only, may be nil
	args     map[string]any     // 'X' and 'i'
	series   map[string]float64 // 'C'
	id       uint64             // 's' and 'f'
}

// Kernel describes one executed kernel: an op, or a fused group of ops.
type Kernel struct {
	Name         string   // slice name: "MatMul", or "fused[Mul,Add,Tanh]"
	Op           string   // op kind for the summary's per-op table: "MatMul", "Fused"
	Fused        []string // ops inside a fused kernel (nil otherwise)
	Nodes        []int    // graph node ids it computes
	Inputs       []string // operand types, "f32[64,784]"
	Outputs      []string // result types
	BytesRead    int64
	BytesWritten int64
	FLOPs        float64
	Site         string // the user's call site, "model.go:38"
	Device       string
}

// New returns an empty Recorder whose clock starts now.
func New() *Recorder {
	return &Recorder{
		start:  time.Now(),
		meta:   map[string]string{},
		byProc: map[string]int{},
		byThr:  map[threadKey]int{},
	}
}

type ctxKey struct{}

// NewContext returns a copy of ctx that carries r. Program.Run records into
// the Recorder its context carries. A nil r hides any Recorder an outer
// context carries.
//
// A nil ctx is taken as context.Background().
func NewContext(ctx context.Context, r *Recorder) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext returns the Recorder ctx carries, or nil if it carries none
// (or ctx is nil). It does not allocate.
func FromContext(ctx context.Context) *Recorder {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(ctxKey{}).(*Recorder)
	return r
}

// Now returns the Recorder's clock: nanoseconds since New, from the
// monotonic clock.
func (r *Recorder) Now() int64 {
	if r == nil {
		return 0
	}
	return int64(time.Since(r.start))
}

// At converts a wall-clock time to the Recorder's clock (nanoseconds since
// New; negative for times before it). The executor uses it for events it
// timed before it knew the Recorder, such as compile passes.
func (r *Recorder) At(t time.Time) int64 {
	if r == nil {
		return 0
	}
	return int64(t.Sub(r.start))
}

// SetMeta sets a key of the trace's "otherData" object, such as
// "loom_version", "backend" or "device". The key "generator" is reserved:
// it is always "loom profile".
func (r *Recorder) SetMeta(key, value string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.meta == nil {
		r.meta = map[string]string{}
	}
	r.meta[key] = value
	r.mu.Unlock()
}

// Process returns the pid of the process called name ("cpu", "cuda:0",
// "compile"), creating it on first use. Pids start at 1; a later call with
// the same name returns the same pid and keeps the first sortIndex, which
// orders the processes in the viewer (lowest first).
func (r *Recorder) Process(name string, sortIndex int) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if pid, ok := r.byProc[name]; ok {
		return pid
	}
	if r.byProc == nil {
		r.byProc = map[string]int{}
	}
	r.procs = append(r.procs, process{name: name, sort: sortIndex})
	pid := len(r.procs)
	r.byProc[name] = pid
	return pid
}

// Thread returns the tid of the thread called name ("run 0", "worker 1",
// "stream 0") in process pid, creating it on first use. Tids start at 1
// and are unique across the whole trace, not only within pid, since
// viewers look threads up by tid. sortIndex orders the threads within
// their process; a later call keeps the first one.
func (r *Recorder) Thread(pid int, name string, sortIndex int) int {
	if r == nil {
		return 0
	}
	k := threadKey{pid, name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if tid, ok := r.byThr[k]; ok {
		return tid
	}
	if r.byThr == nil {
		r.byThr = map[threadKey]int{}
	}
	r.threads = append(r.threads, thread{pid: pid, name: name, sort: sortIndex})
	tid := len(r.threads)
	r.byThr[k] = tid
	return tid
}

// Span records one complete slice (an "X" event) on thread tid of process
// pid, from start to end (nanoseconds on the Recorder's clock). cat is
// "kernel", "copy", "run", "compile", ...: spans of cat "kernel" and "copy"
// make up the summary's kernel time, and spans of cat "run" are counted by
// Runs. k describes the kernel and may be nil; if name is empty, k.Name is
// used. args are extra arguments shown with the slice (string, number or
// bool values); they take precedence over k's fields of the same name.
//
// Spans on one thread must nest or be disjoint (touching is fine). A
// negative start counts as 0 and an end before start as start.
func (r *Recorder) Span(pid, tid int, cat, name string, start, end int64, k *Kernel, args map[string]any) {
	if r == nil {
		return
	}
	start = max(start, 0)
	end = max(end, start)
	if name == "" && k != nil {
		name = k.Name
	}
	r.mu.Lock()
	r.events = append(r.events, event{ph: 'X', pid: pid, tid: tid, ts: start, dur: end - start,
		cat: cat, name: name, kernel: k, args: args})
	if cat == "run" {
		r.runs++
	}
	r.mu.Unlock()
}

// Counter records a sample ("C" event) of the counter track called name in
// process pid: series name -> value, such as {"bytes": 1 << 20} for a
// memory track. Non-finite values are left out of the trace (JSON cannot
// hold them), and a sample left with no values is dropped.
func (r *Recorder) Counter(pid int, name string, ts int64, series map[string]float64) {
	r.add(event{ph: 'C', pid: pid, ts: max(ts, 0), name: name, series: series})
}

// Flow records an arrow from a point on one thread to a point on another,
// showing work handed from one to the other (a host thread launching a
// kernel on a stream, say): an "s" event at (fromPid, fromTid, fromTs) and
// an "f" event with "bp":"e" at (toPid, toTid, toTs), with the same cat
// ("flow"), name and a fresh id. Viewers bind each end to the slice that
// encloses it on its thread, so both points should lie inside spans, and
// toTs should not be before fromTs.
func (r *Recorder) Flow(name string, fromPid, fromTid int, fromTs int64, toPid, toTid int, toTs int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.nextID++
	id := r.nextID
	r.events = append(r.events,
		event{ph: 's', pid: fromPid, tid: fromTid, ts: max(fromTs, 0), cat: flowCat, name: name, id: id},
		event{ph: 'f', pid: toPid, tid: toTid, ts: max(toTs, 0), cat: flowCat, name: name, id: id})
	r.mu.Unlock()
}

// flowCat is the category of the events Flow records.
const flowCat = "flow"

// Instant records a thread-scoped instant ("i" event with "s":"t"): a mark
// at one point in time, with optional args.
func (r *Recorder) Instant(pid, tid int, name string, ts int64, args map[string]any) {
	r.add(event{ph: 'i', pid: pid, tid: tid, ts: max(ts, 0), name: name, args: args})
}

func (r *Recorder) add(e event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Runs returns how many spans of cat "run" were recorded since New or the
// last Reset. The executor records one per Program.Run.
func (r *Recorder) Runs() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs
}

// Reset drops the recorded events (and the counts of runs and of
// Function's calls) and keeps the metadata, processes and threads, so a
// long-lived Recorder can profile one phase of a program after another.
func (r *Recorder) Reset() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.events = nil
	r.runs, r.calls, r.warmup = 0, 0, 0
	r.mu.Unlock()
}

// snapshot is a consistent copy of a Recorder's state for the writers.
type snapshot struct {
	meta    map[string]string
	procs   []process
	threads []thread
	events  []event // shares the Recorder's backing array: read only
	runs    int
	calls   int
	warmup  int
}

// snapshot copies what the writers need, so that they run without holding
// the lock. Events are only ever appended (Reset replaces the slice), so
// the first len(events) elements never change. A nil Recorder has an empty
// snapshot.
func (r *Recorder) snapshot() snapshot {
	if r == nil {
		return snapshot{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return snapshot{
		meta:    maps.Clone(r.meta),
		procs:   slices.Clone(r.procs),
		threads: slices.Clone(r.threads),
		events:  r.events[:len(r.events):len(r.events)],
		runs:    r.runs,
		calls:   r.calls,
		warmup:  r.warmup,
	}
}
