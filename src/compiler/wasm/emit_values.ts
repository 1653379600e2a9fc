// Code for the nodes of a kernel graph, scalar or vector. Every node's value lives in
// a local (the engine's register allocator sees through that); the loop emitters
// decide which nodes are computed where and provide load addresses and the loop
// variables' locals. An op without a code path throws DeclinedError, which the kernel
// emitters turn into Declined.

import type { ElementType } from "../../types/element_type.js";
import { constantValue, type KernelGraph, type Node } from "../kernel/graph.js";
import { TOTAL } from "../kernel/scalar_ops.js";
import { approximationName, APPROXIMATIONS, F64_TRANSCENDENTALS, isTrig, type Approximation } from "../kernel/approximations.js";
import { FunctionBuilder } from "./encoder.js";
import { scalarF32Ops, vectorF32Ops } from "./math.js";
import { bitsOf, computeType, isSigned, lanesOf, loadScalar, loadVector, storageBytes, wrapI32, wrapI32x4 } from "./wasm_types.js";
import { isNarrowFloat } from "./narrow_float.js";
import { demoteFor, demoteKeepingNonzero, F64_ROUTINES, E8M0_F64_OPS, isE8m0, roundResult } from "./emit_rounding.js";
import { decline } from "../kernel/declined.js";
import { emitInterleaved } from "./interleave.js";
import { emitExpF64, emitLogF64, emitPowScalar, emitPowVector } from "./emit_pow.js";
import { emitAtan2Scalar, emitAtan2Vector, emitTrigScalar, emitTrigVector } from "./emit_trig.js";
import {
  bitcastScalar, cmpFloat, cmpInt, convertScalar, demoteToOdd, pushConst, roundAfz,
  VECTOR_ARITH, vectorCompare, vectorConvert, vectorIntMinMax,
} from "./emit_ops.js";

/** The f32 code of a transcendental node (kernel/approximations.ts), if it has one. */
const transcendentalF32 = (n: Node): Approximation | undefined => {
  const name = approximationName(n);
  return name === undefined ? undefined : APPROXIMATIONS[name];
};

/** The float ops that are one instruction, by the instruction's name after f32 or f64. */
const FLOAT_UNARY: Readonly<Record<string, "Abs" | "Neg" | "Ceil" | "Floor" | "Nearest" | "Sqrt">> = { abs: "Abs", neg: "Neg", ceil: "Ceil", floor: "Floor", roundEven: "Nearest", sqrt: "Sqrt" };
const FLOAT_BINARY: Readonly<Record<string, "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min">> = { add: "Add", sub: "Sub", mul: "Mul", div: "Div", max: "Max", min: "Min" };
/** The integer ops that are one instruction, by its name after i32 or i64 (then S or U for divSafe and remSafe). */
const INT_BINARY: Readonly<Record<string, string>> = { add: "Add", sub: "Sub", mul: "Mul", and: "And", or: "Or", xor: "Xor", divSafe: "Div", remSafe: "Rem", shlBounded: "Shl" };
/** The index ops of two operands that are one i32 instruction. */
const INDEX_BINARY = { iadd: "i32Add", ilt: "i32LtS", ieq: "i32Eq", cand: "i32And" } as const;

/** The types whose lanes are their own bit patterns, by width (what a vector bitcast reinterprets). */
const WORD_32: ReadonlySet<string> = new Set(["f32", "s32", "u32"]);
const WORD_64: ReadonlySet<string> = new Set(["f64", "s64", "u64"]);

/** Whether a graph needs the trig reduction helper function in its module. */
export function needsTrigHelper(g: KernelGraph): boolean {
  return g.nodes.some((n) => isTrig(n.op));
}

export interface LoadAddressing {
  /** Pushes the byte address of a load node (scalar element, or the first of a vector's lanes). */
  pushAddress(n: Node, vector: boolean): void;
}

export class ValueEmitter {
  readonly scalar = new Map<number, number>();
  /** Vector locals by node (of the copy being emitted, in emitVectorCopies). */
  vector = new Map<number, number>();
  private scratch: number | undefined;
  /** Splatted constants of the vector transcendentals, in locals set before the loop (hoistConstants). */
  private readonly constants = new Map<string, number>();

  constructor(readonly f: FunctionBuilder, readonly g: KernelGraph, public addressing: LoadAddressing) {}

