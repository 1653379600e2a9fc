// The 8-, 6- and 4-bit floats (the f8 family, f6e2m3fn, f6e3m2fn, f4e2m1fn) in WGSL:
// held as their bit patterns (u32, upper bits zero) as f16 and bf16 are (wgsl_values.ts),
// and computed on through three functions of each format, generated from its fields
// (element_type.ts FloatFormat) and the literal codec's special patterns
// (float_codec.ts: what NaN, infinity, overflow, zero and underflow encode to in the
// format, read off the codec itself so that the two cannot disagree):
//
//  - xk_widen_<t>(bits) -> f32: the value, exactly, on bits (no float operation can
//    flush it: f8e8m0fnu's 2^-127 is an f32 subnormal); a NaN as the quiet NaN of the
//    sign the interpreter's convert gives it (fnuz's one NaN, the pattern of -0,
//    negative). The GEMM and convolution kernels widen their f8 operands through it too.
//  - xk_round_<t>(x: f32, keep_nan_sign) -> u32: x rounded to nearest even on its bits
//    (normal range: the f32's kept bits with the carry running into the exponent;
//    below the format's smallest normal: x's significand shifted to the format's fixed
//    step), then the codec's rules for what the format cannot hold. The GEMM and
//    convolution kernels round a one-byte float result's f32 sum through it.
//  - xk_div_<t>(a, b) -> u32: the quotient, exact: its significands' quotient on
//    integers, rounded to odd (a nonzero remainder sets the last bit) at 20 bits, so
//    the one rounding to the format after it is the correctly rounded quotient. WGSL's
//    f32 division may be 2.5 ulps off, and a quotient of two of these values can be a
//    midpoint of the format's subnormals exactly (9·2^-6 / 48 = 3·2^-10 in f8e4m3fn).
//
// Every value of these formats but f8e8m0fnu's is an f32 normal or zero (the smallest,
// f8e5m2fnuz's 2^-17), and so is every exact sum, difference and product of two of them,
// and every quotient (between 2^-33 and 2^33): +, - and × in f32 are correctly rounded
// (WGSL's accuracy), and one f32 rounding then one to a format of at most 5 significant
// bits is the interpreter's one rounding (24 >= 2·5 + 2: Figueroa's double rounding
// bound; in the format's subnormal range an inexact sum or product cannot fall, since
// the exact one is a multiple of the step small enough for f32). sqrt and rsqrt are
// computed in f32 within a few ulps: the root (or its reciprocal) of such a value is
// never a midpoint of the format, and an inexact one is at least 2^-18 of itself from
// every midpoint (x·m² - 1 for a midpoint m of p + 1 bits has at most 3p + 2, p <= 5),
// far beyond f32's few ulps (about 2^-22). The math functions are f32's, rounded: within
// their bounds plus the rounding. f8e8m0fnu (powers of two from 2^-127 to 2^127) has no
// such room: its sums and products leave f32's range or meet its subnormals, so only
// what is exact on bits is compiled for it (converts, compares, selects, maxima and
// minima, abs, negation, the roundings to integers).

import { ELEMENT_TYPES, storageBytes, type ElementType } from "../../types/element_type.js";
import { encodeFloatBits, maxFiniteValue } from "../../types/float_codec.js";
import type { NodeType } from "../kernel/graph.js";

/** Whether t is one of the floats stored one to a byte (f8, f6, f4). */
export const isByteFloat = (t: NodeType): boolean => t !== "idx" && t !== "cond" && ELEMENT_TYPES[t].kind === "float" && storageBytes(t) === 1;

/** f8e8m0fnu's ops that are exact on bits in f32's helpers (the others decline: see above). */
export const E8M0_EXACT_OPS: ReadonlySet<string> = new Set(["abs", "neg", "ceil", "floor", "roundEven", "roundAfz", "max", "min"]);

/** The WGSL functions of byte float t (see above): xk_widen_<t>, xk_round_<t> and, but for f8e8m0fnu, xk_div_<t>. */
export function narrowFloatSource(t: ElementType): string {
  const parts = [narrowFloatWidening(t), narrowFloatRounding(t)];
  if (ELEMENT_TYPES[t].float!.encoding !== "e8m0") parts.push(narrowFloatDivision(t));
  return parts.join("\n");
}

