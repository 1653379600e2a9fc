// jax.random.poisson with JAX's algorithms and key usage (jax/_src/random.py, _poisson):
//
// - Elements with lam < 10 (or NaN) follow Knuth's algorithm: every round splits the
//   loop's key in two (next, draw), draws one uniform per element of the whole shape from
//   the draw key, and adds its log to the element's running log-product; an element's
//   count grows while its log-product is still above −lam. The result is the count − 1.
// - Elements with lam ≥ 10 follow Hörmann's transformed rejection (PTRS): every round
//   splits the loop's key in three (next, u key, v key) and draws two uniforms per element
//   of the whole shape; an element takes the round's candidate whenever that round
//   accepts it (as JAX's loop does: a later accepting round overwrites an earlier one).
// - Both loops start from the same key and run over the whole shape (so the draws are
//   shared, not one key per element as gamma's), while any element is still running;
//   each element then takes its branch's value, and lam = 0 gives 0.
//
// The counts are computed in float32 (exact below 2^24) and converted to the integer dtype.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { whileLoop } from "./control.js";
import { isIntegral, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";
import { split, uniform } from "./random.js";
import { sampleShape } from "./random_gamma.js";

type A = ArrayBase;

/** poisson's options; `shape` (default lam's shape) comes before, positionally. */
export interface PoissonOptions {
  /** An integer dtype (int32 by default, as JAX without x64). */
  readonly dtype?: DType;
}

/** The two keys of split(key) / the three of split(key, 3). */
const keys = (key: A, n: number): A[] => [...split(key, n)] as A[];

/** Knuth's counts of the float32 `lam` (every element's count, in float32, before the final − 1). */
function knuth(key: A, lam: A): A {
  const negLam = lax.neg(lam);
  const init = [key, lax.full(lam.shape, 0, "float32"), lax.full(lam.shape, 0, "float32")];
  const [, count] = whileLoop(
    ([, , logProd]: A[]) => lax.reduceOr(lax.gt(logProd!, negLam), lam.shape.map((_, i) => i)),
    ([k, n, logProd]: A[]) => {
      const [next, draw] = keys(k!, 2);
      const running = lax.gt(logProd!, negLam);
      return [next!, lax.selectN(running, n!, lax.add(n!, 1)), lax.add(logProd!, lax.log(uniform(draw!, lam.shape)))];
    },
    init,
  );
  return lax.sub(count!, 1);
}

/** Hörmann's transformed rejection for lam ≥ 10 (its constants a, b, 1/α, v_r of lam). */
function rejection(key: A, lam: A): A {
  const logLam = lax.log(lam);
  const b = lax.add(0.931, lax.mul(2.53, lax.sqrt(lam)));
  const a = lax.add(-0.059, lax.mul(0.02483, b));
  const invAlpha = lax.add(1.1239, lax.div(1.1328, lax.sub(b, 3.4)));
  const vR = lax.sub(0.9277, lax.div(3.6224, lax.sub(b, 2)));
  const init = [key, lax.full(lam.shape, -1, "float32"), lax.full(lam.shape, false, "bool")];
  const [, out] = whileLoop(
    ([, , accepted]: A[]) => lax.reduceOr(lax.not(accepted!), lam.shape.map((_, i) => i)),
    ([k, kOut, accepted]: A[]) => {
      const [next, uKey, vKey] = keys(k!, 3);
      const u = lax.sub(uniform(uKey!, lam.shape), 0.5);
      const v = uniform(vKey!, lam.shape);
      const us = lax.sub(0.5, lax.abs(u));
      const candidate = lax.floor(lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(2, a), us), b), u), lam), 0.43));
      const s = lax.log(lax.div(lax.mul(v, invAlpha), lax.add(lax.div(a, lax.mul(us, us)), b)));
      const t = lax.sub(lax.add(lax.neg(lam), lax.mul(candidate, logLam)), lax.lgamma(lax.add(candidate, 1)));
      const quick = lax.and(lax.ge(us, 0.07), lax.le(v, vR));
      const reject = lax.or(lax.lt(candidate, 0), lax.and(lax.lt(us, 0.013), lax.gt(v, us)));
      const accept = lax.or(quick, lax.and(lax.not(reject), lax.le(s, t)));
      return [next!, lax.selectN(accept, kOut!, candidate), lax.or(accepted!, accept)];
    },
    init,
  );
  return out!;
}

/** The sampler for lam already broadcast to the sample shape (one program per shape). */
const poissonProgram = jit((key: A, lam: A): A => {
  const useKnuth = lax.or(lax.ne(lam, lam), lax.lt(lam, 10));
  // Each branch runs on every element; the other branch's elements get a harmless rate (0 for Knuth, 1e5 for the rejection, as JAX's).
  const counts = lax.selectN(useKnuth,
    rejection(key, lax.selectN(useKnuth, lam, lax.full(lam.shape, 1e5, "float32"))),
    knuth(key, lax.selectN(useKnuth, lax.full(lam.shape, 0, "float32"), lam)));
  return lax.selectN(lax.eq(lam, 0), counts, lax.full(lam.shape, 0, "float32"));
});

/** jax.random.poisson(key, lam, shape?, { dtype }): Poisson(lam) counts (Knuth below 10, Hörmann's rejection from 10; JAX's key usage, see the header). */
export function poisson(key: ArrayLike, lam: ArrayLike, shape?: readonly number[], options: PoissonOptions = {}): A {
  const dtype = options.dtype ?? "int32";
  if (!isIntegral(dtype)) throw new FrontendError(`random.poisson: dtype ${dtype} is not an integer dtype`, "random.poisson", "dtype");
  // The counts do not vary continuously with lam: no derivative flows through it (JAX's integer result has none either).
  const rate = lax.convertElementType(lax.stopGradient(asArrayValue(lam, undefined, "random.poisson")), "float32");
  const s = sampleShape("poisson", shape, rate);
  if (s.some((d) => d === 0)) return lax.full(s, 0, dtype);
  const counts = poissonProgram(asArrayValue(key, undefined, "random.poisson"), lax.broadcastTo(rate, s)) as A;
  return lax.convertElementType(counts, dtype);
}
