// Shardy in StableHLO text -> typed IR: sdy ops become the sdy opcodes, an op's
// `sdy.sharding` / `sdy.propagation_edges` become the instruction's typed fields, a
// function's argument and result `sdy.sharding` become the computation's argument and
// result shardings, `sdy.mesh` ops become the module's meshes. What MLIR verifies while
// building an op (a named computation's inferred result types, its block arguments) is
// checked here with MLIR's words, since the IR cannot hold the ill-formed op.

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import type { SdyAttribute } from "./sdy_attr_text.js";
import { sdyParseError, SdyParseError, diagnosticAt } from "./diagnostics.js";
import type {
  OpShardingRule, PropagationDirection, PropagationEdges, ReductionOp, TensorSharding, TensorShardingPerValue,
} from "../../sharding/model.js";
import { bodyResults } from "../../ir/shape/sdy.js";
import { shapesEqual, tupleShape, type Shape } from "../../types/shape.js";
import type { Attr, OpNode, Region } from "./ast.js";
import type { Cursor } from "./cursor.js";
import { freeValues } from "./import.js";
import type { LowerContext } from "./import_ops.js";
import { attrToText } from "./print_attr.js";
import { shapeToMlir } from "./types.js";

/** Dictionary entries that become typed IR fields (the rest stays text in frontendAttributes). */
export const SDY_TYPED_ATTRIBUTES: ReadonlySet<string> = new Set(["sdy.sharding", "sdy.sharding_rule", "sdy.propagation_edges"]);

/** An op's typed sdy values. */
export interface SdyValues {
  sdySharding?: TensorShardingPerValue;
  sdyShardingRule?: OpShardingRule;
  sdyPropagationEdges?: PropagationEdges;
}

const opError = (op: OpNode, message: string): string => `'${op.name}' op ${message}`;

/** The typed sdy values of an op's attribute dictionary (MLIR's verifier message where one has the wrong kind). */
export function sdyValuesOf(c: Cursor, op: OpNode): SdyValues {
  const out: SdyValues = {};
  const sharding = op.attrs.get("sdy.sharding");
  if (sharding !== undefined) {
    if (sharding.kind !== "sdy" || sharding.value.kind !== "shardingPerValue") {
      throw sdyParseError(c, opError(op, "should have a sharding attribute of type TensorShardingPerValueAttr"), op.offset);
    }
    out.sdySharding = sharding.value.value;
  }
  const rule = op.attrs.get("sdy.sharding_rule");
  if (rule !== undefined) {
    if (rule.kind !== "sdy" || rule.value.kind !== "shardingRule") {
      throw sdyParseError(c, opError(op, "should have a sharding rule attribute of type OpShardingRuleAttr for attr named 'sdy.sharding_rule'"), op.offset);
    }
    out.sdyShardingRule = rule.value.value;
  }
  const edges = op.attrs.get("sdy.propagation_edges");
  if (edges !== undefined) {
    if (edges.kind !== "sdy" || edges.value.kind !== "propagationEdges") {
      throw sdyParseError(c, opError(op,
        "should have a propagation edges attribute of type PropagationEdgesAttr for attr named 'sdy.propagation_edges'"), op.offset);
    }
    out.sdyPropagationEdges = edges.value.value;
  }
  for (const key of ["sdy.result_propagation_edges", "sdy.block_arg_propagation_edges"]) {
    const list = op.attrs.get(key);
    if (list !== undefined && (list.kind !== "list" || list.items.some((e) => e.kind !== "sdy" || e.value.kind !== "propagationEdges"))) {
      throw sdyParseError(c, opError(op, "should have a propagation edges attribute of type ArrayAttr<PropagationEdgesAttr> for attr " +
        "named 'sdy.result_propagation_edges' or 'sdy.block_arg_propagation_edges'"), op.offset);
    }
  }
  return out;
}

/**
 * A function's `arg_attrs` or `res_attrs`: the `sdy.sharding` of each value, and the
 * other entries as text.
 */
