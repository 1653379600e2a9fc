// Unary ops on integers, floats (every width) and complex numbers: conformance values
// (../shared/conformance/stablehlo/interpret/*.mlir), known constants, branch cuts.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  abs, atan2, cbrt, ceil, complex, cos, erf, exp, expm1, floor, imag, isFinite, log, log1p, logistic, neg, real, round,
  roundNearestAfz, roundNearestEven, rsqrt, sign, sin, sqrt, tan, tanh, type ElementType, type Scalar, type XlaOp,
} from "../../src/index.js";
import { assertComplex, assertFloats, assertShapeError, assertValues, floats, lit, run } from "./helpers.js";

const un = (f: (a: XlaOp) => XlaOp, t: ElementType, a: Scalar[]) => run((x) => f(x), lit(t, a));
const cx = (pairs: [number, number][]) => pairs.map(([re, im]) => ({ re, im }));
const PI = Math.PI;

// Special inputs of the conformance ceil/floor/sin/cos tests, per type: -inf, -2.5, -tiny, -0, 0, tiny, 2.5, inf, NaN.
const SPECIALS: Record<"bf16" | "f16" | "f32" | "f64", (number | { bits: number | bigint })[]> = {
  bf16: [{ bits: 0xff80 }, -2.5, { bits: 0x8001 }, -0, 0, { bits: 0x0001 }, 2.5, { bits: 0x7f80 }, { bits: 0x7fc0 }],
  f16: [{ bits: 0xfc00 }, -2.5, { bits: 0x8001 }, -0, 0, { bits: 0x0001 }, 2.5, { bits: 0x7c00 }, { bits: 0x7e00 }],
  f32: [{ bits: 0xff800000 }, -2.5, { bits: 0x80000001 }, -0, 0, { bits: 1 }, 2.5, { bits: 0x7f800000 }, { bits: 0x7fc00000 }],
  f64: [{ bits: 0xfff0000000000000n }, -2.5, { bits: 0x8000000000000001n }, -0, 0, { bits: 1n }, 2.5, { bits: 0x7ff0000000000000n }, { bits: 0x7ff8000000000000n }],
};

test("ceil and floor on bf16, f16, f32, f64 (conformance ceil.mlir, floor.mlir)", () => {
  for (const t of ["bf16", "f16", "f32", "f64"] as const) {
    assertFloats(run((x) => ceil(x), floats(t, SPECIALS[t])), [-Infinity, -2, -0, -0, 0, 1, 3, Infinity, NaN]);
    assertFloats(run((x) => floor(x), floats(t, SPECIALS[t])), [-Infinity, -3, -1, -0, 0, 0, 2, Infinity, NaN]);
  }
  assertShapeError(() => un(ceil, "s32", [1]), /ceil: operand: element type must be floating-point, got s32\[1\]/);
});

test("round: ties away from zero vs ties to even (conformance round_nearest_*.mlir)", () => {
  const xs = [-2.5, 0.4, 0.5, 0.6, 2.5];
  assertFloats(un(roundNearestAfz, "f64", xs), [-3, 0, 1, 1, 3]);
  assertFloats(un(round, "f64", xs), [-3, 0, 1, 1, 3]);
  assertFloats(un(roundNearestEven, "f64", xs), [-2, 0, 0, 1, 2]);
  const edge = [-0.4, -0, 0.49999999999999994, -1.5, 3.5, 2 ** 52 + 1, Infinity, NaN];
  assertFloats(un(roundNearestAfz, "f64", edge), [-0, -0, 0, -2, 4, 2 ** 52 + 1, Infinity, NaN]);
  assertFloats(un(roundNearestEven, "f64", edge), [-0, -0, 0, -2, 4, 2 ** 52 + 1, Infinity, NaN]);
  assertFloats(un(roundNearestEven, "bf16", [0.5, 1.5, -0.5]), [0, 2, -0]);
  // f32 below 1 in magnitude, subnormals among them (which a GPU may flush to zero): zeros keep the sign.
  const small = [{ bits: 0x80000001 }, { bits: 1 }, { bits: 0x007fffff }, 0.5, -0.5, 0.4999999701976776, -0.75, -1.5];
  assertFloats(run((x) => roundNearestEven(x), floats("f32", small)), [-0, 0, 0, 0, -0, 0, -1, -2]);
  assertFloats(run((x) => roundNearestAfz(x), floats("f32", small)), [-0, 0, 0, 1, -1, 0, -1, -2]);
  assertFloats(un(roundNearestAfz, "f8e4m3fn", [0.5, 1.5, -2.5]), [1, 2, -3]);
});

