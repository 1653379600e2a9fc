// The stateful rng op: RngUniform, RngNormal (seed 000) and RngBernoulli (seed 001).
// XLA does not specify the stream, so these tests check ranges, types, moments and
// determinism given EvaluateOptions.rngSeed, not particular values.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, ShapeError, XlaBuilder, arrayShape, constantLiteral, rngBernoulli, rngNormal, rngUniform, tuple,
  type ElementType, type Scalar,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

function uniform(type: ElementType, a: Scalar, b: Scalar, n: number, rngSeed = 0n): Literal {
  const builder = new XlaBuilder("u");
  const out = rngUniform(constantLiteral(builder, Literal.scalar(type, a)), constantLiteral(builder, Literal.scalar(type, b)), arrayShape(type, [n]));
  const c = builder.build(out);
  const r = evaluate(c, [], { rngSeed });
  assert.deepEqual(r.shape, c.root.shape);
  return r;
}

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
const variance = (xs: number[]): number => { const m = mean(xs); return mean(xs.map((x) => (x - m) ** 2)); };

test("RngUniform f32 stays in [a, b) with mean near (a+b)/2", () => {
  const xs = uniform("f32", -2, 3, 4000).toNumbers();
  assert.ok(xs.every((x) => x >= -2 && x < 3));
  assert.ok(Math.abs(mean(xs) - 0.5) < 0.15);
  assert.ok(Math.abs(variance(xs) - 25 / 12) < 0.25);
});

test("RngUniform on narrow floats never rounds up to b", () => {
  for (const t of ["f16", "bf16", "f8e4m3fn"] as const) {
    const xs = uniform(t, 1, 1.125, 2000).toNumbers();
    assert.ok(xs.every((x) => x >= 1 && x < 1.125), t);
  }
});

test("RngUniform on f64 handles the widest range without overflow", () => {
  const xs = uniform("f64", -Number.MAX_VALUE, Number.MAX_VALUE, 100).toNumbers();
  assert.ok(xs.every((x) => Number.isFinite(x)));
});

test("RngUniform on integers is [a, b): every value appears, b never does", () => {
  const xs = uniform("s32", -3, 4, 2000).toNumbers();
  assert.deepEqual([...new Set(xs)].sort((p, q) => p - q), [-3, -2, -1, 0, 1, 2, 3]);
  const u8 = uniform("u8", 250, 255, 500).toNumbers();
  assert.ok(u8.every((x) => x >= 250 && x < 255));
});

test("RngUniform on s64 and u64 covers ranges beyond 2^53 exactly", () => {
  const lo = -(1n << 63n), hi = (1n << 63n) - 1n;
  const xs = uniform("s64", lo, hi, 200).values() as bigint[];
  assert.ok(xs.every((x) => x >= lo && x < hi));
  assert.ok(xs.some((x) => x < 0n) && xs.some((x) => x > 0n));
  const us = uniform("u64", 0n, (1n << 64n) - 1n, 50).values() as bigint[];
  assert.ok(us.some((x) => x > 1n << 63n));
});

test("RngUniform with b <= a yields a (XLA: implementation-defined)", () => {
  assert.deepEqual(uniform("s32", 5, 5, 3).toNumbers(), [5, 5, 5]);
  assert.deepEqual(uniform("f32", 2, 1, 2).toNumbers(), [2, 2]);
  assert.deepEqual(uniform("pred", false, true, 3).values(), [false, false, false]);
});

test("rng is deterministic for a seed, differs across seeds and across ops", () => {
  assert.deepEqual(uniform("u32", 0, 1000000, 8, 7n).values(), uniform("u32", 0, 1000000, 8, 7n).values());
  assert.notDeepEqual(uniform("u32", 0, 1000000, 8, 7n).values(), uniform("u32", 0, 1000000, 8, 8n).values());
  const b = new XlaBuilder("two");
  const lo = constantLiteral(b, Literal.scalar("u32", 0)), hi = constantLiteral(b, Literal.scalar("u32", 1000000));
  const first = rngUniform(lo, hi, arrayShape("u32", [8]));
  const second = rngUniform(lo, hi, arrayShape("u32", [8]));
  const both = tuple(b, [first, second]);
  const r = evaluate(b.build(both), []);
  assert.notDeepEqual(r.elements[0]!.values(), r.elements[1]!.values());
});

test("RngNormal has the requested mean and standard deviation", () => {
  const b = new XlaBuilder("n");
  const out = rngNormal(constantLiteral(b, Literal.scalar("f64", 3)), constantLiteral(b, Literal.scalar("f64", 2)), arrayShape("f64", [5000]));
  const xs = evaluate(b.build(out), []).toNumbers();
  assert.ok(xs.every(Number.isFinite));
  assert.ok(Math.abs(mean(xs) - 3) < 0.15);
  assert.ok(Math.abs(Math.sqrt(variance(xs)) - 2) < 0.15);
});

test("RngBernoulli (seed 001): u32 output, frequency near the mean, 0 and 1 at the edges", () => {
  const draw = (p: number): number[] => {
    const b = new XlaBuilder("bern");
    const out = rngBernoulli(constantLiteral(b, Literal.scalar("f32", p)), [4000]);
    const r = evaluate(b.build(out), []);
    assert.equal(r.elementType, "u32");
    return r.toNumbers();
  };
  assert.ok(Math.abs(mean(draw(0.25)) - 0.25) < 0.04);
  assert.ok(draw(0).every((x) => x === 0));
  assert.ok(draw(1).every((x) => x === 1));
});

test("rng shape rules: types of bounds and outputs", () => {
  const b = new XlaBuilder("bad");
  const f = constantLiteral(b, Literal.scalar("f32", 0));
  const i = constantLiteral(b, Literal.scalar("s32", 0));
  const v = constantLiteral(b, Literal.fromValues("f32", [2], [0, 1]));
  assert.throws(() => rngUniform(f, i, arrayShape("f32", [2])), ShapeError);
  assert.throws(() => rngUniform(f, v, arrayShape("f32", [2])), /scalar/);
  assert.throws(() => rngNormal(i, i, arrayShape("s32", [2])), /floating-point/);
  assert.throws(() => rngUniform(f, f, arrayShape("c64", [2])), ShapeError);
  assert.throws(() => rngBernoulli(i, [2]), /floating-point/);
});
