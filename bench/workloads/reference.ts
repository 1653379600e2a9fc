// Independent plain-JavaScript answers (in f64) for every workload, and the checks that
// every runner's result must pass before its time counts. Big matmuls and convolutions are
// checked at a few hundred sampled output elements (a full f64 reference would take
// longer than the benchmark); everything else is checked whole.

import {
  GPT2_BLOCK_WEIGHTS, elementCount, firstWeight, gpt2Tokens, outputShapes, type Gpt2, type MlpInfer, type Workload,
} from "./specs.js";

type Vec = Float64Array;

/** Why `outputs` is wrong for `inputs`, or undefined when it passes. */
export function checkResult(w: Workload, inputs: readonly Float32Array[], outputs: readonly Float32Array[]): string | undefined {
  const shapes = outputShapes(w);
  if (outputs.length !== shapes.length) return `expected ${shapes.length} outputs, got ${outputs.length}`;
  for (let i = 0; i < shapes.length; i++) {
    if (outputs[i]!.length !== elementCount(shapes[i]!)) {
      return `output ${i}: expected ${elementCount(shapes[i]!)} elements, got ${outputs[i]!.length}`;
    }
  }
  switch (w.kind) {
    case "matmul": return checkSampled(outputs[0]!, w.m * w.n, (idx) => {
      const i = Math.floor(idx / w.n), j = idx % w.n;
      const [a, b] = inputs as [Float32Array, Float32Array];
      let s = 0, abs = 0;
      for (let p = 0; p < w.k; p++) { const t = a[i * w.k + p]! * b[p * w.n + j]!; s += t; abs += Math.abs(t); }
      return [s, abs];
    });
    case "conv": return checkSampled(outputs[0]!, elementCount(shapes[0]!), (idx) => convAt(w, inputs, idx));
    case "fused": {
      const [a, b, c] = inputs as [Float32Array, Float32Array, Float32Array];
      return compare(outputs[0]!, (i) => Math.tanh(a[i]! * b[i]! + c[i]!), () => 2e-5);
    }
    case "add": {
      const [a, b] = inputs as [Float32Array, Float32Array];
      return compare(outputs[0]!, (i) => a[i]! + b[i]!, (r) => 1e-6 * Math.abs(r));
    }
    case "sum": {
      let s = 0, abs = 0;
      for (const x of inputs[0]!) { s += x; abs += Math.abs(x); }
      return compare(outputs[0]!, () => s, () => 1e-6 * abs + 1e-3);
    }
    case "softmax": {
      const ref = softmaxRows(Float64Array.from(inputs[0]!), w.rows, w.cols);
      return compare(outputs[0]!, (i) => ref[i]!, (r) => 1e-6 + 1e-3 * Math.abs(r));
    }
    case "mlp": return checkMlp(w, inputs, outputs);
    case "transformer": return compareScaled(outputs, [transformerReference(w, inputs)]);
    case "gpt2": return compareScaled(outputs, gpt2Reference(w, inputs), ["y", ...Array.from({ length: w.blocks }, (_, i) => [`k${i}`, `v${i}`]).flat()]);
    case "mlp-infer": return compareScaled(outputs, [mlpInferReference(w, inputs)]);
  }
}

/** Each output against its reference, within 1e-3 of the reference's largest magnitude. */
function compareScaled(outputs: readonly Float32Array[], refs: readonly Vec[], names: readonly string[] = []): string | undefined {
  for (let o = 0; o < refs.length; o++) {
    const ref = refs[o]!, scale = maxAbs(ref);
    const bad = compare(outputs[o]!, (i) => ref[i]!, () => 1e-3 * scale, names[o] !== undefined ? `${names[o]} ` : "");
    if (bad !== undefined) return bad;
  }
  return undefined;
}

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

/** The first element outside its tolerance, described. */
function compare(out: Float32Array, ref: (i: number) => number, tol: (ref: number) => number, label = ""): string | undefined {
  for (let i = 0; i < out.length; i++) {
    const r = ref(i);
    const d = Math.abs(out[i]! - r);
    if (!(d <= tol(r))) return `${label}element ${i}: got ${out[i]}, expected ${r} (|diff| ${d.toExponential(2)} > ${tol(r).toExponential(2)})`;
  }
  return undefined;
}

