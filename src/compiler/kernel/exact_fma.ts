// fma(a, b, c) of f32 values, correctly rounded (to nearest even), computed on integers
// only: for a target without f64, where complex_ops.ts's round-to-odd form in f64 has no
// place. WGSL is such a target, and its own `fma` may be a multiply and an add, each
// rounded (the spec's accuracy for fma is inherited from x * y + z), and its f32
// arithmetic may flush subnormals and assume finite values; so nothing here is float
// arithmetic: the operands are read as bit patterns and the result is written as one,
// which makes it exact on any adapter, subnormal operands and results included.
//
// Finite operands: each is a significand m (24 bits, the hidden bit set for normals)
// times 2^(e - 150). The product of the significands is exact in 48 bits (a u64), and
// the addend's significand is widened to 64 bits; both are shifted so that their top bit
// is bit 62, which makes the larger exponent the larger magnitude. The smaller is then
// shifted right to the larger's scale, the bits it loses jammed into its bit 0 (a
// sticky bit). That is exact for shifts up to 14 bits (a significand has at most 48
// bits, so the lost bits are zeros), and for longer ones the sum keeps its top bit at
// 61 or above, so the rounding position (24 bits down) lies far above the sticky bit:
// the rounded result is that of the exact sum. The sum or difference is normalized,
// then rounded to nearest even at the f32 normal or (below 2^-126) subnormal position
// on integers; a carry out of the significand steps the exponent, past the largest
// finite value to infinity. An exact zero sum is +0. A zero product gives c, or a zero
// whose sign is negative only where both the product's and c's are. NaN, infinities:
// IEEE 754's fma (NaN where an operand is NaN, for inf·0, or for an infinite product
// plus an infinity of the other sign; else the infinite product, else c).

import type { KernelGraph } from "./graph.js";
import { legalize } from "./legalize.js";

/**
 * fma(a, b, c) rounded once, of f32 nodes, as an f32 node (see the top); without c, the
 * product a·b rounded once (fma(a, b, -0), with the addend's steps left out).
 */
