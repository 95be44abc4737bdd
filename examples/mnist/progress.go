package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws the training progress: a bar redrawn in place on a
// terminal, or a line every quarter of an epoch otherwise (logs, tests).
// The loss shown is an exponential moving average over about 50 steps.
type progress struct {
	w             io.Writer
	inPlace       bool
	steps         int
	epoch, epochs int
	ema           float64
	seen          int
	lastDraw      time.Time
	nextQuarter   int
}

func newProgress(w io.Writer, inPlace bool, steps int) *progress {
	return &progress{w: w, inPlace: inPlace, steps: steps}
}

func (p *progress) start(epoch, epochs int) {
	p.epoch, p.epochs, p.nextQuarter = epoch, epochs, 1
}

func (p *progress) update(step int, loss float64, examples int, elapsed time.Duration) {
	if p.seen == 0 {
		p.ema = loss
	} else {
		p.ema += (loss - p.ema) / 50
	}
	p.seen++
	switch {
	case p.inPlace:
		if time.Since(p.lastDraw) > 100*time.Millisecond || step == p.steps {
			p.lastDraw = time.Now()
			fmt.Fprintf(p.w, "\r%s", p.line(step, examples, elapsed))
		}
	case step*4 >= p.nextQuarter*p.steps:
		p.nextQuarter++
		fmt.Fprintln(p.w, p.line(step, examples, elapsed))
	}
}

func (p *progress) done(examples int, elapsed time.Duration) {
	if p.inPlace {
		fmt.Fprintf(p.w, "\r%s\n", p.line(p.steps, examples, elapsed))
	}
}

func (p *progress) line(step, examples int, elapsed time.Duration) string {
	const width = 30
	filled := width * step / max(1, p.steps)
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	rate := float64(examples) / max(elapsed.Seconds(), 1e-9)
	return fmt.Sprintf("epoch %d/%d [%s] %3d%%  loss %.4f  %6.0f examples/s", p.epoch, p.epochs, bar, 100*step/max(1, p.steps), p.ema, rate)
}
