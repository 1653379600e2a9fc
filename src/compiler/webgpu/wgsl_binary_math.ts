// The binary ops the CPU backends compute in f64 (pow and atan2 of f32, C's fmod) and
// integer power, as WGSL functions for the WebGPU backend. WGSL has only f32, so:
//
// - fmod (XLA's float remainder) is exact, as it always is representable: on the
//   integer significands, |x| = mx·2^ex, |y| = my·2^ey, the remainder of mx·2^(ex-ey) by
//   my is taken eight bits of the exponent difference at a time (32-bit integer %), then
//   scaled by 2^ey on bits (a subnormal result included). NaN for a NaN, an infinite x or
//   a zero y; x itself where |x| < |y| (y infinite); a zero result keeps x's sign.
// - pow and atan2 compute in double-f32 (a value as an unevaluated sum hi + lo of two
//   f32, about 48 bits): error-free transformations (Knuth's two-sum; Dekker's product
//   from 12-bit halves cut on bits, exact whether or not the compiler fuses a multiply
//   and an add, and needing no fma). Every quotient is corrected from its remainder,
//   computed exactly, so a GPU whose division is off by WGSL's allowed 2.5 ulp loses
//   nothing (but in atan2 of a ratio below 2^-60, a plain division: see xk_atan2_f32).
//     pow: |x|^y = 2^(y·log2|x|). log2|x| = e + log2(m), m in [√½, √2), log(m) =
//     2 atanh(s), s = (m - 1)/(m + 1), |s| ≤ 0.172: s and its first two series terms in
//     double-f32, the rest (to s^17) in f32; about 2^-34 relative. w = y·log2|x| in
//     double-f32, then 2^w = 2^k·e^(r), k = round(w), r = (w - k)·ln 2, e^r by its Taylor
//     series (the last two steps in double-f32), scaled by 2^k in two exact steps so the
//     result rounds once (a subnormal result twice: within 1 ulp there). C's special
//     cases, the interpreter's powC: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN,
//     pow(-1, ±inf) = 1, a negative x needs an integer y (NaN otherwise) and gives a
//     negative result for odd ones; zeros and infinities by the table in xk_pow_f32.
//     atan2: t = min(|x|, |y|)/max(|x|, |y|) in double-f32, its operands first scaled on
//     bits so the larger is in [1, 2) (a subnormal operand is never flushed); past
//     tan(π/8), atan(t) = π/4 + atan((t - 1)/(t + 1)); atan by its Taylor series (f32 past
//     the first term); then 0 + a, π/2 - a, π - a or π/2 + a by quadrant, in double-f32,
//     rounded once; the sign of y last. IEEE's special cases fall out of t (0 for a zero
//     or an infinite denominator, 1 for two infinities) and of the sign bits.
//   Both within 1 ulp of the exact value for normal results; measured on SwiftShader
//   against f64, 0.514 and 0.665 ulp at worst over 2M random pairs each (docs/numerics.md;
//   test/compiler/webgpu/binary_math.test.ts).
// - integer power: exponentiation by squaring in the 32-bit holder (wrapping, then
//   wrapped to the type's width by the caller); a negative exponent gives 1 for a base
//   of 1, ±1 for -1 and 0 otherwise (XLA's rules, the interpreter's intPower).
//
// Every test XLA's semantics hang on is taken on bit patterns (WGSL leaves NaN and
// infinity to the implementation, and may flush f32 subnormals); float constants go
// through xk_f (wgsl_math.ts says why).

import { ATANH_SERIES, EXP_TAYLOR } from "../kernel/approximations.js";
import { wgslFloat as c } from "./wgsl_math.js";

/** The functions of this file, by what a kernel asks for. */
export type BinaryMathName = "pow" | "atan2" | "fmod" | "ipow_i32" | "ipow_u32";
const NAMES: ReadonlySet<string> = new Set<BinaryMathName>(["pow", "atan2", "fmod", "ipow_i32", "ipow_u32"]);
export const isBinaryMath = (name: string): name is BinaryMathName => NAMES.has(name);

/** The WGSL function computing `name` (two arguments: x, y). */
export const wgslBinaryMathFunction = (name: BinaryMathName): string => (name.startsWith("ipow") ? `xk_${name}` : `xk_${name}_f32`);

const F32 = new Float32Array(1);
const fround = (x: number): number => { F32[0] = x; return F32[0]!; };
/** A double-f32 constant: the f32 nearest v, and the f32 nearest what is left. */
const df = (v: number): string => `vec2<f32>(${c(fround(v))}, ${c(fround(v - fround(v)))})`;
/** Horner's scheme in f32: cs[0] + z·(cs[1] + z·(...)). */
const horner = (z: string, cs: readonly number[]): string => cs.slice(0, -1).reduceRight((acc, k) => `(${c(k)} + ${z} * ${acc})`, c(cs[cs.length - 1]!));