test("sin, cos, tan, tanh on floats (conformance sine/cosine/tan/tanh.mlir)", () => {
  const inputs = [0, -0, 1, 0.125, 0.1, 3.1415926535897931, Infinity, -Infinity, NaN, 5e-324, -5e-324];
  assertFloats(un(sin, "f64", inputs),
    [0, -0, 0.8414709848078965, 0.12467473338522769, 0.099833416646828154, 1.2246467991473532e-16, NaN, NaN, NaN, 5e-324, -5e-324], 1e-15);
  assertFloats(un(cos, "f64", inputs),
    [1, 1, 0.54030230586813977, 0.992197667229329, 0.99500416527802582, -1, NaN, NaN, NaN, 1, 1], 1e-15);
  assertFloats(un(tanh, "f64", inputs),
    [0, -0, 0.76159415595576485, 0.12435300177159619, 0.099667994624955819, 0.99627207622074998, 1, -1, NaN, 5e-324, -5e-324], 1e-15);
  assertFloats(un(tan, "f64", [0, 1.57079632, 3.14159265, 4.71238898]), [0, 147169271.76124874, -3.5897930298416118e-9, 2599497068.2695704], 1e-7);
  const f32in = [0, -0, 1, 0.125, 0.1, 3.14159274];
  assertFloats(un(sin, "f32", f32in), [0, -0, 0.841470957, 0.12467473, 0.0998334214, -8.74227765e-8], 1e-6);
  assertFloats(un(cos, "f32", f32in), [1, 1, 0.540302277, 0.992197692, 0.995004177, -1], 1e-6);
  assertFloats(un(tanh, "f32", f32in), [0, -0, 0.761594176, 1.243530e-01, 0.0996679961, 0.996272087], 1e-6);
  // Narrow formats: computed in double, rounded to the format (tolerance of a few ulps of bf16/f16).
  assertFloats(run((x) => sin(x), floats("bf16", [0, -0, 1, 0.125, { bits: 0x7f80 }, { bits: 0x0001 }])), [0, -0, 0.83984375, 0.12451171875, NaN, 9.183549615799121e-41], 1e-2);
  assertFloats(run((x) => cos(x), floats("f16", [0, 1, 0.125, { bits: 0x7c00 }])), [1, 0.540527, 0.992187, NaN], 2e-3);
  assertFloats(run((x) => tanh(x), floats("bf16", [1, 3.140625, { bits: 0x7f80 }, { bits: 0xff80 }])), [0.761718, 0.996093, 1, -1], 1e-2);
});

