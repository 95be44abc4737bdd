// Package stop is the cancellation check that the CPU kernels (exec/cpu)
// and the matrix multiply (internal/gemm) make between bounded pieces of
// work: a non-blocking receive on a Run's ctx.Done(), which allocates
// nothing and costs nothing when the context cannot be cancelled.
package stop

// hook, when set (tests), is called by every check of a non-nil done.
var hook func()

// Done reports whether done is closed; a nil done (a context that cannot
// be cancelled) never is.
func Done(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	if hook != nil {
		hook()
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// SetHook makes f run at every check of a non-nil done (f must be safe for
// concurrent use); restore undoes it. It is for tests that count checks or
// cancel at a chosen one; set it only while no kernel runs.
func SetHook(f func()) (restore func()) {
	old := hook
	hook = f
	return func() { hook = old }
}
