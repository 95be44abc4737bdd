package ops_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// sinSeq is sin(a·i + b)·s + t·i for i < n: the inputs of the normalisation
// tests, computed the same way in the golden script below.
func sinSeq(n int, a, b, s, t float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(a*float64(i)+b)*s + t*float64(i)
	}
	return v
}

func plus(v []float64, c float64) []float64 {
	for i := range v {
		v[i] += c
	}
	return v
}

func absPlus(v []float64, c float64) []float64 {
	for i := range v {
		v[i] = math.Abs(v[i]) + c
	}
	return v
}

// The golden values come from PyTorch 1.13 in float64, printed by this
// script (/usr/bin/python3):
//
//	import torch, math
//	torch.set_default_dtype(torch.float64)
//	def seq(n, a=1.3, b=0.5, s=3.0, t=0.1):
//	    return torch.tensor([math.sin(a*i+b)*s + t*i for i in range(n)])
//	F = torch.nn.functional
//	x = seq(24).reshape(2,3,4); g = seq(4, 0.7, 0.1, 1, 0) + 1; b = seq(4, 0.9, 0.3, 0.5, 0)
//	lnLast = F.layer_norm(x, [4], g, b, 1e-5)
//	g2 = seq(12, 0.4, 0.2, 1, 0) + 1
//	lnTwo = F.layer_norm(x, [3,4], g2.reshape(3,4), None, 1e-3)
//	m = x.mean(dim=(0,2), keepdim=True); v = x.var(dim=(0,2), unbiased=False, keepdim=True)
//	lnMiddle = (x-m)/torch.sqrt(v+1e-5)
//	x = seq(72).reshape(2,6,3,2); g = seq(6, 0.7, 0.1, 1, 0) + 1; b = seq(6, 0.9, 0.3, 0.5, 0)
//	gn = F.group_norm(x, 3, g, b, 1e-5)
//	x = seq(24).reshape(2,3,2,2); g = seq(3, 0.7, 0.1, 1, 0) + 1; b = seq(3, 0.9, 0.3, 0.5, 0)
//	rm = seq(3, 0.3, 0.0, 1, 0); rv = seq(3, 0.5, 0.2, 1, 0).abs() + 0.5
//	bn = F.batch_norm(x, rm, rv, g, b, False, 0.1, 1e-5)
//	x = seq(24).reshape(3,2,4)
//	bsMean = x.mean(dim=(0,2)); bsVar = x.var(dim=(0,2), unbiased=False)
var (
	lnLastGold   = []float64{0.623485794973813, 2.544055962116515, 0.20335513838584093, -2.6933581989225788, -1.3271080306252463, 1.6948299029768672, 2.7827922794786946, -0.9270071421562313, -1.3611188141715647, -0.46036784952208426, 2.3184804982008953, 1.818872037416231, -0.28072333634740004, -1.5854862618032677, 0.4883282257426823, 2.884154032157178, 1.6167116878411483, -0.6543361789590194, -2.013294686696426, 1.0484905813533991, 1.5786718820251768, 1.5693322945755412, -1.3996894380726, -1.7861852919243195}
	lnTwoGold    = []float64{0.2736447171747745, 1.5248394984249436, -0.5461300775178396, -3.283624419429077, -2.0523964434712068, 1.2931550975465917, 1.6805128855023976, -0.4178798183504088, -1.101913320625251, -0.2064831998971795, 0.1487534761606093, 0.007466501699066979, -0.737311179931193, -2.240926858955081, -0.35138660200735394, 2.6993776057557484, 2.0069168237551844, -1.1717804761203436, -1.7073360092153886, 0.40070530242474217, 1.2577710061952876, 0.3869474678214185, -0.08255689759059107, -0.004784765171547001}
	lnMiddleGold = []float64{0.339597793107975, 1.0930628471830504, -0.19032534197636908, -1.5606816609003096, -1.3448267042372877, 0.7319559253953871, 1.1980477651481167, -0.5476556833959596, -1.591631457439852, -0.7423299765703433, 0.771687907755135, 0.7942344923723672, -0.3192714707149402, -1.1434054726957366, 0.1086595265116119, 1.672363779484718, 1.3128210369708504, -0.6552019924423501, -1.2210725472427009, 0.5259321998039452, 1.4162652487502378, 0.7965488588853392, -0.6706876946047461, -0.7740873791481377}
	gnGold       = []float64{0.3988691457727825, 1.2197327285933872, -0.17845637308468404, -1.6713930283534741, -0.9959667183247137, 0.9342762517948284, 2.3705750484780834, -0.16294794677096797, -2.076210396881157, -0.4476772101118106, 2.455447799704564, 2.4986808119205257, -0.797206033297095, -2.429581579578343, 0.050403813753784575, 3.1476581171003937, 2.4627889015841156, -0.862776445965289, -1.9670833972336708, 0.7056851172013512, 3.1263701628069436, 1.873688860870377, -1.0921513623897656, -1.3011612475113832, -0.39394657804985306, 0.9232779476930978, -0.3220816010685599, -2.220143569155229, -1.9048157279570543, 0.2473728951127436, 0.18244169389119563, -0.5255153245390577, -1.2803870611342518, -0.9378550941929377, 0.03870000136192798, 0.25705228183031853, -0.22519274931624833, -1.4494073671814645, -0.40491125819584034, 1.454070293599979, 1.4800889223119498, -0.28900876146072507, -1.615866595171507, 0.5162052998570735, 3.1753591368796594, 2.584543708777767, -0.27207960429153794, -1.0909355624706283, -0.20378497427630038, 2.4539798864471942, 1.0748557574499322, -2.183363199582039, -2.410004497640852, 0.8643359776546238, 2.377936640410226, 0.5626189631586068, -2.199785118545516, -1.737971105126365, 1.3958784400966273, 2.735042639797955, -0.4179929775068754, -2.095818912488852, -1.3322221875422282, 0.8395970409725068, 1.32338934985316, -0.5041312922120733, -1.1891859121075226, -0.6597935437274653, 0.2808949414462158, 0.293217987654835, -0.6024284178475828, -1.0554709139041667}
	bnGold       = []float64{2.040236112251502, 4.123488674156035, 0.575053722164247, -3.213839069452751, -2.018579701073414, 3.9586380929744855, 5.300103684259448, 0.27576961728297417, -4.160265878116688, -0.8024808544200466, 5.1833165239057974, 5.272456347476744, 0.21853107842723038, -2.0601137793448454, 1.4017158080560426, 5.72519554138771, 5.630434279686895, -0.033760953198520106, -1.662401091564207, 3.3656782612471674, 7.731707396828462, 5.281606390649454, -0.5192370512875579, -0.9280364235190802}
	bsMeanGold   = []float64{0.9427315620553753, 1.3686241218083144}
	bsVarGold    = []float64{4.452723978725769, 4.528677138562112}
)

