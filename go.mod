module github.com/loomgraph/loom

go 1.25.0

require (
	github.com/ebitengine/purego v0.11.3
	golang.org/x/sys v0.41.0
	gonum.org/v1/gonum v0.17.0
)

require google.golang.org/protobuf v1.36.12
