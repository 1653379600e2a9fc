// compare (all directions, FLOAT/TOTALORDER/SIGNED/UNSIGNED), select and clamp:
// seed 000 examples, conformance cases (compare/select/clamp.mlir), edge cases.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, clamp, compare, constantLiteral, eq, eqTotalOrder, ge, gt, le, lt, ltTotalOrder, ne, parameter, select,
  tupleShape, XlaBuilder, Literal, type ComparisonDirection, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { assertFloats, assertShapeError, assertValues, floats, lit, run } from "./helpers.js";

const T = true;
const F = false;

test("compare integers and pred (conformance compare.mlir)", () => {
  const s = [-2n, -1n, 0n, 2n, 2n];
  const r = [-2n, -2n, 0n, 1n, 2n];
  const cases: [ComparisonDirection, boolean[]][] = [
    ["EQ", [T, F, T, F, T]], ["NE", [F, T, F, T, F]], ["GE", [T, T, T, T, T]],
    ["GT", [F, T, F, T, F]], ["LE", [T, F, T, F, T]], ["LT", [F, F, F, F, F]],
  ];
  for (const [dir, expected] of cases) {
    assertValues(run((x, y) => compare(x, y, dir, { compareType: "SIGNED" }), lit("s64", s), lit("s64", r)), expected);
  }
  const u: [ComparisonDirection, boolean[]][] = [["EQ", [T, F]], ["NE", [F, T]], ["GE", [T, T]], ["GT", [F, T]], ["LE", [T, F]], ["LT", [F, F]]];
  for (const [dir, expected] of u) assertValues(run((x, y) => compare(x, y, dir), lit("u64", [0n, 1n]), lit("u64", [0n, 0n])), expected);
  const p: [ComparisonDirection, boolean[]][] = [
    ["EQ", [T, F, F, T]], ["NE", [F, T, T, F]], ["GE", [T, T, F, T]], ["GT", [F, T, F, F]], ["LE", [T, F, T, T]], ["LT", [F, F, T, F]],
  ];
  for (const [dir, expected] of p) {
    assertValues(run((x, y) => compare(x, y, dir, { compareType: "UNSIGNED" }), lit("pred", [T, T, F, F]), lit("pred", [T, F, T, F])), expected);
  }
  assertValues(run((x, y) => eq(x, y), lit("s64", -2n), lit("s64", -2n)), [T]);
  // Unsigned 32-bit values above 2^31 order as unsigned.
  assertValues(run((x, y) => gt(x, y), lit("u32", [0x80000000]), lit("u32", [1])), [T]);
});

const NEG_NAN = { bits: 0xfff0000000000001n };
const NAN1 = { bits: 0x7ff0000000000001n };
const NAN_MAX = { bits: 0x7fffffffffffffffn };
const LHS = [NEG_NAN, NEG_NAN, -Infinity, -Infinity, -2, -2, -0, -0, 0, 1, 2, Infinity, NAN1, NAN1];
const RHS = [NEG_NAN, NAN1, -Infinity, Infinity, -2, -1, -0, 0, 0, 2, 2, Infinity, NAN1, NAN_MAX];

test("compare f64 with FLOAT (IEEE) semantics (conformance compare.mlir)", () => {
  const cases: [ComparisonDirection, boolean[]][] = [
    ["EQ", [F, F, T, F, T, F, T, T, T, F, T, T, F, F]],
    ["NE", [T, T, F, T, F, T, F, F, F, T, F, F, T, T]],
    ["GE", [F, F, T, F, T, F, T, T, T, F, T, T, F, F]],
    ["GT", [F, F, F, F, F, F, F, F, F, F, F, F, F, F]],
    ["LE", [F, F, T, T, T, T, T, T, T, T, T, T, F, F]],
    ["LT", [F, F, F, T, F, T, F, F, F, T, F, F, F, F]],
  ];
  for (const [dir, expected] of cases) {
    assertValues(run((x, y) => compare(x, y, dir, { compareType: "FLOAT" }), floats("f64", LHS), floats("f64", RHS)), expected);
  }
});

test("compare f32 subnormals: distinct from zero and from each other (a GPU may flush them to zero)", () => {
  const tiny = { bits: 1 }, negTiny = { bits: 0x80000001 }, largest = { bits: 0x007fffff };
  const lhs = floats("f32", [tiny, negTiny, tiny, tiny, largest, -0]);
  const rhs = floats("f32", [0, -0, negTiny, largest, { bits: 0x00800000 }, negTiny]);
  const cases: [ComparisonDirection, boolean[]][] = [
    ["EQ", [F, F, F, F, F, F]],
    ["NE", [T, T, T, T, T, T]],
    ["LT", [F, T, F, T, T, F]],
    ["LE", [F, T, F, T, T, F]],
    ["GT", [T, F, T, F, F, T]],
    ["GE", [T, F, T, F, F, T]],
  ];
  for (const [dir, expected] of cases) assertValues(run((x, y) => compare(x, y, dir), lhs, rhs), expected);
  // select on the compare: the smaller of each pair (y where they are equal), the zeros' signs kept.
  const t = 2 ** -149;
  assertFloats(run((x, y) => select(lt(x, y), x, y), lhs, rhs), [0, -t, -t, t, (2 ** 23 - 1) * t, -t]);
});