test("exp, expm1, log, log1p, logistic, sqrt, rsqrt, cbrt on f64 (conformance)", () => {
  assertFloats(un(exp, "f64", [0, 1, 2, 3]), [1, 2.7182818284590451, 7.3890560989306504, 20.085536923187668], 1e-15);
  assertFloats(un(expm1, "f64", [0, 1, 1e-20]), [0, 1.7182818284590451, 1e-20], 1e-15);
  assertFloats(un(log, "f64", [1, 2, 3, 4, 0, -1]), [0, 0.69314718055994529, 1.0986122886681098, 1.3862943611198906, -Infinity, NaN], 1e-15);
  assertFloats(un(log1p, "f64", [0, -0.999, 7, 6.38905621, 15, 1e-20]), [0, -6.90776825, 2.07944155, 2, 2.77258873, 1e-20], 1e-5); // the file gives 9 digits
  assertFloats(un(logistic, "f64", [1, 2, 3, 4, -800, 800]),
    [0.73105857863000488, 0.88079707797788244, 0.95257412682243322, 0.98201379003790844, 0, 1], 1e-15);
  assertFloats(un(sqrt, "f64", [0, 1, 4, 9, -1, -0]), [0, 1, 2, 3, NaN, -0]);
  assertFloats(un(rsqrt, "f64", [1, 4, 9, 25, 0]), [1, 0.5, 0.33333333333333331, 0.2, Infinity], 1e-15);
  assertFloats(un(cbrt, "f64", [0, 1, 8, 27, -8]), [0, 1, 2, 3, -2], 1e-15);
  assertFloats(un(exp, "f32", [88.8]), [Infinity]); // overflows f32
  assertFloats(un(exp, "f16", [11.1]), [Infinity]); // overflows f16 (max 65504)
});

test("erf: known values, odd symmetry, saturation", () => {
  const xs = [0, 0.1, 0.5, 1, 2, 3, -0.1, -1, 6, -10, NaN];
  const want = [0, 0.1124629160182849, 0.5204998778130465, 0.8427007929497149, 0.9953222650189527, 0.9999779095030014,
    -0.1124629160182849, -0.8427007929497149, 1, -1, NaN];
  assertFloats(un(erf, "f64", xs), want, 2e-15);
  assertFloats(un(erf, "f32", [0.5, -2]), [Math.fround(0.5204998778130465), Math.fround(-0.9953222650189527)]);
  assertShapeError(() => un(erf, "c64", [{ re: 1, im: 0 }]), /erf: operand: element type must be floating-point/);
});

test("abs, neg, sign on integers and floats (conformance abs/negate/sign.mlir)", () => {
  assertValues(un(abs, "s64", [-2n, 0n, 2n]), [2n, 0n, 2n]);
  assertFloats(un(abs, "f64", [23.1, -23.1, -0]), [23.1, 23.1, 0]);
  assertValues(un(abs, "s8", [-128, -5]), [-128, 5]); // abs(INT_MIN) wraps
  assertShapeError(() => un(abs, "u32", [1]), /abs: operand: element type must be signed integer, floating-point or complex/);
  assertValues(un(neg, "s4", [-8, -1, 0, 1, 7]), [-8, 1, 0, -1, -7]);
  assertValues(un(neg, "u4", [0, 8, 15]), [0, 8, 1]);
  assertValues(un(neg, "u8", [0, 16, 255]), [0, 240, 1]);
  assertValues(un(neg, "s32", [-2147483648, -65537, 0, 65536, 2147483647]), [-2147483648, 65537, 0, -65536, -2147483647]);
  assertValues(un(neg, "u32", [0, 65536, 4294967295]), [0, 4294901760, 1]);
  assertValues(un(neg, "s64", [-(2n ** 63n), 0n]), [-(2n ** 63n), 0n]);
  assertValues(un(neg, "u64", [0n, 4294967296n, 2n ** 64n - 1n]), [0n, 18446744069414584320n, 1n]);
  assertFloats(un(neg, "f64", [0, -0, 1, Infinity]), [-0, 0, -1, -Infinity]);
  assertFloats(run((x) => neg(x), floats("bf16", [0, -0, 0.125, { bits: 0x7f80 }, { bits: 0x0001 }])), [-0, 0, -0.125, -Infinity, -9.183549615799121e-41]);
  assertComplex(un(neg, "c64", cx([[1.5, 2.5], [3.5, 4.5]])), [[-1.5, -2.5], [-3.5, -4.5]], 0);
  assertValues(un(sign, "s64", [-1n, 0n, 1n, -(2n ** 63n)]), [-1n, 0n, 1n, -1n]);
  assertValues(un(sign, "s8", [-128, 0, 127]), [-1, 0, 1]);
  assertFloats(un(sign, "f64", [NaN, -1, -0, 0, 1, -Infinity, 1e-320]), [NaN, -1, -0, 0, 1, -1, 1]);
  assertFloats(un(sign, "f16", [-0, -3]), [-0, -1]);
  assertFloats(run((x) => sign(x), floats("f32", [{ bits: 1 }, { bits: 0x80000001 }, -0])), [1, -1, -0]);
  assertShapeError(() => un(sign, "u8", [1]), /sign: operand: element type must be signed integer, floating-point or complex/);
  assertShapeError(() => un(neg, "pred", [true]), /negate/);
});