/** atan's Taylor series (1/(2n + 1), alternating) from the z³ term on: P in atan z = z + z³·P(z²). */
const ATAN_TAIL = Array.from({ length: 11 }, (_, n) => (n % 2 === 0 ? -1 : 1) / (2 * n + 3));

const NAN = c(NaN);
const INF = c(Infinity);

/** Double-f32 arithmetic (hi in x, lo in y), once per kernel that calls pow or atan2. */
const DOUBLE_F32 = String.raw`// a + b = s + e exactly (Knuth), and for |a| ≥ |b| (Dekker).
// The roundings go through xk_keep, which the compiler cannot fold algebra across.
fn xk_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = xk_keep(a + b);
  let bb = xk_keep(s - a);
  return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
fn xk_fast_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = xk_keep(a + b);
  return vec2<f32>(s, b - xk_keep(s - a));
}
// a·b = p + e exactly (Dekker): 12-bit halves cut on bits, whose products are exact.
fn xk_two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = xk_keep(a * b);
  let ah = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  let al = a - ah;
  let bh = bitcast<f32>(bitcast<u32>(b) & 0xfffff000u);
  let bl = b - bh;
  return vec2<f32>(p, ((ah * bh - p) + ah * bl + al * bh) + al * bl);
}
fn xk_df_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let s = xk_two_sum(a.x, b.x);
  return xk_fast_two_sum(s.x, s.y + (a.y + b.y));
}
fn xk_df_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = xk_two_prod(a.x, b.x);
  return xk_fast_two_sum(p.x, p.y + (a.x * b.y + a.y * b.x));
}
// The quotient's remainder is computed exactly, so the correction needs no exact division.
fn xk_df_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let q = a.x / b.x;
  let p = xk_two_prod(q, b.x);
  return xk_fast_two_sum(q, (((a.x - p.x) - p.y) + a.y - q * b.y) / b.x);
}`;

function powSource(): string {
  const zero = c(0);
  return [
    // log2 of the positive finite f32 with bits b (a subnormal normalized on bits), as a double-f32.
    `fn xk_log2_df(bits: u32) -> vec2<f32> {`,
    `  var b = bits;`,
    `  var e = 0;`,
    `  if (b < 0x800000u) { let sh = countLeadingZeros(b) - 8u; b = b << sh; e = -i32(sh); }`,
    // m in [√½, √2): the exponent taken from the bits' distance to √½'s.
    `  let t = b - 0x3f3504f3u;`,
    `  e = e + (bitcast<i32>(t) >> 23u);`,
    `  let m = bitcast<f32>((t & 0x7fffffu) + 0x3f3504f3u);`,
    // m - 1 is exact (Sterbenz); m + 1 exactly as two f32.
    `  let s = xk_df_div(vec2<f32>(m - ${c(1)}, ${zero}), xk_two_sum(m, ${c(1)}));`,
    `  let u = xk_df_mul(s, s);`,
    // log m = s·(2 + u·(2/3 + u·P(u))), P's terms far enough down to take in f32.
    `  let p = ${horner("u.x", ATANH_SERIES.slice(2, 9))};`,
    `  let q = xk_df_add(${df(ATANH_SERIES[1]!)}, vec2<f32>(u.x * p, ${zero}));`,
    `  let lm = xk_df_mul(s, xk_df_add(vec2<f32>(${c(2)}, ${zero}), xk_df_mul(u, q)));`,
    `  return xk_df_add(vec2<f32>(f32(e), ${zero}), xk_df_mul(lm, ${df(Math.LOG2E)}));`,
    `}`,
    // |x|^y for x finite and nonzero (bits ax), y finite and nonzero.
    `fn xk_pow_core(ax: u32, y: f32) -> f32 {`,
    `  let l = xk_log2_df(ax);`,
    `  let p = xk_two_prod(y, l.x);`,
    // Past 2^130 infinity, below 2^-160 zero (what rounding gives): k stays where 2^k is two normal scales.
    `  if (p.x > ${c(130)}) { return ${INF}; }`,
    `  if (p.x < ${c(-160)}) { return ${zero}; }`,
    `  let w = xk_fast_two_sum(p.x, p.y + y * l.y);`,
    `  let k = round(w.x);`,
    `  let r = xk_df_mul(xk_fast_two_sum(w.x - k, w.y), ${df(Math.LN2)});`,
    // e^r = 1 + r·(1 + r·(1/2 + r·Q(r))), |r| ≤ 0.35.
    `  let a = xk_df_add(vec2<f32>(${c(0.5)}, ${zero}), vec2<f32>(r.x * ${horner("r.x", EXP_TAYLOR.slice(3, 12))}, ${zero}));`,
    `  let one = vec2<f32>(${c(1)}, ${zero});`,
    `  let ex = xk_df_add(one, xk_df_mul(r, xk_df_add(one, xk_df_mul(r, a))));`,
    `  let ki = i32(k);`,
    `  return (ex.x + ex.y) * xk_pow2(ki >> 1u) * xk_pow2(ki - (ki >> 1u));`,
    `}`,
    `fn xk_pow_f32(x: f32, y: f32) -> f32 {`,
    `  let xb = bitcast<u32>(x);`,
    `  let yb = bitcast<u32>(y);`,
    `  let ax = xb & 0x7fffffffu;`,
    `  let ay = yb & 0x7fffffffu;`,
    `  if (ay == 0u || xb == 0x3f800000u) { return ${c(1)}; }`,
    `  if (ax > 0x7f800000u || ay > 0x7f800000u) { return ${NAN}; }`,
    `  let x_negative = (xb >> 31u) != 0u;`,
    `  let y_negative = (yb >> 31u) != 0u;`,
    `  if (ay == 0x7f800000u) {`,
    `    if (ax == 0x3f800000u) { return ${c(1)}; }`,
    `    return select(${zero}, ${INF}, (ax > 0x3f800000u) != y_negative);`,
    `  }`,
    // y an integer (every |y| ≥ 2^24 is, and even), odd or not, from its bits.
    `  let ey = i32(ay >> 23u) - 127;`,
    `  var integer = ey >= 23;`,
    `  var odd = ey == 23 && (ay & 1u) != 0u;`,
    `  if (ey >= 0 && ey < 23) {`,
    `    let fraction = (ay << u32(9 + ey)) != 0u;`,
    `    integer = !fraction;`,
    `    odd = !fraction && ((((ay & 0x7fffffu) | 0x800000u) >> u32(23 - ey)) & 1u) != 0u;`,
    `  }`,
    `  let sign = select(0u, 0x80000000u, x_negative && odd);`,
    // x zero or infinite: zero or infinity, odd powers of a negative x negative.
    `  if (ax == 0u || ax == 0x7f800000u) {`,
    `    return bitcast<f32>(sign | select(0u, 0x7f800000u, (ax == 0u) == y_negative));`,
    `  }`,
    `  if (x_negative && !integer) { return ${NAN}; }`,
    `  return bitcast<f32>(bitcast<u32>(xk_pow_core(ax, y)) | sign);`,
    `}`,
  ].join("\n");
}

