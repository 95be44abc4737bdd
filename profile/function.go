package profile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Function profiles fn, like phiml's profile_function: it calls fn warmup
// times without recording (so that compilation, caches and allocations
// settle), then runs times with a context carrying a fresh Recorder, and
// returns that Recorder. Each recorded call also appears in the trace as a
// span of cat "call" on the thread "calls" of the process "host".
//
// The Recorder remembers the number of recorded calls, so its summary
// reports counts and totals per call. The warm-up calls run with a context
// that carries no Recorder, even if ctx carries one.
//
// If fn fails, Function stops and returns the error, with the Recorder
// holding what was recorded so far (nil if a warm-up call failed).
func Function(ctx context.Context, warmup, runs int, fn func(ctx context.Context) error) (*Recorder, error) {
	if warmup < 0 || runs < 1 {
		return nil, fmt.Errorf("profile: Function needs warmup >= 0 and runs >= 1, not %d and %d", warmup, runs)
	}
	if fn == nil {
		return nil, errors.New("profile: Function of a nil function")
	}
	quiet := NewContext(ctx, nil)
	for i := range warmup {
		if err := fn(quiet); err != nil {
			return nil, fmt.Errorf("profile: warm-up call %d: %w", i, err)
		}
	}

	r := New()
	r.warmup = warmup // r is not shared yet
	pid := r.Process("host", -1)
	tid := r.Thread(pid, "calls", 0)
	rctx := NewContext(ctx, r)
	for i := range runs {
		start := r.Now()
		err := fn(rctx)
		r.Span(pid, tid, "call", "call "+strconv.Itoa(i), start, r.Now(), nil, nil)
		r.mu.Lock()
		r.calls++
		r.mu.Unlock()
		if err != nil {
			return r, fmt.Errorf("profile: call %d: %w", i, err)
		}
	}
	return r, nil
}
