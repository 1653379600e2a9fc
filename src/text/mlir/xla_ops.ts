// XLA ops that StableHLO has no op for, written as `stablehlo.custom_call`s that
// StableHLO's parser accepts and that import back to the same IR instruction.
//
// The spelling follows what XLA itself emits when it exports such HLO to StableHLO
// (hlo-legalize-to-stablehlo): call_target_name = "mhlo.<op>", the op's attributes in
// StableHLO's spelling under a `mhlo.attributes` dictionary. Where another spelling is
// the established one it is used instead: ragged-all-to-all is JAX's
// `custom_call @ragged_all_to_all` (api_version 4, replica groups in a backend_config
// dictionary), which XLA's importer turns back into the HLO op. XLA has no StableHLO
// export for the async collective start/done pairs (it rejects them); they use the same
// "mhlo.<hlo opcode with underscores>" pattern here, e.g. "mhlo.all_gather_start".
// (erf, top_k with largest=true and ragged_dot print as chlo ops, see print_ops.ts.)

import type { Computation, Instruction } from "../../ir/computation.js";
import type { FusionKind, OpAttributes, Opcode } from "../../ir/opcodes.js";
import type { Attr, OpNode } from "./ast.js";
import { AttrReader, toInts } from "./attr_read.js";
import type { LowerContext } from "./import_ops.js";
import { quoteString } from "./print_attr.js";
import { collectiveAttrs, dotDimensionNumbers, i64, matrix, precision } from "./print_ops.js";
import { appendAll, maxOf } from "../../types/arrays.js";

const FUSION_KINDS: readonly FusionKind[] = ["loop", "input", "output", "custom"];

/** Opcodes written as custom calls, with their call_target_name. */
export const XLA_CUSTOM_CALL_TARGETS: Partial<Record<Opcode, string>> = {
  addDependency: "mhlo.add_dependency",
  topK: "mhlo.topk",
  scaledDot: "mhlo.scaled_dot",
  raggedAllToAll: "ragged_all_to_all",
  allGatherStart: "mhlo.all_gather_start",
  allGatherDone: "mhlo.all_gather_done",
  allReduceStart: "mhlo.all_reduce_start",
  allReduceDone: "mhlo.all_reduce_done",
  collectivePermuteStart: "mhlo.collective_permute_start",
  collectivePermuteDone: "mhlo.collective_permute_done",
  fusion: "mhlo.fusion",
};

const OPCODE_OF_TARGET = new Map<string, Opcode>(
  Object.entries(XLA_CUSTOM_CALL_TARGETS).map(([op, target]) => [target, op as Opcode]),
);

/** Whether an instruction prints as an XLA custom call (top_k only when it keeps the smallest: chlo.top_k has no `largest`). */
export function printsAsXlaCustomCall(inst: Instruction): boolean {
  if (inst.opcode === "topK") return !(inst as Instruction<"topK">).attrs.largest;
  return XLA_CUSTOM_CALL_TARGETS[inst.opcode] !== undefined;
}

/** Computations an XLA custom call refers to by symbol (printed as functions). */
export function xlaCustomCallCallees(inst: Instruction): Computation[] {
  if (inst.opcode === "allReduceStart") return [(inst as Instruction<"allReduceStart">).attrs.toApply];
  if (inst.opcode === "fusion") return [(inst as Instruction<"fusion">).attrs.calledComputation];
  return [];
}

