# loom: see README.md. Two commands set everything up on a fresh machine:
#   make demo   runs the main example
#   make test   runs the tests (what CI runs, through .ci/run)

GO      ?= go
PKGS    := ./...
STATICCHECK_VERSION := v0.8.2

.PHONY: demo test test-short race check vet fmt staticcheck bench fuzz clean check-trace bench-peers

demo:
	$(GO) run ./examples/mnist

# The full test suite: every package with graph.Verify after every compile
# pass, the kernels again with the pure-Go fallbacks (build tag noasm), the
# race detector on the packages with concurrency, and the fuzz targets'
# seed corpora (they run as ordinary tests).
test:
	$(GO) vet $(PKGS)
	LOOM_VERIFY=1 $(GO) test -count=1 $(PKGS)
	$(GO) test -count=1 -tags noasm ./internal/... ./exec/...
	$(GO) test -count=1 -race ./exec/... ./profile/

test-short:
	$(GO) test -short $(PKGS)

race:
	$(GO) test -race ./exec/... ./profile/

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
