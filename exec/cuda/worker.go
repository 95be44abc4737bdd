//go:build linux

package cuda

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// worker is the goroutine that owns a device: it locks itself to an OS
// thread, makes the device's primary context current there once, and then
// runs every driver and cuBLAS call the backend makes, one at a time.
type worker struct {
	calls chan call
	done  chan struct{}
}

type call struct {
	fn    func() error
	reply chan error
}

// startWorker starts the goroutine and runs setup on it first; an error
// from setup stops it.
func startWorker(setup func() error) (*worker, error) {
	w := &worker{calls: make(chan call), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked (and exits with the goroutine): a thread
		// that had a CUDA context current is not handed back to Go.
		if err := protect(setup); err != nil {
			ready <- err
			close(w.done)
			return
		}
		ready <- nil
		for c := range w.calls {
			c.reply <- protect(c.fn)
		}
		close(w.done)
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return w, nil
}

// protect runs fn, turning a panic into an error.
func protect(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cuda: internal error: %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}

// do runs fn on the device goroutine and returns its error.
func (w *worker) do(fn func() error) error {
	reply := replies.Get().(chan error)
	w.calls <- call{fn: fn, reply: reply}
	err := <-reply
	replies.Put(reply)
	return err
}

// replies are reusable reply channels (a Run allocates none).
var replies = sync.Pool{New: func() any { return make(chan error, 1) }}

// stop ends the goroutine after the calls already queued.
func (w *worker) stop() {
	close(w.calls)
	<-w.done
}
