// Autodiff by composition: grad of an MLP loss against bench/'s hand-written backward,
// jacfwd against jacrev and a closed form, hessian, hasAux, stopGradient, higher
// derivatives, and per-example gradients (vmap of grad) against a loop.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rng } from "../support/prng.js";
import {
  numpy as np, nn, jit, grad, valueAndGrad, jvp, vjp, jacfwd, jacrev, hessian, vmap, lax, Literal, compile, FrontendError, type FrontendArray,
} from "../../src/index.js";
import { buildMlpStep } from "../../bench/workloads/mlp.js";

type A = FrontendArray;


const randomMatrix = (next: () => number, rows: number, cols: number, scale = 1): number[][] =>
  Array.from({ length: rows }, () => Array.from({ length: cols }, () => (next() * 2 - 1) * scale));

const flatNumbers = (x: unknown): number[] => [x].flat(Infinity) as number[];

test("the gradient of an MLP's loss equals bench/'s hand-written backward pass (within f32 rounding)", async () => {
  const w = { kind: "mlp" as const, batch: 8, inputs: 5, hidden: 7, classes: 3, learningRate: 0.1 };
  const next = rng(42);
  const x = randomMatrix(next, w.batch, w.inputs);
  const labels = Array.from({ length: w.batch }, (_, i) => Array.from({ length: w.classes }, (_, c) => (c === i % w.classes ? 1 : 0)));
  const w1 = randomMatrix(next, w.inputs, w.hidden, 0.5);
  const b1 = randomMatrix(next, 1, w.hidden, 0.1)[0]!;
  const w2 = randomMatrix(next, w.hidden, w.classes, 0.5);
  const b2 = randomMatrix(next, 1, w.classes, 0.1)[0]!;

  // The hand-built step returns (loss, w1', b1', w2', b2') with p' = p - lr * dp.
  const step = await compile(buildMlpStep(w));
  const ref = step.run([x, labels, w1, b1, w2, b2].map((v) => Literal.from("f32", v))).elements;

  const loss = (params: { w1: A; b1: A; w2: A; b2: A }, xs: A, ys: A): A => {
    const h = nn.relu(np.add(np.matmul(xs, params.w1), params.b1));
    const logits = np.add(np.matmul(h, params.w2), params.b2);
    return np.negative(np.mean(np.sum(np.multiply(ys, nn.logSoftmax(logits)), { axis: 1 })));
  };
  const f32 = (v: number[] | number[][]): A => np.array(v, { dtype: "float32" });
  const params = { w1: f32(w1), b1: f32(b1), w2: f32(w2), b2: f32(b2) };
  const [value, grads] = jit(valueAndGrad(loss))(params, f32(x), f32(labels)) as [A, Record<string, A>];
  const close = (got: number[], want: number[], what: string): void =>
    got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 2e-6 * (1 + Math.abs(want[i]!)), `${what}[${i}]: ${g} vs ${want[i]}`));
  close([Number(value.item())], flatNumbers(ref[0]!.toNested()), "loss");
  const names = ["w1", "b1", "w2", "b2"] as const;
  names.forEach((n, k) => {
    const updated = np.subtract(params[n], np.multiply(grads[n]!, w.learningRate));
    close(flatNumbers(updated.tolist()), flatNumbers(ref[k + 1]!.toNested()), n);
  });
});

test("jacfwd and jacrev agree with each other and with the closed form", () => {
  // f(x) = sin(x) * sum(x^2): J[i][j] = cos(x_i) s δij + sin(x_i) 2 x_j
  const f = (x: A): A => np.multiply(np.sin(x), np.sum(np.multiply(x, x)));
  const xs = [0.3, -1.2, 2.0];
  const x = np.array(xs, { dtype: "float64" });
  const s = xs.reduce((t, v) => t + v * v, 0);
  const want = xs.map((xi, i) => xs.map((xj, j) => (i === j ? Math.cos(xi) * s : 0) + Math.sin(xi) * 2 * xj));
  for (const [name, jac] of [["jacfwd", jacfwd(f)(x)], ["jacrev", jacrev(f)(x)]] as const) {
    assert.deepEqual(jac.shape, [3, 3]);
    flatNumbers(jac.tolist()).forEach((v, k) => assert.ok(Math.abs(v - want.flat()[k]!) < 1e-12, `${name}[${k}]`));
  }
});

test("hessian of sum(x^3) is diag(6x); grad of grad of x^3 is 6x", () => {
  const x = np.array([1, -2], { dtype: "float64" });
  assert.deepEqual(flatNumbers(hessian((v: A) => np.sum(np.power(v, 3)))(x).tolist()).map((v) => v + 0), [6, 0, 0, -12]);
  assert.equal((grad(grad((v: A) => np.multiply(np.multiply(v, v), v)))(np.array(2, { dtype: "float64" })) as A).item(), 12);
});

