import { test } from "node:test";
import assert from "node:assert/strict";
import { exactFma, fmaF32, fmaF64 } from "../../src/interpreter/kernels/fused_multiply_add.js";
import { rng } from "../support/prng.js";

test("fma: known values (one rounding of the exact a * b + c)", () => {
  // (1 + 2^-27)^2 - (1 + 2^-26) = 2^-54 exactly; a rounded product would give 0.
  assert.equal(fmaF64(1 + 2 ** -27, 1 + 2 ** -27, -(1 + 2 ** -26)), 2 ** -54);
  assert.equal(fmaF32(1 + 2 ** -12, 1 + 2 ** -12, -(1 + 2 ** -11)), 2 ** -24);
  // 0.1 is 0x3FB999999999999A: 10 * that - 1 = 2^-54 exactly, which C's fma returns.
  assert.equal(fmaF64(0.1, 10, -1), 2 ** -54);
  // Huge and tiny operands take the exact path: a product past the double range cancelled back.
  assert.equal(fmaF64(2 ** 512, 2 ** 512, -Number.MAX_VALUE), 2 ** 971); // 2^1024 - (2^1024 - 2^971)
  assert.equal(fmaF64(2 ** 600, 2 ** 500, -(2 ** 1023)), Infinity);
  assert.equal(fmaF64(2 ** 512, 2 ** 511, -(2 ** 1023)), 0);
  assert.equal(fmaF64(1.5, 2 ** -1074, -(2 ** -1074)), 0); // 2^-1075: a tie, to even (0)
  assert.equal(fmaF64(3, 2 ** -1074, 0), 3 * 2 ** -1074);
  assert.ok(Object.is(fmaF64(-1, 0, 0), 0) && Object.is(fmaF64(-1, 0, -0), -0));
  assert.ok(Number.isNaN(fmaF64(Infinity, 0, 1)) && fmaF64(Infinity, 2, 1) === Infinity);
  assert.ok(Number.isNaN(fmaF32(Infinity, 1, -Infinity)));
  // f32 overflow: 2^127 * 2 + 0 rounds to +inf, but cancelled by c it stays finite.
  assert.equal(fmaF32(2 ** 127, 2, 0), Infinity);
  assert.equal(fmaF32(2 ** 127, 2, -(2 ** 127)), 2 ** 127);
});

test("fma: the fast paths equal the exact bigint computation on 100,000 random cases, cancellations included", () => {
  const r = rng(7);
  const value = (spread: number): number => (r() - 0.5) * 2 ** Math.floor((r() - 0.5) * spread) * (1 + r());
  for (let i = 0; i < 100_000; i++) {
    const a = value(80), b = value(80);
    let c = value(160);
    if (i % 3 === 0) c = -a * b * (1 + (r() - 0.5) * 2 ** -40); // near-total cancellation
    if (i % 5 === 0) c = -(a * b); // leaves exactly the product's rounding error
    assert.ok(Object.is(fmaF64(a, b, c), exactFma(a, b, c)), `fmaF64(${a}, ${b}, ${c})`);
    const a32 = Math.fround(a), b32 = Math.fround(b);
    const c32 = i % 7 === 0 ? Math.fround(-a32 * b32) : Math.fround(c);
    assert.ok(Object.is(fmaF32(a32, b32, c32), exactFma(a32, b32, c32, "f32")), `fmaF32(${a32}, ${b32}, ${c32})`);
  }
});

test("fma: subnormal and near-overflow f64 results round once", () => {
  const r = rng(11);
  for (let i = 0; i < 5_000; i++) {
    const tiny = 2 ** (-1000 - Math.floor(r() * 70)) * (1 + r());
    const huge = 2 ** (990 + Math.floor(r() * 30)) * (1 + r());
    for (const [a, b, c] of [[tiny, 2 ** -40 * (1 + r()), -tiny * 2 ** -41], [huge, 1 + r(), -huge], [2 ** 600 * r(), 2 ** 430, -(2 ** 1023) * r()]] as const) {
      assert.ok(Object.is(fmaF64(a, b, c), exactFma(a, b, c)), `fmaF64(${a}, ${b}, ${c})`);
    }
  }
});