test("isFinite, real, imag, complex", () => {
  assertValues(un(isFinite, "f64", [-Infinity, Infinity, NaN, -10, -0, 0, 10]), [false, false, false, true, true, true, true]);
  assertValues(run((x) => isFinite(x), floats("f8e4m3fn", [448, { bits: 0x7f }])), [true, false]);
  assertValues(run((x) => isFinite(x), floats("bf16", [{ bits: 0x7f80 }, 1])), [false, true]);
  assertShapeError(() => un(isFinite, "s32", [1]), /is-finite: operand: element type must be floating-point/);
  const z = lit("c128", cx([[1, 2], [3, 4]]));
  const re = run((x) => real(x), z);
  assert.equal(re.elementType, "f64");
  assertFloats(re, [1, 3]);
  assertFloats(run((x) => imag(x), z), [2, 4]);
  assertFloats(un(real, "f64", [1, 2]), [1, 2]);
  assertFloats(un(imag, "f64", [1, 2]), [0, 0]);
  const c = run((a, b) => complex(a, b), lit("f64", [1, 3]), lit("f64", [2, 4]));
  assert.equal(c.elementType, "c128");
  assertComplex(c, [[1, 2], [3, 4]], 0);
  const c64 = run((a, b) => complex(a, b, [0]), lit("f32", [[1], [2]]), lit("f32", [[5, 6]]));
  assert.equal(c64.elementType, "c64");
  assertComplex(c64, [[1, 5], [1, 6], [2, 5], [2, 6]], 0);
  assertShapeError(() => run((a, b) => complex(a, b), lit("f16", [1]), lit("f16", [1])), /complex: lhs: element type must be f32 or f64/);
  assertShapeError(() => run((a, b) => complex(a, b), lit("f32", [1]), lit("f64", [1])), /same element type/);
});

test("atan2 on floats and complex (conformance atan2.mlir)", () => {
  assertFloats(run((y, x) => atan2(y, x), lit("f64", [0, 1, -1, -0, 0]), lit("f64", [0, 0, 0, -1, -1])), [0, PI / 2, -PI / 2, -PI, PI], 1e-15);
  assertComplex(run((y, x) => atan2(y, x), lit("c128", cx([[1, 0], [-1, 0]])), lit("c128", cx([[0, 0], [0, 0]]))),
    [[1.5707963267948966, -0], [-1.5707963267948966, 0]], 1e-15);
  // For real inputs, complex atan2 agrees with real atan2.
  assertComplex(run((y, x) => atan2(y, x), lit("c128", cx([[1, 0]])), lit("c128", cx([[2, 0]]))), [[Math.atan2(1, 2), 0]], 1e-15);
});

