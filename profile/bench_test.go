package profile

import (
	"io"
	"testing"
)

// BenchmarkSpan measures the cost of recording one kernel span, the
// profiler's overhead per kernel, from goroutines recording at once.
func BenchmarkSpan(b *testing.B) {
	r := New()
	pid := r.Process("cpu", 0)
	k := &Kernel{Name: "MatMul", Op: "MatMul", Nodes: []int{3}, FLOPs: 1e6}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		tid := r.Thread(pid, "worker", 0)
		for pb.Next() {
			start := r.Now()
			r.Span(pid, tid, "kernel", "", start, r.Now(), k, nil)
		}
	})
}

// BenchmarkWriteTrace measures writing a trace of 1000 kernel spans.
func BenchmarkWriteTrace(b *testing.B) {
	r := New()
	pid := r.Process("cpu", 0)
	tid := r.Thread(pid, "run 0", 0)
	k := &Kernel{Name: "MatMul", Op: "MatMul", Nodes: []int{3}, Inputs: []string{"f32[64,784]"}, FLOPs: 1e6, Site: "model.go:38"}
	for i := range int64(1000) {
		r.Span(pid, tid, "kernel", "", i*1000, i*1000+900, k, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.WriteTrace(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
