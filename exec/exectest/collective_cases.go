package exectest

import (
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// collectiveCases run every collective op in every dtype it admits on a
// group of one rank (which needs no communicator: Compile gives it dist.Local{}), where each is
// the identity: they check that the backend runs the op through its
// communicator path and lays out the bytes right (AllGather and
// ReduceScatter on a middle axis pack and unpack). What several ranks
// compute is checked by exec's tests on dist.NewGroup and by dist/mpi's
// under mpirun.
func collectiveCases() []Case {
	var cs []Case
	shape := tensor.Shape{2, 3, 2}
	each := func(name string, dts []tensor.DType, f func(x *graph.Node) *graph.Node) {
		for _, dt := range dts {
			seed := seedOf(name) + uint64(dt)
			cs = append(cs, Case{Name: fmt.Sprintf("collective/%s/%v", name, dt), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Rand(dt, shape, -5, 5, seed))
				return []*graph.Node{f(ns[0])}, feeds
			}})
		}
	}
	numeric := append([]tensor.DType{tensor.Float32, tensor.Float64}, intTypes...)
	all := append(append([]tensor.DType{}, numeric...), complexTypes...)
	each("allreduce-sum", all, func(x *graph.Node) *graph.Node { return ops.AllReduce(x, ops.ReduceSum, 1) })
	each("allreduce-mean", []tensor.DType{tensor.Float32}, func(x *graph.Node) *graph.Node { return ops.AllReduce(x, ops.ReduceMean, 1) })
	each("allreduce-max", []tensor.DType{tensor.Int32}, func(x *graph.Node) *graph.Node { return ops.AllReduce(x, ops.ReduceMax, 1) })
	each("allgather", all, func(x *graph.Node) *graph.Node { return ops.AllGather(x, 1, 1) })
	each("reducescatter", all, func(x *graph.Node) *graph.Node { return ops.ReduceScatter(x, ops.ReduceSum, 1, 1) })
	each("broadcast", all, func(x *graph.Node) *graph.Node { return ops.Broadcast(x, 0, 1) })
	each("reduce", all, func(x *graph.Node) *graph.Node { return ops.Reduce(x, ops.ReduceSum, 0, 1) })
	each("reduce-min", []tensor.DType{tensor.Int8}, func(x *graph.Node) *graph.Node { return ops.Reduce(x, ops.ReduceMin, 0, 1) })
	return cs
}
