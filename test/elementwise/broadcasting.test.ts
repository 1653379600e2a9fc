// Seed 003 (broadcasting semantics), every example, plus seed 000 Broadcast /
// BroadcastInDim and StableHLO's broadcast_in_dim conformance case.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, broadcast, broadcastInDim, constantLiteral, inferShape, Literal, mul, parameter,
  shapeToString, XlaBuilder, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { assertShapeError, assertValues, lit, run } from "./helpers.js";

const m23 = lit("s32", [[1, 2, 3], [4, 5, 6]]);

test("seed 003: |1 2 3; 4 5 6| + |7 8 9| with broadcast_dimensions {1}", () => {
  const r = run((x, v) => add(x, v, [1]), m23, lit("s32", [7, 8, 9]));
  assert.deepEqual(r.toNested(), [[8, 10, 12], [11, 13, 15]]);
});

test("seed 003: a scalar broadcasts without broadcast_dimensions: |1 2 3; 4 5 6| + 7", () => {
  assert.deepEqual(run((x, s) => add(x, s), m23, lit("s32", 7)).toNested(), [[8, 9, 10], [11, 12, 13]]);
  assert.deepEqual(run((s, x) => add(s, x), lit("s32", 7), m23).toNested(), [[8, 9, 10], [11, 12, 13]]);
});

test("seed 003: (2,3) + (3) without broadcast_dimensions is rejected, with a hint", () => {
  assertShapeError(() => run((x, v) => add(x, v), m23, lit("s32", [7, 8, 9])),
    /add: shapes s32\[2,3\] and s32\[3\] are not compatible.*broadcast_dimensions=\{1\} to match dimension 1 of lhs/);
});

test("seed 003: 3-vector + 3x3 matrix, broadcast_dimensions {1} repeats rows, {0} repeats columns", () => {
  const zeros = lit("s32", [[0, 0, 0], [0, 0, 0], [0, 0, 0]]);
  const v = lit("s32", [7, 8, 9]);
  assert.deepEqual(run((m, x) => add(m, x, [1]), zeros, v).toNested(), [[7, 8, 9], [7, 8, 9], [7, 8, 9]]);
  assert.deepEqual(run((m, x) => add(m, x, [0]), zeros, v).toNested(), [[7, 7, 7], [8, 8, 8], [9, 9, 9]]);
  // The vector may be either operand.
  assert.deepEqual(run((x, m) => add(x, m, [0]), v, zeros).toNested(), [[7, 7, 7], [8, 8, 8], [9, 9, 9]]);
});

test("seed 003: a 3x4 matrix matches dimensions 1 and 2 of a 2x3x4 cuboid with broadcast_dimensions (1,2)", () => {
  const cube = Literal.fromValues("s32", [2, 3, 4], new Array(24).fill(0).map((_, i) => i * 100));
  const m = Literal.fromValues("s32", [3, 4], new Array(12).fill(0).map((_, i) => i));
  const r = run((c, x) => add(c, x, [1, 2]), cube, m);
  assert.deepEqual(r.dimensions, [2, 3, 4]);
  r.values().forEach((v, i) => assert.equal(v, i * 100 + (i % 12)));
});

test("seed 003: a T vector matches any one dimension of MxNxPxQ whose size is T", () => {
  const dims = [2, 3, 4, 5];
  dims.forEach((t, d) => {
    const big = Literal.fromValues("f32", dims, new Array(120).fill(0));
    const vec = Literal.fromValues("f32", [t], Array.from({ length: t }, (_, i) => i + 1));
    const r = run((x, v) => add(x, v, [d]), big, vec);
    // Element at index (i0,i1,i2,i3) is vec[i_d] + 0.
    const strides = [60, 20, 5, 1];
    r.toNumbers().forEach((v, lin) => assert.equal(v, Math.floor(lin / strides[d]!) % t + 1));
  });
});

test("seed 003: a TxV matrix matches dims (2,3), (1,2), (0,3) of MxNxPxQ; order must strictly increase", () => {
  const b = new XlaBuilder("tv");
  const big = parameter(b, 0, arrayShape("f32", [2, 3, 4, 5]));
  const tv = (t: number, v: number): XlaOp => constantLiteral(b, Literal.fromValues("f32", [t, v], new Array(t * v).fill(1)));
  for (const [d0, d1] of [[2, 3], [1, 2], [0, 3]] as const) {
    const sizes = [2, 3, 4, 5];
    assert.deepEqual(add(big, tv(sizes[d0]!, sizes[d1]!), [d0, d1]).arrayShape.dimensions, [2, 3, 4, 5]);
  }
  // Matching V to N and T to P is illegal (not increasing); so is V to both P and N.
  assertShapeError(() => add(big, tv(4, 3), [2, 1]), /strictly increasing, but 1 comes after 2/);
  assertShapeError(() => add(big, tv(4, 4), [2, 2]), /strictly increasing/);
});