test("compare with TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN (seed 000)", () => {
  assertValues(run((x, y) => eqTotalOrder(x, y), floats("f64", LHS), floats("f64", RHS)), [T, F, T, F, T, F, T, F, T, F, T, T, T, F]);
  assertValues(run((x, y) => ltTotalOrder(x, y), floats("f64", LHS), floats("f64", RHS)), [F, T, F, T, F, T, F, T, F, T, F, F, F, T]);
  // The same order on f32, bf16 and f8 bit patterns.
  const f32 = floats("f32", [{ bits: 0xffc00000 }, -Infinity, -1, -0, 0, 1, Infinity, { bits: 0x7fc00000 }]);
  const sorted = f32.values().length;
  for (let i = 0; i + 1 < sorted; i++) {
    const a = Literal.fromStorage(arrayShape("f32", [1]), new Float32Array(f32.data.buffer.slice(i * 4, i * 4 + 4)));
    const b = Literal.fromStorage(arrayShape("f32", [1]), new Float32Array(f32.data.buffer.slice(i * 4 + 4, i * 4 + 8)));
    assertValues(run((x, y) => ltTotalOrder(x, y), a, b), [T]);
    assertValues(run((x, y) => ltTotalOrder(x, y), b, a), [F]);
  }
  assertValues(run((x, y) => ltTotalOrder(x, y), floats("bf16", [-0, { bits: 0xffc0 }, 1]), floats("bf16", [0, -Infinity, { bits: 0x7fc0 }])), [T, T, T]);
  assertValues(run((x, y) => ltTotalOrder(x, y), floats("f8e4m3fn", [-0, -448]), floats("f8e4m3fn", [0, -0])), [T, T]);
  // IEEE comparison of the same values: -0 == +0, NaN unordered.
  assertValues(run((x, y) => eq(x, y), floats("bf16", [-0, { bits: 0x7fc0 }]), floats("bf16", [0, { bits: 0x7fc0 }])), [T, F]);
});

test("compare complex: EQ and NE only (conformance compare.mlir)", () => {
  const l = [{ re: NaN, im: 0 }, { re: 0, im: NaN }, { re: -0, im: 0 }, { re: 2, im: 2 }];
  const r = [{ re: NaN, im: -0 }, { re: -0, im: NaN }, { re: 0, im: 0 }, { re: 2, im: 1 }];
  assertValues(run((x, y) => eq(x, y), lit("c128", l), lit("c128", r)), [F, F, T, F]);
  assertValues(run((x, y) => ne(x, y), lit("c128", l), lit("c128", r)), [T, T, F, T]);
  assertShapeError(() => run((x, y) => lt(x, y), lit("c64", [l[3]!]), lit("c64", [r[3]!])), /complex values have no order/);
});

test("compare: comparison types must fit the element type; operands broadcast (seed 003)", () => {
  assertShapeError(() => run((x, y) => compare(x, y, "LT", { compareType: "TOTALORDER" }), lit("s32", [1]), lit("s32", [2])),
    /TOTALORDER comparison is not defined for s32\[1\]/);
  assertShapeError(() => run((x, y) => compare(x, y, "LT", { compareType: "SIGNED" }), lit("u8", [1]), lit("u8", [2])), /SIGNED/);
  assertShapeError(() => run((x, y) => compare(x, y, "LT", { compareType: "FLOAT" }), lit("s8", [1]), lit("s8", [2])), /FLOAT/);
  const r = run((m, v) => ge(m, v, [1]), lit("f32", [[1, 5, 3], [4, 2, 6]]), lit("f32", [2, 2, 7]));
  assert.equal(r.elementType, "pred");
  assertValues(r, [F, T, F, T, T, F]);
  assertValues(run((x, s) => le(x, s), lit("s16", [1, 2, 3]), lit("s16", 2)), [T, T, F]);
});

test("seed 000 Select: non-scalar and scalar pred", () => {
  const v1 = lit("s32", [1, 2, 3, 4]);
  const v2 = lit("s32", [100, 200, 300, 400]);
  assertValues(run((p, a, b) => select(p, a, b), lit("pred", [T, F, F, T]), v1, v2), [1, 200, 300, 4]);
  assertValues(run((p, a, b) => select(p, a, b), lit("pred", T), v1, v2), [1, 2, 3, 4]);
  // conformance select.mlir
  assertValues(run((p, a, b) => select(p, a, b), lit("pred", [T, F, T]), lit("s64", [2n, 3n, -1n]), lit("s64", [3n, 7n, -3n])), [2n, 7n, -1n]);
  assertValues(run((p, a, b) => select(p, a, b), lit("pred", F), lit("s64", [2n, 3n, -1n]), lit("s64", [3n, 7n, -3n])), [3n, 7n, -3n]);
  assertValues(run((p, a, b) => select(p, a, b), lit("pred", [T, F]), lit("c64", [{ re: 1, im: 2 }, { re: 3, im: 4 }]), lit("c64", [{ re: 5, im: 6 }, { re: 7, im: 8 }])),
    [{ re: 1, im: 2 }, { re: 7, im: 8 }]);
});