/** tan(π/8): past it atan's argument is reduced by π/4. */
const TAN_PI_8 = Math.SQRT2 - 1;

function atan2Source(): string {
  const zero = c(0);
  return [
    // atan(t) for t = t.x + t.y in [0, 1], as a double-f32.
    `fn xk_atan_df(t: vec2<f32>) -> vec2<f32> {`,
    `  var z = t;`,
    `  var base = vec2<f32>(${zero}, ${zero});`,
    `  if (t.x > ${c(TAN_PI_8)}) {`,
    `    let one = vec2<f32>(${c(1)}, ${zero});`,
    `    z = xk_df_div(xk_df_add(t, -one), xk_df_add(t, one));`,
    `    base = ${df(Math.PI / 4)};`,
    `  }`,
    `  let zz = z.x * z.x;`,
    `  return xk_df_add(base, xk_fast_two_sum(z.x, z.y + z.x * zz * ${horner("zz", ATAN_TAIL)}));`,
    `}`,
    // The finite or infinite f32 with bits b (a subnormal included) times 2^s, exactly where the result is normal; 0 below.
    `fn xk_scaled(b: u32, s: i32) -> f32 {`,
    `  if (b == 0u) { return ${zero}; }`,
    `  var m = b & 0x7fffffu;`,
    `  var e = i32(b >> 23u);`,
    `  if (e == 0) { let sh = countLeadingZeros(m) - 8u; m = (m << sh) & 0x7fffffu; e = 1 - i32(sh); }`,
    `  e = e + s;`,
    `  if (e <= 0) { return ${zero}; }`,
    `  return bitcast<f32>((u32(e) << 23u) | m);`,
    `}`,
    `fn xk_atan2_f32(y: f32, x: f32) -> f32 {`,
    `  let xb = bitcast<u32>(x);`,
    `  let yb = bitcast<u32>(y);`,
    `  let ax = xb & 0x7fffffffu;`,
    `  let ay = yb & 0x7fffffffu;`,
    `  if (ax > 0x7f800000u || ay > 0x7f800000u) { return ${NAN}; }`,
    // t = n/d in [0, 1]: 0 where d is zero (both zeros) or d alone infinite, 1 for two infinities.
    `  let swap = ay > ax;`,
    `  let nb = select(ay, ax, swap);`,
    `  let db = select(ax, ay, swap);`,
    `  var t = vec2<f32>(${zero}, ${zero});`,
    `  if (db == 0x7f800000u) {`,
    `    if (nb == 0x7f800000u) { t = vec2<f32>(${c(1)}, ${zero}); }`,
    `  } else if (nb != 0u) {`,
    // Both scaled by the power of two that brings d into [1, 2): exact, never subnormal but for an n whose t is.
    `    let s = 127 - max(i32(db >> 23u), 1) + select(0, i32(countLeadingZeros(db)) - 8, db < 0x800000u);`,
    `    let n = xk_scaled(nb, s);`,
    `    let d = xk_scaled(db, s);`,
    // Below 2^-60 atan(t) is t to f32's precision, and the correction's products would underflow.
    `    t = vec2<f32>(n / d, ${zero});`,
    `    if (t.x >= ${c(2 ** -60)}) { t = xk_df_div(vec2<f32>(n, ${zero}), vec2<f32>(d, ${zero})); }`,
    `  }`,
    `  let a = xk_atan_df(t);`,
    `  var r = a;`,
    `  if ((xb >> 31u) == 0u) {`,
    `    if (swap) { r = xk_df_add(${df(Math.PI / 2)}, -a); }`,
    `  } else {`,
    `    r = select(xk_df_add(${df(Math.PI)}, -a), xk_df_add(${df(Math.PI / 2)}, a), swap);`,
    `  }`,
    `  return bitcast<f32>(bitcast<u32>(r.x + r.y) | (yb & 0x80000000u));`,
    `}`,
  ].join("\n");
}

