package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunCPU runs the command's path (the programs compiled for the CPU)
// and checks what TestReference checks; the iteration counts are
// exectest.Eval's where rounding cannot move them (3 for three distinct
// eigenvalues, and Newton's, whose quadratic convergence overshoots the
// tolerance by orders of magnitude) and within max(2, 1/8 of them)
// elsewhere: the CPU sums in another order, and on an ill-conditioned
// system CG's count is sensitive to rounding (κ = 10⁵: 66 on the CPU,
// 69 by Eval). The output shows the table.
func TestRunCPU(t *testing.T) {
	c := smallConfig()
	var out bytes.Buffer
	res, err := run(&out, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	checkResults(t, c, res)
	ref, err := solveAll(&bytes.Buffer{}, c, reference)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.cg {
		slack := max(2, ref.cg[i].iters/8)
		if d := r.iters - ref.cg[i].iters; d < -slack || d > slack || (i == 0 && d != 0) {
			t.Errorf("%s: %d iterations on the CPU, %d by exectest.Eval", r.name, r.iters, ref.cg[i].iters)
		}
	}
	for i, r := range res.kepler {
		if r.iters != ref.kepler[i].iters {
			t.Errorf("Kepler e = %g: %d iterations on the CPU, %d by exectest.Eval", r.e, r.iters, ref.kepler[i].iters)
		}
	}
	for _, want := range []string{"conjugate gradient (ops.While)", "3 distinct eigenvalues", "Kepler's equation"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
