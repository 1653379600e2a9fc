// WGSL for the nodes of a kernel graph (kernel/graph.ts, legalized by kernel/legalize.ts):
// instruction selection only, as wasm/emit_values.ts and native/c_values.ts do for their
// targets. Each node becomes one `let vN: T = ...;`. Values are held as XLA defines them:
// f32 as f32; signed integers up to 32 bits as i32 and unsigned ones and pred as u32,
// wrapped to their width after every op; index nodes as i32, conditions as bool. WGSL
// has no f64 and no 64-bit integers: s64 and u64 are held as pairs of words and
// computed on by wgsl_int64.ts; f64 declines (its ops run on the host).
//
// The narrow floats are held as their bit patterns (u32), so that loads, stores, selects
// and bitcasts copy them exactly (NaN payloads included). f16 is computed on as
// native/c_values.ts does, without WGSL's `shader-f16` feature (which SwiftShader lacks,
// so this way runs on every adapter): each op decodes its operands to f32 (exactly, on
// bits), computes in f32 and rounds the result back to nearest even on bits (HALF), with
// subnormals, overflow to infinity and NaN written out, since pack2x16float leaves
// rounding and subnormals to the implementation. One f32 rounding then one to f16 is
// the interpreter's single rounding for +, -, ×, ÷ and sqrt (24 ≥ 2p + 2 bits), given
// f32 ops rounded to nearest; integers convert to f32 rounded to odd first for the same
// reason. bf16 is held and rounded the same way, but its subnormals are f32 subnormals,
// which WGSL lets an implementation flush: +, -, ×, ÷, sqrt and rsqrt of bf16 are
// helpers (HALF helpers: xk_bf16_add, ...) that take f32's path when no operand or result
// can be an f32 subnormal (one test of the exponent fields) and otherwise compute
// exactly on integers (sqrt, rsqrt: on values scaled into f32's normals); its other ops
// (the math functions, remainder, pow, atan2) are computed in f32 under f32's licence
// below, but for sin, tan, tanh, expm1 and log1p of a subnormal: the operand itself.
// bf16 and f16 convert (to and from each other, f32, the integers and pred), compare (on
// bits) and select here. The 8-, 6- and 4-bit floats are held and computed on the same
// way, through functions of each format (wgsl_narrow_float.ts: decoded exactly on bits,
// rounded on bits with the literal codec's rules, ÷ exact on integers); their compares,
// maxima, minima, isFinite and tests against zero read the exactly decoded f32's
// pattern; f8e8m0fnu's arithmetic but what is exact on bits declines (its ops run on
// the host).
//
// WGSL leaves NaN and infinity behaviour to the implementation, and lets it flush f32
// subnormals to zero in any float operation (SwiftShader does, compares included), so
// every test that XLA's semantics hang on is written on bit patterns: NaN, finiteness,
// absolute value, negation, compares, the NaN-propagating maximum and minimum with -0
// below +0, ceil, floor and the roundings of |x| < 1, the NaN → 0 and saturating
// float → integer conversions. Arithmetic (+, -, ×, ÷, sqrt, the math functions) is
// WGSL's and may flush: a subnormal operand or result may be 0 there (f32's, and
// bf16's but for the helpers above).

import { bitWidth, ELEMENT_TYPES, integerRange, type ElementType } from "../../types/element_type.js";
import { encodeFloatBits } from "../../types/float_codec.js";
import { constantValue, type Node, type NodeType } from "../kernel/graph.js";
import { decline, DeclinedError } from "../kernel/declined.js";
import { SELECT_OF_VALUES, TOTAL } from "../kernel/scalar_ops.js";
import { COMPARE_OPERATOR, TextValueEmitter } from "../kernel/text_values.js";
import { approximationName, isTrig, type ApproximationName, type TrigName } from "../kernel/approximations.js";
import { WGSL_POW2, wgslFloat, wgslMathFunction, wgslMathSource } from "./wgsl_math.js";
import { wgslTrigFunction, wgslTrigSources } from "./wgsl_trig.js";
import { isBinaryMath, wgslBinaryMathFunction, wgslBinaryMathSources, type BinaryMathName } from "./wgsl_binary_math.js";
import { E8M0_EXACT_OPS, isByteFloat, narrowFloatSource } from "./wgsl_narrow_float.js";
import { f32ToInt64, INT64_HOLDER, int64Binary, int64Compare, int64Const, int64ToF32, int64Unary, isInt64, lowWord, widenToInt64, WGSL_INT64 } from "./wgsl_int64.js";

const kindOf = (t: ElementType) => ELEMENT_TYPES[t].kind;

/** Floats held as bit patterns here: every float but f32 and f64. */
const isNarrowFloat = (t: NodeType): boolean => t !== "idx" && t !== "cond" && ELEMENT_TYPES[t].kind === "float" && t !== "f32" && t !== "f64";

/**
 * How a float held as bits (f16, bf16, and the byte floats of wgsl_narrow_float.ts) is
 * converted and computed on: its functions to f32 and back, and (f16, bf16) its
 * pattern's fields.
 */
interface Half {
  /** fn(bits: u32) -> f32: the value, exactly. */
  readonly value: string;
  /** fn(x: f32, keep_nan_sign: bool) -> u32: x rounded to nearest even (a NaN the positive quiet one, or with x's sign). */
  readonly bits: string;
  /**
   * f16's and bf16's sign-and-magnitude fields (sign 0x8000), on which compares,
   * maxima, minima and isFinite read the pattern itself: the magnitude bits (pattern &
   * 0x7fff) of infinity (above it, NaN) and the positive quiet NaN (the interpreter's
   * NaN result of an op). Undefined for the byte floats, whose patterns have no common
   * layout (fnuz's NaN is the pattern of -0, f8e8m0fnu has no sign): those ops read
   * their exactly decoded f32's pattern.
   */
  readonly fields?: { readonly infinity: string; readonly nan: string };
  /**
   * Ops computed by a helper on the patterns (fn(bits...) -> u32): of WGSL_HELPERS, that
   * keeps subnormals out of f32 arithmetic (bf16: +, -, ×, ÷ and sqrt exact, rsqrt as
   * f16's); of wgsl_narrow_float.ts, a byte float's exact ÷ (WGSL's f32 division may be
   * off by ulps); the other ops: in f32 on the values.
   */
  readonly helpers?: Readonly<Record<string, string>>;
  /**
   * Unary ops whose value at a subnormal x rounds to x itself (f(x) = x·(1 + O(x²)), the
   * O(x²) below 2^-250): there the operand's bits, where f32's path may see 0.
   */
  readonly subnormalIsSelf?: ReadonlySet<string>;
}

