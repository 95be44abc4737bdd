package bench

import (
	"fmt"
	"regexp"
	"strings"
)

// Kinds of workload.
const (
	KindMLP    = "mlp"    // one SGD training step of a ReLU MLP with softmax cross-entropy
	KindChain  = "chain"  // 50 elementwise ops on [N/1024, 1024] float32
	KindMatMul = "matmul" // N×N times N×N float32
	KindXent   = "xent"   // softmax cross-entropy forward and backward on [Rows, Classes] logits
	KindSort   = "sort"   // Sort of N float32 (one row), ascending
	KindTopK   = "topk"   // TopK: the K largest of N float32 (one row) and their indices
	KindEmbed  = "embed"  // embedding lookup Gather(table[Vocab,Dim], ids[Tokens]) and its scatter-add gradient
)

// Spec describes one workload completely: torch_bench.py receives it as
// JSON and builds the same computation from it.
type Spec struct {
	Name string `json:"name"`
	Kind string `json:"kind"`

	// mlp: Layers[0] inputs, Layers[len-1] classes, ReLU between;
	// Batch rows; SGD with learning rate LR.
	Layers []int   `json:"layers,omitempty"`
	Batch  int     `json:"batch,omitempty"`
	LR     float64 `json:"lr,omitempty"`

	// chain: N elements; Tanh makes every third op a tanh.
	// matmul: N×N×N.
	N    int  `json:"n,omitempty"`
	Tanh bool `json:"tanh,omitempty"`

	// xent: Rows×Classes logits.
	Rows    int `json:"rows,omitempty"`
	Classes int `json:"classes,omitempty"`

	// charlm (see CharLMSpec): Vocab tokens, Blocks transformer blocks of
	// width DModel with Heads heads, context Ctx; Batch windows; dropout
	// rate Dropout; AdamW with learning rate LR.
	// embed: a [Vocab, Dim] float32 table, Tokens int64 ids.
	Vocab   int     `json:"vocab,omitempty"`
	Blocks  int     `json:"blocks,omitempty"`
	DModel  int     `json:"d_model,omitempty"`
	Heads   int     `json:"heads,omitempty"`
	Ctx     int     `json:"ctx,omitempty"`
	Dropout float64 `json:"dropout,omitempty"`
	Dim     int     `json:"dim,omitempty"`
	Tokens  int     `json:"tokens,omitempty"`
	// sort, topk: N elements; topk: the K largest.
	K int `json:"k,omitempty"`

	// conv (see ConvSpec): Batch images of InC channels, Size×Size, by
	// OutC filters of Kernel×Kernel, Stride, Pad on every side, Groups.
	// cnn (see CNNSpec): Batch images of Channels[0] channels, Size×Size;
	// stages of Channels[l] → Channels[l+1]; Classes classes; Adam, LR.
	InC      int   `json:"in_c,omitempty"`
	OutC     int   `json:"out_c,omitempty"`
	Size     int   `json:"size,omitempty"`
	Kernel   int   `json:"kernel,omitempty"`
	Stride   int   `json:"stride,omitempty"`
	Pad      int   `json:"pad,omitempty"`
	Groups   int   `json:"groups,omitempty"`
	Channels []int `json:"channels,omitempty"`

	// Seed is the base of the seeds of every input (see the builders).
	Seed uint64 `json:"seed"`
}

// FLOPs is the floating-point operation count of one iteration where it is
// well defined (matmul: 2n³; conv: see convFLOPs), else 0.
func (s Spec) FLOPs() float64 {
	switch s.Kind {
	case KindMatMul:
		return 2 * float64(s.N) * float64(s.N) * float64(s.N)
	case KindConv:
		return s.convFLOPs()
	}
	return 0
}

// Bytes is the memory traffic of one iteration where the workload is
// bound by it, else 0. embed: the lookup reads and writes Tokens rows
// (2TD floats), the gradient writes the dense [Vocab, Dim] result once
// (VD), reads the upstream gradient (TD) and reads and writes the rows it
// adds to (2TD): 4 bytes × (5TD + VD).
func (s Spec) Bytes() float64 {
	if s.Kind == KindEmbed {
		return 4 * (5*float64(s.Tokens)*float64(s.Dim) + float64(s.Vocab)*float64(s.Dim))
	}
	return 0
}

