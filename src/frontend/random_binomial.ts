// jax.random.binomial with JAX's algorithms and key usage (jax/_src/random.py, _binomial):
//
// - q = min(p, 1 − p) (p < 0.5 keeps p; otherwise the result is n − the sample of 1 − p).
// - Elements with n·q ≤ 10 use inversion by geometric sums: every round splits the loop's
//   key in two (the FIRST key draws, the second is the next loop key), draws one uniform
//   per element of the whole shape, adds ceil(log u / log1p(−q)) to the element's sum and
//   counts the round while the sum was still ≤ n. The result is the count − 1.
// - The others use Hörmann's BTRS (transformed rejection with squeeze): three keys a round
//   (next, u key, v key), an element taking the round's candidate whenever that round
//   accepts it; the bound uses Stirling's tail from a table for k ≤ 9 and, as JAX's, the
//   series evaluated at k clamped to 9 above that.
// - Both loops start from the same key over the whole shape. n NaN or negative, p NaN or
//   outside [0, 1] (q < 0) give NaN; n = +inf gives +inf. n is floored.
// Samples are float32, as JAX's default dtype.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { whileLoop } from "./control.js";
import type { DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";
import { split, uniform } from "./random.js";
import { sampleShape } from "./random_gamma.js";

type A = ArrayBase;

/** binomial's options; `shape` (default the broadcast shape of n and p) comes before, positionally. */
export interface BinomialOptions {
  /** float32 (JAX's binomial gives floats; the samplers' one float dtype so far). */
  readonly dtype?: DType;
}

const keys = (key: A, n: number): A[] => [...split(key, n)] as A[];
const allAxes = (x: A): number[] => x.shape.map((_, i) => i);
const fill = (like: A, v: number): A => lax.full(like.shape, v, "float32");

/** log k! − (k + ½) log(k + 1) + (k + 1) − ½ log 2π: a table for k ≤ 9, else (as JAX's) its series at k clamped to 9. */
const STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
  0.0138761288230707, 0.0118967099458917, 0.010411265261972, 0.00925546218271273, 0.00833056343336287];
function stirlingTail(k: A): A {
  const clamped = lax.max(lax.min(k, 9), 0);
  const kp1 = lax.add(clamped, 1);
  const kp1sq = lax.mul(kp1, kp1);
  const series = lax.div(lax.sub(1 / 12, lax.div(lax.sub(1 / 360, lax.div(1 / 1260, kp1sq)), kp1sq)), kp1);
  const index = lax.floor(clamped);
  const table = STIRLING_TAIL.reduce((acc, v, i) => lax.selectN(lax.eq(index, i), acc, fill(k, v)), fill(k, 0));
  return lax.selectN(lax.le(k, 9), series, table);
}

/** Inversion: the number of geometric(q) variables whose sum stays ≤ n (minus one). */
function inversion(key: A, count: A, q: A): A {
  const log1mq = lax.log1p(lax.neg(q));
  const [, num] = whileLoop(
    ([, , sum]: A[]) => lax.reduceOr(lax.le(sum!, count), allAxes(count)),
    ([k, n, sum]: A[]) => {
      const [draw, next] = keys(k!, 2);
      const counted = lax.selectN(lax.le(sum!, count), n!, lax.add(n!, 1));
      const geom = lax.ceil(lax.div(lax.log(uniform(draw!, count.shape)), log1mq));
      return [next!, counted, lax.add(sum!, geom)];
    },
    [key, fill(count, 0), fill(count, 0)],
  );
  return lax.sub(num!, 1);
}