const HALF: Readonly<Partial<Record<NodeType, Half>>> = {
  // Every f16 value and every intermediate f32 result of an op on f16 values is an f32 normal (or zero): nothing for a flush to zero to touch.
  f16: { value: "xk_f16_value", bits: "xk_f16_bits", fields: { infinity: "0x7c00u", nan: "0x7e00u" } },
  // bf16 subnormals are f32 subnormals: +, -, ×, ÷, sqrt and rsqrt go through helpers safe from a flush to zero.
  bf16: {
    value: "xk_bf16_value", bits: "xk_bf16_bits", fields: { infinity: "0x7f80u", nan: "0x7fc0u" },
    helpers: { add: "xk_bf16_add", sub: "xk_bf16_sub", mul: "xk_bf16_mul", div: "xk_bf16_div", sqrt: "xk_bf16_sqrt", rsqrt: "xk_bf16_rsqrt" },
    subnormalIsSelf: new Set(["sin", "tan", "tanh", "expm1", "log1p"]),
  },
};

const byteFloatHalves = new Map<ElementType, Half>();

/** The Half of t: f16's or bf16's, a byte float's (its division exact: wgsl_narrow_float.ts), or undefined. */
function halfOf(t: NodeType): Half | undefined {
  if (!isByteFloat(t)) return HALF[t];
  const b = t as ElementType;
  let half = byteFloatHalves.get(b);
  if (half === undefined) {
    half = { value: `xk_widen_${b}`, bits: `xk_round_${b}`, ...(ELEMENT_TYPES[b].float!.encoding === "e8m0" ? {} : { helpers: { div: `xk_div_${b}` } }) };
    byteFloatHalves.set(b, half);
  }
  return half;
}

/** A float's bits as compares read them: its pattern (u32) from the held value, and the masks of its fields. */
interface FloatFields {
  readonly pattern: (held: string) => string;
  readonly sign: string;
  readonly magnitude: string;
  /** The magnitude of infinity: above it, NaN. */
  readonly infinity: string;
}

const F32_FIELDS: FloatFields = { pattern: (x) => `bitcast<u32>(${x})`, sign: "0x80000000u", magnitude: "0x7fffffffu", infinity: "0x7f800000u" };
/** The fields compares read of a float held as bits: f16's and bf16's own; a byte float's exactly decoded f32's. */
const halfFields = (half: Half): FloatFields =>
  half.fields !== undefined ? { pattern: (x) => x, sign: "0x8000u", magnitude: "0x7fffu", infinity: half.fields.infinity } : { ...F32_FIELDS, pattern: (x) => F32_FIELDS.pattern(`${half.value}(${x})`) };

/** The f32 code `compute` writes for an op on half type t; where it declines, the reason names t. */
function inF32(t: NodeType, compute: () => string): string {
  try {
    return compute();
  } catch (e) {
    if (e instanceof DeclinedError) throw new DeclinedError(`${t} (computed in f32): ${e.message}`);
    throw e;
  }
}

/** Why values of type t have no WGSL form, or undefined. */
export function unsupportedType(t: NodeType): string | undefined {
  if (t === "idx" || t === "cond") return undefined;
  const info = ELEMENT_TYPES[t];
  if (t === "f64") return "WGSL has no f64";
  if (info.kind === "complex") return "complex numbers are not compiled to WGSL";
  return undefined;
}

/** The WGSL type a value of type t is held in. */
export function wgslType(t: NodeType): string {
  if (t === "idx") return "i32";
  if (t === "cond") return "bool";
  const why = unsupportedType(t);
  if (why !== undefined) return decline(why);
  if (t === "f32") return "f32";
  if (isInt64(t)) return INT64_HOLDER;
  return kindOf(t) === "signed" ? "i32" : "u32";
}

/** An expression of integer (or pred) type t wrapped to t's width, from an expression of t's WGSL type. */
export function wrap(t: ElementType, e: string): string {
  if (t === "pred") return `select(0u, 1u, (${e}) != 0u)`;
  const w = bitWidth(t);
  if (w >= 32) return e;
  return kindOf(t) === "signed" ? `((${e} << ${32 - w}u) >> ${32 - w}u)` : `((${e}) & 0x${(2 ** w - 1).toString(16)}u)`;
}

/** A WGSL literal of `value` in type t. */
export function wgslConst(t: ElementType, value: number | bigint): string {
  if (t === "f32") return wgslFloat(Number(value));
  // The pattern the interpreter's literal holds.
  if (isNarrowFloat(t)) return `0x${encodeFloatBits(t, Number(value)).toString(16)}u`;
  wgslType(t);
  if (t === "pred") return Number(value) !== 0 ? "1u" : "0u";
  if (isInt64(t)) return int64Const(value);
  const v = BigInt.asUintN(32, BigInt(value));
  return kindOf(t) === "signed" ? `bitcast<i32>(0x${v.toString(16)}u)` : `0x${v.toString(16)}u`;
}

/**
 * A math function a kernel calls: a shared approximation (wgsl_math.ts), sin, cos, tan
 * (wgsl_trig.ts), pow, atan2, fmod, integer power (wgsl_binary_math.ts), the 64-bit
 * integer functions (wgsl_int64.ts), or a byte float's functions (wgsl_narrow_float.ts,
 * by its type's name).
 */
export type WgslMathName = ApproximationName | TrigName | BinaryMathName | typeof INT64_FUNCTIONS | ElementType;

const isTypeName = (n: WgslMathName): n is ElementType => Object.hasOwn(ELEMENT_TYPES, n);

