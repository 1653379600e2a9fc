// lax control flow against values known independently (closed forms, the Collatz
// sequence), eagerly and under jit, with closures over traced values and the StableHLO
// text it lowers to.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, jit, grad, jvp, vmap, jacfwd, parseStableHlo, evaluate, Literal, FrontendError, type FrontendArray } from "../../src/index.js";

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

test("switch: the clamped index picks one branch, eagerly and under jit (a stablehlo.case)", () => {
  const fs = [(v: A) => np.add(v, 1), (v: A) => np.multiply(v, 10), (v: A) => np.negative(v)];
  const x = np.array([1, 2], { dtype: "float32" });
  assert.deepEqual(([0, 1, 2, -1, 5] as const).map((i) => (lax.switch(np.array(i), fs, x) as A).tolist()), [[2, 3], [10, 20], [-1, -2], [2, 3], [-1, -2]]);
  const g = jit((i: A, v: A) => lax.switch(i, fs, v));
  assert.deepEqual((g(np.array(1), x) as A).tolist(), [10, 20]);
  assert.deepEqual((g(np.array(7), x) as A).tolist(), [-1, -2]);
  assert.match(jit((i: A, v: A) => lax.switch(i, fs, v)).lower(np.array(0), x).asText(), /stablehlo\.case/);
  assert.throws(() => lax.switch(np.array(0.5), fs, x), /integer scalar/);
});

test("scan: carry and stacked outputs, reverse, length without xs, pytrees; lax.map", () => {
  // c <- c + x, y = 2c (before the update): c = 0, 1, 3, 6 -> y = 0, 2, 6, 12.
  const f = (c: A, x: A): [A, A] => [np.add(c, x), np.multiply(c, 2)];
  const xs = np.array([1, 2, 3, 4]);
  for (const run of [(c: A, v: A) => lax.scan(f, c, v), jit((c: A, v: A) => lax.scan(f, c, v))]) {
    const [c, ys] = run(np.array(0), xs) as [A, A];
    assert.deepEqual([c.item(), ys.tolist()], [10, [0, 2, 6, 12]]);
  }
  const [cr, ysr] = lax.scan(f, np.array(0), xs, { reverse: true });
  assert.deepEqual([cr.item(), ysr.tolist()], [10, [18, 14, 8, 0]], "from the end: y[3] = 0, y[2] = 8, y[1] = 14, y[0] = 18");
  const [c2, ys2] = lax.scan((c: A) => [np.multiply(c, 2), c] as const, np.array(1), null, { length: 4 });
  assert.deepEqual([c2.item(), ys2.tolist()], [16, [1, 2, 4, 8]]);
  const [pair] = lax.scan((s: { a: A; b: A }, x: A) => [{ a: np.add(s.a, x), b: np.multiply(s.b, x) }, null] as const, { a: np.array(0), b: np.array(1) }, np.array([2, 3]));
  assert.deepEqual([pair.a.item(), pair.b.item()], [5, 6]);
  assert.deepEqual((lax.map((v: A) => np.multiply(v, v), np.array([1, 2, 3])) as A).tolist(), [1, 4, 9]);
  assert.throws(() => lax.scan(f, np.array(0), null), /give the number of steps/);
  assert.throws(() => lax.scan(f, np.array(0), np.array([1, 2]), { length: 3 }), /differ: 2, 3/);
});

