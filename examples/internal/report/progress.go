// Package report holds what the training examples (mnist, cnn, charlm)
// share to show their training: the progress bar, the loss plot and the
// trace file.
package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws the progress of training: a bar redrawn in place on a
// terminal, or a line every 1/Lines of the bar otherwise (logs, tests).
// The loss it shows is an exponential moving average over about Smooth
// steps, carried from one bar to the next (an epoch to the next).
type Progress struct {
	W       io.Writer
	InPlace bool
	Lines   int // lines per bar when not in place (4: a line every quarter)
	Smooth  int // the moving average's span in steps

	steps, step int
	next        int // the next line is due at step next*steps/Lines
	ema         float64
	seen        int
	lastDraw    time.Time
}

// Line formats one progress line from the bar ("[====>    ]  50%") and
// the smoothed loss.
type Line func(bar string, loss float64) string

// Start begins a bar of steps steps, at step first (a resumed run starts
// late; 0 otherwise).
func (p *Progress) Start(steps, first int) {
	p.steps, p.step = steps, first
	p.next = first*p.lines()/max(1, steps) + 1
}

func (p *Progress) lines() int { return max(1, p.Lines) }

// Update records the loss of step (1-based, up to the steps given to
// Start) and draws a line when one is due, formatted by line.
func (p *Progress) Update(step int, loss float64, line Line) {
	if p.seen == 0 {
		p.ema = loss
	} else {
		p.ema += (loss - p.ema) / float64(max(1, p.Smooth))
	}
	p.seen++
	p.step = step
	switch {
	case p.InPlace:
		if time.Since(p.lastDraw) > 100*time.Millisecond || step == p.steps {
			p.lastDraw = time.Now()
			fmt.Fprintf(p.W, "\r%s", line(p.Bar(), p.ema))
		}
	case step*p.lines() >= p.next*p.steps:
		for step*p.lines() >= p.next*p.steps {
			p.next++
		}
		fmt.Fprintln(p.W, line(p.Bar(), p.ema))
	}
}

// Done ends the bar: in place, it draws the last line once more and
// moves to the next line.
func (p *Progress) Done(line Line) {
	if p.InPlace && p.seen > 0 {
		fmt.Fprintf(p.W, "\r%s\n", line(p.Bar(), p.ema))
	}
}

// Loss is the smoothed loss.
func (p *Progress) Loss() float64 { return p.ema }

// Bar is the bar at the latest step: 30 characters between brackets, and
// the percentage.
func (p *Progress) Bar() string {
	const width = 30
	filled := width * p.step / max(1, p.steps)
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	return fmt.Sprintf("[%s] %3d%%", bar, 100*p.step/max(1, p.steps))
}
