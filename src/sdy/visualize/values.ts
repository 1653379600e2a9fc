// The tensors of a function that can carry a sharding, named as the StableHLO text
// names them: arguments (`%arg0`), op results (`%0`, `%r#1` for the second result of
// a multi-result op) and function results (`result#0`). Each comes with its sharding
// when it has one: the argument and result attributes, an op's `sdy.sharding`, the
// sharding operand of the sdy ops that hold one (sharding_constraint, reshard,
// data_flow_edge, the sdy collectives), a manual or named computation's out_shardings;
// in HLO text, an instruction's `sharding=` (hlo_sharding_convert.ts converts it).

import type { Computation, Instruction } from "../../ir/computation.js";
import { isOp } from "../../ir/computation.js";
import { sourceLocation, type SourceLocation } from "../../ir/locations.js";
import { attrSharding, mlirResultCount } from "../propagation/ir_graph.js";
import { parseHloSharding } from "../../sharding/hlo_sharding.js";
import { hloShardingToSdy } from "../hlo_sharding_convert.js";
import type { TensorSharding } from "../../sharding/model.js";
import type { Shape } from "../../types/shape.js";

export interface FunctionValue {
  /** `%arg0`, `%0`, `%r#1`, `result#0`. */
  readonly name: string;
  readonly shape: Shape;
  readonly sharding?: TensorSharding;
  /** Where the value is defined in the text (its op, or its function for arguments and results). */
  readonly location?: SourceLocation;
  /** The instruction whose result it is (an argument's parameter; none for function results). */
  readonly producer?: Instruction;
}

function elementShapes(shape: Shape, count: number): readonly Shape[] {
  if (count === 0) return [];
  return count > 1 && shape.kind === "tuple" ? shape.elements : [shape];
}

/**
 * The sharding of result `index` of `inst`, wherever its op keeps it; for HLO text,
 * XLA's `sharding=` as a sharding on an inline mesh where Shardy can say it.
 */
function resultSharding(inst: Instruction, index: number, count: number): TensorSharding | undefined {
  const fromAttr = attrSharding(inst);
  if (fromAttr !== undefined) return fromAttr.sharding;
  if (isOp(inst, "sdyManualComputation")) return inst.attrs.outShardings[index];
  if (isOp(inst, "sdyNamedComputation")) return inst.attrs.outShardings?.[index];
  if (inst.sdySharding !== undefined) return inst.sdySharding[index];
  return inst.sharding !== undefined && count === 1 ? hloShardingToSdy(parseHloSharding(inst.sharding), inst.shape)?.sharding : undefined;
}

/** An op's results as values: one per MLIR result. */
function opValues(inst: Instruction): FunctionValue[] {
  const count = mlirResultCount(inst);
  const at = sourceLocation(inst);
  return elementShapes(inst.shape, count).map((shape, i) => {
    const sharding = resultSharding(inst, i, count);
    return {
      name: count > 1 ? `%${inst.name}#${i}` : `%${inst.name}`,
      shape, producer: inst,
      ...(sharding !== undefined ? { sharding } : {}),
      ...(at !== undefined ? { location: at } : {}),
    };
  });
}

/**
 * Every value of `func` at its top level, in text order: arguments, op results, then
 * function results. The values inside regions (loop bodies, branches, manual
 * computation bodies, whose shardings are per device) are not listed; nor are the
 * tuple plumbing ops the importer makes for multi-result ops and returns.
 */
export function functionValues(func: Computation): FunctionValue[] {
  const funcAt = sourceLocation(func);
  const withLocation = (at: SourceLocation | undefined): { location?: SourceLocation } => (at !== undefined ? { location: at } : {});
  const args: FunctionValue[] = func.parameters.map((p, i) => {
    const sharding = func.argShardings?.[i] ?? resultSharding(p, 0, 1);
    return { name: `%${p.name}`, shape: p.shape, producer: p, ...(sharding !== undefined ? { sharding } : {}), ...withLocation(sourceLocation(p) ?? funcAt) };
  });
  const resultCount = func.resultShardings?.length ?? (func.root.opcode === "tuple" ? func.root.operands.length : 1);
  const results: FunctionValue[] = elementShapes(func.root.shape, resultCount).map((shape, i) => {
    const sharding = func.resultShardings?.[i];
    return { name: `result#${i}`, shape, ...(sharding !== undefined ? { sharding } : {}), ...withLocation(funcAt) };
  });
  const plumbing = (inst: Instruction): boolean =>
    inst.opcode === "parameter" || inst.opcode === "getTupleElement" || (inst === func.root && inst.opcode === "tuple" && resultCount > 1);
  const ops = func.instructions.filter((inst) => !plumbing(inst)).flatMap(opValues);
  return [...args, ...ops, ...results];
}

/** The value `name` names: `%x` or `x`; undefined when `func` has none. */
export function findValue(values: readonly FunctionValue[], name: string): FunctionValue | undefined {
  const wanted = name.startsWith("%") || name.startsWith("result#") ? name : `%${name}`;
  return values.find((v) => v.name === wanted);
}
