// jit: one trace and one compile per input signature, results equal to eager
// execution, StableHLO text that the reference interpreter runs to the same values,
// pytrees in and out, static arguments, closures over arrays.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, nn, jit, parseStableHlo, evaluate, Literal, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;

test("jit traces once per signature and equals eager execution", () => {
  let traces = 0;
  const f = (x: A, y: A): A => {
    traces++;
    return np.sum(np.multiply(nn.relu(np.subtract(x, y)), 2), { axis: 1 });
  };
  const g = jit(f);
  const x = np.array([[1, -2, 3], [0.5, 4, -1]], { dtype: "float32" });
  const y = np.array([0, 1, 0], { dtype: "float32" });
  const eager = f(x, y).tolist();
  traces = 0;
  assert.deepEqual(g(x, y).tolist(), eager);
  assert.deepEqual(g(np.multiply(x, 1), y).tolist(), eager);
  assert.equal(traces, 1);
  g(np.zeros([4, 3]), y);
  assert.equal(traces, 2, "a new shape traces again");
  g(x, [0, 1, 0] as never);
  assert.equal(traces, 3, "a weakly typed or int argument is another signature");
});

test("lower(...).asText() is StableHLO that the reference interpreter runs to jit's result", () => {
  const f = (x: A): A => np.divide(np.exp(x), np.sum(np.exp(x)));
  const x = np.array([1, 2, 3], { dtype: "float32" });
  const text = jit(f).lower(x).asText();
  assert.match(text, /stablehlo\.exponential/);
  const module = parseStableHlo(text);
  const interpreted = evaluate(module.entry, [Literal.from("f32", [1, 2, 3])]).toNested() as number[];
  const jitted = jit(f)(x).tolist() as number[];
  interpreted.forEach((v, i) => assert.ok(Math.abs(v - jitted[i]!) < 1e-6));
  const compiled = jit(f).lower(x).compile();
  assert.deepEqual((compiled.call(x) as A).tolist(), jitted);
  assert.throws(() => compiled.call(np.zeros([4])), FrontendError);
});

test("jit takes and returns pytrees, and closes over arrays as constants", () => {
  const w = np.array([10, 20], { dtype: "float32" });
  const f = jit((p: { a: A; b: [A, A] }) => ({ sum: np.add(np.add(p.a, p.b[0]), w), diff: [np.subtract(p.a, p.b[1])] }));
  const r = f({ a: np.array([1, 2], { dtype: "float32" }), b: [np.array([3, 4], { dtype: "float32" }), np.array([1, 1], { dtype: "float32" })] }) as { sum: A; diff: A[] };
  assert.deepEqual(r.sum.tolist(), [14, 26]);
  assert.deepEqual(r.diff[0]!.tolist(), [0, 1]);
});

test("staticArgnums: static arguments are passed as they are and key the cache", () => {
  let traces = 0;
  const power = jit((x: A, n: number): A => {
    traces++;
    let out = x;
    for (let i = 1; i < n; i++) out = np.multiply(out, x);
    return out;
  }, { staticArgnums: 1 });
  const x = np.array([2, 3], { dtype: "float32" });
  assert.deepEqual(power(x, 3).tolist(), [8, 27]);
  assert.deepEqual(power(x, 3).tolist(), [8, 27]);
  assert.deepEqual(power(x, 2).tolist(), [4, 9]);
  assert.equal(traces, 2);
});

test("donateArgnums: the result is right and the donated array is no longer usable", () => {
  const step = jit((p: A, g: A) => np.subtract(p, np.multiply(g, 0.5)), { donateArgnums: 0 });
  const p = np.array([1, 2], { dtype: "float32" });
  assert.deepEqual(step(p, np.array([2, 2], { dtype: "float32" })).tolist(), [0, 1]);
  assert.throws(() => p.tolist());
});

test("jit inside jit inlines; a leaked tracer is a FrontendError", () => {
  const inner = jit((x: A) => np.multiply(x, 3));
  const outer = jit((x: A) => np.add(inner(x), 1));
  assert.deepEqual(outer(np.array([1, 2], { dtype: "float32" })).tolist(), [4, 7]);
  let leaked: A | undefined;
  jit((x: A) => {
    leaked = x;
    return x;
  })(np.array([1], { dtype: "float32" }));
  assert.throws(() => np.add(leaked!, 1), /leaked tracer/);
});

test("weightArgnums: products read the weights packed, once per array; a new array gives the new answer", () => {
  let seed = 7;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const matrix = (rows: number, cols: number): A => np.reshape(np.array(Array.from({ length: rows * cols }, random), { dtype: "float32" }), [rows, cols]);
  const mlp = (params: { w1: A; w2: A }, x: A): A => np.matmul(nn.relu(np.matmul(x, params.w1)), params.w2);
  const f = jit(mlp, { weightArgnums: 0 });
  // 20 rows: the packed GEMM kernel (a few rows stream B as stored).
  const x = matrix(20, 70);
  const close = (got: A, want: A): void => {
    const g = got.tolist() as number[][], w = want.tolist() as number[][];
    w.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(g[i]![j]! - v) <= 1e-4 * Math.max(1, Math.abs(v)), `[${i}][${j}]: ${g[i]![j]} vs ${v}`)));
  };
  const params = { w1: matrix(70, 40), w2: matrix(40, 30) };
  assert.equal(f.lower(params, x).compile().executable.program.packedWeights.length, 2);
  close(f(params, x), mlp(params, x));
  close(f(params, x), mlp(params, x));
  const other = { w1: matrix(70, 40), w2: params.w2 };
  close(f(other, x), mlp(other, x));
  close(f(params, x), mlp(params, x));
});
