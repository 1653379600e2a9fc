// Printing Shardy in StableHLO text: the sdy ops in their own syntax (Shardy's assembly
// formats; see sdy_parse.ts), an op's typed sdy values as attribute-dictionary entries,
// a function's argument and result shardings, and the module's meshes.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import {
  printAllToAllParams, printAxesPerDim, printAxisRefList, printManualAxes, printMesh, printPropagationEdges,
  printShardingPerValue, printStrippedShardingPerValue, printTensorSharding, printTensorShardingBody,
} from "./sdy_attr_text.js";
import type { TensorSharding } from "../../sharding/model.js";
import { printOpShardingRule } from "./sdy_rule_text.js";
import { resultShapes, type SdyOpcode } from "../../ir/shape/sdy.js";
import type { Shape } from "../../types/shape.js";
import { printDenseBody } from "./literal.js";
import { quoteString } from "./print_attr.js";
import { attrDict, symbolRef } from "./print_ops.js";
import { shapeToMlir } from "./types.js";

/** What printing an sdy op needs from the function printer. */
export interface SdyOpPrinter {
  /** The SSA name of a value. */
  use(inst: Instruction): string;
  /** A body in sdy's region syntax: `(%arg1: t, ...) { ... sdy.return ... }`. */
  region(body: Computation): string;
  /** The op's attribute dictionary, ` {...}` (empty when it has none). */
  dict(inst: Instruction): string;
}

/** `sdy.propagation_edges`, `sdy.sharding` and `sdy.sharding_rule` entries of an instruction's attribute dictionary. */
export function sdyAttributeEntries(inst: Instruction): [string, string][] {
  const out: [string, string][] = [];
  if (inst.sdyPropagationEdges !== undefined) out.push(["sdy.propagation_edges", printPropagationEdges(inst.sdyPropagationEdges)]);
  if (inst.sdySharding !== undefined) out.push(["sdy.sharding", printShardingPerValue(inst.sdySharding)]);
  if (inst.sdyShardingRule !== undefined) out.push(["sdy.sharding_rule", printOpShardingRule(inst.sdyShardingRule)]);
  return out;
}

