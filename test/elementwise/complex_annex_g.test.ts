// Complex functions at infinities, NaNs and signed zeros: the special values of C99
// Annex G (G.6), written here from the standard's tables (and their conj / odd / even
// symmetries), not from the code; a few interior values computed with mpmath at 200 bits;
// and end-to-end runs on complex64 from StableHLO text.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  cCos, cCosh, cDiv, cExp, cExpm1, cLog, cPow, cRsqrt, cSin, cSinh, cSqrt, cTan, cTanh,
} from "../../src/interpreter/kernels/complex_math.js";
import { cAcos, cAcosh, cAsin, cAsinh, cAtan, cAtanh } from "../../src/interpreter/kernels/chlo/complex_inverse.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { Literal, type Complex } from "../../src/types/literal.js";

const c = (re: number, im: number): Complex => ({ re, im });
const inf = Infinity;
const PI = Math.PI;

/** Same value with the sign of zero: Object.is (NaN equals NaN). "±0" / "±inf" accept either sign. */
type Part = number | "±0" | "±inf";
function same(actual: number, expected: Part, what: string): void {
  if (expected === "±0") assert.ok(actual === 0, `${what}: ${actual} is not ±0`);
  else if (expected === "±inf") assert.ok(Math.abs(actual) === inf, `${what}: ${actual} is not ±∞`);
  else if (Number.isFinite(expected) && expected !== 0) {
    assert.ok(Math.abs(actual - expected) <= 4e-16 * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
  } else assert.ok(Object.is(actual, expected), `${what}: ${actual} vs ${expected}`);
}

type Case = [Complex, Part, Part];
function table(name: string, f: (z: Complex) => Complex, cases: readonly Case[]): void {
  for (const [z, re, im] of cases) {
    const w = f(z);
    const at = `${name}(${z.re} ${Object.is(z.im, -0) || z.im < 0 ? "-" : "+"} i${Math.abs(z.im)})`;
    same(w.re, re, `${at} real part`);
    same(w.im, im, `${at} imaginary part`);
  }
}

test("cacos (G.6.1.1) and its conjugate symmetry", () => {
  table("acos", cAcos, [
    [c(0, 0), PI / 2, -0], [c(-0, 0), PI / 2, -0], [c(0, -0), PI / 2, 0],
    [c(0, NaN), PI / 2, NaN], [c(-0, NaN), PI / 2, NaN],
    [c(1.5, inf), PI / 2, -inf], [c(1.5, -inf), PI / 2, inf],
    [c(1.5, NaN), NaN, NaN],
    [c(-inf, 2), PI, -inf], [c(-inf, -2), PI, inf],
    [c(inf, 2), 0, -inf], [c(inf, -2), 0, inf],
    [c(-inf, inf), (3 * PI) / 4, -inf], [c(-inf, -inf), (3 * PI) / 4, inf], // the acos(∞ + i(-∞)) is the next
    [c(inf, inf), PI / 4, -inf], [c(inf, -inf), PI / 4, inf],
    [c(inf, NaN), NaN, "±inf"], [c(-inf, NaN), NaN, "±inf"],
    [c(NaN, 2), NaN, NaN], [c(NaN, inf), NaN, -inf], [c(NaN, -inf), NaN, inf], [c(NaN, NaN), NaN, NaN],
  ]);
});

test("casin = -i casinh(iz) (G.6 / G.6.2.2)", () => {
  table("asin", cAsin, [
    [c(0, 0), 0, 0], [c(-0, -0), -0, -0],
    [c(-inf, -1.5), -PI / 2, -inf], [c(inf, 1.5), PI / 2, inf], [c(inf, -1.5), PI / 2, -inf],
    [c(2, inf), 0, inf], [c(-2, -inf), -0, -inf],
    [c(inf, inf), PI / 4, inf], [c(-inf, -inf), -PI / 4, -inf],
    [c(0, NaN), 0, NaN], [c(NaN, inf), NaN, "±inf"], [c(NaN, 2), NaN, NaN],
  ]);
});

test("cacosh (G.6.2.1)", () => {
  table("acosh", cAcosh, [
    [c(0, 0), 0, PI / 2], [c(-0, 0), 0, PI / 2], [c(0, -0), 0, -PI / 2],
    [c(1, inf), inf, PI / 2], [c(-7, -inf), inf, -PI / 2], [c(1, NaN), NaN, NaN],
    [c(-inf, 2), inf, PI], [c(-inf, -2), inf, -PI], [c(inf, 2), inf, 0], [c(inf, -2), inf, -0],
    [c(-inf, inf), inf, (3 * PI) / 4], [c(-inf, -inf), inf, (-3 * PI) / 4], [c(inf, inf), inf, PI / 4],
    [c(inf, NaN), inf, NaN], [c(-inf, NaN), inf, NaN],
    [c(NaN, 2), NaN, NaN], [c(NaN, inf), inf, NaN], [c(NaN, NaN), NaN, NaN],
  ]);
});

test("casinh (G.6.2.2): odd and conjugate-symmetric", () => {
  table("asinh", cAsinh, [
    [c(0, 0), 0, 0], [c(-0, 0), -0, 0], [c(0, -0), 0, -0],
    [c(2, inf), inf, PI / 2], [c(-2, inf), -inf, PI / 2], [c(2, -inf), inf, -PI / 2],
    [c(2, NaN), NaN, NaN],
    [c(inf, 2), inf, 0], [c(-inf, -2), -inf, -0],
    [c(inf, inf), inf, PI / 4], [c(-inf, inf), -inf, PI / 4],
    [c(inf, NaN), inf, NaN], [c(-inf, NaN), -inf, NaN],
    [c(NaN, 0), NaN, 0], [c(NaN, -0), NaN, -0], [c(NaN, 2), NaN, NaN], [c(NaN, inf), "±inf", NaN],
  ]);
});

test("catanh (G.6.2.3): atanh(±1 + 0i) = ±∞ + 0i; catan = -i catanh(iz)", () => {
  table("atanh", cAtanh, [
    [c(0, 0), 0, 0], [c(-0, -0), -0, -0], [c(0, NaN), 0, NaN], [c(-0, NaN), -0, NaN],
    [c(1, 0), inf, 0], [c(-1, 0), -inf, 0], [c(1, -0), inf, -0], [c(-1, -0), -inf, -0],
    [c(2, inf), 0, PI / 2], [c(-2, inf), -0, PI / 2], [c(2, -inf), 0, -PI / 2],
    [c(2, NaN), NaN, NaN],
    [c(inf, 2), 0, PI / 2], [c(-inf, -2), -0, -PI / 2], [c(inf, inf), 0, PI / 2],
    [c(inf, NaN), 0, NaN], [c(-inf, NaN), -0, NaN],
    [c(NaN, 2), NaN, NaN], [c(NaN, inf), "±0", PI / 2], [c(NaN, NaN), NaN, NaN],
  ]);
  table("atan", cAtan, [[c(inf, 2), PI / 2, 0], [c(-inf, -2), -PI / 2, -0], [c(0, 1), 0, inf], [c(NaN, inf), NaN, "±0"]]);
  // Near the largest double the real part of atanh is x/|z|², a subnormal: 1/(2·max) for x = y = max.
  same(cAtanh(c(Number.MAX_VALUE, Number.MAX_VALUE)).re, 2.781342323134e-309, "atanh(max + i max)");
});

test("clog (G.6.3.2) and csqrt (G.6.4.2), with the signed zeros on their cut", () => {
  table("log", cLog, [
    [c(-0, 0), -inf, PI], [c(-0, -0), -inf, -PI], [c(0, 0), -inf, 0], [c(0, -0), -inf, -0],
    [c(-1, 0), 0, PI], [c(-1, -0), 0, -PI],
    [c(2, inf), inf, PI / 2], [c(2, NaN), NaN, NaN],
    [c(-inf, 2), inf, PI], [c(-inf, -2), inf, -PI], [c(inf, 2), inf, 0],
    [c(-inf, inf), inf, (3 * PI) / 4], [c(inf, inf), inf, PI / 4],
    [c(inf, NaN), inf, NaN], [c(-inf, NaN), inf, NaN], [c(NaN, 2), NaN, NaN], [c(NaN, inf), inf, NaN],
  ]);
  table("sqrt", cSqrt, [
    [c(0, 0), 0, 0], [c(-0, 0), 0, 0], [c(0, -0), 0, -0],
    [c(-4, 0), 0, 2], [c(-4, -0), 0, -2],
    [c(2, inf), inf, inf], [c(NaN, inf), inf, inf], [c(-inf, -inf), inf, -inf], [c(2, NaN), NaN, NaN],
    [c(-inf, 2), 0, inf], [c(-inf, -2), 0, -inf], [c(inf, 2), inf, 0], [c(inf, -2), inf, -0],
    [c(-inf, NaN), NaN, "±inf"], [c(inf, NaN), inf, NaN], [c(NaN, 2), NaN, NaN],
  ]);
});

test("cexp (G.6.3.1; an infinite or NaN imaginary part gives NaN + iNaN, as XLA computes) and expm1", () => {
  table("exp", cExp, [
    [c(0, 0), 1, 0], [c(-0, -0), 1, -0], [c(2, inf), NaN, NaN], [c(2, NaN), NaN, NaN],
    [c(inf, 0), inf, 0], [c(inf, -0), inf, -0], [c(-inf, 0), 0, 0],
    [c(-inf, 2), -0, 0], [c(-inf, -2), -0, -0], // +0 cis(y): cos 2 < 0 < sin 2
    [c(inf, 2), -inf, inf], [c(inf, -2), -inf, -inf],
    [c(NaN, 0), NaN, 0], [c(NaN, -0), NaN, -0], [c(NaN, 2), NaN, NaN],
    [c(-inf, inf), NaN, NaN], [c(inf, NaN), NaN, NaN],
  ]);
  table("expm1", cExpm1, [[c(-inf, 2), -1, 0], [c(inf, 2), -inf, inf], [c(inf, 0), inf, 0], [c(2, inf), NaN, NaN]]);
  // Past 709 e^x overflows but e^x sin y need not (mpmath: exp(710 - 3i) = -inf - 3.1526135940644185e307 i).
  table("exp", cExp, [[c(710, -3), -inf, -3.1526135940644185e307]]);
});

test("csinh (G.6.2.5), ccosh (G.6.2.4), ctanh (G.6.2.6) and csin, ccos, ctan through them", () => {
  table("sinh", cSinh, [
    [c(0, 0), 0, 0], [c(-0, -0), -0, -0], [c(0, inf), "±0", NaN], [c(0, NaN), "±0", NaN],
    [c(2, inf), NaN, NaN], [c(2, NaN), NaN, NaN],
    [c(inf, 0), inf, 0], [c(-inf, 0), -inf, 0], [c(inf, 2), -inf, inf], [c(-inf, 2), inf, inf],
    [c(inf, inf), "±inf", NaN], [c(inf, NaN), "±inf", NaN],
    [c(NaN, 0), NaN, 0], [c(NaN, -0), NaN, -0], [c(NaN, 2), NaN, NaN],
  ]);
  table("cosh", cCosh, [
    [c(0, 0), 1, 0], [c(-0, 0), 1, -0], [c(0, inf), NaN, "±0"], [c(0, NaN), NaN, "±0"],
    [c(2, inf), NaN, NaN], [c(2, NaN), NaN, NaN],
    [c(inf, 0), inf, 0], [c(inf, 2), -inf, inf], [c(-inf, 2), -inf, -inf],
    [c(inf, inf), "±inf", NaN], [c(inf, NaN), inf, NaN],
    [c(NaN, 0), NaN, "±0"], [c(NaN, 2), NaN, NaN],
  ]);
  table("tanh", cTanh, [
    [c(0, 0), 0, 0], [c(-0, -0), -0, -0], [c(2, inf), NaN, NaN], [c(2, NaN), NaN, NaN],
    [c(inf, 2), 1, -0], [c(inf, 1), 1, 0], [c(-inf, 1), -1, 0], // 1 + i0·sin 2y: sin 4 < 0 < sin 2
    [c(inf, inf), 1, "±0"], [c(inf, NaN), 1, "±0"],
    [c(NaN, 0), NaN, 0], [c(NaN, 2), NaN, NaN],
  ]);
  // csin(z) = -i csinh(iz), ccos(z) = ccosh(iz), ctan(z) = -i ctanh(iz) (G.6)
  table("sin", cSin, [[c(0, inf), 0, inf], [c(0, -inf), 0, -inf], [c(inf, 0), NaN, "±0"], [c(NaN, 0), NaN, 0]]);
  table("cos", cCos, [[c(0, inf), inf, "±0"], [c(inf, 0), NaN, "±0"], [c(2, inf), -inf, -inf]]);
  table("tan", cTan, [[c(0, inf), 0, 1], [c(2, -inf), -0, -1], [c(NaN, inf), "±0", 1]]);
});

test("division, rsqrt and pow by infinities: G.5.1's recovery of NaN + iNaN quotients", () => {
  table("1/z", (z) => cDiv(c(1, 0), z), [[c(inf, inf), 0, -0], [c(-inf, 2), -0, -0], [c(0, 0), inf, NaN], [c(inf, NaN), NaN, NaN]]);
  // Smith's d = 2e308 overflows: NaN + iNaN, recovered as ∞·((1 + i)·conj(1e308 + 1e308 i)) = ∞ + i(∞·0).
  table("z/(1e308+1e308i)", (z) => cDiv(z, c(1e308, 1e308)), [[c(inf, inf), inf, NaN]]);
  table("z/0", (z) => cDiv(z, c(0, 0)), [[c(1, -1), inf, -inf]]);
  table("rsqrt", cRsqrt, [[c(2, inf), 0, -0], [c(inf, 0), 0, 0], [c(4, 0), 0.5, 0]]);
  table("pow(z, 2)", (z) => cPow(z, c(2, 0)), [[c(inf, 0), inf, 0], [c(0, 0), 0, 0]]);
});

test("interior values against mpmath (200 bits), and no overflow where the result is finite", () => {
  table("acos", cAcos, [[c(0.5, 2), 1.3497776911720127, -1.4657153519472905]]);
  table("asin", cAsin, [[c(-3, 0.25), -1.4826795045905576, 1.7668693026241513]]);
  table("acosh", cAcosh, [[c(-0.75, -1e-3), 0.001511855094605205, -2.4188571099051663]]);
  table("asinh", cAsinh, [[c(1e-5, 3), 1.7627471740457152, 1.5707927912609907]]);
  table("atanh", cAtanh, [[c(0.3, -1.7), 0.07595582215779155, -1.049069489395666]]);
  table("atan", cAtan, [[c(-2, 0.5), -1.1265564408348223, 0.09641562020299617]]);
  table("tanh", cTanh, [[c(1, 2), 1.16673625724092, -0.24345820118572525]]);
  table("sinh", cSinh, [[c(-0.5, 4), 0.340610622297963, -0.8533901442422]]);
  table("cosh", cCosh, [[c(711, 0.25), inf, 7.511960281639058e307]]);
  // |acos z|, |asin z| ~ log(2|z|) = 710.8224336642239 at z = max(±1 ± i) (StableHLO's accuracy tests).
  const max = Number.MAX_VALUE;
  table("acos", cAcos, [[c(-max, -max), (3 * PI) / 4, 710.8224336642239], [c(max, max), PI / 4, -710.8224336642239]]);
  table("asin", cAsin, [[c(max, -max), PI / 4, -710.8224336642239]]);
  table("acosh", cAcosh, [[c(-max, max), 710.8224336642239, (3 * PI) / 4]]);
});

test("complex64 end to end from StableHLO text: Annex G values rounded to f32", () => {
  const z = Literal.from("c64", [c(inf, -inf), c(1, 0), c(-1, -0), c(-inf, 2)]);
  const run = (op: string): Complex[] => {
    const m = parseStableHlo(`func.func @main(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
      %0 = ${op} %z : tensor<4xcomplex<f32>>
      return %0 : tensor<4xcomplex<f32>>
    }`);
    return evaluate(m.entry, [z]).values() as Complex[];
  };
  const f32 = (x: number): number => Math.fround(x);
  const acos = run("chlo.acos");
  same(acos[0]!.re, f32(PI / 4), "acos(∞ - i∞) real"); // the example with x = +∞
  same(acos[0]!.im, inf, "acos(∞ - i∞) imaginary");
  const atanh = run("chlo.atanh");
  same(atanh[1]!.re, inf, "atanh(1 + 0i)");
  same(atanh[1]!.im, 0, "atanh(1 + 0i)");
  same(atanh[2]!.re, -inf, "atanh(-1 - 0i)");
  same(atanh[2]!.im, -0, "atanh(-1 - 0i)");
  const sqrt = run("stablehlo.sqrt");
  same(sqrt[3]!.re, 0, "sqrt(-∞ + 2i)");
  same(sqrt[3]!.im, inf, "sqrt(-∞ + 2i)");
});
