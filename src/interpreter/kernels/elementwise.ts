// Kernels of the elementwise ops and of broadcastInDim. Operands arrive in the default
// layout with the dimensions the shape rules checked, so an elementwise kernel walks
// the elements in storage order and applies the per-element function that
// elementwise_ops.ts picks for the element type; the result's type comes from the
// instruction's inferred shape (abs of complex is real, compare gives pred, ...).

import type { ComparisonDirection, ComparisonType } from "../../ir/attributes.js";
import { tableOf, UNARY_OPCODES, type UnaryOpcode } from "../../ir/opcodes.js";
import { defaultComparisonType, type ElementwiseShapeOpcode } from "../../ir/shape/elementwise.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { rowMajorStrides } from "../../types/index_util.js";
import { Literal, readStorage, storagePerElement, writeStorage, type Complex, type Scalar } from "../../types/literal.js";
import { elementCount, type ArrayShape } from "../../types/shape.js";
import type { Kernel, KernelTable } from "../context.js";
import { binaryScalarFn, SCALAR_BINARY_OPCODES, unaryScalarFn, type BinaryFn, type ScalarBinaryOpcode } from "./elementwise_ops.js";
import { resultArrayShape, slotsOf } from "./element_copy.js";
import { totalOrderKeys } from "./total_order.js";

/** result[i] = f(x[i]) for every element. */
function mapUnary(shape: ArrayShape, x: Literal, f: (v: Scalar) => Scalar): Literal {
  const out = Literal.zeros(shape);
  const tx = x.elementType;
  const n = elementCount(shape);
  for (let i = 0; i < n; i++) writeStorage(shape.elementType, out.data, i, f(readStorage(tx, x.data, i)));
  return out;
}

/** result[i] = f(a[i], b[i]), where a rank-0 operand stands for every element. */
function mapBinary(shape: ArrayShape, a: Literal, b: Literal, f: (x: Scalar, y: Scalar) => Scalar): Literal {
  const out = Literal.zeros(shape);
  const ta = a.elementType;
  const tb = b.elementType;
  const aStep = a.dimensions.length === 0 && shape.dimensions.length !== 0 ? 0 : 1;
  const bStep = b.dimensions.length === 0 && shape.dimensions.length !== 0 ? 0 : 1;
  const n = elementCount(shape);
  for (let i = 0; i < n; i++) {
    writeStorage(shape.elementType, out.data, i, f(readStorage(ta, a.data, i * aStep), readStorage(tb, b.data, i * bStep)));
  }
  return out;
}

function unaryKernel<O extends UnaryOpcode>(opcode: O): Kernel<O> {
  return (inst, [x]) => mapUnary(resultArrayShape(inst), x!, unaryScalarFn(opcode, x!.elementType));
}

/**
 * real: of a complex operand its real parts; of a real operand the operand itself, bit for
 * bit (StableHLO: `real(x) = x` where x is not complex), so a signalling NaN or a NaN's
 * payload comes through as XLA passes it, where a trip through a JS number would quiet it.
 */
const realKernel: Kernel<"real"> = (inst, [x]) =>
  ELEMENT_TYPES[x!.elementType].kind === "complex" ? mapUnary(resultArrayShape(inst), x!, unaryScalarFn("real", x!.elementType)) : x!;

function binaryKernel<O extends ScalarBinaryOpcode>(opcode: O): Kernel<O> {
  return (inst, [a, b]) => mapBinary(resultArrayShape(inst), a!, b!, binaryScalarFn(opcode, a!.elementType));
}

// ---- compare --------------------------------------------------------------------

type Ordered = number | bigint;

const DIRECTION_FNS: Readonly<Record<ComparisonDirection, (a: Ordered, b: Ordered) => boolean>> = {
  EQ: (a, b) => a === b, NE: (a, b) => a !== b, GE: (a, b) => a >= b,
  GT: (a, b) => a > b, LE: (a, b) => a <= b, LT: (a, b) => a < b,
};

/** A key per element whose numeric order is the comparison type's order. */
function orderKeys(x: Literal, type: ComparisonType): (linear: number) => Ordered {
  if (type === "TOTALORDER") return totalOrderKeys(x);
  const values = x.values().map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : (v as number | bigint)));
  return (i) => values[i]!;
}

