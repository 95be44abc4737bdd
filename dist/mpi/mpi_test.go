package mpi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/tensor"
)

// childEnv marks a test binary started by TestRanks under mpirun.
const childEnv = "LOOM_MPI_TEST_CHILD"

// world is the Comm the ranks' tests share (in a child only).
var world *Comm

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	forcePoll = os.Getenv(childEnv) == "poll"
	var err error
	world, err = Open(WithTimeout(20 * time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: Open:", err)
		os.Exit(3)
	}
	code := m.Run()
	if err := world.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "child: Close:", err)
		code = 4
	}
	os.Exit(code)
}

// TestRanks runs the tests named TestRank* on 2 ranks: this test binary
// again under mpirun -np 2 (each rank checks its own results; mpirun
// fails when one fails), once with the blocking collectives on their
// own goroutines, once polling the non-blocking ones.
func TestRanks(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in a child")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found (install openmpi-bin): skipping the 2-rank tests")
	}
	if _, err := loadLib(); err != nil {
		t.Skipf("skipping the 2-rank tests: %v", err)
	}
	for _, mode := range []string{"blocking", "poll"} {
		t.Run(mode, func(t *testing.T) { runRanks(t, mpirun, mode) })
	}
}

func runRanks(t *testing.T, mpirun, mode string) {
	args := mpirunArgs(2)
	args = append(args, os.Args[0], "-test.run=^TestRank[A-Z]", "-test.count=1", "-test.v")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Env = append(cmd.Env, testMCA...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// Every rank test passed on both ranks.
	for _, name := range rankTests {
		if mode == "poll" && name == "TestRankOpenTimeout" {
			continue // skipped: Open has no timeout when MPI calls are serialised
		}
		if n := strings.Count(string(out), "--- PASS: "+name+" "); n != 2 {
			t.Errorf("%s passed on %d ranks, want 2", name, n)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("mpirun output:\n%s", out)
	}
}

var rankTests = []string{"TestRankAllReduce", "TestRankAllReduceLarge", "TestRankAllGather", "TestRankReduceScatter",
	"TestRankBroadcast", "TestRankBarrier", "TestRankCheckSame", "TestRankErrors", "TestRankTimeout", "TestRankCancel", "TestRankOpenTimeout"}

// mpirunArgs are mpirun's options for n ranks on this machine.
func mpirunArgs(n int) []string {
	args := []string{"-np", fmt.Sprint(n), "--oversubscribe", "--bind-to", "none"}
	if os.Getuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return args
}

// testMCA keeps Open MPI on this host's shared memory without the
// single-copy mechanism containers often forbid (ptrace), and off UCX.
var testMCA = []string{
	"OMPI_MCA_btl=self,vader,tcp",
	"OMPI_MCA_pml=ob1",
	"OMPI_MCA_btl_vader_single_copy_mechanism=none",
}

// rank returns the shared 2-rank Comm, skipping outside mpirun.
func rank(t *testing.T) *Comm {
	t.Helper()
	if world == nil {
		t.Skip("runs under mpirun (TestRanks)")
	}
	if world.Size() != 2 {
		t.Fatalf("size %d, want 2", world.Size())
	}
	return world
}

// enc encodes vals (float64 in the test, exactly representable) as dt.
func enc(dt tensor.DType, vals []float64) []byte {
	b := make([]byte, 0, len(vals)*dt.Size())
	for _, v := range vals {
		switch dt {
		case tensor.Int8:
			b = append(b, byte(int8(v)))
		case tensor.Uint8:
			b = append(b, byte(v))
		case tensor.Int16:
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
		case tensor.Int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
		case tensor.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
		case tensor.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case tensor.Float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		case tensor.Float16:
			b = binary.LittleEndian.AppendUint16(b, uint16(tensor.F16FromFloat32(float32(v))))
		case tensor.BFloat16:
			b = binary.LittleEndian.AppendUint16(b, uint16(tensor.BF16FromFloat32(float32(v))))
		case tensor.Complex64: // v + 2v i
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(2*v)))
		case tensor.Complex128:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(2*v))
		default:
			panic(dt)
		}
	}
	return b
}

