// random.gamma and the samplers built on it. The exact check: each element of gamma's
// program equals JAX's per-element algorithm (_gamma_one) run here as a plain JS loop over
// eager random.split / normal / uniform calls, so the key usage (one key per element,
// the boost key, three keys per round, the split chain of the normal draws) is checked
// draw by draw. The distribution checks: the moments of 10^5 (gamma) or 20,000 draws
// within five standard errors (the variance's from the sample's fourth moment).

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, random, grad, jvp, jit, lax, vmap, hessian, jacfwd, FrontendError, type FrontendArray } from "../../src/index.js";
import { randomGammaGrad } from "../../src/frontend/random_gamma_grad.js";

type A = FrontendArray;
const f32 = Math.fround;
const values = (x: A): number[] => (x.tolist() as number[]).flat() as number[];

/** JAX's _gamma_one for one key and one alpha, as a sequential loop of eager draws (float32 steps rounded with fround). */
function gammaOneReference(key: A, alpha: number, logSpace: boolean): number {
  const noBoost = alpha >= 1;
  const a = noBoost ? alpha : f32(alpha + 1);
  const d = f32(a - f32(1 / 3));
  const c = f32(f32(1 / 3) / f32(Math.sqrt(d)));
  let [k, boostKey] = [...random.split(key)] as [A, A];
  let [X, V, U] = [0, 1, 2];
  while (U >= f32(1 - f32(0.0331 * f32(X * X))) && Math.log(U) >= f32(f32(X * 0.5) + f32(d * f32(f32(1 - V) + Math.log(V))))) {
    const [next, xKey, uKey] = [...random.split(k, 3)] as [A, A, A];
    k = next;
    let [kx, x, v] = [xKey, 0, -1];
    while (v <= 0) {
      const [n2, sub] = [...random.split(kx)] as [A, A];
      kx = n2;
      x = random.normal(sub).item() as number;
      v = f32(1 + f32(x * c));
    }
    [X, V, U] = [f32(x * x), f32(f32(v * v) * v), random.uniform(uKey).item() as number];
  }
  const u = random.uniform(boostKey).item() as number;
  if (logSpace) {
    const logU = Math.log1p(-u);
    return Math.log(d) + Math.log(V) + (noBoost || logU === 0 ? 0 : logU / alpha);
  }
  return d * V * (noBoost ? 1 : (1 - u) ** (1 / alpha));
}

test("gamma and loggamma: every element is JAX's per-element rejection loop on its own key of split(key, n)", () => {
  const key = random.key(42);
  const alphas = [0.05, 0.3, 0.999, 1, 1.5, 2.5, 7, 30];
  const keys = [...random.split(key, alphas.length)] as A[];
  for (const logSpace of [false, true]) {
    const got = values((logSpace ? random.loggamma : random.gamma)(key, alphas));
    alphas.forEach((alpha, i) => {
      const want = gammaOneReference(keys[i]!, alpha, logSpace);
      assert.ok(Math.abs(got[i]! - want) <= 2e-6 * Math.max(1, Math.abs(want)), `${logSpace ? "log" : ""}gamma(${alpha}): ${got[i]} vs ${want}`);
    });
  }
  // A shape broadcasts a: each of the 2x3 elements has its own key.
  const shaped = values(random.gamma(key, [1.5, 2.5, 7], [2, 3]));
  const sixKeys = [...random.split(key, 6)] as A[];
  shaped.forEach((g, i) => assert.ok(Math.abs(g - gammaOneReference(sixKeys[i]!, [1.5, 2.5, 7][i % 3]!, false)) <= 2e-6 * g, `shaped[${i}]`));
});

test("gamma: deterministic, the same under jit, and exp(loggamma) equals gamma", () => {
  const key = random.key(7);
  const a = np.array([0.2, 0.8, 3, 12], { dtype: "float32" });
  const g = values(random.gamma(key, a));
  assert.deepEqual(values(random.gamma(key, a)), g);
  assert.deepEqual(values(jit((x: A) => random.gamma(key, x))(a)), g);
  values(random.loggamma(key, a)).forEach((l, i) => assert.ok(Math.abs(Math.exp(l) - g[i]!) <= 1e-5 * g[i]!, `exp(loggamma)[${i}]`));
  assert.deepEqual(random.gamma(key, 2, [0, 3]).shape, [0, 3]);
  // Under vmap over keys or over a: each element as the unbatched call gives it.
  const keys = [...random.split(key, 3)] as A[];
  assert.deepEqual(values(vmap((k: A) => random.gamma(k, 2.5))(random.split(key, 3))), keys.map((k) => random.gamma(k, 2.5).item()));
  assert.deepEqual(values(vmap((x: A) => random.gamma(key, x))(a)), values(a).map((x) => random.gamma(key, x).item()));
});

