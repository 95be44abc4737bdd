package cpu_test

import (
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkIndexAddManyToFew: 8192 rows of 512 float32 added into 16
// (a segment sum by class; the scatter-add that has to scale across
// threads without atomics), and into 50000 (an embedding's gradient), at
// 1 and 2 threads. Bytes: the rows read and the result's rows read and
// written.
func BenchmarkIndexAddManyToFew(b *testing.B) {
	for _, rows := range []int{16, 50000} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("into%d/threads%d", rows, threads), func(b *testing.B) {
				be, err := cpu.New(cpu.Threads(threads))
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				g := graph.New()
				ns, feeds := exectest.Inputs(g, exectest.Rand(tensor.Float32, tensor.Shape{rows, 512}, -1, 1, 1),
					exectest.Rand(tensor.Int32, tensor.Shape{8192}, 0, float64(rows), 2), exectest.Rand(tensor.Float32, tensor.Shape{8192, 512}, -1, 1, 3))
				y := ops.IndexAdd(ns[0], ns[1], ns[2], 0)
				benchRun(b, be, []*graph.Node{y}, feeds, int64(4*512*(8192+2*rows)))
			})
		}
	}
}
