// C for the nodes of a kernel graph (kernel/graph.ts): each node becomes one
// `const T vN = ...;` statement, so the C compiler sees plain scalar code it can
// vectorize along the loop the emitters put around it. Values are held as XLA defines
// them: integers in their own C type (wrapped to their width, -fwrapv makes the wrap
// defined), f32 and f64 as float and double, f16 and bf16 as their bit patterns
// (uint16_t), decoded to double for arithmetic and encoded back once per op, as the
// interpreter computes (in double, rounding each op's result through the literal
// codec). Loads, selects of bit patterns and bitcasts copy patterns exactly. The 8-, 6-
// and 4-bit floats are not compiled to C (DeclinedError: the WebAssembly kernel runs
// instead). Complex numbers reach a graph as their real and imaginary parts
// (kernel/complex_ops.ts), never as complex values.

import { bitWidth, ELEMENT_TYPES, integerRange, isSignedInt, type ElementType } from "../../types/element_type.js";
import { encodeFloatBits } from "../../types/float_codec.js";
import { constantValue, type Node, type NodeType } from "../kernel/graph.js";
import { SELECT_OF_VALUES, TOTAL } from "../kernel/scalar_ops.js";
import { cMathFunction } from "./c_math.js";
import { approximationName, F64_TRANSCENDENTALS } from "../kernel/approximations.js";
import { decline } from "../kernel/declined.js";
import { COMPARE_OPERATOR, TextValueEmitter } from "../kernel/text_values.js";

const HALF: Readonly<Record<string, { dec: string; enc: string }>> = {
  f16: { dec: "xk_dec_f16", enc: "xk_enc_f16" },
  bf16: { dec: "xk_dec_bf16", enc: "xk_enc_bf16" },
};

/** The float ops that are a libm function of one argument (with its `f` suffix on f32). */
const LIBM_UNARY: Readonly<Record<string, string>> = { abs: "fabs", ceil: "ceil", floor: "floor", roundEven: "rint", roundAfz: "round", sqrt: "sqrt" };
/** The C operators of the float ops that are one operator (ARITHMETIC), and of the bitwise ops. */
const ARITHMETIC: Readonly<Record<string, string>> = { add: "+", sub: "-", mul: "*", div: "/" };
const BITWISE = { and: "&", or: "|", xor: "^" } as const;

/** f16 and bf16: held as bit patterns. */
const isHalf = (t: NodeType): boolean => t === "f16" || t === "bf16";
const isFloatValue = (t: NodeType): boolean => t === "f32" || t === "f64";
const isInt = (t: NodeType): boolean => t !== "idx" && t !== "cond" && (ELEMENT_TYPES[t].kind === "signed" || ELEMENT_TYPES[t].kind === "unsigned");

/** The C type a value of type t is held in (and stored as). */
export function cType(t: NodeType): string {
  if (t === "idx") return "int64_t";
  if (t === "cond") return "int";
  const info = ELEMENT_TYPES[t];
  switch (info.kind) {
    case "pred": return "uint8_t";
    case "signed": return info.bitWidth <= 8 ? "int8_t" : `int${info.bitWidth}_t`;
    case "unsigned": return info.bitWidth <= 8 ? "uint8_t" : `uint${info.bitWidth}_t`;
    case "float":
      if (t === "f32") return "float";
      if (t === "f64") return "double";
      if (isHalf(t)) return "uint16_t";
      return decline(`${t} is not compiled to C (the WebAssembly kernel runs it)`);
    case "complex": return decline("complex values are not compiled to C (a fusion computes on their parts)");
  }
}

/** Checks that values of type t have a C form (DeclinedError otherwise). */
export function checkCType(t: NodeType): void {
  cType(t);
}

/**
 * XLA's integer power (the interpreter's intPower) as a uint64_t expression, wrapped to the
 * type by the caller: exponentiation by squaring in 64 bits (a product's low bits depend
 * only on its factors' low bits, so every width wraps alike); a negative exponent (signed
 * types) gives 1 for base 1, 1 or -1 for base -1 by its parity, and 0 for any other base.
 * The loop sits in a GNU statement expression (gcc and clang) so that it stays inside the
 * kernel's element expression; its names cannot meet the generator's, which are never `xk_`.
 */