  scratchV128(): number {
    this.scratch ??= this.f.local("v128");
    return this.scratch;
  }

  private get(id: number): void {
    const l = this.scalar.get(id);
    if (l === undefined) throw new Error(`node ${id} has no scalar local`);
    this.f.localGet(l);
  }

  private vget(id: number): void {
    const l = this.vector.get(id);
    if (l === undefined) throw new Error(`node ${id} has no vector local`);
    this.f.localGet(l);
  }

  /** Computes node `id` as a scalar into a new local (its arguments must have theirs). */
  emitScalar(id: number): void {
    const n = this.g.node(id);
    this.scalarOp(n);
    const t = n.type;
    roundResult(this.f, this.g, n, false);
    const local = this.f.local(computeType(t));
    this.f.localSet(local);
    this.scalar.set(id, local);
  }

  /** Splats the scalar local of an invariant node into a vector local. */
  splat(id: number): void {
    this.get(id);
    splatTop(this.f, this.g.node(id).type as ElementType, this.vectorLanes);
    const local = this.f.local("v128");
    this.f.localSet(local);
    this.vector.set(id, local);
  }

  /**
   * Sets a local to each v128 constant that the vector transcendentals among `ids` use,
   * so their code in the loop reads it instead of rebuilding it (call before the loop;
   * found by emitting each once into a throwaway function).
   */
  hoistConstants(ids: readonly number[]): void {
    const keys = new Set<string>();
    for (const id of ids) {
      const n = this.g.node(id);
      const m = transcendentalF32(n);
      if (m === undefined || computeType(n.type) !== "f32") continue;
      const dry = new FunctionBuilder(0, [], []);
      m(vectorF32Ops(dry, (key) => { keys.add(key); return undefined; }, this.relaxedSimd), dry.local("v128"));
    }
    // Set again before each loop (one local per constant): the loops may lie on different paths.
    for (const key of keys) {
      const x = Number(key.slice(1));
      this.f.i32x4Const(x, x, x, x); // "f" keys hold the f32's bits
      let l = this.constants.get(key);
      if (l === undefined) this.constants.set(key, l = this.f.local("v128"));
      this.f.localSet(l);
    }
  }

  /** Index of the module's Payne–Hanek helper (addTrigReduction), when the graph has sin/cos/tan. */
  trigHelper: number | undefined;

  /** The engine has relaxed SIMD: the vector transcendentals may use relaxed_madd. */
  relaxedSimd = false;

  /** The lanes of this kernel's vectors (set by the loop emitter): 4 × 32 bits or 2 × 64 bits. */
  vectorLanes: 2 | 4 = 4;

  // ---- scalar ops ------------------------------------------------------------------

  private scalarOp(n: Node): void {
    const f = this.f;
    const a = n.args[0];
    const b = n.args[1];
    switch (n.op) {
      case "var": throw new Error("loop variable without a local");
      case "iconst": f.i32Const(n.attr as number); return;
      case "iadd": case "ilt": case "ieq": case "cand": this.get(a!); this.get(b!); f[INDEX_BINARY[n.op]](); return;
      case "imul": this.get(a!); f.i32Const(n.attr as number).i32Mul(); return;
      case "idiv": case "imod": {
        const c = n.attr as number;
        this.get(a!);
        if (this.g.range(a!).lo >= 0) {
          f.i32Const(c);
          if (n.op === "idiv") f.i32DivU(); else f.i32RemU();
          return;
        }
        // Floor semantics for a possibly negative dividend.
        const t = f.local("i32");
        f.localSet(t);
        if (n.op === "idiv") {
          f.localGet(t).i32Const(c).i32DivS().localGet(t).i32Const(c).i32RemS().i32Const(0).i32LtS().i32Sub();
        } else {
          f.localGet(t).i32Const(c).i32RemS().localSet(t).localGet(t).i32Const(c).i32Add().localGet(t)
            .localGet(t).i32Const(0).i32LtS().select();
        }
        return;
      }
      case "imin": case "imax":
        this.get(a!); this.get(b!); this.get(a!); this.get(b!);
        if (n.op === "imin") f.i32LtS(); else f.i32GtS();
        f.select();
        return;
      case "iselect": this.get(b!); this.get(n.args[2]!); this.get(a!); f.select(); return;
      // Of a type within s32's range (legalize.ts legalIndex): held in i32 as it is.
      case "toIdx": this.get(a!); return;
      case "ctrue": f.i32Const(1); return;
      case "condToPred": this.get(a!); return;
      case "accum": throw new Error("reduction result without a local");
      case "load": this.addressing.pushAddress(n, false); loadScalar(f, n.type as ElementType); return;
      case "const": pushConst(f, n.type as ElementType, constantValue(n)); return;
      case "fromIdx":
        this.get(a!);
        if (n.type === "bf16" || n.type === "f16" || isNarrowFloat(n.type)) {
          // Indices below 2^24 are exact in f32, so the bf16 rounding after this is the only one.
          if (this.g.range(a!).hi >= 2 ** 24 || this.g.range(a!).lo <= -(2 ** 24)) decline("iota too large for bf16");
          f.f32ConvertI32S();
        } else {
          convertScalar(f, "s32", n.type as ElementType);
        }
        return;
      case "select": this.get(b!); this.get(n.args[2]!); this.get(a!); f.select(); return;
      case "convert": this.get(a!); convertScalar(f, this.g.node(a!).type as ElementType, n.type as ElementType); return;
      case "bitcast": this.get(a!); bitcastScalar(f, this.g.node(a!).type as ElementType, n.type as ElementType); return;
      case "compare": this.compareScalar(n); return;
      default: break;
    }
    const t = n.type as ElementType;
    if (n.args.length === 1) this.unaryScalar(n, t, a!);
    else this.binaryScalar(n.op, t, a!, b!);
  }

