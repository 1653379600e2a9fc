// Pieces the compiled routines (reduce-window, select-and-scatter, gather, scatter,
// dynamic slices, sort) share: how a scalar sub-computation is recognized as one
// binary op, that op's code, loops over an array's elements split into parallel rows,
// and loads of index operands.

import { binaryReducerOpcode, type Computation, type Instruction } from "../../../ir/computation.js";
import type { FastReduction } from "../../../interpreter/device_interfaces.js";
import type { ElementType } from "../../../types/element_type.js";
import { elementCount, type ArrayShape } from "../../../types/shape.js";
import type { FunctionBuilder } from "../encoder.js";
import { computeType, type Compute } from "../wasm_types.js";

export { loadScalar, storeScalar, storageBytes } from "../wasm_types.js";
export { isIndexType } from "../../kernel/dynamic_slice_plan.js";

/** The binary reducers the routines compile: the same four the collectives' fast path takes. */
export type BinaryReducer = FastReduction;

const REDUCERS: ReadonlySet<string> = new Set<BinaryReducer>(["add", "multiply", "maximum", "minimum"]);

/** Element types whose add / multiply / maximum / minimum the routines compute exactly as the interpreter does. */
const ARITHMETIC_TYPES: ReadonlySet<ElementType> = new Set<ElementType>(["f32", "f64", "s32", "u32", "s64", "u64"]);

export const isArithmeticType = (t: ElementType): boolean => ARITHMETIC_TYPES.has(t);

export function arrayShapeOf(inst: Instruction): ArrayShape | undefined {
  return inst.shape.kind === "array" ? inst.shape : undefined;
}

/**
 * The op of a computation whose root is one binary op applied to its two scalar
 * parameters (in either order: these ops are commutative bit for bit), or undefined.
 */
export function binaryReducerOf(c: Computation): BinaryReducer | undefined {
  const op = binaryReducerOpcode(c);
  return op !== undefined && REDUCERS.has(op) ? (op as BinaryReducer) : undefined;
}

/** The comparison a computation of two scalar parameters makes (compare(p0, p1, direction)), or undefined. */
export function comparisonOf(c: Computation): "GE" | "GT" | "LE" | "LT" | undefined {
  const root = c.root as Instruction<"compare">;
  if (c.parameters.length !== 2 || root.opcode !== "compare") return undefined;
  if (root.operands[0] !== c.parameters[0] || root.operands[1] !== c.parameters[1]) return undefined;
  if (root.attrs.compareType === "TOTALORDER") return undefined;
  const d = root.attrs.direction;
  return d === "GE" || d === "GT" || d === "LE" || d === "LT" ? d : undefined;
}

/** Applies `op` to the two values of type t on the stack (a then b), as the interpreter does. */
export function emitBinary(f: FunctionBuilder, op: BinaryReducer, t: ElementType, tmpA: number, tmpB: number): void {
  const c = computeType(t);
  const signed = t === "s32" || t === "s64";
  if (c === "f32") {
    ({ add: () => f.f32Add(), multiply: () => f.f32Mul(), maximum: () => f.f32Max(), minimum: () => f.f32Min() })[op]();
  } else if (c === "f64") {
    ({ add: () => f.f64Add(), multiply: () => f.f64Mul(), maximum: () => f.f64Max(), minimum: () => f.f64Min() })[op]();
  } else if (op === "add") {
    if (c === "i32") f.i32Add(); else f.i64Add();
  } else if (op === "multiply") {
    if (c === "i32") f.i32Mul(); else f.i64Mul();
  } else {
    // select(a, b, a > b) for maximum, a < b for minimum.
    f.localSet(tmpB).localSet(tmpA);
    f.localGet(tmpA).localGet(tmpB).localGet(tmpA).localGet(tmpB);
    if (c === "i32") {
      if (op === "maximum") { if (signed) f.i32GtS(); else f.i32GtU(); } else if (signed) f.i32LtS(); else f.i32LtU();
    } else if (op === "maximum") { if (signed) f.i64GtS(); else f.i64GtU(); } else if (signed) f.i64LtS(); else f.i64LtU();
    f.select();
  }
}

/** Compares the two values of type t on the stack (a then b) by `direction`, leaving an i32 0 or 1. */
export function emitCompare(f: FunctionBuilder, direction: "GE" | "GT" | "LE" | "LT", t: ElementType): void {
  const c = computeType(t);
  const signed = t === "s32" || t === "s64";
  const table: Record<Compute, Record<typeof direction, () => void>> = {
    f32: { GE: () => f.f32Ge(), GT: () => f.f32Gt(), LE: () => f.f32Le(), LT: () => f.f32Lt() },
    f64: { GE: () => f.f64Ge(), GT: () => f.f64Gt(), LE: () => f.f64Le(), LT: () => f.f64Lt() },
    i32: signed
      ? { GE: () => f.i32GeS(), GT: () => f.i32GtS(), LE: () => f.i32LeS(), LT: () => f.i32LtS() }
      : { GE: () => f.i32GeU(), GT: () => f.i32GtU(), LE: () => f.i32LeU(), LT: () => f.i32LtU() },
    i64: signed
      ? { GE: () => f.i64GeS(), GT: () => f.i64GtS(), LE: () => f.i64LeS(), LT: () => f.i64LtS() }
      : { GE: () => f.i64GeU(), GT: () => f.i64GtU(), LE: () => f.i64LeU(), LT: () => f.i64LtU() },
  };
  table[c][direction]();
}

