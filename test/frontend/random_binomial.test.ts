// random.binomial. The exact check: every element equals JAX's two loops (_binomial_inversion
// and _btrs) rerun here in JS over eager random.split / uniform calls of the whole shape,
// float32 steps rounded with fround (so the key usage, both loops from one key, the first
// key of each inversion split drawing, is checked draw by draw; log and log1p in float64
// then rounded, which can differ from the compiler's float32 ones by an ulp, so a bound
// exactly at a rounding boundary could differ). Moments of 10^5 draws within five standard
// errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, random, jit, vmap, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const f = Math.fround;
const values = (x: A): number[] => (x.tolist() as number[]).flat(4) as number[];
const TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
  0.0138761288230707, 0.0118967099458917, 0.010411265261972, 0.00925546218271273, 0.00833056343336287].map(f);

function tail(k: number): number {
  const c = Math.min(Math.max(k, 0), 9);
  const sq = f((c + 1) * (c + 1));
  const series = f(f(f(1 / 12) - f(f(f(1 / 360) - f(f(1 / 1260) / sq)) / sq)) / f(c + 1));
  return k <= 9 ? TAIL[Math.floor(c)]! : series;
}

/** JAX's _binomial for flattened n, p of `shape`. */
function binomialReference(key: A, ns: number[], ps: number[], shape: number[]): number[] {
  const len = ns.length;
  const q = ps.map((p) => f(p < 0.5 ? p : 1 - p));
  const count = ns.map((n) => Math.floor(n));
  const useInv = ns.map((n, i) => f(n * q[i]!) <= 10 || n < 0);
  // Inversion.
  const cInv = count.map((c, i) => (useInv[i] ? c : 0));
  const log1mq = q.map((x) => f(Math.log1p(-x)));
  let k = key;
  const num = new Array<number>(len).fill(0);
  const sum = new Array<number>(len).fill(0);
  while (sum.some((s, i) => s <= cInv[i]!)) {
    const [draw, next] = [...random.split(k)] as [A, A];
    k = next;
    const u = values(random.uniform(draw, shape));
    for (let i = 0; i < len; i++) {
      if (sum[i]! <= cInv[i]!) num[i]! += 1;
      sum[i] = f(sum[i]! + Math.ceil(f(f(Math.log(u[i]!)) / log1mq[i]!)));
    }
  }
  // BTRS.
  const n = count.map((c, i) => (useInv[i] ? 1e4 : c));
  const qb = q.map((x, i) => (useInv[i] ? 0.5 : x));
  const out = new Array<number>(len).fill(-1);
  const accepted = new Array<boolean>(len).fill(false);
  const par = n.map((c, i) => {
    const p = qb[i]!;
    const sd = f(Math.sqrt(f(f(c * p) * f(1 - p))));
    const b = f(1.15 + f(2.53 * sd));
    const m = Math.floor(f(f(c + 1) * p));
    const r = f(p / f(1 - p));
    const nm1 = f(f(c - m) + 1);
    return { c, b, m, r, nm1, a: f(f(-0.0873 + f(0.0248 * b)) + f(0.01 * p)), cc: f(f(c * p) + 0.5), vR: f(0.92 - f(4.2 / b)), alpha: f(f(2.83 + f(5.1 / b)) * sd),
      mTerm: f(f(m + 0.5) * f(Math.log(f(f(m + 1) / f(r * nm1))))) };
  });
  k = key;
  while (accepted.some((x) => !x)) {
    const [next, uKey, vKey] = [...random.split(k, 3)] as [A, A, A];
    k = next;
    const us0 = values(random.uniform(uKey, shape));
    const vs = values(random.uniform(vKey, shape));
    for (let i = 0; i < len; i++) {
      const { c, b, m, r, nm1, a, cc, vR, alpha, mTerm } = par[i]!;
      const u = f(us0[i]! - 0.5);
      const us = f(0.5 - Math.abs(u));
      const quick = us >= 0.07 && vs[i]! <= vR;
      const cand = Math.floor(f(f(f(f(f(2 * a) / us) + b) * u) + cc));
      const reject = cand < 0 || cand > c;
      const v = f(Math.log(f(f(vs[i]! * alpha) / f(f(a / f(us * us)) + b))));
      const nk1 = f(f(c - cand) + 1);
      const terms = f(f(mTerm + f(f(c + 1) * f(Math.log(f(nm1 / nk1))))) + f(f(cand + 0.5) * f(Math.log(f(f(r * nk1) / f(cand + 1))))));
      const ub = f(f(f(f(terms + tail(m)) + tail(f(c - m))) - tail(cand)) - tail(f(c - cand)));
      const accept = quick || (!reject && v <= ub);
      if (accept) out[i] = cand;
      accepted[i] = accepted[i]! || accept;
    }
  }
  return ns.map((_, i) => {
    const s = useInv[i] ? num[i]! - 1 : out[i]!;
    return ps[i]! < 0.5 ? s : count[i]! - s;
  });
}