func TestRankAllReduce(t *testing.T) {
	c := rank(t)
	ctx := context.Background()
	r := float64(c.Rank())
	// Rank r contributes (r+1)*(i+1), negated at odd i for signed
	// types: over ranks 0 and 1 the sum is 3(i+1), the max 2(i+1) and
	// the min (i+1) (negated: -3(i+1), -(i+1), -2(i+1)). By hand.
	const n = 5
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Float32, tensor.Float64, tensor.Float16, tensor.BFloat16} {
		for _, op := range []dist.ReduceOp{dist.Sum, dist.Max, dist.Min} {
			in, want := make([]float64, n), make([]float64, n)
			for i := range n {
				k := float64(i + 1)
				neg := dt != tensor.Uint8 && i%2 == 1
				in[i] = (r + 1) * k
				want[i] = map[dist.ReduceOp]float64{dist.Sum: 3 * k, dist.Max: 2 * k, dist.Min: k}[op]
				if neg {
					in[i] = -in[i]
					want[i] = map[dist.ReduceOp]float64{dist.Sum: -3 * k, dist.Max: -k, dist.Min: -2 * k}[op]
				}
			}
			buf := enc(dt, in)
			if err := c.AllReduce(ctx, buf, dt, op); err != nil {
				t.Fatalf("%v %v: %v", dt, op, err)
			}
			if w := enc(dt, want); !bytes.Equal(buf, w) {
				t.Errorf("%v %v: got % x, want % x (%v)", dt, op, buf, w, want)
			}
		}
	}
	// Complex: sum only; (r+1)(i+1)(1+2i) sums to 3(i+1)(1+2i).
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		buf := enc(dt, []float64{r + 1, 2 * (r + 1)})
		if err := c.AllReduce(ctx, buf, dt, dist.Sum); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if w := enc(dt, []float64{3, 6}); !bytes.Equal(buf, w) {
			t.Errorf("%v sum: got % x, want % x", dt, buf, w)
		}
	}
	// Bool: max is or, min is and. Rank 0 [1 0 1 0], rank 1 [1 1 0 0].
	in := [][]byte{{1, 0, 1, 0}, {1, 1, 0, 0}}[c.Rank()]
	for _, tc := range []struct {
		op   dist.ReduceOp
		want []byte
	}{{dist.Max, []byte{1, 1, 1, 0}}, {dist.Min, []byte{1, 0, 0, 0}}} {
		op, want := tc.op, tc.want
		buf := append([]byte(nil), in...)
		if err := c.AllReduce(ctx, buf, tensor.Bool, op); err != nil {
			t.Fatalf("bool %v: %v", op, err)
		}
		if !bytes.Equal(buf, want) {
			t.Errorf("bool %v: got %v, want %v", op, buf, want)
		}
	}
	// An empty buffer is a no-op that still synchronises.
	if err := c.AllReduce(ctx, nil, tensor.Float32, dist.Sum); err != nil {
		t.Fatalf("empty: %v", err)
	}
}

func TestRankAllReduceLarge(t *testing.T) {
	c := rank(t)
	// 16 MiB of float32, 4 chunks of it through maxCount: element i on
	// rank r is (r+1)(i mod 1000), summing to 3(i mod 1000) exactly.
	defer func(m int) { maxCount = m }(maxCount)
	maxCount = 1 << 20
	const n = 4 << 20
	buf := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32((c.Rank()+1)*(i%1000))))
	}
	start := time.Now()
	if err := c.AllReduce(context.Background(), buf, tensor.Float32, dist.Sum); err != nil {
		t.Fatal(err)
	}
	t.Logf("16 MiB all-reduce in %v", time.Since(start))
	for i := range n {
		if got, want := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])), float32(3*(i%1000)); got != want {
			t.Fatalf("element %d: got %v, want %v", i, got, want)
		}
	}
}

func TestRankAllGather(t *testing.T) {
	c := rank(t)
	r := byte(c.Rank())
	send := []byte{10 * r, 10*r + 1, 10*r + 2}
	recv := make([]byte, 6)
	if err := c.AllGather(context.Background(), send, recv); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 1, 2, 10, 11, 12}; !bytes.Equal(recv, want) {
		t.Errorf("got %v, want %v", recv, want)
	}
}

func TestRankReduceScatter(t *testing.T) {
	c := rank(t)
	r := float64(c.Rank())
	// Block b, element k of rank r's send is (r+1)(10b+k): rank b gets
	// 3(10b+k).
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64, tensor.Float16} {
		var in, want []float64
		for b := range 2 {
			for k := range 3 {
				in = append(in, (r+1)*float64(10*b+k))
				if b == c.Rank() {
					want = append(want, 3*float64(10*b+k))
				}
			}
		}
		send, recv := enc(dt, in), make([]byte, 3*dt.Size())
		if err := c.ReduceScatter(context.Background(), send, recv, dt, dist.Sum); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if w := enc(dt, want); !bytes.Equal(recv, w) {
			t.Errorf("%v: got % x, want % x (%v)", dt, recv, w, want)
		}
	}
}

