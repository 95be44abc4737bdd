package cudagen

import (
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// scanCaseNames are the name prefixes of the conformance cases of the
// reductions and scans of ops/scan.go.
var scanCaseNames = []string{"Prod", "Any/", "AllKeepDims/", "Var-Std/", "Cumsum/", "Cumprod/", "Cummax/", "LogCumSumExp/",
	"CumprodGrad/", "CummaxGrad/", "golden/prod", "golden/any", "golden/all", "golden/var", "golden/cum", "golden/log"}

// TestScansOnHost runs the scan and product/logic reduction cases on the
// emulator for targets whose kernel shapes differ: a small device, an
// H100-sized one, and one whose blocks (64 threads) are narrower than the scans' 256, so the
// block-per-row scan has fewer, longer segments.
func TestScansOnHost(t *testing.T) {
	gxx(t)
	switch {
	case testing.Short():
		t.Skip("compiles and runs hundreds of kernels on the host")
	case raceEnabled:
		t.Skip("the kernels run in another process: nothing for the race detector")
	}
	var conf []exectest.Case
	for _, c := range exectest.Cases() {
		for _, p := range scanCaseNames {
			if strings.HasPrefix(c.Name, p) {
				conf = append(conf, c)
				break
			}
		}
	}
	if len(conf) < 200 {
		t.Fatalf("only %d scan cases", len(conf))
	}
	var all []*emuCase
	for _, tg := range []struct {
		name string
		t    Target
	}{
		{"small", Target{MaxThreads: 1024, SMs: 2, SharedBytes: 48 << 10}},
		{"h100", Target{MaxThreads: 1024, SMs: 132, SharedBytes: 48 << 10}},
		{"tiny", Target{MaxThreads: 64, SMs: 3, SharedBytes: 16 << 10}},
	} {
		for _, c := range prepareCases(t, conf, tg.t, false) {
			c.name = tg.name + "/" + c.name
			all = append(all, c)
		}
	}
	runEmu(t, all)
}

// TestScanKernelShapes: a scan along the innermost axis of long rows takes
// a block per row, any other a thread per line.
func TestScanKernelShapes(t *testing.T) {
	in := func(dims ...int) *graph.Node { return graph.New().Input("x", tensor.Float32, dims...) }
	grad := func(dims ...int) *graph.Node {
		x := in(dims...)
		return ops.Apply(ops.OpCumprodGrad, opdef.ScanAttr{Axis: 1}, x, ops.OnesLike(x))
	}
	for _, c := range []struct {
		n     *graph.Node
		fn    string
		block uint32
	}{
		{ops.Cumsum(in(4, 5000), 1), "loom_scan_rows_", 256},
		{ops.Cumsum(in(4, 100), 1), "loom_scan_lines_", 256},
		{ops.Cummax(in(5000, 4), 0), "loom_scan_lines_", 256},
		{grad(3, 7), "loom_cumprodgrad_", 256},
	} {
		k, err := Generate(c.n, h100)
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Launches) != 1 || !strings.HasPrefix(k.Launches[0].Func, c.fn) || k.Launches[0].Block[0] != c.block {
			t.Errorf("%s: launches %+v, want one of %s with %d threads", describe(c.n), k.Launches, c.fn, c.block)
		}
	}
	// CumprodGrad's scratch holds a double per element.
	k, _ := Generate(grad(3, 7), h100)
	if k.ScratchBytes != 3*7*8 {
		t.Errorf("CumprodGrad scratch %d bytes, want %d", k.ScratchBytes, 3*7*8)
	}
}