/** The name under which a kernel asks for wgsl_int64.ts's functions. */
const INT64_FUNCTIONS = "int64";

/** The WGSL sources of the math functions in `names`, to go before the kernel. */
export function wgslMathSources(names: ReadonlySet<WgslMathName>): string[] {
  const all = [...names];
  const approximations = all.filter((n): n is ApproximationName => !isTrig(n) && !isBinaryMath(n) && n !== INT64_FUNCTIONS && !isTypeName(n));
  // xk_pow2, once: the trigonometric reduction and pow scale by it.
  const pow2 = all.some((n) => isTrig(n) || n === "pow") ? [WGSL_POW2] : [];
  const int64 = names.has(INT64_FUNCTIONS) ? [WGSL_INT64] : [];
  const byteFloats = all.filter(isTypeName).map(narrowFloatSource);
  return [...approximations.map(wgslMathSource), ...pow2, ...wgslTrigSources(all.filter(isTrig)), ...wgslBinaryMathSources(all.filter(isBinaryMath)), ...int64, ...byteFloats];
}

/** The WGSL values of one kernel: each node's variable, and the math functions the kernel calls. */
export class WgslValues extends TextValueEmitter {
  /** Functions of wgsl_math.ts and wgsl_trig.ts the emitted code calls (their sources go before the kernel: wgslMathSources). */
  readonly math = new Set<WgslMathName>();

  protected typeName(t: NodeType): string { return wgslType(t); }

  /** The Half of t (halfOf), whose functions a byte float's kernel then carries. */
  private half(t: NodeType): Half | undefined {
    if (isByteFloat(t)) this.math.add(t as ElementType);
    return halfOf(t);
  }

  /**
   * The half of type t whose arithmetic op is computed here (in f32, or by its helpers),
   * or undefined where t is not a float held as bits; f8e8m0fnu's ops that are not exact
   * on bits decline, saying why.
   */
  private computedHalf(t: NodeType, op: string): Half | undefined {
    if (!isNarrowFloat(t)) return undefined;
    if (op === "reducePrecision") return decline(`reducePrecision on ${t} is not compiled to WGSL (kernel/legalize.ts writes it out for every float type but f8e8m0fnu, whose 2^-127 is an f32 subnormal)`);
    if (t === "f8e8m0fnu" && !E8M0_EXACT_OPS.has(op)) {
      return decline(`${op} on f8e8m0fnu is not compiled to WGSL (its values, 2^-127 to 2^127, meet f32's subnormals and overflow in f32 arithmetic)`);
    }
    return this.half(t);
  }
  protected declare(type: string, name: string, value: string): string { return `let ${name}: ${type} = ${value};`; }
  protected indexLiteral(k: number): string { return `${k}`; }
  protected condAsIndex(e: string): string { return `select(0, 1, ${e})`; }

  protected value(n: Node): string {
    const [a, b, c] = n.args;
    const t = n.type;
    if (isInt64(t) || n.args.some((x) => isInt64(this.g.node(x).type))) this.math.add(INT64_FUNCTIONS);
    switch (n.op) {
      case "iconst": return Number.isInteger(n.attr) ? `${n.attr as number}` : decline(`an index constant ${String(n.attr)}`);
      case "imin": return `min(${this.v(a!)}, ${this.v(b!)})`;
      case "imax": return `max(${this.v(a!)}, ${this.v(b!)})`;
      case "iselect": return `select(${this.v(c!)}, ${this.v(b!)}, ${this.v(a!)})`;
      case "toIdx": return this.toIdx(a!);
      case "ctrue": return "true";
      case "condToPred": return `select(0u, 1u, ${this.v(a!)})`;
      case "const": return wgslConst(t as ElementType, constantValue(n));
      case "fromIdx": return this.fromIdx(t as ElementType, this.v(a!));
      case "select": {
        wgslType(t);
        const pick = `select(${this.v(c!)}, ${this.v(b!)}, ${this.v(a!)} != 0u)`;
        if (!isNarrowFloat(t) || n.attr !== SELECT_OF_VALUES) return pick;
        // HLO select copies the chosen bits; a value select (SELECT_OF_VALUES: sign)
        // gives a half's NaN as the positive quiet NaN, as the interpreter computes it.
        const half = this.half(t)!;
        return `${half.bits}(${half.value}(${pick}), false)`;
      }
      case "convert": return this.convert(a!, t as ElementType);
      case "bitcast": return this.bitcast(a!, t as ElementType);
      case "compare": return this.compare(n);
      case "isFinite": {
        // Of the floats held as bits (legalize.ts writes f32's as a bit test): the exponent field not all ones.
        const half = this.half(this.g.node(a!).type);
        if (half === undefined) return decline(`isFinite of ${this.g.node(a!).type}`);
        const fields = halfFields(half);
        return `select(0u, 1u, (${fields.pattern(this.v(a!))} & ${fields.magnitude}) < ${fields.infinity})`;
      }
      default: break;
    }
    const half = this.computedHalf(t, n.op);
    if (n.args.length === 1) {
      const helper = half?.helpers?.[n.op];
      if (helper !== undefined) return `${helper}(${this.v(a!)})`;
      if (half !== undefined) {
        // A half: computed in f32 on its value, rounded back to the half.
        const x = this.v(a!);
        const rounded = `${half.bits}(${inF32(t, () => this.unary(n, "f32", `${half.value}(${x})`))}, false)`;
        return half.subnormalIsSelf?.has(n.op) === true ? `select(${rounded}, ${x}, (${x} & 0x7f80u) == 0u && (${x} & 0x7fu) != 0u)` : rounded;
      }
      return this.unary(n, t as ElementType, this.v(a!));
    }
    if (n.args.length === 2) return this.binary(n.op, t as ElementType, this.v(a!), this.v(b!));
    return decline(`${n.op} has no WGSL code`);
  }

  private fromIdx(t: ElementType, x: string): string {
    if (t === "f32") return `f32(${x})`;
    const half = this.half(t);
    if (half !== undefined) return `${half.bits}(xk_int_to_f32_odd_i32(${x}), false)`;
    if (isInt64(t)) return widenToInt64("i32", x);
    const w = wgslType(t);
    return wrap(t, w === "i32" ? x : `u32(${x})`);
  }

