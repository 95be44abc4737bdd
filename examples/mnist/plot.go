package main

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotLoss draws the training loss of every step (faint) and its moving
// average over an eighth of an epoch, against the epoch, as a PNG.
func plotLoss(losses []float64, stepsPerEpoch int, path string) error {
	p := plot.New()
	p.Title.Text = "MNIST training loss"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "softmax cross-entropy (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	raw := make(plotter.XYs, len(losses))
	smooth := make(plotter.XYs, len(losses))
	window := max(1, stepsPerEpoch/8)
	var sum float64
	for i, l := range losses {
		x := float64(i+1) / float64(stepsPerEpoch)
		raw[i] = plotter.XY{X: x, Y: l}
		sum += l
		if i >= window {
			sum -= losses[i-window]
		}
		smooth[i] = plotter.XY{X: x, Y: sum / float64(min(i+1, window))}
	}
	rawLine, err := plotter.NewLine(raw)
	if err != nil {
		return err
	}
	rawLine.Color = color.RGBA{R: 160, G: 190, B: 230, A: 255}
	smoothLine, err := plotter.NewLine(smooth)
	if err != nil {
		return err
	}
	smoothLine.Color = color.RGBA{R: 20, G: 60, B: 160, A: 255}
	smoothLine.Width = vg.Points(2)
	p.Add(rawLine, smoothLine, plotter.NewGrid())
	p.Legend.Add("per step", rawLine)
	p.Legend.Add("moving average", smoothLine)
	p.Legend.Top = true
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}
