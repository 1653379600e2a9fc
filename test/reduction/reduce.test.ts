import { test } from "node:test";
import assert from "node:assert/strict";
import { constantLiteral, Literal, reduce, reduceAll, ShapeError, XlaBuilder, parameter, scalarShape, arrayShape, add, max, mul } from "../../src/index.js";
import { argmaxComputation, assertClose, binaryComputation, rng, run } from "./support.js";
import { elementCount } from "../../src/types/shape.js";

const sumOver = (input: Literal, dims: number[], init = 0): Literal =>
  run([input], (b, [x]) => reduce(x!, constantLiteral(b, Literal.scalar(input.elementType, init)),
    binaryComputation(b, input.elementType, add), dims));

// Seed 000, Reduce: the 2D example [[1,2,3],[4,5,6]].
test("reduce: seed 2D example, dimension 0 and dimension 1", () => {
  const m = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(sumOver(m, [0]).toNumbers(), [5, 7, 9]);
  assert.deepEqual(sumOver(m, [1]).toNumbers(), [6, 15]);
});

// Seed 000, Reduce: the 4x2x3 array with 1..6 replicated along dimension 0.
test("reduce: seed 3D examples", () => {
  const plane = [[1, 2, 3], [4, 5, 6]];
  const a = Literal.from("f32", [plane, plane, plane, plane]);
  assert.deepEqual(sumOver(a, [0]).toNested(), [[4, 8, 12], [16, 20, 24]]);
  assert.deepEqual(sumOver(a, [2]).toNested(), [[6, 15], [6, 15], [6, 15], [6, 15]]);
  assert.deepEqual(sumOver(a, [0, 1]).toNumbers(), [20, 28, 36]);
  assert.deepEqual(sumOver(a, [1, 0]).toNumbers(), [20, 28, 36]);
  assert.deepEqual(sumOver(a, [0, 1, 2]).toNumbers(), [84]);
});

// StableHLO interpreter test reduce.mlir: i64 [[0..5]] reduced over dimension 1.
test("reduce: conformance reduce.mlir (s64)", () => {
  const r = sumOver(Literal.from("s64", [[0n, 1n, 2n, 3n, 4n, 5n]]), [1]);
  assert.deepEqual(r.values(), [15n]);
  assert.deepEqual(r.dimensions, [1]);
});

test("reduce: non-commutative reducer is applied as f(accumulator, element) in row-major order", () => {
  // f(acc, x) = acc * 10 + x writes the visiting order as decimal digits.
  const digits = (input: Literal, dims: number[]): number[] =>
    run([input], (b, [x]) => {
      const sb = b.createSubBuilder("digits");
      const acc = parameter(sb, 0, scalarShape("s32"));
      const v = parameter(sb, 1, scalarShape("s32"));
      const f = sb.build(add(mul(acc, constantLiteral(sb, Literal.scalar("s32", 10))), v));
      return reduce(x!, constantLiteral(b, Literal.scalar("s32", 0)), f, dims);
    }).toNumbers();
  assert.deepEqual(digits(Literal.from("s32", [1, 2, 3]), [0]), [123]);
  assert.deepEqual(digits(Literal.from("s32", [[1, 2], [3, 4]]), [0, 1]), [1234]);
  assert.deepEqual(digits(Literal.from("s32", [[1, 2], [3, 4]]), [0]), [13, 24]);
  assert.deepEqual(digits(Literal.from("s32", [[1, 2], [3, 4]]), [1]), [12, 34]);
});

// Seed 000, Variadic Reduce: max and argmax in one pass; ties pick the later index (value >= max).
test("reduce: variadic max/argmax (seed example)", () => {
  const values = Literal.from("f32", [3, 7, 7, 1]);
  const indices = Literal.from("s32", [0, 1, 2, 3]);
  const r = run([values, indices], (b, [v, k]) => {
    const f = argmaxComputation(b);
    return reduce(b, [v!, k!], [constantLiteral(b, Literal.scalar("f32", -Infinity)), constantLiteral(b, Literal.scalar("s32", -1))], f, [0]);
  });
  assert.equal(r.elements.length, 2);
  assert.deepEqual(r.elements[0]!.toNumbers(), [7]);
  assert.deepEqual(r.elements[1]!.toNumbers(), [2]);
});

