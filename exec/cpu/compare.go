package cpu

// Comparison and min/max micro-ops, one loop per op and operand pattern
// (VV, VS, SV) so that the comparison is inlined: a function value called
// per element costs about 2 ns, more than the comparison.

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// u8 is 1 for true and 0 for false; the compiler makes it a SETcc.
func u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// selectRun is Where over a run: d[i] = x[i] if c[i] != 0 else y[i], each
// operand a vector (stride 1) or a scalar (stride 0). The common patterns
// get their own loops (twice as fast as the strided one); the select is
// branch-free: m is all ones where the condition holds.
func selectRun[T uint8 | uint16 | uint32 | uint64](d []T, c []uint8, cs int, x []T, xs int, y []T, ys int) {
	if vectorSelect(d, c, cs, x, xs, y, ys) {
		return
	}
	switch {
	case cs == 1 && xs == 1 && ys == 1:
		c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
		for i := range d {
			m := -T(c[i])
			d[i] = x[i]&m | y[i]&^m
		}
	case cs == 1 && xs == 1:
		c, x, s := c[:len(d)], x[:len(d)], y[0]
		for i := range d {
			m := -T(c[i])
			d[i] = x[i]&m | s&^m
		}
	case cs == 1 && ys == 1:
		c, s, y := c[:len(d)], x[0], y[:len(d)]
		for i := range d {
			m := -T(c[i])
			d[i] = s&m | y[i]&^m
		}
	default:
		for i := range d {
			m := -T(c[i*cs])
			d[i] = x[i*xs]&m | y[i*ys]&^m
		}
	}
}

func cmpEq[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] == b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] == s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s == b[i])
		}
	default:
		v := u8(a[0] == b[0])
		for i := range d {
			d[i] = v
		}
	}
}

func cmpNe[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] != b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] != s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s != b[i])
		}
	default:
		v := u8(a[0] != b[0])
		for i := range d {
			d[i] = v
		}
	}
}

func cmpLt[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] < b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] < s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s < b[i])
		}
	default:
		v := u8(a[0] < b[0])
		for i := range d {
			d[i] = v
		}
	}
}

func cmpLe[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] <= b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] <= s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s <= b[i])
		}
	default:
		v := u8(a[0] <= b[0])
		for i := range d {
			d[i] = v
		}
	}
}

func cmpGt[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] > b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] > s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s > b[i])
		}
	default:
		v := u8(a[0] > b[0])
		for i := range d {
			d[i] = v
		}
	}
}

func cmpGe[T ordered](d []uint8, a []T, as int, b []T, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = u8(a[i] >= b[i])
		}
	case as == 1:
		a, s := a[:len(d)], b[0]
		for i := range d {
			d[i] = u8(a[i] >= s)
		}
	case bs == 1:
		s, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = u8(s >= b[i])
		}
	default:
		v := u8(a[0] >= b[0])
		for i := range d {
			d[i] = v
		}
	}
}

// compareRun returns the comparison loop of op; as and bs are the operand
// strides (1 for a vector, 0 for a scalar).
func compareRun[T ordered](op graph.Op) func(d []uint8, a []T, as int, b []T, bs int) {
	if f := vectorCompare[T](op); f != nil {
		return f
	}
	switch op {
	case ops.OpEqual:
		return cmpEq[T]
	case ops.OpNotEqual:
		return cmpNe[T]
	case ops.OpLess:
		return cmpLt[T]
	case ops.OpLessEqual:
		return cmpLe[T]
	case ops.OpGreater:
		return cmpGt[T]
	case ops.OpGreaterEqual:
		return cmpGe[T]
	}
	return nil
}

// The builtin max and min are branch-free for floats, propagate NaN and
// order -0 below +0, which is what Maximum and Minimum promise.

func maxVV[T num](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = max(a[i], b[i])
	}
}

func maxVS[T num](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = max(a[i], s)
	}
}

func minVV[T num](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = min(a[i], b[i])
	}
}

func minVS[T num](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = min(a[i], s)
	}
}
