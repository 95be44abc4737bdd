package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws the training progress: a bar redrawn in place on a
// terminal, or a line every tenth of the run otherwise (logs, tests).
// The loss shown is an exponential moving average over about 20 steps;
// val is the latest validation loss.
type progress struct {
	w         io.Writer
	inPlace   bool
	steps     int
	start     int // the first step of this run (a resumed run starts late)
	ema       float64
	seen      int
	val       float64
	lastDraw  time.Time
	step      int
	elapsed   time.Duration
	nextTenth int
}

func newProgress(w io.Writer, inPlace bool, steps, start int) *progress {
	p := &progress{w: w, inPlace: inPlace, steps: steps, start: start, val: -1}
	p.nextTenth = start*10/max(1, steps) + 1
	return p
}

func (p *progress) update(step int, loss float64, elapsed time.Duration) {
	if p.seen == 0 {
		p.ema = loss
	} else {
		p.ema += (loss - p.ema) / 20
	}
	p.seen++
	p.step, p.elapsed = step, elapsed
	switch {
	case p.inPlace:
		if time.Since(p.lastDraw) > 100*time.Millisecond || step == p.steps {
			p.lastDraw = time.Now()
			fmt.Fprintf(p.w, "\r%s", p.line())
		}
	case step*10 >= p.nextTenth*p.steps:
		for step*10 >= p.nextTenth*p.steps {
			p.nextTenth++
		}
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *progress) done() {
	if p.inPlace && p.seen > 0 {
		fmt.Fprintf(p.w, "\r%s\n", p.line())
	}
}

func (p *progress) line() string {
	const width = 30
	filled := width * p.step / max(1, p.steps)
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	val := ""
	if p.val >= 0 {
		val = fmt.Sprintf("  val %.4f", p.val)
	}
	perStep := p.elapsed.Seconds() * 1e3 / float64(max(1, p.seen))
	return fmt.Sprintf("step %5d/%d [%s] %3d%%  loss %.4f%s  %5.1f ms/step", p.step, p.steps, bar, 100*p.step/max(1, p.steps), p.ema, val, perStep)
}
