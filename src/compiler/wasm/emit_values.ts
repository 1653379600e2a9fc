// Code for the nodes of a kernel graph, scalar or vector. Every node's value lives in
// a local (the engine's register allocator sees through that); the loop emitters
// decide which nodes are computed where and provide load addresses and the loop
// variables' locals. An op without a code path throws EmitFail, which the kernel
// emitters turn into Unsupported.

import { integerRange, type ElementType } from "../../types/element_type.js";
import { constantValue, type KernelGraph, type Node } from "../kernel/graph.js";
import type { FunctionBuilder } from "./encoder.js";
import { emitExp, emitExpm1, emitLog, emitLog1p, emitLogistic, emitTanh, scalarF32Ops, vectorF32Ops, type FloatOps } from "./math.js";
import { bitsOf, computeType, isFloatType, isSigned, lanesOf, loadScalar, loadVector, wrapI32, wrapI32x4 } from "./wasm_types.js";

export class EmitFail extends Error {}

const fail = (why: string): never => {
  throw new EmitFail(why);
};

/** Ops whose bf16 result needs no rounding (they return one of their inputs, or an exact value). */
const BF16_EXACT = new Set(["load", "const", "select", "bitcast", "abs", "neg", "max", "min", "ceil", "floor", "roundEven", "roundAfz", "accum", "sign"]);

const TRANSCENDENTAL_F32: Readonly<Record<string, (o: FloatOps, x: number) => void>> = {
  exp: emitExp, log: emitLog, log1p: emitLog1p, expm1: emitExpm1, tanh: emitTanh, logistic: emitLogistic,
};

export interface LoadAddressing {
  /** Pushes the byte address of a load node (scalar element, or the first of a vector's lanes). */
  pushAddress(n: Node, vector: boolean): void;
}