function integerPower(signed: boolean, x: string, y: string): string {
  const base = signed ? `(int64_t)${x}` : `(int64_t)(uint64_t)${x}`;
  const negative = signed ? "xk_e > (uint64_t)INT64_MAX" : "0";
  return `__extension__ ({ int64_t xk_b = ${base}; uint64_t xk_e = (uint64_t)(int64_t)${y}, xk_r = 1, xk_p = (uint64_t)xk_b; ` +
    `if (${negative}) xk_r = xk_b == 1 ? 1 : xk_b == -1 ? ((xk_e & 1) ? ~(uint64_t)0 : 1) : 0; ` +
    `else for (; xk_e != 0; xk_e >>= 1) { if (xk_e & 1) xk_r *= xk_p; xk_p *= xk_p; } xk_r; })`;
}

/** An expression of type t wrapped to t's width. */
function wrap(t: ElementType, e: string): string {
  if (t === "pred") return `((uint8_t)((${e}) != 0))`;
  const w = bitWidth(t);
  if (w >= 8) return `((${cType(t)})(${e}))`;
  return isSignedInt(t) ? `((int8_t)((int8_t)((uint8_t)(${e}) << ${8 - w}) >> ${8 - w}))` : `((uint8_t)((${e}) & ${(1 << w) - 1}))`;
}

/** A C literal of `value` in type t. */
export function cConst(t: ElementType, value: number | bigint): string {
  if (t === "f32") {
    const u = new Uint32Array(new Float32Array([Number(value)]).buffer)[0]!;
    return `xk_bits_f32(0x${u.toString(16)}u)`;
  }
  if (t === "f64") {
    const u = new BigUint64Array(new Float64Array([Number(value)]).buffer)[0]!;
    return `xk_bits_f64(0x${u.toString(16)}ull)`;
  }
  if (isHalf(t)) return `((uint16_t)0x${encodeFloatBits(t, Number(value)).toString(16)})`;
  if (t === "pred") return Number(value) !== 0 ? "((uint8_t)1)" : "((uint8_t)0)";
  const v = BigInt(value);
  if (bitWidth(t) === 64) return `((${cType(t)})0x${BigInt.asUintN(64, v).toString(16)}ull)`;
  return `((${cType(t)})${v.toString()}ll)`;
}

export class CValues extends TextValueEmitter {
  protected typeName(t: NodeType): string { return cType(t); }
  protected declare(type: string, name: string, value: string): string { return `const ${type} ${name} = ${value};`; }
  protected indexLiteral(k: number): string { return `${k}ll`; }
  protected condAsIndex(e: string): string { return `(${e})`; }

  /** Node id's value as a double (floats decoded). */
  private d(id: number): string {
    const t = this.g.node(id).type;
    return isHalf(t) ? `${HALF[t]!.dec}(${this.v(id)})` : `((double)${this.v(id)})`;
  }

