package bench

import (
	"context"
	"fmt"

	"time"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// Loom is the loom engine: the CPU backend with a fixed thread count,
// every workload compiled once into a Program and run with RunInto into
// preallocated outputs (the zero-allocation path).
type Loom struct {
	be      *cpu.Backend
	threads int
}

// NewLoom opens loom's CPU backend with threads kernel goroutines.
func NewLoom(threads int) (*Loom, error) {
	be, err := cpu.New(cpu.Threads(threads))
	if err != nil {
		return nil, err
	}
	return &Loom{be: be, threads: threads}, nil
}

func (e *Loom) Name() string    { return "loom" }
func (e *Loom) Version() string { return exec.Version }
func (e *Loom) Close() error    { return e.be.Close() }

type loomInst struct {
	spec   Spec
	prog   *exec.Program
	feeds  exec.Feeds
	outs   []*tensor.Tensor
	params []*graph.Node        // mlp
	init   map[string][]float32 // mlp: initial parameter values by check name
	names  []string             // mlp: check names of params
}

func f32(data []float32, shape ...int) *tensor.Tensor {
	t, err := tensor.New(data, shape...)
	if err != nil {
		panic(err) // a bug in this package: shapes are ours
	}
	return t
}

// New builds the workload as a loom graph:
//
//	mlp:    MatMul+Add(+Relu) layers, Mean(SoftmaxCrossEntropy(logits, onehot, -1)),
//	        optim.Minimize(optim.SGD{LR}, ...) as the Program's variable updates;
//	chain:  ops.Mul(y, ops.Scalar(y, 0.999)) / ops.Add(y, row) / ops.Tanh(y), as chain()
//	        in exec/cpu/bench_test.go (the compiler fuses it);
//	matmul: ops.MatMul(a, b);
//	xent:   Mean(SoftmaxCrossEntropy(logits, onehot, -1)) and autodiff.Grad by logits;
//	sort:   ops.Sort(x, 0, false); topk: ops.TopK(x, k, 0, true);
//	embed:  ops.Gather(table, ids, 0) and autodiff.VJP by the table for the upstream
//	        gradient gy (an IndexAdd into zeros);
//	charlm: see newCharLM;
//	conv:   ops.Conv(x, w, Stride, Padding, Groups) and autodiff.VJP by x and w for
//	        the upstream gradient gy (see newConv);
//	cnn:    examples/cnn's model with package nn, Adam (see newCNN).
func (e *Loom) New(s Spec) (Instance, error) {
	g := graph.New()
	in := &loomInst{spec: s}
	var outs []*graph.Node
	var opts []exec.Option
	switch s.Kind {
	case KindMLP:
		d := s.mlpData()
		nIn, nOut := s.Layers[0], s.Layers[len(s.Layers)-1]
		x := g.Input("x", tensor.Float32, s.Batch, nIn)
		y := g.Input("y", tensor.Float32, s.Batch, nOut)
		in.init = map[string][]float32{}
		h := x
		for l := range d.w {
			fi, fo := s.Layers[l], s.Layers[l+1]
			w := g.Variable(fmt.Sprintf("w%d", l), f32(append([]float32(nil), d.w[l]...), fi, fo))
			b := g.Variable(fmt.Sprintf("b%d", l), f32(append([]float32(nil), d.b[l]...), fo))
			in.params = append(in.params, w, b)
			wn, bn := fmt.Sprintf("dW%d", l), fmt.Sprintf("db%d", l)
			in.names = append(in.names, wn, bn)
			in.init[wn], in.init[bn] = d.w[l], d.b[l]
			h = ops.Add(ops.MatMul(h, w), b)
			if l+1 < len(d.w) {
				h = ops.Relu(h)
			}
		}
		loss := ops.Mean(ops.SoftmaxCrossEntropy(h, y, -1))
		ups, err := optim.Minimize(optim.SGD{LR: s.LR}, loss, in.params...)
		if err != nil {
			return nil, err
		}
		outs, opts = []*graph.Node{loss}, ups
		in.feeds = exec.Feeds{x: f32(d.x, s.Batch, nIn), y: f32(d.y, s.Batch, nOut)}
	case KindChain:
		xd, rd := s.chainData()
		x := g.Input("x", tensor.Float32, s.N/ChainRow, ChainRow)
		row := g.Const(f32(rd, ChainRow))
		y := x
		for i := 0; i < ChainOps; i++ {
			switch ChainOp(i, s.Tanh) {
			case 't':
				y = ops.Tanh(y)
			case 'm':
				y = ops.Mul(y, ops.Scalar(y, ChainScale))
			default:
				y = ops.Add(y, row)
			}
		}
		outs = []*graph.Node{y}
		in.feeds = exec.Feeds{x: f32(xd, s.N/ChainRow, ChainRow)}
	case KindMatMul:
		ad, bd := s.matmulData()
		a := g.Input("a", tensor.Float32, s.N, s.N)
		b := g.Input("b", tensor.Float32, s.N, s.N)
		outs = []*graph.Node{ops.MatMul(a, b)}
		in.feeds = exec.Feeds{a: f32(ad, s.N, s.N), b: f32(bd, s.N, s.N)}
	case KindXent:
		ld, yd := s.xentData()
		logits := g.Input("logits", tensor.Float32, s.Rows, s.Classes)
		y := g.Input("y", tensor.Float32, s.Rows, s.Classes)
		loss := ops.Mean(ops.SoftmaxCrossEntropy(logits, y, -1))
		outs = []*graph.Node{loss, autodiff.Grad(loss, logits)[0]}
		in.feeds = exec.Feeds{logits: f32(ld, s.Rows, s.Classes), y: f32(yd, s.Rows, s.Classes)}
	case KindCharLM:
		var err error
		if outs, opts, err = e.newCharLM(g, s, in); err != nil {
			return nil, err
		}
	case KindConv:
		outs = newConv(g, s, in)
	case KindCNN:
		var err error
		if outs, opts, err = e.newCNN(g, s, in); err != nil {
			return nil, err
		}
	case KindSort, KindTopK:
		x := g.Input("x", tensor.Float32, s.N)
		if s.Kind == KindSort {
			outs = []*graph.Node{ops.Sort(x, 0, false)}
		} else {
			v, i := ops.TopK(x, s.K, 0, true)
			outs = []*graph.Node{v, i}
		}
		in.feeds = exec.Feeds{x: f32(Uniform(s.Seed, s.N, -1, 1), s.N)}
	case KindEmbed:
		td, ids, gyd := s.embedData()
		table := g.Input("table", tensor.Float32, s.Vocab, s.Dim)
		id := g.Input("ids", tensor.Int64, s.Tokens)
		gy := g.Input("gy", tensor.Float32, s.Tokens, s.Dim)
		out := ops.Gather(table, id, 0)
		outs = []*graph.Node{out, autodiff.VJP([]*graph.Node{out}, []*graph.Node{table}, []*graph.Node{gy})[0]}
		idt, err := tensor.New(ids, s.Tokens)
		if err != nil {
			return nil, err
		}
		in.feeds = exec.Feeds{table: f32(td, s.Vocab, s.Dim), id: idt, gy: f32(gyd, s.Tokens, s.Dim)}
	default:
		return nil, fmt.Errorf("loom: unknown workload kind %q", s.Kind)
	}
	if err := g.Err(); err != nil {
		return nil, err
	}
	prog, err := exec.Compile(e.be, outs, opts...)
	if err != nil {
		return nil, err
	}
	in.prog = prog
	if s.Kind == KindCNN {
		if err := in.setCNNParams(); err != nil {
			prog.Close()
			return nil, err
		}
	}
	for _, o := range outs {
		in.outs = append(in.outs, tensor.Zeros(o.DType(), o.Shape()...))
	}
	return in, nil
}

func (in *loomInst) step() error {
	return in.prog.RunInto(context.Background(), in.feeds, in.outs)
}

func (in *loomInst) Run(iters int) (time.Duration, float64, error) {
	return goRun(iters, in.step)
}

func (in *loomInst) Close() error { return in.prog.Close() }

func values(t *tensor.Tensor) []float32 {
	v, err := tensor.Values[float32](t)
	if err != nil {
		panic(err)
	}
	return v
}

func (in *loomInst) Check() (map[string][]float64, error) {
	res := map[string][]float64{}
	if in.spec.Kind == KindCharLM || in.spec.Kind == KindCNN {
		var losses []float64
		for i := 0; i < 3; i++ {
			if err := in.step(); err != nil {
				return nil, err
			}
			losses = append(losses, float64(values(in.outs[0])[0]))
		}
		res["loss"] = losses
		return res, nil
	}
	if in.spec.Kind == KindMLP {
		var losses []float64
		for i := 0; i < 3; i++ {
			if err := in.step(); err != nil {
				return nil, err
			}
			losses = append(losses, float64(values(in.outs[0])[0]))
			if i == 0 {
				for j, p := range in.params {
					t, err := in.prog.Read(p)
					if err != nil {
						return nil, err
					}
					res[in.names[j]] = delta(values(t), in.init[in.names[j]])
				}
			}
		}
		res["loss"] = losses
		return res, nil
	}
	if err := in.step(); err != nil {
		return nil, err
	}
	switch in.spec.Kind {
	case KindXent:
		res["loss"] = []float64{float64(values(in.outs[0])[0])}
		res["grad"] = subsample(values(in.outs[1]))
	case KindTopK:
		res["values"] = subsample(values(in.outs[0]))
		idx, err := tensor.Values[int64](in.outs[1])
		if err != nil {
			return nil, err
		}
		for _, j := range idx {
			res["indices"] = append(res["indices"], float64(j))
		}
	case KindEmbed:
		res["out"] = subsample(values(in.outs[0]))
		res["grad"] = subsample(values(in.outs[1]))
	case KindConv:
		res["out"] = subsample(values(in.outs[0]))
		res["dx"] = subsample(values(in.outs[1]))
		res["dw"] = subsample(values(in.outs[2]))
	default:
		res["out"] = subsample(values(in.outs[0]))
	}
	return res, nil
}
