#!/usr/bin/python3
"""numpy.fft and torch.fft side of loom's FFT benchmarks (bench/cmd/fftpeers).

Usage: fft_bench.py TARGET_MS ROUNDS [FILTER]
Prints one JSON line per (engine, workload): {"engine", "name", "ns"}: the
median over ROUNDS timings of a calibrated number of calls, in ns per call.
One thread (torch.set_num_threads(1); numpy.fft's pocketfft is single
threaded). Inputs are bench.Uniform (bench/data.go) bit for bit.

numpy 1.x computes numpy.fft in float64 whatever the input (a complex64
array gives a complex128 result); torch keeps complex64.
"""
import json
import sys
import time

import numpy as np
import torch

MASK = (1 << 64) - 1


def mix(seed, n):
    i = np.arange(1, n + 1, dtype=np.uint64)
    z = np.uint64((seed * 0xD1B54A32D192ED03) & MASK) + i * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, n):
    u = (mix(seed, n) >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return (2.0 * u - 1.0).astype(np.float32)


def cinput(shape):
    n = int(np.prod(shape))
    v = uniform(1, 2 * n)
    return (v[0::2] + 1j * v[1::2]).astype(np.complex64).reshape(shape)


def rinput(shape):
    return uniform(2, int(np.prod(shape))).reshape(shape)


def workloads():
    c1 = cinput((1 << 20,))
    c2 = cinput((1000,))
    c3 = cinput((4096, 4096))
    r4 = rinput((1024, 1024))
    t1, t2, t3, t4 = (torch.from_numpy(a) for a in (c1, c2, c3, r4))
    return [
        ("fft/c64/1d-1048576", lambda: np.fft.fft(c1), lambda: torch.fft.fft(t1)),
        ("fft/c64/1d-1000", lambda: np.fft.fft(c2), lambda: torch.fft.fft(t2)),
        ("fft/c64/2d-4096x4096", lambda: np.fft.fft2(c3), lambda: torch.fft.fft2(t3)),
        ("rfft2/f32/1024x1024", lambda: np.fft.rfft2(r4), lambda: torch.fft.rfft2(t4)),
    ]


def timeit(f, target_ns, rounds):
    f()
    iters = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            f()
        if time.perf_counter_ns() - t0 > target_ns or iters > 1 << 24:
            break
        iters *= 2
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            f()
        ts.append((time.perf_counter_ns() - t0) / iters)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    target_ns = float(sys.argv[1]) * 1e6 if len(sys.argv) > 1 else 3e8
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    flt = sys.argv[3] if len(sys.argv) > 3 else ""
    torch.set_num_threads(1)
    for name, fn, ft in workloads():
        if flt and flt not in name:
            continue
        for engine, f in (("numpy", fn), ("torch", ft)):
            print(json.dumps({"engine": engine, "name": name, "ns": timeit(f, target_ns, rounds)}), flush=True)
    print(json.dumps({"engine": "versions", "numpy": np.__version__, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