  protected value(n: Node): string {
    const [a, b, c] = n.args;
    const t = n.type;
    switch (n.op) {
      case "iconst": return `((int64_t)${n.attr as number}ll)`;
      case "imin": return `(${this.v(a!)} < ${this.v(b!)} ? ${this.v(a!)} : ${this.v(b!)})`;
      case "imax": return `(${this.v(a!)} > ${this.v(b!)} ? ${this.v(a!)} : ${this.v(b!)})`;
      case "iselect": return `(${this.v(a!)} ? ${this.v(b!)} : ${this.v(c!)})`;
      // Of a type within s32's range (legalize.ts legalIndex).
      case "toIdx": return `((int64_t)${this.v(a!)})`;
      case "ctrue": return "1";
      case "condToPred": return `((uint8_t)(${this.v(a!)} != 0))`;
      case "const": {
        const et = t as ElementType;
        checkCType(et);
        return cConst(et, constantValue(n));
      }
      case "fromIdx": return this.fromDouble(t as ElementType, `((double)${this.v(a!)})`, this.v(a!));
      case "select": {
        const pick = `(${this.v(a!)} ? ${this.v(b!)} : ${this.v(c!)})`;
        // HLO select copies the chosen bits; a value select (SELECT_OF_VALUES: sign)
        // gives a half NaN as the positive quiet NaN, as the interpreter computes it.
        if (isHalf(t) && n.attr === SELECT_OF_VALUES) return `${HALF[t]!.enc}(${HALF[t]!.dec}(${pick}), 0)`;
        checkCType(t);
        return pick;
      }
      case "convert": return this.convert(a!, t as ElementType);
      case "bitcast": return this.bitcast(a!, t as ElementType);
      case "compare": return this.compare(n);
      default: break;
    }
    if (n.args.length === 1) return this.unary(n, t as ElementType, a!);
    if (n.args.length === 2) return this.binary(n.op, t as ElementType, a!, b!);
    return decline(`${n.op} has no C code`);
  }

  /** A double expression as a value of float type t (`asInt`: the same value as an integer expression, for integer targets). */
  private fromDouble(t: ElementType, e: string, asInt?: string, negativeNaN = "0"): string {
    checkCType(t);
    if (t === "f32") return `((float)${e})`;
    if (t === "f64") return e;
    if (isHalf(t)) return `${HALF[t]!.enc}(${e}, ${negativeNaN})`;
    if (asInt !== undefined) return wrap(t, asInt);
    return decline(`${t} from a double`);
  }

  private convert(a: number, to: ElementType): string {
    const from = this.g.node(a).type as ElementType;
    const x = this.v(a);
    checkCType(from);
    checkCType(to);
    if (to === "pred") return isHalf(from) ? `((uint8_t)(${this.d(a)} != 0))` : `((uint8_t)(${x} != 0))`;
    const fromFloat = isFloatValue(from) || isHalf(from);
    if (isInt(to)) {
      if (!fromFloat) return wrap(to, x);
      const { min, max } = integerRange(to);
      const lo = to === "s64" ? "(-9223372036854775807ll - 1)" : `${min}ll`;
      const hi = to === "s64" ? "9223372036854775807ll" : to === "u64" ? "18446744073709551615ull" : `${max}ll`;
      const value = isHalf(from) ? this.d(a) : x;
      // Integers convert from doubles of the bounds (2^63 and 2^64 exactly for the wide types).
      return `XK_F2I(${value}, ${cType(to)}, ${lo}, ${hi})`;
    }
    // To a float type.
    if (fromFloat) {
      if (from === to && !isHalf(to)) return x;
      if (to === "f32" && from === "f64") return `((float)${x})`;
      if (to === "f64" && from === "f32") return `((double)${x})`;
      // Through double, keeping a NaN's sign (types/convert.ts copyNaNSigns).
      const dv = this.d(a);
      return this.fromDouble(to, dv, undefined, `(signbit(${dv}) != 0)`);
    }
    // From an integer or pred.
    if (to === "f32" || to === "f64") return `((${cType(to)})${x})`;
    if (bitWidth(from) === 64) return this.fromDouble(to, isSignedInt(from) ? `xk_i64_to_double_odd(${x})` : `xk_u64_to_double_odd(${x})`);
    return this.fromDouble(to, `((double)${x})`);
  }

  private bitcast(a: number, to: ElementType): string {
    const from = this.g.node(a).type as ElementType;
    const x = this.v(a);
    checkCType(from);
    checkCType(to);
    if (from === "f32") return to === "s32" ? `((int32_t)xk_f32_bits(${x}))` : `xk_f32_bits(${x})`;
    if (from === "f64") return to === "s64" ? `((int64_t)xk_f64_bits(${x}))` : `xk_f64_bits(${x})`;
    if (to === "f32") return `xk_bits_f32((uint32_t)${x})`;
    if (to === "f64") return `xk_bits_f64((uint64_t)${x})`;
    // Same-width integers and half bit patterns: the pattern reinterpreted.
    if (bitWidth(from) >= 8 && bitWidth(to) >= 8) return `((${cType(to)})${x})`;
    return decline(`bitcast ${from} -> ${to}`);
  }