/** A function's argument or result attributes: the text ones and its `sdy.sharding`. */
export function valueAttributes(
  text: Readonly<Record<string, string>> | undefined, sharding: TensorSharding | undefined,
): Readonly<Record<string, string>> | undefined {
  if (sharding === undefined) return text;
  return Object.fromEntries(Object.entries({ ...text, "sdy.sharding": printTensorSharding(sharding) }).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `sdy.mesh @mesh = <["a"=2]>` lines. */
export function meshLines(module: HloModule, indent: string): string[] {
  return (module.meshes ?? []).map((m) => `${indent}sdy.mesh ${symbolRef(m.name)} = ${printMesh(m.mesh)}${
    attrDict(Object.entries(m.attributes ?? {}).map(([k, v]) => [k, v === "unit" ? undefined : v]))}`);
}

const types = (shapes: readonly Shape[]): string =>
  shapes.length === 1 ? shapeToMlir(shapes[0]!) : `(${shapes.map(shapeToMlir).join(", ")})`;

/** The number of results an sdy op has in MLIR. */
export function sdyResultCount(inst: Instruction): number {
  switch (inst.opcode) {
    case "sdyShardingGroup": return 0;
    case "sdyManualComputation": return (inst as Instruction<"sdyManualComputation">).attrs.outShardings.length;
    case "sdyNamedComputation": {
      const root = (inst as Instruction<"sdyNamedComputation">).attrs.body.root;
      return root.opcode === "tuple" ? root.operands.length : 1;
    }
    default: return 1;
  }
}

/** The op's text after its result names (`sdy.reshard %0 <@mesh, [...]> : tensor<8xf32>`). */
export function printSdyOp(inst: Instruction, p: SdyOpPrinter): string {
  const name = OP_TABLE[inst.opcode].stablehlo!;
  const operand = inst.operands[0] === undefined ? "" : p.use(inst.operands[0]);
  const dict = p.dict(inst);
  const type = shapeToMlir(inst.shape);
  const outSharding = (s: TensorSharding): string => `out_sharding=${printTensorShardingBody(s)}`;
  const op = inst.opcode as SdyOpcode;
  switch (op) {
    case "sdyShardingConstraint": case "sdyReshard": {
      const a = (inst as Instruction<"sdyReshard">).attrs;
      return `${name} ${operand} ${printTensorShardingBody(a.sharding)}${dict} : ${type}`;
    }
    case "sdyDataFlowEdge": {
      const s = (inst as Instruction<"sdyDataFlowEdge">).attrs.sharding;
      return `${name} ${operand}${s !== undefined ? ` sharding=${printTensorShardingBody(s)}` : ""}${dict} : ${type}`;
    }
    case "sdyFuncDataFlowEdge":
      return `${name} ${operand}${dict} : ${type}`;
    case "sdyPropagationBarrier":
      return `${name} ${operand} allowed_direction=${(inst as Instruction<"sdyPropagationBarrier">).attrs.allowedDirection}${dict} : ${type}`;
    case "sdyShardingGroup":
      return `${name} ${operand} group_id=${(inst as Instruction<"sdyShardingGroup">).attrs.groupId}${dict} : ${shapeToMlir(inst.operands[0]!.shape)}`;
    case "sdyConstant": {
      const lit = (inst as Instruction<"sdyConstant">).attrs.literal;
      return `${name}${dict} ${printDenseBody(lit)} : ${shapeToMlir(lit.shape)}`;
    }
    case "sdyManualComputation": {
      const a = (inst as Instruction<"sdyManualComputation">).attrs;
      const results = resultShapes(a.resultShape, a.outShardings.length);
      return `${name}(${inst.operands.map((o) => p.use(o)).join(", ")}) in_shardings=${printStrippedShardingPerValue(a.inShardings)} ` +
        `out_shardings=${printStrippedShardingPerValue(a.outShardings)} manual_axes=${printManualAxes(a.manualAxes)} ${p.region(a.body)}${dict} : ` +
        `(${inst.operands.map((o) => shapeToMlir(o.shape)).join(", ")}) -> ${a.outShardings.length === 0 ? "()" : types(results)}`;
    }
    case "sdyNamedComputation": {
      const a = (inst as Instruction<"sdyNamedComputation">).attrs;
      const count = sdyResultCount(inst);
      const shardings = [
        ...(a.inShardings !== undefined ? [` in_shardings=${printStrippedShardingPerValue(a.inShardings)}`] : []),
        ...(a.outShardings !== undefined ? [` out_shardings=${printStrippedShardingPerValue(a.outShardings)}`] : []),
      ].join("");
      return `${name}<${quoteString(a.name)}>(${inst.operands.map((o) => p.use(o)).join(", ")})${shardings} ${p.region(a.body)}${dict} : ` +
        `(${inst.operands.map((o) => shapeToMlir(o.shape)).join(", ")}) -> ${count === 0 ? "()" : types(resultShapes(inst.shape, count))}`;
    }
    case "sdyAllGather":
      return `${name} ${printAxesPerDim((inst as Instruction<"sdyAllGather">).attrs.gatheringAxes)} ${operand} ${outSharding((inst as Instruction<"sdyAllGather">).attrs.outSharding)}${dict} : ${type}`;
    case "sdyAllSlice":
      return `${name} ${printAxesPerDim((inst as Instruction<"sdyAllSlice">).attrs.slicingAxes)} ${operand} ${outSharding((inst as Instruction<"sdyAllSlice">).attrs.outSharding)}${dict} : ${type}`;
    case "sdyAllReduce": {
      const a = (inst as Instruction<"sdyAllReduce">).attrs;
      const reduction = a.reductionOp !== undefined && a.reductionOp !== "sum" ? `${a.reductionOp} ` : "";
      return `${name} ${reduction}${printAxisRefList(a.reductionAxes)} ${operand} ${outSharding(a.outSharding)}${dict} : ${type}`;
    }
    case "sdyReduceScatter": {
      const a = (inst as Instruction<"sdyReduceScatter">).attrs;
      const reduction = a.reductionOp !== undefined && a.reductionOp !== "sum" ? `${a.reductionOp} ` : "";
      return `${name} ${reduction}${printAxesPerDim(a.reduceScatterAxes)} ${operand} ${outSharding(a.outSharding)}${dict} : ${type}`;
    }
    case "sdyAllToAll":
      return `${name} ${printAllToAllParams((inst as Instruction<"sdyAllToAll">).attrs.params)} ${operand} ${outSharding((inst as Instruction<"sdyAllToAll">).attrs.outSharding)}${dict} : ${type}`;
    case "sdyCollectivePermute":
      return `${name} ${operand} ${outSharding((inst as Instruction<"sdyCollectivePermute">).attrs.outSharding)}${dict} : ${type}`;
    case "sdyShardedToUnreduced":
      return `${name} ${printAxesPerDim((inst as Instruction<"sdyShardedToUnreduced">).attrs.axes)} ${operand} ${outSharding((inst as Instruction<"sdyShardedToUnreduced">).attrs.outSharding)}${dict} : ${type}`;
    case "sdyReplicatedToUnreduced":
      return `${name} ${printAxisRefList((inst as Instruction<"sdyReplicatedToUnreduced">).attrs.axes)} ${operand} ${outSharding((inst as Instruction<"sdyReplicatedToUnreduced">).attrs.outSharding)}${dict} : ${type}`;
  }
}