test("derivatives through scan, foriLoop (static trip count) and cond, eagerly and under jit", () => {
  // Horner: c = (1·w + 2)·w + 3 = w² + 2w + 3, d/dw = 2w + 2 = 6 at w = 2.
  const horner = (w: A): A => lax.scan((c: A, x: A) => [np.add(np.multiply(c, w), x), null] as const, np.array(0, { dtype: "float32" }), np.array([1, 2, 3], { dtype: "float32" }))[0];
  const w = np.array(2, { dtype: "float32" });
  assert.equal((grad(horner)(w) as A).item(), 6);
  assert.equal((jit(grad(horner))(w) as A).item(), 6);
  assert.equal(((jvp(horner, [w], [np.array(1, { dtype: "float32" })]) as A[])[1]!).item(), 6);
  // x·x·x: d/dx = 3x² = 12 at 2.
  const cube = (x: A): A => lax.foriLoop(0, 3, (_i, v: A) => np.multiply(v, x), np.onesLike(x));
  assert.equal((grad(cube)(w) as A).item(), 12);
  assert.equal((jit(grad(cube))(w) as A).item(), 12);
  // cond(x > 0, sin, cos): cos(1) at 1, -sin(-1) at -1.
  const piece = (x: A): A => lax.cond(np.greater(x, 0), (v: A) => np.sin(v), (v: A) => np.cos(v), x) as A;
  for (const g of [grad(piece), jit(grad(piece))]) {
    assert.ok(Math.abs(Number((g(np.array(1, { dtype: "float32" })) as A).item()) - Math.cos(1)) < 1e-6);
    assert.ok(Math.abs(Number((g(np.array(-1, { dtype: "float32" })) as A).item()) - Math.sin(1)) < 1e-6);
  }
  // switch: branch 2 is x³, d/dx = 27 at 3.
  const sw = (x: A): A => lax.switch(np.array(2), [(v: A) => v, (v: A) => np.square(v), (v: A) => np.multiply(np.square(v), v)], x) as A;
  assert.equal((grad(sw)(np.array(3, { dtype: "float32" })) as A).item(), 27);
  // Forward mode through whileLoop: x·x·x·x after three steps, d/dx = 4x³ = 32 at 2.
  const quartic = (x: A): A => lax.whileLoop(([i]: A[]) => np.less(i!, 3), ([i, v]: A[]) => [np.add(i!, 1), np.multiply(v!, x)], [np.array(0), x])[1]!;
  assert.equal(((jvp(quartic, [w], [np.array(1, { dtype: "float32" })]) as A[])[1]!).item(), 32);
  // Its counter is concrete even under jit (it does not depend on the arguments), so the loop runs as a JS loop there too.
  assert.equal((jit(grad(quartic))(w) as A).item(), 32);
  const power = (x: A, n: A): A => lax.whileLoop(([i]: A[]) => np.less(i!, n), ([i, v]: A[]) => [np.add(i!, 1), np.multiply(v!, x)], [np.array(0), np.onesLike(x)])[1]!;
  assert.throws(() => jit(grad(power))(w, np.array(3)), (e: unknown) => e instanceof FrontendError && /predicate is traced inside jit under vjp/.test(e.message));
});

test("vmap of cond (a batched predicate selects) and of whileLoop (runs while any element's predicate holds)", () => {
  const c = (x: A): A => lax.cond(np.greater(x, 0), (v: A) => np.multiply(v, 2), (v: A) => np.negative(v), x) as A;
  const xs = np.array([1, -2, 3], { dtype: "float32" });
  assert.deepEqual((vmap(c)(xs) as A).tolist(), [2, 2, 6]);
  assert.deepEqual((jit(vmap(c))(xs) as A).tolist(), [2, 2, 6]);
  const doubling = (n: A): A => lax.whileLoop((v: A) => np.less(v, 10), (v: A) => np.multiply(v, 2), n);
  assert.deepEqual((vmap(doubling)(np.array([1, 3, 20])) as A).tolist(), [16, 12, 20]);
  // Per-example gradients through a scan: d/dw (w² + 2w + 3) at w = 0, 1, 2.
  const horner = (w: A): A => lax.scan((acc: A, x: A) => [np.add(np.multiply(acc, w), x), null] as const, np.array(0, { dtype: "float32" }), np.array([1, 2, 3], { dtype: "float32" }))[0];
  assert.deepEqual((vmap(grad(horner))(np.array([0, 1, 2], { dtype: "float32" })) as A).tolist(), [2, 4, 6]);
});

test("whileLoop under jvp inside jit: one while over primals and tangents (JAX's rule), closures and nested jvp", () => {
  const f64 = (v: number): A => np.array(v, { dtype: "float64" });
  // Squaring until past 100: from x = 1.5, four steps give x^16 (656.8...), so d/dx = 16 x^15.
  const squareUntil = (x: A): A => lax.whileLoop((v: A) => np.less(v, 100), (v: A) => np.multiply(v, v), x);
  const tangentAt = (f: (x: A) => A) => (x: A): A => (jvp(f, [x], [np.onesLike(x)]) as A[])[1]!;
  const x = f64(1.5);
  const expected = 16 * 1.5 ** 15;
  const jitted = jit(tangentAt(squareUntil));
  assert.ok(Math.abs(Number((jitted(x) as A).item()) - expected) < 1e-9 * expected);
  // The same as forward mode outside jit (a JS loop on concrete predicates), and the trip count follows the argument.
  assert.ok(Math.abs(Number(tangentAt(squareUntil)(x).item()) - expected) < 1e-9 * expected);
  assert.equal(Number((jitted(f64(20)) as A).item()), 40);
  assert.match(jit(tangentAt(squareUntil)).lower(x).asText(), /stablehlo\.while/);
  // A value the body closes over carries its tangent into the loop: v += x until v ≥ 10, from 0; at x = 3 four steps, d/dx = 4.
  const addUntil = (y: A): A => lax.whileLoop((v: A) => np.less(v, 10), (v: A) => np.add(v, y), np.zerosLike(y));
  assert.equal(Number((jit(tangentAt(addUntil))(f64(3)) as A).item()), 4);
  // An integer counter in the state and traced bounds: foriLoop(0, n, v·x) = x^n, d/dx = n x^(n-1).
  const power = (y: A, n: A): A => lax.foriLoop(0, n, (_i: A, v: A) => np.multiply(v, y), np.onesLike(y));
  const dPower = jit((y: A, n: A): A => (jvp((v: A) => power(v, n), [y], [np.onesLike(y)]) as A[])[1]!);
  assert.equal(Number((dPower(f64(2), np.array(5)) as A).item()), 80);
  // Nested forward mode (the second derivative): d²/dx² x^n = n (n-1) x^(n-2) = 20 · 8 at 2.
  const second = jit((y: A, n: A): A => tangentAt((v: A) => tangentAt((u: A) => power(u, n))(v))(y));
  assert.equal(Number((second(f64(2), np.array(5)) as A).item()), 160);
});