  private compare(n: Node): string {
    const [a, b] = n.args as [number, number];
    const at = this.g.node(a).type as ElementType;
    checkCType(at);
    const op = COMPARE_OPERATOR[(n.attr as string).slice(0, 2)]!;
    if ((n.attr as string).endsWith(TOTAL)) {
      // f16's and bf16's total order (legalize.ts TOTAL_ORDER_KEPT): their bits read as sign and magnitude.
      const key = (x: string): string => `((${x} & 0x8000) ? -1 - (int32_t)(${x} & 0x7fff) : (int32_t)${x})`;
      return `((uint8_t)(${key(this.v(a))} ${op} ${key(this.v(b))}))`;
    }
    if (isHalf(at)) return `((uint8_t)(${this.d(a)} ${op} ${this.d(b)}))`;
    return `((uint8_t)(${this.v(a)} ${op} ${this.v(b)}))`;
  }

  private unary(n: Node, t: ElementType, a: number): string {
    const op = n.op;
    checkCType(t);
    const at = this.g.node(a).type as ElementType;
    // f16 and bf16 (legalize.ts writes f32's and f64's as bit tests).
    if (op === "isFinite") return isHalf(at) ? `((uint8_t)isfinite(${this.d(a)}))` : decline(`isFinite of ${at}`);
    if (t === "f32" || t === "f64" || isHalf(t)) {
      const f32 = t === "f32";
      const x = f32 ? this.v(a) : this.d(a);
      const s = f32 ? "f" : "";
      const lit = (v: string): string => (f32 ? `${v}f` : v);
      const libm = LIBM_UNARY[op];
      let e: string;
      if (libm !== undefined) e = `${libm}${s}(${x})`;
      else switch (op) {
        case "neg": e = `(-${x})`; break;
        case "rsqrt": e = `(${lit("1.0")} / sqrt${s}(${x}))`; break;
        case "exp": case "log": case "tanh": case "expm1": case "log1p": case "erf": case "cbrt": case "logistic":
          if (f32) {
            // The shared approximations (kernel/approximations.ts, as C: c_math.ts), with their ULP bounds.
            e = `${cMathFunction(approximationName(n)!)}(${x})`;
            break;
          }
          if (t === "f64" && !F64_TRANSCENDENTALS.has(op)) return decline(`${op} on f64 runs on the interpreter (libm's last place may differ from its)`);
          e = op === "logistic" ? `(1.0 / (1.0 + exp(-${x})))` : `${op}(${x})`;
          break;
        case "sin": case "cos": case "tan":
          if (t === "f64" && !F64_TRANSCENDENTALS.has(op)) return decline(`${op} on f64 runs on the interpreter (libm's last place may differ from its)`);
          e = f32 ? `((float)${op}((double)${x}))` : `${op}(${x})`;
          break;
        default: return decline(`${op} on ${t}`);
      }
      return isHalf(t) ? this.fromDouble(t, e) : e;
    }
    const x = this.v(a);
    const w = bitWidth(t);
    const mask = w === 64 ? "0xffffffffffffffffull" : `${2 ** w - 1}ull`;
    switch (op) {
      case "not": return t === "pred" ? `((uint8_t)(!${x}))` : wrap(t, `(~${x})`);
      case "clz": return wrap(t, `(((uint64_t)${x} & ${mask}) == 0 ? ${w} : __builtin_clzll((uint64_t)${x} & ${mask}) - ${64 - w})`);
      case "popcnt": return wrap(t, `__builtin_popcountll((uint64_t)${x} & ${mask})`);
      default: return decline(`${op} on ${t}`);
    }
  }

