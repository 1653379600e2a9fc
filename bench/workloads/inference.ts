// The inference workloads (see specs.ts): GPT-2 blocks, prefill and one decode step, and a
// ReLU perceptron. Their weights are constants of the program, as in a deployed model; with
// `weights: "parameters"` they are parameters instead (fed on every run), for comparison.
// GPT-2's matrices may also be stored narrower (`stored`, xlats only: bench/quant_decode_probe.ts):
// int8 with one f32 scale per output column, used as convert(W)·scale, or bf16, used as
// convert(W), the forms the weight-only GEMV kernels read as stored.

import {
  XlaBuilder, Literal, arrayShape, constantLiteral, constantR0, dot, dotGeneral, add, sub, mul, max, rsqrt, tanh,
  reshape, transpose, slice, dynamicUpdateSlice, iota, compare, select, broadcast, broadcastInDim, convertElementType, tuple,
  type Computation, type XlaOp,
} from "../../src/index.js";
import { f32Parameter, softmaxLastDim, sumOver } from "./kernels.js";
import { GPT2_BLOCK_WEIGHTS, firstWeight, gpt2Tokens, inputShapes, type Gpt2, type MlpInfer, type Workload } from "./specs.js";

export type WeightsAs = "constants" | "parameters";

/** How a model's weight matrices are stored: as they are (f32), int8 with a per-column scale, or bf16. */
export type WeightsStored = "f32" | "s8" | "bf16";

/**
 * A weight matrix W [rows, cols] as a constant stored `stored`, widened back to f32 in the
 * program: int8 q = round(W / s) with s[j] = max_i |W[i][j]| / 127, used as convert(q)·s; bf16
 * (Literal rounds to nearest even), used as convert(W).
 */
function narrowMatrix(b: XlaBuilder, dims: readonly number[], values: Float32Array, stored: "s8" | "bf16"): XlaOp {
  if (stored === "bf16") return convertElementType(constantLiteral(b, Literal.fromValues("bf16", dims, Array.from(values))), "f32");
  const [rows, cols] = dims as [number, number];
  const scale = new Float32Array(cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) scale[j] = Math.max(scale[j]!, Math.abs(values[i * cols + j]!) / 127);
  scale.forEach((s, j) => { if (s === 0) scale[j] = 1; });
  const q = Array.from(values, (v, e) => Math.round(v / scale[e % cols]!));
  const widened = convertElementType(constantLiteral(b, Literal.fromValues("s8", dims, q)), "f32");
  return mul(widened, broadcastInDim(constantLiteral(b, Literal.fromStorage(arrayShape("f32", [cols]), scale)), dims, [1]));
}

/**
 * The workload's inputs as ops of `b`: those before firstWeight(w) are parameters; the
 * weights are constants holding `values` (or parameters too, with `weightsAs` "parameters").
 */
function inputsOf(b: XlaBuilder, w: Workload, values: readonly Float32Array[] | undefined, weightsAs: WeightsAs, stored: WeightsStored = "f32"): XlaOp[] {
  const shapes = inputShapes(w);
  const first = weightsAs === "parameters" ? shapes.length : firstWeight(w);
  if (first < shapes.length && values === undefined) throw new Error(`${w.kind}: weights as constants need the input values`);
  return shapes.map((dims, i) => (i < first
    ? f32Parameter(b, i, dims, `in${i}`)
    : stored !== "f32" && dims.length === 2 ? narrowMatrix(b, dims, values![i]!, stored)
    : constantLiteral(b, Literal.fromStorage(arrayShape("f32", dims), values![i]!))));
}

/** LayerNorm along dimension 1 of [rows, cols]: (x - mean) / sqrt(var + 1e-5) · scale + offset. */
function layerNorm(x: XlaOp, scale: XlaOp, offset: XlaOp): XlaOp {
  const b = x.builder;
  const inv = constantR0(b, "f32", 1 / x.arrayShape.dimensions[1]!);
  const centered = sub(x, mul(sumOver(x, [1]), inv), [0]);
  const variance = mul(sumOver(mul(centered, centered), [1]), inv);
  const normed = mul(centered, rsqrt(add(variance, constantR0(b, "f32", 1e-5))), [0]);
  return add(mul(normed, scale, [1]), offset, [1]);
}