/** Mean and variance of the draws, and five standard errors of each. */
function moments(v: number[]): { mean: number; variance: number; meanBound: number; varianceBound: number } {
  const n = v.length;
  const mean = v.reduce((s, x) => s + x, 0) / n;
  const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / n;
  const fourth = v.reduce((s, x) => s + (x - mean) ** 4, 0) / n;
  return { mean, variance, meanBound: 5 * Math.sqrt(variance / n), varianceBound: 5 * Math.sqrt((fourth - variance ** 2) / n) };
}

function checkMoments(name: string, draws: number[], mean: number, variance: number): void {
  const m = moments(draws);
  assert.ok(draws.every(Number.isFinite), `${name}: finite draws`);
  assert.ok(Math.abs(m.mean - mean) <= m.meanBound, `${name}: mean ${m.mean} vs ${mean} (bound ${m.meanBound})`);
  assert.ok(Math.abs(m.variance - variance) <= m.varianceBound, `${name}: variance ${m.variance} vs ${variance} (bound ${m.varianceBound})`);
}

test("gamma: moments of 10^5 draws (a = 0.5 boosted, a = 4 not); loggamma(0.01)'s mean and variance are digamma's and trigamma's", () => {
  const key = random.key(0);
  checkMoments("gamma(0.5)", values(random.gamma(key, 0.5, [100000])), 0.5, 0.5);
  checkMoments("gamma(4)", values(random.gamma(key, 4, [100000])), 4, 4);
  // ψ(0.01) and ψ'(0.01) (series at 0: −1/a − γ + (π²/6) a ..., 1/a² + π²/6 − 2ζ(3) a ...).
  checkMoments("loggamma(0.01)", values(random.loggamma(key, 0.01, [20000])), -100.5608, 10001.62);
});

test("beta, chisquare, t, f, dirichlet: moments of 20,000 draws", () => {
  const key = random.key(1);
  const N = 20000;
  checkMoments("beta(2, 3)", values(random.beta(key, 2, 3, [N])), 0.4, 0.04);
  checkMoments("beta(0.1, 0.2)", values(random.beta(key, 0.1, 0.2, [N])), 1 / 3, (0.02 / (0.09 * 1.3)));
  checkMoments("chisquare(3)", values(random.chisquare(key, 3, [N])), 3, 6);
  checkMoments("t(10)", values(random.t(key, 10, [N])), 0, 1.25);
  checkMoments("f(6, 20)", values(random.f(key, 6, 20, [N])), 20 / 18, (2 * 400 * 24) / (6 * 324 * 16));
  const alpha = [1, 2, 3];
  const rows = random.dirichlet(key, alpha, [N]).tolist() as number[][];
  assert.ok(rows.every((r) => Math.abs(r[0]! + r[1]! + r[2]! - 1) <= 1e-6), "dirichlet rows sum to 1");
  alpha.forEach((a, i) => checkMoments(`dirichlet[${i}]`, rows.map((r) => r[i]!), a / 6, (a * (6 - a)) / (36 * 7)));
});

test("beta, t and f use JAX's keys: the two keys of split(key) in JAX's order", () => {
  const key = random.key(5);
  const [k1, k2] = [...random.split(key)] as [A, A];
  const la = values(random.loggamma(k1, 2, [4]));
  const lb = values(random.loggamma(k2, 3, [4]));
  values(random.beta(key, 2, 3, [4])).forEach((b, i) => {
    const top = Math.max(la[i]!, lb[i]!);
    const [ga, gb] = [Math.exp(la[i]! - top), Math.exp(lb[i]! - top)];
    assert.ok(Math.abs(b - ga / (ga + gb)) <= 1e-6, `beta[${i}]`);
  });
  const n = values(random.normal(k1, [4]));
  const g = values(random.gamma(k2, 2.5, [4]));
  values(random.t(key, 5, [4])).forEach((x, i) => assert.ok(Math.abs(x - n[i]! * Math.sqrt(2.5 / g[i]!)) <= 1e-5 * Math.max(1, Math.abs(x)), `t[${i}]`));
  // f: the denominator's chi-square from the first key.
  const den = values(random.chisquare(k1, 4, [4]));
  const num = values(random.chisquare(k2, 3, [4]));
  values(random.f(key, 3, 4, [4])).forEach((x, i) => assert.ok(Math.abs(x - (num[i]! / 3) / (den[i]! / 4)) <= 1e-5 * x, `f[${i}]`));
});

