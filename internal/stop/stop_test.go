package stop

import "testing"

// TestDone: a nil channel is never done and calls no hook; an open one is
// not done, a closed one is; the hook sees each check of a non-nil
// channel (two here) and is restored.
func TestDone(t *testing.T) {
	calls := 0
	restore := SetHook(func() { calls++ })
	ch := make(chan struct{})
	if Done(nil) || Done(ch) {
		t.Errorf("nil or open channel reported done")
	}
	close(ch)
	if !Done(ch) {
		t.Errorf("closed channel not done")
	}
	restore()
	Done(ch)
	if calls != 2 {
		t.Errorf("hook called %d times, want 2", calls)
	}
}
