// SPDX-License-Identifier: MIT
// ONNX Runtime (npm onnxruntime-node) as the numerics reference:
//   node ort_ref.js MODEL.onnx OUT_DIR NAME=IN.npy ...   (ORT_THREADS=N, ORT_REPEAT=N)
// Reads float32, float16, bool and integer inputs; writes every output as OUT_DIR/<name>.npy ('/' in names becomes '_').
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

// numpy's element types read, as ORT's type and its typed array
const NPY_READ = { '<f4': ['float32', Float32Array], '<f2': ['float16', Uint16Array],
  '|b1': ['bool', Uint8Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
  '<i2': ['int16', Int16Array], '|i1': ['int8', Int8Array], '<u2': ['uint16', Uint16Array],
  '|u1': ['uint8', Uint8Array] };

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hoff = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hoff, hoff + hlen);
  const descr = (header.match(/'descr':\s*'([^']*)'/) || [])[1];
  if (!NPY_READ[descr] || /'fortran_order':\s*True/.test(header))
    throw new Error(`${file}: only C-order ${Object.keys(NPY_READ).join(', ')} arrays`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const bytes = buf.buffer.slice(buf.byteOffset + hoff + hlen, buf.byteOffset + buf.length);
  const [type, Array] = NPY_READ[descr];
  return new ort.Tensor(type, new Array(bytes), shape);
}

// numpy's name for each ORT element type written
const NPY_DESCR = { float16: '<f2', float32: '<f4', float64: '<f8', int8: '|i1', uint8: '|u1', int16: '<i2', uint16: '<u2',
  int32: '<i4', uint32: '<u4', int64: '<i8', uint64: '<u8', bool: '|b1' };

function writeNpy(file, t) {
  const descr = NPY_DESCR[t.type];
  if (!descr) throw new Error(`${file}: no .npy type for ORT's ${t.type}`);
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${t.dims.join(', ')}${t.dims.length === 1 ? ',' : ''}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad === 64 ? 0 : pad) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(pre, 0);
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
}

(async () => {
  const [model, outDir, ...ins] = process.argv.slice(2);
  const feeds = {};
  for (const a of ins) {
    const i = a.indexOf('=');
    feeds[a.slice(0, i)] = readNpy(a.slice(i + 1));
  }
  const opts = { intraOpNumThreads: Number(process.env.ORT_THREADS || 0), graphOptimizationLevel: 'all' };
  const sess = await ort.InferenceSession.create(model, opts);
  let out = await sess.run(feeds);
  // ORT_REPEAT=N: time N more runs (the benchmark's baseline) and print the median.
  const repeat = Number(process.env.ORT_REPEAT || 0);
  if (repeat > 0) {
    const t = [];
    for (let i = 0; i < repeat; i++) {
      const t0 = process.hrtime.bigint();
      out = await sess.run(feeds);
      t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    t.sort((a, b) => a - b);
    console.log(`ort: median ${t[Math.floor(repeat / 2)].toFixed(3)} ms over ${repeat} runs`);
  }
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, t] of Object.entries(out)) writeNpy(path.join(outDir, name.replace(/[\/\\]/g, '_') + '.npy'), t);
})().catch((e) => { console.error(`ort_ref: ${e.message}`); process.exit(1); });
