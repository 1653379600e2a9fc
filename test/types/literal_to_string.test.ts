// Literal.toString: each float as the shortest decimal that reads back as the same value
// of its own type (numpy's repr gives the same digits: float32(1/3) is 0.33333334,
// float16(1/3) 0.3333), and arrays past numpy's print threshold (1000 elements)
// summarised as numpy does: 3 items at each end of a long dimension around "...".

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, ShapeError, arrayShape } from "../../src/index.js";

test("floats print as the shortest decimal of their own type, not as the double", () => {
  // The f32 nearest 0.1 is 0.100000001490116119384765625: String() of it printed 0.10000000149011612.
  assert.equal(Literal.fromValues("f32", [4], [0.1, 1 / 3, -2.5, 1e-8]).toString(), "f32[4] {0.1, 0.33333334, -2.5, 1e-8}");
  assert.equal(Literal.fromValues("f16", [3], [0.1, 1 / 3, 65504]).toString(), "f16[3] {0.1, 0.3333, 65504}");
  // bf16 values near 1/3 are 1/512 apart: 0.333984375 is the nearest, and 0.334 the shortest decimal nearest to it.
  assert.equal(Literal.fromValues("bf16", [2], [1 / 3, 0.1]).toString(), "bf16[2] {0.334, 0.1}");
  assert.equal(Literal.fromValues("f64", [1], [0.1]).toString(), "f64[1] {0.1}");
  assert.equal(Literal.fromValues("c64", [1], [{ re: 0.1, im: 1 / 3 }]).toString(), "c64[1] {(0.1, 0.33333334)}");
  assert.equal(Literal.fromValues("f32", [4], [NaN, Infinity, -Infinity, -0]).toString(), "f32[4] {nan, inf, -inf, -0}");
});

test("arrays over 1000 elements print summarised, 3 items each side of '...' per long dimension", () => {
  const iota = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
  assert.equal(Literal.fromValues("s32", [1000], iota(1000)).toString().split(", ").length, 1000);
  assert.equal(Literal.fromValues("s32", [1001], iota(1001)).toString(), "s32[1001] {0, 1, 2, ..., 998, 999, 1000}");
  const big = Literal.fromValues("f32", [300, 300], iota(90000));
  const text = big.toString();
  assert.equal(text, "f32[300,300] {{0, 1, 2, ..., 297, 298, 299}, {300, 301, 302, ..., 597, 598, 599}, {600, 601, 602, ..., 897, 898, 899}, ..., "
    + "{89100, 89101, 89102, ..., 89397, 89398, 89399}, {89400, 89401, 89402, ..., 89697, 89698, 89699}, {89700, 89701, 89702, ..., 89997, 89998, 89999}}");
  // A short dimension is shown whole, also inside a summarised array; tuples summarise each element.
  const wide = Literal.fromValues("s32", [2, 600], iota(1200));
  assert.equal(wide.toString(), "s32[2,600] {{0, 1, 2, ..., 597, 598, 599}, {600, 601, 602, ..., 1197, 1198, 1199}}");
  assert.equal(Literal.tuple([wide, Literal.scalar("pred", true)]).toString(), `(${wide.toString()}, pred[] true)`);
});

test("a summary follows the logical order whatever the layout", () => {
  const values = Array.from({ length: 2 * 700 }, (_, i) => i);
  const rowMajor = Literal.fromValues("s32", [2, 700], values);
  const columnMajor = rowMajor.relayout({ minorToMajor: [0, 1] });
  assert.equal(columnMajor.toString().replace(/\{1,0\}|\{0,1\}/, ""), rowMajor.toString().replace(/\{1,0\}|\{0,1\}/, ""));
});

test("literals take numpy's dtype names for XLA's element types; an unknown name is a ShapeError naming the argument", () => {
  // numpy: float32 is f32, int64 s64, uint8 u8, bool pred, complex64 c64; ml_dtypes: bfloat16 bf16.
  const pairs = [["float32", "f32"], ["float64", "f64"], ["float16", "f16"], ["int64", "s64"], ["uint8", "u8"], ["bool", "pred"], ["complex64", "c64"], ["bfloat16", "bf16"]] as const;
  for (const [numpy, xla] of pairs) assert.equal(Literal.from(numpy, []).elementType, xla);
  assert.equal(Literal.from("float32", [[1.5, 2]]).toString(), "f32[1,2] {{1.5, 2}}");
  assert.equal(Literal.scalar("int32", 7).toString(), "s32[] 7");
  assert.throws(() => Literal.from("float33" as never, [1]), (e: unknown) => e instanceof ShapeError && /^Literal\.from: unknown element type "float33"/.test(e.message));
  assert.throws(() => Literal.fromValues(undefined as never, [1], [1]), (e: unknown) => e instanceof ShapeError && /^Literal\.fromValues: unknown element type/.test(e.message));
});

test("an empty array with huge dimensions prints a summary, not a list per index (the text fuzzer's hang, seed 11 input 22420)", () => {
  assert.equal(Literal.zeros(arrayShape("s4", [1e6, 0, 3])).toString(), "s4[1000000,0,3] {{}, {}, {}, ..., {}, {}, {}}");
  assert.equal(Literal.zeros(arrayShape("s4", [2 ** 53, 0, 3])).toString(), "s4[9007199254740992,0,3] {{}, {}, {}, ..., {}, {}, {}}");
  // Small empty arrays print whole, as before.
  assert.equal(Literal.zeros(arrayShape("f32", [2, 0])).toString(), "f32[2,0] {{}, {}}");
});
