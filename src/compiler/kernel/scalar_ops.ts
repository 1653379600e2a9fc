// SCALAR_OPS: how each elementwise opcode becomes scalar nodes of the kernel graph.
// The table is total over the elementwise and conversion opcodes, so a new opcode
// does not compile until someone says how it fuses (or that it does not).

import type { Instruction } from "../../ir/computation.js";
import type { ElementwiseOpcode } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { Declined } from "./declined.js";
import type { BinaryScalarOp, KernelGraph, UnaryScalarOp } from "./graph.js";

/** Floats whose literals hold bit patterns (f16, bf16, f8/f6/f4): their NaNs carry signs and payloads. */
export const storedAsBits = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "float" && t !== "f32" && t !== "f64";

/** Appended to a compare's direction for TOTALORDER on floats (legalize.ts writes it out). */
export const TOTAL = "_TOTAL";

/**
 * Attribute of a select node that stands for a value, not a bit pattern (sign of a float
 * stored as bits, legalize.ts): the renderers give a NaN of such a type as the type's quiet
 * NaN, as the interpreter computes sign on values. HLO select is unmarked: it copies bits.
 */
export const SELECT_OF_VALUES = "values";

export type FusibleElementwiseOpcode = Exclude<ElementwiseOpcode, "broadcastInDim"> | "convert" | "bitcastConvert" | "reducePrecision";

/** Builds the node of `inst` from its operands' nodes (same index), or says why it cannot. */
export type ScalarLowering = (g: KernelGraph, inst: Instruction, args: readonly number[]) => number | Declined;

/** The element type of array instruction `inst`. */
export const typeOf = (inst: Instruction): ElementType => {
  if (inst.shape.kind !== "array") throw new Error(`${inst.name}: not an array`);
  return inst.shape.elementType;
};

const unary = (op: UnaryScalarOp): ScalarLowering => (g, inst, [x]) => g.op(op, typeOf(inst), [x!]);
const binary = (op: BinaryScalarOp): ScalarLowering => (g, inst, [a, b]) => g.op(op, typeOf(inst), [a!, b!]);
const declined = (why: string): ScalarLowering => () => ({ declined: why });
/** CHLO's special functions run on the interpreter's kernels (series and rational approximations in double). */
const chloInterpreted = declined("CHLO special functions run on the interpreter");

export const SCALAR_OPS: Readonly<Record<FusibleElementwiseOpcode, ScalarLowering>> = {
  abs: unary("abs"), cbrt: unary("cbrt"), ceil: unary("ceil"), clz: unary("clz"), cos: unary("cos"), erf: unary("erf"),
  exp: unary("exp"), expm1: unary("expm1"), floor: unary("floor"),
  imag: (g, inst) => g.constant(typeOf(inst), 0), // of a real operand (complex ones: complex_ops.ts)
  isFinite: unary("isFinite"), log: unary("log"), log1p: unary("log1p"), logistic: unary("logistic"),
  negate: unary("neg"), not: unary("not"), popcnt: unary("popcnt"),
  // real of a real operand is the operand, bit for bit (complex ones: complex_ops.ts).
  real: (_g, _inst, [x]) => x!,
  roundNearestAfz: unary("roundAfz"), roundNearestEven: unary("roundEven"), rsqrt: unary("rsqrt"), sign: unary("sign"),
  sin: unary("sin"), sqrt: unary("sqrt"), tan: unary("tan"), tanh: unary("tanh"),
  add: binary("add"), subtract: binary("sub"), multiply: binary("mul"), divide: binary("div"), remainder: binary("rem"),
  power: binary("pow"), maximum: binary("max"), minimum: binary("min"), and: binary("and"), or: binary("or"),
  xor: binary("xor"), shiftLeft: binary("shl"), shiftRightArithmetic: binary("shrA"), shiftRightLogical: binary("shrL"),
  atan2: binary("atan2"),
  acos: chloInterpreted, acosh: chloInterpreted, asin: chloInterpreted, asinh: chloInterpreted, atan: chloInterpreted, atanh: chloInterpreted, cosh: chloInterpreted, sinh: chloInterpreted, lgamma: chloInterpreted, digamma: chloInterpreted, erfInv: chloInterpreted, erfc: chloInterpreted, besselI1e: chloInterpreted, polygamma: chloInterpreted, zeta: chloInterpreted, nextAfter: chloInterpreted,
  // Its result is complex: lower_fusion.ts lowers it through complex_ops.ts, never here.
  complex: declined("complex results lower through complex_ops.ts"),
  compare: (g, inst, [a, b]) => {
    const { direction, compareType } = (inst as Instruction<"compare">).attrs;
    const t = typeOf(inst.operands[0]!);
    const total = compareType === "TOTALORDER" && ELEMENT_TYPES[t].kind === "float";
    if ((compareType === "SIGNED" || compareType === "UNSIGNED") && ELEMENT_TYPES[t].kind !== "pred"
      && compareType !== (ELEMENT_TYPES[t].kind === "signed" ? "SIGNED" : "UNSIGNED")) {
      return { declined: `compare ${compareType} on ${t}` };
    }
    return g.op("compare", "pred", [a!, b!], total ? `${direction}${TOTAL}` : direction);
  },
  // A rank-0 predicate (or clamp bound) stands for every element: the lowering reads rank-0 operands at [].
  select: (g, inst, [p, a, b]) => {
    // Unmarked: the chosen operand's bits, as XLA (and the interpreter) copy them, a
    // narrow float's signalling NaN and payload included. Every renderer holds a loaded
    // narrow float so that it stores back to the same pattern (narrow_float.ts, c_values.ts).
    return a === b ? a! : g.op("select", typeOf(inst), [p!, a!, b!]);
  },
  clamp: (g, inst, [lo, x, hi]) => {
    const t = typeOf(inst);
    return g.op("min", t, [g.op("max", t, [x!, lo!]), hi!]);
  },
  convert: (g, inst, [x]) => {
    const from = typeOf(inst.operands[0]!);
    const to = typeOf(inst);
    // Even to its own type: the interpreter's convert makes a NaN the quiet NaN of its sign.
    return from === to && !storedAsBits(to) ? x! : g.op("convert", to, [x!]);
  },
  bitcastConvert: (g, inst, [x]) => {
    const from = typeOf(inst.operands[0]!);
    const to = typeOf(inst);
    if (ELEMENT_TYPES[from].bitWidth !== ELEMENT_TYPES[to].bitWidth || ELEMENT_TYPES[from].storageBytes !== ELEMENT_TYPES[to].storageBytes) {
      return { declined: `bitcast-convert ${from} -> ${to} changes the shape` };
    }
    return from === to ? x! : g.op("bitcast", to, [x!]);
  },
  reducePrecision: (g, inst, [x]) => {
    const { exponentBits, mantissaBits } = (inst as Instruction<"reducePrecision">).attrs;
    return g.op("reducePrecision", typeOf(inst), [x!], `${exponentBits}:${mantissaBits}`);
  },
};
