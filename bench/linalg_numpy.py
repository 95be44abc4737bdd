"""The NumPy twin of bench/linalg.go (issue 16): times numpy.linalg.cholesky
or numpy.linalg.solve on the same n x n float64 matrix (LinalgMatrix's
closed form), single-threaded (cmd/linalg sets OPENBLAS_NUM_THREADS=1).

usage: linalg_numpy.py OP N REPS
prints one JSON line: {"op", "n", "seconds" (mean of REPS calls), "checksum"}
"""
import json
import os
import sys
import time

import numpy as np


def matrix(n):
    i = np.arange(n, dtype=np.float64)[:, None]
    j = np.arange(n, dtype=np.float64)[None, :]
    ij = (np.arange(n)[:, None] * np.arange(n)[None, :]) % 7
    m = np.sin(0.37 * i + 1.3 * j + 0.1 * ij)
    a = m @ m.T / n + np.eye(n)
    a = (a + a.T) / 2
    b = np.cos(0.5 * np.arange(n, dtype=np.float64))
    return a, b


def main():
    op, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    a, b = matrix(n)
    f = {"cholesky": lambda: np.linalg.cholesky(a), "solve": lambda: np.linalg.solve(a, b)}[op]
    y = f()  # warm up
    t = time.perf_counter()
    for _ in range(reps):
        y = f()
    dt = (time.perf_counter() - t) / reps
    print(json.dumps({"op": op, "n": n, "seconds": dt, "checksum": float(y.sum()),
                      "threads": os.environ.get("OPENBLAS_NUM_THREADS", "")}))


if __name__ == "__main__":
    main()
