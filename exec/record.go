package exec

import (
	"strconv"
	"strings"
	"sync"

	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/profile"
)

// Version is loom's version, written into traces.
const Version = "0.1.0-dev"

// Record makes Compile record its passes into rec, as slices on the
// trace's "compile" process (one per pass, with node counts before and
// after). Runs record into the Recorder their context carries
// (profile.NewContext).
func Record(rec *profile.Recorder) Option {
	return func(c *config) error { c.rec = rec; return nil }
}

// recordCompile writes the pass timings into the Recorder.
func recordCompile(rec *profile.Recorder, be Backend, timings []PassTiming) {
	if rec == nil || len(timings) == 0 {
		return
	}
	pid := rec.Process("compile", 0)
	tid := rec.Thread(pid, "pipeline", 0)
	start, end := rec.At(timings[0].Start), rec.At(timings[len(timings)-1].End)
	rec.Span(pid, tid, "compile", "Compile for "+be.Name(), start, end, nil, nil)
	for _, t := range timings {
		if t.Skipped {
			continue
		}
		rec.Span(pid, tid, "compile", t.Name, rec.At(t.Start), rec.At(t.End), nil, map[string]any{
			"nodes_before": t.NodesBefore, "nodes_after": t.NodesAfter, "steps": t.StepsAfter, "arena_bytes": t.ArenaAfter,
		})
	}
}

// stepInfo is what the profiler shows of each step, built once per
// program on its first profiled run.
type stepInfo struct {
	kernel   *profile.Kernel
	partArgs map[string]any // the args of the step's pieces on workers
	cat      string
	live     map[string]float64 // the memory counter after the step
	skip     bool               // a view: nothing ran
}

func (p *Program) stepInfos() []stepInfo {
	p.infoOnce.Do(func() {
		dev := p.be.Device().Name
		live := p.plan.Live
		infos := make([]stepInfo, len(p.plan.Steps))
		for i, s := range p.plan.Steps {
			out := p.plan.Values[s.Out]
			k := &profile.Kernel{Device: dev, Outputs: []string{out.Node.Type()}, BytesWritten: out.Bytes, Site: s.Node.Site()}
			for _, in := range s.In {
				v := p.plan.Values[in]
				k.Inputs = append(k.Inputs, v.Node.Type())
				k.BytesRead += v.Bytes
			}
			info := stepInfo{kernel: k, cat: "kernel", live: map[string]float64{"arena live bytes": float64(live[i])}}
			switch s.Kind {
			case CopyStep:
				k.Name, k.Op, info.cat = "Copy", "Copy", "copy"
				k.Nodes = []int{s.Node.ID()}
			case AliasStep:
				info.skip = true
			default:
				n := s.Node
				k.Name, k.Op, k.Nodes = n.Op().String(), n.Op().String(), []int{n.ID()}
				if a, ok := n.Attr().(*opdef.FusedAttr); ok {
					k.Fused = a.OpNames()
					k.Name = "Fused[" + strings.Join(k.Fused, ",") + "]"
					k.Nodes = a.Nodes
					if len(a.Sites) > 0 {
						k.Site = a.Sites[len(a.Sites)-1]
					}
				}
				if d := opdef.Lookup(n.Op()); d != nil {
					k.FLOPs = d.FLOPsOf(n)
				} else {
					k.FLOPs = float64(n.Shape().Size())
				}
			}
			info.partArgs = map[string]any{"step": i, "site": k.Site}
			infos[i] = info
		}
		p.infos = infos
	})
	return p.infos
}

// runRecorder is the StepObserver of one profiled Run.
type runRecorder struct {
	rec      *profile.Recorder
	infos    []stepInfo
	pid, tid int
	mu       sync.Mutex
	tracks   map[int]int // sort index of a worker's or queue's thread -> tid
	device   bool        // a GPU program: Step is the host's launch
	lastLive float64     // the memory counter's last sample (-1: none yet)
	// iters is the iteration count a control-flow step reported for the
	// step iterStep (Iterations), shown as an arg of its slice.
	iterStep, iters int
}

