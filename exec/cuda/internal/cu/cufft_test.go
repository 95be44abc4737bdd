//go:build linux

package cu

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// loadFFT loads the (fake, or with LOOM_CU_TEST_REAL the real) cuFFT after
// setup.
func loadFFT(t *testing.T) *CUFFT {
	t.Helper()
	if fakeLibs.CUFFT != "" {
		t.Setenv("LOOM_LIBCUFFT", fakeLibs.CUFFT)
	}
	f, err := LoadCUFFT()
	must(t, err)
	return f
}

// refDFT is the reference transform: the N-D DFT of x (row-major, dims n)
// with exponent sign sgn, summed directly over every index in complex128
// (X[k] = Σ_j x[j]·exp(sgn·2πi·Σ_d j_d·k_d/n_d)), unscaled.
func refDFT(x []complex128, n []int, sgn float64) []complex128 {
	total := 1
	for _, v := range n {
		total *= v
	}
	idx := func(i int) []int {
		out := make([]int, len(n))
		for d := len(n) - 1; d >= 0; d-- {
			out[d] = i % n[d]
			i /= n[d]
		}
		return out
	}
	y := make([]complex128, total)
	for k := range total {
		kk := idx(k)
		var acc complex128
		for j := range total {
			jj := idx(j)
			ph := 0.0
			for d := range n {
				ph += float64(jj[d]*kk[d]) / float64(n[d])
			}
			acc += x[j] * cmplx.Exp(complex(0, sgn*2*math.Pi*ph))
		}
		y[k] = acc
	}
	return y
}

func randComplex(r *rand.Rand, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(r.Float64()*2-1, r.Float64()*2-1)
	}
	return v
}

