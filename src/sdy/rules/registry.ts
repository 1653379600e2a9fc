// The op sharding rule registry: for every opcode, how Shardy's registry
// (-sdy-populate-op-sharding-rules) treats the StableHLO op it stands for. An entry is
// a rule function, NONE for the ops Shardy deliberately leaves without a rule
// (constants, control flow and data-flow ops it handles separately, the terminator's
// tuple), or an "unknown" entry naming the op Shardy warns about. Where an IR opcode
// prints as another op (XLA ops as `mhlo.*` custom calls, chlo ops), the entry follows
// what Shardy does with that printed op.

import type { Computation, Instruction } from "../../ir/computation.js";
import { usersOf } from "../../ir/traverse.js";
import { BINARY_OPCODES, OP_TABLE, tableOf, UNARY_OPCODES, type Opcode } from "../../ir/opcodes.js";
import { XLA_CUSTOM_CALL_TARGETS } from "../../text/mlir/xla_ops.js";
import type { Shape } from "../../types/shape.js";
import { VerifyError } from "../../types/errors.js";
import type { OpShardingRule } from "../../sharding/model.js";
import { allGather, allToAll, reduceScatter, rngBitGenerator } from "./collectives.js";
import { NO_RULE, unknownCustomCall, unknownOp, type OpValues, type RuleContext, type RuleFn, type RuleOutcome } from "./context.js";
import { customCall, topK } from "./custom_call.js";
import { bitcastConvert, pointwise, pointwiseSkippingScalars } from "./elementwise.js";
import { gather, scatter } from "./gather_scatter.js";
import { batchNormInference, cholesky, convolution, dot, fft, triangularSolve } from "./linalg.js";
import { reduce, reduceWindow, selectAndScatter, sort } from "./reductions.js";
import { broadcastInDim, concatenate, dynamicSlice, dynamicUpdateSlice, padOrSlice, reshape, reverse, transpose } from "./shape_ops.js";

export type { RuleContext, RuleOutcome } from "./context.js";

type RuleTable = { readonly [O in Opcode]: RuleFn<O> };

const none = (): RuleOutcome => NO_RULE;
/** Shardy warns about the op this opcode prints as (its StableHLO name unless given). */
const unknown = <O extends Opcode>(opcode: O, mlirName?: string): RuleFn<O> => {
  const name = mlirName ?? OP_TABLE[opcode].stablehlo;
  if (name === undefined) throw new VerifyError(`sharding rule registry: ${opcode} needs the name of the op it prints as`);
  const outcome = unknownOp(name);
  return () => outcome;
};
/** An XLA op that prints as a `stablehlo.custom_call` to an `mhlo.*` target Shardy does not know. */
const unknownXlaCustomCall = <O extends Opcode>(opcode: O): RuleFn<O> => {
  const outcome = unknownCustomCall(XLA_CUSTOM_CALL_TARGETS[opcode]!);
  return () => outcome;
};

