// Front-end arrays: their properties and contents, JS values as arrays, JAX's type
// promotion (expected dtypes from JAX's promotion table), numpy broadcasting, eager
// execution through the cache of single-op executables, and disposal.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, jit, resultType, eagerCacheSize, FrontendError, ConcretizationError, type DType } from "../../src/index.js";

test("an array has numpy's shape, dtype, ndim, size; tolist, item and data give its contents", async () => {
  const x = np.array([[1, 2, 3], [4, 5, 6]], { dtype: "float32" });
  assert.deepEqual([x.shape, x.dtype, x.ndim, x.size], [[2, 3], "float32", 2, 6]);
  assert.deepEqual(x.tolist(), [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual([...(await x.data())], [1, 2, 3, 4, 5, 6]);
  assert.ok((await x.data()) instanceof Float32Array);
  assert.equal(np.array(7.5).item(), 7.5);
  assert.throws(() => x.item(), FrontendError);
  // 64-bit integers come back as bigint.
  assert.deepEqual(np.array([1, 2], { dtype: "int64" }).tolist(), [1n, 2n]);
  assert.equal(np.array([3n]).dtype, "int64");
  assert.deepEqual(np.array([true, false]).tolist(), [true, false]);
});

test("JS values infer numpy's dtypes; ragged nesting is a FrontendError", () => {
  assert.equal(np.array([1, 2]).dtype, "int32");
  assert.equal(np.array([1, 2.5]).dtype, "float32");
  assert.equal(np.array([true]).dtype, "bool");
  assert.throws(() => np.array([[1, 2], [3]]), /ragged/);
  assert.throws(() => np.array([1, "a" as never]), FrontendError);
});

test("an array is iterable over its leading axis", () => {
  const [a, b] = np.array([[1, 2], [3, 4]]);
  assert.deepEqual([a!.tolist(), b!.tolist()], [[1, 2], [3, 4]]);
  assert.throws(() => [...np.array(1)], FrontendError);
});

test("type promotion follows JAX's lattice (jnp.promote_types table), JS numbers are weak", () => {
  const strong = (dtype: DType) => ({ dtype, weakType: false });
  const cases: [DType, DType, DType][] = [
    ["int8", "uint8", "int16"], ["uint8", "int32", "int32"], ["int32", "float16", "float16"], ["bfloat16", "float16", "float32"],
    ["uint32", "int32", "int64"], ["float32", "complex64", "complex64"], ["float64", "complex64", "complex128"], ["bool", "uint16", "uint16"],
    ["int64", "bfloat16", "bfloat16"], ["float16", "float64", "float64"],
  ];
  for (const [a, b, want] of cases) {
    assert.equal(resultType(strong(a), strong(b)).dtype, want, `${a} + ${b}`);
    assert.equal(resultType(strong(b), strong(a)).dtype, want, `${b} + ${a}`);
  }
  const x16 = np.array([1, 2], { dtype: "float16" });
  assert.equal(np.add(x16, 2).dtype, "float16");
  assert.equal(np.add(np.array([1], { dtype: "uint8" }), 3).dtype, "uint8");
  assert.equal(np.add(np.array([1], { dtype: "int32" }), 0.5).dtype, "float32");
  assert.deepEqual(np.multiply(np.array([1, 2], { dtype: "int8" }), 3).tolist(), [3, 6]);
  // Two weak values stay weak; the result is the default dtype of the category.
  const w = np.add(1, 2.5);
  assert.deepEqual([w.dtype, w.weakType, w.item()], ["float32", true, 3.5]);
});

test("numpy broadcasting, and its errors", () => {
  const out = np.add(np.array([[1], [2]]), np.array([10, 20, 30]));
  assert.deepEqual(out.tolist(), [[11, 21, 31], [12, 22, 32]]);
  assert.throws(() => np.add(np.zeros([2, 3]), np.zeros([4])), /do not broadcast/);
});

test("eager ops are cached: a second call with the same signature compiles nothing", () => {
  const x = np.array([1, 2, 3], { dtype: "float32" });
  np.sin(x);
  const before = eagerCacheSize();
  const y = np.sin(np.array([4, 5, 6], { dtype: "float32" }));
  assert.equal(eagerCacheSize(), before);
  assert.ok(Math.abs(Number((y.tolist() as number[])[0]) - Math.sin(4)) < 1e-6);
});

test("arrays are values: using one twice is right; dispose frees it and a later use throws", () => {
  const x = np.array([1, 2, 3], { dtype: "float32" });
  assert.deepEqual(np.add(x, x).tolist(), [2, 4, 6]);
  assert.deepEqual(np.multiply(x, x).tolist(), [1, 4, 9]);
  const c = np.sum(x) as unknown as { dispose(): void };
  c.dispose();
  assert.throws(() => np.add(c as never, 1), /disposed/);
  assert.deepEqual(x.tolist(), [1, 2, 3]);
});

test("reading a traced value is a ConcretizationError naming the transformation", () => {
  assert.throws(() => jit((x: ReturnType<typeof np.array>) => x.item())(np.array([1])), (e: unknown) => e instanceof ConcretizationError && /inside jit/.test(e.message));
});
