package opdef

import "testing"

// The sizes below are what PyTorch 1.13 gives for
// torch.nn.MaxPool1d(k, s, p, d, ceil_mode=c)(torch.zeros(1, 1, n)).shape[-1]
// (run on this machine; MaxPool pads both sides with p).
func TestPoolOutSize(t *testing.T) {
	for _, c := range []struct{ n, k, s, p, d, floor, ceil int }{
		{6, 3, 2, 0, 1, 2, 3},
		{7, 3, 2, 1, 1, 4, 4},
		{5, 2, 2, 0, 1, 2, 3},
		{8, 3, 3, 1, 1, 3, 3},
		{10, 3, 4, 1, 2, 2, 3},
		{4, 3, 2, 1, 1, 2, 3},
		{9, 2, 3, 1, 1, 4, 4},
		// A window longer than the padded input: torch raises "Output
		// size is too small" for both modes; ours is 0 (a truncating
		// division would give 1 here, since -1/2 is 0).
		{1, 2, 2, 0, 1, 0, 0},
		{2, 3, 2, 0, 2, 0, 0},
	} {
		if got := PoolOutSize(c.n, c.k, c.s, c.d, c.p, c.p, false); got != c.floor {
			t.Errorf("PoolOutSize(%+v, floor) = %d, want %d", c, got, c.floor)
		}
		if got := ConvOutSize(c.n, c.k, c.s, c.d, c.p, c.p); got != c.floor {
			t.Errorf("ConvOutSize(%+v) = %d, want %d", c, got, c.floor)
		}
		if got := PoolOutSize(c.n, c.k, c.s, c.d, c.p, c.p, true); got != c.ceil {
			t.Errorf("PoolOutSize(%+v, ceil) = %d, want %d", c, got, c.ceil)
		}
	}
}

func TestConvAttrEqualClone(t *testing.T) {
	a := ConvAttr{Stride: []int{1, 2}, Dilation: []int{1, 1}, PadLo: []int{0, 1}, PadHi: []int{0, 1}, Groups: 2}
	b := CloneAttr(a).(ConvAttr)
	if !EqualAttrs(a, b) {
		t.Fatalf("clone %v differs from %v", b, a)
	}
	b.Stride[1] = 3
	if a.Stride[1] != 2 || EqualAttrs(a, b) {
		t.Fatalf("clone shares memory or compares equal after a change: %v vs %v", a, b)
	}
	c := a
	c.Size = []int{4, 4}
	if EqualAttrs(a, c) {
		t.Fatalf("%v equals %v", a, c)
	}
	p := PoolAttr{Kernel: []int{2}, Stride: []int{2}, Dilation: []int{1}, PadLo: []int{0}, PadHi: []int{0}}
	q := CloneAttr(p).(PoolAttr)
	q.Ceil = true
	if EqualAttrs(p, q) || !EqualAttrs(p, CloneAttr(p)) {
		t.Fatalf("PoolAttr equality wrong: %v vs %v", p, q)
	}
}
