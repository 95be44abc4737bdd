package report

import (
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
)

// TestLossPlot: the axes of the loss plot cover the data. Two epochs of
// four steps with losses from 3.0 down to 0.004 (and one step of loss 0,
// drawn at the smallest positive loss): x runs from 0 to 2 with a
// labelled tick at every epoch, y (log) from 0.004/1.15 to 3.0·1.15.
func TestLossPlot(t *testing.T) {
	losses := []float64{3.0, 1.0, 0.5, 0.2, 0.1, 0, 0.004, 0.01}
	p, err := LossPlot(losses, 4, "title")
	if err != nil {
		t.Fatal(err)
	}
	if p.Title.Text != "title" {
		t.Errorf("title %q, want %q", p.Title.Text, "title")
	}
	if p.X.Min != 0 || p.X.Max != 2 {
		t.Errorf("x range [%g, %g], want [0, 2]", p.X.Min, p.X.Max)
	}
	if want := 0.004 / yMargin; p.Y.Min != want {
		t.Errorf("y min %g, want %g", p.Y.Min, want)
	}
	if hi := 3.0; p.Y.Max != hi*yMargin {
		want := hi * yMargin
		t.Errorf("y max %g, want %g", p.Y.Max, want)
	}
	if got, want := labels(p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)), []string{"0", "1", "2"}; !equal(got, want) {
		t.Errorf("x tick labels %q, want %q", got, want)
	}
	if _, err := LossPlot(nil, 4, "title"); err == nil {
		t.Error("no losses: no error")
	}
	path := filepath.Join(t.TempDir(), "loss.png")
	if err := PlotLoss(losses, 4, "title", path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 1000 {
		t.Errorf("loss.png: %v", err)
	}
}

// TestTicks: the tick markers' labels and minor ticks, by hand.
func TestTicks(t *testing.T) {
	cases := []struct {
		name   string
		marker plot.Ticker
		lo, hi float64
		labels []string
		minor  int
	}{
		// Epochs 0..2: labels at 0, 1, 2; minor ticks at the 6 other quarters.
		{"2 epochs", epochTicks{}, 0, 2, []string{"0", "1", "2"}, 6},
		// 0..8: every epoch labelled, minor ticks at the 8 halves.
		{"8 epochs", epochTicks{}, 0, 8, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8"}, 8},
		// 0..30: labels every 5 epochs, no quarters: the other 24 epochs are minor.
		{"30 epochs", epochTicks{}, 0, 30, []string{"0", "5", "10", "15", "20", "25", "30"}, 24},
		// 0.0035..2.6 spans under 3 decades: 1, 2, 5 of each decade are labelled;
		// minor: 0.004, 0.006..0.009, 0.03, 0.04, 0.06..0.09, 0.3, 0.4, 0.6..0.9 (17).
		{"log 0.0035..2.6", logTicks{}, 0.0035, 2.6, []string{"0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2"}, 17},
		// 1e-5..10 spans 6 decades: only the powers of ten are labelled; the
		// other 8 multiples of each of the 6 decades below 10 are minor (48).
		{"log 1e-5..10", logTicks{}, 1e-5, 10, []string{"1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10"}, 48},
	}
	for _, c := range cases {
		ticks := c.marker.Ticks(c.lo, c.hi)
		minor := 0
		for _, tk := range ticks {
			if tk.IsMinor() {
				minor++
			}
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("%s: tick %g outside the range", c.name, tk.Value)
			}
		}
		if got := labels(ticks); !equal(got, c.labels) || minor != c.minor {
			t.Errorf("%s: labels %q and %d minor ticks, want %q and %d", c.name, got, minor, c.labels, c.minor)
		}
	}
}

func labels(ticks []plot.Tick) []string {
	var s []string
	for _, t := range ticks {
		if !t.IsMinor() {
			s = append(s, t.Label)
		}
	}
	return s
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