test("binomial: every element is JAX's inversion loop (n·q ≤ 10) or BTRS loop (n·q > 10) over eager draws", () => {
  const key = random.key(11);
  const ns = [0, 1, 10, 20, 5, 100, 1000, 60, 1e4, 1e4];
  const ps = [0.3, 0.5, 0.9, 0.4, 0.02, 0.5, 0.25, 0.95, 0.001, 0.002];
  const got = values(random.binomial(key, ns, ps));
  assert.deepEqual(got, binomialReference(key, ns, ps.map(f), [ns.length]));
  assert.deepEqual(values(random.binomial(random.key(2), [30, 4], 0.6, [3, 2])), binomialReference(random.key(2), [30, 4, 30, 4, 30, 4], new Array(6).fill(f(0.6)), [3, 2]));
});

test("binomial: moments of 10^5 draws; edge values; deterministic, jit and vmap equal", () => {
  for (const [n, p] of [[12, 0.3], [200, 0.7]] as const) {
    const v = values(random.binomial(random.key(n), n, p, [100000]));
    const len = v.length;
    const mean = v.reduce((s, x) => s + x, 0) / len;
    const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / len;
    const fourth = v.reduce((s, x) => s + (x - mean) ** 4, 0) / len;
    assert.ok(v.every((x) => Number.isInteger(x) && x >= 0 && x <= n), `binomial(${n}, ${p}): integers in [0, n]`);
    assert.ok(Math.abs(mean - n * p) <= 5 * Math.sqrt(variance / len), `binomial(${n}, ${p}) mean ${mean}`);
    assert.ok(Math.abs(variance - n * p * (1 - p)) <= 5 * Math.sqrt((fourth - variance ** 2) / len), `binomial(${n}, ${p}) variance ${variance}`);
  }
  const key = random.key(4);
  // p = 0 and 1 give 0 and n; p outside [0, 1], NaN or n < 0 give NaN; n = inf gives inf.
  const edge = values(random.binomial(key, [7, 7, 7, 7, -1, Infinity], [0, 1, -0.5, NaN, 0.5, 0.3]));
  assert.deepEqual(edge.slice(0, 2), [0, 7]);
  assert.ok(edge.slice(2, 5).every(Number.isNaN));
  assert.equal(edge[5], Infinity);
  const ns = np.array([3, 40, 500], { dtype: "float32" });
  const b = values(random.binomial(key, ns, 0.4));
  assert.deepEqual(values(random.binomial(key, ns, 0.4)), b);
  assert.deepEqual(values(jit((k: A, n: A) => random.binomial(k, n, 0.4))(key, ns)), b);
  const keys = [...random.split(key, 3)] as A[];
  assert.deepEqual(values(vmap((k: A) => random.binomial(k, 25, 0.5))(random.split(key, 3))), keys.map((k) => random.binomial(k, 25, 0.5).item()));
  assert.throws(() => random.binomial(key, 3, 0.5, [2], { dtype: "int32" }), FrontendError);
  assert.throws(() => random.binomial(key, [1, 2], 0.5, [3]), FrontendError);
});
