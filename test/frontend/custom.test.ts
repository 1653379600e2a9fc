// customJvp, customVjp and checkpoint: the derivative is the user's rule (rules chosen to
// differ from the function's own derivative, so using the wrong one fails), and
// checkpoint recomputes its function in the backward pass (counted).

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, jit, grad, jvp, vmap, customJvp, customVjp, checkpoint, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const f32 = (v: number | number[]): A => np.array(v, { dtype: "float32" });

test("customJvp: forward and reverse mode use the rule, under jit and vmap too; higher order differentiates the rule", () => {
  // sin with the derivative 2 (deliberately not cos).
  const f = customJvp((x: A) => np.sin(x)).defjvp(([x], [t]) => [np.sin(x as A), np.multiply(t as A, 2)]);
  assert.ok(Math.abs(Number(f(f32(0.5)).item()) - Math.sin(0.5)) < 1e-7);
  assert.equal(((jvp(f, [f32(0.5)], [f32(3)]) as A[])[1]!).item(), 6);
  assert.equal((grad(f)(f32(0.5)) as A).item(), 2);
  assert.equal((jit(grad(f))(f32(0.5)) as A).item(), 2);
  assert.deepEqual((vmap(grad(f))(f32([0.1, 0.2])) as A).tolist(), [2, 2]);
  assert.equal((grad(grad(f))(f32(0.5)) as A).item(), 0);
  // JAX's log1pexp: the naive gradient at 100 is inf/inf = NaN in float32, the rule's is 1.
  const naive = (x: A): A => np.log(np.add(1, np.exp(x)));
  const log1pexp = customJvp(naive).defjvp(([x], [t]) => [naive(x as A), np.multiply(t as A, np.subtract(1, np.divide(1, np.add(1, np.exp(x as A)))))]);
  assert.ok(Number.isNaN(Number((grad(naive)(f32(100)) as A).item())));
  assert.equal((grad(log1pexp)(f32(100)) as A).item(), 1);
  assert.throws(() => grad(customJvp((x: A) => x))(f32(1)), (e: unknown) => e instanceof FrontendError && /defjvp/.test(e.message));
});

test("customVjp: bwd gives the cotangents from fwd's residuals; forward mode is an error, as in JAX", () => {
  const clipGradient = customVjp((x: A) => x).defvjp((x: A) => [x, null], (_r: null, g: A) => [np.clip(g, -1, 1)]);
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(clipGradient(x), 10)))(f32([1, 2])) as A).tolist(), [1, 1]);
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(clipGradient(x), 0.5)))(f32([1, 2])) as A).tolist(), [0.5, 0.5]);
  const sin = customVjp((x: A) => np.sin(x)).defvjp((x: A) => [np.sin(x), np.cos(x)], (cosx: A, g: A) => [np.multiply(cosx, g)]);
  assert.ok(Math.abs(Number((grad(sin)(f32(0.5)) as A).item()) - Math.cos(0.5)) < 1e-7);
  assert.ok(Math.abs(Number((jit(grad(sin))(f32(0.5)) as A).item()) - Math.cos(0.5)) < 1e-7);
  assert.deepEqual((vmap(clipGradient)(f32([3, 4])) as A).tolist(), [3, 4]);
  assert.throws(() => jvp(sin, [f32(0.5)], [f32(1)]), (e: unknown) => e instanceof FrontendError && /forward mode/.test(e.message));
  assert.throws(() => grad((x: A) => np.sum(vmap(sin)(x)))(f32([1, 2])), (e: unknown) => e instanceof FrontendError && /under vmap inside vjp/.test(e.message));
});

test("checkpoint: the same gradient, with the function run again in the backward pass", () => {
  let calls = 0;
  const f = (x: A): A => {
    calls++;
    return np.sum(np.multiply(np.sin(x), x));
  };
  const x = f32([0.5, 1, 2]);
  const expected = [0.5, 1, 2].map((v) => Math.cos(v) * v + Math.sin(v));
  calls = 0;
  const plain = grad(f)(x) as A;
  assert.equal(calls, 1);
  calls = 0;
  const remat = grad(checkpoint(f))(x) as A;
  assert.equal(calls, 2, "once forward, once again in the backward pass");
  (remat.tolist() as number[]).forEach((v, i) => {
    assert.ok(Math.abs(v - expected[i]!) < 1e-6);
    assert.equal(v, (plain.tolist() as number[])[i]);
  });
  assert.equal((checkpoint(f)(x) as A).item(), f(x).item());
});
