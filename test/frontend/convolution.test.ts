// lax.convGeneralDilated and lax.reduceWindow against direct loops in float64 (the rule
// table's test checks their derivatives and batching against these forward ops, so the
// forward ops are checked here independently): layouts given as strings, strides,
// padding, both dilations, feature groups; max and sum pooling.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rng } from "../support/prng.js";
import { numpy as np, lax, grad, jit, FrontendError, type FrontendArray } from "../../src/index.js";
import { elementCount } from "../../src/types/shape.js";

type A = FrontendArray;
type Grid = number[][][][];

const dilated = (n: number, d: number): number => (n === 0 ? 0 : 1 + d * (n - 1));

/** A random float64 array of `shape` and its nested values. */
function randomArray(shape: number[], next: () => number): A {
  const size = elementCount(shape);
  return np.reshape(np.array(Array.from({ length: size }, () => 2 * next() - 1), { dtype: "float64" }), shape);
}

interface Conv2d { strides: number[]; padding: [number, number][]; lhsDilation: number[]; rhsDilation: number[]; groups: number }

/** The convolution of NCHW `x` with OIHW `w` by its definition, one output element at a time. */
function referenceConv(x: Grid, w: Grid, c: Conv2d): Grid {
  const [n, channels, h, wd] = [x.length, x[0]!.length, x[0]![0]!.length, x[0]![0]![0]!.length];
  const [outFeatures, inPerGroup, kh, kw] = [w.length, w[0]!.length, w[0]![0]!.length, w[0]![0]![0]!.length];
  assert.equal(channels, inPerGroup * c.groups);
  const size = (len: number, k: number, i: number): number =>
    Math.floor((dilated(len, c.lhsDilation[i]!) + c.padding[i]![0] + c.padding[i]![1] - dilated(k, c.rhsDilation[i]!)) / c.strides[i]!) + 1;
  /** The input at a position of the dilated, padded input (0 in holes and padding). */
  const at = (b: number, ch: number, p: number, q: number): number => {
    const [u, v] = [p - c.padding[0]![0], q - c.padding[1]![0]];
    if (u < 0 || v < 0 || u % c.lhsDilation[0]! !== 0 || v % c.lhsDilation[1]! !== 0) return 0;
    const [i, j] = [u / c.lhsDilation[0]!, v / c.lhsDilation[1]!];
    return i < h && j < wd ? x[b]![ch]![i]![j]! : 0;
  };
  const perGroupOut = outFeatures / c.groups;
  return Array.from({ length: n }, (_, b) => Array.from({ length: outFeatures }, (_, o) =>
    Array.from({ length: size(h, kh, 0) }, (_, y) => Array.from({ length: size(wd, kw, 1) }, (_, xo) => {
      let sum = 0;
      const group = Math.floor(o / perGroupOut);
      for (let i = 0; i < inPerGroup; i++) {
        for (let ky = 0; ky < kh; ky++) {
          for (let kx = 0; kx < kw; kx++) {
            sum += w[o]![i]![ky]![kx]! * at(b, group * inPerGroup + i, y * c.strides[0]! + ky * c.rhsDilation[0]!, xo * c.strides[1]! + kx * c.rhsDilation[1]!);
          }
        }
      }
      return sum;
    }))));
}

function assertClose(actual: unknown, expected: unknown, what: string): void {
  const a = (actual as number[]).flat(4) as number[];
  const e = (expected as number[]).flat(4) as number[];
  assert.equal(a.length, e.length, `${what}: size`);
  a.forEach((v, i) => assert.ok(Math.abs(v - e[i]!) < 1e-12, `${what}[${i}]: ${v} vs ${e[i]}`));
}