func TestNormGolden(t *testing.T) {
	f64 := tensor.Float64
	x24 := sinSeq(24, 1.3, 0.5, 3, 0.1)
	cases := []struct {
		name  string
		shape []int
		in    [][]float64 // x, then the parameters, each with its own shape
		pdims [][]int
		f     func(xs []*graph.Node) []*graph.Node
		want  [][]float64
	}{
		{"LayerNorm/last", []int{2, 3, 4}, [][]float64{x24, plus(sinSeq(4, 0.7, 0.1, 1, 0), 1), sinSeq(4, 0.9, 0.3, 0.5, 0)}, [][]int{{4}, {4}},
			func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.LayerNorm(xs[0], xs[1], xs[2], 1e-5)} }, [][]float64{lnLastGold}},
		{"LayerNorm/two-axes", []int{2, 3, 4}, [][]float64{x24, plus(sinSeq(12, 0.4, 0.2, 1, 0), 1)}, [][]int{{3, 4}},
			func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.LayerNorm(xs[0], xs[1], nil, 1e-3, -2, -1)}
			}, [][]float64{lnTwoGold}},
		{"LayerNorm/outer-axes", []int{2, 3, 4}, [][]float64{x24}, nil,
			func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.LayerNorm(xs[0], nil, nil, 1e-5, 2, 0)} }, [][]float64{lnMiddleGold}},
		{"GroupNorm", []int{2, 6, 3, 2}, [][]float64{sinSeq(72, 1.3, 0.5, 3, 0.1), plus(sinSeq(6, 0.7, 0.1, 1, 0), 1), sinSeq(6, 0.9, 0.3, 0.5, 0)}, [][]int{{6}, {6}},
			func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.GroupNorm(xs[0], xs[1], xs[2], 3, 1e-5)}
			}, [][]float64{gnGold}},
		{"BatchNorm", []int{2, 3, 2, 2}, [][]float64{x24, plus(sinSeq(3, 0.7, 0.1, 1, 0), 1), sinSeq(3, 0.9, 0.3, 0.5, 0), sinSeq(3, 0.3, 0, 1, 0), absPlus(sinSeq(3, 0.5, 0.2, 1, 0), 0.5)}, [][]int{{3}, {3}, {3}, {3}},
			func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.BatchNorm(xs[0], xs[1], xs[2], xs[3], xs[4], 1e-5)}
			}, [][]float64{bnGold}},
		{"BatchStats", []int{3, 2, 4}, [][]float64{x24}, nil,
			func(xs []*graph.Node) []*graph.Node { m, v := ops.BatchStats(xs[0]); return []*graph.Node{m, v} }, [][]float64{bsMeanGold, bsVarGold}},
	}
	for _, c := range cases {
		g := graph.New()
		ts := []*tensor.Tensor{exectest.Tensor(f64, c.in[0], c.shape...)}
		for i, p := range c.in[1:] {
			ts = append(ts, exectest.Tensor(f64, p, c.pdims[i]...))
		}
		xs, feeds := exectest.Inputs(g, ts...)
		ys := c.f(xs)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := exectest.Eval(ys, feeds)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k, want := range c.want {
			if got[k].Size() != len(want) {
				t.Fatalf("%s output %d: %d elements, want %d", c.name, k, got[k].Size(), len(want))
			}
			for i, w := range want {
				if v := got[k].Float64(i); math.Abs(v-w) > 1e-12*(1+math.Abs(w)) {
					t.Errorf("%s output %d element %d: got %v, want %v (torch)", c.name, k, i, v, w)
				}
			}
		}
	}
}