/** Checks 400 spread-out elements against [value, sum of |terms|] from `at`. */
function checkSampled(out: Float32Array, count: number, at: (idx: number) => [number, number]): string | undefined {
  const samples = Math.min(count, 400);
  for (let s = 0; s < samples; s++) {
    const idx = Math.floor(((s * 2654435761) % 4294967296) / 4294967296 * count);
    const [r, abs] = at(idx);
    const d = Math.abs(out[idx]! - r);
    const tol = 2e-4 * abs + 1e-5;
    if (!(d <= tol)) return `element ${idx}: got ${out[idx]}, expected ${r} (|diff| ${d.toExponential(2)} > ${tol.toExponential(2)})`;
  }
  return undefined;
}

function convAt(w: Extract<Workload, { kind: "conv" }>, inputs: readonly Float32Array[], idx: number): [number, number] {
  const [x, k] = inputs as [Float32Array, Float32Array];
  const { height: H, width: W, inChannels: C, outChannels: O, kernel: K } = w;
  const o = idx % O, xw = Math.floor(idx / O) % W, yh = Math.floor(idx / (O * W)) % H, n = Math.floor(idx / (O * W * H));
  const pad = Math.floor((K - 1) / 2);
  let s = 0, abs = 0;
  for (let ky = 0; ky < K; ky++) {
    const iy = yh + ky - pad;
    if (iy < 0 || iy >= H) continue;
    for (let kx = 0; kx < K; kx++) {
      const ix = xw + kx - pad;
      if (ix < 0 || ix >= W) continue;
      for (let c = 0; c < C; c++) {
        const t = x[((n * H + iy) * W + ix) * C + c]! * k[((ky * K + kx) * C + c) * O + o]!;
        s += t; abs += Math.abs(t);
      }
    }
  }
  return [s, abs];
}

/** a[m,k]·b[k,n] (transposeA: a is [k,m]; transposeB: b is [n,k]). */
export function matmul(a: ArrayLike<number>, b: ArrayLike<number>, m: number, k: number, n: number, transposeA = false, transposeB = false): Vec {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const av = transposeA ? a[p * m + i]! : a[i * k + p]!;
      if (av === 0) continue;
      const row = i * n;
      if (transposeB) for (let j = 0; j < n; j++) c[row + j]! += av * b[j * k + p]!;
      else { const bo = p * n; for (let j = 0; j < n; j++) c[row + j]! += av * b[bo + j]!; }
    }
  }
  return c;
}

function softmaxRows(x: Vec, rows: number, cols: number): Vec {
  const y = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    let m = -Infinity;
    for (let c = 0; c < cols; c++) m = Math.max(m, x[r * cols + c]!);
    let s = 0;
    for (let c = 0; c < cols; c++) { const e = Math.exp(x[r * cols + c]! - m); y[r * cols + c] = e; s += e; }
    for (let c = 0; c < cols; c++) y[r * cols + c]! /= s;
  }
  return y;
}

