// COMPLEX_OPS: how each elementwise opcode on complex numbers becomes real scalar nodes
// of the kernel graph. No renderer sees a complex type: lower_fusion.ts reads a complex
// array of dimensions D as the real array [...D, 2] of its components (c64: f32, c128:
// f64), which is how it is stored (re, im interleaved), so a complex value at index idx
// is asked for one component k at a time: the node at [...idx, k]. k is an index node:
// the constant 0 or 1 where a real value reads a part (real, imag, abs, compare), or the
// loop variable of the trailing dimension of 2 where a complex array is stored (a kernel
// with a complex output loops over [...D, 2] and stores each component as one real
// element). An op whose components are independent (add, negate, select, convert)
// computes component k from its operands' component k, so a loop over the trailing
// dimension reads both parts with one affine load each; an op that mixes them (complex's
// pairing, a product) computes both parts from the operands' constant components and
// picks part k (`pick`).
//
// Every form here reproduces the interpreter's (interpreter/kernels/complex_math.ts,
// elementwise.ts, types/convert.ts) bit for bit: c64's parts are computed in double there
// and rounded to f32 once, which for one add, subtract or negate is the f32 operation
// itself. The table is total, so a new elementwise opcode says how its complex form
// fuses; an op declined here runs alone on the interpreter, with the reason given.

import type { Instruction } from "../../ir/computation.js";
import { ELEMENT_TYPES, realComponentType, type ElementType } from "../../types/element_type.js";
import type { Declined } from "./declined.js";
import type { KernelGraph } from "./graph.js";
import type { FusibleElementwiseOpcode } from "./scalar_ops.js";

export const isComplexType = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "complex";

/** What a complex lowering reads of its instruction's operands. */
export interface ComplexOperands {
  /** Component `k` (an index node: 0 the real part, 1 the imaginary) of complex operand `i`; operand `i`'s value where it is real (k unused). */
  part(i: number, k: number): number;
}

/**
 * Builds component `k` (an index node) of complex instruction `inst`, or (k undefined)
 * the value of a real `inst` that reads complex operands; or says why it does not.
 */
export type ComplexLowering = (g: KernelGraph, inst: Instruction, operands: ComplexOperands, k: number | undefined) => number | Declined;

const elementTypeOf = (inst: Instruction): ElementType => {
  if (inst.shape.kind !== "array") throw new Error(`${inst.name}: not an array`);
  return inst.shape.elementType;
};

/** The type of a complex instruction's components, or a real instruction's own type. */
export const componentType = (t: ElementType): ElementType => (isComplexType(t) ? realComponentType(t) : t);

/** Part k (an index node) of a complex value whose parts are `re` and `im` (nodes of one real type). */
export function pick(g: KernelGraph, k: number, re: number, im: number): number {
  const n = g.node(k);
  if (n.op === "iconst") return n.attr === 0 ? re : im;
  if (re === im) return re;
  return g.op("select", g.node(re).type as ElementType, [g.condToPred(g.eq(k, g.iconst(0))), re, im]);
}

/** A real convert (scalar_ops.ts's rule: to its own type a float held as a value is itself). */
function convertReal(g: KernelGraph, x: number, to: ElementType): number {
  const from = g.node(x).type as ElementType;
  return from === to && (to === "f32" || to === "f64") ? x : g.op("convert", to, [x]);
}

const componentwise = (op: "add" | "sub"): ComplexLowering => (g, inst, x, k) => g.op(op, componentType(elementTypeOf(inst)), [x.part(0, k!), x.part(1, k!)]);
const declined = (why: string): ComplexLowering => () => ({ declined: why });
const interpreted = (what: string): ComplexLowering => declined(`complex ${what} runs on the interpreter`);

