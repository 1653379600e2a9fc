// A pre-LayerNorm transformer encoder block, forward only (see specs.ts for the exact
// definition): multi-head self-attention with batched dot_generals, then a ReLU MLP.

import {
  XlaBuilder, constantR0, dot, dotGeneral, add, sub, mul, max, rsqrt, reshape, transpose,
  type Computation, type XlaOp,
} from "../../src/index.js";
import { f32Parameter, softmaxLastDim, sumOver } from "./kernels.js";
import type { Workload } from "./specs.js";

/** (x - mean) / sqrt(var + 1e-5) along dimension 1 of a [rows, cols] array. */
function layerNorm(x: XlaOp): XlaOp {
  const b = x.builder;
  const cols = x.arrayShape.dimensions[1]!;
  const inv = constantR0(b, "f32", 1 / cols);
  const centered = sub(x, mul(sumOver(x, [1]), inv), [0]);
  const variance = mul(sumOver(mul(centered, centered), [1]), inv);
  return mul(centered, rsqrt(add(variance, constantR0(b, "f32", 1e-5))), [0]);
}

export function buildEncoderBlock(w: Extract<Workload, { kind: "transformer" }>): Computation {
  const { seq: S, model: D, heads: H, ff: F } = w;
  const dh = D / H;
  const b = new XlaBuilder("encoder_block");
  const x = f32Parameter(b, 0, [S, D], "x");
  const [wq, wk, wv, wo] = ["wq", "wk", "wv", "wo"].map((name, i) => f32Parameter(b, i + 1, [D, D], name)) as
    [XlaOp, XlaOp, XlaOp, XlaOp];
  const w1 = f32Parameter(b, 5, [D, F], "w1");
  const b1 = f32Parameter(b, 6, [F], "b1");
  const w2 = f32Parameter(b, 7, [F, D], "w2");
  const b2 = f32Parameter(b, 8, [D], "b2");

  const n1 = layerNorm(x);
  const heads = (wm: XlaOp): XlaOp => reshape(dot(n1, wm), [S, H, dh]);
  const [q, k, v] = [heads(wq), heads(wk), heads(wv)];
  // scores[h, i, j] = Σ_d q[i, h, d]·k[j, h, d] / sqrt(dh)
  const scores = mul(dotGeneral(q, k, {
    lhsBatchDimensions: [1], rhsBatchDimensions: [1], lhsContractingDimensions: [2], rhsContractingDimensions: [2],
  }), constantR0(b, "f32", 1 / Math.sqrt(dh)));
  const p = softmaxLastDim(scores);
  // context[h, i, d] = Σ_j p[h, i, j]·v[j, h, d], back to [S, D] with the heads side by side
  const context = dotGeneral(p, v, {
    lhsBatchDimensions: [0], rhsBatchDimensions: [1], lhsContractingDimensions: [2], rhsContractingDimensions: [0],
  });
  const merged = reshape(transpose(context, [1, 0, 2]), [S, D]);
  const h1 = add(x, dot(merged, wo));

  const u = max(add(dot(layerNorm(h1), w1), b1, [1]), constantR0(b, "f32", 0));
  return b.build(add(add(dot(u, w2), b2, [1]), h1));
}
