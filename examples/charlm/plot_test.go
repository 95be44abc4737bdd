package main

import (
	"path/filepath"
	"testing"
)

// TestLossPlot: the plot covers every loss (the y axis from 0 to 5% above
// the largest, the initial validation loss included) and every step from
// the run's first; no losses is an error.
func TestLossPlot(t *testing.T) {
	res := &result{initLoss: 5.2, losses: []float64{4.9, 3, 2.5, 2}, firstStep: 10, val: []valPoint{{12, 2.8}, {14, 2.2}}}
	p, err := lossPlot(res)
	if err != nil {
		t.Fatal(err)
	}
	hi := 5.2 // the largest loss; a variable, so that hi*1.05 rounds as in lossPlot
	if p.Y.Min != 0 || p.Y.Max != hi*1.05 || p.X.Min != 10 || p.X.Max != 14 {
		t.Errorf("axes x [%v, %v], y [%v, %v]; want x [10, 14], y [0, 5.46]", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	if err := plotLoss(res, filepath.Join(t.TempDir(), "loss.png")); err != nil {
		t.Fatal(err)
	}
	if _, err := lossPlot(&result{}); err == nil {
		t.Error("no losses: no error")
	}
}
