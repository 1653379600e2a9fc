// random.poisson. The exact check: every element equals JAX's two loops (_poisson_knuth and
// _poisson_rejection) rerun here in JS over eager random.split / uniform calls of the whole
// shape, each float32 step rounded with fround, so the key usage (both loops from the same
// key, two keys per Knuth round, three per rejection round, draws shared over the shape)
// is checked draw by draw. The distribution check: moments of 10^5 draws within five
// standard errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, random, jit, lax, vmap, grad, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const f32 = Math.fround;
const values = (x: A): number[] => (x.tolist() as number[]).flat(4) as number[];

/** log Γ(x) for x ≥ 1 (Stirling's series after shifting x up past 15), to compare float32 values. */
function logGamma(x: number): number {
  let shift = 0;
  while (x < 15) shift -= Math.log(x++);
  const inv = 1 / x, inv2 = inv * inv;
  return shift + (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)));
}

/** JAX's _poisson for the flattened rates `lams` of `shape`: both loops over the whole shape, from `key`. */
function poissonReference(key: A, lams: number[], shape: number[]): number[] {
  const n = lams.length;
  const useKnuth = lams.map((l) => Number.isNaN(l) || l < 10);
  // Knuth: rates 0 where the element takes the other branch.
  const lamK = lams.map((l, i) => (useKnuth[i] ? l : 0));
  let k = key;
  const counts = new Array<number>(n).fill(0);
  const logProd = new Array<number>(n).fill(0);
  while (logProd.some((p, i) => p > -lamK[i]!)) {
    const [next, draw] = [...random.split(k)] as [A, A];
    k = next;
    const u = values(random.uniform(draw, shape));
    for (let i = 0; i < n; i++) {
      if (logProd[i]! > -lamK[i]!) counts[i]! += 1;
      logProd[i] = f32(logProd[i]! + f32(Math.log(u[i]!)));
    }
  }
  // Rejection: rates 1e5 where the element takes Knuth's branch.
  const lamR = lams.map((l, i) => f32(useKnuth[i] ? 1e5 : l));
  const b = lamR.map((l) => f32(0.931 + f32(2.53 * f32(Math.sqrt(l)))));
  const a = b.map((bi) => f32(-0.059 + f32(0.02483 * bi)));
  const invAlpha = b.map((bi) => f32(1.1239 + f32(1.1328 / f32(bi - 3.4))));
  const vR = b.map((bi) => f32(0.9277 - f32(3.6224 / f32(bi - 2))));
  const out = new Array<number>(n).fill(-1);
  const accepted = new Array<boolean>(n).fill(false);
  k = key;
  while (accepted.some((x) => !x)) {
    const [next, uKey, vKey] = [...random.split(k, 3)] as [A, A, A];
    k = next;
    const us = values(random.uniform(uKey, shape));
    const vs = values(random.uniform(vKey, shape));
    for (let i = 0; i < n; i++) {
      const [l, ai, bi] = [lamR[i]!, a[i]!, b[i]!];
      const u = f32(us[i]! - 0.5);
      const v = vs[i]!;
      const uShift = f32(0.5 - Math.abs(u));
      const cand = Math.floor(f32(f32(f32(f32(f32(f32(2 * ai) / uShift) + bi) * u) + l) + 0.43));
      const s = Math.log(f32(f32(v * invAlpha[i]!) / f32(f32(ai / f32(uShift * uShift)) + bi)));
      const t = f32(-l + f32(cand * f32(Math.log(l)))) - logGamma(cand + 1);
      const accept = (uShift >= 0.07 && v <= vR[i]!) || (!(cand < 0 || (uShift < 0.013 && v > uShift)) && s <= t);
      if (accept) out[i] = cand;
      accepted[i] = accepted[i]! || accept;
    }
  }
  return lams.map((l, i) => (l === 0 ? 0 : useKnuth[i] ? counts[i]! - 1 : out[i]!));
}

test("poisson: every element is JAX's Knuth loop (lam < 10) or transformed rejection loop (lam ≥ 10) over eager draws", () => {
  const key = random.key(42);
  const lams = [0, 0.3, 1, 4.5, 9.99, 10, 25, 300, 1e4];
  assert.deepEqual(values(random.poisson(key, lams)), poissonReference(key, lams.map(f32), [lams.length]));
  // A shape broadcasts lam; the draws are over the whole [2, 3] shape.
  const shaped = random.poisson(random.key(3), [2, 40, 0.5], [2, 3]);
  assert.equal(shaped.dtype, "int32");
  assert.deepEqual(shaped.shape, [2, 3]);
  assert.deepEqual(values(shaped), poissonReference(random.key(3), [2, 40, 0.5, 2, 40, 0.5], [2, 3]));
});

test("poisson: deterministic, the same under jit and vmap, dtype, empty shapes", () => {
  const key = random.key(7);
  const lam = np.array([0.5, 3, 12, 80], { dtype: "float32" });
  const p = values(random.poisson(key, lam));
  assert.deepEqual(values(random.poisson(key, lam)), p);
  assert.deepEqual(values(jit((k: A, l: A) => random.poisson(k, l))(key, lam)), p);
  const keys = [...random.split(key, 3)] as A[];
  assert.deepEqual(values(vmap((k: A) => random.poisson(k, 6.5))(random.split(key, 3))), keys.map((k) => random.poisson(k, 6.5).item()));
  assert.deepEqual(values(vmap((l: A) => random.poisson(key, l))(lam)), values(lam).map((l) => random.poisson(key, l).item()));
  assert.equal(random.poisson(key, 3, [4], { dtype: "int16" }).dtype, "int16");
  assert.deepEqual(random.poisson(key, 3, [0, 2]).shape, [0, 2]);
  assert.throws(() => random.poisson(key, 3, [2], { dtype: "float32" }), FrontendError);
  assert.throws(() => random.poisson(key, [1, 2], [3]), FrontendError);
  // Integer counts carry no derivative: grad through lam is zero, as JAX's.
  assert.equal((grad((l: A) => np.sum(lax.convertElementType(random.poisson(key, l, [3]), "float32")))(np.array(4, { dtype: "float32" })) as A).item(), 0);
});

test("poisson: moments of 10^5 draws at lam = 3 (Knuth) and lam = 50 (rejection)", () => {
  for (const lam of [3, 50]) {
    const v = values(random.poisson(random.key(lam), lam, [100000]));
    const n = v.length;
    const mean = v.reduce((s, x) => s + x, 0) / n;
    const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / n;
    const fourth = v.reduce((s, x) => s + (x - mean) ** 4, 0) / n;
    assert.ok(v.every((x) => Number.isInteger(x) && x >= 0), `poisson(${lam}): non-negative integers`);
    assert.ok(Math.abs(mean - lam) <= 5 * Math.sqrt(variance / n), `poisson(${lam}) mean ${mean}`);
    assert.ok(Math.abs(variance - lam) <= 5 * Math.sqrt((fourth - variance ** 2) / n), `poisson(${lam}) variance ${variance}`);
  }
});
