package bench

import (
	"fmt"
	"runtime/debug"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gorgonia is the gorgonia.org/gorgonia v0.9.18 engine, in float32. VM
// picks its virtual machine: "tape" (TapeMachine: the graph is compiled
// to a program once, gradients are symbolic nodes made by G.Grad; the
// faster of the two and the default) or "lisp" (LispMachine: walks the graph
// at every run and differentiates as it goes).
type Gorgonia struct {
	VM string
}

// NewGorgonia returns the Gorgonia engine with the given VM ("" = "tape").
func NewGorgonia(vm string) (*Gorgonia, error) {
	switch vm {
	case "":
		vm = "tape"
	case "tape", "lisp":
	default:
		return nil, fmt.Errorf("gorgonia: unknown VM %q (tape or lisp)", vm)
	}
	return &Gorgonia{VM: vm}, nil
}

func (e *Gorgonia) Name() string { return "gorgonia" }
func (e *Gorgonia) Close() error { return nil }

// Version is the module version of gorgonia.org/gorgonia in the build and
// the VM used.
func (e *Gorgonia) Version() string {
	v := "gorgonia.org/gorgonia"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "gorgonia.org/gorgonia" {
				v += " " + m.Version
			}
		}
	}
	return v + " (" + e.VM + "Machine)"
}

type gorgoniaInst struct {
	spec      Spec
	g         *G.ExprGraph
	vm        G.VM
	solver    G.Solver
	learnable G.Nodes     // mlp: parameters; xent: the logits
	newVM     func() G.VM // lisp: a fresh machine per run (see step)
	out       *G.Node     // the cost or the output
	init      map[*G.Node][]float32
	names     map[*G.Node]string
}

func dense(data []float32, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), data...)))
}

func matrix(g *G.ExprGraph, name string, data []float32, r, c int) *G.Node {
	return G.NewMatrix(g, tensor.Float32, G.WithShape(r, c), G.WithName(name), G.WithValue(dense(data, r, c)))
}

func vector(g *G.ExprGraph, name string, data []float32, n int) *G.Node {
	return G.NewVector(g, tensor.Float32, G.WithShape(n), G.WithName(name), G.WithValue(dense(data, n)))
}

// xent is Gorgonia's softmax cross-entropy as its examples write it
// (there is no fused op): -mean over rows of sum(y * logsoftmax(logits)).
func xent(logits, y *G.Node) (*G.Node, error) {
	logp, err := G.LogSoftMax(logits)
	if err != nil {
		return nil, err
	}
	prod, err := G.HadamardProd(y, logp)
	if err != nil {
		return nil, err
	}
	rows, err := G.Sum(prod, 1)
	if err != nil {
		return nil, err
	}
	m, err := G.Mean(rows)
	if err != nil {
		return nil, err
	}
	return G.Neg(m)
}

// New builds the workload as a Gorgonia graph:
//
//	mlp:    G.Mul (matmul) + G.BroadcastAdd of the bias (+ G.Rectify); the loss as xent above;
//	        G.Grad for the tape VM, NewVanillaSolver(WithLearnRate(LR)).Step after RunAll;
//	chain:  G.Mul by a G.NewConstant(float32(0.999)) scalar / G.BroadcastAdd(y, row, nil, [0]) / G.Tanh;
//	matmul: G.Mul(a, b);
//	xent:   xent above and G.Grad by the logits.
func (e *Gorgonia) New(s Spec) (inst Instance, err error) {
	defer func() {
		// Gorgonia's builders panic through G.Must and on some shape errors.
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia: building %s: %v", s.Name, r)
		}
	}()
	switch s.Kind {
	case KindCharLM:
		return nil, fmt.Errorf("%w: gorgonia: no twin of the charlm transformer (its attention, LayerNorm and AdamW would have to be written in Gorgonia)", ErrUnavailable)
	case KindConv, KindCNN:
		return nil, fmt.Errorf("%w: gorgonia: no twin of the convolution workloads (issue 15 compares with PyTorch only)", ErrUnavailable)
	}
	g := G.NewGraph()
	in := &gorgoniaInst{spec: s, g: g}
	switch s.Kind {
	case KindMLP:
		d := s.mlpData()
		nIn, nOut := s.Layers[0], s.Layers[len(s.Layers)-1]
		x := matrix(g, "x", d.x, s.Batch, nIn)
		y := matrix(g, "y", d.y, s.Batch, nOut)
		in.init, in.names = map[*G.Node][]float32{}, map[*G.Node]string{}
		h := x
		for l := range d.w {
			fi, fo := s.Layers[l], s.Layers[l+1]
			w := matrix(g, fmt.Sprintf("w%d", l), d.w[l], fi, fo)
			b := vector(g, fmt.Sprintf("b%d", l), d.b[l], fo)
			in.learnable = append(in.learnable, w, b)
			in.init[w], in.init[b] = d.w[l], d.b[l]
			in.names[w], in.names[b] = fmt.Sprintf("dW%d", l), fmt.Sprintf("db%d", l)
			h = G.Must(G.BroadcastAdd(G.Must(G.Mul(h, w)), b, nil, []byte{0}))
			if l+1 < len(d.w) {
				h = G.Must(G.Rectify(h))
			}
		}
		if in.out, err = xent(h, y); err != nil {
			return nil, err
		}
		in.solver = G.NewVanillaSolver(G.WithLearnRate(s.LR))
	case KindChain:
		xd, rd := s.chainData()
		x := matrix(g, "x", xd, s.N/ChainRow, ChainRow)
		row := vector(g, "row", rd, ChainRow)
		c := G.NewConstant(float32(ChainScale))
		y := x
		for i := 0; i < ChainOps; i++ {
			switch ChainOp(i, s.Tanh) {
			case 't':
				y = G.Must(G.Tanh(y))
			case 'm':
				y = G.Must(G.Mul(y, c))
			default:
				y = G.Must(G.BroadcastAdd(y, row, nil, []byte{0}))
			}
		}
		in.out = y
	case KindMatMul:
		ad, bd := s.matmulData()
		in.out = G.Must(G.Mul(matrix(g, "a", ad, s.N, s.N), matrix(g, "b", bd, s.N, s.N)))
	case KindXent:
		ld, yd := s.xentData()
		logits := matrix(g, "logits", ld, s.Rows, s.Classes)
		y := matrix(g, "y", yd, s.Rows, s.Classes)
		if in.out, err = xent(logits, y); err != nil {
			return nil, err
		}
		in.learnable = G.Nodes{logits}
	case KindEmbed:
		return nil, fmt.Errorf("gorgonia: no embedding workload (no gather by an index tensor in the graph API this comparison uses)")
	default:
		return nil, fmt.Errorf("gorgonia: unknown workload kind %q", s.Kind)
	}
	switch {
	case e.VM == "tape" && len(in.learnable) > 0:
		if _, err := G.Grad(in.out, in.learnable...); err != nil {
			return nil, err
		}
		in.vm = G.NewTapeMachine(g, G.BindDualValues(in.learnable...))
	case e.VM == "tape":
		in.vm = G.NewTapeMachine(g)
	case len(in.learnable) > 0:
		in.newVM = func() G.VM { return G.NewLispMachine(g) }
	default:
		in.newVM = func() G.VM { return G.NewLispMachine(g, G.ExecuteFwdOnly()) }
	}
	return in, nil
}