  private compareScalar(n: Node): void {
    const f = this.f;
    const at = this.g.node(n.args[0]!).type as ElementType;
    const c = computeType(at);
    if ((n.attr as string).endsWith(TOTAL)) {
      // f16's and bf16's total order (legalize.ts TOTAL_ORDER_KEPT): the held f32's pattern orders as theirs would.
      for (const x of [n.args[0]!, n.args[1]!]) {
        this.get(x);
        const bits = f.local("i32");
        f.i32ReinterpretF32().localTee(bits).localGet(bits).i32Const(31).i32ShrS().i32Const(0x7fffffff).i32And().i32Xor();
      }
      cmpInt(f, "i32", (n.attr as string).slice(0, 2), true);
      return;
    }
    const dir = n.attr as string;
    this.get(n.args[0]!); this.get(n.args[1]!);
    if (c === "f32" || c === "f64") cmpFloat(f, c, dir);
    else cmpInt(f, c, dir, isSigned(at));
  }

  private unaryScalar(n: Node, t: ElementType, a: number): void {
    const f = this.f;
    const op = n.op;
    const c = computeType(t);
    const at = this.g.node(a).type as ElementType;
    if (c === "f32" || c === "f64") {
      const is32 = c === "f32";
      const x = this.scalar.get(a)!;
      const one = FLOAT_UNARY[op];
      if (one !== undefined) {
        f.localGet(x)[`${c}${one}` as const]();
        return;
      }
      switch (op) {
        case "rsqrt":
          if (is32) f.f32Const(1).localGet(x).f32Sqrt().f32Div(); else f.f64Const(1).localGet(x).f64Sqrt().f64Div();
          return;
        case "roundAfz": roundAfz(f, c, x); return;
        default: break;
      }
      const m = transcendentalF32(n);
      if (m !== undefined && is32) {
        m(scalarF32Ops(f), x);
        return;
      }
      if (!is32 && F64_TRANSCENDENTALS.has(op)) {
        if (op === "exp") emitExpF64(f, x, false); else emitLogF64(f, x, false);
        return;
      }
      if (isTrig(op) && is32) {
        emitTrigScalar(f, op, x, this.trigHelper ?? decline("no trig helper in this module"), demoteFor(t));
        return;
      }
      return decline(`${op} on ${t} has no code yet`);
    }
    if (op === "isFinite") {
      // The types held in f32 (legalize.ts writes f32's and f64's as bit tests).
      if (computeType(at) !== "f32") decline(`isFinite of ${at}`);
      this.get(a);
      f.f32Abs().f32Const(Infinity).f32Lt();
      return;
    }
    if (c === "i64") {
      const x = this.scalar.get(a)!;
      switch (op) {
        case "not": f.localGet(x).i64Const(-1).i64Xor(); return;
        case "clz": f.localGet(x).i64Clz(); return;
        case "popcnt": f.localGet(x).i64Popcnt(); return;
        default: return decline(`${op} on ${t}`);
      }
    }
    const x = this.scalar.get(a)!;
    const bits = bitsOf(t);
    const mask = bits === 32 ? -1 : 2 ** bits - 1;
    switch (op) {
      case "not": f.localGet(x).i32Const(-1).i32Xor(); break;
      case "clz": f.localGet(x).i32Const(mask).i32And().i32Clz().i32Const(32 - bits).i32Sub(); break;
      case "popcnt": f.localGet(x).i32Const(mask).i32And().i32Popcnt(); break;
      default: return decline(`${op} on ${t}`);
    }
    wrapI32(f, t);
  }

