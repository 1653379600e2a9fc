// s64 and u64 in WGSL, which has no 64-bit integers: a value is held as vec2<u32>, its
// low word in x and its high word in y (the order of the two words of an element in
// little-endian memory, so a load or store is two word accesses). Both types share the
// holder, so bitcast and convert between them are the value itself; the ops that tell
// them apart (compares, max and min, arithmetic shift right, division, convert to a
// float) have a signed and an unsigned form. This is the one place that knows how each
// op is computed on the pair:
//
// - +, -: word by word, the carry (borrow) from the low word into the high one.
// - ×: the low words' full 64-bit product from their 16-bit halves (WGSL's u32 product
//   keeps only the low 32 bits), plus the cross terms' low words into the high word.
// - compares: the high words (signed or unsigned), then the low words unsigned; max and
//   min select by them.
// - shifts by an amount in [0, 64) (kernel/legalize.ts made XLA's amounts of 64 or more
//   selects): a word-crossing shift below 32, a move of one word at 32 and above.
// - divSafe, remSafe (a divisor legalize.ts made nonzero, and not -1 when signed):
//   restoring long division a bit at a time over the 64 bits (a 32-bit division where
//   both operands fit a word); signed ones on the magnitudes, the quotient negated when
//   the signs differ, the remainder taking the dividend's sign (C's, XLA's).
// - integer power: by squaring, wrapping, XLA's rule for negative exponents (as
//   wgsl_binary_math.ts's 32-bit one).
// - clz, popcnt: of the two words.
// - to f32: the top 24 bits from the leading one, rounded to nearest even with every
//   bit below them as sticky (the interpreter's bigintToFloat: one correct rounding); to
//   f16 and bf16 rounded to odd at 24 bits first, then to the half, as the 32-bit
//   integers are (wgsl_values.ts).
// - from f32 (and the halves, through their exact f32 values): on the pattern, toward
//   zero, saturating at the type's bounds, NaN to 0 (types/convert.ts floatToInteger).

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { decline } from "../kernel/declined.js";
import type { NodeType } from "../kernel/graph.js";

/** The WGSL type holding an s64 or u64 value. */
export const INT64_HOLDER = "vec2<u32>";

/** Whether t is held as a pair of words here: s64, u64 (and index, a signed 64-bit integer). */
export function isInt64(t: NodeType): boolean {
  if (t === "idx" || t === "cond") return false;
  const { kind, bitWidth } = ELEMENT_TYPES[t];
  return bitWidth === 64 && (kind === "signed" || kind === "unsigned");
}

/** The letter of a helper's signed (s) or unsigned (u) form for 64-bit type t. */
const signedName = (t: ElementType): string => (ELEMENT_TYPES[t].kind === "signed" ? "s" : "u");

/** The literal of `value` (a 64-bit integer; wrapped to 64 bits). */
export function int64Const(value: number | bigint): string {
  const v = BigInt.asUintN(64, BigInt(value));
  return `vec2<u32>(0x${(v & 0xffffffffn).toString(16)}u, 0x${(v >> 32n).toString(16)}u)`;
}

/** The bool of compare direction `dir` of x and y, both of type t. */
export function int64Compare(t: ElementType, dir: string, x: string, y: string): string {
  const lt = (a: string, b: string): string => `xk_${signedName(t)}lt64(${a}, ${b})`;
  switch (dir) {
    case "EQ": return `all(${x} == ${y})`;
    case "NE": return `any(${x} != ${y})`;
    case "LT": return lt(x, y);
    case "GT": return lt(y, x);
    case "LE": return `!${lt(y, x)}`;
    case "GE": return `!${lt(x, y)}`;
    default: return decline(`compare ${dir} of ${t}`);
  }
}

