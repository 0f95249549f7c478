// The profiling exercise, off the page's thread: fetch a CSV file, parse it into a Float64Array, run a fixed
// kernel, and time the three phases apart, `repeat` times each. Messages: progress, done, error.
"use strict";

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const SEP_COMMA = 44, SEP_LF = 10, SEP_CR = 13, DOT = 46, MINUS = 45, ZERO = 48, NINE = 57;
let lastPost = 0;

function progress(phase, repeat, of, fraction) {
  const now = performance.now();
  if (fraction < 1 && now - lastPost < 100) return;
  lastPost = now;
  postMessage({ type: "progress", phase, repeat, of, fraction });
}

// Phase 1: the file's bytes into memory (the browser's HTTP cache may serve the repeats).
async function readAll(url, repeat, of) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the server answered ${response.status} for the data file`);
  const total = Number(response.headers.get("Content-Length")) || 0;
  const reader = response.body.getReader();
  const chunks = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
    if (total) progress("read", repeat, of, got / total);
  }
  const bytes = new Uint8Array(got);
  let at = 0;
  for (const chunk of chunks) { bytes.set(chunk, at); at += chunk.length; }
  return bytes;
}

// Phase 2: text into numbers, digit by digit (no strings): mantissa ÷ 10^decimals, exactly as parseFloat.
function parse(bytes, repeat, of) {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === SEP_COMMA || bytes[i] === SEP_LF) count++;
  if (bytes.length && bytes[bytes.length - 1] !== SEP_LF) count++;
  const out = new Float64Array(count);
  const step = Math.max(1, Math.floor(bytes.length / 20));
  let k = 0, mant = 0, decimals = 0, inFraction = false, negative = false, digits = false;
  for (let start = 0; start < bytes.length; start += step) {
    const end = Math.min(start + step, bytes.length);
    for (let i = start; i < end; i++) {
      const c = bytes[i];
      if (c >= ZERO && c <= NINE) {
        mant = mant * 10 + (c - ZERO);
        if (inFraction) decimals++;
        digits = true;
      } else if (c === DOT) {
        inFraction = true;
      } else if (c === MINUS) {
        negative = true;
      } else if (c === SEP_COMMA || c === SEP_LF || c === SEP_CR) {
        if (digits) { const v = mant / POW10[decimals]; out[k++] = negative ? -v : v; }
        mant = 0; decimals = 0; inFraction = false; negative = false; digits = false;
      }
    }
    progress("parse", repeat, of, end / bytes.length);
  }
  if (digits) { const v = mant / POW10[decimals]; out[k++] = negative ? -v : v; }
  return k === out.length ? out : out.subarray(0, k);
}

// Phase 3, the fixed arithmetic (the same as app/profiling.py): scale to [0.1, 1) and sum a cubic.
function kernel(values) {
  let acc = 0;
  for (let i = 0; i < values.length; i++) {
    const y = values[i] * 0.001;
    acc += ((y - 1.5) * y + 0.5) * y;
  }
  return acc;
}

// Timers in a worker are coarsened; a phase never reports less than a microsecond.
const seconds = (ms) => Math.max(ms / 1000, 1e-6);

self.onmessage = async (event) => {
  const { url, repeat } = event.data;
  const times = { read: [], parse: [], arithmetic: [] };
  try {
    let values = null, result = 0, size = 0;
    for (let r = 1; r <= repeat; r++) {
      const t0 = performance.now();
      const bytes = await readAll(url, r, repeat);
      const t1 = performance.now();
      values = parse(bytes, r, repeat);
      const t2 = performance.now();
      progress("arithmetic", r, repeat, 0);
      result = kernel(values);
      const t3 = performance.now();
      times.read.push(seconds(t1 - t0));
      times.parse.push(seconds(t2 - t1));
      times.arithmetic.push(seconds(t3 - t2));
      size = bytes.length;
      progress("arithmetic", r, repeat, 1);
    }
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[i];
    postMessage({
      type: "done",
      result: {
        source: "browser", size_bytes: size, values: values.length, repeat,
        phases: { read: { seconds: times.read }, parse: { seconds: times.parse }, arithmetic: { seconds: times.arithmetic } },
        checksum: sum, kernel_result: result,
      },
    });
  } catch (error) {
    postMessage({ type: "error", message: String(error && error.message || error) });
  }
};