/** log Γ(x) in float64 (Stirling's series after shifting x past 15). */
function logGamma(x: number): number {
  let shift = 0;
  while (x < 15) shift -= Math.log(x++);
  const inv = 1 / x, inv2 = inv * inv;
  return shift + (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)));
}

/** The regularized lower incomplete gamma P(a, x) in float64, by its series of positive terms. */
function lowerP(a: number, x: number): number {
  let [term, sum] = [1, 1];
  for (let n = 1; n < 5000 && term > 1e-17 * sum; n++) sum += (term *= x / (a + n));
  return Math.exp(a * Math.log(x) - x - logGamma(a + 1)) * sum;
}

/** The implicit derivative dx/da = −(∂P/∂a)/(∂P/∂x) in float64 (∂P/∂a by a central difference). */
function implicitDerivative(a: number, x: number): number {
  const h = 1e-6 * a;
  return -((lowerP(a + h, x) - lowerP(a - h, x)) / (2 * h)) / Math.exp((a - 1) * Math.log(x) - x - logGamma(a));
}

test("gamma: d sample / d a is JAX's implicit derivative −(∂P/∂a)/(∂P/∂x) at the sample; its mean is d E[x]/da = 1", () => {
  const key = random.key(0);
  // Boosted and not; the samples fall on both sides of x = max(1, a) (series and continued fraction).
  const alphas = np.array([0.05, 0.3, 0.9, 1.5, 4, 20, 150], { dtype: "float32" });
  const as = values(alphas);
  for (const log of [false, true]) {
    const sampler = log ? random.loggamma : random.gamma;
    const xs = values(sampler(key, alphas)).map((v) => (log ? Math.exp(v) : v));
    const g = values(grad((a: A) => np.sum(sampler(key, a)))(alphas) as A);
    as.forEach((a, i) => {
      const want = implicitDerivative(a, xs[i]!) / (log ? xs[i]! : 1);
      assert.ok(Math.abs(g[i]! - want) <= 2e-4 * Math.max(1e-3, Math.abs(want)), `${log ? "log" : ""}gamma'(${a}) at ${xs[i]}: ${g[i]} vs ${want}`);
    });
  }
  // Forward mode gives the same as reverse mode.
  const [, t] = jvp((a: A) => random.gamma(key, a), [alphas], [np.ones([as.length], { dtype: "float32" })]);
  const back = values(grad((a: A) => np.sum(random.gamma(key, a)))(alphas) as A);
  values(t as A).forEach((x, i) => assert.ok(Math.abs(x - back[i]!) <= 1e-6 * Math.abs(x), `jvp[${i}]`));
  // E[dx/da] = d E[x] / da = 1: the mean of 20,000 derivatives within five standard errors.
  const each = values(grad((a: A) => np.sum(random.gamma(random.key(3), a)))(np.full([20000], 2.5, { dtype: "float32" })) as A);
  const many = each.reduce((s, d) => s + d, 0) / each.length;
  const sd = Math.sqrt(each.reduce((s, d) => s + (d - many) ** 2, 0) / each.length);
  assert.ok(Math.abs(many - 1) <= 5 * sd / Math.sqrt(20000), `mean derivative ${many}`);
  // beta = Ga/(Ga + Gb) of two log-gammas: d beta/da = beta (1 − beta) · d log Ga/da, Ga from the first key.
  const [k1] = [...random.split(key)] as [A, A];
  const beta = random.beta(key, 3, 2).item() as number;
  const dLogGa = (grad((a: A) => np.sum(random.loggamma(k1, a, [1])))(np.array(3, { dtype: "float32" })) as A).item() as number;
  const db = (grad((a: A) => random.beta(key, a, 2))(np.array(3, { dtype: "float32" })) as A).item() as number;
  assert.ok(Math.abs(db - beta * (1 - beta) * dLogGa) <= 1e-5, `beta'(3): ${db}`);
  // vmap of grad: per-example derivatives as the unbatched grads.
  const per = values(vmap(grad((a: A) => random.gamma(key, a)))(np.array([0.5, 2, 7], { dtype: "float32" })) as A);
  [0.5, 2, 7].forEach((a, i) => assert.equal(per[i], (grad((x: A) => random.gamma(key, x))(np.array(a, { dtype: "float32" })) as A).item()));
  // d/da of gamma(stopGradient(a)) · a is the sample itself.
  const s = random.gamma(key, 2.5).item() as number;
  const d = (grad((a: A) => np.multiply(random.gamma(key, lax.stopGradient(a)), a))(2.5) as A).item() as number;
  assert.ok(Math.abs(d - s) <= 1e-6 * s);
});