  /** A value as an index (i32): of a type within s32's range (legalize.ts legalIndex). */
  private toIdx(v: number): string {
    const x = this.v(v);
    return wgslType(this.g.node(v).type as ElementType) === "i32" ? x : `i32(${x})`;
  }

  private convert(a: number, to: ElementType): string {
    const from = this.g.node(a).type as ElementType;
    const x = this.v(a);
    wgslType(from);
    wgslType(to);
    if (from === to) return x;
    const fromHalf = this.half(from);
    const toHalf = this.half(to);
    if (to === "pred") {
      if (fromHalf !== undefined) {
        const fields = halfFields(fromHalf);
        return `select(0u, 1u, (${fields.pattern(x)} & ${fields.magnitude}) != 0u)`;
      }
      if (isInt64(from)) return `select(0u, 1u, any(${x} != vec2<u32>(0u)))`;
      return from === "f32" ? `select(0u, 1u, (bitcast<u32>(${x}) & 0x7fffffffu) != 0u)` : `select(0u, 1u, ${x} != ${wgslType(from) === "i32" ? "0" : "0u"})`;
    }
    // A float's f32 value (a half's, decoded exactly): converted as an f32 is.
    const fromFloat = from === "f32" || fromHalf !== undefined;
    const value = fromHalf !== undefined ? `${fromHalf.value}(${x})` : x;
    if (toHalf !== undefined) {
      // One rounding, to nearest even: of a float's f32 value (a NaN keeps its sign, as
      // the interpreter's convert), or of an integer's rounded to odd (xk_int_to_f32_odd).
      if (fromFloat) return `${toHalf.bits}(${value}, true)`;
      // A negative integer beyond f8e4m3fn's range rounds to its negative NaN (the sign of the f32).
      return `${toHalf.bits}(${isInt64(from) ? int64ToF32(from, x, true) : `xk_int_to_f32_odd_${wgslType(from)}(${x})`}, false)`;
    }
    if (fromFloat) {
      if (to === "f32") return value;
      if (isInt64(to)) return f32ToInt64(to, value);
      // Toward zero, saturating at the type's bounds, NaN to 0 (types/convert.ts).
      const { min, max } = integerRange(to);
      return `xk_f2int_${wgslType(to)}(${value}, ${wgslFloat(Number(min))}, ${wgslFloat(Number(max))}, ${wgslConst(to, min)}, ${wgslConst(to, max)})`;
    }
    if (to === "f32") return isInt64(from) ? int64ToF32(from, x, false) : `xk_int_to_f32_${wgslType(from)}(${x})`;
    // Integer (or pred) to integer: the value (or its bits) wrapped to the new width;
    // to a 64-bit type, extended by the sign its holder carries; from one, its low word.
    const sameHolder = wgslType(from) === wgslType(to);
    if (sameHolder) return wrap(to, x);
    if (isInt64(to)) return widenToInt64(wgslType(from), x);
    if (isInt64(from)) return wrap(to, lowWord(wgslType(to), x));
    return wrap(to, `bitcast<${wgslType(to)}>(${x})`);
  }

  private bitcast(a: number, to: ElementType): string {
    const from = this.g.node(a).type as ElementType;
    const x = this.v(a);
    // legalize.ts's total-order key of a float narrower than a word: its pattern, zero-extended to s32 (held so already).
    if (isNarrowFloat(from) && bitWidth(from) < 32 && to === "s32") return `bitcast<i32>(${x})`;
    if (bitWidth(from) !== bitWidth(to)) return decline(`bitcast ${from} -> ${to}`);
    // Narrow floats and integers of one width share their holder's bits (u32 patterns, or i32 sign-extended).
    const holder = (t: ElementType): string => (isNarrowFloat(t) ? "u32" : wgslType(t));
    if (holder(from) === holder(to)) return x;
    if (bitWidth(to) < 32) return wrap(to, `bitcast<${holder(to)}>(${x})`);
    return `bitcast<${holder(to)}>(${x})`;
  }

  private compare(n: Node): string {
    const [a, b] = n.args as [number, number];
    const at = this.g.node(a).type as ElementType;
    wgslType(at);
    const half = this.half(at);
    const attr = n.attr as string;
    const dir = attr.slice(0, 2);
    const op = COMPARE_OPERATOR[dir]!;
    const float = at === "f32" ? F32_FIELDS : half !== undefined ? halfFields(half) : undefined;
    if (float === undefined) {
      const [x, y] = [this.v(a), this.v(b)];
      return `select(0u, 1u, ${isInt64(at) ? int64Compare(at, dir, x, y) : `${x} ${op} ${y}`})`;
    }
    // Floats on their bits, no float compare: WGSL lets an implementation flush a
    // subnormal operand to zero (SwiftShader does: 2^-149 == 0 held). Sign and magnitude
    // as an integer key, -0 and +0 one key (IEEE) or -0 below +0 and the NaNs outermost
    // (total order, legalize.ts TOTAL_ORDER_KEPT; f32's is written as integer compares there).
    const total = attr.endsWith(TOTAL);
    // A byte float's total order is its own pattern's (legalize.ts writes it out), not its f32's.
    if (total && half !== undefined && half.fields === undefined) return decline(`a total-order compare of ${at} (legalize.ts writes it on the patterns)`);
    const [x, y] = [float.pattern(this.v(a)), float.pattern(this.v(b))];
    const magnitude = (p: string): string => `(${p} & ${float.magnitude})`;
    const key = (p: string): string => `select(i32${magnitude(p)}, ${total ? "-1 - " : "-"}i32${magnitude(p)}, (${p} & ${float.sign}) != 0u)`;
    const holds = `${key(x)} ${dir === "NE" ? "==" : op} ${key(y)}`;
    if (total) return `select(0u, 1u, ${holds})`;
    const ordered = `${magnitude(x)} <= ${float.infinity} && ${magnitude(y)} <= ${float.infinity}`;
    // NE is true for a NaN, every other direction false.
    return dir === "NE" ? `select(1u, 0u, ${ordered} && ${holds})` : `select(0u, 1u, ${ordered} && ${holds})`;
  }

