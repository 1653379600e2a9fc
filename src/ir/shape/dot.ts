// Shape rules of the dot family: Dot (DotGeneral), ScaledDot and RaggedDot. They share
// the dimension-number checks and the result element type rule.

import type { DotDimensionNumbers } from "../attributes.js";
import type { Opcode } from "../opcodes.js";
import { bitWidth, ELEMENT_TYPES, isFloat, isInteger, type ElementType } from "../../types/element_type.js";
import { arrayShape, shapeToString, type ArrayShape } from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";
import { checkDimensionList } from "./subcomputation.js";
import { range } from "../../types/arrays.js";

/**
 * The element type of a dot-like result: the operands' type (the wider one when both
 * are floats of different widths), or `preferred` when given. As in XLA, a preferred
 * type may not narrow an integer type, and floats and complex values stay what they are.
 */
export function dotResultType(opcode: Opcode, lhs: ElementType, rhs: ElementType, preferred?: ElementType): ElementType {
  let base = lhs;
  if (lhs !== rhs) {
    if (!(isFloat(lhs) && isFloat(rhs))) {
      throw shapeError(opcode, "rhs", `has element type ${rhs} but lhs has ${lhs}; both operands must have the same type`);
    }
    base = bitWidth(rhs) > bitWidth(lhs) ? rhs : lhs;
  }
  if (preferred === undefined || preferred === base) return base;
  const from = ELEMENT_TYPES[base].kind, to = ELEMENT_TYPES[preferred].kind;
  const ok =
    (from === "float" && to === "float") ||
    (from === "complex" && to === "complex") ||
    ((from === "signed" || from === "unsigned" || from === "pred") && (to === "float" || to === "complex" || isInteger(preferred))) ||
    (from === "float" && to === "complex");
  if (!ok) {
    throw shapeError(opcode, "preferred_element_type", `${preferred} cannot hold a dot of ${base} operands`);
  }
  if (isInteger(base) && isInteger(preferred) && bitWidth(preferred) < bitWidth(base)) {
    throw shapeError(opcode, "preferred_element_type", `${preferred} must not be narrower than the operand type ${base}`);
  }
  return preferred;
}

/** precision_config lists one precision per operand (lhs, rhs) or is empty. */
export function checkPrecisionConfig(opcode: Opcode, config: readonly string[]): void {
  if (config.length !== 0 && config.length !== 2) {
    throw shapeError(opcode, "precision_config", `must be empty or list 2 precisions (lhs, rhs), got ${config.length}`);
  }
  for (const p of config) {
    if (p !== "DEFAULT" && p !== "HIGH" && p !== "HIGHEST") {
      throw shapeError(opcode, "precision_config", `unknown precision ${p}; expected DEFAULT, HIGH or HIGHEST`);
    }
  }
}

export interface DotLayout {
  /** lhs dimensions that are neither batch nor contracting, in order. */
  readonly lhsFree: number[];
  /** rhs dimensions that are neither batch, contracting nor excluded (a ragged group dim). */
  readonly rhsFree: number[];
  /** Result dimension sizes: batch, then lhs free, then rhs free. */
  readonly resultDims: number[];
}

