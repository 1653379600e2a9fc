// numpy indexing (x.index), JAX's x.at[...] updates, take and takeAlongAxis, against
// values worked out by hand from x[i][j][k] = 12i + 4j + k (numpy's rules), and their
// derivatives and batching against hand-computed gradients and loops.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, jit, grad, vmap, FrontendError, ConcretizationError, type FrontendArray } from "../../src/index.js";

/** x[i][j][k] = 12i + 4j + k, int32 of shape [2, 3, 4]. */
const x = np.reshape(np.arange(24), [2, 3, 4]);

test("basic indexing: integers, slice strings, negative steps, null, ellipsis", () => {
  assert.deepEqual(x.index(1).tolist(), [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]);
  assert.deepEqual(x.index(":", 1, "::-2").tolist(), [[7, 5], [19, 17]]);
  assert.deepEqual(x.index("...", -1).tolist(), [[3, 7, 11], [15, 19, 23]]);
  assert.deepEqual(x.index(0, null, "1:", "-3:-1").tolist(), [[[5, 6], [9, 10]]]);
  assert.deepEqual(x.index(np.newaxis).shape, [1, 2, 3, 4]);
  assert.deepEqual(x.index("5:").shape, [0, 3, 4]);
  assert.deepEqual(x.index(1, 2, 3).tolist(), 23);
  assert.deepEqual(x.index("::-1", 0, 0).tolist(), [12, 0]);
  assert.deepEqual(np.arange(10).index("8:2:-3").tolist(), [8, 5]);
});

test("advanced indexing: integer arrays broadcast, adjacent ones stay in place, separated ones go first", () => {
  // Separated by a slice: the broadcast dimension first; out[b][j] = x[[1,0][b]][j][[0,3][b]].
  assert.deepEqual(x.index([1, 0], ":", [0, 3]).tolist(), [[12, 16, 20], [3, 7, 11]]);
  // Adjacent: in place; [[0],[2]] and [1,3] broadcast to [2, 2].
  assert.deepEqual(x.index(":", [[0], [2]], [1, 3]).tolist(), [[[1, 3], [9, 11]], [[13, 15], [21, 23]]]);
  // An integer next to an array is advanced too (broadcast, in place).
  assert.deepEqual(x.index(1, [2, 0], "1:3").tolist(), [[21, 22], [13, 14]]);
  assert.deepEqual(x.index(0, [-1, 0]).tolist(), [[8, 9, 10, 11], [0, 1, 2, 3]]);
  // Out-of-range array indices clamp on reads (JAX's default).
  assert.deepEqual(np.arange(5).index([7, -9]).tolist(), [4, 0]);
  assert.deepEqual(np.arange(5).index(np.array([3])).tolist(), [3]);
  const v = np.arange(6);
  assert.deepEqual(v.index(np.greater(v, 3)).tolist(), [4, 5]);
  // x[..., 0] = [[0, 4, 8], [12, 16, 20]]: the multiples of 8 are at [0, 0], [0, 2], [1, 1].
  assert.deepEqual(x.index(np.equal(np.remainder(x.index("...", 0), 8), 0)).tolist(), [[0, 1, 2, 3], [8, 9, 10, 11], [16, 17, 18, 19]]);
});

test("indexing under jit: a traced scalar is a dynamic_slice, an array a gather; negative traced indices count from the end", () => {
  const at = jit((a: FrontendArray, i: FrontendArray) => a.index(i));
  const tens = np.multiply(np.arange(5), 10);
  assert.equal(at(tens, np.array(3)).item(), 30);
  assert.equal(at(tens, np.array(-1)).item(), 40);
  assert.deepEqual(at(tens, np.array([4, 0])).tolist(), [40, 0]);
  const text = jit((a: FrontendArray, i: FrontendArray) => a.index(i)).lower(tens, np.array(1)).asText();
  assert.match(text, /stablehlo\.dynamic_slice/);
  assert.match(jit((a: FrontendArray) => a.at([0, 1]).add(1)).lower(tens).asText(), /stablehlo\.scatter/);
});

