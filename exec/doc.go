// Package exec compiles graphs into Programs and runs them on backends.
//
// A Backend is a device (the CPU, a GPU) with kernels for the ops; backends
// register under a name when their package is imported and are opened with
// Open("cpu"), Open("cuda:0") or Default(). Compile runs the pipeline of
// passes (Passes lists them; Constraints says why they are in that order)
// that turns the requested outputs and variable updates into a Plan: the
// optimised graph, the ordered steps, and where every value lives (feeds,
// variables, outputs, or an arena whose buffers are reused by liveness).
// The backend lowers the Plan into an Executable, and the Program binds it
// to the variables' device storage.
//
// Program.Run is safe for concurrent use: runs that update variables are
// serialised, runs that only read them are not. Every run error (a missing
// or mistyped feed, a cancelled context, a device failure) is returned and
// leaves the Program usable. Set LOOM_DUMP=<pass>[,<pass>] to print the
// graph after those passes, and LOOM_VERIFY=1 to run graph.Verify after
// every pass.
package exec