export function exactFmaF32(g: KernelGraph, a: number, b: number, c?: number): number {
  const productOnly = c === undefined;
  type T = "u32" | "s32" | "u64" | "pred";
  // Every node legalized as it is built (shifts by 64 or more give 0, XLA's rule, which the alignment relies on).
  const op = (o: Parameters<KernelGraph["op"]>[0], t: T, args: readonly number[], attr?: string): number => legalize(g, g.op(o, t, args, attr));
  const u32 = (v: number): number => g.constant("u32", v);
  const s32 = (v: number): number => g.constant("s32", v);
  const u64 = (v: bigint): number => g.constant("u64", v);
  const compare = (dir: string, x: number, y: number): number => g.op("compare", "pred", [x, y], dir);
  const and = (x: number, y: number): number => op("and", "pred", [x, y]);
  const or = (x: number, y: number): number => op("or", "pred", [x, y]);
  const select = (t: T, p: number, x: number, y: number): number => op("select", t, [p, x, y]);
  const convert = (t: T, x: number): number => op("convert", t, [x]);

  const bits = [a, b, c ?? g.constant("f32", -0)].map((x) => g.op("bitcast", "u32", [x])) as [number, number, number];
  const magnitude = bits.map((x) => op("and", "u32", [x, u32(0x7fffffff)])) as [number, number, number];
  const sign = bits.map((x) => op("shrL", "u32", [x, u32(31)])) as [number, number, number];
  const infinity = u32(0x7f800000);
  const [nanA, nanB, nanC] = magnitude.map((m) => compare("GT", m, infinity)) as [number, number, number];
  const [infA, infB, infC] = magnitude.map((m) => compare("EQ", m, infinity)) as [number, number, number];
  const [zeroA, zeroB, zeroC] = magnitude.map((m) => compare("EQ", m, u32(0))) as [number, number, number];
  const signP = op("xor", "u32", [sign[0], sign[1]]);

  // Significand (u64) and exponent (s32, the scale of its last bit plus 150) of a finite operand.
  const fields = (i: number): [number, number] => {
    const field = op("shrL", "u32", [magnitude[i]!, u32(23)]);
    const hidden = select("u32", compare("NE", field, u32(0)), u32(0x800000), u32(0));
    const significand = convert("u64", op("or", "u32", [op("and", "u32", [bits[i]!, u32(0x7fffff)]), hidden]));
    return [significand, convert("s32", op("max", "u32", [field, u32(1)]))];
  };
  const [ma, ea] = fields(0);
  const [mb, eb] = fields(1);
  const [mc, ec] = fields(2);
  const leadingZeros = (x: number): number => convert("s32", op("clz", "u64", [x]));
  const shiftLeft = (x: number, n: number): number => op("shl", "u64", [x, convert("u64", n)]);
  const shiftRight = (x: number, n: number): number => op("shrL", "u64", [x, convert("u64", n)]);
  const add = (x: number, y: number): number => op("add", "s32", [x, y]);
  const sub = (x: number, y: number): number => op("sub", "s32", [x, y]);

  // Both terms with their top bit at bit 62, and the scale of their last bit.
  const product = op("mul", "u64", [ma, mb]);
  const lzP = leadingZeros(product);
  const x = shiftLeft(product, sub(lzP, s32(1)));
  const xScale = sub(add(ea, eb), add(lzP, s32(299)));
  // The sum with the addend: the larger term (a zero c is the smaller whatever its
  // scale), plus or minus the smaller one at its scale with a sticky bit.
  const addend = (): { sum: number; scale: number; signH: number } => {
    const lzC = leadingZeros(mc);
    const y = shiftLeft(mc, sub(lzC, s32(1)));
    const yScale = sub(ec, add(lzC, s32(149)));
    const xLarger = or(zeroC, or(compare("GT", xScale, yScale), and(compare("EQ", xScale, yScale), compare("GE", x, y))));
    const high = select("u64", xLarger, x, y);
    const low = select("u64", xLarger, y, x);
    const distance = op("max", "s32", [sub(xScale, yScale), sub(yScale, xScale)]);
    const shifted = shiftRight(low, distance);
    const sticky = select("u64", compare("NE", shiftLeft(shifted, distance), low), u64(1n), u64(0n));
    const aligned = op("or", "u64", [shifted, sticky]);
    return {
      sum: select("u64", compare("EQ", signP, sign[2]), op("add", "u64", [high, aligned]), op("sub", "u64", [high, aligned])),
      scale: select("s32", xLarger, xScale, yScale),
      signH: select("u32", xLarger, signP, sign[2]),
    };
  };
  const { sum, scale, signH } = productOnly ? { sum: x, scale: xScale, signH: signP } : addend();

  // Normalized to bit 63, then rounded at the f32 position: 40 bits dropped for a normal
  // result, more below 2^-126 (the biased exponent then counts from 1); past 64 bits, 0.
  const lz = leadingZeros(sum);
  const n = shiftLeft(sum, lz);
  const biased = sub(add(scale, s32(190)), lz);
  const normal = compare("GE", biased, s32(1));
  const dropped = select("s32", normal, s32(40), sub(s32(41), biased));
  const vanishes = compare("GT", dropped, s32(64));
  const drop = op("min", "s32", [dropped, s32(64)]);
  const q = shiftRight(n, drop);
  const rest = op("and", "u64", [n, op("sub", "u64", [shiftLeft(u64(1n), drop), u64(1n)])]);
  const half = shiftLeft(u64(1n), sub(drop, s32(1)));
  const odd = compare("EQ", op("and", "u64", [q, u64(1n)]), u64(1n));
  const up = or(compare("GT", rest, half), and(compare("EQ", rest, half), odd));
  const rounded = op("add", "u64", [q, select("u64", up, u64(1n), u64(0n))]);
  const exponentBase = shiftLeft(convert("u64", select("s32", normal, sub(biased, s32(1)), s32(0))), s32(23));
  const pattern = op("min", "u64", [op("add", "u64", [exponentBase, rounded]), u64(0x7f800000n)]);
  const resultMagnitude = select("u32", or(vanishes, compare("EQ", sum, u64(0n))), u32(0), convert("u32", pattern));
  const signBit = (s: number): number => op("shl", "u32", [s, u32(31)]);
  // An exact zero sum is +0 (its sign bit: 0 where the magnitude is 0 from cancellation).
  const finite = op("or", "u32", [select("u32", compare("EQ", sum, u64(0n)), u32(0), signBit(signH)), resultMagnitude]);

  // A zero product: c, or a zero negative only where both are.
  const zeroProduct = select("u32", zeroC, signBit(op("and", "u32", [signP, sign[2]])), bits[2]);
  const productZero = or(zeroA, zeroB);
  // The specials, IEEE 754's.
  const nanProduct = or(or(nanA, nanB), or(and(infA, zeroB), and(infB, zeroA)));
  const infProduct = or(infA, infB);
  const nan = or(or(nanProduct, nanC), and(and(infProduct, infC), compare("NE", signP, sign[2])));
  const special = select("u32", nan, u32(0x7fc00000), select("u32", infProduct, op("or", "u32", [signBit(signP), infinity]), bits[2]));
  const nonFinite = or(or(nanA, nanB), or(or(nanC, infA), or(infB, infC)));
  const result = select("u32", nonFinite, special, select("u32", productZero, zeroProduct, finite));
  return g.op("bitcast", "f32", [result]);
}
