// Command mpibench times loom's all-reduce through dist/mpi against the
// same MPI_Allreduce called from a C loop (bench/mpi/allreduce.c, which
// this command compiles with mpicc) over the same Open MPI library, on
// 2 ranks of this machine under mpirun: in-place sums of float32 buffers
// of 1, 4, 16 and 64 MB.
//
// Each round runs the C program as its own job, then a job of this
// command's Go ranks, which time, per size, pairs of loops: the C loop
// (the same allreduce.c compiled as a shared library, called through
// purego) then loom's, in the same processes on the same cores. The
// table shows medians and loom's share of the C loop's bandwidth (the
// median of the pairs' ratios) and of the C process's (the ratio of the
// medians). On a shared 2-core machine a job's speed can change by 2x
// from one mpirun to the next (process placement, neighbours), which
// the pairs inside one job do not see.
//
//	go run ./cmd/mpibench                    # from bench/
//	go run ./cmd/mpibench -rounds 7 -sizes 4k,1M,64M
//	make bench-mpi                           # from the repository root
//
// Bandwidth is the buffer's bytes over the time of one call (what
// nccl-tests calls algorithm bandwidth; with 2 ranks the bus bandwidth
// is the same).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/dist/mpi"
	"github.com/loomgraph/loom/tensor"
)

// rankEnv marks this command started by itself under mpirun.
const rankEnv = "LOOM_MPIBENCH_RANK"

func main() {
	rounds := flag.Int("rounds", 5, "rounds (each runs C then Go once); medians are reported")
	np := flag.Int("np", 2, "ranks")
	sizes := flag.String("sizes", "1M,4M,16M,64M", "buffer sizes in bytes, with a suffix k or M (2^10, 2^20)")
	pairs := flag.Int("pairs", 3, "timed C-loop/loom-loop pairs per size in each Go job")
	clib := flag.String("clib", "", "(for the ranks) the C loop's shared library")
	iters := flag.Int("iters", 1024, "timed calls at 1 MB (ITERS * 1 MB / size, 5 to 100000, at other sizes)")
	flag.Parse()
	sz, err := parseSizes(*sizes)
	if err != nil {
		fail(err)
	}
	if os.Getenv(rankEnv) != "" {
		if err := rankMain(*iters, *pairs, sz, *clib); err != nil {
			fail(err)
		}
		return
	}
	if err := drive(*rounds, *np, *iters, *pairs, *sizes, sz); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mpibench:", err)
	os.Exit(1)
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		unit := 1
		switch {
		case strings.HasSuffix(f, "k"):
			unit, f = 1<<10, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "M"):
			unit, f = 1<<20, strings.TrimSuffix(f, "M")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n*unit%4 != 0 {
			return nil, fmt.Errorf("-sizes: %q is not a positive number of bytes (a multiple of 4, with k or M)", f)
		}
		out = append(out, n*unit)
	}
	return out, nil
}

// itersFor is the number of timed calls at size bytes, as allreduce.c
// computes it.
func itersFor(base, bytes int) int {
	return int(min(100000, max(5, float64(base)*(1<<20)/float64(bytes))))
}

// rankMain is one Go rank: per size, pairs of timed loops, the C loop
// of allreduce.c (clib, called through purego) then loom's.
func rankMain(base, pairs int, sizes []int, clib string) error {
	c, err := mpi.Open()
	if err != nil {
		return err
	}
	defer c.Close()
	var cLoop func(buf uintptr, n int64, iters int32) float64
	if clib != "" {
		// After mpi.Open, which loaded libmpi with RTLD_GLOBAL.
		h, err := purego.Dlopen(clib, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			return err
		}
		purego.RegisterLibFunc(&cLoop, h, "loom_allreduce_loop")
	}
	ctx := context.Background()
	for _, bytes := range sizes {
		buf := make([]byte, bytes)
		for i := 0; i < bytes; i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(1))
		}
		for range 3 {
			if err := c.AllReduce(ctx, buf, tensor.Float32, dist.Sum); err != nil {
				return err
			}
		}
		n := itersFor(base, bytes)
		for range pairs {
			if cLoop != nil {
				t := cLoop(uintptr(unsafe.Pointer(unsafe.SliceData(buf))), int64(bytes/4), int32(n))
				runtime.KeepAlive(buf)
				if c.Rank() == 0 {
					fmt.Printf("cin %d %d %.9f\n", bytes, n, t)
				}
			}
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			t0 := time.Now()
			for range n {
				if err := c.AllReduce(ctx, buf, tensor.Float32, dist.Sum); err != nil {
					return err
				}
			}
			t := time.Since(t0).Seconds() / float64(n)
			if c.Rank() == 0 {
				fmt.Printf("go %d %d %.9f\n", bytes, n, t)
			}
		}
	}
	return nil
}

