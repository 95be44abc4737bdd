package nn_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func backend(t testing.TB) exec.Backend {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func compile(t testing.TB, be exec.Backend, outs []*graph.Node, opts ...exec.Option) *exec.Program {
	t.Helper()
	p, err := exec.Compile(be, outs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func run(t testing.TB, p *exec.Program, feeds exec.Feeds) []*tensor.Tensor {
	t.Helper()
	out, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func read(t testing.TB, p *exec.Program, v *graph.Node) []float64 {
	t.Helper()
	x, err := p.Read(v)
	if err != nil {
		t.Fatal(err)
	}
	return floats(x)
}

func floats(x *tensor.Tensor) []float64 {
	v := make([]float64, x.Size())
	for i := range v {
		v[i] = x.Float64(i)
	}
	return v
}

func f64(t testing.TB, v []float64, shape ...int) *tensor.Tensor {
	x, err := tensor.New(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// sinSeq is sin(a·i + b)·s + t·i for i < n, as seq in the golden script.
func sinSeq(n int, a, b, s, t float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(a*float64(i)+b)*s + t*float64(i)
	}
	return v
}

// transposed is the n×n matrix w (row-major) transposed: torch's Linear
// weight [out, in] as nn's [in, out].
func transposed(w []float64, n int) []float64 {
	out := make([]float64, len(w))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[j*n+i] = w[i*n+j]
		}
	}
	return out
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+math.Abs(want[i]))) {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// The golden values come from PyTorch 1.13 in float64, printed by this
// script (/usr/bin/python3; p prints a tensor's values):
//
//	import torch, math
//	torch.set_default_dtype(torch.float64)
//	def seq(n, a=1.3, b=0.5, s=3.0, t=0.1):
//	    return torch.tensor([math.sin(a*i+b)*s + t*i for i in range(n)])
//	bn = torch.nn.BatchNorm2d(3).double(); bn.train()
//	x1 = seq(48).reshape(4,3,2,2); x2 = seq(48, 0.9, 0.2, 2, -0.05).reshape(4,3,2,2)
//	y1 = bn(x1); y2 = bn(x2)
//	p("bnY2", y2.detach()); p("bnRunningMean", bn.running_mean); p("bnRunningVar", bn.running_var)
//	bn.eval(); p("bnEval", bn(x1).detach())
//	D, H = 4, 2
//	mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dropout=0.0)
//	W = [seq(16, 0.3+0.2*i, 0.1*i, 0.5, 0).reshape(D, D) for i in range(4)]
//	B = [seq(4, 0.7+0.1*i, 0.3*i, 0.2, 0) for i in range(4)]
//	with torch.no_grad():
//	    mha.in_proj_weight.copy_(torch.cat(W[:3], 0)); mha.in_proj_bias.copy_(torch.cat(B[:3], 0))
//	    mha.out_proj.weight.copy_(W[3]); mha.out_proj.bias.copy_(B[3])
//	q = seq(24).reshape(2,3,4); k = seq(40, 0.8, 0.1, 1.5, 0).reshape(2,5,4); v = seq(40, 1.1, 0.7, 2, 0).reshape(2,5,4)
//	mask = torch.zeros(3, 5); mask[0, 3:] = -math.inf; mask[1, 4] = -math.inf
//	o, _ = mha(q, k, v, attn_mask=mask, need_weights=False)
//	p("mhaOut", o.detach())
//	o2, _ = mha(q, k, v, need_weights=False)
//	p("mhaNoMask", o2.detach())
var (
	bnY2Gold          = []float64{0.7531606019428111, 1.5580232609760305, 1.5496918296656932, 0.7116597843385749, -0.12198756425962527, -0.7285998515521303, -0.2239186437821195, 0.9823389129833763, 1.5254601014030533, 1.5015439561817525, 0.7194347571037466, -0.24999306390673745, -1.0538002711916223, -0.6235360498570182, 0.37075565735756644, 1.1538031243808884, 1.6500519415050858, 0.6024915545544647, -0.6745324116095841, -1.242378148459634, -0.47738265756015663, 0.4417464300602395, 1.1525934942678764, 1.096193431316657, 0.01926093071538378, -1.0248293971005924, -1.4749404517116047, -1.0132487454346415, 0.2832569754148655, 1.2093164839666763, 1.113265769222874, 0.04000962755808157, -0.8758333393766257, -1.2754612514028474, -0.8359452573201055, 0.08908748359292336, 0.5451509536745909, 0.4486814267940853, -0.44267145916305883, -1.4771611953870858, -2.0099330874886343, -1.4099922186214613, -0.18333460238069518, 0.7139452629484567, 0.48608497088880515, -0.3440403252218208, -1.2920251114731276, -1.6614636185536338}
	bnRunningMeanGold = []float64{0.08827508909963515, 0.0868451901512704, 0.11557054799897898}
	bnRunningVarGold  = []float64{1.6399897739459766, 1.4724121969020176, 1.8461074284336467}
	bnEvalGold        = []float64{1.0541741575631691, 2.2904974953825046, 0.18464963799615694, -2.0638998986424104, -1.1033989168905252, 1.9647665263821248, 2.6533541790887702, 0.07431344627400474, -1.69415400897138, -0.21362650133007005, 2.425654337448041, 2.4649582118449156, -0.02693165222923877, -1.3792121523382483, 0.6752390403411587, 3.2410435868720877, 2.8229161647262053, -0.08457167933301102, -0.9205688881073554, 1.660394337239849, 3.5493006581497566, 2.468992684128787, -0.08873755252985188, -0.2689869465273719, 2.4617120647500226, 4.225641002355229, 2.5579482872164516, 0.016205125406148175, 0.4639261109860381, 3.505562701604915, 4.807917802033739, 2.583770068499917, 0.16839793239081427, 1.129444350635633, 3.8693777506692895, 4.482011598930488, 2.3317689903486354, 0.48817036915796364, 2.061122985687598, 4.86064504309126, 5.1723210536043815, 2.360638126772579, 0.9357740475425261, 3.1058899595368485, 5.169833675744911, 4.6327778519293, 2.036085020700909, 1.291738579682869}
	mhaOutGold        = []float64{0.8279031504934884, -0.6721618887151076, 0.9215867861680339, -0.8431931995112735, 0.6067260453634913, -0.18960400489307844, 0.27728820392643105, -0.17019073081867137, 0.36920192554981146, -0.0802137289253807, 0.3186190224618152, -0.35370852553753906, 0.9906688926339269, -0.5007974005320048, 0.45147594994961376, -0.17140598971687296, 0.5643834717594767, -0.22676018153390176, 0.3862710057733588, -0.32849704376166594, 0.32842498050974855, 0.025881701722563294, 0.16911202676559925, -0.19166064280265344}
	mhaNoMaskGold     = []float64{0.2754451060992096, 0.017484676578111064, 0.2371521071170521, -0.30529464706463527, 0.3342673884760192, -0.0435401059734184, 0.28777879945633283, -0.33506968940592474, 0.36920192554981146, -0.0802137289253807, 0.3186190224618152, -0.35370852553753906, 0.388651042761189, -0.01707149743218589, 0.18592325021515488, -0.17885865588243027, 0.34784650160416886, 0.019805601155370056, 0.16058809431542537, -0.17029672590554587, 0.32842498050974855, 0.025881701722563294, 0.16911202676559925, -0.19166064280265344}
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
