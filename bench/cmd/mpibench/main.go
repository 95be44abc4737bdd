// Command mpibench times loom's all-reduce through dist/mpi against the
// same MPI_Allreduce called from a C loop (bench/mpi/allreduce.c, which
// this command compiles with mpicc) over the same Open MPI library, on
// 2 ranks of this machine under mpirun: in-place sums of float32 buffers
// of 1, 4, 16 and 64 MB. Each round runs the C program, then this
// command as the Go ranks, each timing every size once; the table shows
// the medians over rounds and loom's share of C's bandwidth (the ratio
// of the medians, and the median of each round's ratio).
//
//	go run ./cmd/mpibench                    # from bench/
//	go run ./cmd/mpibench -rounds 7 -np 2 -sizes 1,4,16,64
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

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/dist/mpi"
	"github.com/loomgraph/loom/tensor"
)

// rankEnv marks this command started by itself under mpirun.
const rankEnv = "LOOM_MPIBENCH_RANK"

func main() {
	rounds := flag.Int("rounds", 5, "rounds (each runs C then Go once); medians are reported")
	np := flag.Int("np", 2, "ranks")
	sizes := flag.String("sizes", "1,4,16,64", "buffer sizes in MB")
	iters := flag.Int("iters", 1024, "timed calls at 1 MB (fewer for larger buffers: ITERS/MB, at least 5)")
	flag.Parse()
	mbs, err := parseSizes(*sizes)
	if err != nil {
		fail(err)
	}
	if os.Getenv(rankEnv) != "" {
		if err := rankMain(*iters, mbs); err != nil {
			fail(err)
		}
		return
	}
	if err := drive(*rounds, *np, *iters, mbs); err != nil {
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
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-sizes: %q is not a positive number of MB", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func itersFor(base, mb int) int { return max(5, base/mb) }

// rankMain is one Go rank: the same protocol as allreduce.c.
func rankMain(base int, mbs []int) error {
	c, err := mpi.Open()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	for _, mb := range mbs {
		bytes := mb << 20
		buf := make([]byte, bytes)
		for i := 0; i < bytes; i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(1))
		}
		for range 3 {
			if err := c.AllReduce(ctx, buf, tensor.Float32, dist.Sum); err != nil {
				return err
			}
		}
		if err := c.Barrier(ctx); err != nil {
			return err
		}
		n := itersFor(base, mb)
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
	return nil
}

// drive compiles the C program, runs the rounds and prints the table.
func drive(rounds, np, base int, mbs []int) error {
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
	version, _ := mpi.Version()
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe"}
	if os.Getuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	var sz []string
	for _, mb := range mbs {
		sz = append(sz, strconv.Itoa(mb))
	}
	times := map[string]map[int][]float64{"c": {}, "go": {}}
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
		if err := run([]string{self, "-iters", strconv.Itoa(base), "-sizes", strings.Join(sz, ",")}, []string{rankEnv + "=1"}); err != nil {
			return err
		}
	}
	fmt.Printf("all-reduce (in-place float32 sum), %d ranks under mpirun, %d rounds, medians; %s, GOMAXPROCS %d\n", np, rounds, firstLine(version), runtime.GOMAXPROCS(0))
	fmt.Printf("%8s  %12s  %12s  %10s  %10s  %8s  %14s\n", "size", "C ms/call", "loom ms/call", "C GB/s", "loom GB/s", "loom/C", "rounds' loom/C")
	for _, mb := range mbs {
		b := mb << 20
		tc, tg := median(times["c"][b]), median(times["go"][b])
		// Each round's ratio, C and loom run one after the other: less
		// exposed to the machine's load drifting between rounds.
		var ratios []float64
		for i := range min(len(times["c"][b]), len(times["go"][b])) {
			ratios = append(ratios, times["c"][b][i]/times["go"][b][i])
		}
		fmt.Printf("%6d MB  %12.3f  %12.3f  %10.2f  %10.2f  %7.1f%%  %13.1f%%\n", mb, tc*1e3, tg*1e3, float64(b)/tc/1e9, float64(b)/tg/1e9, 100*tc/tg, 100*median(ratios))
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