const FMOD = String.raw`// C's fmod, exact, on the significands (see wgsl_binary_math.ts).
fn xk_fmod_f32(x: f32, y: f32) -> f32 {
  let xb = bitcast<u32>(x);
  let yb = bitcast<u32>(y);
  let ax = xb & 0x7fffffffu;
  let ay = yb & 0x7fffffffu;
  let sx = xb & 0x80000000u;
  if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return ${NAN}; }
  if (ax < ay) { return x; }
  // |x| = mx·2^(ex-150), |y| = my·2^(ey-150): 24-bit significands, a subnormal's with exponent 1.
  let ex = max(ax >> 23u, 1u);
  let ey = max(ay >> 23u, 1u);
  let mx = (ax & 0x7fffffu) | select(0u, 0x800000u, ax >= 0x800000u);
  let my = (ay & 0x7fffffu) | select(0u, 0x800000u, ay >= 0x800000u);
  // mx·2^(ex-ey) mod my, eight bits of the exponent difference a step (r < 2^24, so r·2^8 fits).
  var r = mx % my;
  var d = ex - ey;
  loop {
    if (d == 0u || r == 0u) { break; }
    let k = min(d, 8u);
    r = (r << k) % my;
    d = d - k;
  }
  if (r == 0u) { return bitcast<f32>(sx); }
  // r·2^(ey-150): normal where its exponent field is at least 1, else subnormal.
  let sh = countLeadingZeros(r) - 8u;
  if (ey > sh) { return bitcast<f32>(sx | ((ey - sh) << 23u) | ((r << sh) & 0x7fffffu)); }
  return bitcast<f32>(sx | (r << (ey - 1u)));
}`;

const INTEGER_POWER = {
  ipow_i32: String.raw`// XLA's integer power: by squaring, wrapping; a negative exponent: 1 for 1, ±1 for -1, else 0.
fn xk_ipow_i32(x: i32, y: i32) -> i32 {
  if (y < 0) {
    if (x == 1) { return 1; }
    if (x == -1) { return select(-1, 1, (y & 1) == 0); }
    return 0;
  }
  var r = 1;
  var b = x;
  var e = y;
  loop {
    if (e == 0) { break; }
    if ((e & 1) != 0) { r = r * b; }
    b = b * b;
    e = e >> 1u;
  }
  return r;
}`,
  ipow_u32: String.raw`// Integer power by squaring, wrapping.
fn xk_ipow_u32(x: u32, y: u32) -> u32 {
  var r = 1u;
  var b = x;
  var e = y;
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) != 0u) { r = r * b; }
    b = b * b;
    e = e >> 1u;
  }
  return r;
}`,
} as const;

/** The sources of the functions in `names` (double-f32 arithmetic once, where pow or atan2 needs it). */
export function wgslBinaryMathSources(names: readonly BinaryMathName[]): string[] {
  const sources: string[] = [];
  if (names.includes("pow") || names.includes("atan2")) sources.push(DOUBLE_F32);
  for (const name of names) {
    switch (name) {
      case "pow": sources.push(powSource()); break;
      case "atan2": sources.push(atan2Source()); break;
      case "fmod": sources.push(FMOD); break;
      default: sources.push(INTEGER_POWER[name]);
    }
  }
  return sources;
}