// Iterations records the iterations of control-flow step step, which
// Step then shows.
func (r *runRecorder) Iterations(step, n int) { r.iterStep, r.iters = step, n }

// stepArgs returns the args of step's slice: its iteration count when it
// is a control-flow step that reported one.
func (r *runRecorder) stepArgs(step int) map[string]any {
	if r.iterStep != step {
		return nil
	}
	r.iterStep = -1
	return map[string]any{"iterations": r.iters}
}

func (r *runRecorder) Now() int64 { return r.rec.Now() }

func (r *runRecorder) Step(step int, start, end int64) {
	info := &r.infos[step]
	if info.skip {
		return
	}
	if r.device {
		// The kernel itself arrives through DeviceSpan; this is its launch.
		r.rec.Span(r.pid, r.tid, "launch", "launch "+info.kernel.Name, start, end, nil, info.partArgs)
		return
	}
	r.rec.Span(r.pid, r.tid, info.cat, "", start, end, info.kernel, r.stepArgs(step))
	r.sampleMemory(info, end)
}

// sampleMemory records the arena counter after a step, only where its
// value changes.
func (r *runRecorder) sampleMemory(info *stepInfo, t int64) {
	if live := info.live["arena live bytes"]; live != r.lastLive {
		r.lastLive = live
		r.rec.Counter(r.pid, "memory", t, info.live)
	}
}

// track returns the tid of the thread named name+" "+n, sorted at
// sortBase+n, creating it on first use (worker goroutines, device queues).
func (r *runRecorder) track(name string, n, sortBase int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	tid, ok := r.tracks[sortBase+n]
	if !ok {
		tid = r.rec.Thread(r.pid, name+" "+strconv.Itoa(n), sortBase+n)
		r.tracks[sortBase+n] = tid
	}
	return tid
}

func (r *runRecorder) Part(step, worker int, dispatched, start, end int64) {
	tid := r.track("worker", worker, 1000)
	info := &r.infos[step]
	r.rec.Span(r.pid, tid, "kernel-part", info.kernel.Name, start, end, nil, info.partArgs)
	r.rec.Flow("dispatch", r.pid, r.tid, dispatched, r.pid, tid, start)
}

// DeviceSpan records work that ran on a device queue: on the queue's own
// track ("stream N"), with a flow arrow from the host's launch.
func (r *runRecorder) DeviceSpan(queue, step int, name string, bytes int64, launched, start, end int64) {
	tid := r.track("stream", queue, 2000)
	if step >= 0 {
		info := &r.infos[step]
		r.rec.Span(r.pid, tid, info.cat, "", start, end, info.kernel, r.stepArgs(step))
		r.sampleMemory(info, end)
	} else {
		r.rec.Span(r.pid, tid, "copy", name, start, end, nil, map[string]any{"bytes": bytes})
	}
	r.rec.Flow("launch", r.pid, r.tid, launched, r.pid, tid, start)
}

// DeviceMemory records the device's memory in use as a counter.
func (r *runRecorder) DeviceMemory(t, bytes int64) {
	r.rec.Counter(r.pid, "device memory", t, map[string]float64{"device bytes in use": float64(bytes)})
}

// startRecording prepares the observer of a profiled Run on frame f.
func (p *Program) startRecording(rec *profile.Recorder, f *Frame) *runRecorder {
	dev := p.be.Device()
	rec.SetMeta("loom_version", Version)
	rec.SetMeta("backend", p.be.Name())
	rec.SetMeta("device", dev.String())
	pid := rec.Process(dev.Name, 1)
	return &runRecorder{
		rec: rec, infos: p.stepInfos(), pid: pid,
		tid:      rec.Thread(pid, "run "+strconv.Itoa(f.id), f.id),
		tracks:   map[int]int{},
		device:   dev.Kind == GPU,
		lastLive: -1,
		iterStep: -1,
	}
}

// finishRecording records the Run's own slice.
func (r *runRecorder) finish(start int64, err error) {
	args := map[string]any{"steps": len(r.infos)}
	if err != nil {
		args["error"] = err.Error()
	}
	r.rec.Span(r.pid, r.tid, "run", "Run", start, r.rec.Now(), nil, args)
}
