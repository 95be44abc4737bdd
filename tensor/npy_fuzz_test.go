package tensor

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// FuzzReadNpy checks that ReadNpy never panics, that its seeking and
// streaming paths agree, that it allocates in proportion to its input,
// and that whatever it accepts round-trips: writing what it read and
// reading that back gives the same tensor, and writing that again gives
// the same bytes.
func FuzzReadNpy(f *testing.F) {
	for _, dt := range npyDTypes() {
		for _, x := range roundTripTensors(dt) {
			var buf bytes.Buffer
			if err := WriteNpy(&buf, x); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	f.Add(npyFile(1, npyHdr(">i4", true, "(2, 2)"), 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 4))
	f.Add(npyFile(3, npyHdr(">c8", false, "(1,)"), 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0))
	f.Add(npyFile(2, "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 1L), }", 1, 0, 2, 0))
	f.Add(npyFile(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,)}"))
	f.Fuzz(func(t *testing.T, file []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		x, err := ReadNpy(bytes.NewReader(file), NpyLimits{})
		runtime.ReadMemStats(&after)
		// A seeker is read with one buffer for the header and one for
		// the data (two for Fortran order), none larger than the file.
		if n := after.TotalAlloc - before.TotalAlloc; n > uint64(4*len(file)+1<<20) {
			t.Fatalf("allocated %d bytes reading a %d-byte file", n, len(file))
		}
		streamed, serr := ReadNpy(streamReader{bytes.NewReader(file)}, NpyLimits{})
		if (err == nil) != (serr == nil) {
			t.Fatalf("seeker and stream disagree: %v vs %v", err, serr)
		}
		if err != nil {
			for _, e := range []error{err, serr} {
				if !strings.HasPrefix(e.Error(), "tensor: npy: ") {
					t.Fatalf("error %q lacks the prefix", e)
				}
			}
			return
		}
		one := func(t *Tensor) map[string]*Tensor { return map[string]*Tensor{"": t} }
		if d := diffTensors(one(streamed), one(x)); d != "" {
			t.Fatalf("stream read differs from seeker read: %s", d)
		}
		var out bytes.Buffer
		if err := WriteNpy(&out, x); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		again, err := ReadNpy(bytes.NewReader(out.Bytes()), NpyLimits{})
		if err != nil {
			t.Fatalf("reading what was written: %v\n%q", err, out.Bytes())
		}
		if d := diffTensors(one(again), one(x)); d != "" {
			t.Fatalf("round trip: %s", d)
		}
		var out2 bytes.Buffer
		if err := WriteNpy(&out2, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out2.Bytes(), out.Bytes()) {
			t.Fatalf("rewriting is not stable:\n%q\n%q", out.Bytes(), out2.Bytes())
		}
	})
}