  /** Unary op n on x, an expression of type t. */
  private unary(n: Node, t: ElementType, x: string): string {
    const op = n.op;
    wgslType(t);
    if (t === "f32") {
      switch (op) {
        case "abs": return `bitcast<f32>(bitcast<u32>(${x}) & 0x7fffffffu)`;
        case "neg": return `bitcast<f32>(bitcast<u32>(${x}) ^ 0x80000000u)`;
        case "ceil": return `xk_ceil(${x})`;
        case "floor": return `xk_floor(${x})`;
        case "roundEven": return `xk_round_even(${x})`;
        case "roundAfz": return `xk_round_afz(${x})`;
        case "sqrt": return `sqrt(${x})`;
        case "rsqrt": return `(1.0 / sqrt(${x}))`;
        default: {
          const approximation = approximationName(n);
          if (approximation !== undefined) {
            this.math.add(approximation);
            return `${wgslMathFunction(approximation)}(${x})`;
          }
          // sin, cos, tan: the CPU backends' reduce the argument in f64, which WGSL has not: an f32 reduction of their own (wgsl_trig.ts).
          if (isTrig(op)) {
            this.math.add(op);
            return `${wgslTrigFunction(op)}(${x})`;
          }
          return decline(`${op} on f32 is not compiled to WGSL`);
        }
      }
    }
    if (isInt64(t)) return int64Unary(op, t, x);
    const signed = kindOf(t) === "signed";
    const w = bitWidth(t);
    const unsignedBits = signed ? `(bitcast<u32>(${x}) & 0x${(2 ** w - 1 >>> 0).toString(16)}u)` : x;
    switch (op) {
      case "not": return t === "pred" ? `(${x} ^ 1u)` : wrap(t, `(~${x})`);
      case "clz": return wrap(t, `${signed ? "i32" : "u32"}(countLeadingZeros(${unsignedBits}) - ${32 - w}u)`);
      case "popcnt": return wrap(t, `${signed ? "i32" : "u32"}(countOneBits(${unsignedBits}))`);
      default: return decline(`${op} on ${t}`);
    }
  }

  /** A call of function `name` of wgsl_binary_math.ts, whose source the kernel then carries. */
  private call(name: BinaryMathName, x: string, y: string): string {
    this.math.add(name);
    return `${wgslBinaryMathFunction(name)}(${x}, ${y})`;
  }

  /** x op y in type t (also a reducer's combine). */
  binary(op: string, t: ElementType, x: string, y: string): string {
    wgslType(t);
    const half = this.computedHalf(t, op);
    if (half !== undefined && (op === "max" || op === "min")) {
      // XLA's maximum and minimum of halves on their patterns (one of the operands, or the NaN): no decode, no rounding (a reduction's tree combines by them).
      if (half.fields !== undefined) return `xk_${op}h(${x}, ${y}, ${half.fields.infinity}, ${half.fields.nan})`;
      // Of byte floats on their exact f32 values' bits (xk_maxf: no float operation), the operand's pattern back or the positive NaN.
      return `${half.bits}(xk_${op}f(${half.value}(${x}), ${half.value}(${y})), false)`;
    }
    const helper = half?.helpers?.[op];
    if (helper !== undefined) return `${helper}(${x}, ${y})`;
    // A half: computed in f32 on its values, rounded back to the half.
    if (half !== undefined) return `${half.bits}(${inF32(t, () => this.binary(op, "f32", `${half.value}(${x})`, `${half.value}(${y})`))}, false)`;
    if (t === "f32") {
      switch (op) {
        // The first operand through xk_keep: a GPU compiler that folds algebra on run-time
        // values (Mesa's: (x + y) - y into x, x - x into 0 whatever x) then cannot, and the
        // program's sums round as XLA's do.
        case "add": return `(xk_keep(${x}) + ${y})`;
        case "sub": return `(xk_keep(${x}) - ${y})`;
        case "mul": return `(${x} * ${y})`;
        case "div": return `(${x} / ${y})`;
        case "max": return `xk_maxf(${x}, ${y})`;
        case "min": return `xk_minf(${x}, ${y})`;
        // WGSL's % on floats is x - y · trunc(x / y), not the exact fmod: C's fmod, and pow and atan2 in double-f32 (wgsl_binary_math.ts).
        case "rem": return this.call("fmod", x, y);
        case "pow": return this.call("pow", x, y);
        case "atan2": return this.call("atan2", x, y);
        default: return decline(`${op} on f32 is not compiled to WGSL`);
      }
    }
    if (t === "pred") {
      switch (op) {
        case "add": case "or": case "max": return `(${x} | ${y})`;
        case "mul": case "and": case "min": return `(${x} & ${y})`;
        case "xor": return `(${x} ^ ${y})`;
        default: return decline(`${op} on pred`);
      }
    }
    if (isInt64(t)) {
      this.math.add(INT64_FUNCTIONS);
      return int64Binary(op, t, x, y);
    }
    const w = bitWidth(t);
    const signed = kindOf(t) === "signed";
    const amount = `(bitcast<u32>(${y}) & ${w - 1}u)`;
    switch (op) {
      // i32 and u32 arithmetic wraps in WGSL; narrower types wrap to their width.
      case "add": return wrap(t, `(${x} + ${y})`);
      case "sub": return wrap(t, `(${x} - ${y})`);
      case "mul": return wrap(t, `(${x} * ${y})`);
      case "and": return `(${x} & ${y})`;
      case "or": return `(${x} | ${y})`;
      case "xor": return `(${x} ^ ${y})`;
      case "max": return `max(${x}, ${y})`;
      case "min": return `min(${x}, ${y})`;
      // In the 32-bit holder, wrapping (a narrow signed type's exponent is held sign-extended, so its sign is seen).
      case "pow": return wrap(t, this.call(signed ? "ipow_i32" : "ipow_u32", x, y));
      // legalize.ts made the divisor safe (never 0, never -1 when signed).
      case "divSafe": return wrap(t, `(${x} / ${y})`);
      case "remSafe": return wrap(t, `(${x} % ${y})`);
      // Amounts in [0, w) where the result is used (legalize.ts); masked so that the others are defined too.
      case "shlBounded": return wrap(t, `(${x} << ${amount})`);
      case "shrLBounded": return wrap(t, signed ? `bitcast<i32>((bitcast<u32>(${x}) & 0x${(2 ** w - 1 >>> 0).toString(16)}u) >> ${amount})` : `(${x} >> ${amount})`);
      // The held value is already sign-extended from t's width.
      case "shrABounded": return signed ? `(${x} >> ${amount})` : wrap(t, `bitcast<u32>(bitcast<i32>(${x} << ${32 - w}u) >> (${amount} + ${32 - w}u))`);
      default: return decline(`${op} on ${t}`);
    }
  }
}