test("seed 000 Select between tuples with a scalar pred", () => {
  const b = new XlaBuilder("tsel");
  const tshape = tupleShape([arrayShape("f32", [2]), arrayShape("s32", [])]);
  const p = parameter(b, 0, arrayShape("pred", []));
  const x = parameter(b, 1, tshape);
  const y = parameter(b, 2, tshape);
  const root = select(p, x, y);
  const c = b.build(root);
  const tx = Literal.tuple([lit("f32", [1, 2]), lit("s32", 3)]);
  const ty = Literal.tuple([lit("f32", [4, 5]), lit("s32", 6)]);
  assert.deepEqual(evaluate(c, [lit("pred", false), tx, ty]).elements.map((e) => e.toNumbers()), [[4, 5], [6]]);
  assert.deepEqual(evaluate(c, [lit("pred", true), tx, ty]).elements.map((e) => e.toNumbers()), [[1, 2], [3]]);
  const b2 = new XlaBuilder("tsel2");
  assertShapeError(() => select(parameter(b2, 0, arrayShape("pred", [2])), parameter(b2, 1, tshape), parameter(b2, 2, tshape)), /pred: must be a scalar/);
});

test("select errors: pred type and shape, branch shapes", () => {
  const b = new XlaBuilder("se");
  const a = parameter(b, 0, arrayShape("f32", [3]));
  const c = parameter(b, 1, arrayShape("f32", [4]));
  const p3 = parameter(b, 2, arrayShape("pred", [3]));
  const p2 = parameter(b, 3, arrayShape("pred", [2]));
  const s3 = parameter(b, 4, arrayShape("s32", [3]));
  assertShapeError(() => select(p3, a, c), /on_false: f32\[4\] does not have the dimensions of on_true f32\[3\]; only a scalar is broadcast/);
  assertShapeError(() => select(p2, a, a), /pred: pred\[2\] does not have the dimensions of on_true f32\[3\]/);
  assertShapeError(() => select(s3, a, a), /pred: element type must be pred/);
  assertShapeError(() => select(p3, a, s3), /same element type/);
});

test("seed 000 Clamp: scalar min and max; conformance clamp.mlir", () => {
  assertValues(run((lo, x, hi) => clamp(lo, x, hi), lit("s32", 0), lit("s32", [-1, 5, 9]), lit("s32", 6)), [0, 5, 6]);
  const x = lit("s64", [2n, 3n, -1n]);
  assertValues(run((lo, v, hi) => clamp(lo, v, hi), lit("s64", [1n, 5n, -5n]), x, lit("s64", [3n, 7n, -3n])), [2n, 5n, -3n]);
  assertValues(run((lo, v, hi) => clamp(lo, v, hi), lit("s64", [0n, 0n, -2n]), x, lit("s64", 1n)), [1n, 1n, -1n]);
  assertValues(run((lo, v, hi) => clamp(lo, v, hi), lit("s64", 0n), x, lit("s64", [1n, 1n, 4n])), [1n, 1n, 0n]);
  assertValues(run((lo, v, hi) => clamp(lo, v, hi), lit("s64", 0n), x, lit("s64", 1n)), [1n, 1n, 0n]);
});

test("clamp: floats with NaN, unsigned, errors", () => {
  const r = run((lo, v, hi) => clamp(lo, v, hi), lit("f32", 0), lit("f32", [NaN, -1, 0.5, 2]), lit("f32", 1));
  assert.ok(Number.isNaN(r.toNumbers()[0]));
  assert.deepEqual(r.toNumbers().slice(1), [0, 0.5, 1]);
  assertValues(run((lo, v, hi) => clamp(lo, v, hi), lit("u32", 10), lit("u32", [0, 0xffffffff, 20]), lit("u32", 15)), [10, 15, 15]);
  const b = new XlaBuilder("ce");
  const v: XlaOp = parameter(b, 0, arrayShape("f32", [3]));
  assertShapeError(() => clamp(constantLiteral(b, lit("f32", [0, 0])), v, constantLiteral(b, lit("f32", 1))),
    /clamp: min: f32\[2\] must be a scalar or have the dimensions of operand f32\[3\]/);
  assertShapeError(() => clamp(constantLiteral(b, lit("s32", 0)), v, constantLiteral(b, lit("f32", 1))), /min: s32\[\] must have the element type/);
});