export function splitValueAttributes(
  c: Cursor, list: Attr | undefined, kind: "arg" | "result", funcOffset: number,
): { shardings?: (TensorSharding | undefined)[]; text?: Record<string, string>[] } {
  if (list?.kind !== "list") return {};
  const shardings: (TensorSharding | undefined)[] = [];
  const text: Record<string, string>[] = [];
  list.items.forEach((d, i) => {
    const rest: Record<string, string> = {};
    let sharding: TensorSharding | undefined;
    if (d.kind === "dict") {
      for (const [k, v] of d.entries) {
        if (k !== "sdy.sharding") {
          rest[k] = attrToText(v);
          continue;
        }
        if (v.kind !== "sdy" || v.value.kind !== "sharding") {
          throw sdyParseError(c, `'func.func' op ${kind} ${i} - should have a sharding attribute of type TensorShardingAttr`, funcOffset);
        }
        sharding = v.value.value;
      }
    }
    shardings.push(sharding);
    text.push(rest);
  });
  return {
    ...(shardings.some((s) => s !== undefined) ? { shardings } : {}),
    ...(text.some((t) => Object.keys(t).length > 0) ? { text } : {}),
  };
}

// ---------------------------------------------------------------- sdy ops

/** The typed attribute `key` of the op, of the given kind. */
function sdyAttr<K extends SdyAttribute["kind"]>(ctx: LowerContext, key: string, kind: K): (SdyAttribute & { kind: K }) | undefined {
  const a = ctx.r.get(key);
  if (a === undefined) return undefined;
  if (a.kind !== "sdy" || a.value.kind !== kind) return ctx.fail(`attribute ${key} must be an sdy ${kind} attribute, got ${attrToText(a)}`);
  return a.value as SdyAttribute & { kind: K };
}

function need<K extends SdyAttribute["kind"]>(ctx: LowerContext, key: string, kind: K): SdyAttribute & { kind: K } {
  return sdyAttr(ctx, key, kind) ?? ctx.fail(`missing attribute ${key}`);
}

/** An enum written bare (`NONE`, pretty form) or as `#sdy<propagation_direction NONE>` (generic form). */
function enumValue(ctx: LowerContext, key: string): string | undefined {
  const a = ctx.r.get(key);
  if (a === undefined) return undefined;
  if (a.kind === "enum") return a.value;
  if (a.kind === "sdy" && a.value.kind === "enum") return a.value.value;
  return ctx.fail(`attribute ${key} must be a keyword`);
}

function oneOf<T extends string>(ctx: LowerContext, key: string, value: string | undefined, cases: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(cases as readonly string[]).includes(value)) return ctx.fail(`${key} must be one of ${cases.join(", ")}, got ${value}`);
  return value as T;
}

const COLLECTIVES: Readonly<Record<string, { readonly opcode: Opcode; readonly field: string; readonly key: string; readonly kind: "axesPerDim" | "axisRefList" | "allToAllParams" } | undefined>> = {
  "sdy.all_gather": { opcode: "sdyAllGather", field: "gatheringAxes", key: "gathering_axes", kind: "axesPerDim" },
  "sdy.all_slice": { opcode: "sdyAllSlice", field: "slicingAxes", key: "slicing_axes", kind: "axesPerDim" },
  "sdy.reduce_scatter": { opcode: "sdyReduceScatter", field: "reduceScatterAxes", key: "reduce_scatter_axes", kind: "axesPerDim" },
  "sdy.all_reduce": { opcode: "sdyAllReduce", field: "reductionAxes", key: "reduction_axes", kind: "axisRefList" },
  "sdy.all_to_all": { opcode: "sdyAllToAll", field: "params", key: "params", kind: "allToAllParams" },
  "sdy.sharded_to_unreduced": { opcode: "sdyShardedToUnreduced", field: "axes", key: "axes", kind: "axesPerDim" },
  "sdy.replicated_to_unreduced": { opcode: "sdyReplicatedToUnreduced", field: "axes", key: "axes", kind: "axisRefList" },
};

