// erf on f64 against a reference computed here in 600-bit fixed point (BigInt): the
// Maclaurin series with exact integer arithmetic, and 2/√π from Machin's π and an
// integer square root. The interpreter's erf must stay within 2.5 ulp everywhere
// (a plain e^(-x²) · series form was off by up to 17 ulp near 5.6).

import { test } from "node:test";
import assert from "node:assert/strict";
import { erf } from "../../src/interpreter/kernels/float_math.js";
import { rng } from "../support/prng.js";

const P = 600n;
const ONE = 1n << P;

/** atan(1/k) in fixed point (alternating series). */
function atanInverse(k: number): bigint {
  const k2 = BigInt(k * k);
  let power = ONE / BigInt(k);
  let sum = power;
  for (let n = 1n, sign = -1n; power !== 0n; n++, sign = -sign) {
    power /= k2;
    sum += (sign * power) / (2n * n + 1n);
  }
  return sum;
}

function sqrtFixed(a: bigint): bigint {
  const v = a << P;
  let x = 1n << BigInt(Math.ceil(v.toString(2).length / 2));
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

const PI = 16n * atanInverse(5) - 4n * atanInverse(239);
const TWO_OVER_SQRT_PI = (2n * ONE * ONE) / sqrtFixed(PI);

/** A double as an exact fixed-point number (the doubles tested are ≥ 2^-400). */
function toFixed(d: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, d);
  const bits = view.getBigUint64(0);
  const exponentField = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  if (exponentField !== 0) mantissa |= 1n << 52n;
  const shift = BigInt((exponentField === 0 ? -1074 : exponentField - 1075)) + P;
  const magnitude = shift >= 0n ? mantissa << shift : mantissa >> -shift;
  return bits >> 63n === 1n ? -magnitude : magnitude;
}

/** erf(x) = 2/√π Σ (-1)ⁿ x^(2n+1) / (n! (2n+1)), in fixed point. */
function erfReference(x: number): bigint {
  const xf = toFixed(x);
  const x2 = (xf * xf) >> P;
  let power = xf;
  let sum = xf;
  for (let n = 1n; ; n++) {
    power = -((power * x2) >> P) / n;
    const term = power / (2n * n + 1n);
    if (term === 0n) break;
    sum += term;
  }
  return (sum * TWO_OVER_SQRT_PI) >> P;
}

/** |y - exact| in ulps of the double nearest the exact value. */
function ulpError(y: number, exact: bigint): number {
  const approx = Number(exact) / Number(ONE);
  const ulp = 2 ** (Math.floor(Math.log2(Math.abs(approx))) - 52);
  return Math.abs(Number(toFixed(y) - exact) / Number(ONE)) / ulp;
}

test("erf (f64) within 2.5 ulp of a 600-bit reference on (0, 6] and in its tails", () => {
  const next = rng(20261123);
  const xs: number[] = [];
  for (let i = 0; i < 1500; i++) xs.push(6 * next());
  for (let i = 0; i < 100; i++) xs.push(1 - i * 1e-4, 1 + i * 1e-4, 5.9 + i * 1e-3, 10 ** (-100 + i));
  let worst = 0;
  let worstAt = 0;
  for (const x of xs.filter((v) => v > 0)) {
    const e = ulpError(erf(x), erfReference(x));
    if (e > worst) { worst = e; worstAt = x; }
    assert.equal(erf(-x), -erf(x), `erf is odd at ${x}`);
  }
  assert.ok(worst <= 2.5, `worst error ${worst.toFixed(2)} ulp at x = ${worstAt}`);
  assert.equal(erf(6), 1);
  assert.equal(erf(-Infinity), -1);
  assert.ok(Object.is(erf(-0), -0));
  assert.ok(Number.isNaN(erf(NaN)));
  // Below 2^-1022 · √π/2 the result is 2/√π · x rounded once.
  assert.equal(erf(1e-310), (2 / Math.sqrt(Math.PI)) * 1e-310);
});