const compareKernel: Kernel<"compare"> = (inst, [a, b]) => {
  const shape = resultArrayShape(inst);
  const t: ElementType = a!.elementType;
  const { direction } = inst.attrs;
  const type = inst.attrs.compareType ?? defaultComparisonType(t);
  if (ELEMENT_TYPES[t].kind === "complex") {
    const equal = (x: Scalar, y: Scalar): boolean => {
      const p = x as Complex;
      const q = y as Complex;
      return p.re === q.re && p.im === q.im;
    };
    return mapBinary(shape, a!, b!, direction === "EQ" ? equal : (x, y) => !equal(x, y));
  }
  const fn = DIRECTION_FNS[direction];
  const xKey = orderKeys(a!, type);
  const yKey = orderKeys(b!, type);
  const out = Literal.zeros(shape);
  const n = elementCount(a!.arrayShape);
  for (let i = 0; i < n; i++) out.data[i] = fn(xKey(i), yKey(i)) ? 1 : 0;
  return out;
};

// ---- select, clamp --------------------------------------------------------------

const selectKernel: Kernel<"select"> = (inst, [pred, onTrue, onFalse]) => {
  // A scalar pred picks a whole operand (seed 000: also for tuples).
  if (pred!.dimensions.length === 0) return pred!.values()[0] === true ? onTrue! : onFalse!;
  const shape = resultArrayShape(inst);
  const chosen = pred!.values();
  const out = Literal.zeros(shape);
  // Slots, not values: the chosen element's bits are copied, as XLA copies them (a
  // signalling NaN stays one; narrow floats' storage holds their bit patterns).
  const width = storagePerElement(shape.elementType);
  const [dst, whenTrue, whenFalse] = [slotsOf(out), slotsOf(onTrue!), slotsOf(onFalse!)];
  for (let i = 0; i < chosen.length; i++) {
    const src = chosen[i] === true ? whenTrue : whenFalse;
    for (let k = 0; k < width; k++) dst[i * width + k] = src[i * width + k]!;
  }
  return out;
};

const clampKernel: Kernel<"clamp"> = (inst, [lo, x, hi]) => {
  const shape = resultArrayShape(inst);
  const t = x!.elementType;
  const max: BinaryFn = binaryScalarFn("maximum", t);
  const min: BinaryFn = binaryScalarFn("minimum", t);
  // clamp(lo, x, hi) = min(max(x, lo), hi), broadcasting scalar bounds (seed 000 Clamp).
  return mapBinary(shape, mapBinary(shape, x!, lo!, max), hi!, min);
};

// ---- broadcastInDim -------------------------------------------------------------

const broadcastInDimKernel: Kernel<"broadcastInDim"> = (inst, [x]) => {
  const shape = resultArrayShape(inst);
  const operand = x!;
  const outDims = shape.dimensions;
  const map = inst.attrs.broadcastDimensions;
  // Stride, in the operand, of a step along each output dimension (0 where the
  // output dimension is new or the operand's is a size-1 dimension being repeated).
  const operandStrides = rowMajorStrides(operand.dimensions);
  const strideOf = new Array<number>(outDims.length).fill(0);
  map.forEach((d, i) => {
    if (operand.dimensions[i] !== 1) strideOf[d] = operandStrides[i]!;
  });
  const out = Literal.zeros(shape);
  const n = elementCount(shape);
  const width = storagePerElement(shape.elementType);
  // Slots, not values: bits are copied (a signalling NaN stays one).
  const src = slotsOf(operand);
  const dst = slotsOf(out);
  const index = new Array<number>(outDims.length).fill(0);
  let from = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < width; k++) dst[i * width + k] = src[from * width + k]!;
    // Advance the row-major output index and the matching operand position.
    for (let d = outDims.length - 1; d >= 0; d--) {
      from += strideOf[d]!;
      if (++index[d]! < outDims[d]!) break;
      from -= strideOf[d]! * outDims[d]!;
      index[d] = 0;
    }
  }
  return out;
};

/** complex(re, im): pairs two real arrays into one complex array. */
const complexKernel: Kernel<"complex"> = (inst, [re, imag]) =>
  mapBinary(resultArrayShape(inst), re!, imag!, (x, y) => ({ re: x as number, im: y as number }));

// ---- the table ------------------------------------------------------------------

export const elementwiseKernels: KernelTable<ElementwiseShapeOpcode> = {
  ...tableOf(UNARY_OPCODES, unaryKernel),
  real: realKernel,
  ...tableOf(SCALAR_BINARY_OPCODES, binaryKernel),
  complex: complexKernel,
  compare: compareKernel,
  select: selectKernel,
  clamp: clampKernel,
  broadcastInDim: broadcastInDimKernel,
};