/** Checks dimension numbers against the operand shapes and lays out the result. */
export function checkDotDimensions(
  opcode: Opcode, lhs: ArrayShape, rhs: ArrayShape, dn: DotDimensionNumbers, rhsExcluded: readonly number[] = [],
): DotLayout {
  const pairs = (what: string, l: readonly number[], r: readonly number[]): void => {
    if (l.length !== r.length) {
      throw shapeError(opcode, "dimension_numbers",
        `lhs has ${l.length} ${what} dimension(s) but rhs has ${r.length}`);
    }
    l.forEach((ld, i) => {
      const rd = r[i]!;
      const ls = lhs.dimensions[ld]!, rs = rhs.dimensions[rd]!;
      if (ls !== rs) {
        throw shapeError(opcode, "dimension_numbers",
          `lhs ${what} dimension ${ld} has size ${ls} but rhs ${what} dimension ${rd} has size ${rs}`);
      }
    });
  };
  checkDimensionList(opcode, "lhs batch and contracting dimensions",
    [...dn.lhsBatchDimensions, ...dn.lhsContractingDimensions], lhs.dimensions.length);
  checkDimensionList(opcode, "rhs batch and contracting dimensions",
    [...dn.rhsBatchDimensions, ...dn.rhsContractingDimensions, ...rhsExcluded], rhs.dimensions.length);
  pairs("batch", dn.lhsBatchDimensions, dn.rhsBatchDimensions);
  pairs("contracting", dn.lhsContractingDimensions, dn.rhsContractingDimensions);
  const free = (rank: number, used: readonly number[]): number[] =>
    range(rank).filter((d) => !used.includes(d));
  const lhsFree = free(lhs.dimensions.length, [...dn.lhsBatchDimensions, ...dn.lhsContractingDimensions]);
  const rhsFree = free(rhs.dimensions.length, [...dn.rhsBatchDimensions, ...dn.rhsContractingDimensions, ...rhsExcluded]);
  const resultDims = [
    ...dn.lhsBatchDimensions.map((d) => lhs.dimensions[d]!),
    ...lhsFree.map((d) => lhs.dimensions[d]!),
    ...rhsFree.map((d) => rhs.dimensions[d]!),
  ];
  return { lhsFree, rhsFree, resultDims };
}

function checkDotOperandType(opcode: Opcode, argument: string, s: ArrayShape): void {
  if (ELEMENT_TYPES[s.elementType].kind === "pred" && opcode !== "dot") {
    throw shapeError(opcode, argument, `element type pred is not supported`);
  }
}

export const dotShapeRules: ShapeRuleTable<"dot" | "scaledDot" | "raggedDot"> = {
  dot: (operands, attrs) => {
    checkPrecisionConfig("dot", attrs.precisionConfig);
    expectOperandCount("dot", operands, 2);
    const lhs = expectArray("dot", "lhs", operands[0]);
    const rhs = expectArray("dot", "rhs", operands[1]);
    const type = dotResultType("dot", lhs.elementType, rhs.elementType, attrs.preferredElementType);
    return arrayShape(type, checkDotDimensions("dot", lhs, rhs, attrs.dimensionNumbers).resultDims);
  },

  // Operands: lhs, rhs, lhs scale, rhs scale. Each scale has the operand's rank and
  // each operand dimension is a whole number of blocks of the scale's dimension: the
  // operand is multiplied by its scale broadcast blockwise before the dot.
  scaledDot: (operands, attrs) => {
    checkPrecisionConfig("scaledDot", attrs.precisionConfig);
    expectOperandCount("scaledDot", operands, 4);
    const lhs = expectArray("scaledDot", "lhs", operands[0]);
    const rhs = expectArray("scaledDot", "rhs", operands[1]);
    checkDotOperandType("scaledDot", "lhs", lhs);
    checkDotOperandType("scaledDot", "rhs", rhs);
    [[lhs, operands[2], "lhs_scale"], [rhs, operands[3], "rhs_scale"]].forEach(([op, s, name]) => {
      const operand = op as ArrayShape;
      const scale = expectArray("scaledDot", name as string, s as ArrayShape);
      if (!isFloat(scale.elementType)) {
        throw shapeError("scaledDot", name as string, `must have a floating-point type, got ${scale.elementType}`);
      }
      if (scale.dimensions.length !== operand.dimensions.length) {
        throw shapeError("scaledDot", name as string,
          `shape ${shapeToString(scale)} must have the rank of its operand ${shapeToString(operand)}`);
      }
      scale.dimensions.forEach((sd, i) => {
        const od = operand.dimensions[i]!;
        if (sd === 0 ? od !== 0 : od % sd !== 0) {
          throw shapeError("scaledDot", name as string,
            `dimension ${i} of size ${sd} does not divide the operand's dimension of size ${od} into whole blocks`);
        }
      });
    });
    if (!isFloat(lhs.elementType) || !isFloat(rhs.elementType)) {
      throw shapeError("scaledDot", "lhs", `operands must be floating point, got ${lhs.elementType} and ${rhs.elementType}`);
    }
    const type = dotResultType("scaledDot", lhs.elementType, rhs.elementType, attrs.preferredElementType);
    return arrayShape(type, checkDotDimensions("scaledDot", lhs, rhs, attrs.dimensionNumbers).resultDims);
  },

  raggedDot: (operands, attrs) => {
    checkPrecisionConfig("raggedDot", attrs.precisionConfig);
    expectOperandCount("raggedDot", operands, 3);
    const lhs = expectArray("raggedDot", "lhs", operands[0]);
    const rhs = expectArray("raggedDot", "rhs", operands[1]);
    const groupSizes = expectArray("raggedDot", "group_sizes", operands[2]);
    checkDotOperandType("raggedDot", "lhs", lhs);
    const mode = raggedDotMode(lhs, rhs, groupSizes, attrs.dimensionNumbers);
    const type = dotResultType("raggedDot", lhs.elementType, rhs.elementType, attrs.preferredElementType);
    const dn = attrs.dimensionNumbers;
    const layout = checkDotDimensions("raggedDot", lhs, rhs, dn.dotDimensionNumbers, dn.rhsGroupDimensions);
    const dims = mode.kind === "contracting" ? [mode.groupCount, ...layout.resultDims] : layout.resultDims;
    return arrayShape(type, dims);
  },
};