// drive compiles the C program, runs the rounds and prints the table.
func drive(rounds, np, base, pairs int, sizeFlag string, sizes []int) error {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return fmt.Errorf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
	}
	mpicc, err := exec.LookPath("mpicc")
	if err != nil {
		return fmt.Errorf("mpicc not found (apt-get install libopenmpi-dev)")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mpibench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src, err := findSource()
	if err != nil {
		return err
	}
	cbin := filepath.Join(dir, "allreduce")
	if out, err := exec.Command(mpicc, "-O2", "-o", cbin, src).CombinedOutput(); err != nil {
		return fmt.Errorf("mpicc %s: %v\n%s", src, err, out)
	}
	clib := filepath.Join(dir, "liballreduce.so")
	if out, err := exec.Command(mpicc, "-O2", "-shared", "-fPIC", "-DLOOM_BENCH_LIB", "-o", clib, src).CombinedOutput(); err != nil {
		return fmt.Errorf("mpicc -shared %s: %v\n%s", src, err, out)
	}
	version, _ := mpi.Version()
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe"}
	if os.Getuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	var sz []string
	for _, b := range sizes {
		sz = append(sz, strconv.Itoa(b))
	}
	times := map[string]map[int][]float64{"c": {}, "cin": {}, "go": {}}
	run := func(prog []string, env []string) error {
		cmd := exec.Command(mpirun, append(slices.Clone(args), prog...)...)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s %s: %v\n%s%s", mpirun, strings.Join(cmd.Args[1:], " "), err, out, stderr.Bytes())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || times[f[0]] == nil {
				continue
			}
			b, _ := strconv.Atoi(f[1])
			t, _ := strconv.ParseFloat(f[3], 64)
			times[f[0]][b] = append(times[f[0]][b], t)
		}
		return nil
	}
	for r := range rounds {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", r+1, rounds)
		if err := run(append([]string{cbin, strconv.Itoa(base)}, sz...), nil); err != nil {
			return err
		}
		if err := run([]string{self, "-iters", strconv.Itoa(base), "-sizes", sizeFlag, "-pairs", strconv.Itoa(pairs), "-clib", clib}, []string{rankEnv + "=1"}); err != nil {
			return err
		}
	}
	fmt.Printf("all-reduce (in-place float32 sum), %d ranks under mpirun; %s; GOMAXPROCS %d\n", np, firstLine(version), runtime.GOMAXPROCS(0))
	fmt.Printf("%d rounds: a C process (allreduce.c), then a Go job timing %d pairs per size of the C loop (the same code, a library) and loom's loop in one process\n", rounds, pairs)
	fmt.Printf("%8s  %10s  %10s  %10s  %10s  %9s  %13s  %13s\n", "size", "C proc ms", "C loop ms", "loom ms", "Cloop GB/s", "loom GB/s", "loom/C loop", "loom/C proc")
	for _, b := range sizes {
		tp, tc, tg := median(times["c"][b]), median(times["cin"][b]), median(times["go"][b])
		// The median of each pair's ratio: the C loop and loom's ran one
		// after the other in the same processes, on the same cores.
		var ratios []float64
		for i := range min(len(times["cin"][b]), len(times["go"][b])) {
			ratios = append(ratios, times["cin"][b][i]/times["go"][b][i])
		}
		fmt.Printf("%8s  %10.3f  %10.3f  %10.3f  %10.2f  %9.2f  %12.1f%%  %12.1f%%\n", human(b), tp*1e3, tc*1e3, tg*1e3, float64(b)/tc/1e9, float64(b)/tg/1e9, 100*median(ratios), 100*tp/tg)
	}
	return nil
}

// findSource finds bench/mpi/allreduce.c from bench/ or the repository root.
func findSource() (string, error) {
	for _, p := range []string{"mpi/allreduce.c", "bench/mpi/allreduce.c"} {
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("bench/mpi/allreduce.c not found: run from bench/ or the repository root")
}

func human(b int) string {
	switch {
	case b%(1<<20) == 0:
		return fmt.Sprintf("%d MB", b>>20)
	case b%(1<<10) == 0:
		return fmt.Sprintf("%d kB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, ",\n"); i >= 0 {
		return s[:i]
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