test("x.at(...): set, add, subtract, multiply, divide, min, max, get; x itself is unchanged", () => {
  const z = np.zeros(5);
  assert.deepEqual(z.at([0, 2, 2]).add(1).tolist(), [1, 0, 2, 0, 0]);
  assert.deepEqual(z.tolist(), [0, 0, 0, 0, 0]);
  assert.deepEqual(np.zeros(3).at([1, 1]).set([5, 7]).tolist(), [0, 7, 0]);
  assert.deepEqual(np.zeros([2, 3]).at(":", 1).set(9).tolist(), [[0, 9, 0], [0, 9, 0]]);
  assert.deepEqual(np.zeros(3).at("::-1").set([1, 2, 3]).tolist(), [3, 2, 1]);
  assert.deepEqual(np.zeros([2, 2]).at(":").set([1, 2]).tolist(), [[1, 2], [1, 2]]);
  assert.deepEqual(np.zeros(3).at(-1).set(1).tolist(), [0, 0, 1]);
  // Out-of-range updates are dropped (JAX's default).
  assert.deepEqual(np.zeros(3).at([5]).set(1).tolist(), [0, 0, 0]);
  const a = np.array([2, 3, 4]);
  assert.deepEqual(a.at([0, 0, 2]).multiply(3).tolist(), [18, 3, 12]);
  assert.deepEqual(a.at(1).subtract(5).tolist(), [2, -2, 4]);
  assert.deepEqual(np.array([8, 6, 4], { dtype: "float32" }).at([0, 0]).divide(2).tolist(), [2, 6, 4]);
  assert.deepEqual(a.at([0, 1, 1]).min([5, 1, 0]).tolist(), [2, 0, 4]);
  assert.deepEqual(a.at(x.index(0, 0, "0:3")).max([1, 9, 9]).tolist(), [2, 9, 9]);
  assert.deepEqual(a.at("1:").get().tolist(), [3, 4]);
  assert.deepEqual(x.at(1, [0, 2], 3).set(-1).index(1, ":", 3).tolist(), [-1, 19, -1]);
  // A float value into an int array is cast to the array's dtype, as JAX's .at[] casts.
  assert.equal(a.at(0).set(7).dtype, "int32");
});

test("derivatives and batching through indexing and updates", () => {
  const t = np.array([1, 2, 3], { dtype: "float32" });
  // d/dx sum(x[[0, 0, 2]]^2) = [2·1 + 2·1, 0, 2·3].
  assert.deepEqual((grad((v: FrontendArray) => np.sum(np.square(v.index([0, 0, 2]))))(t) as FrontendArray).tolist(), [4, 0, 6]);
  const w = np.array([1, 2, 3], { dtype: "float32" });
  const f = (v: FrontendArray, s: FrontendArray): FrontendArray => np.sum(np.multiply(v.at([1]).set(s), w));
  const [gx, gs] = grad(f, { argnums: [0, 1] })(t, np.array(5, { dtype: "float32" })) as FrontendArray[];
  assert.deepEqual(gx!.tolist(), [1, 0, 3]);
  assert.equal(gs!.item(), 2);
  // x.at[idx].add(v): d/dv = the weights at the (repeated) positions, summed per v element.
  assert.deepEqual((grad((s: FrontendArray) => np.sum(np.multiply(np.zeros(3).at([2, 2, 0]).add(s), w)))(np.ones(3)) as FrontendArray).tolist(), [3, 3, 1]);
  const m = np.reshape(np.arange(6), [2, 3]);
  assert.deepEqual(vmap((row: FrontendArray, i: FrontendArray) => row.index(i))(m, np.array([2, 0])).tolist(), [2, 3]);
  assert.deepEqual(vmap((row: FrontendArray, i: FrontendArray) => row.at(i).set(-1))(m, np.array([2, 0])).tolist(), [[0, 1, -1], [-1, 4, 5]]);
});