test("reduce: edge cases (empty, rank 0, no dimensions, 64-bit exactness, NaN, reduceAll)", () => {
  // Reducing an empty dimension gives the init value.
  assert.deepEqual(sumOver(Literal.fromValues("f32", [2, 0], []), [1], 7).toNumbers(), [7, 7]);
  // An empty result dimension gives an empty result.
  assert.deepEqual(sumOver(Literal.fromValues("f32", [0, 3], []), [1]).dimensions, [0]);
  // Rank 0 with no dimensions: f(init, x).
  assert.deepEqual(sumOver(Literal.scalar("s32", 5), [], 10).toNumbers(), [15]);
  // No dimensions on an array: f(init, x) elementwise.
  assert.deepEqual(sumOver(Literal.from("s32", [1, 2]), [], 1).toNumbers(), [2, 3]);
  // s64 stays exact beyond 2^53.
  assert.deepEqual(sumOver(Literal.from("s64", [2n ** 53n + 1n, 2n ** 53n]), [0]).values(), [2n ** 54n + 1n]);
  assert.ok(Number.isNaN(sumOver(Literal.from("f64", [1, NaN, 2]), [0]).toNumbers()[0]!));
  const all = run([Literal.from("f32", [[1, 2], [3, 4]])], (b, [x]) =>
    reduceAll(x!, constantLiteral(b, Literal.scalar("f32", -Infinity)), binaryComputation(b, "f32", max)));
  assert.deepEqual(all.toNumbers(), [4]);
  assert.deepEqual(all.dimensions, []);
});

test("reduce: shape errors name the op, the argument and the rule", () => {
  const b = new XlaBuilder("bad");
  const x = parameter(b, 0, arrayShape("f32", [2, 3]));
  const y = parameter(b, 1, arrayShape("f32", [3, 2]));
  const init = constantLiteral(b, Literal.scalar("f32", 0));
  const initInt = constantLiteral(b, Literal.scalar("s32", 0));
  const sum = binaryComputation(b, "f32", add);
  assert.throws(() => reduce(x, init, sum, [2]), (e: unknown) => e instanceof ShapeError && /reduce: dimensions_to_reduce: dimension 2 is out of range for rank 2/.test(e.message));
  assert.throws(() => reduce(x, init, sum, [0, 0]), /appears more than once/);
  assert.throws(() => reduce(x, initInt, sum, [0]), /init value 0: has type s32 but input 0 has type f32/);
  assert.throws(() => reduce(x, init, binaryComputation(b, "s32", add), [0]), /reduce: computation: .*must have signature \(f32\[\], f32\[\]\) -> f32\[\]/);
  assert.throws(() => reduce(b, [x, y], [init, init], sum, [0]), /input 1: shape f32\[3,2\] does not have the dimensions of input 0/);
  assert.throws(() => reduce(x, x, sum, [0]), /init value 0: must be a scalar/);
});

test("reduce: property, random shapes and dimensions agree with a direct sum", () => {
  const next = rng(11);
  for (let trial = 0; trial < 30; trial++) {
    const rank = 1 + Math.floor(next() * 3);
    const dims = Array.from({ length: rank }, () => 1 + Math.floor(next() * 4));
    const values = Array.from({ length: elementCount(dims) }, () => Math.floor(next() * 100));
    const reduced = dims.map((_, d) => d).filter(() => next() < 0.5);
    const input = Literal.fromValues("s32", dims, values);
    const r = sumOver(input, reduced);
    // Direct sum: bucket each element by its kept coordinates.
    const kept = dims.map((_, d) => d).filter((d) => !reduced.includes(d));
    const expected = new Array<number>(kept.reduce((a, d) => a * dims[d]!, 1)).fill(0);
    values.forEach((v, linear) => {
      const idx: number[] = [];
      let rest = linear;
      for (let d = rank - 1; d >= 0; d--) { idx[d] = rest % dims[d]!; rest = Math.floor(rest / dims[d]!); }
      let o = 0;
      for (const d of kept) o = o * dims[d]! + idx[d]!;
      expected[o]! += v;
    });
    assertClose(r.toNumbers(), expected, 0, `trial ${trial}`);
  }
});
