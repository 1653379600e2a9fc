// np.pad's modes against numpy's documented examples, against index formulas for long
// widths, through jit and vmap, and its gradients against central differences in float64.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, grad, vmap, jit, FrontendError, type FrontendArray } from "../../src/index.js";
import type { PadMode } from "../../src/frontend/pad.js";
import { elementCount } from "../../src/types/shape.js";

type A = FrontendArray;

test("pad: numpy's docstring examples", () => {
  const a = [1, 2, 3, 4, 5];
  assert.deepEqual(np.pad(a, [2, 3], "constant", { constantValues: [4, 6] }).tolist(), [4, 4, 1, 2, 3, 4, 5, 6, 6, 6]);
  assert.deepEqual(np.pad(a, [2, 3], "edge").tolist(), [1, 1, 1, 2, 3, 4, 5, 5, 5, 5]);
  assert.deepEqual(np.pad(a, [2, 3], "linear_ramp", { endValues: [5, -4] }).tolist(), [5, 3, 1, 2, 3, 4, 5, 2, -1, -4]);
  assert.deepEqual(np.pad(a, [2], "maximum").tolist(), [5, 5, 1, 2, 3, 4, 5, 5, 5]);
  assert.deepEqual(np.pad(a, [2], "mean").tolist(), [3, 3, 1, 2, 3, 4, 5, 3, 3]);
  assert.deepEqual(np.pad(a, [2], "median").tolist(), [3, 3, 1, 2, 3, 4, 5, 3, 3]);
  assert.deepEqual(np.pad([[1, 2], [3, 4]], [[3, 2], [2, 3]], "minimum").tolist(), [
    [1, 1, 1, 2, 1, 1, 1], [1, 1, 1, 2, 1, 1, 1], [1, 1, 1, 2, 1, 1, 1], [1, 1, 1, 2, 1, 1, 1],
    [3, 3, 3, 4, 3, 3, 3], [1, 1, 1, 2, 1, 1, 1], [1, 1, 1, 2, 1, 1, 1],
  ]);
  assert.deepEqual(np.pad(a, [2, 3], "reflect").tolist(), [3, 2, 1, 2, 3, 4, 5, 4, 3, 2]);
  assert.deepEqual(np.pad(a, [2, 3], "reflect", { reflectType: "odd" }).tolist(), [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(np.pad(a, [2, 3], "symmetric").tolist(), [2, 1, 1, 2, 3, 4, 5, 5, 4, 3]);
  assert.deepEqual(np.pad(a, [2, 3], "symmetric", { reflectType: "odd" }).tolist(), [0, 1, 1, 2, 3, 4, 5, 5, 6, 7]);
  assert.deepEqual(np.pad(a, [2, 3], "wrap").tolist(), [4, 5, 1, 2, 3, 4, 5, 1, 2, 3]);
  // The mode in the options object, as before; the widths' forms.
  assert.deepEqual(np.pad([1, 2], 1, { mode: "edge" }).tolist(), [1, 1, 2, 2]);
  assert.deepEqual(np.pad([[1]], [[1], [2]]).tolist(), [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]);
  assert.deepEqual(np.pad([[1]], [[0, 1]], "constant", { constantValues: 7 }).tolist(), [[1, 7], [7, 7]]);
  // Per-axis constants: the later axis's value in the corners (numpy pads axis by axis).
  assert.deepEqual(np.pad([[5]], 1, { constantValues: [[1, 2], [3, 4]] }).tolist(), [[3, 1, 4], [3, 5, 4], [3, 2, 4]]);
  // stat_length: the statistic of the first / last elements only.
  assert.deepEqual(np.pad([1, 2, 6, 4], 1, "mean", { statLength: [2, 1] }).tolist(), [2, 1, 2, 6, 4, 4]);
  // A length-1 axis reflects its one element.
  assert.deepEqual(np.pad([7], 2, "reflect").tolist(), [7, 7, 7, 7, 7]);
  // Integer means round half to even: mean(1, 2) = 1.5 → 2, mean(2, 3) = 2.5 → 2.
  assert.deepEqual(np.pad([1, 2, 3], [1, 1], "mean", { statLength: 2 }).tolist(), [2, 1, 2, 3, 2]);
  // One side only: nothing on the other. A ramp of one element is the end value itself.
  assert.deepEqual(np.pad([1, 2, 3], [0, 2], "linear_ramp").tolist(), [1, 2, 3, 1, 0]);
  assert.deepEqual(np.pad([1, 2, 3], [2, 0], "edge").tolist(), [1, 1, 1, 2, 3]);
  assert.deepEqual(np.pad([1, 2, 3], [0, 2], "maximum").tolist(), [1, 2, 3, 3, 3]);
  assert.deepEqual(np.pad([[1, 2], [3, 4]], [[0, 1], [2, 0]], "linear_ramp", { endValues: 9 }).tolist(), [[9, 5, 1, 2], [9, 6, 3, 4], [9, 9, 9, 9]]);
  assert.equal(np.pad(np.array(3), 2, "edge").item(), 3); // a scalar has no axis to pad
  assert.deepEqual(np.pad(np.zeros([0, 2]), [[0, 0], [1, 1]], "edge").shape, [0, 4]); // an empty axis not padded is fine
});

/** numpy's even reflections and wrap for any width, as index maps: padded[i] = x[source(i - before)]. */
const SOURCES: Partial<Record<PadMode, (j: number, n: number) => number>> = {
  wrap: (j, n) => ((j % n) + n) % n,
  reflect: (j, n) => {
    const p = 2 * (n - 1);
    const k = ((j % p) + p) % p;
    return k < n ? k : p - k;
  },
  symmetric: (j, n) => {
    const p = 2 * n;
    const k = ((j % p) + p) % p;
    return k < n ? k : p - 1 - k;
  },
  edge: (j, n) => Math.min(Math.max(j, 0), n - 1),
};

test("pad: widths beyond the axis, as numpy's periodic and mirrored extensions", () => {
  for (const [mode, source] of Object.entries(SOURCES) as [PadMode, (j: number, n: number) => number][]) {
    for (const n of [2, 3, 4]) {
      const x = Array.from({ length: n }, (_, i) => 10 * (i + 1));
      for (const [before, after] of [[0, 7], [9, 1], [5, 11]] as const) {
        const expected = Array.from({ length: before + n + after }, (_, i) => x[source(i - before, n)]);
        assert.deepEqual(np.pad(x, [before, after], mode).tolist(), expected, `${mode} n=${n} (${before}, ${after})`);
      }
    }
  }
});

test("pad: the same under jit and per example under vmap", () => {
  const x = np.reshape(np.arange(12, { dtype: "float32" }), [3, 4]);
  const modes: PadMode[] = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "mean"];
  for (const mode of modes) {
    const f = (v: A): A => np.pad(v, [[1, 2], [3, 1]], mode);
    assert.deepEqual(jit(f)(x).tolist(), f(x).tolist(), mode);
    const rowwise = vmap((r: A) => np.pad(r, [2, 3], mode))(x) as A;
    assert.deepEqual(rowwise.tolist(), np.pad(x, [[0, 0], [2, 3]], mode).tolist(), `vmap ${mode}`);
  }
});

test("pad: gradients through every mode equal central differences in float64", () => {
  // Distinct values, so max, min and median are differentiable at the point.
  const x0 = [[0.3, -1.2, 2.5, 0.9], [1.7, 0.1, -0.4, 3.1], [-2.2, 1.1, 0.6, -0.8]];
  const weights = (shape: readonly number[]): A => {
    const n = elementCount(shape);
    return np.reshape(np.array(Array.from({ length: n }, (_, i) => Math.sin(i + 1)), { dtype: "float64" }), [...shape]);
  };
  const cases: [PadMode, object][] = [
    ["constant", { constantValues: 2 }], ["edge", {}], ["reflect", {}], ["reflect", { reflectType: "odd" }], ["symmetric", {}],
    ["symmetric", { reflectType: "odd" }], ["wrap", {}], ["linear_ramp", { endValues: [1, -1] }], ["maximum", {}], ["minimum", { statLength: 2 }],
    ["mean", { statLength: [1, 3] }], ["median", {}],
  ];
  for (const [mode, options] of cases) {
    const widths = [[2, 5], [3, 1]];
    const outShape = [3 + 7, 4 + 4];
    const w = weights(outShape);
    const f = (v: A): A => np.sum(np.multiply(np.pad(v, widths, mode, options), w));
    const g = (grad(f)(np.array(x0, { dtype: "float64" })) as A).tolist() as number[][];
    const h = 1e-6;
    x0.forEach((row, i) => row.forEach((_, j) => {
      const shifted = (d: number): number => f(np.array(x0.map((r, a) => r.map((v, b) => (a === i && b === j ? v + d : v))), { dtype: "float64" })).item() as number;
      const fd = (shifted(h) - shifted(-h)) / (2 * h);
      assert.ok(Math.abs(g[i]![j]! - fd) < 1e-6 * (1 + Math.abs(fd)), `${mode} ${JSON.stringify(options)} [${i}, ${j}]: ${g[i]![j]} vs ${fd}`);
    }));
  }
});

test("pad: bad widths, modes and options are FrontendErrors", () => {
  const cases: [() => unknown, RegExp][] = [
    [() => np.pad([1, 2], 1, "nearest" as PadMode), /unknown mode "nearest"/],
    [() => np.pad([1, 2], 1, "edge", { constantValues: 3 }), /mode "edge" takes no constantValues/],
    [() => np.pad([1, 2], 1, { mode: "reflect", statLength: 1 }), /mode "reflect" takes no statLength/],
    [() => np.pad([1, 2], -1), /must be non-negative integers/],
    [() => np.pad([1, 2], 1.5), /must be non-negative integers/],
    [() => np.pad([[1, 2]], [[1, 1], [1, 1], [1, 1]]), /does not broadcast to one \(before, after\) pair for each of 2 axes/],
    [() => np.pad([1, 2], [1, 2, 3]), /does not broadcast/],
    [() => np.pad(np.zeros([0]), 1, "wrap"), /cannot extend the empty axis 0 with mode "wrap"/],
    [() => np.pad([1, 2], 1, "reflect", { reflectType: "both" as "odd" }), /reflectType "both"/],
    [() => np.pad([1, 2], 1, "mean", { statLength: 0 }), /statLength 0 must be positive/],
  ];
  for (const [f, message] of cases) {
    assert.throws(f, (e: unknown) => e instanceof FrontendError && message.test(e.message), String(message));
  }
});