export interface RaggedDotMode {
  /** Which kind of lhs dimension is ragged: a free (non-contracting) one, a contracting one or a batch one. */
  readonly kind: "nonContracting" | "contracting" | "batch";
  readonly raggedDim: number;
  readonly groupCount: number;
}

/** Validates RaggedDot's ragged/group dimensions and tells its mode (see chlo.ragged_dot). */
export function raggedDotMode(
  lhs: ArrayShape, rhs: ArrayShape, groupSizes: ArrayShape,
  dn: { dotDimensionNumbers: DotDimensionNumbers; lhsRaggedDimensions: readonly number[]; rhsGroupDimensions: readonly number[] },
): RaggedDotMode {
  if (!isInteger(groupSizes.elementType) || groupSizes.dimensions.length !== 1) {
    throw shapeError("raggedDot", "group_sizes", `must be a rank-1 integer array [g], got ${shapeToString(groupSizes)}`);
  }
  const g = groupSizes.dimensions[0]!;
  if (dn.lhsRaggedDimensions.length !== 1) {
    throw shapeError("raggedDot", "lhs_ragged_dimensions", `must name exactly one lhs dimension, got [${dn.lhsRaggedDimensions.join(", ")}]`);
  }
  const raggedDim = dn.lhsRaggedDimensions[0]!;
  checkDimensionList("raggedDot", "lhs_ragged_dimensions", [raggedDim], lhs.dimensions.length);
  const dd = dn.dotDimensionNumbers;
  const kind = dd.lhsContractingDimensions.includes(raggedDim) ? "contracting"
    : dd.lhsBatchDimensions.includes(raggedDim) ? "batch" : "nonContracting";
  if (kind === "nonContracting") {
    if (dn.rhsGroupDimensions.length !== 1) {
      throw shapeError("raggedDot", "rhs_group_dimensions",
        `a ragged non-contracting lhs dimension needs exactly one rhs group dimension, got [${dn.rhsGroupDimensions.join(", ")}]`);
    }
    const gd = dn.rhsGroupDimensions[0]!;
    checkDimensionList("raggedDot", "rhs_group_dimensions", [gd], rhs.dimensions.length);
    if (rhs.dimensions[gd] !== g) {
      throw shapeError("raggedDot", "group_sizes",
        `has ${g} group(s) but rhs group dimension ${gd} has size ${rhs.dimensions[gd]}`);
    }
  } else if (dn.rhsGroupDimensions.length !== 0) {
    throw shapeError("raggedDot", "rhs_group_dimensions", `must be empty when the ragged lhs dimension is a ${kind} dimension`);
  }
  return { kind, raggedDim, groupCount: g };
}