/** Hörmann's BTRS for n·q > 10. */
function btrs(key: A, count: A, q: A): A {
  const stddev = lax.sqrt(lax.mul(lax.mul(count, q), lax.sub(1, q)));
  const b = lax.add(1.15, lax.mul(2.53, stddev));
  const a = lax.add(lax.add(-0.0873, lax.mul(0.0248, b)), lax.mul(0.01, q));
  const c = lax.add(lax.mul(count, q), 0.5);
  const vR = lax.sub(0.92, lax.div(4.2, b));
  const r = lax.div(q, lax.sub(1, q));
  const alpha = lax.mul(lax.add(2.83, lax.div(5.1, b)), stddev);
  const m = lax.floor(lax.mul(lax.add(count, 1), q));
  const nm1 = lax.add(lax.sub(count, m), 1);
  // The candidate-free terms of the bound (the m term), and its Stirling tails of m and n − m.
  const mTerm = lax.mul(lax.add(m, 0.5), lax.log(lax.div(lax.add(m, 1), lax.mul(r, nm1))));
  const [tailM, tailNm] = [stirlingTail(m), stirlingTail(lax.sub(count, m))];
  const [, out] = whileLoop(
    ([, , accepted]: A[]) => lax.reduceOr(lax.not(accepted!), allAxes(count)),
    ([k, kOut, accepted]: A[]) => {
      const [next, uKey, vKey] = keys(k!, 3);
      const u = lax.sub(uniform(uKey!, count.shape), 0.5);
      const v0 = uniform(vKey!, count.shape);
      const us = lax.sub(0.5, lax.abs(u));
      const quick = lax.and(lax.ge(us, 0.07), lax.le(v0, vR));
      const cand = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(2, a), us), b), u), c));
      const reject = lax.or(lax.lt(cand, 0), lax.gt(cand, count));
      const v = lax.log(lax.div(lax.mul(v0, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)));
      const nk1 = lax.add(lax.sub(count, cand), 1);
      // JAX's sum order: the m, n and k terms, then the Stirling tails.
      const terms = lax.add(lax.add(mTerm, lax.mul(lax.add(count, 1), lax.log(lax.div(nm1, nk1)))),
        lax.mul(lax.add(cand, 0.5), lax.log(lax.div(lax.mul(r, nk1), lax.add(cand, 1)))));
      const ub = lax.sub(lax.sub(lax.add(lax.add(terms, tailM), tailNm), stirlingTail(cand)), stirlingTail(lax.sub(count, cand)));
      const accept = lax.or(quick, lax.and(lax.not(reject), lax.le(v, ub)));
      return [next!, lax.selectN(accept, kOut!, cand), lax.or(accepted!, accept)];
    },
    [key, fill(count, -1), lax.full(count.shape, false, "bool")],
  );
  return out!;
}

/** The sampler for n and p broadcast to the sample shape (one program per shape). */
const binomialProgram = jit((key: A, n: A, p: A): A => {
  const pLtHalf = lax.lt(p, 0.5);
  const q0 = lax.selectN(pLtHalf, lax.sub(1, p), p);
  const countBad = lax.or(lax.ne(n, n), lax.lt(n, 0));
  const countInf = lax.eq(lax.abs(n), Infinity);
  const qNan = lax.ne(q0, q0);
  const qNeg = lax.lt(q0, 0);
  const q = lax.selectN(lax.or(qNan, qNeg), q0, fill(q0, 0.01));
  const useInversion = lax.or(countBad, lax.le(lax.mul(n, q), 10));
  const count = lax.floor(n);
  const samples = lax.selectN(useInversion,
    btrs(key, lax.selectN(useInversion, count, fill(count, 1e4)), lax.selectN(useInversion, q, fill(q, 0.5))),
    inversion(key, lax.selectN(useInversion, fill(count, 0), count), q));
  const invalid = lax.or(lax.or(qNeg, qNan), countBad);
  const checked = lax.selectN(invalid, samples, fill(samples, NaN));
  const infinite = lax.selectN(lax.and(countInf, lax.not(invalid)), checked, fill(samples, Infinity));
  return lax.selectN(lax.or(lax.or(pLtHalf, countBad), lax.or(qNan, countInf)), lax.sub(count, infinite), infinite);
});

/** jax.random.binomial(key, n, p, shape?, { dtype }): Binomial(n, p) samples as float32 (inversion where n·min(p, 1−p) ≤ 10, else BTRS; JAX's key usage, see the header). */
export function binomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, shape?: readonly number[], options: BinomialOptions = {}): A {
  const dtype = options.dtype ?? "float32";
  if (dtype !== "float32") throw new FrontendError(`random.binomial: dtype ${dtype} is not supported yet (float32 is)`, "random.binomial", "dtype");
  // The samples do not vary continuously with n or p: no derivative flows through them.
  const [nv, pv] = [n, p].map((x) => lax.convertElementType(lax.stopGradient(asArrayValue(x, undefined, "random.binomial")), "float32")) as [A, A];
  const s = sampleShape("binomial", shape, nv, pv);
  if (s.some((d) => d === 0)) return lax.full(s, 0, "float32");
  return binomialProgram(asArrayValue(key, undefined, "random.binomial"), lax.broadcastTo(nv, s), lax.broadcastTo(pv, s)) as A;
}