  private binary(op: string, t: ElementType, a: number, b: number): string {
    return binaryExpr(op, t, this.v(a), this.v(b));
  }
}

/**
 * The C of a binary value op on two values of type t held as c_values holds them (f16
 * and bf16 as bit patterns): the graph's binary nodes, and a reducer's combine (its kind
 * is the op of the same name).
 */
export function binaryExpr(op: string, t: ElementType, a: string, b: string): string {
  checkCType(t);
  if (t === "f32" || t === "f64" || isHalf(t)) {
    const f32 = t === "f32";
    const x = isHalf(t) ? `${HALF[t]!.dec}(${a})` : a;
    const y = isHalf(t) ? `${HALF[t]!.dec}(${b})` : b;
    const s = f32 ? "f" : "";
    const operator = ARITHMETIC[op];
    let e: string;
    if (operator !== undefined) e = `(${x} ${operator} ${y})`;
    else switch (op) {
      case "rem": e = `fmod${s}(${x}, ${y})`; break;
      case "max": e = f32 ? `xk_maxf(${x}, ${y})` : `xk_max(${x}, ${y})`; break;
      case "min": e = f32 ? `xk_minf(${x}, ${y})` : `xk_min(${x}, ${y})`; break;
      case "pow": case "atan2":
        if (t === "f64" && !F64_TRANSCENDENTALS.has(op)) return decline(`${op} on f64 runs on the interpreter (libm's last place may differ from its)`);
        e = f32 ? `((float)${op}((double)${x}, (double)${y}))` : `${op}(${x}, ${y})`;
        break;
      default: return decline(`${op} on ${t}`);
    }
    return isHalf(t) ? `${HALF[t]!.enc}(${e}, 0)` : e;
  }
  const x = a;
  const y = b;
  const w = bitWidth(t);
  const signed = isSignedInt(t);
  const wide = w === 64 ? (signed ? "int64_t" : "uint64_t") : signed ? "int32_t" : "uint32_t";
  const uwide = w === 64 ? "uint64_t" : "uint32_t";
  switch (op) {
    case "add": return t === "pred" ? `((uint8_t)(${x} | ${y}))` : wrap(t, `((${uwide})${x} + (${uwide})${y})`);
    case "sub": return wrap(t, `((${uwide})${x} - (${uwide})${y})`);
    case "mul": return t === "pred" ? `((uint8_t)(${x} & ${y}))` : wrap(t, `((${uwide})${x} * (${uwide})${y})`);
    case "and": case "or": case "xor": return wrap(t, `(${x} ${BITWISE[op]} ${y})`);
    case "max": return `(${x} > ${y} ? ${x} : ${y})`;
    case "min": return `(${x} < ${y} ? ${x} : ${y})`;
    case "pow": return wrap(t, integerPower(signed, x, y));
    // legalize.ts made the divisor safe (never 0, never -1 when signed): defined C.
    case "divSafe": return wrap(t, `((${wide})${x} / (${wide})${y})`);
    case "remSafe": return wrap(t, `((${wide})${x} % (${wide})${y})`);
    // Amounts in [0, w) where the result is used (legalize.ts); masked into that range so
    // that the discarded results are defined C too (x86's shifts mask so themselves).
    case "shlBounded": return wrap(t, `(${uwide})((${uwide})${x} << ((${uwide})${y} & ${w - 1}))`);
    case "shrLBounded": {
      const umask = w === 64 ? "0xffffffffffffffffull" : `${2 ** w - 1}ull`;
      return wrap(t, `(${uwide})(((uint64_t)${x} & ${umask}) >> ((${uwide})${y} & ${w - 1}))`);
    }
    case "shrABounded": {
      // The value sign-extended from t's width, shifted by its amount (below the width).
      const sx = w === 64 ? `(int64_t)${x}` : `((int64_t)((uint64_t)${x} << ${64 - w}) >> ${64 - w})`;
      return wrap(t, `(${sx} >> ${y})`);
    }
    default: return decline(`${op} on ${t}`);
  }
}
