//go:build linux

package cuda

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// convNodes builds Conv, ConvTranspose and ConvFilterGrad nodes of both
// float dtypes over geometries that take each of the generated kernels
// (the implicit GEMM in one pass and split-K, the direct kernel) in 1 to
// 3 spatial dims.
func convNodes(g *graph.Graph) []*graph.Node {
	type geom struct {
		n, c, o, groups int
		s, k, stride    []int
	}
	var out []*graph.Node
	for _, s := range []geom{
		{2, 8, 9, 1, []int{5, 6}, []int{3, 3}, []int{1, 2}},
		{2, 64, 8, 1, []int{11}, []int{5}, []int{2}},
		{1, 8, 8, 1, []int{3, 4, 5}, []int{2, 3, 2}, []int{1, 1, 2}},
		{2, 6, 6, 6, []int{7, 6}, []int{3, 3}, []int{2, 2}},
		{32, 64, 64, 1, []int{56, 56}, []int{3, 3}, []int{1, 1}},
		{1, 512, 512, 1, []int{7, 7}, []int{3, 3}, []int{1, 1}},
		{1, 8, 128, 1, []int{4, 4}, []int{3, 3}, []int{2, 2}}, // transposed phases with split-K
	} {
		d := len(s.s)
		ones := make([]int, d)
		for i := range ones {
			ones[i] = 1
		}
		a := opdef.ConvAttr{Stride: s.stride, Dilation: ones, PadLo: ones, PadHi: ones, Groups: s.groups}
		xs := append(tensor.Shape{s.n, s.c}, s.s...)
		ws := append(tensor.Shape{s.o, s.c / s.groups}, s.k...)
		ys := tensor.Shape{s.n, s.o}
		for i := range s.s {
			ys = append(ys, opdef.ConvOutSize(s.s[i], s.k[i], s.stride[i], 1, 1, 1))
		}
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			x := g.Input(fmt.Sprintf("x%d", len(out)), dt, xs...)
			w := g.Input(fmt.Sprintf("w%d", len(out)), dt, ws...)
			y := g.Input(fmt.Sprintf("y%d", len(out)), dt, ys...)
			t, f := a, a
			t.Size, f.Size = s.s, s.k
			out = append(out, ops.Apply(ops.OpConv, a, x, w), ops.Apply(ops.OpConvTranspose, t, y, w), ops.Apply(ops.OpConvFilterGrad, f, x, y))
		}
	}
	return out
}

// TestNVRTCCompilesConvKernels compiles the convolution kernels of
// convNodes, generated for an H100 and for a small device (which takes
// split-K on small shapes), with a real NVRTC for sm_90 (a cubin, through
// ptxas), without warnings.
func TestNVRTCCompilesConvKernels(t *testing.T) {
	n := realNVRTC(t)
	g := graph.New()
	nodes := convNodes(g)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	funcs := map[string]string{}
	kinds := map[string]bool{}
	for _, tg := range []cudagen.Target{{}, {SMs: 2}} {
		for _, nd := range nodes {
			k, err := cudagen.Generate(nd, tg)
			if err != nil {
				t.Fatalf("%v: %v", nd, err)
			}
			for _, f := range k.Funcs {
				funcs[f.Name] = f.Source
				kind := strings.TrimPrefix(f.Name, "loom_")
				kinds[kind[:strings.LastIndex(kind, "_")]] = true
			}
		}
	}
	for _, want := range []string{"conv_gemm", "conv_gemm_part", "conv_gemm_sum", "conv_direct", "conv_transpose_gemm", "conv_transpose_gemm_part", "conv_transpose_gemm_sum", "conv_filter_grad_gemm_part", "conv_filter_grad_direct"} {
		if !kinds[want] {
			t.Errorf("no %s kernel among %v", want, kinds)
		}
	}
	names := make([]string, 0, len(funcs))
	for name := range funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	var src strings.Builder
	src.WriteString(cudagen.Prelude())
	for _, name := range names {
		src.WriteString("\n")
		src.WriteString(funcs[name])
	}
	arch := checkArch(n)
	out, err := n.Compile(src.String(), "loom_conv.cu", nvrtcOptions(arch))
	if err != nil {
		t.Fatalf("NVRTC rejects the convolution kernels: %v", err)
	}
	for _, name := range names {
		if !strings.Contains(string(out.PTX), ".entry "+name) {
			t.Errorf("PTX lacks the entry %s", name)
		}
	}
	if strings.Contains(out.Log, "warning") {
		t.Errorf("NVRTC warns:\n%s", out.Log)
	}
	if len(out.CUBIN) == 0 {
		t.Error("no cubin")
	}
	t.Logf("%d convolution kernels compile with NVRTC for %s", len(names), arch)
}
