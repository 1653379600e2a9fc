// The eager ops' executable cache is bounded: sweeping through more shapes than its
// limit keeps at most `limit` executables, and an evicted op compiles again with the
// same values.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, eagerCacheSize, FrontendError } from "../../src/index.js";
import { setEagerCacheLimit } from "../../src/frontend/core.js";

test("the eager cache keeps at most its limit of executables, least recently used evicted first", () => {
  const previous = setEagerCacheLimit(4);
  try {
    assert.ok(eagerCacheSize() <= 4);
    for (let n = 1; n <= 12; n++) {
      const x = np.arange(0, n, 1, { dtype: "float32" });
      // negative(x) for x = 0..n-1: -(n-1) at the end.
      assert.equal((np.negative(x).tolist() as number[])[n - 1], -(n - 1));
      assert.ok(eagerCacheSize() <= 4, `${eagerCacheSize()} executables cached`);
    }
    // The first shapes were evicted; using them again compiles them again, with the same values.
    assert.deepEqual(np.negative(np.array([1, 2], { dtype: "float32" })).tolist(), [-1, -2]);
    assert.ok(eagerCacheSize() <= 4);
    // Lowering the limit evicts at once.
    setEagerCacheLimit(1);
    assert.equal(eagerCacheSize(), 1);
  } finally {
    setEagerCacheLimit(previous);
  }
});

test("the eager cache's limit is a positive integer", () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => setEagerCacheLimit(bad), FrontendError);
});

test("np.matmul of two matrices runs one eager op: its operands' broadcasts to their own shapes are no ops", () => {
  const a = np.array([[1, 2], [3, 4]], { dtype: "float32" });
  const b = np.array([[5, 6], [7, 8]], { dtype: "float32" });
  assert.deepEqual(np.matmul(a, b).tolist(), [[19, 22], [43, 50]]);
  assert.equal(np.broadcastTo(a, [2, 2]), a);
  // A new shape: exactly one new executable (the dot), none for copies of the operands.
  const c = np.array([[1, 2, 3], [4, 5, 6]], { dtype: "float32" });
  const before = eagerCacheSize();
  assert.deepEqual(np.matmul(a, c).tolist(), [[9, 12, 15], [19, 26, 33]]);
  assert.equal(eagerCacheSize(), before + 1);
});