test("take and takeAlongAxis: fill (default), clip and wrap modes, axes, broadcasting", () => {
  const v = np.array([10, 20, 30], { dtype: "float32" });
  assert.deepEqual(np.take(v, [0, 2, -1, 5]).tolist(), [10, 30, 30, NaN]);
  assert.deepEqual(np.take(v, [0, 2, -1, 5], { mode: "clip" }).tolist(), [10, 30, 30, 30]);
  assert.deepEqual(np.take(v, [4, -4], { mode: "wrap" }).tolist(), [20, 30]);
  assert.deepEqual(np.take([1, 2], [3], { fillValue: 0 }).tolist(), [0]);
  assert.deepEqual(np.take([1, 2], [3]).tolist(), [-2147483648]);
  const m = [[1, 2, 3], [4, 5, 6]];
  assert.deepEqual(np.take(m, [[0, 2]], { axis: 1 }).tolist(), [[[1, 3]], [[4, 6]]]);
  assert.deepEqual(np.take(m, [5, 0]).tolist(), [6, 1]);
  // JAX's documented example.
  assert.deepEqual(np.takeAlongAxis(m, [[0, 2], [1, 0]], 1).tolist(), [[1, 3], [5, 4]]);
  assert.deepEqual(np.takeAlongAxis(m, [[1, 0, 1]], 0).tolist(), [[4, 2, 6]]);
  assert.deepEqual(np.takeAlongAxis(m, [[2], [0]], -1).tolist(), [[3], [4]]);
  assert.deepEqual(np.takeAlongAxis([[1, 2, 3]], [[2], [0]], 1).tolist(), [[3], [1]]);
  assert.deepEqual(np.takeAlongAxis([5, 6, 7], [2, 0], null).tolist(), [7, 5]);
  const g = grad((a: FrontendArray) => np.sum(np.takeAlongAxis(a, [[0, 0], [2, 1]], 1)))(np.ones([2, 3])) as FrontendArray;
  assert.deepEqual(g.tolist(), [[2, 0, 0], [0, 1, 1]]);
});

test("indexing errors name the function, the item and the rule", () => {
  assert.throws(() => x.index(2), (e: unknown) => e instanceof FrontendError && /index 2 is out of bounds for axis 0 with size 2/.test(e.message));
  assert.throws(() => x.index(0, 0, 0, 0), (e: unknown) => e instanceof FrontendError && /too many indices/.test(e.message));
  assert.throws(() => x.index("...", 0, "..."), (e: unknown) => e instanceof FrontendError && /single ellipsis/.test(e.message));
  assert.throws(() => x.index("1:2:0"), (e: unknown) => e instanceof FrontendError && /step cannot be zero/.test(e.message));
  assert.throws(() => x.index("1-2"), (e: unknown) => e instanceof FrontendError && /item 0 "1-2" is not a slice/.test(e.message));
  assert.throws(() => x.index(1.5), (e: unknown) => e instanceof FrontendError && /not an integer/.test(e.message));
  assert.throws(() => x.index(true as never), (e: unknown) => e instanceof FrontendError && /boolean scalar/.test(e.message));
  assert.throws(() => x.index([0.5]), (e: unknown) => e instanceof FrontendError && /dtype float32/.test(e.message));
  assert.throws(() => jit((a: FrontendArray) => a.index(np.greater(a, 2)))(np.arange(4)), ConcretizationError);
  assert.throws(() => np.take([1, 2], [0], { mode: "raise" as never }), (e: unknown) => e instanceof FrontendError && /mode "raise"/.test(e.message));
  assert.throws(() => np.takeAlongAxis([[1, 2]], [0], 1), (e: unknown) => e instanceof FrontendError && /same rank/.test(e.message));
  assert.throws(() => np.zeros(3).at([0, 1]).set([1, 2, 3]), FrontendError);
});