func TestRankBroadcast(t *testing.T) {
	c := rank(t)
	buf := make([]byte, 3)
	if c.Rank() == 1 {
		copy(buf, []byte{7, 8, 9})
	}
	if err := c.Broadcast(context.Background(), buf, 1); err != nil {
		t.Fatal(err)
	}
	if want := []byte{7, 8, 9}; !bytes.Equal(buf, want) {
		t.Errorf("got %v, want %v", buf, want)
	}
}

func TestRankBarrier(t *testing.T) {
	c := rank(t)
	// Rank 1 arrives 300 ms late: rank 0 waits for it.
	if c.Rank() == 1 {
		time.Sleep(300 * time.Millisecond)
	}
	start := time.Now()
	if err := c.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); c.Rank() == 0 && d < 200*time.Millisecond {
		t.Errorf("rank 0 left the barrier after %v, before rank 1 arrived", d)
	}
}

func TestRankCheckSame(t *testing.T) {
	c := rank(t)
	ctx := context.Background()
	if err := dist.CheckSame(ctx, c, 0xfeed, "program"); err != nil {
		t.Fatalf("same: %v", err)
	}
	err := dist.CheckSame(ctx, c, uint64(100+c.Rank()), "program")
	if !errors.Is(err, dist.ErrMismatch) {
		t.Fatalf("different: got %v, want ErrMismatch", err)
	}
	if want := "rank 0: 0x0000000000000064; rank 1: 0x0000000000000065"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

func TestRankErrors(t *testing.T) {
	c := rank(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bool sum", c.AllReduce(ctx, []byte{1}, tensor.Bool, dist.Sum), "bool has no sum"},
		{"complex max", c.AllReduce(ctx, make([]byte, 8), tensor.Complex64, dist.Max), "only sum reduces them"},
		{"invalid dtype", c.AllReduce(ctx, make([]byte, 4), tensor.Invalid, dist.Sum), "invalid dtype"},
		{"bad op", c.AllReduce(ctx, make([]byte, 4), tensor.Float32, dist.ReduceOp(9)), "unknown reduction ReduceOp(9)"},
		{"partial element", c.AllReduce(ctx, make([]byte, 6), tensor.Float32, dist.Sum), "holds 6 bytes, not a whole number of float32 elements"},
		{"gather size", c.AllGather(ctx, make([]byte, 4), make([]byte, 4)), "recv holds 4 bytes, want 8"},
		{"scatter size", c.ReduceScatter(ctx, make([]byte, 12), make([]byte, 8), tensor.Float32, dist.Sum), "send holds 12 bytes, want 16"},
		{"root", c.Broadcast(ctx, make([]byte, 4), 2), "root 2 out of range"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || !strings.Contains(tc.err.Error(), "mpi: ") {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}
	// A cancelled context stops a collective before it starts, leaving
	// the group usable.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Barrier(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: got %v", err)
	}
	// None of the above broke the group.
	buf := enc(tensor.Int32, []float64{float64(c.Rank())})
	if err := c.AllReduce(ctx, buf, tensor.Int32, dist.Max); err != nil || !bytes.Equal(buf, enc(tensor.Int32, []float64{1})) {
		t.Errorf("after the errors: %v %v", buf, err)
	}
}

// stall runs f on rank 0 while rank 1 stays away from comm c, then lets
// rank 1 join the abandoned collective (call) so that both ranks can
// close c and finalize.
func stall(t *testing.T, c *Comm, f func(), call func() error) {
	if c.Rank() == 0 {
		f()
	}
	if err := world.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Rank() == 1 {
		if err := call(); err != nil {
			t.Errorf("rank 1's late collective: %v", err)
		}
	}
	if err := world.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if c.inFlight {
		t.Errorf("rank %d: the late collective did not complete", c.Rank())
	}
}

func TestRankTimeout(t *testing.T) {
	rank(t)
	const timeout = 2 * time.Second
	c, err := Open(WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	stall(t, c, func() {
		start := time.Now()
		err := c.AllReduce(context.Background(), buf, tensor.Float64, dist.Sum)
		d := time.Since(start)
		if !errors.Is(err, dist.ErrTimeout) {
			t.Fatalf("got %v, want ErrTimeout", err)
		}
		for _, s := range []string{"AllReduce (float64 sum) of 64 bytes", "rank 0 of 2", "2s"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
		if d < timeout || d > timeout+time.Second {
			t.Errorf("timed out after %v, want %v", d, timeout)
		}
		// The group is broken: the next call fails at once.
		start = time.Now()
		if err := c.Barrier(context.Background()); !errors.Is(err, dist.ErrTimeout) || !strings.Contains(err.Error(), "broken") || time.Since(start) > 100*time.Millisecond {
			t.Errorf("after the timeout: %v after %v", err, time.Since(start))
		}
	}, func() error { return c.AllReduce(context.Background(), buf, tensor.Float64, dist.Sum) })
}

func TestRankCancel(t *testing.T) {
	rank(t)
	c, err := Open(WithTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	stall(t, c, func() {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := c.AllGather(ctx, buf, make([]byte, 16))
		if !errors.Is(err, context.Canceled) || errors.Is(err, dist.ErrTimeout) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("cancelled after %v, want about 200ms", d)
		}
		// A context deadline is a timeout too.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel2()
		if err := c.Barrier(ctx2); err == nil || !strings.Contains(err.Error(), "broken") {
			t.Errorf("after the cancellation: %v", err)
		}
	}, func() error { return c.AllGather(context.Background(), buf, make([]byte, 16)) })
}

func TestRankOpenTimeout(t *testing.T) {
	rank(t)
	if forcePoll {
		t.Skip("Open waits without a timeout where MPI calls are serialised")
	}
	// Rank 0 opens alone: the duplication of MPI_COMM_WORLD cannot
	// complete before rank 1 comes, 1 s later than rank 0's timeout.
	const timeout = time.Second
	if world.Rank() == 0 {
		start := time.Now()
		c, err := Open(WithTimeout(timeout))
		if !errors.Is(err, dist.ErrTimeout) || !strings.Contains(err.Error(), "every rank must call Open") {
			t.Errorf("got %v, %v; want ErrTimeout", c, err)
		}
		if d := time.Since(start); d < timeout || d > timeout+time.Second {
			t.Errorf("timed out after %v, want %v", d, timeout)
		}
	}
	if err := world.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if world.Rank() == 1 {
		// Rank 0's abandoned MPI_Comm_dup completes with this one.
		c, err := Open()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
	if err := world.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSingleton: a process not started by mpirun is a group of one.
func TestSingleton(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in a child")
	}
	if _, err := loadLib(); err != nil {
		t.Skipf("%v", err)
	}
	c, err := Open()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Rank() != 0 || c.Size() != 1 || c.Name() != "mpi" {
		t.Fatalf("rank %d size %d name %q, want 0 1 mpi", c.Rank(), c.Size(), c.Name())
	}
	ctx := context.Background()
	buf := enc(tensor.Float32, []float64{1.5, -2})
	if err := c.AllReduce(ctx, buf, tensor.Float32, dist.Sum); err != nil || !bytes.Equal(buf, enc(tensor.Float32, []float64{1.5, -2})) {
		t.Errorf("AllReduce: %v %v", buf, err)
	}
	recv := make([]byte, 2)
	if err := c.AllGather(ctx, []byte{4, 5}, recv); err != nil || !bytes.Equal(recv, []byte{4, 5}) {
		t.Errorf("AllGather: %v %v", recv, err)
	}
	if err := dist.CheckSame(ctx, c, 7, "program"); err != nil {
		t.Error(err)
	}
	if v, err := Version(); err != nil || !strings.Contains(v, "Open MPI") {
		t.Errorf("Version: %q %v", v, err)
	}
}

func TestLoadErrors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("libmpi is loaded on linux only")
	}
	t.Setenv("LOOM_MPI_LIB", "/nonexistent/libmpi.so.40")
	_, err := loadLib()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/libmpi.so.40") || !strings.Contains(err.Error(), "$LOOM_MPI_LIB") {
		t.Errorf("missing library: %v", err)
	}
	// A library that is not Open MPI (the C library).
	t.Setenv("LOOM_MPI_LIB", "libc.so.6")
	_, err = loadLib()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not Open MPI") {
		t.Errorf("foreign library: %v", err)
	}
}

func TestParseTimeout(t *testing.T) {
	for s, want := range map[string]time.Duration{"30s": 30 * time.Second, "5m": 5 * time.Minute, "2.5": 2500 * time.Millisecond} {
		if d, err := dist.ParseTimeout(s); err != nil || d != want {
			t.Errorf("%q: %v %v, want %v", s, d, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1", "0s"} {
		if _, err := dist.ParseTimeout(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestFloat16Round(t *testing.T) {
	// Widening to float32 and rounding back is exact for every float16
	// and bfloat16 (float32 holds both).
	for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		b := make([]byte, 2<<16)
		for i := range 1 << 16 {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(i))
		}
		back := make([]byte, len(b))
		fromFloat32(back, toFloat32(b, dt), dt)
		for i := range 1 << 16 {
			got := binary.LittleEndian.Uint16(back[2*i:])
			f := toFloat32(b[2*i:2*i+2], dt)
			isNaN := math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(f))))
			if got != uint16(i) && !isNaN {
				t.Fatalf("%v %#04x came back as %#04x", dt, i, got)
			}
		}
	}
}
