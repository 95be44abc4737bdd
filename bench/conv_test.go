package bench

import "testing"

// TestConvAllocs: one training step of the example CNN (batch 8, and the
// benchmark's 64) and small convolution workloads allocate nothing once
// warm (Program.RunInto into preallocated outputs), with one kernel
// thread and with two.
func TestConvAllocs(t *testing.T) {
	specs := []Spec{CNNSpec(8), CNNSpec(64), ConvSpec(2, 8, 8, 12, 3, 1, 1, 1), ConvSpec(2, 8, 8, 12, 3, 2, 1, 8), ConvSpec(2, 8, 16, 12, 1, 1, 0, 1)}
	for _, threads := range []int{1, 2} {
		e, err := NewLoom(threads)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for _, s := range specs {
			inst, err := e.New(s)
			if err != nil {
				t.Fatal(err)
			}
			in := inst.(*loomInst)
			for i := 0; i < 2; i++ { // warm up
				if err := in.step(); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(10, func() {
				if err := in.step(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s, %d threads: %v allocations per step, want 0", s.Name, threads, allocs)
			}
			in.Close()
		}
	}
}

// TestConvSpecs: the names, output sizes and FLOP counts of the issue's
// workloads, by hand.
func TestConvSpecs(t *testing.T) {
	ws := ConvWorkloads()
	names := []string{"conv2d/3x3/64-64/56/b32", "conv2d/dw3x3/64-64/56/b32", "conv2d/1x1/64-64/56/b32", "cnn/train-step/b64"}
	// 3 passes × 2 FLOPs × 32·64 outputs of 56² pixels × the
	// multiply-adds per output: 64·9 (3×3), 1·9 (depthwise), 64 (1×1).
	flops := []float64{3 * 2 * 32 * 64 * 56 * 56 * 576, 3 * 2 * 32 * 64 * 56 * 56 * 9, 3 * 2 * 32 * 64 * 56 * 56 * 64, 0}
	for i, s := range ws {
		if s.Name != names[i] || s.FLOPs() != flops[i] {
			t.Errorf("workload %d: %s, %g FLOPs; want %s, %g", i, s.Name, s.FLOPs(), names[i], flops[i])
		}
		if s.Kind == KindConv && s.ConvOut() != 56 {
			t.Errorf("%s: output size %d, want 56", s.Name, s.ConvOut())
		}
	}
	if s := ConvSpec(2, 6, 6, 9, 3, 2, 1, 6); s.Name != "conv2d/dw3x3/6-6/9/b2/s2" || s.ConvOut() != 5 {
		t.Errorf("strided depthwise: %s, output %d; want conv2d/dw3x3/6-6/9/b2/s2, 5 = (9+2-3)/2+1", s.Name, s.ConvOut())
	}
	if s := CNNSpec(8); s.cnnFeatures() != 576 || len(s.cnnParams()) != 14 {
		t.Errorf("cnn: %d features, %d parameters; want 64·3·3 = 576, 3·4+2 = 14", s.cnnFeatures(), len(s.cnnParams()))
	}
}