/** The generic-syntax attributes of the custom call standing for `inst`. */
export function xlaCustomCallAttributes(inst: Instruction, funcName: (c: Computation) => string): string[] {
  const target = XLA_CUSTOM_CALL_TARGETS[inst.opcode]!;
  const out = [`call_target_name = ${quoteString(target)}`];
  const a: unknown = inst.attrs;
  const inner: string[] = [];
  switch (inst.opcode) {
    case "topK": {
      const t = a as OpAttributes["topK"];
      inner.push(`k = ${i64(t.k)}`, `largest = ${t.largest}`);
      break;
    }
    case "scaledDot": {
      const t = a as OpAttributes["scaledDot"];
      appendAll(inner, [`dot_dimension_numbers = ${dotDimensionNumbers(t.dimensionNumbers)}`, ...precision(t.precisionConfig)]);
      break;
    }
    case "raggedAllToAll": {
      const t = a as OpAttributes["raggedAllToAll"];
      const config = [replicaGroupsText(t.replicaGroups)];
      if (t.channelId !== undefined) config.push(`channel_id = ${i64(t.channelId)}`);
      if (t.useGlobalDeviceIds) config.push("use_global_device_ids = true");
      out.push("api_version = 4 : i32", `backend_config = {${config.join(", ")}}`);
      return out;
    }
    case "allGatherStart": {
      const t = a as OpAttributes["allGatherStart"];
      appendAll(inner, [`all_gather_dim = ${i64(t.allGatherDimension)}`, ...collectiveAttrs(t)]);
      break;
    }
    case "allReduceStart": {
      const t = a as OpAttributes["allReduceStart"];
      appendAll(inner, collectiveAttrs(t));
      out.push(`called_computations = [${funcName(t.toApply)}]`);
      break;
    }
    case "fusion": {
      const t = a as OpAttributes["fusion"];
      inner.push(`kind = ${quoteString(t.kind)}`);
      out.push(`called_computations = [${funcName(t.calledComputation)}]`);
      break;
    }
    case "collectivePermuteStart": {
      const t = a as OpAttributes["collectivePermuteStart"];
      inner.push(`source_target_pairs = ${pairsText(t.sourceTargetPairs)}`);
      if (t.channelId !== undefined) inner.push(`channel_handle = #stablehlo.channel_handle<handle = ${t.channelId}, type = 1>`);
      break;
    }
    default: break;
  }
  // A dictionary: MLIR keeps (and prints) its entries sorted by name.
  if (inner.length > 0) out.push(`mhlo.attributes = {${inner.sort().join(", ")}}`);
  return out;
}

/** Whether a custom call's result keeps the instruction's tuple shape as one value (the async handles). */
export function xlaCustomCallHasTupleResult(inst: Instruction): boolean {
  return inst.opcode === "allGatherStart" || inst.opcode === "allReduceStart" || inst.opcode === "collectivePermuteStart";
}

function replicaGroupsText(groups: readonly (readonly number[])[]): string {
  const width = Math.max(0, maxOf(groups.map((g) => g.length)));
  const rows = groups.map((g) => [...g, ...new Array<number>(width - g.length).fill(-1)]);
  return `replica_groups = ${rows.length === 0 ? "dense<> : tensor<0x0xi64>" : matrix(rows, width)}`;
}

function pairsText(pairs: readonly (readonly [number, number])[]): string {
  return pairs.length === 0 ? "dense<> : tensor<0x2xi64>" : matrix(pairs, 2);
}

// ---------------------------------------------------------------- import

/** The IR opcode a custom call target stands for, if it is one of ours. */
export function xlaOpcodeOfTarget(target: string): Opcode | undefined {
  return OPCODE_OF_TARGET.get(target);
}

