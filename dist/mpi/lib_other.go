//go:build !linux

package mpi

import (
	"fmt"
	"runtime"
)

func loadLib() (*lib, error) {
	return nil, fmt.Errorf("%w: dist/mpi loads libmpi on linux only (this is %s)", ErrUnavailable, runtime.GOOS)
}

func call(fn uintptr, args ...uintptr) int32 { panic("mpi: no libmpi on " + runtime.GOOS) }
