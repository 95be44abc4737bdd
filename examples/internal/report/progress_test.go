package report

import (
	"bytes"
	"fmt"
	"testing"
)

// TestProgressLines: not in place, a bar of 8 steps drawn in quarters
// prints at steps 2, 4, 6 and 8; the loss shown is the moving average
// (span 2: each step moves it half way), carried into the next bar.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	p := &Progress{W: &out, Lines: 4, Smooth: 2}
	line := func(bar string, loss float64) string { return fmt.Sprintf("%s loss %.4f", bar, loss) }
	p.Start(8, 0)
	for s := 1; s <= 8; s++ {
		p.Update(s, float64(s), line)
	}
	p.Done(line) // not in place: nothing more
	// By hand: ema 1, then +(2-1)/2 = 1.5, +(3-1.5)/2 = 2.25, 3.125,
	// 4.0625, 5.03125, 6.015625, 7.0078125.
	want := "[=======>                      ]  25% loss 1.5000\n" +
		"[===============>              ]  50% loss 3.1250\n" +
		"[======================>       ]  75% loss 5.0312\n" +
		"[==============================] 100% loss 7.0078\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	// A second bar restarts the quarters, not the average.
	out.Reset()
	p.Start(4, 0)
	p.Update(1, 7.0078125, line)
	if got := out.String(); got != "[=======>                      ]  25% loss 7.0078\n" {
		t.Errorf("second bar: %q", got)
	}
	if p.Loss() != 7.0078125 {
		t.Errorf("Loss() = %v, want 7.0078125", p.Loss())
	}
}

// TestProgressResumed: a bar started at step 5 of 10 in tenths prints its
// first line at step 6, and in place the line is redrawn after a carriage
// return and ended by Done with a newline.
func TestProgressResumed(t *testing.T) {
	var out bytes.Buffer
	p := &Progress{W: &out, Lines: 10, Smooth: 1}
	line := func(bar string, loss float64) string { return fmt.Sprintf("%s %g", bar, loss) }
	p.Start(10, 5)
	p.Update(6, 0.5, line)
	if got := out.String(); got != "[==================>           ]  60% 0.5\n" {
		t.Errorf("resumed: %q", got)
	}
	out.Reset()
	q := &Progress{W: &out, InPlace: true, Lines: 4, Smooth: 1}
	q.Start(2, 0)
	q.Update(1, 3, line) // drawn: the first draw is always due
	q.Update(2, 4, line) // drawn: the last step
	q.Done(line)
	want := "\r[===============>              ]  50% 3" +
		"\r[==============================] 100% 4" +
		"\r[==============================] 100% 4\n"
	if got := out.String(); got != want {
		t.Errorf("in place: %q, want %q", got, want)
	}
}
