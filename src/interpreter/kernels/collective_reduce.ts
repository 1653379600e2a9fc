// Reductions for all-reduce and reduce-scatter. A reducer is a computation; when it is
// a plain scalar add / multiply / maximum / minimum of its two parameters and the
// element type's storage holds values exactly (no sub-byte or bit-pattern types), the
// contributions are combined directly on their typed arrays. Otherwise the reducer is
// called once per element pair, in group order, through ctx.call.

import { binaryReducerOpcode, type Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import { ExecutionError } from "../../types/errors.js";
import { Literal, storagePerElement, type Storage } from "../../types/literal.js";
import { scalarShape, shapesEqual, type ArrayShape } from "../../types/shape.js";
import type { EvalContext, FastReduction } from "../context.js";

/** Types whose typed-array storage wraps and rounds exactly as the element type does. */
const EXACT_STORAGE: ReadonlySet<ElementType> = new Set<ElementType>([
  "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f32", "f64",
]);

/** Whether `reduction` can be run on the storage of `t` directly. */
export function fastReductionApplies(t: ElementType, reduction: FastReduction): boolean {
  if (EXACT_STORAGE.has(t)) return true;
  // Complex addition is componentwise on the interleaved (re, im) storage.
  return reduction === "add" && (t === "c64" || t === "c128");
}

const FAST_OPCODES: ReadonlySet<string> = new Set(["add", "multiply", "maximum", "minimum"]);

/**
 * The fast reduction a reducer computes, or undefined. It must take two scalars of one
 * type and return opcode(p0, p1) or opcode(p1, p0) of them (all four ops commute).
 */
export function recognizeReduction(reducer: Computation): FastReduction | undefined {
  const op = binaryReducerOpcode(reducer);
  if (op === undefined || !FAST_OPCODES.has(op) || reducer.instructions.length !== 3) return undefined;
  const s = reducer.parameters[0]!.shape;
  if (s.kind !== "array" || s.dimensions.length !== 0) return undefined;
  if (!shapesEqual(s, reducer.parameters[1]!.shape) || !shapesEqual(s, reducer.root.shape)) return undefined;
  const reduction = op as FastReduction;
  return fastReductionApplies(s.elementType, reduction) ? reduction : undefined;
}

type NumberArray = Exclude<Storage, BigInt64Array | BigUint64Array>;

/** out[i] = out[i] op src[i] for i in [lo, hi) (storage indices); both arrays of type `t`. */
export function combineInto(t: ElementType, reduction: FastReduction, out: Storage, src: Storage, lo: number, hi: number): void {
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    const o = out;
    const s = src as typeof out;
    switch (reduction) {
      case "add": for (let i = lo; i < hi; i++) o[i] = o[i]! + s[i]!; break;
      case "multiply": for (let i = lo; i < hi; i++) o[i] = o[i]! * s[i]!; break;
      case "maximum": for (let i = lo; i < hi; i++) if (s[i]! > o[i]!) o[i] = s[i]!; break;
      case "minimum": for (let i = lo; i < hi; i++) if (s[i]! < o[i]!) o[i] = s[i]!; break;
    }
    return;
  }
  const o = out as NumberArray;
  const s = src as NumberArray;
  switch (reduction) {
    case "add":
      addInto(o, s, lo, hi);
      break;
    case "multiply":
      // 32-bit integer products are not exact in doubles; Math.imul wraps like the hardware.
      if (t === "s32" || t === "u32") for (let i = lo; i < hi; i++) o[i] = Math.imul(o[i]!, s[i]!);
      else for (let i = lo; i < hi; i++) o[i] = o[i]! * s[i]!;
      break;
    // Math.max/min propagate NaN and order -0 below +0, as IEEE maximum/minimum do.
    case "maximum":
      for (let i = lo; i < hi; i++) o[i] = Math.max(o[i]!, s[i]!);
      break;
    case "minimum":
      for (let i = lo; i < hi; i++) o[i] = Math.min(o[i]!, s[i]!);
      break;
  }
}

/**
 * out[i] += src[i] for i in [lo, hi). Unrolled by eight: V8 then runs about twice as
 * fast as the plain loop (fewer loop-condition and bounds checks per element), and this
 * loop is most of an all-reduce's time.
 */
function addInto(o: NumberArray, s: NumberArray, lo: number, hi: number): void {
  let i = lo;
  for (; i + 8 <= hi; i += 8) {
    o[i] = o[i]! + s[i]!;
    o[i + 1] = o[i + 1]! + s[i + 1]!;
    o[i + 2] = o[i + 2]! + s[i + 2]!;
    o[i + 3] = o[i + 3]! + s[i + 3]!;
    o[i + 4] = o[i + 4]! + s[i + 4]!;
    o[i + 5] = o[i + 5]! + s[i + 5]!;
    o[i + 6] = o[i + 6]! + s[i + 6]!;
    o[i + 7] = o[i + 7]! + s[i + 7]!;
  }
  for (; i < hi; i++) o[i] = o[i]! + s[i]!;
}

/** Storage entries folded per block: small enough that the block stays in cache across passes. */
const FOLD_BLOCK = 65536;

/**
 * out[i] = ((inputs[0][i] op inputs[1][i]) op inputs[2][i]) ... for i in [lo, hi): the
 * inputs folded in order, rounded to the element type after every step. Works block by
 * block, so each block of `out` is read back from cache rather than memory per input.
 * `out` may be one of the inputs only if it is inputs[0].
 */
export function foldInto(t: ElementType, reduction: FastReduction, out: Storage, inputs: readonly Storage[], lo: number, hi: number): void {
  const first = inputs[0];
  if (first === undefined) throw new ExecutionError("foldInto: no inputs");
  for (let b = lo; b < hi; b += FOLD_BLOCK) {
    const e = Math.min(hi, b + FOLD_BLOCK);
    if (first !== out) out.set(first.subarray(b, e) as never, b);
    for (let k = 1; k < inputs.length; k++) combineInto(t, reduction, out, inputs[k]!, b, e);
  }
}


/**
 * Folds same-shaped array contributions in order with `reducer`:
 * ((c0 op c1) op c2) ... . Uses the typed-array loop when the reducer is recognized.
 */
export function foldContributions(
  opName: string, contributions: readonly Literal[], reducer: Computation, ctx: EvalContext,
): Literal {
  const first = contributions[0];
  if (first === undefined) throw new ExecutionError(`${opName}: no contributions to reduce`);
  const shape = first.arrayShape;
  const t = shape.elementType;
  const out = first.clone();
  const reduction = recognizeReduction(reducer);
  if (reduction !== undefined) {
    for (const c of contributions.slice(1)) combineInto(t, reduction, out.data, c.data, 0, out.data.length);
    return out;
  }
  const per = storagePerElement(t);
  const elementShape: ArrayShape = scalarShape(t);
  const scalarAt = (lit: Literal, i: number): Literal =>
    Literal.fromStorage(elementShape, lit.data.slice(i * per, (i + 1) * per) as Storage);
  const count = out.data.length / per;
  for (const c of contributions.slice(1)) {
    for (let i = 0; i < count; i++) {
      const r = ctx.call(reducer, [scalarAt(out, i), scalarAt(c, i)]);
      if (!shapesEqual(r.shape, elementShape)) {
        throw new ExecutionError(`${opName}: the reduction computation returned ${r.shape.kind}, expected a ${t} scalar`);
      }
      for (let k = 0; k < per; k++) (out.data as NumberArray)[i * per + k] = (r.data as NumberArray)[k]!;
    }
  }
  return out;
}
