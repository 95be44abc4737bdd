// Command cufake builds the CUDA emulator's libraries (package cufake)
// into a directory and prints the environment that makes loom use them,
// so that any loom program can run its "cuda" device on a machine without
// a GPU (slowly: kernels run on the host):
//
//	eval "$(go run ./exec/cuda/internal/cufake/cmd/cufake /tmp/loom-cufake)"
//	go -C examples run ./mnist -device cuda -limit 6400 -epochs 1
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/loomgraph/loom/exec/cuda/internal/cufake"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cufake DIR   (prints export lines for the shell)")
		os.Exit(2)
	}
	dir, err := filepath.Abs(os.Args[1])
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cufake:", err)
		os.Exit(1)
	}
	libs, err := cufake.Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cufake:", err)
		os.Exit(1)
	}
	for _, kv := range libs.Env() {
		fmt.Printf("export %s\n", kv)
	}
}