/** Lowers `stablehlo.custom_call @<target>` of an XLA-only op back to its opcode. */
export function lowerXlaCustomCall(ctx: LowerContext, opcode: Opcode): Instruction {
  // The custom call's own attributes: printing writes them again from the opcode.
  ctx.r.own("api_version", "backend_config", "has_side_effect", "called_computations", "operand_layouts", "result_layouts", "output_operand_aliases");
  const inner = ctx.r.get("mhlo.attributes");
  const r = readerOver(ctx, opcode === "raggedAllToAll" ? ctx.r.get("backend_config") : inner);
  type Collective = { replicaGroups: OpAttributes["raggedAllToAll"]["replicaGroups"]; channelId?: number; useGlobalDeviceIds?: boolean };
  const collective = (): Collective => {
    const out: Collective = { replicaGroups: r.replicaGroups() };
    const ch = r.channel();
    if (ch) out.channelId = ch.handle;
    if (r.bool("use_global_device_ids")) out.useGlobalDeviceIds = true;
    return out;
  };
  const { operands, declared } = ctx;
  switch (opcode) {
    case "addDependency": case "allGatherDone": case "allReduceDone": case "collectivePermuteDone":
      return ctx.add(opcode as "addDependency", operands, {}, declared);
    case "topK":
      return ctx.add("topK", operands, { k: r.int("k"), largest: r.bool("largest", true) }, declared);
    case "scaledDot": {
      const dims = r.struct("dot_dimension_numbers");
      const ints = (k: string): number[] => {
        const v = dims.get(k);
        return v === undefined ? [] : toInts(v) ?? ctx.fail(`bad ${k}`);
      };
      const lhs = operands[0]?.shape;
      const preferred = declared?.kind === "array" && lhs?.kind === "array" && declared.elementType !== lhs.elementType
        ? { preferredElementType: declared.elementType } : {};
      return ctx.add("scaledDot", operands, {
        dimensionNumbers: {
          lhsBatchDimensions: ints("lhs_batching_dimensions"), rhsBatchDimensions: ints("rhs_batching_dimensions"),
          lhsContractingDimensions: ints("lhs_contracting_dimensions"), rhsContractingDimensions: ints("rhs_contracting_dimensions"),
        },
        precisionConfig: r.precision(), ...preferred,
      }, declared);
    }
    case "raggedAllToAll":
      return ctx.add("raggedAllToAll", operands, collective(), declared);
    case "allGatherStart":
      return ctx.add("allGatherStart", operands, { ...collective(), allGatherDimension: r.int("all_gather_dim") }, declared);
    case "allReduceStart": {
      const called = ctx.r.get("called_computations");
      const first = called?.kind === "list" ? called.items[0] : undefined;
      if (first?.kind !== "symbol") return ctx.fail("mhlo.all_reduce_start needs called_computations = [@reducer]");
      return ctx.add("allReduceStart", operands, { ...collective(), toApply: ctx.importer.func(first.name, ctx.op.offset) }, declared);
    }
    case "fusion": {
      const called = ctx.r.get("called_computations");
      const first = called?.kind === "list" ? called.items[0] : undefined;
      if (first?.kind !== "symbol") return ctx.fail("mhlo.fusion needs called_computations = [@fused_computation]");
      const kind = r.string("kind");
      if (!FUSION_KINDS.includes(kind as FusionKind)) return ctx.fail(`mhlo.fusion: kind must be one of ${FUSION_KINDS.join(", ")}, got "${kind}"`);
      return ctx.add("fusion", operands, { kind: kind as FusionKind, calledComputation: ctx.importer.func(first.name, ctx.op.offset) }, declared);
    }
    case "collectivePermuteStart": {
      const ch = r.channel();
      const pairs = r.matrix("source_target_pairs").map((p) => [p[0]!, p[1]!] as const);
      return ctx.add("collectivePermuteStart", operands,
        ch ? { sourceTargetPairs: pairs, channelId: ch.handle } : { sourceTargetPairs: pairs }, declared);
    }
    default:
      return ctx.fail(`custom call target for '${opcode}' is not importable`);
  }
}

/** An attribute reader over a dictionary attribute of the op (missing: an empty one). */
function readerOver(ctx: LowerContext, dict: Attr | undefined): AttrReader {
  if (dict !== undefined && dict.kind !== "dict") ctx.fail("expected a dictionary of attributes");
  const op: OpNode = { ...ctx.op, attrs: dict?.kind === "dict" ? dict.entries : new Map() };
  return new AttrReader(ctx.importer.c, op);
}

