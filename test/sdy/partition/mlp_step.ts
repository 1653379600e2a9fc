// One SGD training step of a two-layer MLP, written by hand in StableHLO with its
// gradients (for the sharded-vs-unsharded tests and bench/sharded.ts):
//
//   h = x·W1 + b1, a = tanh(h), o = a·W2 + b2, loss = Σ(o − y)² / batch
//   dO = 2(o − y) / batch, dW2 = aᵀ·dO, db2 = Σ_batch dO, dA = dO·W2ᵀ,
//   dH = dA ⊙ (1 − a²), dW1 = xᵀ·dH, db1 = Σ_batch dH
//   W ← W − lr·dW for each parameter; returns (loss, W1, b1, W2, b2).
//
// With a mesh, the batch is split along "data" (data parallel) and the hidden layer
// along "model" (model parallel: W1's columns, b1, W2's rows); "model" may be absent.

import { Literal } from "../../../src/index.js";

export interface MlpSizes {
  readonly batch: number;
  readonly input: number;
  readonly hidden: number;
  readonly output: number;
}

/** The mesh the step is sharded on (undefined: no mesh, no shardings). */
export interface MlpMesh {
  readonly data: number;
  readonly model?: number;
}

export function mlpTrainingStep(n: MlpSizes, mesh?: MlpMesh, learningRate = 0.05): string {
  const { batch: B, input: I, hidden: H, output: O } = n;
  const model = mesh?.model !== undefined && mesh.model > 1;
  const sharded = (dims: string[]): string => (mesh === undefined ? "" : ` {sdy.sharding = #sdy.sharding<@mesh, [${dims.join(", ")}]>}`);
  const D = '{"data"}';
  const M = model ? '{"model"}' : "{}";
  const t = (dims: number[]): string => `tensor<${dims.length === 0 ? "" : `${dims.join("x")}x`}f32>`;
  const meshLine = mesh === undefined ? "" : `sdy.mesh @mesh = <["data"=${mesh.data}${model ? `, "model"=${mesh.model}` : ""}]>\n`;
  return `${meshLine}func.func @main(%x: ${t([B, I])}${sharded([D, "{}"])}, %y: ${t([B, O])}${sharded([D, "{}"])},
    %w1: ${t([I, H])}${sharded(["{}", M])}, %b1: ${t([H])}${sharded([M])},
    %w2: ${t([H, O])}${sharded([M, "{}"])}, %b2: ${t([O])}${sharded(["{}"])})
    -> (${t([])}${sharded([])}, ${t([I, H])}${sharded(["{}", M])}, ${t([H])}${sharded([M])}, ${t([H, O])}${sharded([M, "{}"])}, ${t([O])}${sharded(["{}"])}) {
  %zero = stablehlo.constant dense<0.0> : ${t([])}
  %lr = stablehlo.constant dense<${learningRate}> : ${t([])}
  %scale = stablehlo.constant dense<${2 / B}> : ${t([])}
  %inv = stablehlo.constant dense<${1 / B}> : ${t([])}
  %one = stablehlo.constant dense<1.0> : ${t([B, H])}
  %xw = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (${t([B, I])}, ${t([I, H])}) -> ${t([B, H])}
  %b1b = stablehlo.broadcast_in_dim %b1, dims = [1] : (${t([H])}) -> ${t([B, H])}
  %h = stablehlo.add %xw, %b1b : ${t([B, H])}
  %a = stablehlo.tanh %h : ${t([B, H])}
  %aw = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (${t([B, H])}, ${t([H, O])}) -> ${t([B, O])}
  %b2b = stablehlo.broadcast_in_dim %b2, dims = [1] : (${t([O])}) -> ${t([B, O])}
  %o = stablehlo.add %aw, %b2b : ${t([B, O])}
  %diff = stablehlo.subtract %o, %y : ${t([B, O])}
  %sq = stablehlo.multiply %diff, %diff : ${t([B, O])}
  %sum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0, 1] : (${t([B, O])}, ${t([])}) -> ${t([])}
  %loss = stablehlo.multiply %sum, %inv : ${t([])}
  %scaleb = stablehlo.broadcast_in_dim %scale, dims = [] : (${t([])}) -> ${t([B, O])}
  %do = stablehlo.multiply %diff, %scaleb : ${t([B, O])}
  %dw2 = stablehlo.dot_general %a, %do, contracting_dims = [0] x [0] : (${t([B, H])}, ${t([B, O])}) -> ${t([H, O])}
  %db2 = stablehlo.reduce(%do init: %zero) applies stablehlo.add across dimensions = [0] : (${t([B, O])}, ${t([])}) -> ${t([O])}
  %da = stablehlo.dot_general %do, %w2, contracting_dims = [1] x [1] : (${t([B, O])}, ${t([H, O])}) -> ${t([B, H])}
  %a2 = stablehlo.multiply %a, %a : ${t([B, H])}
  %ga = stablehlo.subtract %one, %a2 : ${t([B, H])}
  %dh = stablehlo.multiply %da, %ga : ${t([B, H])}
  %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] : (${t([B, I])}, ${t([B, H])}) -> ${t([I, H])}
  %db1 = stablehlo.reduce(%dh init: %zero) applies stablehlo.add across dimensions = [0] : (${t([B, H])}, ${t([])}) -> ${t([H])}
${update("w1", "dw1", [I, H])}${update("b1", "db1", [H])}${update("w2", "dw2", [H, O])}${update("b2", "db2", [O])}  return %loss, %w1n, %b1n, %w2n, %b2n : ${t([])}, ${t([I, H])}, ${t([H])}, ${t([H, O])}, ${t([O])}
}`;

  function update(w: string, g: string, dims: number[]): string {
    return `  %${w}lr = stablehlo.broadcast_in_dim %lr, dims = [] : (${t([])}) -> ${t(dims)}
  %${w}s = stablehlo.multiply %${g}, %${w}lr : ${t(dims)}
  %${w}n = stablehlo.subtract %${w}, %${w}s : ${t(dims)}
`;
  }
}

/** Deterministic arguments of the step: (x, y, W1, b1, W2, b2), small values. */
export function mlpArguments(n: MlpSizes): Literal[] {
  const values = (count: number, seed: number, scale: number): number[] =>
    Array.from({ length: count }, (_, i) => ((((i + 1) * 7919 + seed * 104729) % 97) / 97 - 0.5) * scale);
  return [
    Literal.fromValues("f32", [n.batch, n.input], values(n.batch * n.input, 1, 2)),
    Literal.fromValues("f32", [n.batch, n.output], values(n.batch * n.output, 2, 2)),
    Literal.fromValues("f32", [n.input, n.hidden], values(n.input * n.hidden, 3, 1)),
    Literal.fromValues("f32", [n.hidden], values(n.hidden, 4, 0.2)),
    Literal.fromValues("f32", [n.hidden, n.output], values(n.hidden * n.output, 5, 1)),
    Literal.fromValues("f32", [n.output], values(n.output, 6, 0.2)),
  ];
}