/** Loss and parameter updates of one SGD step, in f64: [loss, Δw1, Δb1, Δw2, Δb2]. */
export function mlpReference(w: Extract<Workload, { kind: "mlp" }>, inputs: readonly Float32Array[]): Vec[] {
  const { batch: B, inputs: I, hidden: Hd, classes: C, learningRate: lr } = w;
  const [x, y, w1, b1, w2, b2] = inputs as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
  const z = matmul(x, w1, B, I, Hd);
  for (let i = 0; i < B * Hd; i++) z[i]! += b1[i % Hd]!;
  const h = z.map((v) => Math.max(v, 0));
  const logits = matmul(h, w2, B, Hd, C);
  for (let i = 0; i < B * C; i++) logits[i]! += b2[i % C]!;
  const p = softmaxRows(logits, B, C);
  let loss = 0;
  for (let i = 0; i < B * C; i++) if (y[i]! !== 0) loss -= y[i]! * Math.log(p[i]!);
  loss /= B;
  const dLogits = p.map((v, i) => (v - y[i]!) / B);
  const dw2 = matmul(h, dLogits, Hd, B, C, true);
  const db2 = new Float64Array(C);
  for (let i = 0; i < B * C; i++) db2[i % C]! += dLogits[i]!;
  const dh = matmul(dLogits, w2, B, C, Hd, false, true);
  const dz = dh.map((v, i) => (z[i]! > 0 ? v : 0));
  const dw1 = matmul(x, dz, I, B, Hd, true);
  const db1 = new Float64Array(Hd);
  for (let i = 0; i < B * Hd; i++) db1[i % Hd]! += dz[i]!;
  const step = (g: Vec): Vec => g.map((v) => -lr * v);
  return [Float64Array.of(loss), step(dw1), step(db1), step(dw2), step(db2)];
}

function checkMlp(w: Extract<Workload, { kind: "mlp" }>, inputs: readonly Float32Array[], outputs: readonly Float32Array[]): string | undefined {
  const ref = mlpReference(w, inputs);
  const names = ["loss", "w1", "b1", "w2", "b2"];
  for (let o = 0; o < ref.length; o++) {
    const r = ref[o]!;
    const old = o === 0 ? undefined : inputs[o + 1]!;
    const got = o === 0 ? outputs[0]! : outputs[o]!.map((v, i) => v - old![i]!);
    const scale = maxAbs(r);
    const bad = compare(Float32Array.from(got), (i) => r[i]!, () => 1e-3 * scale + 1e-7, `${names[o]}${o === 0 ? "" : " update"} `);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

function layerNorm(x: Vec, rows: number, cols: number, scale?: Float32Array, offset?: Float32Array): Vec {
  const y = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    for (let c = 0; c < cols; c++) mean += x[r * cols + c]!;
    mean /= cols;
    let v = 0;
    for (let c = 0; c < cols; c++) v += (x[r * cols + c]! - mean) ** 2;
    const inv = 1 / Math.sqrt(v / cols + 1e-5);
    for (let c = 0; c < cols; c++) y[r * cols + c] = (x[r * cols + c]! - mean) * inv * (scale?.[c] ?? 1) + (offset?.[c] ?? 0);
  }
  return y;
}

export function transformerReference(w: Extract<Workload, { kind: "transformer" }>, inputs: readonly Float32Array[]): Vec {
  const { seq: S, model: D, heads: H, ff: F } = w;
  const dh = D / H;
  const [x, wq, wk, wv, wo, w1, b1, w2, b2] = inputs as Float32Array[] as [Float32Array, ...Float32Array[]];
  const ln1 = layerNorm(Float64Array.from(x), S, D);
  const q = matmul(ln1, wq!, S, D, D), k = matmul(ln1, wk!, S, D, D), v = matmul(ln1, wv!, S, D, D);
  const ctx = new Float64Array(S * D);
  const scores = new Float64Array(S);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < S; i++) {
      let m = -Infinity;
      for (let j = 0; j < S; j++) {
        let s = 0;
        for (let d = 0; d < dh; d++) s += q[i * D + h * dh + d]! * k[j * D + h * dh + d]!;
        scores[j] = s / Math.sqrt(dh);
        m = Math.max(m, scores[j]!);
      }
      let sum = 0;
      for (let j = 0; j < S; j++) { scores[j] = Math.exp(scores[j]! - m); sum += scores[j]!; }
      for (let j = 0; j < S; j++) {
        const p = scores[j]! / sum;
        for (let d = 0; d < dh; d++) ctx[i * D + h * dh + d]! += p * v[j * D + h * dh + d]!;
      }
    }
  }
  const attn = matmul(ctx, wo!, S, D, D);
  const h1 = attn.map((a, i) => a + x[i]!);
  const ln2 = layerNorm(h1, S, D);
  const u = matmul(ln2, w1!, S, D, F);
  for (let i = 0; i < S * F; i++) u[i] = Math.max(u[i]! + b1![i % F]!, 0);
  const out = matmul(u, w2!, S, F, D);
  for (let i = 0; i < S * D; i++) out[i]! += b2![i % D]! + h1[i]!;
  return out;
}