export const COMPLEX_OPS: Readonly<Record<FusibleElementwiseOpcode, ComplexLowering>> = {
  // Not written out yet: the interpreter computes these in double with special cases
  // (Smith's division with C99's recovery of infinities, hypot) or, for multiply, with one
  // fused rounding per part (complex_math.ts complexMultiplyOf).
  multiply: interpreted("multiply (each part one fused multiply-add)"),
  divide: interpreted("divide (Smith's method in double, C99's recovery of infinities)"),
  abs: interpreted("abs (hypot in double)"),
  add: componentwise("add"), subtract: componentwise("sub"),
  negate: (g, inst, x, k) => g.op("neg", componentType(elementTypeOf(inst)), [x.part(0, k!)]),
  real: (g, _inst, x) => x.part(0, g.iconst(0)),
  imag: (g, _inst, x) => x.part(0, g.iconst(1)),
  complex: (g, _inst, x, k) => pick(g, k!, x.part(0, k!), x.part(1, k!)),
  // The chosen operand's component, bit for bit (the interpreter copies both slots).
  select: (g, inst, x, k) => {
    const [a, b] = [x.part(1, k!), x.part(2, k!)];
    return a === b ? a : g.op("select", componentType(elementTypeOf(inst)), [x.part(0, k!), a, b]);
  },
  // The interpreter's complex compare: both parts equal (NaN in either part: not equal).
  compare: (g, inst, x) => {
    const direction = (inst as Instruction<"compare">).attrs.direction;
    if (direction !== "EQ" && direction !== "NE") return { declined: `compare ${direction} of complex numbers` };
    const parts = [0, 1].map((c) => g.op("compare", "pred", [x.part(0, g.iconst(c)), x.part(1, g.iconst(c))], direction));
    return g.op(direction === "EQ" ? "and" : "or", "pred", parts);
  },
  // types/convert.ts: real → complex: the real value converted to the component type, +0
  // imaginary part; complex → complex: part by part; complex → real: the real part
  // converted as a real value of the component type.
  convert: (g, inst, x, k) => {
    const from = elementTypeOf(inst.operands[0]!);
    const to = elementTypeOf(inst);
    if (!isComplexType(to)) return convertReal(g, x.part(0, g.iconst(0)), to);
    const c = componentType(to);
    if (isComplexType(from)) return convertReal(g, x.part(0, k!), c);
    return pick(g, k!, convertReal(g, x.part(0, k!), c), g.constant(c, 0));
  },
  bitcastConvert: declined("bitcast-convert of complex numbers runs on the interpreter"),
  reducePrecision: declined("reduce-precision of complex numbers runs on the interpreter"),
  cbrt: interpreted("cbrt"), ceil: declined("ceil of complex numbers"), clz: declined("clz of complex numbers"),
  cos: interpreted("cos"), erf: interpreted("erf"), exp: interpreted("exp"), expm1: interpreted("expm1"),
  floor: declined("floor of complex numbers"), isFinite: declined("is-finite of complex numbers"), log: interpreted("log"),
  log1p: interpreted("log1p"), logistic: interpreted("logistic"), not: declined("not of complex numbers"),
  popcnt: declined("popcnt of complex numbers"), roundNearestAfz: declined("round of complex numbers"),
  roundNearestEven: declined("round of complex numbers"), rsqrt: interpreted("rsqrt"), sign: interpreted("sign (z / |z| in double)"),
  sin: interpreted("sin"), sqrt: interpreted("sqrt"), tan: interpreted("tan"), tanh: interpreted("tanh"),
  remainder: declined("remainder of complex numbers"), power: interpreted("power"), maximum: interpreted("maximum"),
  minimum: interpreted("minimum"), and: declined("and of complex numbers"), or: declined("or of complex numbers"),
  xor: declined("xor of complex numbers"), shiftLeft: declined("shift of complex numbers"),
  shiftRightArithmetic: declined("shift of complex numbers"), shiftRightLogical: declined("shift of complex numbers"),
  atan2: interpreted("atan2"), clamp: interpreted("clamp"),
  acos: interpreted("acos"), acosh: interpreted("acosh"), asin: interpreted("asin"), asinh: interpreted("asinh"),
  atan: interpreted("atan"), atanh: interpreted("atanh"), cosh: interpreted("cosh"), sinh: interpreted("sinh"),
  lgamma: interpreted("lgamma"), digamma: interpreted("digamma"), erfInv: interpreted("erf-inv"), erfc: interpreted("erfc"),
  besselI1e: interpreted("bessel-i1e"), polygamma: interpreted("polygamma"), zeta: interpreted("zeta"), nextAfter: interpreted("next-after"),
};