// runAll runs the graph once. A LispMachine cannot be rerun in v0.9.18:
// its Reset sets the forward cursor to the last node (not the first) and
// RunAll drops the backward queue, so a second RunAll recomputes only the
// final node and no gradients (the loss never changes). So the lisp VM
// gets a fresh machine for every run, which is what rerunning it costs.
// And a LispMachine adds gradients into the learnables' dual values, and into every node's, never
// clearing them, so they are all zeroed first (as PyTorch's zero_grad).
func (in *gorgoniaInst) runAll() error {
	if in.newVM != nil {
		if in.vm != nil {
			in.vm.Close()
		}
		for _, n := range in.learnable {
			if gr, err := n.Grad(); err == nil && gr != nil {
				if t, ok := gr.(*tensor.Dense); ok && t != nil {
					t.Zero()
				}
			}
		}
		in.vm = in.newVM()
	}
	return in.vm.RunAll()
}

func (in *gorgoniaInst) step() error {
	if err := in.runAll(); err != nil {
		return err
	}
	if in.solver != nil {
		if err := in.solver.Step(G.NodesToValueGrads(in.learnable)); err != nil {
			return err
		}
	}
	in.vm.Reset()
	return nil
}

func (in *gorgoniaInst) Run(iters int) (time.Duration, float64, error) {
	return goRun(iters, in.step)
}

func (in *gorgoniaInst) Close() error {
	if in.vm == nil {
		return nil
	}
	return in.vm.Close()
}

func gvalues(v G.Value) ([]float32, error) {
	if v == nil {
		return nil, fmt.Errorf("gorgonia: no value")
	}
	switch d := v.Data().(type) {
	case []float32:
		return d, nil
	case float32:
		return []float32{d}, nil
	}
	return nil, fmt.Errorf("gorgonia: value of type %T", v.Data())
}

func (in *gorgoniaInst) Check() (map[string][]float64, error) {
	res := map[string][]float64{}
	if in.spec.Kind == KindMLP {
		var losses []float64
		for i := 0; i < 3; i++ {
			if err := in.runAll(); err != nil {
				return nil, err
			}
			l, err := gvalues(in.out.Value())
			if err != nil {
				return nil, err
			}
			losses = append(losses, float64(l[0]))
			if err := in.solver.Step(G.NodesToValueGrads(in.learnable)); err != nil {
				return nil, err
			}
			in.vm.Reset()
			if i == 0 {
				for _, p := range in.learnable {
					v, err := gvalues(p.Value())
					if err != nil {
						return nil, err
					}
					res[in.names[p]] = delta(v, in.init[p])
				}
			}
		}
		res["loss"] = losses
		return res, nil
	}
	if err := in.runAll(); err != nil {
		return nil, err
	}
	defer in.vm.Reset()
	v, err := gvalues(in.out.Value())
	if err != nil {
		return nil, err
	}
	if in.spec.Kind == KindXent {
		res["loss"] = []float64{float64(v[0])}
		gr, err := in.learnable[0].Grad()
		if err != nil {
			return nil, err
		}
		gv, err := gvalues(gr)
		if err != nil {
			return nil, err
		}
		res["grad"] = subsample(gv)
		return res, nil
	}
	res["out"] = subsample(v)
	return res, nil
}