/**
 * Loops over every element of an array of `dims` in row-major order, restricted to the
 * rows [begin, end) (a row: all dimensions but the last; rank 0 has one row of one
 * element). `outer(coords)` runs once per row with the row's coordinates set (the last
 * one not yet); `inner(coords)` runs per element. coords are i32 locals.
 * The number of rows is the parallel extent.
 */
export function forEachElement(
  f: FunctionBuilder, dims: readonly number[], begin: number, end: number,
  outer: (coords: readonly number[]) => void, inner: (coords: readonly number[]) => void,
): void {
  const rank = dims.length;
  const coords = dims.map(() => f.local("i32"));
  const row = f.local("i32");
  const rest = f.local("i32");
  const last = rank === 0 ? 1 : dims[rank - 1]!;
  f.localGet(begin).localSet(row);
  f.block().loop();
  f.localGet(row).localGet(end).i32GeU().brIf(1);
  // Row coordinates from the row number, innermost of the outer dimensions first.
  f.localGet(row).localSet(rest);
  for (let d = rank - 2; d >= 0; d--) {
    const size = dims[d]!;
    if (d === 0) {
      f.localGet(rest).localSet(coords[0]!);
    } else {
      f.localGet(rest).i32Const(size).i32RemU().localSet(coords[d]!);
      f.localGet(rest).i32Const(size).i32DivU().localSet(rest);
    }
  }
  outer(coords);
  if (rank === 0) {
    inner(coords);
  } else {
    const c = coords[rank - 1]!;
    f.i32Const(0).localSet(c);
    f.block().loop();
    f.localGet(c).i32Const(last).i32GeU().brIf(1);
    inner(coords);
    f.localGet(c).i32Const(1).i32Add().localSet(c);
    f.br(0).end().end();
  }
  f.localGet(row).i32Const(1).i32Add().localSet(row);
  f.br(0).end().end();
}

/** Rows of an array as forEachElement counts them. */
export function rowCount(dims: readonly number[]): number {
  return dims.length === 0 ? 1 : elementCount(dims.slice(0, -1));
}

/**
 * Loads the index at the address on the stack and clamps it to [0, hi] (hi >= 0),
 * leaving an i32; exact for every integer index type (64-bit ones clamp before wrapping).
 */
export function emitLoadClampedIndex(f: FunctionBuilder, t: ElementType, hi: number, tmp32: number, tmp64: number): void {
  const wide = t === "s64" || t === "u64";
  if (wide) {
    f.i64Load().localSet(tmp64);
    const signed = t === "s64";
    // v < 0 ? 0 : v > hi ? hi : v
    f.i32Const(0);
    f.i32Const(hi);
    f.localGet(tmp64).i32WrapI64();
    f.localGet(tmp64).i64Const(hi);
    if (signed) f.i64GtS(); else f.i64GtU();
    f.select();
    if (signed) {
      f.localGet(tmp64).i64Const(0).i64LtS();
      f.select();
    } else {
      f.localSet(tmp32).drop().localGet(tmp32);
    }
    return;
  }
  loadIndexI32(f, t);
  f.localSet(tmp32);
  const signed = t === "s32" || t === "s16" || t === "s8";
  f.i32Const(0);
  f.i32Const(hi);
  f.localGet(tmp32);
  f.localGet(tmp32).i32Const(hi);
  if (signed) f.i32GtS(); else f.i32GtU();
  f.select();
  if (signed) {
    f.localGet(tmp32).i32Const(0).i32LtS();
    f.select();
  } else {
    f.localSet(tmp32).drop().localGet(tmp32);
  }
}

/** Loads an index of at most 32 bits (sign- or zero-extended to i32). */
export function loadIndexI32(f: FunctionBuilder, t: ElementType): void {
  switch (t) {
    case "s8": f.i32Load8S(); return;
    case "u8": f.i32Load8U(); return;
    case "s16": f.i32Load16S(); return;
    case "u16": f.i32Load16U(); return;
    default: f.i32Load();
  }
}

/** Copies one element of `bytes` bytes; the stack holds (destination address, source address). */
export function emitCopyElement(f: FunctionBuilder, bytes: number): void {
  switch (bytes) {
    case 1: f.i32Load8U().i32Store8(); return;
    case 2: f.i32Load16U(0, 1).i32Store16(0, 1); return;
    case 4: f.i32Load(0, 1).i32Store(0, 1); return;
    case 8: f.i64Load(0, 1).i64Store(0, 1); return;
    default: throw new Error(`emitCopyElement: ${bytes} bytes`);
  }
}
