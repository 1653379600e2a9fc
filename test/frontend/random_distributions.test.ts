// jax.random's other samplers: each is its formula over uniform/normal/bernoulli of the
// same key (checked exactly, the formula computed here from those draws), and the
// moments of 20,000 draws against the distribution's known mean and variance;
// random.orthogonal and nn.initializers.orthogonal give orthonormal matrices, the
// initializer JAX's printed values under JAX's pre-0.5 threefry scheme.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, random, nn, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const N = 20000;
const values = (x: A): number[] => (x.tolist() as number[]).flat() as number[];
function moments(x: A): [number, number] {
  const v = values(x);
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return [mean, v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length];
}

test("exponential, laplace, logistic, cauchy, rademacher: JAX's formulas over uniform draws of the same key", () => {
  const key = random.key(3);
  const u = (minval: number): number[] => values(random.uniform(key, [64], { minval, maxval: 1 }));
  const f32 = Math.fround;
  // The compiler's float32 log1p, log and tan are within an ulp or two of the float64 ones rounded.
  const near = (name: string, got: number[], want: number[]): void => got.forEach((g, i) => {
    assert.ok(Math.abs(g - want[i]!) <= 5e-7 * Math.max(1, Math.abs(want[i]!)), `${name}[${i}]: ${g} vs ${want[i]}`);
  });
  near("exponential", values(random.exponential(key, [64])), u(0).map((x) => -Math.log1p(-x)));
  near("laplace", values(random.laplace(key, [64])), u(-1 + 2 ** -24).map((x) => Math.sign(x) * Math.log1p(-Math.abs(x))));
  near("logistic", values(random.logistic(key, [64])), u(2 ** -23).map((x) => Math.log(f32(x / f32(1 - x)))));
  near("cauchy", values(random.cauchy(key, [64])), u(2 ** -23).map((x) => Math.tan(f32(f32(x - 0.5) * f32(Math.PI)))));
  assert.deepEqual(values(random.rademacher(key, [64])), (random.bernoulli(key, 0.5, [64]).tolist() as boolean[]).map((b) => (b ? 1 : -1)));
});

test("samplers' moments over 20,000 draws match their distributions", () => {
  const key = random.key(0);
  const cases: [string, A, number, number][] = [
    ["exponential", random.exponential(key, [N]), 1, 1],
    ["laplace", random.laplace(key, [N]), 0, 2],
    ["logistic", random.logistic(key, [N]), 0, Math.PI ** 2 / 3],
    ["rademacher", random.rademacher(key, [N]), 0, 1],
    ["lognormal(0.5)", random.lognormal(key, 0.5, [N]), Math.exp(0.125), (Math.exp(0.25) - 1) * Math.exp(0.25)],
    ["weibullMin(1, 2)", random.weibullMin(key, 1, 2, [N]), Math.sqrt(Math.PI) / 2, 1 - Math.PI / 4],
    ["maxwell", random.maxwell(key, [N]), 2 * Math.sqrt(2 / Math.PI), 3 - 8 / Math.PI],
    ["doubleSidedMaxwell(1, 2)", random.doubleSidedMaxwell(key, 1, 2, [N]), 1, 12],
    ["rayleigh(1)", random.rayleigh(key, 1, [N]), Math.sqrt(Math.PI / 2), (4 - Math.PI) / 2],
    ["triangular(0, 1, 3)", random.triangular(key, 0, 1, 3, [N]), 4 / 3, 7 / 18],
    ["geometric(0.25)", random.geometric(key, 0.25, [N]), 4, 12],
  ];
  for (const [name, x, mean, variance] of cases) {
    const [m, v] = moments(x);
    const se = Math.sqrt(variance / N);
    assert.ok(Math.abs(m - mean) < 5 * se, `${name}: mean ${m} vs ${mean}`);
    assert.ok(Math.abs(v - variance) < 0.08 * variance, `${name}: variance ${v} vs ${variance}`);
  }
  // Heavy tails: pareto(3)'s mean 1.5 and its minimum 1; cauchy's quartiles ∓1.
  const p = values(random.pareto(key, 3, [N]));
  assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) / N - 1.5) < 0.03 && Math.min(...p) >= 1);
  const c = values(random.cauchy(key, [N])).sort((a, b) => a - b);
  assert.ok(Math.abs(c[N / 4]! + 1) < 0.05 && Math.abs(c[(3 * N) / 4]! - 1) < 0.05 && Math.abs(c[N / 2]!) < 0.05);
  // Parameters broadcast into the shape; the shape defaults to theirs.
  assert.deepEqual(random.pareto(key, [1, 2, 3]).shape, [3]);
  assert.deepEqual(random.triangular(key, 0, [1, 2], 3, [4, 2]).shape, [4, 2]);
  assert.deepEqual(random.doubleSidedMaxwell(key, [0, 1], 1, [5]).shape, [5, 2]);
  assert.equal(random.geometric(key, 0.5, [2], { dtype: "int8" }).dtype, "int8");
  assert.throws(() => random.pareto(key, [1, 2, 3], [2]), FrontendError);
  assert.throws(() => random.exponential(key, [2], { dtype: "float64" }), /float32 is/);
  assert.throws(() => random.geometric(key, 0.5, [2], { dtype: "float32" }), /integer type/);
});