export class ValueEmitter {
  readonly scalar = new Map<number, number>();
  readonly vector = new Map<number, number>();
  private scratch: number | undefined;

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
    if (t === "bf16" && !BF16_EXACT.has(n.op)) roundBf16(this.f, this.f.local("i32"));
    const local = this.f.local(computeType(t));
    this.f.localSet(local);
    this.scalar.set(id, local);
  }

  /** Splats the scalar local of an invariant node into a vector local. */
  splat(id: number): void {
    this.get(id);
    this.splatTop(this.g.node(id).type as ElementType);
    const local = this.f.local("v128");
    this.f.localSet(local);
    this.vector.set(id, local);
  }

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
      case "iadd": this.get(a!); this.get(b!); f.i32Add(); return;
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
      case "toIdx": this.toIdx(a!); return;
      case "ilt": this.get(a!); this.get(b!); f.i32LtS(); return;
      case "ieq": this.get(a!); this.get(b!); f.i32Eq(); return;
      case "cand": this.get(a!); this.get(b!); f.i32And(); return;
      case "ctrue": f.i32Const(1); return;
      case "condToPred": this.get(a!); return;
      case "accum": throw new Error("reduction result without a local");
      case "load": this.addressing.pushAddress(n, false); loadScalar(f, n.type as ElementType); return;
      case "const": pushConst(f, n.type as ElementType, constantValue(n)); return;
      case "fromIdx": this.get(a!); convertScalar(f, "s32", n.type as ElementType); return;
      case "select": this.get(b!); this.get(n.args[2]!); this.get(a!); f.select(); return;
      case "convert": this.get(a!); convertScalar(f, this.g.node(a!).type as ElementType, n.type as ElementType); return;
      case "bitcast": this.get(a!); bitcastScalar(f, this.g.node(a!).type as ElementType, n.type as ElementType); return;
      case "compare": this.compareScalar(n); return;
      default: break;
    }
    const t = n.type as ElementType;
    if (n.args.length === 1) this.unaryScalar(n.op, t, a!);
    else this.binaryScalar(n.op, t, a!, b!);
  }

  private toIdx(v: number): void {
    const f = this.f;
    const t = this.g.node(v).type as ElementType;
    this.get(v);
    if (computeType(t) === "i64") {
      // Clamp into i32 before wrapping; the caller clamps to the dimension.
      const x = f.local("i64");
      f.localSet(x);
      if (isSigned(t)) {
        f.i64Const(-(2 ** 31)).localGet(x).localGet(x).i64Const(-(2 ** 31)).i64LtS().select().localSet(x);
      }
      f.i64Const(2 ** 31 - 1).localGet(x).localGet(x).i64Const(2 ** 31 - 1);
      if (isSigned(t)) f.i64GtS(); else f.i64GtU();
      f.select().i32WrapI64();
    } else if (t === "u32") {
      const x = f.local("i32");
      f.localSet(x).i32Const(2 ** 31 - 1).localGet(x).localGet(x).i32Const(0).i32LtS().select();
    }
  }

  private compareScalar(n: Node): void {
    const f = this.f;
    const at = this.g.node(n.args[0]!).type as ElementType;
    const dir = (n.attr as string).slice(0, 2);
    const total = (n.attr as string).endsWith("_TOTAL");
    const c = computeType(at);
    if (total) {
      // Total order: compare sign-magnitude bit patterns as two's complement keys.
      for (const x of [n.args[0]!, n.args[1]!]) {
        this.get(x);
        totalOrderKey(f, c);
      }
      cmpInt(f, c === "f64" ? "i64" : "i32", dir, true);
      return;
    }
    this.get(n.args[0]!); this.get(n.args[1]!);
    if (c === "f32" || c === "f64") cmpFloat(f, c, dir);
    else cmpInt(f, c, dir, isSigned(at));
  }

  private unaryScalar(op: string, t: ElementType, a: number): void {
    const f = this.f;
    const c = computeType(t);
    const at = this.g.node(a).type as ElementType;
    if (c === "f32" || c === "f64") {
      const is32 = c === "f32";
      const x = this.scalar.get(a)!;
      switch (op) {
        case "abs": f.localGet(x); if (is32) f.f32Abs(); else f.f64Abs(); return;
        case "neg": f.localGet(x); if (is32) f.f32Neg(); else f.f64Neg(); return;
        case "ceil": f.localGet(x); if (is32) f.f32Ceil(); else f.f64Ceil(); return;
        case "floor": f.localGet(x); if (is32) f.f32Floor(); else f.f64Floor(); return;
        case "roundEven": f.localGet(x); if (is32) f.f32Nearest(); else f.f64Nearest(); return;
        case "sqrt": f.localGet(x); if (is32) f.f32Sqrt(); else f.f64Sqrt(); return;
        case "rsqrt":
          if (is32) f.f32Const(1).localGet(x).f32Sqrt().f32Div(); else f.f64Const(1).localGet(x).f64Sqrt().f64Div();
          return;
        case "roundAfz": roundAfz(f, c, x); return;
        case "sign": floatSign(f, c, x); return;
        default: break;
      }
      const m = TRANSCENDENTAL_F32[op];
      if (m !== undefined && is32) {
        m(scalarF32Ops(f), x);
        return;
      }
      return fail(`${op} on ${t} has no code yet`);
    }
    if (op === "isFinite") {
      this.get(a);
      if (computeType(at) === "f32") f.f32Abs().f32Const(Infinity).f32Lt(); else f.f64Abs().f64Const(Infinity).f64Lt();
      return;
    }
    if (c === "i64") {
      const x = this.scalar.get(a)!;
      switch (op) {
        case "neg": f.i64Const(0).localGet(x).i64Sub(); return;
        case "not": f.localGet(x).i64Const(-1).i64Xor(); return;
        case "abs": f.i64Const(0).localGet(x).i64Sub().localGet(x).localGet(x).i64Const(0).i64LtS().select(); return;
        case "sign": f.localGet(x).i64Const(0).i64GtS().localGet(x).i64Const(0).i64LtS().i32Sub().i64ExtendI32S(); return;
        case "clz": f.localGet(x).i64Clz(); return;
        case "popcnt": f.localGet(x).i64Popcnt(); return;
        default: return fail(`${op} on ${t}`);
      }
    }
    const x = this.scalar.get(a)!;
    const bits = t === "pred" ? 1 : bitsOf(t);
    const mask = bits === 32 ? -1 : 2 ** bits - 1;
    switch (op) {
      case "neg": f.i32Const(0).localGet(x).i32Sub(); break;
      case "not": f.localGet(x).i32Const(-1).i32Xor(); break;
      case "abs": f.i32Const(0).localGet(x).i32Sub().localGet(x).localGet(x).i32Const(0).i32LtS().select(); break;
      case "sign": f.localGet(x).i32Const(0).i32GtS().localGet(x).i32Const(0).i32LtS().i32Sub(); break;
      case "clz": f.localGet(x).i32Const(mask).i32And().i32Clz().i32Const(32 - bits).i32Sub(); break;
      case "popcnt": f.localGet(x).i32Const(mask).i32And().i32Popcnt(); break;
      default: return fail(`${op} on ${t}`);
    }
    wrapI32(f, t);
  }

  private binaryScalar(op: string, t: ElementType, a: number, b: number): void {
    const f = this.f;
    const c = computeType(t);
    const x = this.scalar.get(a)!;
    const y = this.scalar.get(b)!;
    if (c === "f32" || c === "f64") {
      const is32 = c === "f32";
      f.localGet(x).localGet(y);
      switch (op) {
        case "add": if (is32) f.f32Add(); else f.f64Add(); return;
        case "sub": if (is32) f.f32Sub(); else f.f64Sub(); return;
        case "mul": if (is32) f.f32Mul(); else f.f64Mul(); return;
        case "div": if (is32) f.f32Div(); else f.f64Div(); return;
        case "max": if (is32) f.f32Max(); else f.f64Max(); return;
        case "min": if (is32) f.f32Min(); else f.f64Min(); return;
        default: return fail(`${op} on ${t} has no code yet`);
      }
    }
    const w = c === "i64";
    const signed = isSigned(t);
    const bits = t === "pred" ? 1 : bitsOf(t);
    const get2 = (): void => { f.localGet(x).localGet(y); };
    const i = <K extends string>(name32: K, name64: K): void => {
      (f as unknown as Record<string, () => void>)[w ? name64 : name32]!.call(f);
    };
    const konst = (v: number): void => { if (w) f.i64Const(v); else f.i32Const(v); };
    switch (op) {
      case "add": get2(); i(t === "pred" ? "i32Or" : "i32Add", "i64Add"); break;
      case "sub": get2(); i("i32Sub", "i64Sub"); break;
      case "mul": get2(); i(t === "pred" ? "i32And" : "i32Mul", "i64Mul"); break;
      case "and": get2(); i("i32And", "i64And"); break;
      case "or": get2(); i("i32Or", "i64Or"); break;
      case "xor": get2(); i("i32Xor", "i64Xor"); break;
      case "max": case "min":
        get2(); get2();
        if (op === "max") i(signed ? "i32GtS" : "i32GtU", signed ? "i64GtS" : "i64GtU");
        else i(signed ? "i32LtS" : "i32LtU", signed ? "i64LtS" : "i64LtU");
        f.select();
        break;
      case "div": case "rem": {
        // XLA: x / 0 = -1 (all ones), x % 0 = x; INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0.
        const safe = f.local(c);
        const q = f.local(c);
        const isZero = (): void => { f.localGet(y); if (w) f.i64Eqz(); else f.i32Eqz(); };
        const isMinusOne = (): void => { f.localGet(y); konst(-1); i("i32Eq", "i64Eq"); };
        konst(1); f.localGet(y); isZero(); if (signed) { isMinusOne(); f.i32Or(); }
        f.select().localSet(safe);
        f.localGet(x).localGet(safe);
        if (op === "div") i(signed ? "i32DivS" : "i32DivU", signed ? "i64DivS" : "i64DivU");
        else i(signed ? "i32RemS" : "i32RemU", signed ? "i64RemS" : "i64RemU");
        f.localSet(q);
        if (signed) {
          // b = -1: a / -1 = -a (wrapping), a % -1 = 0.
          if (op === "div") { konst(0); f.localGet(x); i("i32Sub", "i64Sub"); } else konst(0);
          f.localGet(q); isMinusOne(); f.select().localSet(q);
        }
        if (op === "div") konst(-1); else f.localGet(x);
        f.localGet(q); isZero(); f.select();
        break;
      }
      case "shl": case "shrL": case "shrA": {
        // The amount is read as unsigned; ≥ bits gives 0 (shl, shrL) or the sign fill (shrA).
        const amt = f.local(c);
        f.localGet(y);
        if (!w && bits < 32) f.i32Const(2 ** bits - 1).i32And();
        f.localSet(amt);
        if (op === "shrA") {
          f.localGet(x);
          if (!signed && !w && bits < 32) f.i32Const(32 - bits).i32Shl().i32Const(32 - bits).i32ShrS();
          f.localGet(amt); konst(bits - 1); f.localGet(amt); konst(bits - 1); i("i32LtU", "i64LtU"); f.select();
          i("i32ShrS", "i64ShrS");
        } else {
          f.localGet(x);
          if (op === "shrL" && signed && !w && bits < 32) f.i32Const(2 ** bits - 1).i32And();
          f.localGet(amt);
          i(op === "shl" ? "i32Shl" : "i32ShrU", op === "shl" ? "i64Shl" : "i64ShrU");
          konst(0);
          f.localGet(amt); konst(bits); i("i32LtU", "i64LtU");
          f.select();
        }
        break;
      }
      default: return fail(`${op} on ${t} has no code yet`);
    }
    wrapI32(f, t);
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
    switch (n.op) {
      case "load": case "const": case "select": return true;
      case "fromIdx": return c === "f32" || (c === "i32" && t !== "pred") || c === "f64";
      case "compare": {
        if (argType === "idx" || argType === "cond" || (argType === "pred" && this.vectorLanes === 2)) return false;
        if (argType !== "pred" && lanesOf(argType) !== this.vectorLanes) return false;
        const dir = n.attr as string;
        if (dir.endsWith("_TOTAL")) return false;
        return computeType(argType) !== "i64" || isSigned(argType as ElementType) || dir === "EQ" || dir === "NE";
      }
      case "convert": {
        const from = argType as ElementType;
        if (t === "pred" || lanesOf(from) !== this.vectorLanes) return false;
        const fc = computeType(from);
        if (from === "pred") return c === "i32";
        if (c === "f32") return fc === "f32" || fc === "i32";
        if (c === "i32") return fc === "i32" || fc === "f32";
        return false;
      }
      case "add": case "sub": case "mul":
        return c === "f32" || c === "f64" || (c === "i32" && t !== "pred") || (c === "i64" && n.op !== "mul");
      case "div": case "sqrt": case "ceil": case "floor": case "roundEven": case "rsqrt":
        return c === "f32" || c === "f64";
      case "abs": case "neg": return c === "f32" || c === "f64" || (c === "i32" && t !== "pred");
      case "max": case "min": return c === "f32" || c === "f64" || (c === "i32" && t !== "pred");
      case "and": case "or": case "xor": case "not": return c === "i32" || c === "i64";
      default:
        return c === "f32" && TRANSCENDENTAL_F32[n.op] !== undefined;
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
      case "const": pushConst(f, t, constantValue(n)); this.splatTop(t); break;
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
        const m = TRANSCENDENTAL_F32[n.op];
        if (m !== undefined && c === "f32") {
          m(vectorF32Ops(f), this.vector.get(a!)!);
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
    if (t === "bf16" && !BF16_EXACT.has(n.op)) roundBf16x4(f);
    const local = f.local("v128");
    f.localSet(local);
    this.vector.set(id, local);
  }

  /** Set by the loop emitter: splits a lane-varying index node into base (pushes i32) and stride. */
  laneAffine: ((idx: number) => { base: () => void; stride: number }) | undefined;

  private splatTop(t: ElementType): void {
    const f = this.f;
    const c = computeType(t);
    if (t === "pred") {
      const tmp = f.local("i32");
      f.localSet(tmp).i32Const(0).localGet(tmp).i32Sub();
      if (this.vectorLanes === 2) f.i64ExtendI32S().i64x2Splat(); else f.i32x4Splat();
      return;
    }
    if (c === "f32") f.f32x4Splat();
    else if (c === "f64") f.f64x2Splat();
    else if (c === "i64") f.i64x2Splat();
    else f.i32x4Splat();
  }
}

const VECTOR_ARITH: Readonly<Record<string, (f: FunctionBuilder) => void>> = {
  "f32.add": (f) => f.f32x4Add(), "f32.sub": (f) => f.f32x4Sub(), "f32.mul": (f) => f.f32x4Mul(), "f32.div": (f) => f.f32x4Div(),
  "f32.max": (f) => f.f32x4Max(), "f32.min": (f) => f.f32x4Min(), "f32.sqrt": (f) => f.f32x4Sqrt(),
  "f32.abs": (f) => f.f32x4Abs(), "f32.neg": (f) => f.f32x4Neg(), "f32.ceil": (f) => f.f32x4Ceil(),
  "f32.floor": (f) => f.f32x4Floor(), "f32.roundEven": (f) => f.f32x4Nearest(),
  "f32.rsqrt": (f) => {
    const t = f.local("v128");
    f.f32x4Sqrt().localSet(t).f32x4Const(1, 1, 1, 1).localGet(t).f32x4Div();
  },
  "f64.add": (f) => f.f64x2Add(), "f64.sub": (f) => f.f64x2Sub(), "f64.mul": (f) => f.f64x2Mul(), "f64.div": (f) => f.f64x2Div(),
  "f64.max": (f) => f.f64x2Max(), "f64.min": (f) => f.f64x2Min(), "f64.sqrt": (f) => f.f64x2Sqrt(),
  "f64.abs": (f) => f.f64x2Abs(), "f64.neg": (f) => f.f64x2Neg(), "f64.ceil": (f) => f.f64x2Ceil(),
  "f64.floor": (f) => f.f64x2Floor(), "f64.roundEven": (f) => f.f64x2Nearest(),
  "f64.rsqrt": (f) => {
    const t = f.local("v128");
    f.f64x2Sqrt().localSet(t).f64x2Const(1, 1).localGet(t).f64x2Div();
  },
  "i32.add": (f) => f.i32x4Add(), "i32.sub": (f) => f.i32x4Sub(), "i32.mul": (f) => f.i32x4Mul(),
  "i32.abs": (f) => f.i32x4Abs(), "i32.neg": (f) => f.i32x4Neg(),
  "i64.add": (f) => f.i64x2Add(), "i64.sub": (f) => f.i64x2Sub(),
};

/** max/min of integer vectors depend on signedness: handled through this table's callers. */
export function vectorIntMinMax(f: FunctionBuilder, op: "max" | "min", signed: boolean): void {
  if (op === "max") { if (signed) f.i32x4MaxS(); else f.i32x4MaxU(); } else if (signed) f.i32x4MinS(); else f.i32x4MinU();
}

function vectorCompare(f: FunctionBuilder, c: string, attr: string, signed: boolean): void {
  const dir = attr.slice(0, 2);
  const table: Record<string, Record<string, () => void>> = {
    f32: { EQ: () => f.f32x4Eq(), NE: () => f.f32x4Ne(), LT: () => f.f32x4Lt(), LE: () => f.f32x4Le(), GT: () => f.f32x4Gt(), GE: () => f.f32x4Ge() },
    f64: { EQ: () => f.f64x2Eq(), NE: () => f.f64x2Ne(), LT: () => f.f64x2Lt(), LE: () => f.f64x2Le(), GT: () => f.f64x2Gt(), GE: () => f.f64x2Ge() },
    i32s: { EQ: () => f.i32x4Eq(), NE: () => f.i32x4Ne(), LT: () => f.i32x4LtS(), LE: () => f.i32x4LeS(), GT: () => f.i32x4GtS(), GE: () => f.i32x4GeS() },
    i32u: { EQ: () => f.i32x4Eq(), NE: () => f.i32x4Ne(), LT: () => f.i32x4LtU(), LE: () => f.i32x4LeU(), GT: () => f.i32x4GtU(), GE: () => f.i32x4GeU() },
    i64s: { EQ: () => f.i64x2Eq(), NE: () => f.i64x2Ne(), LT: () => f.i64x2LtS(), LE: () => f.i64x2LeS(), GT: () => f.i64x2GtS(), GE: () => f.i64x2GeS() },
    i64u: { EQ: () => f.i64x2Eq(), NE: () => f.i64x2Ne() },
  };
  const key = c === "i32" || c === "i64" ? `${c}${signed ? "s" : "u"}` : c;
  const fn = table[key]?.[dir];
  if (fn === undefined) throw new Error(`no vector compare ${key} ${dir}`);
  fn();
}

function vectorConvert(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (tc === "f32") {
    if (fc === "i32") {
      if (from === "u32") f.f32x4ConvertI32x4U(); else f.f32x4ConvertI32x4S();
    }
    return; // f32 → bf16: the caller rounds
  }
  // → i32 lanes
  if (fc === "f32") {
    if (to === "s32") { f.i32x4TruncSatF32x4S(); return; }
    if (to === "u32") { f.i32x4TruncSatF32x4U(); return; }
    const { min, max } = integerRange(to);
    f.f32x4Const(Number(min), Number(min), Number(min), Number(min)).f32x4Max();
    f.f32x4Const(Number(max), Number(max), Number(max), Number(max)).f32x4Min();
    f.i32x4TruncSatF32x4S();
    return;
  }
  // int → int (pred is a mask: turn into 0/1)
  if (from === "pred") { f.i32x4Neg(); return; }
  wrapI32x4(f, to);
}

// ---- scalar helpers ------------------------------------------------------------------

export function pushConst(f: FunctionBuilder, t: ElementType, v: number | bigint): void {
  switch (computeType(t)) {
    case "i32": f.i32Const(Number(v)); return;
    case "i64": f.i64Const(BigInt(v)); return;
    case "f32": f.f32Const(Number(v)); return;
    case "f64": f.f64Const(Number(v)); return;
  }
}

/** Rounds the f32 on the stack to bf16 (nearest even; NaN becomes the quiet NaN 0x7fc0). */
export function roundBf16(f: FunctionBuilder, tmp: number): void {
  f.i32ReinterpretF32().localTee(tmp)
    .i32Const(0x7fff).i32Add().localGet(tmp).i32Const(16).i32ShrU().i32Const(1).i32And().i32Add()
    .i32Const(-65536).i32And()
    .i32Const(0x7fc00000)
    .localGet(tmp).i32Const(0x7fffffff).i32And().i32Const(0x7f800000).i32LeU()
    .select().f32ReinterpretI32();
}

function roundBf16x4(f: FunctionBuilder): void {
  const tmp = f.local("v128");
  f.localTee(tmp)
    .i32x4Const(0x7fff, 0x7fff, 0x7fff, 0x7fff).i32x4Add()
    .localGet(tmp).i32Const(16).i32x4ShrU().i32x4Const(1, 1, 1, 1).v128And().i32x4Add()
    .i32x4Const(-65536, -65536, -65536, -65536).v128And()
    .i32x4Const(0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000)
    .localGet(tmp).i32x4Const(0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff).v128And()
    .i32x4Const(0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000).i32x4LeU()
    .v128Bitselect();
}

function totalOrderKey(f: FunctionBuilder, c: string): void {
  if (c === "f64") {
    const t = f.local("i64");
    f.i64ReinterpretF64().localTee(t).localGet(t).i64Const(63).i64ShrS().i64Const(0x7fffffffffffffffn).i64And().i64Xor();
  } else {
    const t = f.local("i32");
    f.i32ReinterpretF32().localTee(t).localGet(t).i32Const(31).i32ShrS().i32Const(0x7fffffff).i32And().i32Xor();
  }
}

function cmpFloat(f: FunctionBuilder, c: "f32" | "f64", dir: string): void {
  const m: Record<string, () => void> = c === "f32"
    ? { EQ: () => f.f32Eq(), NE: () => f.f32Ne(), LT: () => f.f32Lt(), LE: () => f.f32Le(), GT: () => f.f32Gt(), GE: () => f.f32Ge() }
    : { EQ: () => f.f64Eq(), NE: () => f.f64Ne(), LT: () => f.f64Lt(), LE: () => f.f64Le(), GT: () => f.f64Gt(), GE: () => f.f64Ge() };
  m[dir]!();
}

function cmpInt(f: FunctionBuilder, c: string, dir: string, signed: boolean): void {
  const w = c === "i64";
  const name = `${w ? "i64" : "i32"}${dir === "EQ" ? "Eq" : dir === "NE" ? "Ne" : dir[0] + dir[1]!.toLowerCase() + (signed ? "S" : "U")}`;
  (f as unknown as Record<string, () => void>)[name]!.call(f);
}

function roundAfz(f: FunctionBuilder, c: "f32" | "f64", x: number): void {
  // t = trunc(x); |x - t| ≥ 0.5 ? t + copysign(1, x) : t (keeps -0 and NaN).
  const t = f.local(c);
  if (c === "f32") {
    f.localGet(x).f32Trunc().localSet(t);
    f.localGet(t).f32Const(1).localGet(x).f32Copysign().f32Add().localGet(t)
      .localGet(x).localGet(t).f32Sub().f32Abs().f32Const(0.5).f32Ge().select();
  } else {
    f.localGet(x).f64Trunc().localSet(t);
    f.localGet(t).f64Const(1).localGet(x).f64Copysign().f64Add().localGet(t)
      .localGet(x).localGet(t).f64Sub().f64Abs().f64Const(0.5).f64Ge().select();
  }
}

function floatSign(f: FunctionBuilder, c: "f32" | "f64", x: number): void {
  // NaN and ±0 are their own sign; everything else is ±1.
  if (c === "f32") {
    f.localGet(x).f32Const(1).localGet(x).f32Copysign()
      .localGet(x).f32Const(0).f32Eq().localGet(x).localGet(x).f32Ne().i32Or().select();
  } else {
    f.localGet(x).f64Const(1).localGet(x).f64Copysign()
      .localGet(x).f64Const(0).f64Eq().localGet(x).localGet(x).f64Ne().i32Or().select();
  }
}

/** Converts the scalar on the stack from type `from` to `to` with XLA's rules. */
export function convertScalar(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (to === "pred") {
    if (fc === "f32") f.f32Const(0).f32Ne();
    else if (fc === "f64") f.f64Const(0).f64Ne();
    else if (fc === "i64") f.i64Const(0).i64Ne();
    else f.i32Const(0).i32Ne();
    return;
  }
  if (isFloatType(to)) {
    if (to === "bf16" && (from === "f64" || fc === "i64" || (fc === "i32" && bitsOf(from) > 16))) {
      fail(`convert ${from} -> bf16 would round twice`);
    }
    const target = tc as "f32" | "f64";
    if (fc === target) return;
    if (fc === "f32") { f.f64PromoteF32(); return; }
    if (fc === "f64") { f.f32DemoteF64(); return; }
    const u = !isSigned(from);
    if (fc === "i32") {
      if (target === "f32") { if (u && from === "u32") f.f32ConvertI32U(); else f.f32ConvertI32S(); }
      else if (u && from === "u32") f.f64ConvertI32U(); else f.f64ConvertI32S();
    } else if (target === "f32") { if (u) f.f32ConvertI64U(); else f.f32ConvertI64S(); }
    else if (u) f.f64ConvertI64U(); else f.f64ConvertI64S();
    return;
  }
  // → integer
  if (fc === "f32" || fc === "f64") {
    const is32 = fc === "f32";
    const signedTarget = isSigned(to);
    if (bitsOf(to) < 32) {
      // Saturate in float first (NaN passes through and truncates to 0).
      const { min, max } = integerRange(to);
      if (is32) f.f32Const(Number(min)).f32Max().f32Const(Number(max)).f32Min();
      else f.f64Const(Number(min)).f64Max().f64Const(Number(max)).f64Min();
    }
    if (tc === "i64") {
      if (is32) { if (signedTarget) f.i64TruncSatF32S(); else f.i64TruncSatF32U(); }
      else if (signedTarget) f.i64TruncSatF64S(); else f.i64TruncSatF64U();
    } else if (is32) { if (signedTarget || bitsOf(to) < 32) f.i32TruncSatF32S(); else f.i32TruncSatF32U(); }
    else if (signedTarget || bitsOf(to) < 32) f.i32TruncSatF64S(); else f.i32TruncSatF64U();
    return;
  }
  if (fc === "i64" && tc === "i32") { f.i32WrapI64(); wrapI32(f, to); return; }
  if (fc === "i32" && tc === "i64") {
    if (isSigned(from)) f.i64ExtendI32S(); else f.i64ExtendI32U();
    return;
  }
  if (fc === "i32") wrapI32(f, to);
}

function bitcastScalar(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (from === "bf16") {
    f.i32ReinterpretF32().i32Const(16).i32ShrU();
    wrapI32(f, to);
    return;
  }
  if (to === "bf16") {
    f.i32Const(0xffff).i32And().i32Const(16).i32Shl().f32ReinterpretI32();
    return;
  }
  if (fc === tc) {
    wrapI32(f, to);
    return;
  }
  if (fc === "f32" && tc === "i32") f.i32ReinterpretF32();
  else if (fc === "i32" && tc === "f32") f.f32ReinterpretI32();
  else if (fc === "f64" && tc === "i64") f.i64ReinterpretF64();
  else if (fc === "i64" && tc === "f64") f.f64ReinterpretI64();
  else fail(`bitcast ${from} -> ${to}`);
}