/** a[rows, cols] + bias[cols], in place. */
function addBias(a: Vec, bias: Float32Array): Vec {
  for (let i = 0; i < a.length; i++) a[i]! += bias[i % bias.length]!;
  return a;
}

/** y and each block's k, v, in f64, with the attention written as loops over heads and positions. */
export function gpt2Reference(w: Gpt2, inputs: readonly Float32Array[]): Vec[] {
  const { model: D, heads: H, seq: S, ff: F } = w;
  const T = gpt2Tokens(w), dh = D / H, past = S - T;
  let x: Vec = Float64Array.from(inputs[0]!);
  const out: Vec[] = [];
  for (let blk = 0; blk < w.blocks; blk++) {
    const at = firstWeight(w) + blk * GPT2_BLOCK_WEIGHTS.length;
    const [ln1s, ln1o, wqkv, bqkv, wo, bo, ln2s, ln2o, w1, b1, w2, b2] = inputs.slice(at, at + GPT2_BLOCK_WEIGHTS.length) as Float32Array[];
    const qkv = addBias(matmul(layerNorm(x, T, D, ln1s, ln1o), wqkv!, T, D, 3 * D), bqkv!);
    // k and v over all S positions, heads-major ([H, S, dh]: position j of head h at (h·S + j)·dh):
    // the cache's past positions (decode) then this step's T.
    const k = new Float64Array(S * D), v = new Float64Array(S * D);
    if (past > 0) { k.set(inputs[1 + 2 * blk]!); v.set(inputs[2 + 2 * blk]!); }
    const cacheAt = (h: number, j: number): number => (h * S + j) * dh;
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) {
        for (let d = 0; d < dh; d++) {
          k[cacheAt(h, past + t) + d] = qkv[t * 3 * D + D + h * dh + d]!;
          v[cacheAt(h, past + t) + d] = qkv[t * 3 * D + 2 * D + h * dh + d]!;
        }
      }
    }
    out.push(k, v);
    const ctx = new Float64Array(T * D);
    const p = new Float64Array(S);
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const visible = past + t + 1; // causal: position past+t sees positions 0..past+t
        let m = -Infinity;
        for (let j = 0; j < visible; j++) {
          let s = 0;
          for (let d = 0; d < dh; d++) s += qkv[t * 3 * D + h * dh + d]! * k[cacheAt(h, j) + d]!;
          p[j] = s / Math.sqrt(dh);
          m = Math.max(m, p[j]!);
        }
        let sum = 0;
        for (let j = 0; j < visible; j++) { p[j] = Math.exp(p[j]! - m); sum += p[j]!; }
        for (let j = 0; j < visible; j++) {
          for (let d = 0; d < dh; d++) ctx[t * D + h * dh + d]! += (p[j]! / sum) * v[cacheAt(h, j) + d]!;
        }
      }
    }
    const h1 = addBias(matmul(ctx, wo!, T, D, D), bo!).map((a, i) => a + x[i]!);
    const u = addBias(matmul(layerNorm(h1, T, D, ln2s, ln2o), w1!, T, D, F), b1!)
      .map((z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z * z * z))));
    x = addBias(matmul(u, w2!, T, F, D), b2!).map((a, i) => a + h1[i]!);
  }
  return [x, ...out];
}

export function mlpInferReference(w: MlpInfer, inputs: readonly Float32Array[]): Vec {
  let h: Vec = Float64Array.from(inputs[0]!);
  const layers = w.sizes.length - 1;
  for (let i = 0; i < layers; i++) {
    const z = addBias(matmul(h, inputs[1 + 2 * i]!, w.batch, w.sizes[i]!, w.sizes[i + 1]!), inputs[2 + 2 * i]!);
    h = i < layers - 1 ? z.map((v) => Math.max(v, 0)) : z;
  }
  return h;
}
