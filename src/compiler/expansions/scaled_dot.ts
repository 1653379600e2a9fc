// Scaled dot (block-scaled operands: MX formats) as each operand converted to f32 and
// multiplied by its scale broadcast over its blocks, then a dot, so that the backends'
// GEMM kernels run it. Exact: the interpreter multiplies in double (an f32 value by an f32
// scale is exact in double: 48 bits of significand) and rounds the product to the
// accumulation type, f32 here, once; an f32 multiply rounds the same exact product once.
// Its dot then accumulates in f32 over the scaled values, as the plain dot of the same
// f32 values does. Left alone where the accumulation or a scale is wider than f32 (a
// product in double could round there) or a dimension is empty.

import type { Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { accumulationType } from "../../interpreter/kernels/arith.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { ArrayShape } from "../../types/shape.js";

/** Float types whose values an f32 holds exactly (every float format of 32 bits or fewer here). */
const fitsF32 = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "float" && ELEMENT_TYPES[t].bitWidth <= 32;

/** `inst` (a scaled dot) as scaled f32 operands and a dot, or undefined (see above). */
export function expandScaledDot(inst: Instruction<"scaledDot">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const [lhs, rhs, lhsScale, rhsScale] = operands as [Instruction, Instruction, Instruction, Instruction];
  const shapes = operands.map((o) => o.shape) as ArrayShape[];
  if (inst.shape.kind !== "array" || shapes.some((s) => s.kind !== "array" || s.dynamicDimensions.some((d) => d) || s.dimensions.some((d) => d === 0))) return undefined;
  if (!shapes.every((s) => fitsF32(s.elementType))) return undefined;
  if (accumulationType(inst.shape.elementType, [shapes[0]!.elementType, shapes[1]!.elementType]) !== "f32") return undefined;
  const extras = { from: inst };
  const toF32 = (x: Instruction): Instruction => ((x.shape as ArrayShape).elementType === "f32" ? x : f.add("convert", [x], { elementType: "f32" }, extras));
  const scaled = (x: Instruction, scale: Instruction): Instruction => {
    const dims = (x.shape as ArrayShape).dimensions, sdims = (scale.shape as ArrayShape).dimensions;
    // Each scale element repeated over its block: [s0, b0, s1, b1, ...] read as [s0·b0, s1·b1, ...].
    const blocks = dims.map((d, i) => d / sdims[i]!);
    const spread = f.add("broadcastInDim", [toF32(scale)], { dimensions: sdims.flatMap((s, i) => [s, blocks[i]!]), broadcastDimensions: sdims.map((_, i) => 2 * i) }, extras);
    return f.add("multiply", [toF32(x), f.add("reshape", [spread], { dimensions: [...dims] }, extras)], {}, extras);
  };
  const { dimensionNumbers, precisionConfig } = inst.attrs;
  return f.add("dot", [scaled(lhs, lhsScale), scaled(rhs, rhsScale)], { dimensionNumbers, precisionConfig, preferredElementType: inst.shape.elementType }, extras);
}
