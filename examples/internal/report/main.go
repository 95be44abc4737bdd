package report

import (
	"flag"
	"fmt"
	"io"
	"os"
)

// Main is an example command's main with the examples' conventions:
// parse reads the command line (flag.ErrHelp exits 0, any other error
// exits 2), then run gets stdout and whether it is a terminal (where the
// progress bar draws in place); an error from run exits 1. Messages go to
// stderr prefixed with the command's name.
func Main[C any](name string, parse func(args []string, stderr io.Writer) (C, error), run func(stdout io.Writer, c C, terminal bool) error) {
	c, err := parse(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	}
	fi, err := os.Stdout.Stat()
	terminal := err == nil && fi.Mode()&os.ModeCharDevice != 0
	if err := run(os.Stdout, c, terminal); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