test("seed 003: degenerate dimensions: (2,1)+(2,3), (1,2,5)+(7,2,5), (7,2,5)+(7,1,5), outer (2,1)+(1,3)", () => {
  const cases: [number[], number[], number[]][] = [
    [[2, 1], [2, 3], [2, 3]],
    [[1, 2, 5], [7, 2, 5], [7, 2, 5]],
    [[7, 2, 5], [7, 1, 5], [7, 2, 5]],
    [[2, 1], [1, 3], [2, 3]],
  ];
  for (const [l, r, out] of cases) {
    const b = new XlaBuilder("deg");
    const sum = add(parameter(b, 0, arrayShape("f32", l)), parameter(b, 1, arrayShape("f32", r)));
    assert.deepEqual(sum.arrayShape.dimensions, out, `${l} + ${r}`);
  }
  // Outer sum values: column [1,2] + row [10,20,30].
  const r = run((x, y) => add(x, y), lit("s32", [[1], [2]]), lit("s32", [[10, 20, 30]]));
  assert.deepEqual(r.toNested(), [[11, 21, 31], [12, 22, 32]]);
});

test("seed 003: (7,2,5) and (7,2,6) are incompatible", () => {
  const b = new XlaBuilder("bad");
  const x = parameter(b, 0, arrayShape("f32", [7, 2, 5]));
  const y = parameter(b, 1, arrayShape("f32", [7, 2, 6]));
  assertShapeError(() => add(x, y), /f32\[7,2,5\] and f32\[7,2,6\] are not compatible: dimension 2 has size 5 .* and 6/);
});

test("seed 003: composition: |1 2 3 4| + [5 6] (a 1x2 matrix) with broadcast_dimensions (0)", () => {
  const r = run((v, m) => add(v, m, [0]), lit("s32", [1, 2, 3, 4]), lit("s32", [[5, 6]]));
  assert.deepEqual(r.toNested(), [[6, 7], [7, 8], [8, 9], [9, 10]]);
});

test("seed 003: composition: 1x2 + 4x3x1 with broadcast_dimensions (1,2) gives 4x3x2", () => {
  const big = Literal.fromValues("s32", [4, 3, 1], Array.from({ length: 12 }, (_, i) => 10 * i));
  const r = run((m, x) => add(m, x, [1, 2]), lit("s32", [[1, 2]]), big);
  assert.deepEqual(r.dimensions, [4, 3, 2]);
  r.values().forEach((v, lin) => assert.equal(v, 10 * Math.floor(lin / 2) + (lin % 2) + 1));
});

test("broadcast_dimensions errors: wrong length, out of range, size mismatch, same-rank non-identity", () => {
  const b = new XlaBuilder("errs");
  const x = parameter(b, 0, arrayShape("f32", [2, 3]));
  const v = parameter(b, 1, arrayShape("f32", [3]));
  const y = parameter(b, 2, arrayShape("f32", [2, 3]));
  assertShapeError(() => add(x, v, [0, 1]), /needs one entry per dimension of the lower-rank operand rhs f32\[3\], got 2/);
  assertShapeError(() => add(x, v, [2]), /entry 0 is 2, out of range/);
  assertShapeError(() => add(x, v, [0]), /dimension 0 of rhs f32\[3\] has size 3 but dimension 0 of lhs f32\[2,3\] has size 2/);
  assertShapeError(() => add(x, y, [1, 0]), /must be empty or the identity/);
  assert.deepEqual(add(x, y, [0, 1]).arrayShape.dimensions, [2, 3]);
  assertShapeError(() => add(x, parameter(b, 3, arrayShape("s32", [2, 3]))), /same element type/);
});

