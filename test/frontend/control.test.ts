// lax control flow against values known independently (closed forms, the Collatz
// sequence), eagerly and under jit, with closures over traced values and the StableHLO
// text it lowers to.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, jit, grad, vmap, parseStableHlo, evaluate, Literal, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;

test("foriLoop: the sum 0 + 1 + ... + 9 is 45; the loop carries pytrees", () => {
  assert.equal(lax.foriLoop(0, 10, (i, acc: A) => np.add(acc, i), np.array(0)).item(), 45);
  const { a, b } = lax.foriLoop(0, 5, (_i, s: { a: A; b: A }) => ({ a: s.b, b: np.add(s.a, s.b) }), { a: np.array(0), b: np.array(1) });
  assert.deepEqual([a.item(), b.item()], [5, 8], "Fibonacci numbers 5 and 8");
});

test("whileLoop: the Collatz sequence of 27 takes 111 steps", () => {
  const [n, steps] = lax.whileLoop(
    ([v]: A[]) => np.greater(v!, 1),
    ([v, k]: A[]) => [np.where(np.equal(np.remainder(v!, 2), 0), np.floorDivide(v!, 2), np.add(np.multiply(v!, 3), 1)), np.add(k!, 1)],
    [np.array(27), np.array(0)],
  );
  assert.deepEqual([n!.item(), steps!.item()], [1, 111]);
  assert.throws(() => lax.whileLoop((v: A) => v, (v: A) => v, np.array(1.5)), /boolean scalar/);
  assert.throws(() => lax.whileLoop((v: A) => np.less(v, 3), (v: A) => np.astype(v, "float32"), np.array(1)), /bodyFun must return/);
});

test("under jit, loops close over traced values (captured as loop values) and lower to stablehlo.while", () => {
  // acc <- acc * w + x three times: ((x) w + x) w + x = x (w² + w + 1).
  const f = (x: A, w: A): A => lax.foriLoop(0, 3, (_i, acc: A) => np.add(np.multiply(acc, w), x), np.zerosLike(x));
  const x = np.array([1, 2], { dtype: "float32" });
  const w = np.array(2, { dtype: "float32" });
  assert.deepEqual((jit(f)(x, w) as A).tolist(), [7, 14]);
  const text = jit(f).lower(x, w).asText();
  assert.match(text, /stablehlo\.while/);
  const out = evaluate(parseStableHlo(text).entry, [Literal.from("f32", [1, 2]), Literal.scalar("f32", 3)]).toNested();
  assert.deepEqual(out, [13, 26], "the interpreter runs the text: x (9 + 3 + 1)");
});

test("cond runs one branch; branches close over traced values; under jit it is a conditional", () => {
  assert.deepEqual((lax.cond(np.array(true), (a: A, b: A) => np.add(a, b), (a: A, b: A) => np.subtract(a, b), np.array([1.5]), np.array([1])) as A).tolist(), [2.5]);
  const g = jit((p: A, a: A) => lax.cond(p, (x: A) => np.multiply(x, a), (x: A) => np.negative(x), a));
  const a = np.array([3, 4], { dtype: "float32" });
  assert.deepEqual((g(np.array(true), a) as A).tolist(), [9, 16]);
  assert.deepEqual((g(np.array(false), a) as A).tolist(), [-3, -4]);
  assert.match(jit((p: A, v: A) => lax.cond(p, (x: A) => x, (x: A) => np.negative(x), v)).lower(np.array(true), a).asText(), /stablehlo\.(if|case)/);
  assert.throws(() => lax.cond(np.array(true), (x: A) => x, (x: A) => np.astype(x, "int32"), a), /different types/);
});

test("control flow under grad or vmap is a FrontendError naming it", () => {
  assert.throws(() => grad((x: A) => lax.foriLoop(0, 2, (_i, v: A) => np.multiply(v, x), x))(np.array(2, { dtype: "float32" })), (e: unknown) => e instanceof FrontendError && /inside vjp/.test(e.message));
  assert.throws(() => vmap((x: A) => lax.cond(np.array(true), (v: A) => v, (v: A) => v, x))(np.zeros([2])), /inside vmap/);
});