  private binaryScalar(op: string, t: ElementType, a: number, b: number): void {
    emitBinaryScalar(this.f, op, t, this.scalar.get(a)!, this.scalar.get(b)!);
    wrapI32(this.f, t);
  }

  // ---- vector ops ------------------------------------------------------------------

  /** Whether node n has a vector code path (its arguments are checked separately). */
  vectorizable(n: Node): boolean {
    const t = n.type;
    if (t === "idx" || t === "cond") return false; // varying index arithmetic outside loads stays scalar
    const c = computeType(t);
    if (t !== "pred" && lanesOf(t) !== this.vectorLanes) return false;
    if (t === "pred" && this.vectorLanes === 2 && (n.op === "load" || n.op === "convert" || n.op === "fromIdx")) return false;
    const argType = n.args.length > 0 ? this.g.node(n.args[0]!).type : t;
    if (isNarrowFloat(t) && F64_ROUTINES.has(n.op)) return false;
    if (isE8m0(t) && E8M0_F64_OPS.has(n.op)) return false;
    switch (n.op) {
      case "load": case "const": case "select": return true;
      // Lanes of 32 (64) bits read as another type of their width (a float's pattern, and back): the same v128.
      case "bitcast": return [argType, t].every((x) => WORD_32.has(x)) || [argType, t].every((x) => WORD_64.has(x));
      case "fromIdx": return c === "f32" || (c === "i32" && t !== "pred") || c === "f64";
      case "compare": {
        if (argType === "idx" || argType === "cond" || (argType === "pred" && this.vectorLanes === 2)) return false;
        if (argType !== "pred" && lanesOf(argType) !== this.vectorLanes) return false;
        const dir = n.attr as string;
        if (dir.endsWith(TOTAL)) return false;
        return computeType(argType) !== "i64" || isSigned(argType as ElementType) || dir === "EQ" || dir === "NE";
      }
      case "convert": {
        const from = argType as ElementType;
        if (t === "pred" || lanesOf(from) !== this.vectorLanes) return false;
        const fc = computeType(from);
        if (from === "pred") return c === "i32";
        // s32/u32 → f16, bf16 or a narrow float rounds through f64 (scalar code only).
        if ((isNarrowFloat(t) || t === "f16" || t === "bf16") && fc === "i32" && bitsOf(from) >= 24) return false;
        if (c === "f32") return fc === "f32" || fc === "i32";
        if (c === "i32") return fc === "i32" || fc === "f32";
        return false;
      }
      case "add": case "sub": case "mul":
        return c === "f32" || c === "f64" || (c === "i32" && t !== "pred") || (c === "i64" && n.op !== "mul");
      case "div": case "sqrt": case "ceil": case "floor": case "roundEven": case "rsqrt":
        return c === "f32" || c === "f64";
      // On integers legalize.ts writes them as sub and max.
      case "abs": case "neg": return c === "f32" || c === "f64";
      case "max": case "min": return c === "f32" || c === "f64" || (c === "i32" && t !== "pred");
      case "and": case "or": case "xor": case "not": return c === "i32" || c === "i64";
      // By a constant amount (legalize.ts's bit fields): the instruction takes it as a scalar.
      case "shlBounded": case "shrLBounded": return (t === "s32" || t === "u32") && this.g.node(n.args[1]!).op === "const";
      default:
        return c === "f32" && (transcendentalF32(n) !== undefined || isTrig(n.op) || n.op === "atan2" || n.op === "pow")
          || (c === "f64" && F64_TRANSCENDENTALS.has(n.op));
    }
  }