test("hasAux, argnums, stopGradient, jvp and vjp", () => {
  const f = (a: A, b: A): [A, A] => [np.sum(np.multiply(a, b)), np.max(a)];
  const a = np.array([1, 2], { dtype: "float32" });
  const b = np.array([3, 4], { dtype: "float32" });
  const [ga, aux] = grad(f, { hasAux: true })(a, b) as [A, A];
  assert.deepEqual([ga.tolist(), aux.tolist()], [[3, 4], 2]);
  const [gA, gB] = grad((p: A, q: A) => np.sum(np.multiply(p, q)), { argnums: [0, 1] })(a, b) as [A, A];
  assert.deepEqual([gA.tolist(), gB.tolist()], [[3, 4], [1, 2]]);
  assert.equal((grad((v: A) => np.multiply(v, lax.stopGradient(v)))(np.array(3, { dtype: "float32" })) as A).item(), 3);
  const [out, tangent] = jvp((v: A) => np.exp(v), [np.array([0, 1], { dtype: "float64" })], [np.array([1, 2], { dtype: "float64" })]) as [A, A];
  flatNumbers(out.tolist()).forEach((v, i) => assert.ok(Math.abs(v - [1, Math.E][i]!) < 1e-15));
  flatNumbers(tangent.tolist()).forEach((v, i) => assert.ok(Math.abs(v - [1, 2 * Math.E][i]!) < 1e-15));
  const [y, pullback] = vjp((v: A) => np.multiply(v, 2), np.array([1, 2], { dtype: "float32" })) as [A, (c: unknown) => A[]];
  assert.deepEqual(y.tolist(), [2, 4]);
  assert.deepEqual(pullback(np.array([1, 10], { dtype: "float32" }))[0]!.tolist(), [2, 20]);
  assert.throws(() => grad((v: A) => np.multiply(v, 2))(a), /float scalar/);
});

test("products: d prod / dx is the product of the others, zeros included; running products forward and reversed", () => {
  const g = (v: number[]): unknown => (grad((x: A) => np.prod(x))(np.array(v, { dtype: "float32" })) as A).tolist();
  assert.deepEqual(g([2, 5, 3]), [15, 6, 10]);
  assert.deepEqual(g([2, 0, 3]), [0, 6, 0]);
  assert.deepEqual(g([0, 0, 3]), [0, 0, 0]);
  // sum(cumprod(x)) = x0 + x0x1 + x0x1x2: d/dx = [1 + x1 + x1x2, x0 + x0x2, x0x1] = [16, 10, 6] at [2, 3, 4].
  const x = np.array([2, 3, 4], { dtype: "float32" });
  assert.deepEqual((grad((v: A) => np.sum(np.cumprod(v)))(x) as A).tolist(), [16, 10, 6]);
  // Reversed: x0x1x2 + x1x2 + x2: d/dx = [x1x2, x0x2 + x2, x0x1 + x1 + 1] = [12, 12, 10].
  assert.deepEqual((grad((v: A) => np.sum(lax.cumprod(v, 0, { reverse: true })))(x) as A).tolist(), [12, 12, 10]);
  // Second derivative of x0x1x2 along x0 and x1: x2 = 4.
  const h = hessian((v: A) => np.prod(v))(x);
  assert.equal(h.index(0, 1).item(), 4);
});

test("valueAndGrad under jit equals it eagerly; gradients through max split ties evenly", () => {
  const f = (v: A): A => np.sum(np.multiply(np.sin(v), np.max(v)));
  const x = np.array([0.5, 2, -1], { dtype: "float32" });
  const [v1, g1] = valueAndGrad(f)(x) as [A, A];
  const [v2, g2] = jit(valueAndGrad(f))(x) as [A, A];
  assert.ok(Math.abs(Number(v1.item()) - Number(v2.item())) < 1e-6);
  flatNumbers(g1.tolist()).forEach((g, i) => assert.ok(Math.abs(g - flatNumbers(g2.tolist())[i]!) < 1e-5));
  assert.deepEqual((grad((v: A) => np.max(v))(np.array([1, 3, 3], { dtype: "float32" })) as A).tolist(), [0, 0.5, 0.5]);
});

test("vmap of grad gives per-example gradients equal to a loop", () => {
  const loss = (w: A, x: A): A => np.square(np.dot(w, x)) as A;
  const w = np.array([0.5, -1, 2], { dtype: "float32" });
  const xs = np.array([[1, 2, 3], [0, 1, 0], [-1, 1, 2], [2, 2, 2]], { dtype: "float32" });
  const perExample = vmap(grad(loss, { argnums: 0 }), { inAxes: [null, 0] })(w, xs) as A;
  const loop = [...xs].map((x) => (grad(loss)(w, x) as A).tolist());
  assert.deepEqual(perExample.tolist(), loop);
  // outAxes moves the mapped axis.
  assert.deepEqual((vmap((x: A) => np.multiply(x, 2), { outAxes: 1 })(xs) as A).shape, [3, 4]);
  assert.throws(() => vmap((p: A, q: A) => np.add(p, q))(np.zeros([2]), np.zeros([3])), FrontendError);
});