const RULES: RuleTable = {
  // The elementwise families are pointwise (XLA's erf is Shardy's pointwise `mhlo.erf` custom call).
  ...tableOf(UNARY_OPCODES, () => pointwise),
  ...tableOf(BINARY_OPCODES, () => pointwise),
  compare: pointwise,

  select: pointwiseSkippingScalars, clamp: pointwiseSkippingScalars,

  convert: pointwise, bitcastConvert, reducePrecision: pointwise, uniformQuantize: pointwise, uniformDequantize: pointwise,

  // A parameter is a block argument, not an op; constants and iota have nothing to propagate.
  parameter: none, constant: none, iota: none,

  reshape, dynamicReshape: unknown("dynamicReshape"), transpose, broadcastInDim, slice: padOrSlice, dynamicSlice,
  dynamicUpdateSlice, pad: padOrSlice, concatenate, reverse, gather, scatter, sort, topK,
  getDimensionSize: unknown("getDimensionSize"), setDimensionSize: unknown("setDimensionSize"),
  // Shardy's registry has no rule for StableHLO's shape-polymorphic ops.
  dynamicBroadcastInDim: unknown("dynamicBroadcastInDim"), dynamicIota: unknown("dynamicIota"), dynamicPad: unknown("dynamicPad"),
  dynamicGather: unknown("dynamicGather"), dynamicConv: unknown("dynamicConv"), realDynamicSlice: unknown("realDynamicSlice"),

  reduce, reduceWindow, selectAndScatter, map: unknown("map"),

  dot, scaledDot: unknownXlaCustomCall("scaledDot"), raggedDot: unknown("raggedDot", "chlo.ragged_dot"), convolution, fft,
  cholesky, triangularSolve, batchNormTraining: unknown("batchNormTraining"), batchNormInference,
  batchNormGrad: unknown("batchNormGrad"),

  // A tuple stands for the values a region returns (the terminator) or for operands
  // packed for while, case and optimization_barrier, none of which has a rule.
  tuple: none, getTupleElement: none, call: none, composite: unknown("composite"),
  // stablehlo.case propagates as a data-flow op; stablehlo.if (a predicate selector) is unknown to Shardy.
  conditional: (inst) => (isPredicate(inst.operands[0]!.shape) ? unknownOp("stablehlo.if") : NO_RULE),
  while: none, customCall, optimizationBarrier: none, fusion: unknownXlaCustomCall("fusion"), afterAll: none,
  addDependency: unknownXlaCustomCall("addDependency"),

  rngBitGenerator, rng: unknown("rng"),

  allGather, allReduce: pointwise, collectiveReduce: unknown("collectiveReduce"), reduceScatter, allToAll,
  raggedAllToAll: unknownXlaCustomCall("raggedAllToAll"), collectivePermute: pointwise,
  // StableHLO's collective_broadcast, the one Shardy knows, has no root operand.
  collectiveBroadcast: (inst, v) => (inst.attrs.hasDynamicRoot ? unknownOp("stablehlo.collective_broadcast") : pointwise(inst, v)),
  replicaId: unknown("replicaId"), partitionId: none,
  allGatherStart: unknownXlaCustomCall("allGatherStart"), allGatherDone: unknownXlaCustomCall("allGatherDone"),
  allReduceStart: unknownXlaCustomCall("allReduceStart"), allReduceDone: unknownXlaCustomCall("allReduceDone"),
  collectivePermuteStart: unknownXlaCustomCall("collectivePermuteStart"),
  collectivePermuteDone: unknownXlaCustomCall("collectivePermuteDone"),

  infeed: none, outfeed: none, send: none, recv: none,

  // Shardy's own ops: a sharding constraint is pointwise; the data-flow ops, barriers,
  // groups, reshards and constants are handled apart (no rule); its collectives are unknown to its registry.
  sdyShardingConstraint: pointwise, sdyReshard: none, sdyManualComputation: none, sdyShardingGroup: none, sdyConstant: none,
  sdyDataFlowEdge: none, sdyPropagationBarrier: none, sdyNamedComputation: none, sdyFuncDataFlowEdge: none,
  sdyAllGather: unknown("sdyAllGather"), sdyAllSlice: unknown("sdyAllSlice"), sdyAllReduce: unknown("sdyAllReduce"),
  sdyReduceScatter: unknown("sdyReduceScatter"), sdyAllToAll: unknown("sdyAllToAll"),
  sdyCollectivePermute: unknown("sdyCollectivePermute"), sdyShardedToUnreduced: unknown("sdyShardedToUnreduced"),
  sdyReplicatedToUnreduced: unknown("sdyReplicatedToUnreduced"),
};

function isPredicate(s: Shape): boolean {
  return s.kind === "array" && s.elementType === "pred";
}

/** The op's StableHLO results: the elements of a multi-result op's tuple shape. */
export function opValues(inst: Instruction): OpValues {
  return {
    operands: inst.operands.map((o) => o.shape),
    results: inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape],
  };
}

/** What Shardy's registry gives `inst` (Shardy's createOpShardingRule). */
export function createOpShardingRule(inst: Instruction, ctx: RuleContext): RuleOutcome {
  const fn = RULES[inst.opcode] as RuleFn<Opcode>;
  return fn(inst, opValues(inst), ctx);
}

/** The context for the rules of `c`'s instructions (its users are computed once, on first use). */
export function ruleContextFor(c: Computation, conservative: boolean): RuleContext {
  let users: Map<Instruction, Instruction[]> | undefined;
  return { conservative, usersOf: (inst) => (users ??= usersOf(c)).get(inst) ?? [] };
}

/** The rule of `inst`: the one it carries, else the registry's (undefined when there is none). */
export function getOrCreateShardingRule(inst: Instruction, ctx: RuleContext): OpShardingRule | undefined {
  if (inst.sdyShardingRule !== undefined) return inst.sdyShardingRule;
  const outcome = createOpShardingRule(inst, ctx);
  return outcome.kind === "rule" ? outcome.rule : undefined;
}