const hex = (x: number): string => `0x${(x >>> 0).toString(16)}u`;

/** The pattern of value v in t, as the literal codec encodes it (a NaN negative where `negativeNaN`). */
const pattern = (t: ElementType, v: number, negativeNaN = false): string => hex(encodeFloatBits(t, v, negativeNaN));

/**
 * The WGSL function xk_widen_<t>(bits) -> f32 of a one-byte float type t (f8, f6, f4):
 * its value exactly, from its format's fields (element_type.ts FloatFormat): a normal
 * value's exponent and significand moved into an f32's; a subnormal one (exponent 0) as
 * its significand times a power of two, a normal f32 for every such format (e8m0 has
 * no subnormals: its exponent 0 is 2^-127, f32's subnormal, set on bits); NaN the quiet
 * NaN the interpreter's convert to f32 gives (the pattern's sign bit), infinities as f32's.
 */
export function narrowFloatWidening(t: ElementType): string {
  const { exponentBits: e, mantissaBits: m, exponentBias: bias, encoding } = ELEMENT_TYPES[t].float!;
  const signed = encoding !== "e8m0";
  const maxE = (1 << e) - 1, maxM = (1 << m) - 1;
  const lines = [
    `fn xk_widen_${t}(r: u32) -> f32 {`,
    `  let x = r & ${hex(2 ** (e + m + (signed ? 1 : 0)) - 1)};`,
    `  let ex = (x >> ${m}u) & ${hex(maxE)};`,
    `  let man = x & ${hex(maxM)};`,
    `  let s = ${signed ? `(x >> ${e + m}u) << 31u` : "0u"};`,
  ];
  // A NaN's bits are never a constant expression (WGSL rejects a NaN it evaluates when the shader is created): each is built from s or x.
  if (encoding === "ieee") lines.push(`  if (ex == ${hex(maxE)}) { return bitcast<f32>(s | select(0x7fc00000u, 0x7f800000u, man == 0u)); }`);
  if (encoding === "fn") lines.push(`  if (ex == ${hex(maxE)} && man == ${hex(maxM)}) { return bitcast<f32>(s | 0x7fc00000u); }`);
  // The one NaN is the pattern of -0: its sign bit makes it -NaN, as the interpreter's convert.
  if (encoding === "fnuz") lines.push(`  if (x == ${hex(2 ** (e + m))}) { return bitcast<f32>(s | 0x7fc00000u); }`);
  if (encoding === "e8m0") {
    lines.push(`  if (ex == ${hex(maxE)}) { return bitcast<f32>(0x7fc00000u | (x >> 8u)); }`);
    lines.push(`  if (ex == 0u) { return bitcast<f32>(0x00400000u); }`);
  } else {
    // man x 2^(1 - bias - m), exactly: a small integer times a power of two, both normal f32s.
    lines.push(`  if (ex == 0u) { return bitcast<f32>(s | bitcast<u32>(f32(man) * bitcast<f32>(${hex((127 + 1 - bias - m) << 23)}))); }`);
  }
  lines.push(`  return bitcast<f32>(s | ((ex + ${127 - bias}u) << 23u) | (man << ${23 - m}u));`, "}");
  return lines.join("\n");
}

