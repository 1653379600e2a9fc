// JAX's random_gamma_grad: the derivative of a Gamma(a, 1) sample x with respect to a at
// a fixed key (implicit reparameterization). The sample is the inverse of the regularized
// lower incomplete gamma function P(a, ·) at a fixed uniform level, so
//   dx/da = −(∂P/∂a) / (∂P/∂x),   ∂P/∂x = x^(a−1) e^(−x) / Γ(a),
// and the common factor x^a e^(−x) / Γ(a) cancels. As JAX (and Cephes' igamma) computes
// ∂P/∂a: by P's power series, differentiated term by term, where x ≤ 1 or x ≤ a, and by
// the continued fraction of Q = 1 − P (its convergents differentiated alongside, rescaled
// by ε when they grow past 1/ε) where x > 1 and x > a; each runs until its derivative's
// last change is below float32's ε relative (the series) or absolute (the fraction, at
// most 2000 steps). x = 0 gives 0, a ≤ 0, x < 0 or NaN give NaN. Every element runs its
// own iteration count: the loops here run over all elements while any is still running
// and keep the state of those that finished (vmap's batching of JAX's per-element loop).

import type { ArrayBase } from "./core.js";
import { whileLoop } from "./control.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";

type A = ArrayBase;

const EPS = 2 ** -23;
/** log of float32's largest finite value: below −that, x^a e^(−x) / Γ(a) underflows. */
const LOG_MAX = 88.72284;
const FLOAT32_TINY = 2 ** -126;

/** `next` where `on`, else `old`, for each state entry. */
const keep = (on: A, next: A[], old: A[]): A[] => next.map((n, i) => lax.selectN(on, old[i]!, n));
const anyOf = (x: A): A => lax.reduceOr(x, x.shape.map((_, i) => i));

/** ∂x/∂a by P's series (JAX's _igamma_series in SAMPLE_DERIVATIVE mode). */
function series(a: A, x: A, enabled: A): A {
  // State: running?, r, c (the last term), ans (the sum), dc/da, dans/da.
  const init = [enabled, a, lax.full(a.shape, 1, "float32"), lax.full(a.shape, 1, "float32"), lax.full(a.shape, 0, "float32"), lax.full(a.shape, 0, "float32")];
  const [, , , ans, , dans] = whileLoop((s: A[]) => anyOf(s[0]!), (s: A[]) => {
    const [on, r0, c0, ans0, dc0, dans0] = s;
    const r = lax.add(r0!, 1);
    const dc = lax.sub(lax.mul(dc0!, lax.div(x, r)), lax.div(lax.mul(c0!, x), lax.mul(r, r)));
    const dansNext = lax.add(dans0!, dc);
    const c = lax.mul(c0!, lax.div(x, r));
    const ansNext = lax.add(ans0!, c);
    const running = lax.and(on!, lax.gt(lax.abs(lax.div(dc, dansNext)), EPS));
    return [running, ...keep(on!, [r, c, ansNext, dc, dansNext], s.slice(1))];
  }, init);
  const dLogAx = lax.sub(lax.log(x), lax.digamma(lax.add(a, 1)));
  return lax.div(lax.mul(lax.neg(lax.add(dans!, lax.mul(ans!, dLogAx))), x), a);
}