/** GELU, tanh approximation: x/2 · (1 + tanh(sqrt(2/π) · (x + 0.044715 x³))). */
function gelu(x: XlaOp): XlaOp {
  const c = (v: number): XlaOp => constantR0(x.builder, "f32", v);
  const inner = mul(add(x, mul(mul(mul(x, x), x), c(0.044715))), c(Math.sqrt(2 / Math.PI)));
  return mul(mul(x, c(0.5)), add(tanh(inner), c(1)));
}

/** `stored`: how the weight matrices are stored when they are constants (the other weights stay f32). */
export function buildGpt2(w: Gpt2, values?: readonly Float32Array[], weightsAs: WeightsAs = "constants", stored: WeightsStored = "f32"): Computation {
  const { model: D, heads: H, seq: S } = w;
  const T = gpt2Tokens(w), dh = D / H;
  const b = new XlaBuilder(`gpt2_${w.phase}`);
  const ins = inputsOf(b, w, values, weightsAs, stored);
  const first = firstWeight(w);
  const c = (v: number): XlaOp => constantR0(b, "f32", v);
  // Prefill: token i sees positions j <= i (scores[h, i, j]); decode's one token sees the whole cache.
  const causal = w.phase === "prefill"
    ? compare(iota(b, arrayShape("s32", [H, T, S]), 2), iota(b, arrayShape("s32", [H, T, S]), 1), "LE") : undefined;
  let x = ins[0]!;
  const caches: XlaOp[] = [];
  for (let blk = 0; blk < w.blocks; blk++) {
    const at = first + blk * GPT2_BLOCK_WEIGHTS.length;
    const [ln1s, ln1o, wqkv, bqkv, wo, bo, ln2s, ln2o, w1, b1, w2, b2] = ins.slice(at, at + GPT2_BLOCK_WEIGHTS.length) as
      [XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp];
    const qkv = add(dot(layerNorm(x, ln1s, ln1o), wqkv), bqkv, [1]);
    const part = (i: number): XlaOp => slice(qkv, [0, i * D], [T, (i + 1) * D], [1, 1]);
    // [T, D] as heads [H, T, dh], the caches' layout.
    const headsOf = (m: XlaOp): XlaOp => transpose(reshape(m, [T, H, dh]), [1, 0, 2]);
    // Decode writes this token's position into the preallocated cache: in place when the cache is donated.
    const zero = constantR0(b, "s32", 0);
    const withCache = (fresh: XlaOp, which: number): XlaOp => w.phase === "prefill"
      ? headsOf(fresh) : dynamicUpdateSlice(ins[1 + 2 * blk + which]!, headsOf(fresh), [zero, constantR0(b, "s32", S - T), zero]);
    const k = withCache(part(1), 0), v = withCache(part(2), 1);
    caches.push(k, v);
    // scores[h, i, j] = Σ_d q[h, i, d]·k[h, j, d] / sqrt(dh)
    const scores = mul(dotGeneral(headsOf(part(0)), k, {
      lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2],
    }), c(1 / Math.sqrt(dh)));
    const p = softmaxLastDim(causal === undefined ? scores : select(causal, scores, broadcast(c(-1e9), [H, T, S])));
    // context[h, i, d] = Σ_j p[h, i, j]·v[h, j, d], back to [T, D] with the heads side by side
    const context = dotGeneral(p, v, {
      lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1],
    });
    const h1 = add(x, add(dot(reshape(transpose(context, [1, 0, 2]), [T, D]), wo), bo, [1]));
    const u = gelu(add(dot(layerNorm(h1, ln2s, ln2o), w1), b1, [1]));
    x = add(h1, add(dot(u, w2), b2, [1]));
  }
  return b.build(tuple(b, [x, ...caches]));
}

export function buildMlpInfer(w: MlpInfer, values?: readonly Float32Array[], weightsAs: WeightsAs = "constants"): Computation {
  const b = new XlaBuilder("mlp_infer");
  const ins = inputsOf(b, w, values, weightsAs);
  let h = ins[0]!;
  const layers = w.sizes.length - 1;
  for (let i = 0; i < layers; i++) {
    const z = add(dot(h, ins[1 + 2 * i]!), ins[2 + 2 * i]!, [1]);
    h = i < layers - 1 ? max(z, constantR0(b, "f32", 0)) : z;
  }
  return b.build(h);
}
