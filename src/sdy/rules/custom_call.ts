// Rules of custom calls, by call target: the targets Shardy knows (pointwise helpers,
// linear-algebra routines from jax.lax.linalg, top-k variants, X64Combine); the
// targets it deliberately leaves alone; a warning for any other. top_k, which the IR
// has as an opcode, is XLA's `mhlo.topk` custom call and has its rule.

import type { Instruction } from "../../ir/computation.js";
import { isKept } from "../../text/mlir/print_ops.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder, pointwiseRule } from "./builder.js";
import { NO_RULE, ruleOrNone, unknownCustomCall, unknownOp, type OpValues, type RuleContext, type RuleOutcome } from "./context.js";

/** Targets with no rule and no warning (callbacks, logging, test-only). */
const IGNORED_TARGETS: ReadonlySet<string> = new Set([
  "sdy_testonly", "tpu_custom_call", "xla_python_cpu_callback", "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
  "xla_ffi_python_gpu_callback", "xla.debug.Log",
]);

/**
 * Targets whose results correspond element by element to their operands: helpers that
 * only annotate or move data, and the SPMD partitioner's internal collective permutes.
 */
const POINTWISE_TARGETS: ReadonlySet<string> = new Set([
  "annotate_device_placement", "Cholesky", "CompactWyHelper", "InspectSharding", "InvertDiagBlocksLowerTriangular",
  "InvertDiagBlocksUpperTriangular", "LayoutConstraint", "mhlo.erf", "MoveToDevice", "MoveToHost", "X64SplitHigh",
  "X64SplitLow", "xla.megascale.provide_metadata", "_SPMDInternalOp_MultiPad", "_SPMDInternalOp_RotateRight",
  "_SPMDInternalOp_MultiRotate", "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap",
]);

type TargetRule = (inst: Instruction<"customCall">, v: OpValues, ctx: RuleContext) => RuleOutcome;

const TARGET_RULES: Readonly<Record<string, TargetRule>> = {
  Eigh: (_inst, v) => eigh(v),
  Qr: (_inst, v) => qr(v),
  QrDecompositionBlock: (_inst, v) => qr(v),
  ProductOfElementaryHouseholderReflectors: (_inst, v) => householderProduct(v),
  "mhlo.topk": (_inst, v) => topKRule(v),
  ApproxTopK: (_inst, v) => approxTopK(v),
  PartialReduce: (_inst, v) => approxTopK(v),
  X64Combine: (inst, v, ctx) => x64Combine(inst, v, ctx),
};

export function customCall(inst: Instruction<"customCall">, v: OpValues, ctx: RuleContext): RuleOutcome {
  const target = inst.attrs.target;
  if (IGNORED_TARGETS.has(target)) return NO_RULE;
  if (POINTWISE_TARGETS.has(target)) return ruleOrNone(pointwiseRule(v.operands, v.results));
  const rule = TARGET_RULES[target];
  if (rule !== undefined) return rule(inst, v, ctx);
  // Ops of other dialects the IR keeps as custom calls print as themselves.
  return isKept(target) ? unknownOp(target) : unknownCustomCall(target);
}

/** top_k: the top-k dimension (the last) needs replication and is blocked; the others are batch. */
export function topK(_inst: Instruction<"topK">, v: OpValues): RuleOutcome {
  return topKRule(v);
}

function topKRule(v: OpValues): RuleOutcome {
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwiseWithDiffTypeForMismatch(dimsOf(v.operands[0]!), dimsOf(v.results[0]!), "needReplication", true)
    .build());
}

/**
 * jax.lax.linalg.eigh: batch dimensions, then the two matrix dimensions, which
 * correspond between the input and the eigenvectors; the eigenvalues' last dimension
 * is the matrix's last.
 */
function eigh(v: OpValues): RuleOutcome {
  const shape = dimsOf(v.operands[0]!);
  const d1 = shape.length - 2;
  const d2 = shape.length - 1;
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(shape.slice(0, -2))
    .addFactor([d1], [d1, NULL_DIM], shape[d1]!)
    .addFactor([d2], [d2, d1], shape[d2]!)
    .build());
}

/**
 * jax.lax.linalg.qr: batch dimensions; the matrix dimensions correspond between input
 * and first result but need replication; the second result's dimension (the smaller
 * matrix size) is a factor of its own.
 */
function qr(v: OpValues): RuleOutcome {
  const shape = dimsOf(v.operands[0]!);
  const taus = dimsOf(v.results[1]!);
  const d1 = shape.length - 2;
  const d2 = shape.length - 1;
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(shape.slice(0, -2))
    .addFactor([d1], [d1, NULL_DIM], shape[d1]!, "needReplication")
    .addFactor([d2], [d2, NULL_DIM], shape[d2]!, "needReplication")
    .addFactor([NULL_DIM], [NULL_DIM, d1], taus[d1]!, "needReplication")
    .build());
}

/** jax.lax.linalg.householder_product: like qr, with the taus as the second operand. */
function householderProduct(v: OpValues): RuleOutcome {
  const shape = dimsOf(v.operands[0]!);
  const taus = dimsOf(v.operands[1]!);
  const d1 = shape.length - 2;
  const d2 = shape.length - 1;
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(shape.slice(0, -2))
    .addFactor([d1, NULL_DIM], [d1], shape[d1]!, "needReplication")
    .addFactor([d2, NULL_DIM], [d2], shape[d2]!, "needReplication")
    .addFactor([NULL_DIM, d1], [NULL_DIM], taus[d1]!, "needReplication")
    .build());
}

/**
 * jax.lax.approx_max_k (operands: operand, iota, two scalar inits; results: values,
 * indices): the reduced dimension is one factor on the operands and another, needing
 * replication and blocked, on the results.
 */
function approxTopK(v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const outShape = dimsOf(v.results[0]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  inShape.forEach((inSize, dim) => {
    const outSize = outShape[dim]!;
    if (inSize === outSize) {
      b.addFactorAll(dim, inSize);
      return;
    }
    b.addFactor([dim, dim, NULL_DIM, NULL_DIM], [NULL_DIM, NULL_DIM], inSize);
    b.addFactor([NULL_DIM, NULL_DIM, NULL_DIM, NULL_DIM], [dim, dim], outSize, "needReplication", true);
  });
  return ruleOrNone(b.build());
}

/**
 * Pointwise, except feeding rng_bit_generator: that state must be replicated and a u64
 * tensor cannot be resharded, so the one dimension needs replication and is blocked.
 */
function x64Combine(inst: Instruction<"customCall">, v: OpValues, ctx: RuleContext): RuleOutcome {
  if (!ctx.usersOf(inst).some((u) => u.opcode === "rngBitGenerator")) return ruleOrNone(pointwiseRule(v.operands, v.results));
  const shape = dimsOf(v.results[0]!);
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results).addFactorAll(0, shape[0]!, "needReplication", true).build());
}