test("random.gamma's second derivative in a, as JAX's: d/da of random_gamma_grad(a, x(a)) with x' its own implicit derivative", () => {
  const key = random.key(0);
  const a = np.array([0.7, 2.5, 5, 12], { dtype: "float32" });
  const ones = np.ones([4], { dtype: "float32" });
  const sample = (x: A): A => random.gamma(key, x);
  const first = (x: A): A => (jvp(sample, [x], [ones]) as [A, A])[1];
  const [, second] = jvp(first, [a], [ones]) as [A, A];
  // The chain rule on g(a, x) = random_gamma_grad: d/da g(a, x(a)) = ∂g/∂x · g + ∂g/∂a, the
  // partials by central differences of the first derivative's own function at the sample.
  const x = sample(a);
  const g = (p: A, q: A): A => randomGammaGrad(p, q) as A;
  const h = 1e-2;
  const dgda = np.divide(np.subtract(g(np.add(a, h), x), g(np.subtract(a, h), x)), 2 * h);
  const dgdx = np.divide(np.subtract(g(a, np.add(x, h)), g(a, np.subtract(x, h))), 2 * h);
  const expected = values(np.add(np.multiply(dgdx, g(a, x)), dgda));
  values(second).forEach((v, i) => assert.ok(Math.abs(v - expected[i]!) <= 2e-4 + 1e-3 * Math.abs(expected[i]!), `d²x/da² [${i}]: ${v} vs ${expected[i]}`));
  // hessian, jacfwd(grad) and grad(grad) of one sample (its own key) give jvp of jvp's value.
  const at = np.array(2.5, { dtype: "float32" });
  const unit = np.array(1, { dtype: "float32" });
  const one = (x: A): A => random.gamma(key, x);
  const reference = ((jvp((p: A) => (jvp(one, [p], [unit]) as [A, A])[1], [at], [unit]) as [A, A])[1].item()) as number;
  for (const [name, f] of [["hessian", hessian(one)], ["jacfwd(grad)", jacfwd(grad(one))], ["grad(grad)", grad(grad(one))]] as const) {
    const v = (f(at) as A).item() as number;
    assert.ok(Math.abs(v - reference) <= 1e-6 + 1e-5 * Math.abs(reference), `${name}: ${v} vs ${reference}`);
  }
  // loggamma's: (log x)'' = x''/x − (x'/x)², from gamma's (the same draw in log space, to float32 rounding).
  const logFirst = (p: A): A => (jvp((q: A) => random.loggamma(key, q), [p], [ones]) as [A, A])[1];
  const [, logSecond] = jvp(logFirst, [a], [ones]) as [A, A];
  const fromGamma = values(np.subtract(np.divide(second, x), np.square(np.divide(first(a), x))));
  values(logSecond).forEach((v, i) => assert.ok(Math.abs(v - fromGamma[i]!) <= 1e-3 * (1 + Math.abs(fromGamma[i]!)), `d² log x/da² [${i}]: ${v} vs ${fromGamma[i]}`));
});

test("gamma family: bad arguments are FrontendErrors", () => {
  const key = random.key(0);
  assert.throws(() => random.gamma(key, [1, 2], [3]), FrontendError);
  assert.throws(() => random.gamma(key, 1, undefined, { dtype: "float64" }), FrontendError);
  assert.throws(() => random.dirichlet(key, 1), FrontendError);
  assert.throws(() => random.gamma(np.array([1, 2, 3], { dtype: "uint32" }), 1), FrontendError);
});
