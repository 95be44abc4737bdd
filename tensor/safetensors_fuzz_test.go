package tensor

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

// FuzzReadSafetensors checks that ReadSafetensors never panics, that its
// seeking and streaming paths agree, and that whatever it accepts
// round-trips: writing what it read and reading that back gives the same
// tensors and metadata, and writing those again gives the same bytes.
func FuzzReadSafetensors(f *testing.F) {
	for _, g := range safetensorsGoldens() {
		f.Add(g.file)
	}
	for _, c := range corruptSafetensors() {
		if c.limits == (SafetensorsLimits{}) {
			f.Add(c.file)
		}
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		tensors, meta, err := ReadSafetensors(bytes.NewReader(file), SafetensorsLimits{})
		streamed, streamedMeta, serr := ReadSafetensors(streamReader{bytes.NewReader(file)}, SafetensorsLimits{})
		if (err == nil) != (serr == nil) {
			t.Fatalf("seeker and stream disagree: %v vs %v", err, serr)
		}
		if err != nil {
			for _, e := range []error{err, serr} {
				if !strings.HasPrefix(e.Error(), "tensor: safetensors: ") {
					t.Fatalf("error %q lacks the prefix", e)
				}
			}
			return
		}
		if d := diffTensors(streamed, tensors); d != "" || !maps.Equal(streamedMeta, meta) {
			t.Fatalf("stream read differs from seeker read: %s; metadata %q vs %q", d, streamedMeta, meta)
		}

		var out bytes.Buffer
		if err := WriteSafetensors(&out, tensors, meta); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		again, againMeta, err := ReadSafetensors(bytes.NewReader(out.Bytes()), SafetensorsLimits{})
		if err != nil {
			t.Fatalf("reading what was written: %v\n%q", err, out.Bytes())
		}
		if d := diffTensors(again, tensors); d != "" || !maps.Equal(againMeta, meta) {
			t.Fatalf("round trip: %s; metadata %q, want %q", d, againMeta, meta)
		}
		var out2 bytes.Buffer
		if err := WriteSafetensors(&out2, again, againMeta); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out2.Bytes(), out.Bytes()) {
			t.Fatalf("rewriting is not stable:\n%q\n%q", out.Bytes(), out2.Bytes())
		}
	})
}
