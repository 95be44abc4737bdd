// check.mjs loads Chrome trace-event JSON files with Chrome DevTools' own
// trace parser (the npm package @paulirish/trace_engine, as used by
// Lighthouse) and reports whether it ingested them cleanly.
//
//	node check.mjs trace.json...   (or ./run.sh, which installs it first)
//
// The parser does not reject bad traces: it logs some problems with
// console.error and silently leaves slices that overlap their parent out
// of a thread's call tree. So a file fails when parsing throws, when it
// logs an error or a warning, or when a slice that partially overlaps
// another on its thread (by more than half a nanosecond) is missing from
// that thread's tree. The exit status is 1 if any file failed.
//
// This is an ingestion check, complementary to loom's strict validator
// (profile.Validate), which encodes Perfetto's rules. Note that DevTools
// binds flow events only to slices with the same ts, pid, tid and cat, so
// it finds no arrows in loom's traces, whose flow events have their own
// cat; Perfetto and chrome://tracing bind them to the enclosing slice.

import fs from 'node:fs';

// analyze-trace.mjs installs the global DOMRect polyfill the parser needs
// outside a browser when it is imported.
import '@paulirish/trace_engine/analyze-trace.mjs';
import * as Trace from '@paulirish/trace_engine';

/**
 * Parses one trace file and returns a one-line summary, or throws with the
 * problems found.
 * @param {string} file
 * @returns {Promise<string>}
 */
async function check(file) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const events = Array.isArray(json) ? json : json?.traceEvents;
  if (!Array.isArray(events)) {
    throw new Error('neither an array of events nor an object with a traceEvents array');
  }
  const slicesIn = events.filter(e => e?.ph === 'X' || e?.ph === 'B').length;

  const logged = [];
  const saved = {error: console.error, warn: console.warn};
  console.error = (...args) => logged.push('console.error: ' + args.map(String).join(' '));
  console.warn = (...args) => logged.push('console.warn: ' + args.map(String).join(' '));
  let data;
  try {
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events);
    data = model.parsedTrace()?.data;
  } finally {
    console.error = saved.error;
    console.warn = saved.warn;
  }
  const problems = [...logged];
  if (!data) {
    problems.push('the parser produced no data');
    throw new Error(problems.join('\n  '));
  }

  // Every slice on a thread should be a node of that thread's tree;
  // treify leaves out, without a word, a slice that overlaps its parent.
  // It computes ends as ts + dur in float64 microseconds, so a slice that
  // ends with its parent, or starts where the previous one ends, can seem
  // to overlap it by a rounding error: only an overlap of more than
  // EPSILON counts.
  const {processes, entryToNode} = data.Renderer;
  let threads = 0;
  let slices = 0;
  let rounding = 0;
  for (const [pid, proc] of processes) {
    for (const [tid, thread] of proc.threads) {
      threads++;
      slices += thread.entries.length;
      const dropped = thread.entries.filter(e => !entryToNode.has(e));
      const overlapping = dropped.filter(e => thread.entries.some(o => overlaps(e, o)));
      rounding += dropped.length - overlapping.length;
      for (const e of overlapping.slice(0, 5)) {
        problems.push(`pid ${pid} tid ${tid}: slice "${e.name}" at ${e.ts} µs (dur ${e.dur}) ` +
            'partially overlaps another and was left out of the tree');
      }
      if (overlapping.length > 5) {
        problems.push(`pid ${pid} tid ${tid}: and ${overlapping.length - 5} more slices left out`);
      }
    }
  }
  if (problems.length) {
    throw new Error(problems.join('\n  '));
  }
  const note = rounding ? `; ${rounding} touching slices left out by float rounding` : '';
  return `${events.length} events, ${data.Meta.processNames.size} named processes, ` +
      `${threads} threads with ${slices} slices (${slicesIn} X/B events in the file)${note}`;
}

// EPSILON is the overlap, in microseconds, below which two slices are
// taken to touch: half a nanosecond, the resolution of loom's traces.
const EPSILON = 0.0005;

/**
 * Reports whether slice a starts inside slice b and ends after it, each
 * by more than EPSILON. (Slices that start together nest, the longer
 * being the parent.)
 * @param {{ts: number, dur?: number}} a
 * @param {{ts: number, dur?: number}} b
 */
function overlaps(a, b) {
  const aEnd = a.ts + (a.dur ?? 0);
  const bEnd = b.ts + (b.dur ?? 0);
  return b.ts < a.ts - EPSILON && a.ts < bEnd - EPSILON && aEnd > bEnd + EPSILON;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node check.mjs trace.json...');
  process.exit(2);
}
let failed = 0;
for (const file of files) {
  try {
    console.log(`ok   ${file}: ${await check(file)}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${file}:\n  ${err instanceof Error ? err.message : err}`);
  }
}
process.exit(failed ? 1 : 0);