/** ∂x/∂a by Q's continued fraction (JAX's _igammac_continued_fraction in SAMPLE_DERIVATIVE mode), negated as random_gamma_grad uses it. */
function continuedFraction(a: A, x: A, enabled: A): A {
  const full = (v: number): A => lax.full(a.shape, v, "float32");
  const y0 = lax.sub(1, a);
  const z0 = lax.add(lax.add(x, y0), 1);
  const pkm1 = lax.add(x, 1);
  const qkm1 = lax.mul(z0, x);
  const ans0 = lax.div(pkm1, qkm1);
  const dqkm1 = lax.neg(x);
  const dans0 = lax.div(lax.sub(full(0), lax.mul(ans0, dqkm1)), qkm1);
  // State: running?, ans, y, z, c, p[k−1], q[k−1], p[k−2], q[k−2], their derivatives in a (k−2, then k−1), dans/da.
  const init = [enabled, ans0, y0, z0, full(0), pkm1, qkm1, full(1), x, full(0), full(0), full(0), dqkm1, dans0];
  const out = whileLoop((s: A[]) => anyOf(lax.and(s[0]!, lax.lt(s[4]!, 2000))), (s: A[]) => {
    const [on0, ans, y0s, z0s, c0, p1, q1, p2, q2, dp2, dq2, dp1, dq1, dansOld] = s;
    const on = lax.and(on0!, lax.lt(c0!, 2000));
    const c = lax.add(c0!, 1);
    const y = lax.add(y0s!, 1);
    const z = lax.add(z0s!, 2);
    const yc = lax.mul(y, c);
    const pk = lax.sub(lax.mul(p1!, z), lax.mul(p2!, yc));
    const qk = lax.sub(lax.mul(q1!, z), lax.mul(q2!, yc));
    const nonzero = lax.ne(qk, 0);
    const ansNext = lax.selectN(nonzero, ans!, lax.div(pk, qk));
    const dpk = lax.add(lax.sub(lax.sub(lax.mul(dp1!, z), p1!), lax.mul(dp2!, yc)), lax.mul(p2!, c));
    const dqk = lax.add(lax.sub(lax.sub(lax.mul(dq1!, z), q1!), lax.mul(dq2!, yc)), lax.mul(q2!, c));
    const dansNext = lax.selectN(nonzero, dansOld!, lax.div(lax.sub(dpk, lax.mul(ansNext, dqk)), qk));
    const change = lax.selectN(nonzero, full(1), lax.abs(lax.sub(dansNext, dansOld!)));
    // Rescale the convergents (and their derivatives) when they grow past 1/ε.
    const rescale = lax.gt(lax.abs(pk), 1 / EPS);
    const scaled = (v: A): A => lax.selectN(rescale, v, lax.mul(v, EPS));
    const running = lax.and(on, lax.gt(change, EPS));
    const next = [ansNext, y, z, c, scaled(pk), scaled(qk), scaled(p1!), scaled(q1!), scaled(dp1!), scaled(dq1!), scaled(dpk), scaled(dqk), dansNext];
    return [running, ...keep(on, next, s.slice(1))];
  }, init);
  const [ans, dans] = [out[1]!, out[13]!];
  const dLogAx = lax.sub(lax.log(x), lax.digamma(a));
  return lax.mul(lax.add(dans, lax.mul(ans, dLogAx)), x);
}

/** random_gamma_grad(a, x): d(sample)/da of float32 Gamma(a) samples x, elementwise (same shapes). */
export const randomGammaGrad = jit((a: A, x: A): A => {
  const isNan = lax.or(lax.ne(a, a), lax.ne(x, x));
  const xIsZero = lax.eq(x, 0);
  const domainError = lax.or(lax.lt(x, 0), lax.le(a, 0));
  const useFraction = lax.and(lax.gt(x, 1), lax.gt(x, a));
  const logAx = lax.sub(lax.sub(lax.mul(a, lax.log(x)), x), lax.lgamma(a));
  const underflow = lax.lt(logAx, -LOG_MAX);
  const enabled = lax.not(lax.or(lax.or(lax.or(xIsZero, domainError), underflow), isNan));
  const out = lax.selectN(useFraction,
    series(a, x, lax.and(enabled, lax.not(useFraction))),
    continuedFraction(a, x, lax.and(enabled, useFraction)));
  const zeroed = lax.selectN(xIsZero, out, lax.full(a.shape, 0, "float32"));
  return lax.selectN(lax.or(domainError, isNan), zeroed, lax.full(a.shape, NaN, "float32"));
});

/** d(log sample)/da of log-space samples: the sample's derivative over the sample, exp(log x) taken as float32's smallest normal where it underflows to 0 (as JAX's). */
export function logGammaGrad(a: A, logX: A): A {
  const x = lax.exp(logX);
  const safe = lax.selectN(lax.eq(x, 0), x, lax.full(x.shape, FLOAT32_TINY, "float32"));
  return lax.div(randomGammaGrad(a, safe) as A, safe);
}