/** x op y in type t (s64 or u64); also a reducer's combine. */
export function int64Binary(op: string, t: ElementType, x: string, y: string): string {
  const s = signedName(t);
  switch (op) {
    case "add": return `xk_add64(${x}, ${y})`;
    case "sub": return `xk_sub64(${x}, ${y})`;
    case "mul": return `xk_mul64(${x}, ${y})`;
    case "and": return `(${x} & ${y})`;
    case "or": return `(${x} | ${y})`;
    case "xor": return `(${x} ^ ${y})`;
    case "max": return `select(${y}, ${x}, xk_${s}lt64(${y}, ${x}))`;
    case "min": return `select(${y}, ${x}, xk_${s}lt64(${x}, ${y}))`;
    case "pow": return `xk_ipow64(${x}, ${y}, ${signedName(t) === "s"})`;
    case "divSafe": return `xk_${s}div64(${x}, ${y}).q`;
    case "remSafe": return `xk_${s}div64(${x}, ${y}).r`;
    // Amounts in [0, 64) where the result is used (legalize.ts): the low word, masked so that the others are defined too.
    case "shlBounded": return `xk_shl64(${x}, ${y}.x & 63u)`;
    case "shrLBounded": return `xk_shrl64(${x}, ${y}.x & 63u)`;
    // Of u64 too: the sign bit of the 64-bit pattern in.
    case "shrABounded": return `xk_shra64(${x}, ${y}.x & 63u)`;
    default: return decline(`${op} on ${t}`);
  }
}

/** Unary op on x of type t (integer neg and abs are sub and max after legalize.ts). */
export function int64Unary(op: string, t: ElementType, x: string): string {
  switch (op) {
    case "not": return `(~${x})`;
    case "clz": return `xk_clz64(${x})`;
    case "popcnt": return `xk_popcnt64(${x})`;
    default: return decline(`${op} on ${t}`);
  }
}

/** x of type t as an f32: rounded to nearest even, or (`odd`) to odd, for a half's rounding after it. */
export const int64ToF32 = (t: ElementType, x: string, odd: boolean): string => `xk_${signedName(t)}64_to_f32(${x}, ${odd})`;

/** f32 x as type t: toward zero, saturating, NaN to 0. */
export const f32ToInt64 = (t: ElementType, x: string): string => `xk_f32_to_${signedName(t)}64(${x})`;

/** x, held in `holder` (i32: sign-extended, u32: zero-extended; a narrower integer or pred as wgsl_values.ts holds it), as a 64-bit value. */
export const widenToInt64 = (holder: string, x: string): string =>
  holder === "i32" ? `vec2<u32>(bitcast<u32>(${x}), select(0u, 0xffffffffu, ${x} < 0))` : `vec2<u32>(${x}, 0u)`;

/** The low word of x (a 64-bit value), in `holder` (i32 or u32), for a convert to a type of 32 bits or fewer to wrap. */
export const lowWord = (holder: string, x: string): string => (holder === "i32" ? `bitcast<i32>(${x}.x)` : `${x}.x`);

/** The value's two words, for a load (from two words) or a store (to two). */
export const int64Words = (lo: string, hi: string): string => `vec2<u32>(${lo}, ${hi})`;

/** The full product of two words as (low, high) words, from their 16-bit halves (every partial product fits a word): the 64-bit multiply's and Philox's (op_kernels_wgsl.ts). */
export const WGSL_MUL_32X32 = String.raw`fn xk_mul32x32(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}`;

