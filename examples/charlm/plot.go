package main

import (
	"errors"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotLoss draws the training loss of every step (faint), its moving
// average over 20 steps, and the validation losses (points), against
// the step, as a PNG.
func plotLoss(res *result, path string) error {
	p, err := lossPlot(res)
	if err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

func lossPlot(res *result) (*plot.Plot, error) {
	if len(res.losses) == 0 {
		return nil, errors.New("plot: no losses to draw")
	}
	raw := make(plotter.XYs, len(res.losses))
	smooth := make(plotter.XYs, len(res.losses))
	const window = 20
	var sum float64
	for i, l := range res.losses {
		x := float64(res.firstStep + i + 1)
		raw[i] = plotter.XY{X: x, Y: l}
		sum += l
		if i >= window {
			sum -= res.losses[i-window]
		}
		smooth[i] = plotter.XY{X: x, Y: sum / float64(min(i+1, window))}
	}
	p := plot.New()
	p.Title.Text = "charlm: byte-level transformer on Go's source"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss (nats per byte)"
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
	p.Legend.Add("training loss of each step", rawLine)
	p.Legend.Add("moving average (20 steps)", smoothLine)
	hi := 0.0
	for _, l := range res.losses {
		hi = max(hi, l)
	}
	if len(res.val) > 0 {
		// The validation loss before training, then after every interval.
		pts := plotter.XYs{{X: float64(res.firstStep), Y: res.initLoss}}
		hi = max(hi, res.initLoss)
		for _, v := range res.val {
			pts = append(pts, plotter.XY{X: float64(v.step), Y: v.loss})
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = color.RGBA{R: 200, G: 60, B: 20, A: 255}
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add("validation loss (held-out files)", sc)
	}
	p.Y.Min, p.Y.Max = 0, hi*1.05
	p.X.Min = float64(res.firstStep)
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	p.Legend.YOffs = -vg.Points(4)
	return p, nil
}