test("complex transcendental functions (conformance)", () => {
  assertFloats(un(abs, "c128", [{ re: 3, im: 4 }]), [5]);
  assert.equal(un(abs, "c64", [{ re: 3, im: 4 }]).elementType, "f32");
  assertComplex(un(cbrt, "c128", [{ re: 3, im: 4 }]), [[1.6289371459221759, 0.5201745023045458]]);
  const zs = cx([[1.5, 2.5], [3.5, 4.5]]);
  assertComplex(un(cos, "c128", zs), [[0.43378099760770306, -6.0350486377665726], [-42.153773835602316, 15.786301507647636]]);
  assertComplex(un(sin, "c128", zs), [[6.1169280123693124, 0.42797453450615125], [-15.790198357309713, -42.143370741504995]]);
  assertComplex(un(tanh, "c128", zs), [[0.96778680215277412, -0.092637836268419898], [1.0016627850956348, 7.5285721538218659e-4]]);
  assertComplex(un(cos, "c64", zs), [[0.433781, -6.03504848], [-42.1537743, 15.7863016]], 1e-6);
  assertComplex(un(sin, "c64", zs), [[6.1169281, 0.427974522], [-15.7901983, -42.1433716]], 1e-6);
  assertComplex(un(tanh, "c64", zs), [[0.967786788, -0.0926378369], [1.00166273, 7.52857188e-4]], 1e-6);
  assertComplex(un(exp, "c128", cx([[1, 2]])), [[-1.1312043837568135, 2.4717266720048188]]);
  assertComplex(un(expm1, "c128", cx([[1, 2], [2, 1], [0, 0]])),
    [[-2.13120438375681363, 2.47172667200481892], [2.99232404844127142, 6.2176763123679682], [0, 0]]);
  assertComplex(un(log, "c128", cx([[1, 2]])), [[0.80471895621705025, 1.1071487177940904]]);
  assertComplex(un(log1p, "c128", cx([[1, 2], [2, 1], [0, 0]])), [[1.03972077083991, 0.78539816339744], [1.15129254649702, 0.32175055439664], [0, 0]], 1e-13);
  assertComplex(un(logistic, "c128", cx([[1, 2]])), [[1.02141536417218054, 0.40343870608154248]]);
  assertComplex(un(rsqrt, "c128", cx([[-1, 0], [3, 4]])), [[0, -1], [0.4, -0.2]]);
  assertComplex(un(sqrt, "c128", cx([[-1, 0], [3, 4]])), [[0, 1], [2, 1]]);
  // Known values: tan(1+i), tanh(1+i).
  assertComplex(un(tan, "c128", cx([[1, 1]])), [[0.2717525853195117, 1.0839233273386946]]);
  assertComplex(un(tanh, "c128", cx([[1, 1], [30, 1], [-30, 0]])), [[1.0839233273386946, 0.2717525853195117], [1, Math.sin(2) / Math.cosh(60)], [-1, 0]], 1e-12);
  // Small arguments keep their precision (no cancellation).
  assertComplex(un(expm1, "c128", cx([[1e-10, 1e-10]])), [[1e-10 + 0.5e-20 - 0.5e-20, 1e-10 * (1 + 1e-10)]], 1e-9);
  assertComplex(un(log1p, "c128", cx([[1e-10, 0]])), [[1e-10 - 5e-21, 0]], 1e-9);
});

test("complex branch cuts: the sign of a zero imaginary part picks the side", () => {
  assertComplex(un(sqrt, "c128", cx([[-4, 0], [-4, -0]])), [[0, 2], [0, -2]], 0);
  const l = un(log, "c128", cx([[-1, 0], [-1, -0]]));
  assertComplex(l, [[0, PI], [0, -PI]], 0);
  assertComplex(un(cbrt, "c128", cx([[-8, 0], [-8, -0]])), [[1, Math.sqrt(3)], [1, -Math.sqrt(3)]], 1e-15);
  assertComplex(un(sqrt, "c128", cx([[0, 0], [Infinity, 1], [1, Infinity]])), [[0, 0], [Infinity, 0], [Infinity, Infinity]], 0);
});

test("complex sign (conformance sign.mlir)", () => {
  assertComplex(un(sign, "c128", cx([[NaN, 0], [0, NaN], [0, 0], [0, 1], [3, 4]])), [[NaN, NaN], [NaN, NaN], [0, 0], [0, 1], [0.6, 0.8]], 1e-15);
});

test("transcendental ops reject integers and pred", () => {
  for (const [f, name] of [[exp, "exponential"], [log, "log"], [sqrt, "sqrt"], [tanh, "tanh"], [logistic, "logistic"]] as const) {
    assertShapeError(() => un(f, "s32", [1]), new RegExp(`${name}: operand: element type must be floating-point or complex`));
  }
  assertShapeError(() => un(cos, "pred", [true]), /cosine/);
});
