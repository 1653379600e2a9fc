// sort, argsort, topK and lax.sort of several operands, and split, tile, repeat, roll and
// pad, against values worked out by hand (numpy's documented results), with their
// derivatives and batching.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, grad, vmap, jit, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const f32 = (v: unknown): A => np.array(v as number[], { dtype: "float32" });

test("sort and argsort: ascending, descending, stable ties, NaN last, axes", () => {
  assert.deepEqual(np.sort([3, 1, 2]).tolist(), [1, 2, 3]);
  assert.deepEqual(np.sort([3, 1, 2], { descending: true }).tolist(), [3, 2, 1]);
  assert.deepEqual(np.sort(f32([2, NaN, -1])).tolist(), [-1, 2, NaN]);
  assert.deepEqual(np.sort([[3, 1], [1, 2]], { axis: 0 }).tolist(), [[1, 1], [3, 2]]);
  assert.deepEqual(np.sort([[3, 1], [1, 2]], { axis: null }).tolist(), [1, 1, 2, 3]);
  assert.deepEqual(np.argsort([3, 1, 2]).tolist(), [1, 2, 0]);
  assert.deepEqual(np.argsort([1, 0, 1, 0]).tolist(), [1, 3, 0, 2]);
  assert.deepEqual(np.argsort([1, 3, 3, 2], { descending: true }).tolist(), [1, 2, 3, 0]);
  assert.deepEqual((jit((v: A) => np.argsort(v))(np.array([5, 4, 6])) as A).tolist(), [1, 0, 2]);
  assert.throws(() => np.sort(np.array(1)), (e: unknown) => e instanceof FrontendError && /0-d/.test(e.message));
});

test("lax.sort of several operands by one or two keys; topK", () => {
  const [k, v] = lax.sort([np.array([2, 1, 2]), np.array([10, 20, 30])]) as A[];
  assert.deepEqual([k!.tolist(), v!.tolist()], [[1, 2, 2], [20, 10, 30]]);
  const [a, b] = lax.sort([np.array([1, 1, 0]), np.array([5, 3, 9])], { numKeys: 2 }) as A[];
  assert.deepEqual([a!.tolist(), b!.tolist()], [[0, 1, 1], [9, 3, 5]]);
  const [values, indices] = lax.topK(np.array([1, 3, 3, 2]), 2);
  assert.deepEqual([values.tolist(), indices.tolist()], [[3, 3], [1, 2]]);
  assert.throws(() => lax.topK(np.array([1, 2]), 3), /k = 3/);
  assert.throws(() => lax.sort([np.array([1]), np.array([1, 2])]), /different shapes/);
});

test("derivatives and batching of sort and topK follow the permutation", () => {
  // sort([3, 1, 2]) = [1, 2, 3] takes x[1], x[2], x[0]: weights 1, 2, 3 land on [3, 1, 2].
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(np.sort(x), f32([1, 2, 3]))))(f32([3, 1, 2])) as A).tolist(), [3, 1, 2]);
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(lax.topK(x, 2)[0], f32([1, 10]))))(f32([1, 4, 3, 2])) as A).tolist(), [0, 1, 10, 0]);
  assert.deepEqual((vmap((x: A) => np.sort(x))(np.array([[3, 1, 2], [0, -1, 5]])) as A).tolist(), [[1, 2, 3], [-1, 0, 5]]);
});

test("split, tile, repeat, roll and pad", () => {
  const six = np.arange(6);
  assert.deepEqual(np.split(six, 3).map((p) => p.tolist()), [[0, 1], [2, 3], [4, 5]]);
  assert.deepEqual(np.split(six, [2, -1]).map((p) => p.tolist()), [[0, 1], [2, 3, 4], [5]]);
  assert.deepEqual(np.split(six, [4, 2]).map((p) => p.tolist()), [[0, 1, 2, 3], [], [2, 3, 4, 5]]);
  assert.throws(() => np.split(six, 4), /equal sections/);
  assert.deepEqual(np.tile([1, 2], 2).tolist(), [1, 2, 1, 2]);
  assert.deepEqual(np.tile([[1, 2]], [2, 1]).tolist(), [[1, 2], [1, 2]]);
  assert.deepEqual(np.tile([1, 2], [2, 2]).tolist(), [[1, 2, 1, 2], [1, 2, 1, 2]]);
  assert.deepEqual(np.repeat([1, 2], 2).tolist(), [1, 1, 2, 2]);
  assert.deepEqual(np.repeat([[1, 2], [3, 4]], 2, { axis: 1 }).tolist(), [[1, 1, 2, 2], [3, 3, 4, 4]]);
  assert.deepEqual(np.repeat([[1, 2], [3, 4]], 2).tolist(), [1, 1, 2, 2, 3, 3, 4, 4]);
  assert.deepEqual(np.repeat([1, 2, 3], [0, 2, 1]).tolist(), [2, 2, 3]);
  assert.throws(() => np.repeat([1, 2], [1]), /2 counts|1 counts/);
  assert.deepEqual(np.roll(np.arange(5), 2).tolist(), [3, 4, 0, 1, 2]);
  assert.deepEqual(np.roll(np.arange(5), -1).tolist(), [1, 2, 3, 4, 0]);
  const m = np.reshape(six, [2, 3]);
  assert.deepEqual(np.roll(m, 1).tolist(), [[5, 0, 1], [2, 3, 4]]);
  assert.deepEqual(np.roll(m, 1, { axis: 1 }).tolist(), [[2, 0, 1], [5, 3, 4]]);
  assert.deepEqual(np.pad([1, 2], 1).tolist(), [0, 1, 2, 0]);
  assert.deepEqual(np.pad([[1]], [[0, 1], [2, 0]], { constantValues: 9 }).tolist(), [[9, 9, 1], [9, 9, 9]]);
  assert.deepEqual(np.pad([1, 2], 1, { mode: "edge" }).tolist(), [1, 1, 2, 2]); // the other modes in pad.test.ts
  // Derivatives come from the primitives: d/dx sum(repeat(x, [0, 2, 1]) · [1, 2, 3]) = [0, 1 + 2, 3].
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(np.repeat(x, [0, 2, 1]), f32([1, 2, 3]))))(f32([5, 6, 7])) as A).tolist(), [0, 3, 3]);
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(np.roll(x, 1), f32([1, 2, 3]))))(f32([5, 6, 7])) as A).tolist(), [2, 3, 1]);
  assert.deepEqual((grad((x: A) => np.sum(np.multiply(np.tile(x, 2), f32([1, 2, 3, 4]))))(f32([5, 6])) as A).tolist(), [4, 6]);
});