  /** Computes node `id` as a vector into a new local. */
  emitVector(id: number): void {
    const n = this.g.node(id);
    const f = this.f;
    const t = n.type as ElementType;
    const c = computeType(t);
    const a = n.args[0];
    const b = n.args[1];
    switch (n.op) {
      case "load": this.addressing.pushAddress(n, true); loadVector(f, t); break;
      case "const": pushConst(f, t, constantValue(n)); splatTop(f, t, this.vectorLanes); break;
      case "select": this.vget(b!); this.vget(n.args[2]!); this.vget(a!); f.v128Bitselect(); break;
      case "fromIdx": {
        // The index is affine in the lane: base + stride · lane.
        const { base, stride } = this.laneAffine!(a!);
        base();
        f.i32x4Splat();
        f.i32x4Const(0, stride, 2 * stride, 3 * stride).i32x4Add();
        if (c === "f32") f.f32x4ConvertI32x4S();
        else if (c === "f64") f.f64x2ConvertLowI32x4S();
        else wrapI32x4(f, t);
        break;
      }
      case "compare": {
        const at = this.g.node(a!).type as ElementType;
        this.vget(a!); this.vget(b!);
        vectorCompare(f, computeType(at), n.attr as string, isSigned(at));
        break;
      }
      case "convert": {
        const from = this.g.node(a!).type as ElementType;
        this.vget(a!);
        vectorConvert(f, from, t);
        break;
      }
      case "bitcast": this.vget(a!); break;
      case "shlBounded": case "shrLBounded":
        this.vget(a!); this.get(b!);
        if (n.op === "shlBounded") f.i32x4Shl(); else f.i32x4ShrU();
        break;
      case "and": case "or": case "xor":
        this.vget(a!); this.vget(b!);
        if (n.op === "and") f.v128And(); else if (n.op === "or") f.v128Or(); else f.v128Xor();
        break;
      case "not":
        this.vget(a!);
        f.v128Not();
        if (t !== "pred") wrapI32x4(f, t);
        break;
      default: {
        const m = transcendentalF32(n);
        if (m !== undefined && c === "f32") {
          m(vectorF32Ops(f, (key) => this.constants.get(key), this.relaxedSimd), this.vector.get(a!)!);
          break;
        }
        if (c === "f64" && F64_TRANSCENDENTALS.has(n.op)) {
          if (n.op === "exp") emitExpF64(f, this.vector.get(a!)!, true); else emitLogF64(f, this.vector.get(a!)!, true);
          break;
        }
        if (n.op === "pow" && c === "f32") {
          emitPowVector(f, this.vector.get(a!)!, this.vector.get(b!)!);
          break;
        }
        if (n.op === "atan2" && c === "f32") {
          emitAtan2Vector(f, this.vector.get(a!)!, this.vector.get(b!)!);
          break;
        }
        if (isTrig(n.op) && c === "f32") {
          emitTrigVector(f, n.op, this.vector.get(a!)!, this.trigHelper ?? decline("no trig helper in this module"));
          break;
        }
        this.vget(a!);
        if (b !== undefined) this.vget(b);
        if (c === "i32" && (n.op === "max" || n.op === "min")) {
          vectorIntMinMax(f, n.op, isSigned(t));
          break;
        }
        const key = `${c}.${n.op}`;
        const fn = VECTOR_ARITH[key];
        if (fn === undefined) throw new Error(`no vector code for ${key}`);
        fn(f);
        if (c === "i32") wrapI32x4(f, t);
      }
    }
    roundResult(f, this.g, n, true);
    const local = f.local("v128");
    f.localSet(local);
    this.vector.set(id, local);
  }

  /**
   * Computes the vector nodes `ids` for `copies` consecutive vectors. With an f32
   * transcendental among them, side by side: each node for every copy before the next
   * node, the transcendentals statement by statement across the copies (interleave.ts);
   * otherwise one copy after the other (side by side, cheap bodies only gain spills:
   * measured 2% slower on the encoder block). `bindCopy(c)` points the loads at copy c's
   * elements. Returns each copy's locals by node (the splats of `vector` included).
   */
  emitVectorCopies(ids: readonly number[], copies: number, bindCopy: (copy: number) => void): Map<number, number>[] {
    const shared = this.vector;
    const maps = Array.from({ length: copies }, () => new Map(shared));
    const sideBySide = ids.some((id) => transcendentalF32(this.g.node(id)) !== undefined && this.g.node(id).type === "f32");
    if (!sideBySide) {
      maps.forEach((v, c) => {
        this.vector = v;
        bindCopy(c);
        for (const id of ids) this.emitVector(id);
      });
      this.vector = shared;
      return maps;
    }
    for (const id of ids) {
      const n = this.g.node(id);
      const m = transcendentalF32(n);
      if (m !== undefined && n.type === "f32" && copies > 1) {
        const results = emitInterleaved(vectorF32Ops(this.f, (key) => this.constants.get(key), this.relaxedSimd), m, maps.map((v) => v.get(n.args[0]!)!));
        maps.forEach((v, c) => v.set(id, results[c]!));
        continue;
      }
      maps.forEach((v, c) => {
        this.vector = v;
        bindCopy(c);
        this.emitVector(id);
      });
    }
    this.vector = shared;
    return maps;
  }

