// Package profile records what a loom program did (kernels, copies, runs,
// compile passes, memory) and writes it as a Chrome trace-event JSON file
// for a timeline viewer, and as a plain-text summary of where the time
// went. It depends on the standard library only.
//
// # Recording
//
// A Recorder collects events. Put it in the context of Program.Run and the
// executor records into it:
//
//	rec := profile.New()
//	outs, err := prog.Run(profile.NewContext(ctx, rec), feeds)
//	rec.WriteTrace(f)        // Chrome trace-event JSON
//	rec.WriteSummary(os.Stdout)
//
// or let Function call a function a few times to warm up and then several
// times recording, like phiml's profile_function:
//
//	rec, err := profile.Function(ctx, 2, 10, func(ctx context.Context) error {
//		_, err := prog.Run(ctx, feeds)
//		return err
//	})
//
// The executor's side is the recording API: Process and Thread name the
// tracks (one process per device, "cpu" or "cuda:0", and one for the
// compile pipeline; one thread per run, worker goroutine or CUDA stream),
// Span records a slice (a kernel, with a Kernel describing its op, fused
// ops, graph nodes, operand types, bytes moved, FLOPs and the user's call
// site; a copy; a whole run; a compile pass), Counter a sample of a
// counter track such as the memory in use, Instant a mark, and Flow an
// arrow from one thread to another. Timestamps come from Recorder.Now.
// Many goroutines may record into one Recorder at once.
//
// # Viewing a trace
//
// Write the trace to a file, say trace.json, and open it in either viewer:
//
//   - Perfetto: go to https://ui.perfetto.dev and choose "Open trace file"
//     in the sidebar (or drop the file on the page). The file stays on
//     your machine: the UI parses it in the browser.
//   - chrome://tracing in Chrome or Chromium: press "Load" and pick the
//     file. (Some Linux distributions' Chromium builds remove this page;
//     use Perfetto there.)
//
// What one sees: one track group per process, in the order of Process's
// sortIndex — one per device ("cpu", "cuda:0") and one, "compile", for the
// compile pipeline — and inside it one track per thread: a run, a worker
// goroutine, a CUDA stream. Each run is a slice, with its kernels as
// slices nested under it on the thread that ran them. Selecting a kernel
// shows its args: op, fused ops, graph nodes, input and output types
// ("f32[64,784]"), bytes read and written, FLOPs, call site and device.
// The compile passes are slices on the compile process's track. A counter
// track (a memory counter, say) draws its value over time in its process,
// and flow arrows link work handed from one thread to another, such as a
// host thread launching a kernel on a GPU stream.
//
// Timestamps are microseconds with fractions, as the format requires;
// "displayTimeUnit": "ms" only sets how chrome://tracing labels them.
//
// # Checking a trace
//
// Validate checks a trace against the rules Perfetto's importer relies on
// (slices nest on each thread, every X event has a dur, counters are
// numeric, flows are paired and bound to slices, every process and thread
// is named). Every trace WriteTrace writes from a recording that follows
// the rules of Span and Flow passes it. scripts/check-trace in the
// repository also loads traces with Chrome DevTools' own trace parser.
//
// # Summary
//
// WriteSummary prints two tables, per op kind and per kernel instance,
// with the count, total and mean time, the share of all kernel time, and
// the achieved GFLOP/s and GB/s. When several runs were recorded, counts
// and totals are per run: per recorded call for a Recorder from Function,
// else per span of cat "run" (the executor records one per Run).
package profile
