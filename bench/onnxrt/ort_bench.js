// ort_bench.js: onnxruntime's CPU execution provider behind a line
// protocol, for loom's ONNX benchmark (bench/cmd/onnxrt, which starts it
// with node and writes one JSON request a line on stdin; one JSON answer a
// line comes back on stdout). Iterations are timed here
// (process.hrtime.bigint), so the pipe costs nothing per iteration.
//
//   {"cmd":"hello"}                      -> {"ok":true,"version":"1.30.0"}
//   {"cmd":"load","model":PATH,"threads":T,
//    "inputs":[{"name":N,"type":"float32","dims":[..],"file":RAW}]}
//                                        -> {"ok":true}
//   {"cmd":"time","iters":K}             -> {"ok":true,"ns":TOTAL}
//   {"cmd":"output","file":PATH}         -> {"ok":true,"dims":[..]} (the first output, raw little-endian)
//
// The session uses intraOpNumThreads T, one inter-op thread, sequential
// execution and every graph optimisation; inputs are the raw little-endian
// files the Go side wrote, so both engines see the same values.
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

const arrays = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

let session = null;
let feeds = null;

function tensorFromFile(inp) {
  const A = arrays[inp.type];
  if (!A) throw new Error(`input ${inp.name}: type ${inp.type} not supported by the harness`);
  const b = fs.readFileSync(inp.file);
  const data = new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  return new ort.Tensor(inp.type, data, inp.dims);
}

async function handle(req) {
  switch (req.cmd) {
    case 'hello':
      return { ok: true, version: require('onnxruntime-node/package.json').version };
    case 'load': {
      session = await ort.InferenceSession.create(req.model, {
        executionProviders: ['cpu'],
        intraOpNumThreads: req.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
      feeds = {};
      for (const inp of req.inputs) feeds[inp.name] = tensorFromFile(inp);
      await session.run(feeds); // warm
      return { ok: true };
    }
    case 'time': {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < req.iters; i++) await session.run(feeds);
      return { ok: true, ns: Number(process.hrtime.bigint() - t0) };
    }
    case 'output': {
      const out = await session.run(feeds);
      const t = out[session.outputNames[0]];
      fs.writeFileSync(req.file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      return { ok: true, dims: t.dims, type: t.type };
    }
    default:
      throw new Error(`unknown command ${req.cmd}`);
  }
}

const rl = readline.createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on('line', (line) => {
  chain = chain.then(async () => {
    let ans;
    try {
      ans = await handle(JSON.parse(line));
    } catch (e) {
      ans = { ok: false, error: String(e && e.message || e) };
    }
    process.stdout.write(JSON.stringify(ans) + '\n');
  });
});