test("the builder emits broadcastInDim so the IR op sees equal shapes", () => {
  const b = new XlaBuilder("ir");
  const x = parameter(b, 0, arrayShape("f32", [2, 3]));
  const v = parameter(b, 1, arrayShape("f32", [3]));
  const sum = mul(x, v, [1]);
  const inst = sum.instruction;
  assert.equal(inst.opcode, "multiply");
  assert.deepEqual(inst.operands.map((o) => shapeToString(o.shape)), ["f32[2,3]", "f32[2,3]"]);
  assert.equal(inst.operands[1]!.opcode, "broadcastInDim");
  assert.deepEqual(inst.operands[1]!.attrs, { dimensions: [2, 3], broadcastDimensions: [1] });
  // The IR op itself rejects unequal shapes.
  assertShapeError(() => inferShape("add", [arrayShape("f32", [2, 3]), arrayShape("f32", [3])], {}), /same dimensions/);
  assert.equal(b.build(sum).instructions.length, 4); // two parameters, one broadcast, the multiply
  // A rejected op leaves no stray broadcast behind.
  const b2 = new XlaBuilder("stray");
  const m = parameter(b2, 0, arrayShape("f32", [2, 3]));
  const w = parameter(b2, 1, arrayShape("s32", [3]));
  assertShapeError(() => add(m, w, [1]), /same element type/);
  assert.equal(b2.build(m).instructions.length, 2);
});

test("seed 000 Broadcast: scalar 2.0f with broadcast_sizes {2,3} is f32[2,3] of 2.0", () => {
  const r = run((s) => broadcast(s, [2, 3]), lit("f32", 2));
  assert.equal(shapeToString(r.shape), "f32[2,3]");
  assertValues(r, [2, 2, 2, 2, 2, 2]);
  // New dimensions are major: output[i0, j0] = operand[j0].
  assert.deepEqual(run((v) => broadcast(v, [2]), lit("s32", [1, 2, 3])).toNested(), [[1, 2, 3], [1, 2, 3]]);
});

test("StableHLO broadcast_in_dim: [[1],[2],[3]] (3x1) to 3x2x2 with broadcast_dimensions (0,2)", () => {
  const r = run((x) => broadcastInDim(x, [3, 2, 2], [0, 2]), lit("s64", [[1n], [2n], [3n]]));
  assert.deepEqual(r.toNested(), [[[1n, 1n], [1n, 1n]], [[2n, 2n], [2n, 2n]], [[3n, 3n], [3n, 3n]]]);
});

test("broadcastInDim: transposing maps, complex and pred elements, empty outputs", () => {
  // Operand dim 0 -> output dim 1 and dim 1 -> output dim 0: a transpose.
  const t = run((x) => broadcastInDim(x, [3, 2], [1, 0]), lit("s32", [[1, 2, 3], [4, 5, 6]]));
  assert.deepEqual(t.toNested(), [[1, 4], [2, 5], [3, 6]]);
  const c = run((x) => broadcastInDim(x, [2, 2], [1]), lit("c64", [{ re: 1, im: 2 }, { re: 3, im: 4 }]));
  assert.deepEqual(c.values(), [{ re: 1, im: 2 }, { re: 3, im: 4 }, { re: 1, im: 2 }, { re: 3, im: 4 }]);
  assertValues(run((x) => broadcastInDim(x, [2, 1], [1]), lit("pred", [true])), [true, true]);
  assert.deepEqual(run((x) => broadcastInDim(x, [0, 3], [1]), lit("f32", [1, 2, 3])).dimensions, [0, 3]);
});

test("broadcastInDim errors: size not 1 or equal, repeated or missing dimensions", () => {
  const b = new XlaBuilder("bid");
  const x = parameter(b, 0, arrayShape("f32", [2, 3]));
  assertShapeError(() => broadcastInDim(x, [4, 3], [0, 1]), /operand dimension 0 of f32\[2,3\] has size 2; .* must have size 1 or 4/);
  assertShapeError(() => broadcastInDim(parameter(b, 1, arrayShape("f32", [1, 3])), [3, 3], [1, 1]), /used twice/);
  assertShapeError(() => broadcastInDim(x, [2, 3], [0]), /one entry per operand dimension/);
  assertShapeError(() => broadcastInDim(x, [2, 3], [0, 2]), /out of range/);
});

test("rank-0 and empty operands broadcast too", () => {
  assert.deepEqual(run((x, s) => add(x, s), Literal.fromValues("f32", [0, 3], []), lit("f32", 1)).dimensions, [0, 3]);
  assert.deepEqual(run((x, y) => add(x, y), lit("f32", 1), lit("f32", 2)).toNumbers(), [3]);
  const r = evaluate((() => {
    const b = new XlaBuilder("e");
    add(parameter(b, 0, arrayShape("f32", [2, 0])), parameter(b, 1, arrayShape("f32", [1, 0])));
    return b.build();
  })(), [Literal.fromValues("f32", [2, 0], []), Literal.fromValues("f32", [1, 0], [])]);
  assert.deepEqual(r.dimensions, [2, 0]);
});
