//go:build linux

package cuda_test

import (
	"context"
	"log"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// ExampleNewNCCL averages a value over the ranks of a job with NCCL, one
// GPU per rank. boot is the job's communicator: an *mpi.Comm from
// dist/mpi's Open under mpirun (dist.Local{} here, a job of one rank).
// It needs a GPU and libnccl.so.2, so it is compiled, not run.
func ExampleNewNCCL() {
	ctx := context.Background()
	var boot dist.Communicator = dist.Local{} // mpi.Open() in a real job
	be, err := cuda.Open(boot.Rank())         // this rank's GPU (on one machine: its local rank)
	if err != nil {
		log.Fatal(err)
	}
	defer be.Close()
	nc, err := cuda.NewNCCL(ctx, be, boot, cuda.WithNCCLTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	g := graph.New()
	x := g.Input("x", tensor.Float32, 1024)
	mean := ops.AllReduce(x, ops.ReduceMean, nc.Size()) // ncclAllReduce with ncclAvg, on the stream
	p, err := exec.Compile(be, []*graph.Node{mean}, exec.WithCommunicator(nc))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	out, err := p.Run(ctx, exec.Feeds{x: tensor.Zeros(tensor.Float32, 1024)})
	if err != nil {
		log.Fatal(err) // wraps dist.ErrTimeout when a rank does not come in time
	}
	_ = out
}