/** xk_f16_bits (see HALF), also what the GEMM and convolution kernels store an f16 result with (gemm_tiles_wgsl.ts). */
export const F16_ROUNDING = String.raw`// x rounded to the nearest f16, ties to even, on bits: at or above 65520 to infinity;
// below 2^-14 to a multiple of 2^-24 (f16's subnormals) from the f32's significand; a
// NaN the positive quiet NaN, or the quiet NaN of x's sign (keep_nan_sign).
fn xk_f16_bits(x: f32, keep_nan_sign: bool) -> u32 {
  let b = bitcast<u32>(x);
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return 0x7e00u | select(0u, s, keep_nan_sign); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) { return s | (((a + 0xfffu + ((a >> 13u) & 1u)) >> 13u) - 0x1c000u); }
  let e = a >> 23u;
  if (e < 102u) { return s; }
  let shift = 126u - e;
  let m = (a & 0x7fffffu) | 0x800000u;
  let q = m >> shift;
  let rest = m & ((1u << shift) - 1u);
  let tie = 1u << (shift - 1u);
  return s | (q + select(0u, 1u, rest > tie || (rest == tie && (q & 1u) == 1u)));
}`;

/** xk_bf16_bits (see HALF), also what the GEMM and convolution kernels store a bf16 result with (gemm_tiles_wgsl.ts). */
export const BF16_ROUNDING = String.raw`// x rounded to the nearest bf16, ties to even, on bits (the carry runs into the exponent, up to infinity).
fn xk_bf16_bits(x: f32, keep_nan_sign: bool) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7fc0u | select(0u, (b >> 16u) & 0x8000u, keep_nan_sign); }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}`;

/**
 * Helpers every kernel may call (WGSL drops the unused ones): f32 from bits, through a
 * zero the kernel reads at run time into xk_opaque (wgsl_math.ts says why); the NaN
 * test, XLA's maximum and minimum, and ceil, floor and the roundings of |x| < 1, on
 * bits; float ↔ integer conversions with XLA's rules; f16 and bf16 to f32
 * and back (HALF), on bits. (Sign and f32's total-order compares never get here:
 * kernel/legalize.ts writes them as primitives.)
 */