func checkComplex(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	for i := range want {
		if cmplx.Abs(got[i]-want[i]) > tol*(1+cmplx.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestFFTC2C runs complex transforms of ranks 1 to 3, both directions, in
// both precisions, in the basic layout, against refDFT.
func TestFFTC2C(t *testing.T) {
	e := setup(t)
	f := loadFFT(t)
	d := e.d
	v, err := f.Version()
	must(t, err)
	if v <= 0 {
		t.Errorf("cuFFT version %d", v)
	}
	s, err := d.StreamCreate(0)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range [][]int{{7}, {8}, {3, 4}, {2, 3, 5}} {
		for _, dbl := range []bool{false, true} {
			for _, dir := range []int{FFTForward, FFTInverse} {
				const batch = 2
				size := 1
				n64 := make([]int64, len(n))
				for i, x := range n {
					size *= x
					n64[i] = int64(x)
				}
				x := randComplex(r, size*batch)
				var want []complex128
				for b := range batch {
					want = append(want, refDFT(x[b*size:(b+1)*size], n, float64(dir))...)
				}
				typ, tol := FFTC2C, 1e-5
				if dbl {
					typ, tol = FFTZ2Z, 1e-12
				}
				name := fmt.Sprintf("%v n=%v dir=%d", typ, n, dir)
				h, err := f.Create()
				must(t, err)
				ws, err := f.MakePlanMany(h, FFTLayout{N: n64, Batch: batch}, typ)
				must(t, err)
				if ws < 0 {
					t.Errorf("%s: work size %d", name, ws)
				}
				must(t, f.SetStream(h, s))
				got := make([]complex128, len(x))
				if dbl {
					in := upload(t, d, x)
					out := upload(t, d, make([]complex128, len(x)))
					must(t, f.Exec(h, typ, in, out, dir))
					must(t, d.StreamSynchronize(s))
					download(t, d, got, out)
				} else {
					x64 := make([]complex64, len(x))
					for i, c := range x {
						x64[i] = complex64(c)
					}
					// In place: the input buffer is the output.
					buf := upload(t, d, x64)
					must(t, f.Exec(h, typ, buf, buf, dir))
					must(t, d.StreamSynchronize(s))
					download(t, d, x64, buf)
					for i, c := range x64 {
						got[i] = complex128(c)
					}
				}
				checkComplex(t, name, got, want, tol)
				must(t, f.Destroy(h))
			}
		}
	}
}

// TestFFTRealAdvanced runs R2C and C2R (and their double versions) in
// cuFFT's advanced layout: 2-D transforms over the first two axes of a
// [3][6][2] array (stride 2; the batch of 2 interleaved, distance 1),
// checked against refDFT, and back.
func TestFFTRealAdvanced(t *testing.T) {
	e := setup(t)
	f := loadFFT(t)
	d := e.d
	r := rand.New(rand.NewPCG(7, 8))
	// Logical transform 3×6 (half spectrum 3×4), batch 2 interleaved
	// (stride 2, distance 1).
	n := []int{3, 6}
	const batch = 2
	h0 := n[1]/2 + 1
	for _, dbl := range []bool{false, true} {
		x := make([]float64, n[0]*n[1]*batch)
		for i := range x {
			x[i] = r.Float64()*2 - 1
		}
		// want[b] is the half spectrum of batch b.
		want := make([][]complex128, batch)
		for b := range batch {
			xc := make([]complex128, n[0]*n[1])
			for i := range xc {
				xc[i] = complex(x[i*batch+b], 0)
			}
			full := refDFT(xc, n, -1)
			for i := 0; i < n[0]; i++ {
				want[b] = append(want[b], full[i*n[1]:i*n[1]+h0]...)
			}
		}
		r2c, c2r, tol := FFTR2C, FFTC2R, 1e-5
		if dbl {
			r2c, c2r, tol = FFTD2Z, FFTZ2D, 1e-12
		}
		lay := FFTLayout{N: []int64{3, 6}, InEmbed: []int64{3, 6}, InStride: batch, InDist: 1,
			OutEmbed: []int64{3, int64(h0)}, OutStride: batch, OutDist: 1, Batch: batch}
		h, err := f.Create()
		must(t, err)
		defer f.Destroy(h)
		must(t, f.SetAutoAllocation(h, false))
		ws, err := f.MakePlanMany(h, lay, r2c)
		must(t, err)
		var work DevicePtr
		if ws > 0 {
			work, err = d.MemAlloc(ws)
			must(t, err)
			defer d.MemFree(work)
		}
		// Without a work area the plan does not run.
		var spec DevicePtr
		if dbl {
			spec = upload(t, d, make([]complex128, n[0]*h0*batch))
		} else {
			spec = upload(t, d, make([]complex64, n[0]*h0*batch))
		}
		var in DevicePtr
		if dbl {
			in = upload(t, d, x)
		} else {
			in = upload(t, d, toF32(x))
		}
		if ws > 0 {
			if err := f.Exec(h, r2c, in, spec, 0); !errors.Is(err, FFTNoWorkspace) {
				t.Errorf("%v without a work area: %v, want CUFFT_NO_WORKSPACE", r2c, err)
			}
			must(t, f.SetWorkArea(h, work))
		}
		must(t, f.Exec(h, r2c, in, spec, 0))
		must(t, d.CtxSynchronize())
		got := make([]complex128, n[0]*h0*batch)
		if dbl {
			download(t, d, got, spec)
		} else {
			g := make([]complex64, len(got))
			download(t, d, g, spec)
			for i, c := range g {
				got[i] = complex128(c)
			}
		}
		for b := range batch {
			gb := make([]complex128, n[0]*h0)
			for i := range gb {
				gb[i] = got[i*batch+b]
			}
			checkComplex(t, fmt.Sprintf("%v batch %d", r2c, b), gb, want[b], tol)
		}

		// And back: C2R of the spectrum gives size·x (unnormalised).
		hb, err := f.Create()
		must(t, err)
		defer f.Destroy(hb)
		back := FFTLayout{N: []int64{3, 6}, InEmbed: []int64{3, int64(h0)}, InStride: batch, InDist: 1,
			OutEmbed: []int64{3, 6}, OutStride: batch, OutDist: 1, Batch: batch}
		_, err = f.MakePlanMany(hb, back, c2r)
		must(t, err)
		var res DevicePtr
		if dbl {
			res = upload(t, d, make([]float64, len(x)))
		} else {
			res = upload(t, d, make([]float32, len(x)))
		}
		must(t, f.Exec(hb, c2r, spec, res, 0))
		must(t, d.CtxSynchronize())
		gotx := make([]float64, len(x))
		if dbl {
			download(t, d, gotx, res)
		} else {
			g := make([]float32, len(x))
			download(t, d, g, res)
			for i, v := range g {
				gotx[i] = float64(v)
			}
		}
		wantx := make([]float64, len(x))
		for i, v := range x {
			wantx[i] = v * float64(n[0]*n[1])
		}
		checkClose(t, fmt.Sprintf("%v of %v", c2r, r2c), gotx, wantx, 10*tol)
	}
}

// TestFFTErrors checks the argument checks of cuFFT and the error values.
func TestFFTErrors(t *testing.T) {
	e := setup(t)
	f := loadFFT(t)
	d := e.d
	buf := upload(t, d, make([]complex128, 16))
	h, err := f.Create()
	must(t, err)
	if _, err := f.MakePlanMany(h, FFTLayout{N: []int64{0}, Batch: 1}, FFTC2C); !errors.Is(err, FFTInvalidSize) {
		t.Errorf("size 0: %v, want CUFFT_INVALID_SIZE", err)
	}
	if _, err := f.MakePlanMany(h, FFTLayout{N: []int64{4}, Batch: 1}, FFTType(7)); !errors.Is(err, FFTInvalidType) {
		t.Errorf("type 7: %v, want CUFFT_INVALID_TYPE", err)
	}
	if _, err := f.MakePlanMany(h, FFTLayout{N: []int64{1, 2, 3, 4}, Batch: 1}, FFTC2C); err == nil {
		t.Error("rank 4 accepted")
	}
	if _, err := f.MakePlanMany(h, FFTLayout{N: []int64{4}, InEmbed: []int64{4}, Batch: 1}, FFTC2C); err == nil {
		t.Error("an input embedding without an output one accepted")
	}
	// An embedding smaller than the transform.
	if _, err := f.MakePlanMany(h, FFTLayout{N: []int64{2, 4}, InEmbed: []int64{2, 3}, InStride: 1, InDist: 8,
		OutEmbed: []int64{2, 4}, OutStride: 1, OutDist: 8, Batch: 1}, FFTC2C); !errors.Is(err, FFTInvalidValue) {
		t.Errorf("embedding 3 < 4: %v, want CUFFT_INVALID_VALUE", err)
	}
	_, err = f.MakePlanMany(h, FFTLayout{N: []int64{4}, Batch: 2}, FFTC2C)
	must(t, err)
	if err := f.Exec(h, FFTC2C, buf, buf, 0); !errors.Is(err, FFTInvalidValue) {
		t.Errorf("direction 0: %v, want CUFFT_INVALID_VALUE", err)
	}
	if err := f.Exec(h, FFTZ2Z, buf, buf, FFTForward); !errors.Is(err, FFTInvalidType) {
		t.Errorf("Z2Z on a C2C plan: %v, want CUFFT_INVALID_TYPE", err)
	}
	if err := f.Exec(h, FFTType(1), buf, buf, FFTForward); err == nil {
		t.Error("Exec of type 1 succeeded")
	}
	must(t, f.Destroy(h))
	if err := f.Destroy(h); !errors.Is(err, FFTInvalidPlan) {
		t.Errorf("second Destroy: %v, want CUFFT_INVALID_PLAN", err)
	}
	if err := f.SetStream(h, 0); !errors.Is(err, FFTInvalidPlan) {
		t.Errorf("SetStream of a destroyed plan: %v", err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{FFTInvalidSize, "CUFFT_INVALID_SIZE (8): the transform size is not supported"},
		{FFTNoWorkspace, "CUFFT_NO_WORKSPACE (13): no work area was provided before execution"},
		{FFTResult(99), "cufftResult(99)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if FFTSuccess.err() != nil {
		t.Error("CUFFT_SUCCESS is an error")
	}
	if got := FFTD2Z.String(); got != "CUFFT_D2Z" {
		t.Errorf("FFTD2Z = %q", got)
	}
}