// TestNormErrors: bad arguments are build errors naming the op and the
// shapes.
func TestNormErrors(t *testing.T) {
	f32 := tensor.Float32
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		kind error
		text string
	}{
		"ln-gamma-shape": {func(g *graph.Graph) *graph.Node {
			return ops.LayerNorm(g.Input("x", f32, 2, 3), g.Input("g", f32, 2), nil, 1e-5)
		}, graph.ErrShape, "LayerNorm"},
		"ln-axis":   {func(g *graph.Graph) *graph.Node { return ops.LayerNorm(g.Input("x", f32, 2, 3), nil, nil, 1e-5, 2) }, graph.ErrShape, "LayerNorm"},
		"ln-scalar": {func(g *graph.Graph) *graph.Node { return ops.LayerNorm(g.Input("x", f32), nil, nil, 1e-5) }, graph.ErrShape, "LayerNorm"},
		"ln-int":    {func(g *graph.Graph) *graph.Node { return ops.LayerNorm(g.Input("x", tensor.Int32, 2), nil, nil, 1e-5) }, graph.ErrDType, "LayerNorm"},
		"ln-dtype-mix": {func(g *graph.Graph) *graph.Node {
			return ops.LayerNorm(g.Input("x", f32, 2, 3), g.Input("g", tensor.Float64, 3), nil, 1e-5)
		}, graph.ErrDType, "LayerNorm"},
		"ln-eps":    {func(g *graph.Graph) *graph.Node { return ops.LayerNorm(g.Input("x", f32, 2, 3), nil, nil, -1) }, graph.ErrInvalid, "LayerNorm"},
		"gn-groups": {func(g *graph.Graph) *graph.Node { return ops.GroupNorm(g.Input("x", f32, 2, 6, 4), nil, nil, 4, 1e-5) }, graph.ErrShape, "GroupNorm"},
		"gn-rank":   {func(g *graph.Graph) *graph.Node { return ops.GroupNorm(g.Input("x", f32, 6), nil, nil, 2, 1e-5) }, graph.ErrShape, "GroupNorm"},
		"gn-gamma": {func(g *graph.Graph) *graph.Node {
			return ops.GroupNorm(g.Input("x", f32, 2, 6, 4), g.Input("g", f32, 4), nil, 2, 1e-5)
		}, graph.ErrShape, "GroupNorm"},
		"bn-nil-stats": {func(g *graph.Graph) *graph.Node {
			return ops.BatchNorm(g.Input("x", f32, 2, 3), nil, nil, nil, g.Input("v", f32, 3), 1e-5)
		}, graph.ErrInvalid, "BatchNorm"},
		"bn-stats-shape": {func(g *graph.Graph) *graph.Node {
			return ops.BatchNorm(g.Input("x", f32, 2, 3, 5), nil, nil, g.Input("m", f32, 5), g.Input("v", f32, 5), 1e-5)
		}, graph.ErrShape, "BatchNorm"},
		"bs-rank": {func(g *graph.Graph) *graph.Node { m, _ := ops.BatchStats(g.Input("x", f32, 3)); return m }, graph.ErrShape, "BatchStats"},
	} {
		g := graph.New()
		n := c.f(g)
		err := g.Err()
		if n.Valid() || err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "norm_test.go") {
			t.Errorf("%s: got %v, want %v naming %s and the call site", name, err, c.kind, c.text)
		}
	}
}
