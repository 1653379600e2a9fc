// Optimizers against their update formulas done by hand, and examples/train_mlp.ts and
// examples/train_transformer.ts: their losses fall.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, optimizers, grad, jit, type FrontendArray } from "../../src/index.js";
import { train } from "../../examples/train_mlp.js";
import { train as trainTransformer } from "../../examples/train_transformer.js";

type A = FrontendArray;

test("sgd: -lr·g; with momentum the velocity accumulates", () => {
  const params = { w: np.array([1, 2], { dtype: "float32" }) };
  const grads = { w: np.array([0.5, -1], { dtype: "float32" }) };
  const plain = optimizers.sgd(0.1);
  const [u] = plain.update(grads, plain.init(params));
  assert.deepEqual((optimizers.applyUpdates(params, u) as { w: A }).w.tolist(), [Math.fround(1 - 0.05), Math.fround(2 + 0.1)]);
  const heavy = optimizers.sgd(1, { momentum: 0.5 });
  const [u1, s1] = heavy.update(grads, heavy.init(params));
  const [u2] = heavy.update(grads, s1);
  assert.deepEqual((u1 as { w: A }).w.tolist(), [-0.5, 1]);
  assert.deepEqual((u2 as { w: A }).w.tolist(), [-0.75, 1.5]);
});

test("adam: the first step is -lr·g/(|g| + eps) (bias-corrected moments); it minimizes a quadratic under jit", () => {
  const opt = optimizers.adam(0.1);
  const g = np.array([2, -0.5], { dtype: "float32" });
  const [u] = opt.update(g, opt.init(g));
  ((u as A).tolist() as number[]).forEach((v, i) => {
    const gi = [2, -0.5][i]!;
    assert.ok(Math.abs(Number(v) - (-0.1 * gi) / (Math.abs(gi) + 1e-8)) < 1e-6);
  });
  const f = (x: A): A => np.sum(np.square(np.subtract(x, 3)));
  const step = jit((x: A, s: optimizers.AdamState) => {
    const [updates, next] = opt.update(grad(f)(x), s);
    return [optimizers.applyUpdates(x, updates), next];
  });
  let x: A = np.zeros([2]);
  let s = opt.init(x);
  for (let i = 0; i < 300; i++) [x, s] = step(x, s) as unknown as [A, optimizers.AdamState];
  (x.tolist() as number[]).forEach((v) => assert.ok(Math.abs(v - 3) < 0.05, `${v}`));
});

test("examples/train_mlp.ts: the loss falls", () => {
  const losses = train(30);
  assert.ok(losses[29]! < losses[0]! / 4, `loss ${losses[0]} -> ${losses[29]}`);
});

test("examples/train_transformer.ts: the language model's loss falls from about ln(vocabulary)", () => {
  const losses = trainTransformer(25);
  assert.ok(losses[0]! > 3 && losses[0]! < 4.5, `initial loss ${losses[0]}`);
  assert.ok(losses[24]! < losses[0]! / 3, `loss ${losses[0]} -> ${losses[24]}`);
});

test("adamw adds the decoupled weight decay -lr·wd·param to adam's step; momentum is sgd's heavy ball", () => {
  const params = { w: np.array([2, -4], { dtype: "float64" }) };
  const grads = { w: np.array([0.5, 0.5], { dtype: "float64" }) };
  const adam = optimizers.adam(0.1);
  const adamw = optimizers.adamw(0.1, { weightDecay: 0.01 });
  const [plain] = adam.update(grads, adam.init(params));
  const [decayed] = adamw.update(grads, adamw.init(params), params);
  const diff = np.subtract((decayed as { w: A }).w, (plain as { w: A }).w).tolist() as number[];
  // -0.1 · 0.01 · [2, -4].
  assert.ok(Math.abs(diff[0]! + 0.002) < 1e-12 && Math.abs(diff[1]! - 0.004) < 1e-12, `${diff}`);
  assert.throws(() => adamw.update(grads, adamw.init(params)), /needs the params/);
  const m = optimizers.momentum(1, 0.5);
  let s = m.init(params);
  let u: unknown;
  [u, s] = m.update(grads, s);
  [u, s] = m.update(grads, s);
  // The trace after two steps: 0.5 · 0.5 + 0.5 = 0.75.
  assert.deepEqual((u as { w: A }).w.tolist(), [-0.75, -0.75]);
});