test("convGeneralDilated: NHWC/HWIO strings, strides, padding, dilations and feature groups match the definition", () => {
  const next = rng(7);
  const x = randomArray([2, 4, 5, 4], next); // NCHW
  const w = randomArray([4, 2, 3, 2], next); // OIHW, two groups of two input features
  const c: Conv2d = { strides: [2, 1], padding: [[1, 0], [0, 1]], lhsDilation: [1, 1], rhsDilation: [1, 2], groups: 2 };
  const nhwc = lax.convGeneralDilated(np.transpose(x, [0, 2, 3, 1]), np.transpose(w, [2, 3, 1, 0]), c.strides, c.padding, {
    rhsDilation: c.rhsDilation, dimensionNumbers: ["NHWC", "HWIO", "NHWC"], featureGroupCount: 2,
  });
  assertClose(np.transpose(nhwc, [0, 3, 1, 2]).tolist(), referenceConv(x.tolist() as Grid, w.tolist() as Grid, c), "NHWC");
  // The default layout (NCHW / OIHW), lhs dilation (a transposed convolution), negative padding.
  const t: Conv2d = { strides: [1, 2], padding: [[2, -1], [1, 1]], lhsDilation: [2, 1], rhsDilation: [1, 1], groups: 1 };
  const w1 = randomArray([3, 4, 2, 2], next);
  assertClose(lax.convWithGeneralPadding(x, w1, t.strides, t.padding, t.lhsDilation).tolist(), referenceConv(x.tolist() as Grid, w1.tolist() as Grid, t), "lhs dilation");
  // "SAME": the output keeps ceil(size / stride), the odd padding at the high end.
  const same = lax.conv(x, w1, [2, 2], "SAME");
  assert.deepEqual(same.shape, [2, 3, 3, 2]);
  assertClose(same.tolist(), referenceConv(x.tolist() as Grid, w1.tolist() as Grid, { strides: [2, 2], padding: [[0, 1], [0, 0]], lhsDilation: [1, 1], rhsDilation: [1, 1], groups: 1 }), "SAME");
  // convTranspose (channels last by default): x = [1, 2] dilated by the stride 2, padded
  // for "VALID" by (2, 2), correlated with [1, 10, 100]; with transposeKernel, each input
  // element scatters a copy of the kernel (Keras' Conv2DTranspose).
  const x1 = np.reshape(np.array([1, 2], { dtype: "float32" }), [1, 2, 1]);
  const k1 = np.reshape(np.array([1, 10, 100], { dtype: "float32" }), [3, 1, 1]);
  assert.deepEqual(np.ravel(lax.convTranspose(x1, k1, [2], "VALID")).tolist(), [100, 10, 201, 20, 2]);
  assert.deepEqual(np.ravel(lax.convTranspose(x1, k1, [2], "VALID", { transposeKernel: true })).tolist(), [1, 10, 102, 20, 200]);
  assert.deepEqual(lax.convTranspose(x1, k1, [2], "SAME").shape, [1, 4, 1]);
  assert.throws(() => lax.conv(x, w1, [1], "VALID"), FrontendError);
  assert.throws(() => lax.convGeneralDilated(x, w1, [1, 1], "VALID", { dimensionNumbers: ["NHWC", "HWIX", "NHWC"] }), FrontendError);
  assert.throws(() => lax.conv(x, np.astype(w1, "float32"), [1, 1], "VALID"), FrontendError);
});

test("reduceWindow: max and sum pooling (padding, strides, dilation) match direct loops; gradients flow under jit", () => {
  const next = rng(11);
  const x = randomArray([5, 6], next);
  const v = x.tolist() as number[][];
  // 2×3 windows, strides (2, 2), padding ((1, 0), (0, 1)), the window dilated by 2 along rows.
  const pooled = (op: typeof lax.max, init: number, combine: (a: number, b: number) => number): [unknown, number[][]] => {
    const got = lax.reduceWindow(x, init, op, [2, 3], [2, 2], [[1, 0], [0, 1]], { windowDilation: [2, 1] }).tolist();
    const rows = Math.floor((5 + 1 - 3) / 2) + 1;
    const cols = Math.floor((6 + 1 - 3) / 2) + 1;
    const want = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => {
      let acc = init;
      for (let a = 0; a < 2; a++) for (let b = 0; b < 3; b++) {
        const [r, c] = [i * 2 + a * 2 - 1, j * 2 + b];
        if (r >= 0 && r < 5 && c < 6) acc = combine(acc, v[r]![c]!);
      }
      return acc;
    }));
    return [got, want];
  };
  for (const [name, op, init, combine] of [["max", lax.max, -Infinity, Math.max], ["sum", lax.add, 0, (a: number, b: number) => a + b]] as const) {
    const [got, want] = pooled(op, init, combine);
    assertClose(got, want, name);
  }
  assert.deepEqual(lax.reduceWindow(np.array([[1, 5], [7, 3]], { dtype: "float32" }), -Infinity, lax.max, [2, 2]).tolist(), [[7]]);
  // The max's gradient goes to each window's maximum: windows (2, 2), strides (2, 2) partition the array.
  const maxPoolSum = (a: A): A => np.sum(lax.reduceWindow(a, -Infinity, lax.max, [2, 2], [2, 2]));
  const g = jit(grad(maxPoolSum))(np.array([[1, 5, 0, 2], [7, 3, 4, 1]], { dtype: "float32" })) as A;
  assert.deepEqual(g.tolist(), [[0, 0, 0, 0], [1, 0, 1, 0]]);
  assert.throws(() => lax.reduceWindow(x, 1, lax.add, [2, 2]), FrontendError);
  assert.throws(() => lax.reduceWindow(x, 0, lax.mul, [2, 2]), FrontendError);
});