/** One sdy op -> its sdy opcode. */
export function lowerSdyOp(ctx: LowerContext): Instruction {
  const { op, operands, declared } = ctx;
  const sharding = (key: string): TensorSharding => need(ctx, key, "sharding").value;
  const perValue = (key: string): TensorShardingPerValue | undefined => sdyAttr(ctx, key, "shardingPerValue")?.value;
  switch (op.name) {
    case "sdy.sharding_constraint":
      return ctx.add("sdyShardingConstraint", operands, { sharding: sharding("sharding") }, declared);
    case "sdy.reshard":
      return ctx.add("sdyReshard", operands, { sharding: sharding("sharding") }, declared);
    case "sdy.data_flow_edge": {
      const s = sdyAttr(ctx, "sharding", "sharding")?.value;
      return ctx.add("sdyDataFlowEdge", operands, s === undefined ? {} : { sharding: s }, declared);
    }
    case "sdy.func_data_flow_edge":
      return ctx.add("sdyFuncDataFlowEdge", operands, {}, declared);
    case "sdy.propagation_barrier": {
      const direction = oneOf<PropagationDirection>(ctx, "allowed_direction", enumValue(ctx, "allowed_direction"), ["NONE", "FORWARD", "BACKWARD", "BOTH"]);
      return ctx.add("sdyPropagationBarrier", operands, { allowedDirection: direction ?? ctx.fail("missing attribute allowed_direction") }, declared);
    }
    case "sdy.sharding_group":
      return ctx.add("sdyShardingGroup", operands, { groupId: ctx.r.int("group_id") }, undefined);
    case "sdy.constant": {
      const v = ctx.r.get("value");
      if (v?.kind !== "dense") return ctx.fail("expected a dense<...> value");
      return ctx.add("sdyConstant", [], { literal: v.literal }, declared);
    }
    case "sdy.manual_computation": {
      const inShardings = need(ctx, "in_shardings", "shardingPerValue").value;
      const outShardings = need(ctx, "out_shardings", "shardingPerValue").value;
      const region = isolatedRegion(ctx);
      checkManualComputationCounts(ctx, inShardings.length, outShardings.length, region);
      const body = ctx.importer.region(region, ctx.b.name, { kind: "plain" }, ctx.scope);
      return ctx.add("sdyManualComputation", operands, {
        inShardings, outShardings, manualAxes: need(ctx, "manual_axes", "manualAxes").value, body, resultShape: declared ?? tupleShape([]),
      }, declared);
    }
    case "sdy.named_computation":
      return lowerNamedComputation(ctx, perValue("in_shardings"), perValue("out_shardings"));
    case "sdy.collective_permute":
      return ctx.add("sdyCollectivePermute", operands, { outSharding: sharding("out_sharding") }, declared);
    default: {
      const spec = Object.prototype.hasOwnProperty.call(COLLECTIVES, op.name) ? COLLECTIVES[op.name] : undefined;
      if (spec === undefined) return ctx.fail(`unknown operation '${op.name}'`);
      const reductionOp = oneOf<ReductionOp>(ctx, "reduction_op", enumValue(ctx, "reduction_op"), ["sum", "max", "min"]);
      const attrs = {
        [spec.field]: need(ctx, spec.key, spec.kind).value, outSharding: sharding("out_sharding"),
        ...(reductionOp !== undefined && reductionOp !== "sum" ? { reductionOp } : {}),
      };
      return ctx.add(spec.opcode as "sdyAllGather", operands, attrs as never, declared);
    }
  }
}