/** xk_round_<t>(x, keep_nan_sign) -> u32: x rounded to nearest even in t, the special values as the literal codec encodes them (see above). */
function narrowFloatRounding(t: ElementType): string {
  const { exponentBits: e, mantissaBits: m, exponentBias: bias, encoding } = ELEMENT_TYPES[t].float!;
  const shift = 23 - m;
  const minNormalExponent = 1 - bias;
  const signBit = encoding === "e8m0" ? 0 : 1 << (e + m);
  const tiny = 2 ** -149;
  return [
    `fn xk_round_${t}(x: f32, keep_nan_sign: bool) -> u32 {`,
    "  let b = bitcast<u32>(x);",
    "  let a = b & 0x7fffffffu;",
    "  let neg = b >= 0x80000000u;",
    `  if (a > 0x7f800000u) { return select(${pattern(t, NaN)}, ${pattern(t, NaN, true)}, neg && keep_nan_sign); }`,
    `  if (a == 0u) { return select(${pattern(t, 0)}, ${pattern(t, -0)}, neg); }`,
    // No sign bit: a negative value is what the codec makes of one.
    ...(signBit === 0 ? [`  if (neg) { return ${pattern(t, -1)}; }`] : []),
    "  var q = 0u;",
    `  if (a >= ${hex((127 + minNormalExponent) << 23)}) {`,
    // The f32's kept bits rounded (ties to the even one: the last kept bit is the pattern's), rebiased to the format's exponent.
    `    q = ((a + ${hex((1 << (shift - 1)) - 1)} + ((a >> ${shift}u) & 1u)) >> ${shift}u) - ${hex((127 - bias) << m)};`,
    "  } else {",
    // Below the smallest normal: the significand in units of the format's step 2^(minNormalExponent - m).
    "    let field = max(a >> 23u, 1u);",
    `    let sh = ${150 + minNormalExponent - m}u - field;`,
    "    if (sh < 32u) {",
    "      let sig = (a & 0x7fffffu) | select(0x800000u, 0u, (a >> 23u) == 0u);",
    "      let kept = sig >> sh;",
    "      let rest = sig & ((1u << sh) - 1u);",
    "      let tie = 1u << (sh - 1u);",
    "      q = kept + select(0u, 1u, rest > tie || (rest == tie && (kept & 1u) == 1u));",
    "    }",
    "  }",
    `  if (q > ${hex(encodeFloatBits(t, maxFiniteValue(t)))}) { return select(${pattern(t, Infinity)}, ${pattern(t, -Infinity)}, neg); }`,
    `  if (q == 0u) { return select(${pattern(t, tiny)}, ${pattern(t, -tiny)}, neg); }`,
    `  return select(q, q | ${hex(signBit)}, neg);`,
    "}",
  ].join("\n");
}

/** xk_div_<t>(a, b) -> u32: the quotient of two patterns of t (not f8e8m0fnu), rounded once (see above). */
function narrowFloatDivision(t: ElementType): string {
  const { mantissaBits: m } = ELEMENT_TYPES[t].float!;
  if (m > 4) throw new Error(`${t}: the exact division takes significands of at most 5 bits`);
  const quotientBits = 20;
  return [
    `fn xk_div_${t}(a: u32, b: u32) -> u32 {`,
    `  let x = bitcast<u32>(xk_widen_${t}(a));`,
    `  let y = bitcast<u32>(xk_widen_${t}(b));`,
    "  let ax = x & 0x7fffffffu;",
    "  let ay = y & 0x7fffffffu;",
    "  let neg = ((x ^ y) >> 31u) != 0u;",
    `  if (ax > 0x7f800000u || ay > 0x7f800000u || (ax == 0u && ay == 0u) || (ax == 0x7f800000u && ay == 0x7f800000u)) { return ${pattern(t, NaN)}; }`,
    `  if (ax == 0x7f800000u || ay == 0u) { return select(${pattern(t, Infinity)}, ${pattern(t, -Infinity)}, neg); }`,
    `  if (ax == 0u || ay == 0x7f800000u) { return select(${pattern(t, 0)}, ${pattern(t, -0)}, neg); }`,
    // Both normal f32s of at most 5 significant bits: those bits, in [16, 32).
    "  let mx = ((ax & 0x7fffffu) | 0x800000u) >> 19u;",
    "  let my = ((ay & 0x7fffffu) | 0x800000u) >> 19u;",
    `  let n = mx << ${quotientBits}u;`,
    "  let q = (n / my) | select(0u, 1u, n % my != 0u);",
    // q · 2^(ex - ey - 20): q below 2^21, the power of two and the product f32 normals (the exponents differ by at most 32), so exact.
    `  let scale = bitcast<f32>(u32(i32(ax >> 23u) - i32(ay >> 23u) + ${127 - quotientBits}) << 23u);`,
    `  return xk_round_${t}(bitcast<f32>(bitcast<u32>(f32(q) * scale) | select(0u, 0x80000000u, neg)), false);`,
    "}",
  ].join("\n");
}