test("scan with unroll: blocks of steps per while iteration and the remainder after it; under transforms inside jit", () => {
  const f64 = (v: number[]): A => np.array(v, { dtype: "float64" });
  const xs = f64([1, 2, 3, 4, 5, 6, 7]);
  // Running sums and the carry c ↦ 0.5 c + x (a linear recurrence).
  const body = (c: A, x: A) => [np.add(np.multiply(c, 0.5), x), np.add(c, x)] as const;
  const run = (unroll: number | boolean, reverse = false) => jit((v: A) => lax.scan(body, np.array(0, { dtype: "float64" }), v, { unroll, reverse }));
  const reference = (reverse: boolean): [number, number[]] => {
    let c = 0;
    const ys: number[] = [];
    const order = [0, 1, 2, 3, 4, 5, 6].map((i) => (reverse ? 6 - i : i));
    for (const k of order) {
      ys[k] = c + k + 1;
      c = 0.5 * c + k + 1;
    }
    return [c, ys];
  };
  for (const reverse of [false, true]) {
    const [c, ys] = reference(reverse);
    for (const unroll of [1, 2, 3, 7, 10, true, false]) {
      const [carry, out] = run(unroll, reverse)(xs) as [A, A];
      assert.ok(Math.abs(Number(carry.item()) - c) < 1e-12, `carry, unroll ${String(unroll)}, reverse ${reverse}`);
      assert.deepEqual(out.tolist(), ys, `ys, unroll ${String(unroll)}, reverse ${reverse}`);
    }
  }
  // unroll 3 over 7 steps: one while whose body runs three steps, one step after it; true: no while at all.
  const text = run(3).lower(xs).asText();
  assert.equal(text.match(/stablehlo\.while/g)?.length, 1);
  assert.equal(text.match(/stablehlo\.dynamic_update_slice/g)?.length, 4);
  assert.equal(run(true).lower(xs).asText().match(/stablehlo\.while/g), null);
  // Under grad and jvp inside jit: d carry / d x_k = 0.5^(6-k).
  const carryOf = (v: A): A => lax.scan(body, np.array(0, { dtype: "float64" }), v, { unroll: 2 })[0];
  assert.deepEqual((jit(grad(carryOf))(xs) as A).tolist(), [1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1]);
  const along = f64([0, 0, 0, 0, 0, 1, 1]);
  assert.equal(Number(((jit((v: A) => jvp(carryOf, [v], [along])[1]))(xs) as A).item()), 1.5);
  assert.throws(() => lax.scan(body, np.array(0, { dtype: "float64" }), xs, { unroll: 0 }), FrontendError);
});

test("whileLoop under vmap inside jit (batched predicate: runs while any element's holds), and jacfwd of a loop under jit", () => {
  const doubling = (n: A): A => lax.whileLoop((v: A) => np.less(v, 10), (v: A) => np.multiply(v, 2), n);
  const batched = jit(vmap(doubling));
  assert.deepEqual((batched(np.array([1, 3, 20])) as A).tolist(), [16, 12, 20]);
  assert.match(jit(vmap(doubling)).lower(np.array([1, 3, 20])).asText(), /stablehlo\.while/);
  // A predicate that is not batched: the loop runs on the batch's values.
  const scaled = (x: A, n: A): A => lax.foriLoop(0, n, (_i: A, v: A) => np.multiply(v, x), np.onesLike(x));
  assert.deepEqual((jit(vmap(scaled, { inAxes: [0, null] }))(np.array([1, 2, 3], { dtype: "float64" }), np.array(3)) as A).tolist(), [1, 8, 27]);
  // jacfwd (vmap of jvp) of squaring until past 100, elementwise: a diagonal of 2^k x^(2^k - 1) with k per element.
  const squareUntil = (x: A): A => lax.whileLoop((v: A) => np.any(np.less(v, 100)), (v: A) => np.where(np.less(v, 100), np.multiply(v, v), v), x);
  const x = np.array([1.5, 20], { dtype: "float64" });
  const jac = jit(jacfwd(squareUntil))(x) as A;
  const expected = [[16 * 1.5 ** 15, 0], [0, 2 * 20]];
  (jac.tolist() as number[][]).forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - expected[i]![j]!) <= 1e-9 * Math.abs(expected[i]![j]!) + 1e-12, `J[${i}][${j}] = ${v}`)));
});
