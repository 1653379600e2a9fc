// np.linalg.norm against norms worked out by hand (numpy's definitions).

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, grad, FrontendError, type FrontendArray } from "../../src/index.js";

const close = (a: unknown, b: number, tol = 1e-6): void => assert.ok(Math.abs(Number(a) - b) <= tol * (1 + Math.abs(b)), `${String(a)} vs ${b}`);

test("linalg.norm: vector norms (2, 1, inf, -inf, 0, p) and matrix norms (fro, 1, -1, inf, -inf), axes and keepdims", () => {
  const v = [3, -4];
  close(np.linalg.norm(v).item(), 5);
  close(np.linalg.norm(v, 1).item(), 7);
  close(np.linalg.norm(v, Infinity).item(), 4);
  close(np.linalg.norm(v, -Infinity).item(), 3);
  close(np.linalg.norm(v, 0).item(), 2);
  close(np.linalg.norm(v, 3).item(), Math.cbrt(91));
  const m = [[1, -2], [3, 4]];
  close(np.linalg.norm(m).item(), Math.sqrt(30));
  close(np.linalg.norm(m, "fro").item(), Math.sqrt(30));
  close(np.linalg.norm(m, 1).item(), 6, 1e-7);
  close(np.linalg.norm(m, -1).item(), 4);
  close(np.linalg.norm(m, Infinity).item(), 7);
  close(np.linalg.norm(m, -Infinity).item(), 3);
  const rows = np.linalg.norm(m, null, { axis: 1 }).tolist() as number[];
  close(rows[0], Math.sqrt(5));
  close(rows[1], 5);
  assert.deepEqual(np.linalg.norm(m, null, { axis: 1, keepdims: true }).shape, [2, 1]);
  assert.deepEqual(np.linalg.norm(m, null, { keepdims: true }).shape, [1, 1]);
  // A stack of the matrix and its negation, the matrix axes last: column sums [4, 6] each.
  const stacked = np.stack([np.array(m), np.negative(np.array(m))]);
  assert.deepEqual(np.linalg.norm(stacked, 1, { axis: [1, 2] }).tolist(), [6, 6]);
  assert.deepEqual(np.linalg.norm(stacked, Infinity, { axis: [2, 1] }).tolist(), [6, 6]);
  assert.deepEqual(((grad((x: FrontendArray) => np.linalg.norm(x))(np.array([3, 4], { dtype: "float32" })) as FrontendArray).tolist() as number[]).map((x) => Math.round(Number(x) * 1e6) / 1e6), [0.6, 0.8]);
  assert.throws(() => np.linalg.norm(m, "nuc"), (e: unknown) => e instanceof FrontendError && /singular values/.test(e.message));
  assert.throws(() => np.linalg.norm(m, "fro", { axis: 0 }), /two axes/);
  assert.throws(() => np.linalg.norm(m, null, { axis: [1, 1] }), /same/);
});
