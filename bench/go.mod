module github.com/loomgraph/loom/bench

go 1.25.0

require (
	github.com/ebitengine/purego v0.11.3
	github.com/loomgraph/loom v0.0.0-00010101000000-000000000000
	github.com/loomgraph/loom/interop/gorgoniaconv v0.0.0-00010101000000-000000000000
	gonum.org/v1/gonum v0.17.0
	gorgonia.org/gorgonia v0.9.18
	gorgonia.org/tensor v0.9.23
)

require (
	github.com/apache/arrow/go/arrow v0.0.0-20211112161151-bc219186db40 // indirect
	github.com/awalterschulze/gographviz v2.0.3+incompatible // indirect
	github.com/chewxy/hm v1.0.0 // indirect
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.2 // indirect
	github.com/google/flatbuffers v2.0.6+incompatible // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/leesper/go_rng v0.0.0-20190531154944-a612b043e353 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/xtgo/set v1.0.0 // indirect
	go4.org/unsafe/assume-no-moving-gc v0.0.0-20231121144256-b99613f794b6 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/xerrors v0.0.0-20200804184101-5ec99f83aff1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gorgonia.org/cu v0.9.4 // indirect
	gorgonia.org/dawson v1.2.0 // indirect
	gorgonia.org/vecf32 v0.9.0 // indirect
	gorgonia.org/vecf64 v0.9.0 // indirect
)

// The main module, from this working tree: bench is a nested module so that
// the main module never depends on a peer.
replace github.com/loomgraph/loom => ../

// The Gorgonia conversions (a nested module too), for bench/migrate.
replace github.com/loomgraph/loom/interop/gorgoniaconv => ../interop/gorgoniaconv

// go4.org/unsafe/assume-no-moving-gc is required at its latest version
// (go get go4.org/unsafe/assume-no-moving-gc@latest): the 2020/2021 versions
// that gorgonia.org/tensor and gorgonia.org/gorgonia ask for panic at
// start-up on current Go.
