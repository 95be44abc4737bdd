package report

import (
	"errors"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// PlotLoss draws the training loss of every step (faint) and its moving
// average over an eighth of an epoch, against the epoch, as a PNG titled
// title.
func PlotLoss(losses []float64, stepsPerEpoch int, title, path string) error {
	p, err := LossPlot(losses, stepsPerEpoch, title)
	if err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

// yMargin is the factor by which the y range (log scale) extends beyond
// the smallest and the largest loss: about 6% of a decade on each side.
const yMargin = 1.15

// LossPlot builds the plot of PlotLoss: the x axis runs from 0 to the
// last epoch with a labelled tick at every epoch, the y axis is
// logarithmic and covers every loss with a small margin, and the legend
// sits in the top right corner of the data area, where the falling curve
// leaves room.
func LossPlot(losses []float64, stepsPerEpoch int, title string) (*plot.Plot, error) {
	if len(losses) == 0 || stepsPerEpoch < 1 {
		return nil, errors.New("plot: no losses to draw")
	}
	// A log axis cannot show a loss of 0 (or a negative one, which a
	// cross-entropy never is): such steps are drawn at the smallest
	// positive loss.
	floor := math.Inf(1)
	hi := 0.0
	for _, l := range losses {
		if l > 0 && l < floor {
			floor = l
		}
		hi = max(hi, l)
	}
	if math.IsInf(floor, 1) {
		floor, hi = 1e-6, 1e-6
	}

	raw := make(plotter.XYs, len(losses))
	smooth := make(plotter.XYs, len(losses))
	window := max(1, stepsPerEpoch/8)
	var sum float64
	for i, l := range losses {
		x := float64(i+1) / float64(stepsPerEpoch)
		raw[i] = plotter.XY{X: x, Y: max(l, floor)}
		sum += l
		if i >= window {
			sum -= losses[i-window]
		}
		smooth[i] = plotter.XY{X: x, Y: max(sum/float64(min(i+1, window)), floor)}
	}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "loss (log scale)"
	p.X.Tick.Marker = epochTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}

	rawLine, err := plotter.NewLine(raw)
	if err != nil {
		return nil, err
	}
	rawLine.Color = color.RGBA{R: 160, G: 190, B: 230, A: 255}
	smoothLine, err := plotter.NewLine(smooth)
	if err != nil {
		return nil, err
	}
	smoothLine.Color = color.RGBA{R: 20, G: 60, B: 160, A: 255}
	smoothLine.Width = vg.Points(2)
	p.Add(plotter.NewGrid(), rawLine, smoothLine)
	// Add fitted the axes to the data; set the ranges after it.
	p.X.Min, p.X.Max = 0, math.Ceil(float64(len(losses))/float64(stepsPerEpoch))
	p.Y.Min, p.Y.Max = floor/yMargin, hi*yMargin

	p.Legend.Add("loss of each step", rawLine)
	p.Legend.Add("moving average (1/8 epoch)", smoothLine)
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	p.Legend.YOffs = -vg.Points(4)
	return p, nil
}

// epochTicks labels every epoch (every 2, 5, 10, ... epochs when there
// are more than 10) and puts unlabelled minor ticks at the other epochs
// and at quarters of an epoch (halves from 5 epochs on, none from 11).
type epochTicks struct{}

func (epochTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	major := 1.0
	for _, m := range []float64{1, 2, 5, 10, 20, 50, 100} {
		major = m
		if span/m <= 10 {
			break
		}
	}
	minor := 0.0
	switch {
	case span <= 4:
		minor = 0.25
	case span <= 10:
		minor = 0.5
	}
	var ticks []plot.Tick
	for e := math.Ceil(lo); e <= hi; e++ {
		if math.Mod(e, major) == 0 {
			ticks = append(ticks, plot.Tick{Value: e, Label: strconv.FormatFloat(e, 'f', -1, 64)})
		} else {
			ticks = append(ticks, plot.Tick{Value: e})
		}
	}
	if minor > 0 {
		for k := math.Ceil(lo / minor); k*minor <= hi; k++ {
			if v := k * minor; v != math.Trunc(v) {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// logTicks labels 1, 2 and 5 times every power of ten in range (only the
// powers of ten when the range spans more than three decades), with
// unlabelled minor ticks at the other integer multiples.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	if math.Log10(hi/lo) > 3 {
		labelled = map[int]bool{1: true}
	}
	var ticks []plot.Tick
	for d := first; d <= last; d++ {
		for m := 1; m <= 9; m++ {
			// m·10^d parsed from its decimal form: the float64 nearest to
			// it, which prints back as "0.02", not "0.020000000000000004".
			v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(d), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
