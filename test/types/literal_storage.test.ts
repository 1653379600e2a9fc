// Literal.fromStorage wraps a typed array of storagePerElement entries an element (two,
// re then im, for the complex types) and refuses any other length, naming what it needs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, ShapeError, arrayShape } from "../../src/index.js";

test("Literal.fromStorage takes two stored values an element for c64 and c128, one for every other type", () => {
  const c64 = Literal.fromStorage(arrayShape("c64", [2]), new Float32Array([1, -2, 3.5, 0]));
  assert.deepEqual(c64.values(), [{ re: 1, im: -2 }, { re: 3.5, im: 0 }]);
  const c128 = Literal.fromStorage(arrayShape("c128", []), new Float64Array([0.1, 7]));
  assert.deepEqual(c128.values(), [{ re: 0.1, im: 7 }]);
  assert.deepEqual(Literal.fromStorage(arrayShape("f32", [2, 2]), new Float32Array([1, 2, 3, 4])).values(), [1, 2, 3, 4]);
  assert.deepEqual(Literal.fromStorage(arrayShape("s4", [3]), new Int8Array([-8, 0, 7])).values(), [-8, 0, 7]);
  const refused: [string, () => Literal, RegExp][] = [
    ["c64 with one value an element", () => Literal.fromStorage(arrayShape("c64", [2]), new Float32Array(2)), /c64\[2\].* needs 4 stored values, got 2/],
    ["c128 with three values", () => Literal.fromStorage(arrayShape("c128", []), new Float64Array(3)), /needs 2 stored values, got 3/],
    ["f32 with two values an element", () => Literal.fromStorage(arrayShape("f32", [3]), new Float32Array(6)), /f32\[3\].* needs 3 stored values, got 6/],
  ];
  for (const [what, make, message] of refused) {
    assert.throws(make, (e: unknown) => e instanceof ShapeError && message.test((e as Error).message), what);
  }
});
