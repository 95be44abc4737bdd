package dist

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/loomgraph/loom/tensor"
)

// NewGroup returns the n Communicators of an in-process group: rank r is
// element r, each to be used by its own goroutine, which exchange through
// shared memory. It is not a transport between processes (use dist/mpi
// for that): it is what tests and single-process simulations of a
// data-parallel program run on, with the semantics of the real engines
// (results in rank order, the same bits on every rank, errors for
// mismatched calls, ErrTimeout after timeout when a rank does not
// arrive; 0 means no timeout, only the context's).
func NewGroup(n int, timeout time.Duration) ([]Communicator, error) {
	if n < 1 {
		return nil, fmt.Errorf("dist: NewGroup(%d): a group needs at least one rank", n)
	}
	g := &group{n: n, timeout: timeout}
	out := make([]Communicator, n)
	for r := range out {
		out[r] = &member{g: g, rank: r}
	}
	return out, nil
}

type group struct {
	n       int
	timeout time.Duration
	mu      sync.Mutex
	cur     *round
	broken  error
}

// round is one collective: every rank deposits its buffer, waits for all
// (all closed), reads the others', and waits until all have read (done
// closed) before it writes its own.
type round struct {
	slots         [][]byte
	what          []string
	arrived, left int
	all, done     chan struct{}
}

type member struct {
	g    *group
	rank int
}

func (m *member) Name() string { return "group" }
func (m *member) Rank() int    { return m.rank }
func (m *member) Size() int    { return m.g.n }

// wait waits for ch, the context or the group's timeout.
func (m *member) wait(ctx context.Context, ch chan struct{}, what string) error {
	var timer <-chan time.Time
	if m.g.timeout > 0 {
		t := time.NewTimer(m.g.timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return m.g.breakWith(fmt.Errorf("dist: %s on rank %d of %d: %w", what, m.rank, m.g.n, ctx.Err()))
	case <-timer:
		return m.g.breakWith(fmt.Errorf("%w: %s on rank %d of %d: not every rank arrived within %v", ErrTimeout, what, m.rank, m.g.n, m.g.timeout))
	}
}

func (g *group) breakWith(err error) error {
	g.mu.Lock()
	if g.broken == nil {
		g.broken = err
	}
	g.mu.Unlock()
	return err
}

// exchange deposits buf for the collective what and returns every rank's
// buffer once all have arrived; finish must be called after reading.
func (m *member) exchange(ctx context.Context, buf []byte, what string) (*round, error) {
	g := m.g
	g.mu.Lock()
	if g.broken != nil {
		err := g.broken
		g.mu.Unlock()
		return nil, fmt.Errorf("dist: %s on rank %d: the group is broken by an earlier error: %w", what, m.rank, err)
	}
	r := g.cur
	if r == nil {
		r = &round{slots: make([][]byte, g.n), what: make([]string, g.n), all: make(chan struct{}), done: make(chan struct{})}
		g.cur = r
	}
	r.slots[m.rank], r.what[m.rank] = buf, what
	r.arrived++
	if r.arrived == g.n {
		g.cur = nil
		close(r.all)
	}
	g.mu.Unlock()
	if err := m.wait(ctx, r.all, what); err != nil {
		return nil, err
	}
	for q, w := range r.what {
		if w != what {
			m.finish(r)
			return nil, fmt.Errorf("dist: rank %d called %s while rank %d called %s: the ranks run different programs", m.rank, what, q, w)
		}
	}
	return r, nil
}

func (m *member) finish(r *round) {
	m.g.mu.Lock()
	r.left++
	if r.left == m.g.n {
		close(r.done)
	}
	m.g.mu.Unlock()
}

// collective runs one exchange: compute reads every rank's buffer and
// returns this rank's result, written into dst once every rank has read.
func (m *member) collective(ctx context.Context, buf, dst []byte, what string, compute func(slots [][]byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := m.exchange(ctx, buf, what)
	if err != nil {
		return err
	}
	res, cerr := compute(r.slots)
	m.finish(r)
	if err := m.wait(ctx, r.done, what); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	copy(dst, res)
	return nil
}

func (m *member) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op ReduceOp) error {
	what := fmt.Sprintf("AllReduce(%d bytes of %v, %v)", len(buf), dt, op)
	return m.collective(ctx, buf, buf, what, func(slots [][]byte) ([]byte, error) {
		return reduceSlots(slots, dt, op)
	})
}

func (m *member) AllGather(ctx context.Context, send, recv []byte) error {
	if len(recv) != m.g.n*len(send) {
		return fmt.Errorf("dist: AllGather: %d bytes received for %d sent by each of %d ranks", len(recv), len(send), m.g.n)
	}
	what := fmt.Sprintf("AllGather(%d bytes)", len(send))
	return m.collective(ctx, send, recv, what, func(slots [][]byte) ([]byte, error) {
		out := make([]byte, 0, len(recv))
		for _, s := range slots {
			out = append(out, s...)
		}
		return out, nil
	})
}

func (m *member) ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, op ReduceOp) error {
	if len(send) != m.g.n*len(recv) {
		return fmt.Errorf("dist: ReduceScatter: %d bytes sent for %d received by each of %d ranks", len(send), len(recv), m.g.n)
	}
	what := fmt.Sprintf("ReduceScatter(%d bytes of %v, %v)", len(send), dt, op)
	return m.collective(ctx, send, recv, what, func(slots [][]byte) ([]byte, error) {
		blocks := make([][]byte, len(slots))
		for q, s := range slots {
			blocks[q] = s[m.rank*len(recv):][:len(recv)]
		}
		return reduceSlots(blocks, dt, op)
	})
}