// Chain constants: exactly as chain() in exec/cpu/bench_test.go, 50 ops,
// alternately y*0.999 and y+row, every third a tanh when Tanh is set.
const (
	ChainOps   = 50
	ChainScale = 0.999
	ChainRow   = 1024
)

// ChainOp says what op i of the chain is: 't' tanh, 'm' multiply, 'a' add.
func ChainOp(i int, tanh bool) byte {
	switch {
	case tanh && i%3 == 2:
		return 't'
	case i%2 == 0:
		return 'm'
	default:
		return 'a'
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

// MLPSpec returns the MLP training-step workload for the given layer sizes.
func MLPSpec(batch int, layers ...int) Spec {
	parts := make([]string, len(layers))
	for i, l := range layers {
		parts[i] = fmt.Sprint(l)
	}
	name := "mlp" + strings.Join(parts, "-")
	return Spec{Name: fmt.Sprintf("%s/b%d", name, batch), Kind: KindMLP, Layers: layers, Batch: batch, LR: 0.1, Seed: 100}
}

// ChainSpec returns the 50-op chain on n elements (n a multiple of 1024).
func ChainSpec(n int, tanh bool) Spec {
	name := "chain-muladd/"
	if tanh {
		name = "chain-muladdtanh/"
	}
	return Spec{Name: name + sizeName(n), Kind: KindChain, N: n, Tanh: tanh, Seed: 200}
}

// MatMulSpec returns the n×n×n matrix product.
func MatMulSpec(n int) Spec {
	return Spec{Name: fmt.Sprintf("matmul/%d", n), Kind: KindMatMul, N: n, Seed: 300}
}

// XentSpec returns softmax cross-entropy forward+backward on rows×classes logits.
func XentSpec(rows, classes int) Spec {
	return Spec{Name: fmt.Sprintf("xent/%dx%d", rows, classes), Kind: KindXent, Rows: rows, Classes: classes, Seed: 400}
}

// SortSpec returns the sort of n float32.
func SortSpec(n int) Spec { return Spec{Name: "sort/" + sizeName(n), Kind: KindSort, N: n, Seed: 600} }

// TopKSpec returns the k largest of n float32.
func TopKSpec(n, k int) Spec {
	return Spec{Name: fmt.Sprintf("topk/%s/k%d", sizeName(n), k), Kind: KindTopK, N: n, K: k, Seed: 610}
}

// EmbedSpec returns the embedding lookup of tokens ids in a vocab×dim
// table and its gradient (issue 14).
func EmbedSpec(vocab, dim, tokens int) Spec {
	return Spec{Name: fmt.Sprintf("embed/%dx%d/t%d", vocab, dim, tokens), Kind: KindEmbed, Vocab: vocab, Dim: dim, Tokens: tokens, Seed: 500}
}

// Workloads lists the benchmark workloads of issue 7; quick keeps only the
// small sizes (for smoke tests).
func Workloads(quick bool) []Spec {
	if quick {
		return []Spec{
			MLPSpec(64, 784, 256, 10),
			ChainSpec(1<<10, false),
			ChainSpec(1<<10, true),
			MatMulSpec(64),
			XentSpec(256, 1000),
			CharLMCheckSpec(),
			ConvSpec(2, 8, 8, 12, 3, 1, 1, 1),
			CNNSpec(8),
		}
	}
	ws := []Spec{MLPSpec(64, 784, 256, 10), MLPSpec(256, 784, 1024, 1024, 10)}
	for _, tanh := range []bool{false, true} {
		for _, n := range []int{1 << 10, 1 << 20, 1 << 24} {
			ws = append(ws, ChainSpec(n, tanh))
		}
	}
	for _, n := range []int{64, 256, 512, 1024, 2048} {
		ws = append(ws, MatMulSpec(n))
	}
	ws = append(ws, SortSpec(1<<20), TopKSpec(1<<20, 100)) // issue 14
	ws = append(ws, XentSpec(256, 1000), EmbedSpec(50000, 512, 8192), CharLMSpec())
	return append(ws, ConvWorkloads()...) // issue 15
}

// ConvWorkloads are issue 15's: the 3×3 convolution 64 → 64 on 56×56
// (batch 32, stride 1, padding 1), the depthwise 3×3 and the pointwise 1×1
// at the same size, and one training step of examples/cnn's model (batch
// 64, the example's).
func ConvWorkloads() []Spec {
	return []Spec{
		ConvSpec(32, 64, 64, 56, 3, 1, 1, 1),
		ConvSpec(32, 64, 64, 56, 3, 1, 1, 64),
		ConvSpec(32, 64, 64, 56, 1, 1, 0, 1),
		CNNSpec(64),
	}
}

// Filter keeps the specs whose names match re (nil keeps all).
func Filter(specs []Spec, re *regexp.Regexp) []Spec {
	if re == nil {
		return specs
	}
	var out []Spec
	for _, s := range specs {
		if re.MatchString(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// Inputs of the workloads, shared by every engine (torch_bench.py has the
// same formulas): seeds are Spec.Seed plus the offsets below.
//
//	mlp:    x = Uniform(seed+0, batch*in, 0, 1); labels = Classes(seed+1, batch, out);
//	        layer l (0-based): W = Uniform(seed+10+2l, in*out, -a, a) laid out [in,out],
//	        b = Uniform(seed+11+2l, out, -a, a), a = 1/sqrt(in).
//	chain:  x = Uniform(seed+0, n, -1, 1) as [n/1024,1024]; row = Uniform(seed+1, 1024, -0.01, 0.01).
//	matmul: a = Uniform(seed+0, n*n, -1, 1), b = Uniform(seed+1, n*n, -1, 1).
//	xent:   logits = Uniform(seed+0, rows*classes, -3, 3); labels = Classes(seed+1, rows, classes).
//	sort, topk: x = Uniform(seed+0, n, -1, 1).
//	embed:  table = Uniform(seed+0, vocab*dim, -1, 1); ids = Classes(seed+1, tokens, vocab);
//	        upstream gradient gy = Uniform(seed+2, tokens*dim, -1, 1).
type mlpData struct {
	x, y []float32   // [batch,in], one-hot [batch,out]
	w, b [][]float32 // per layer
}

func (s Spec) mlpData() mlpData {
	in, out := s.Layers[0], s.Layers[len(s.Layers)-1]
	d := mlpData{
		x: Uniform(s.Seed, s.Batch*in, 0, 1),
		y: OneHot(Classes(s.Seed+1, s.Batch, out), out),
	}
	for l := 0; l+1 < len(s.Layers); l++ {
		fi, fo := s.Layers[l], s.Layers[l+1]
		a := initScale(fi)
		d.w = append(d.w, Uniform(s.Seed+10+2*uint64(l), fi*fo, -a, a))
		d.b = append(d.b, Uniform(s.Seed+11+2*uint64(l), fo, -a, a))
	}
	return d
}

func (s Spec) chainData() (x, row []float32) {
	return Uniform(s.Seed, s.N, -1, 1), Uniform(s.Seed+1, ChainRow, -0.01, 0.01)
}

func (s Spec) matmulData() (a, b []float32) {
	return Uniform(s.Seed, s.N*s.N, -1, 1), Uniform(s.Seed+1, s.N*s.N, -1, 1)
}

func (s Spec) embedData() (table []float32, ids []int64, gy []float32) {
	for _, c := range Classes(s.Seed+1, s.Tokens, s.Vocab) {
		ids = append(ids, int64(c))
	}
	return Uniform(s.Seed, s.Vocab*s.Dim, -1, 1), ids, Uniform(s.Seed+2, s.Tokens*s.Dim, -1, 1)
}

func (s Spec) xentData() (logits, y []float32) {
	return Uniform(s.Seed, s.Rows*s.Classes, -3, 3), OneHot(Classes(s.Seed+1, s.Rows, s.Classes), s.Classes)
}