  /** Set by the loop emitter: splits a lane-varying index node into base (pushes i32) and stride. */
  laneAffine: ((idx: number) => { base: () => void; stride: number }) | undefined;
}

/** The scalar of type t on the stack splatted into a vector of `lanes` lanes (a pred's 0 or 1 into 0 or all ones). */
export function splatTop(f: FunctionBuilder, t: ElementType, lanes: number): void {
  const c = computeType(t);
  if (t === "pred") {
    const tmp = f.local("i32");
    f.localSet(tmp).i32Const(0).localGet(tmp).i32Sub();
    if (lanes === 2) f.i64ExtendI32S().i64x2Splat(); else f.i32x4Splat();
    return;
  }
  if (c === "f32") f.f32x4Splat(); else if (c === "f64") f.f64x2Splat(); else if (c === "i64") f.i64x2Splat(); else f.i32x4Splat();
}

/**
 * Pushes x op y for the values of type t in locals x and y, held as this file holds them
 * (narrow integers wider than their type: the caller wraps the result, wrapI32): the
 * graph's binary nodes, and a reducer's combine (its kind is the op of the same name).
 */
export function emitBinaryScalar(f: FunctionBuilder, op: string, t: ElementType, x: number, y: number): void {
  const c = computeType(t);
  if (c === "f32" || c === "f64") {
    const is32 = c === "f32";
    if (op === "atan2" && is32) {
      emitAtan2Scalar(f, x, y, demoteFor(t));
      return;
    }
    if (op === "pow" && is32) {
      emitPowScalar(f, x, y, isE8m0(t) ? demoteKeepingNonzero : undefined);
      return;
    }
    if ((op === "mul" || op === "div") && isE8m0(t)) {
      // In f64: products and quotients of f8e8m0fnu's 2^±127 leave f32's range (2^-254
      // would underflow to 0, which is NaN in this type, where the interpreter gets 2^-127).
      f.localGet(x).f64PromoteF32().localGet(y).f64PromoteF32();
      if (op === "mul") f.f64Mul(); else f.f64Div();
      demoteToOdd(f);
      return;
    }
    const one = FLOAT_BINARY[op] ?? decline(`${op} on ${t} has no code yet`);
    f.localGet(x).localGet(y)[`${c}${one}` as const]();
    return;
  }
  const w = c === "i64";
  const signed = isSigned(t);
  const bits = bitsOf(t);
  /** Instruction `name` of i32 or i64 (then S or U where `signs`). */
  const i = (name: string, signs = false): void => {
    (f as unknown as Record<string, () => void>)[`${w ? "i64" : "i32"}${name}${signs ? (signed ? "S" : "U") : ""}`]!.call(f);
  };
  // pred's add and mul are or and and; legalize.ts made divSafe's and remSafe's divisor
  // safe (never 0, never -1 when signed): no trap.
  const one = t === "pred" && (op === "add" || op === "mul") ? INT_BINARY[op === "add" ? "or" : "and"] : INT_BINARY[op];
  if (one !== undefined) {
    f.localGet(x).localGet(y);
    i(one, op === "divSafe" || op === "remSafe");
    return;
  }
  switch (op) {
    case "max": case "min":
      f.localGet(x).localGet(y).localGet(x).localGet(y);
      i(op === "max" ? "Gt" : "Lt", true);
      f.select();
      break;
    // Amounts in [0, bits) where the result is used (legalize.ts); a narrow type's value
    // is first brought to its own width: zeros above it (shrL), its sign above it (shrA).
    case "shrLBounded":
      f.localGet(x);
      if (signed && !w && bits < 32) f.i32Const(2 ** bits - 1).i32And();
      f.localGet(y);
      i("ShrU");
      break;
    case "shrABounded":
      f.localGet(x);
      if (!signed && !w && bits < 32) f.i32Const(32 - bits).i32Shl().i32Const(32 - bits).i32ShrS();
      f.localGet(y);
      i("ShrS");
      break;
    case "pow": emitIntegerPower(f, w, signed, x, y); break;
    default: return decline(`${op} on ${t} has no code yet`);
  }
}