/** The op's body, which may only use its own block arguments (sdy's region ops are isolated from above). */
function isolatedRegion(ctx: LowerContext): Region {
  const { op } = ctx;
  const region = op.regions[0] ?? ctx.fail("missing its body");
  const outside = new Set(freeValues(region).map((u) => `${u.name}#${u.index}`));
  if (outside.size === 0) return region;
  const c = ctx.importer.c;
  const user = findUser(region, outside);
  throw new SdyParseError([
    diagnosticAt(c, `'${user?.name ?? op.name}' op using value defined outside the region`, user?.offset ?? op.offset),
    { ...diagnosticAt(c, "required by region isolation constraints", op.offset), severity: "note" },
  ], c.error("", op.offset).sourceLine, c.fileName);
}

/** The first op (at any depth) of `region` that uses one of `values`. */
function findUser(region: Region, values: ReadonlySet<string>): OpNode | undefined {
  for (const o of region.block.ops) {
    if (o.operands.some((u) => values.has(`${u.name}#${u.index}`))) return o;
    for (const r of o.regions) {
      const inner = findUser(r, values);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/**
 * The counts MLIR's verifier checks first (the IR cannot hold a manual computation
 * whose counts disagree): shardings per value, then body arguments and results.
 */
function checkManualComputationCounts(ctx: LowerContext, ins: number, outs: number, region: Region): void {
  const { op } = ctx;
  const c = ctx.importer.c;
  const fail = (message: string): never => {
    throw sdyParseError(c, `'${op.name}' op ${message}`, op.offset);
  };
  const side = (kind: string, shardings: number, values: number, regionValues: number): void => {
    if (shardings === 0 && values === 0 && regionValues === 0) return;
    if (shardings !== values && !(values === 0 && shardings === 1)) {
      fail(`${kind} shardings don't match number of values: ${shardings} shardings vs ${values} values`);
    }
    if (values !== regionValues) {
      fail(`number of op ${kind}s and region ${kind}s must match. Op has ${values} op ${kind}s and ${regionValues} region ${kind}s`);
    }
  };
  side("operand", ins, op.operands.length, region.block.args.length);
  const ret = region.block.ops.at(-1);
  side("result", outs, op.resultTypes.length, ret?.name === "sdy.return" ? ret.operands.length : 0);
}

/** MLIR's checks of a named computation's block arguments and inferred results, in its words. */
function lowerNamedComputation(
  ctx: LowerContext, inShardings: TensorShardingPerValue | undefined, outShardings: TensorShardingPerValue | undefined,
): Instruction {
  const { op, operands } = ctx;
  const c = ctx.importer.c;
  const region = isolatedRegion(ctx);
  const args = region.block.args;
  if (args.length !== operands.length) {
    throw sdyParseError(c, `number of block arguments must match the number of operands: ${args.length} != ${operands.length}`, op.offset);
  }
  args.forEach((a, i) => {
    if (!shapesEqual(a.shape, operands[i]!.shape)) {
      throw sdyParseError(c, `expected the type of the ${i}'th block argument to match the type of the corresponding operand: '${
        shapeToMlir(a.shape)}' vs '${shapeToMlir(operands[i]!.shape)}'`, op.offset);
    }
  });
  const body = ctx.importer.region(region, ctx.b.name, { kind: "plain" }, ctx.scope);
  const inferred = bodyResults(body);
  if (inferred.length !== op.resultTypes.length || inferred.some((t, i) => !shapesEqual(t, op.resultTypes[i]!))) {
    const list = (ts: readonly Shape[]): string => ts.map((t) => `'${shapeToMlir(t)}'`).join(", ");
    throw new SdyParseError([
      diagnosticAt(c, "failed to infer returned types", op.offset),
      diagnosticAt(c, `'${op.name}' op inferred type(s) ${list(inferred)} are incompatible with return type(s) of operation ${list(op.resultTypes)}`, op.offset),
    ], c.error("", op.offset).sourceLine, c.fileName);
  }
  return ctx.add("sdyNamedComputation", operands, {
    name: ctx.r.string("name"), body,
    ...(inShardings !== undefined ? { inShardings } : {}), ...(outShardings !== undefined ? { outShardings } : {}),
  }, ctx.declared);
}
