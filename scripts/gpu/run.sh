#!/bin/sh
# Runs loom's CUDA checks on a GPU machine that has no Go toolchain:
# `make gpu-test` puts this script, the static test binary, the MNIST
# example and its data into .gpu/; copy that folder there and run
#   sh .gpu/run.sh [OUT_DIR]
# Output goes to stdout and, per check, to OUT_DIR (default .gpu/out).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
mkdir -p "$out"
echo "== libraries"
ldconfig -p | grep -E 'libcuda.so.1|libnvrtc|libcublas|libnccl' | tee "$out/libs.txt"
nvidia-smi -L 2>/dev/null | tee -a "$out/libs.txt"
# cuBLAS/NVRTC outside the loader cache (CUDA toolkit or pip wheels).
for lib in nvrtc cublas; do
	if ! ldconfig -p | grep -q "lib$lib.so.1[23]"; then
		f=$(find /usr/local/cuda*/lib64 /usr/local/lib/python3*/dist-packages/nvidia /usr/lib/python3*/dist-packages/nvidia -name "lib$lib.so.1[23]*" 2>/dev/null | head -1)
		if [ -n "$f" ]; then
			var=$(echo "LOOM_LIB$lib" | tr a-z A-Z)
			export "$var=$f"
			# its own dependencies (libcublasLt, libnvrtc-builtins) sit beside it
			export LD_LIBRARY_PATH="$(dirname "$f")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			echo "$var=$f"
		fi
	fi
done
# NCCL (libnccl.so.2) for TestNCCLOneRank: the loader cache, the CUDA
# directories, or the nvidia-nccl pip wheel; without it the test skips and
# says why.
if ! ldconfig -p | grep -q 'libnccl.so.2'; then
	f=$(find /usr/local/cuda*/lib64 /usr/local/lib/python3*/dist-packages/nvidia /usr/lib/python3*/dist-packages/nvidia -name 'libnccl.so.2*' 2>/dev/null | head -1)
	if [ -n "$f" ]; then
		export LOOM_LIBNCCL="$f"
		echo "LOOM_LIBNCCL=$f"
	else
		echo "no libnccl.so.2 found: TestNCCLOneRank will skip"
	fi
fi
export LOOM_CUDA_TEST=gpu
export LOOM_CUDA_CACHE="$out/kernel-cache"
cd "$here"
echo "== tests"
./cuda.test -test.v -test.count=1 2>&1 | tee "$out/test.txt" | grep -E '^(=== RUN|--- FAIL|--- SKIP|FAIL|ok|PASS)|cuda_test|mode' | grep -v '=== RUN' | tail -80
echo "== NCCL, one rank on one GPU"
./cuda.test -test.run 'NCCL' -test.v -test.count=1 2>&1 | tee "$out/nccl.txt" | grep -E '^(--- |    nccl_test|ok|FAIL|PASS)' | tail -20
echo "== benchmarks"
./cuda.test -test.run '^$' -test.bench . -test.benchtime 2s -test.count 3 2>&1 | tee "$out/bench.txt"
echo "== MNIST on cuda"
LOOM_MNIST_DIR="$here/mnist-data" ./mnist -device cuda -out "$out" 2>&1 | tail -5 | tee "$out/mnist.txt"
if command -v python3 >/dev/null; then
	echo "== PyTorch eager MLP step"
	python3 torch_mlp.py 2>&1 | tee "$out/torch.txt"
fi
