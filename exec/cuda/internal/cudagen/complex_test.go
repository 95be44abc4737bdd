package cudagen

import (
	"bytes"
	"fmt"
	"math"
	"math/cmplx"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// complexDriver is a host program over the prelude's complex functions:
// each input line names a function and gives two complex operands (four
// doubles, hexadecimal); it prints the result's two parts, hexadecimal.
// The complex64 functions get the operands rounded to float.
const complexDriver = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void put(double x) { if (x != x) printf(" nan"); else printf(" %a", x); }
static void put2(loom_c128 z) { put(z.re); put(z.im); }
static void put2f(loom_c64 z) { put((double)z.re); put((double)z.im); }
int main()
{
    char f[32];
    double a, b, c, d;
    while (scanf("%31s %la %la %la %la", f, &a, &b, &c, &d) == 5) {
        loom_c128 x = loom_complex_f64(a, b), y = loom_complex_f64(c, d);
        loom_c64 xf = loom_complex_f32((float)a, (float)b), yf = loom_complex_f32((float)c, (float)d);
        if (!strcmp(f, "mul")) put2(x * y);
        else if (!strcmp(f, "div")) put2(loom_div_c128(x, y));
        else if (!strcmp(f, "exp")) put2(loom_exp_c128(x));
        else if (!strcmp(f, "log")) put2(loom_log_c128(x));
        else if (!strcmp(f, "sqrt")) put2(loom_sqrt_c128(x));
        else if (!strcmp(f, "abs")) { put(loom_abs_c128(x)); put(0.0); }
        else if (!strcmp(f, "angle")) { put(loom_angle_c128(x)); put(0.0); }
        else if (!strcmp(f, "pow")) put2(loom_pow_c128(x, y));
        else if (!strcmp(f, "recip")) put2(loom_reciprocal_c128(x));
        else if (!strcmp(f, "mul64")) put2f(xf * yf);
        else if (!strcmp(f, "div64")) put2f(loom_div_c64(xf, yf));
        else if (!strcmp(f, "exp64")) put2f(loom_exp_c64(xf));
        else if (!strcmp(f, "sqrt64")) put2f(loom_sqrt_c64(xf));
        else if (!strcmp(f, "abs64")) { put((double)loom_abs_c64(xf)); put(0.0); }
        else { printf("unknown %s", f); }
        printf("\n");
    }
    return 0;
}
`

// TestComplexPreludeOnHost checks the prelude's complex arithmetic and
// functions, compiled by the host C++ compiler (as the emulator compiles
// them), against Go's (the CPU backend's): operators and math/cmplx, on
// every pair of parts from a set of ordinary and special values (zeros
// of both signs, a subnormal, huge values, infinities, NaN). Special
// results must match exactly (NaN, infinities, the sign of a zero);
// finite ones to a few units in the last place of the result's larger
// part (the host's libm and Go's math differ in the last bit; Sqrt is
// our own formula, not math/cmplx's).
func TestComplexPreludeOnHost(t *testing.T) {
	bin := compileHost(t, syntaxHeader+Prelude()+complexDriver)
	parts := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, -3.75, 0.1, 1e-310, 7e300, -1e308, math.Inf(1), math.Inf(-1), math.NaN()}
	var zs []complex128
	for _, re := range parts {
		for _, im := range parts {
			zs = append(zs, complex(re, im))
		}
	}
	type job struct {
		f    string
		x, y complex128
		want complex128
		tol  float64 // ulps
	}
	var jobs []job
	c64 := func(z complex128) complex128 { return complex128(complex64(z)) }
	f32 := func(v float64) complex128 { return complex(float64(float32(v)), 0) }
	tiny := func(v float64) bool { return v != 0 && math.Abs(v) < 0x1p-1022 }
	for _, x := range zs {
		if !tiny(real(x)) && !tiny(imag(x)) {
			// Go's math.Log (amd64) and cmplx.Sqrt lose precision on
			// subnormal parts: those are checked against Python below.
			jobs = append(jobs, job{"log", x, 0, cmplx.Log(x), 4}, job{"sqrt", x, 0, cmplx.Sqrt(x), 4})
		}
		jobs = append(jobs,
			job{"exp", x, 0, cmplx.Exp(x), 4},
			job{"recip", x, 0, 1 / x, 0},
			job{"abs", x, 0, complex(cmplx.Abs(x), 0), 1},
			job{"angle", x, 0, complex(cmplx.Phase(x), 0), 1},
			job{"exp64", x, 0, c64(cmplx.Exp(c64(x))), 1},
			job{"sqrt64", x, 0, c64(cmplx.Sqrt(c64(x))), 1},
			job{"abs64", x, 0, f32(cmplx.Abs(c64(x))), 1},
		)
		for _, y := range zs {
			x64, y64 := complex64(x), complex64(y)
			jobs = append(jobs,
				job{"mul", x, y, x * y, 0},
				job{"div", x, y, x / y, 0},
				job{"mul64", x, y, complex128(x64 * y64), 0},
				job{"div64", x, y, complex128(x64 / y64), 0},
			)
			// cmplx.Pow panics for 0 to the power NaN + i inf; subnormal
			// bases go through Go's imprecise math.Log; and Go's math.Pow
			// is off by up to ~1e-14 for large results, where the host's
			// libm is right: (7e300i)^0.1 is 1.1998576672886193e+30 +
			// 1.9003878510261165e+29i by the device and by CPython's
			// complex power (/usr/bin/python3), 1.1998576672886059e+30 +
			// ... by Go; hence the 256 ulps. Exponents with huge finite
			// parts are left out: the angle im(y)·log|x| is then ~1e308
			// radians, and a last-bit difference of log gives another
			// quadrant.
			huge := func(v float64) bool { return math.Abs(v) > 1e100 && !math.IsInf(v, 0) }
			if !tiny(real(x)) && !tiny(imag(x)) && !huge(real(y)) && !huge(imag(y)) && !(x == 0 && math.IsNaN(real(y)) && math.IsInf(imag(y), 0)) {
				jobs = append(jobs, job{"pow", x, y, cmplx.Pow(x, y), 256})
			}
		}
	}
	// Subnormal parts: cmath.log and cmath.sqrt of CPython 3 (/usr/bin/python3).
	jobs = append(jobs,
		job{"log", complex(1e-310, 1e-310), 0, complex(-713.4548052378742, 0.7853981633974483), 4},
		job{"log", complex(1e-310, 0), 0, complex(-713.8013788281542, 0), 4},
		job{"sqrt", complex(0, 1e-310), 0, complex(7.071067811865465e-156, 7.071067811865464e-156), 4},
	)
	var in strings.Builder
	hex := func(v float64) string { return strconv.FormatFloat(v, 'x', -1, 64) }
	for _, j := range jobs {
		fmt.Fprintf(&in, "%s %s %s %s %s\n", j.f, hex(real(j.x)), hex(imag(j.x)), hex(real(j.y)), hex(imag(j.y)))
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(jobs) {
		t.Fatalf("%d results for %d inputs", len(lines), len(jobs))
	}
	bad := 0
	for i, j := range jobs {
		fs := strings.Fields(lines[i])
		if len(fs) != 2 {
			t.Fatalf("%s(%v, %v): output %q", j.f, j.x, j.y, lines[i])
		}
		var got [2]float64
		for k, s := range fs {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s(%v, %v): output %q: %v", j.f, j.x, j.y, lines[i], err)
			}
			got[k] = v
		}
		want := [2]float64{real(j.want), imag(j.want)}
		ulp := ulpOf(math.Max(math.Abs(want[0]), math.Abs(want[1])), strings.HasSuffix(j.f, "64"))
		for k := range 2 {
			if !sameSpecial(got[k], want[k], j.tol*ulp) {
				if bad++; bad <= 20 {
					t.Errorf("%s(%v, %v) = %v, want %v", j.f, j.x, j.y, complex(got[0], got[1]), j.want)
				}
				break
			}
		}
	}
	t.Logf("%d evaluations, %d wrong", len(jobs), bad)
}

// ulpOf is the spacing of float64 (or float32, f32) values at |v|.
func ulpOf(v float64, f32 bool) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	if f32 {
		f := float32(v)
		return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
	}
	return math.Nextafter(v, math.Inf(1)) - v
}

// sameSpecial reports whether got matches want: both NaN, the same
// infinity, the same zero (sign included), or within tol of each other.
func sameSpecial(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || want == 0:
		return got == want && math.Signbit(got) == math.Signbit(want)
	}
	return math.Abs(got-want) <= tol
}