/** The WGSL functions the renderings above call, once per kernel that has 64-bit integer ops (after wgsl_values.ts WGSL_HELPERS, whose xk_u32_to_f32 and xk_int_to_f32_odd_u32 they call). */
export const WGSL_INT64 = String.raw`// 64-bit integers as vec2<u32> (x the low word, y the high word): webgpu/wgsl_int64.ts.
fn xk_add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn xk_sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}
fn xk_neg64(a: vec2<u32>) -> vec2<u32> { return xk_sub64(vec2<u32>(0u), a); }
${WGSL_MUL_32X32}
// Modulo 2^64: the cross terms reach the high word only.
fn xk_mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = xk_mul32x32(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}
// Comparisons and shifts without a branch: WGSL's || and && short-circuit, and an
// if or a short circuit is a branch in the shader; SwiftShader's compile time grows faster
// than the branches of a kernel (an exact complex multiply has dozens of these calls:
// det_c64's kernel of 20 took minutes, docs/backends.md); a select is not a branch.
fn xk_ult64(a: vec2<u32>, b: vec2<u32>) -> bool { return (a.y < b.y) | ((a.y == b.y) & (a.x < b.x)); }
fn xk_slt64(a: vec2<u32>, b: vec2<u32>) -> bool { return (bitcast<i32>(a.y) < bitcast<i32>(b.y)) | ((a.y == b.y) & (a.x < b.x)); }
fn xk_isneg64(a: vec2<u32>) -> bool { return bitcast<i32>(a.y) < 0; }
// Shifts by n in [0, 64). s = n mod 32; the bits carried across the words are none for
// s = 0 (a shift by 32 - s would be by 32, which WGSL takes mod 32).
fn xk_shl64(a: vec2<u32>, n: u32) -> vec2<u32> {
  let s = n & 31u;
  let carried = select(a.x >> ((32u - s) & 31u), 0u, s == 0u);
  return select(vec2<u32>(0u, a.x << s), vec2<u32>(a.x << s, (a.y << s) | carried), n < 32u);
}
fn xk_shrl64(a: vec2<u32>, n: u32) -> vec2<u32> {
  let s = n & 31u;
  let carried = select(a.y << ((32u - s) & 31u), 0u, s == 0u);
  return select(vec2<u32>(a.y >> s, 0u), vec2<u32>((a.x >> s) | carried, a.y >> s), n < 32u);
}
fn xk_shra64(a: vec2<u32>, n: u32) -> vec2<u32> {
  let h = bitcast<i32>(a.y);
  let s = n & 31u;
  let carried = select(a.y << ((32u - s) & 31u), 0u, s == 0u);
  return select(vec2<u32>(bitcast<u32>(h >> s), bitcast<u32>(h >> 31u)), vec2<u32>((a.x >> s) | carried, bitcast<u32>(h >> s)), n < 32u);
}
fn xk_clz64(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(select(countLeadingZeros(a.y), 32u + countLeadingZeros(a.x), a.y == 0u), 0u); }
fn xk_popcnt64(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(countOneBits(a.x) + countOneBits(a.y), 0u); }
struct XkDiv64 { q: vec2<u32>, r: vec2<u32> }
// n / d and n % d unsigned, d nonzero: restoring division from the top bit of n. The
// partial remainder is at most the bits of n taken so far, below 2^63 before the last
// shift: shifted, it never passes 2^64.
fn xk_udiv64(n: vec2<u32>, d: vec2<u32>) -> XkDiv64 {
  if (n.y == 0u && d.y == 0u) { return XkDiv64(vec2<u32>(n.x / d.x, 0u), vec2<u32>(n.x % d.x, 0u)); }
  var q = vec2<u32>(0u);
  var r = vec2<u32>(0u);
  for (var i = 63u; ; i = i - 1u) {
    r = xk_shl64(r, 1u) | vec2<u32>((select(n.x, n.y, i >= 32u) >> (i & 31u)) & 1u, 0u);
    q = xk_shl64(q, 1u);
    if (!xk_ult64(r, d)) {
      r = xk_sub64(r, d);
      q.x = q.x | 1u;
    }
    if (i == 0u) { break; }
  }
  return XkDiv64(q, r);
}
// Truncating, d neither 0 nor -1 (kernel/legalize.ts): on the magnitudes (|INT64_MIN| is 2^63 unsigned).
fn xk_sdiv64(n: vec2<u32>, d: vec2<u32>) -> XkDiv64 {
  let nn = xk_isneg64(n);
  let dn = xk_isneg64(d);
  let u = xk_udiv64(select(n, xk_neg64(n), nn), select(d, xk_neg64(d), dn));
  return XkDiv64(select(u.q, xk_neg64(u.q), nn != dn), select(u.r, xk_neg64(u.r), nn));
}
// XLA's integer power, wrapping; a negative (signed) exponent: 1 for 1, ±1 for -1, else 0.
fn xk_ipow64(x: vec2<u32>, y: vec2<u32>, signed: bool) -> vec2<u32> {
  let one = vec2<u32>(1u, 0u);
  if (signed && xk_isneg64(y)) {
    if (all(x == one)) { return one; }
    if (all(x == vec2<u32>(0xffffffffu))) { return select(x, one, (y.x & 1u) == 0u); }
    return vec2<u32>(0u);
  }
  var r = one;
  var b = x;
  var e = y;
  loop {
    if (all(e == vec2<u32>(0u))) { break; }
    if ((e.x & 1u) != 0u) { r = xk_mul64(r, b); }
    b = xk_mul64(b, b);
    e = xk_shrl64(e, 1u);
  }
  return r;
}
// Unsigned a as an f32, in one rounding: to nearest even, or to odd (odd: a dropped bit
// sets the last kept one, so that a half's rounding after it is the only one). The top
// 32 bits from the leading one keep 24, the rest of them and every lower bit decide.
fn xk_u64_to_f32(a: vec2<u32>, odd: bool) -> f32 {
  if (a.y == 0u) { return select(xk_u32_to_f32(a.x), xk_int_to_f32_odd_u32(a.x), odd); }
  let lz = countLeadingZeros(a.y);
  let top = select((a.y << lz) | (a.x >> ((32u - lz) & 31u)), a.y, lz == 0u);
  let sticky = (a.x << lz) != 0u;
  let kept = top >> 8u;
  let rest = top & 0xffu;
  let up = rest > 0x80u || (rest == 0x80u && (sticky || (kept & 1u) == 1u));
  let m = select(kept + select(0u, 1u, up), kept | select(0u, 1u, rest != 0u || sticky), odd);
  return f32(m) * bitcast<f32>((167u - lz) << 23u);
}
fn xk_s64_to_f32(a: vec2<u32>, odd: bool) -> f32 {
  let negative = xk_isneg64(a);
  let m = xk_u64_to_f32(select(a, xk_neg64(a), negative), odd);
  return select(m, -m, negative);
}
// |x| truncated, of its pattern's magnitude a (below 2^64).
fn xk_trunc64(a: u32) -> vec2<u32> {
  let e = a >> 23u;
  if (e < 127u) { return vec2<u32>(0u); }
  let m = (a & 0x7fffffu) | 0x800000u;
  if (e < 150u) { return vec2<u32>(m >> (150u - e), 0u); }
  return xk_shl64(vec2<u32>(m, 0u), e - 150u);
}
// Toward zero, saturating at the type's bounds (2^63 and 2^64 are 0x5f000000 and
// 0x5f800000), NaN to 0, on the pattern: no float operation to flush a subnormal.
fn xk_f32_to_s64(x: f32) -> vec2<u32> {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  let negative = (b >> 31u) != 0u;
  if (a > 0x7f800000u) { return vec2<u32>(0u); }
  if (a >= 0x5f000000u) { return select(vec2<u32>(0xffffffffu, 0x7fffffffu), vec2<u32>(0u, 0x80000000u), negative); }
  let m = xk_trunc64(a);
  return select(m, xk_neg64(m), negative);
}
fn xk_f32_to_u64(x: f32) -> vec2<u32> {
  let b = bitcast<u32>(x);
  // A NaN, or a negative x (sign bit set: truncated to 0 or saturated at 0): 0.
  if (b > 0x7f800000u) { return vec2<u32>(0u); }
  if (b >= 0x5f800000u) { return vec2<u32>(0xffffffffu); }
  return xk_trunc64(b);
}`;