export const WGSL_HELPERS = String.raw`var<private> xk_opaque: u32;
fn xk_f(b: u32) -> f32 { return bitcast<f32>(b ^ xk_opaque); }
// x as computed, behind the same zero: the shader compiler cannot see through it, so it
// cannot fold float algebra across it that IEEE arithmetic does not allow, as GPU
// compilers do on values known only at run time too (Mesa's NIR, lavapipe's and the Linux
// GPU drivers', turns (x + 1.5·2^23) - 1.5·2^23 into x and s - (s - a) into a: WGSL's
// SPIR-V marks no operation exact). Every rounding an algorithm relies on (the magic-number
// round, the error-free sums and products of double-f32) goes through it, and so does the
// first operand of a program's own f32 additions and subtractions (binary below).
fn xk_keep(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ xk_opaque); }
fn xk_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
// WGSL lets an implementation flush a subnormal operand of any float operation to zero
// (SwiftShader does, compares included): XLA's maximum and minimum, and ceil, floor and
// the roundings where |x| < 1, are decided on bits, no float operation on the value.
// xk_order: an f32's pattern (as i32) to a key ordered as the floats, -0 just below +0
// (NaNs aside): sign-magnitude to two's complement, its own inverse.
fn xk_order(b: i32) -> i32 { return select(b, b ^ 0x7fffffff, b < 0); }
fn xk_maxf(a: f32, b: f32) -> f32 {
  if (xk_isnan(a) || xk_isnan(b)) { return xk_f(0x7fc00000u); }
  return select(b, a, xk_order(bitcast<i32>(a)) > xk_order(bitcast<i32>(b)));
}
fn xk_minf(a: f32, b: f32) -> f32 {
  if (xk_isnan(a) || xk_isnan(b)) { return xk_f(0x7fc00000u); }
  return select(b, a, xk_order(bitcast<i32>(a)) < xk_order(bitcast<i32>(b)));
}
// x's sign on the given magnitude's pattern (0x3f800000u: ±1, 0u: ±0).
fn xk_signed(x: f32, magnitude: u32) -> f32 { return bitcast<f32>((bitcast<u32>(x) & 0x80000000u) | magnitude); }
// Of a nonzero |x| < 1: 1 or -0 (ceil), 0 or -1 (floor).
fn xk_ceil(x: f32) -> f32 {
  let m = bitcast<u32>(x) & 0x7fffffffu;
  if (m == 0u || m >= 0x3f800000u) { return ceil(x); }
  return xk_signed(x, select(0x3f800000u, 0u, (bitcast<u32>(x) >> 31u) != 0u));
}
fn xk_floor(x: f32) -> f32 {
  let m = bitcast<u32>(x) & 0x7fffffffu;
  if (m == 0u || m >= 0x3f800000u) { return floor(x); }
  return xk_signed(x, select(0u, 0x3f800000u, (bitcast<u32>(x) >> 31u) != 0u));
}
// Of |x| <= 1/2 (ties to even) or < 1/2 (ties away): x's signed zero.
fn xk_round_even(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) <= 0x3f000000u) { return xk_signed(x, 0u); }
  return round(x);
}
fn xk_round_afz(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) < 0x3f000000u) { return xk_signed(x, 0u); }
  let t = trunc(x);
  let away = select(t, t + sign(x), abs(x - t) >= 0.5);
  return select(away, x, xk_isnan(x));
}
fn xk_f2s32(x: f32) -> i32 {
  if (xk_isnan(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return bitcast<i32>(0x80000000u); }
  return i32(x);
}
fn xk_f2int_i32(x: f32, lo: f32, hi: f32, ilo: i32, ihi: i32) -> i32 {
  if (xk_isnan(x)) { return 0; }
  if (x >= hi) { return ihi; }
  if (x <= lo) { return ilo; }
  return i32(x);
}
fn xk_f2int_u32(x: f32, lo: f32, hi: f32, ilo: u32, ihi: u32) -> u32 {
  if (xk_isnan(x) || x <= 0.0) { return 0u; }
  if (x >= hi) { return ihi; }
  return u32(x);
}
fn xk_u32_to_f32(x: u32) -> f32 {
  // Round to nearest, ties to even, whatever rounding the implementation's conversion uses.
  if (x < 0x1000000u) { return f32(x); }
  let lz = countLeadingZeros(x);
  let drop = 8u - lz;
  let kept = x >> drop;
  let rest = x & ((1u << drop) - 1u);
  let half = 1u << (drop - 1u);
  let up = rest > half || (rest == half && (kept & 1u) == 1u);
  return f32(kept + select(0u, 1u, up)) * bitcast<f32>((127u + drop) << 23u);
}
fn xk_int_to_f32_u32(x: u32) -> f32 { return xk_u32_to_f32(x); }
fn xk_int_to_f32_i32(x: i32) -> f32 {
  let m = xk_u32_to_f32(select(u32(x), 0u - bitcast<u32>(x), x < 0));
  return select(m, -m, x < 0);
}
// Rounded to odd (a dropped bit sets the last kept one), so that the rounding to a half
// after it (at most 11 bits) is the one rounding the interpreter does.
fn xk_int_to_f32_odd_u32(x: u32) -> f32 {
  if (x < 0x1000000u) { return f32(x); }
  let drop = 8u - countLeadingZeros(x);
  let kept = (x >> drop) | select(0u, 1u, (x & ((1u << drop) - 1u)) != 0u);
  return f32(kept) * bitcast<f32>((127u + drop) << 23u);
}
fn xk_int_to_f32_odd_i32(x: i32) -> f32 {
  let m = xk_int_to_f32_odd_u32(select(u32(x), 0u - bitcast<u32>(x), x < 0));
  return select(m, -m, x < 0);
}
// f16 bits to f32, exactly: normals rebiased, subnormals (m · 2^-24, f32 normals) by
// their integer, infinities and NaNs (payload kept) with the exponent all ones.
fn xk_f16_value(h: u32) -> f32 {
  let m = h & 0x7fffu;
  var a = (m << 13u) + 0x38000000u;
  if (m >= 0x7c00u) { a = (m << 13u) | 0x7f800000u; }
  if (m < 0x400u) { a = bitcast<u32>(f32(m) * xk_f(0x33800000u)); }
  return bitcast<f32>(a | ((h & 0x8000u) << 16u));
}
${F16_ROUNDING}
fn xk_bf16_value(h: u32) -> f32 { return bitcast<f32>(h << 16u); }
// XLA's maximum and minimum of two halves' patterns (f16, bf16; sign and magnitude, NaN
// above the magnitude inf): the positive quiet NaN (nan) if either is one, -0 below +0.
fn xk_half_key(h: u32) -> i32 { return select(i32(h & 0x7fffu), -1 - i32(h & 0x7fffu), (h & 0x8000u) != 0u); }
fn xk_maxh(a: u32, b: u32, inf: u32, nan: u32) -> u32 {
  if ((a & 0x7fffu) > inf || (b & 0x7fffu) > inf) { return nan; }
  return select(b, a, xk_half_key(a) > xk_half_key(b));
}
fn xk_minh(a: u32, b: u32, inf: u32, nan: u32) -> u32 {
  if ((a & 0x7fffu) > inf || (b & 0x7fffu) > inf) { return nan; }
  return select(b, a, xk_half_key(a) < xk_half_key(b));
}
${BF16_ROUNDING}
// bf16 +, -, ×, ÷, sqrt and rsqrt (HALF helpers), safe from a flush to zero: bf16
// subnormals are f32 subnormals, which WGSL lets an implementation flush in any float
// operation. Each takes f32's path (f32's rounding, then bf16's: the interpreter's one
// rounding, as 24 >= 2·8 + 2 bits) when the exponent fields say that no operand and no
// result is below 2^-126, and otherwise computes on integers: the significands
// (subnormals normalized), the exponents, then one rounding on bits (xk_bf16_round).
// A nonzero finite bf16 as m · 2^(e - 7), m in [128, 256).
struct XkBf16Parts { m: u32, e: i32 }
fn xk_bf16_parts(h: u32) -> XkBf16Parts {
  let field = (h >> 7u) & 0xffu;
  if (field != 0u) { return XkBf16Parts(0x80u | (h & 0x7fu), i32(field) - 127); }
  let shift = countLeadingZeros(h & 0x7fu) - 24u;
  return XkBf16Parts((h & 0x7fu) << shift, -126 - i32(shift));
}
// sign | the bf16 nearest (ties to even) to m · 2^(e - 23), m in [2^23, 2^24): past the
// largest finite, infinity; below 2^-126, a multiple of 2^-133 (bf16's subnormals).
fn xk_bf16_round(sign: u32, m: u32, e: i32) -> u32 {
  if (e > 127) { return sign | 0x7f80u; }
  if (e >= -126) {
    let b = (u32(e + 127) << 23u) | (m & 0x7fffffu);
    return sign | ((b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u);
  }
  if (e < -134) { return sign; }
  let shift = u32(-110 - e);
  let q = m >> shift;
  let rest = m & ((1u << shift) - 1u);
  let tie = 1u << (shift - 1u);
  return sign | (q + select(0u, 1u, rest > tie || (rest == tie && (q & 1u) == 1u)));
}
// A nonzero pattern below 2^-119 (exponent field under 8). The others' ulps are 2^-126
// or more, so a sum of two of them is 0 or at least 2^-126.
fn xk_bf16_tiny(h: u32) -> bool { return (h & 0x7fffu) - 1u < 0x3ffu; }
fn xk_bf16_add(a: u32, b: u32) -> u32 {
  if (!xk_bf16_tiny(a) && !xk_bf16_tiny(b)) { return xk_bf16_bits(xk_bf16_value(a) + xk_bf16_value(b), false); }
  // x the operand of the larger magnitude (an infinity or NaN if either is), y the other.
  let swap = (b & 0x7fffu) > (a & 0x7fffu);
  let x = select(a, b, swap);
  let y = select(b, a, swap);
  if ((x & 0x7fffu) >= 0x7f80u) { return xk_bf16_bits(xk_bf16_value(x), false); }
  if ((y & 0x7fffu) == 0u) { return x; }
  let px = xk_bf16_parts(x);
  let py = xk_bf16_parts(y);
  let d = u32(px.e - py.e);
  // |y| < 2^-16 |x|: less than half of x's ulp below it; x is the nearest.
  if (d > 16u) { return x; }
  // Exact: both significands on x's scale (24 + 1 bits), |x| >= |y|.
  let mx = px.m << 16u;
  let my = py.m << (16u - d);
  let s = select(mx + my, mx - my, ((x ^ y) & 0x8000u) != 0u);
  if (s == 0u) { return 0u; }
  let sign = x & 0x8000u;
  if (s >= 0x1000000u) { return xk_bf16_round(sign, (s >> 1u) | (s & 1u), px.e + 1); }
  let up = countLeadingZeros(s) - 8u;
  return xk_bf16_round(sign, s << up, px.e - i32(up));
}
fn xk_bf16_sub(a: u32, b: u32) -> u32 { return xk_bf16_add(a, b ^ 0x8000u); }
fn xk_bf16_mul(a: u32, b: u32) -> u32 {
  let fa = (a >> 7u) & 0xffu;
  let fb = (b >> 7u) & 0xffu;
  // Normal operands (or infinities, NaNs) whose product is at least 2^-126: f32's product is exact (16 bits).
  if (fa != 0u && fb != 0u && fa + fb >= 128u) { return xk_bf16_bits(xk_bf16_value(a) * xk_bf16_value(b), false); }
  let sign = (a ^ b) & 0x8000u;
  let ma = a & 0x7fffu;
  let mb = b & 0x7fffu;
  if (ma > 0x7f80u || mb > 0x7f80u || (ma == 0x7f80u && mb == 0u) || (ma == 0u && mb == 0x7f80u)) { return 0x7fc0u; }
  if (ma == 0x7f80u || mb == 0x7f80u) { return sign | 0x7f80u; }
  if (ma == 0u || mb == 0u) { return sign; }
  let px = xk_bf16_parts(a);
  let py = xk_bf16_parts(b);
  let p = px.m * py.m;
  let top = p >= 0x8000u;
  return xk_bf16_round(sign, p << select(9u, 8u, top), px.e + py.e + select(0, 1, top));
}
fn xk_bf16_div(a: u32, b: u32) -> u32 {
  let fa = (a >> 7u) & 0xffu;
  let fb = (b >> 7u) & 0xffu;
  // Normal operands, the divisor below 2^126 (WGSL's accuracy range for x / y) and the
  // quotient at least 2^-125: f32's quotient rounded to bf16 is the one rounding, even
  // 2.5 f32 ulps off (WGSL's bound): an inexact quotient of two bf16 values is more
  // than 2^-18 of itself from every bf16 midpoint, and none is a midpoint.
  if (fa != 0u && fb != 0u && fb < 253u && fa + 124u >= fb) { return xk_bf16_bits(xk_bf16_value(a) / xk_bf16_value(b), false); }
  let sign = (a ^ b) & 0x8000u;
  let ma = a & 0x7fffu;
  let mb = b & 0x7fffu;
  if (ma > 0x7f80u || mb > 0x7f80u || (ma == 0u && mb == 0u) || (ma == 0x7f80u && mb == 0x7f80u)) { return 0x7fc0u; }
  if (ma == 0x7f80u || mb == 0u) { return sign | 0x7f80u; }
  if (ma == 0u || mb == 0x7f80u) { return sign; }
  let px = xk_bf16_parts(a);
  let py = xk_bf16_parts(b);
  // The quotient's 24 bits by integer division, a nonzero remainder kept as the last bit (rounding to odd: then one rounding to bf16 is exact).
  let wide = px.m < py.m;
  let n = px.m << select(23u, 24u, wide);
  let q = n / py.m;
  return xk_bf16_round(sign, q | select(0u, 1u, n % py.m != 0u), px.e - py.e - select(0, 1, wide));
}
// Of a bf16 that is not subnormal: f32's root. Of a subnormal (its significand times
// 2^-133): the root of its value times 2^64, an f32 normal, then scaled by 2^-32 (or,
// of the reciprocal, 2^32): exact scalings of normals.
fn xk_bf16_sqrt(a: u32) -> u32 {
  if ((a & 0x7f80u) != 0u || (a & 0x7fffu) == 0u) { return xk_bf16_bits(sqrt(xk_bf16_value(a)), false); }
  if (a >= 0x8000u) { return 0x7fc0u; }
  return xk_bf16_bits(sqrt(f32(a) * bitcast<f32>(0x1d000000u)) * bitcast<f32>(0x2f800000u), false);
}
fn xk_bf16_rsqrt(a: u32) -> u32 {
  if ((a & 0x7f80u) != 0u || (a & 0x7fffu) == 0u) { return xk_bf16_bits(1.0 / sqrt(xk_bf16_value(a)), false); }
  if (a >= 0x8000u) { return 0x7fc0u; }
  return xk_bf16_bits((1.0 / sqrt(f32(a) * bitcast<f32>(0x1d000000u))) * bitcast<f32>(0x4f800000u), false);
}
`;