test("random.orthogonal and nn.initializers.orthogonal: orthonormal columns; the initializer as JAX's docstring prints it", () => {
  const q = random.orthogonal(random.key(1), 4, [3]);
  assert.deepEqual(q.shape, [3, 4, 4]);
  const gram = np.matmul(np.swapaxes(q, -1, -2), q).tolist() as number[][][];
  gram.forEach((g) => g.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - (i === j ? 1 : 0)) < 1e-5))));
  // A [3, 2, 4] kernel with columnAxis 0: the 8 rows of each column orthonormal, times the scale.
  const w = nn.initializers.orthogonal(2, { columnAxis: 0 })(random.key(1), [3, 2, 4]);
  const m = np.reshape(np.moveaxis(w, 0, -1), [8, 3]);
  (np.matmul(np.transpose(m), m).tolist() as number[][]).forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - (i === j ? 4 : 0)) < 1e-4)));
  // jax.nn.initializers.orthogonal's docstring (key 42, shape (2, 3)), printed under the pre-0.5 scheme.
  random.setThreefryPartitionable(false);
  try {
    const got = (nn.initializers.orthogonal()(random.key(42), [2, 3]).tolist() as number[][]).flat();
    [0.39026976, 0.72495741, -0.56756169, 0.88047469, -0.47409311, -1.3157725e-4].forEach((want, i) => assert.ok(Math.abs(got[i]! - want) < 1e-6, `[${i}] ${got[i]} vs ${want}`));
  } finally {
    random.setThreefryPartitionable(true);
  }
  assert.throws(() => nn.initializers.orthogonal()(random.key(0), [3]), /rank 2 or more/);
});

test("choice: JAX's draws (randint indices, a permutation's first entries, p's inverse cumulative sum, Gumbel top-k)", () => {
  const key = random.key(11);
  const a = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], { dtype: "float32" });
  // With replacement: take of randint(key, shape, 0, n) along the axis.
  assert.deepEqual(random.choice(key, a, [3]).tolist(), np.take(a, random.randint(key, [3], 0, 4), { axis: 0 }).tolist());
  assert.deepEqual(random.choice(key, 10, [2, 3]).tolist(), random.randint(key, [2, 3], 0, 10).tolist());
  // Without: the first entries of permutation(key, a), distinct.
  const perm = random.permutation(key, 10).tolist() as number[];
  assert.deepEqual(random.choice(key, 10, [4], { replace: false }).tolist(), perm.slice(0, 4));
  const cols = random.choice(key, a, [2], { replace: false, axis: 1 });
  assert.deepEqual(cols.shape, [4, 2]);
  // With p: frequencies of 20,000 draws within five standard errors; a zero probability is never drawn.
  const p = [0.1, 0, 0.6, 0.3];
  const draws = values(random.choice(key, 4, [N], { p }));
  p.forEach((q, i) => {
    const freq = draws.filter((d) => d === i).length / N;
    assert.ok(Math.abs(freq - q) <= 5 * Math.sqrt((q * (1 - q)) / N) + 1e-12, `choice p[${i}]: ${freq} vs ${q}`);
  });
  const noReplace = values(random.choice(key, 4, [3], { replace: false, p }));
  assert.equal(new Set(noReplace).size, 3);
  assert.ok(!noReplace.includes(1), "a zero-probability entry is never drawn without replacement");
  assert.deepEqual(random.choice(key, 5, [0]).shape, [0]);
  assert.throws(() => random.choice(key, 3, [4], { replace: false }), FrontendError);
  assert.throws(() => random.choice(key, 3, [], { p: [0.5, 0.5] }), FrontendError);
  assert.throws(() => random.choice(key, 2.5), FrontendError);
});

test("multivariateNormal: mean + L·z (cholesky), and the covariance of 20,000 draws with every method", () => {
  const key = random.key(12);
  const mean = [1, -2];
  const cov = [[2, 0.6], [0.6, 1]];
  const z = random.normal(key, [3, 2]).tolist() as number[][];
  const l = [[Math.sqrt(2), 0], [0.6 / Math.sqrt(2), Math.sqrt(1 - 0.18)]];
  const got = random.multivariateNormal(key, mean, cov, [3]).tolist() as number[][];
  got.forEach((row, i) => row.forEach((v, j) => {
    const want = mean[j]! + l[j]![0]! * z[i]![0]! + l[j]![1]! * z[i]![1]!;
    assert.ok(Math.abs(v - want) <= 1e-5 * Math.max(1, Math.abs(want)), `mvn[${i}][${j}]: ${v} vs ${want}`);
  }));
  for (const method of ["cholesky", "eigh", "svd"] as const) {
    const rows = random.multivariateNormal(key, mean, cov, [N], { method }).tolist() as number[][];
    const mu = [0, 1].map((j) => rows.reduce((s, r) => s + r[j]!, 0) / N);
    mu.forEach((m, j) => assert.ok(Math.abs(m - mean[j]!) <= 5 * Math.sqrt(cov[j]![j]! / N), `${method} mean[${j}]: ${m}`));
    const c01 = rows.reduce((s, r) => s + (r[0]! - mu[0]!) * (r[1]! - mu[1]!), 0) / N;
    const c00 = rows.reduce((s, r) => s + (r[0]! - mu[0]!) ** 2, 0) / N;
    // Standard errors of a sample covariance of normals: √((σ₀₀σ₁₁ + σ₀₁²)/N), √(2σ₀₀²/N).
    assert.ok(Math.abs(c01 - 0.6) <= 5 * Math.sqrt((2 + 0.36) / N), `${method} cov01: ${c01}`);
    assert.ok(Math.abs(c00 - 2) <= 5 * Math.sqrt(8 / N), `${method} cov00: ${c00}`);
  }
  assert.throws(() => random.multivariateNormal(key, [0, 0], [[1, 0, 0]]), FrontendError);
  assert.throws(() => random.multivariateNormal(key, 0, [[1]]), FrontendError);
});