func (m *member) Broadcast(ctx context.Context, buf []byte, root int) error {
	if root < 0 || root >= m.g.n {
		return fmt.Errorf("dist: Broadcast: root %d of a group of %d", root, m.g.n)
	}
	what := fmt.Sprintf("Broadcast(%d bytes from %d)", len(buf), root)
	return m.collective(ctx, buf, buf, what, func(slots [][]byte) ([]byte, error) {
		return append([]byte(nil), slots[root]...), nil
	})
}

func (m *member) Barrier(ctx context.Context) error {
	return m.collective(ctx, nil, nil, "Barrier", func([][]byte) ([]byte, error) { return nil, nil })
}

// reduceSlots reduces the slots elementwise in rank order (so every rank
// computes the same bits) into a new buffer.
func reduceSlots(slots [][]byte, dt tensor.DType, op ReduceOp) ([]byte, error) {
	out := append([]byte(nil), slots[0]...)
	var f func(dst, src []byte)
	switch dt {
	case tensor.Int8:
		f = reducer[int8](op)
	case tensor.Int16:
		f = reducer[int16](op)
	case tensor.Int32:
		f = reducer[int32](op)
	case tensor.Int64:
		f = reducer[int64](op)
	case tensor.Uint8:
		f = reducer[uint8](op)
	case tensor.Float32:
		f = reducer[float32](op)
	case tensor.Float64:
		f = reducer[float64](op)
	case tensor.Complex64:
		if op == Sum {
			f = reducer[float32](op) // a sum of complex numbers is the sum of their parts
		}
	case tensor.Complex128:
		if op == Sum {
			f = reducer[float64](op)
		}
	}
	if f == nil {
		return nil, fmt.Errorf("dist: %v reduction of %v is not supported", op, dt)
	}
	for _, s := range slots[1:] {
		if len(s) != len(out) {
			return nil, fmt.Errorf("dist: ranks reduce buffers of %d and %d bytes", len(out), len(s))
		}
		f(out, s)
	}
	return out, nil
}

type real interface {
	int8 | int16 | int32 | int64 | uint8 | float32 | float64
}

// reducer returns dst[i] = op(dst[i], src[i]) on elements of type T. Max
// and min propagate NaN (as MPI's do not promise to; the group does).
func reducer[T real](op ReduceOp) func(dst, src []byte) {
	return func(db, sb []byte) {
		d, s := tensor.View[T](db), tensor.View[T](sb)
		for i := range d {
			a, b := d[i], s[i]
			switch op {
			case Sum:
				d[i] = a + b
			case Max:
				if b > a || b != b {
					d[i] = b
				}
			case Min:
				if b < a || b != b {
					d[i] = b
				}
			}
		}
	}
}