/**
 * XLA's integer power (the interpreter's intPower) of locals x and y in the holder's width
 * (i32 or i64; the caller wraps to the type: a product's low bits depend only on its
 * factors' low bits): exponentiation by squaring; a negative exponent (signed types)
 * gives 1 for base 1, 1 or -1 for base -1 by its parity, and 0 for any other base.
 */
function emitIntegerPower(f: FunctionBuilder, wide: boolean, signed: boolean, x: number, y: number): void {
  const T = wide ? "i64" : "i32";
  const op = (name: string): void => {
    (f as unknown as Record<string, () => void>)[`${T}${name}`]!.call(f);
  };
  const constant = (v: number): void => {
    if (wide) f.i64Const(v); else f.i32Const(v);
  };
  /** Pushes (local & 1) as an i32 condition. */
  const odd = (local: number): void => {
    f.localGet(local);
    constant(1);
    op("And");
    if (wide) f.i32WrapI64();
  };
  const result = f.local(T);
  const base = f.local(T);
  const exponent = f.local(T);
  f.localGet(x).localSet(base).localGet(y).localSet(exponent);
  constant(1);
  f.localSet(result);
  if (signed) {
    // A negative exponent decides the result here and leaves 0 for the loop below.
    const negative = f.local("i32");
    f.localGet(exponent);
    constant(0);
    op("LtS");
    f.localSet(negative);
    constant(1); // base 1
    constant(-1); constant(1); odd(exponent); f.select(); // base -1: by parity
    constant(0); f.localGet(base); constant(-1); op("Eq"); f.select();
    f.localGet(base); constant(1); op("Eq"); f.select();
    f.localGet(result).localGet(negative).select().localSet(result);
    constant(0);
    f.localGet(exponent).localGet(negative).select().localSet(exponent);
  }
  f.block().loop();
  f.localGet(exponent);
  op("Eqz");
  f.brIf(1);
  f.localGet(result).localGet(base);
  op("Mul");
  f.localGet(result);
  odd(exponent);
  f.select().localSet(result);
  f.localGet(base).localGet(base);
  op("Mul");
  f.localSet(base).localGet(exponent);
  constant(1);
  op("ShrU");
  f.localSet(exponent);
  f.br(0).end().end();
  f.localGet(result);
}

/**
 * Wires `ve` to the inner loop whose variable is in local `i`, for loop and reduction
 * kernels alike: a load whose offset is affine in the loop reads at its base local
 * plus i · stride; any other load at its own index node (scalar code only); an iota's
 * lanes count up from its base.
 */
export function bindInnerLoop(
  ve: ValueEmitter, f: FunctionBuilder, g: KernelGraph, affine: ReadonlyMap<number, { readonly base: number; readonly stride: number }>,
  baseLocal: ReadonlyMap<number, number>, i: number, operandLocal: (operand: number) => number = (k) => k,
): void {
  ve.addressing = {
    pushAddress: (node, vector) => {
      const size = storageBytes(node.type as ElementType);
      const aff = affine.get(node.id);
      const base = baseLocal.get(node.id);
      if (aff !== undefined && base !== undefined) {
        f.localGet(base).localGet(i);
        if (aff.stride * size !== 1) f.i32Const(aff.stride * size).i32Mul();
        f.i32Add();
        return;
      }
      if (vector) throw new Error("vector load without an affine offset");
      f.localGet(operandLocal(node.attr as number)).localGet(ve.scalar.get(node.args[0]!)!);
      if (size !== 1) f.i32Const(size).i32Mul();
      f.i32Add();
    },
  };
  ve.laneAffine = (idx) => {
    const aff = [...affine.entries()].find(([id]) => g.node(id).op === "fromIdx" && g.node(id).args[0] === idx)![1];
    return {
      base: () => { f.localGet(ve.scalar.get(aff.base)!).localGet(i); if (aff.stride !== 1) f.i32Const(aff.stride).i32Mul(); f.i32Add(); },
      stride: aff.stride,
    };
  };
}
