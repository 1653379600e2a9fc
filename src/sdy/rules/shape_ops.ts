// Rules of the ops that move data between dimensions: broadcast_in_dim, transpose,
// reshape (compound factors where dimensions split or merge), concatenate, pad, slice,
// reverse, dynamic_slice and dynamic_update_slice.

import type { Instruction } from "../../ir/computation.js";
import { gcd } from "../../sharding/axis.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder, type FactorType } from "./builder.js";
import { NO_RULE, ruleOrNone, type OpValues, type RuleContext, type RuleOutcome } from "./context.js";

export function broadcastInDim(inst: Instruction<"broadcastInDim">, v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const outShape = dimsOf(v.results[0]!);
  const outToIn = outShape.map(() => NULL_DIM);
  inst.attrs.broadcastDimensions.forEach((outDim, inDim) => (outToIn[outDim] = inDim));
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  outShape.forEach((outSize, outDim) => {
    let inDim = outToIn[outDim]!;
    // An operand dimension of size 1 expanded in place is not the result's dimension.
    if (inDim !== NULL_DIM && inShape[inDim] === 1 && outSize !== 1) {
      b.addFactor([inDim], [NULL_DIM], 1);
      inDim = NULL_DIM;
    }
    b.addFactor([inDim], [outDim], outSize);
  });
  return ruleOrNone(b.build());
}

export function transpose(inst: Instruction<"transpose">, v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  inst.attrs.permutation.forEach((inDim, outDim) => b.addFactor([inDim], [outDim], inShape[inDim]!));
  return ruleOrNone(b.build());
}

/**
 * Walks the input and output dimensions together, splitting them into factors so that
 * every common factor appears in both (a merged dimension maps to a compound factor
 * `ij`). Dimensions of size 1 get factors of their own; where the sizes share no
 * divisor the two sides get separate factors until their products meet again.
 * No rule for a tensor with no elements (the walk needs every size positive).
 */
export function reshape(_inst: Instruction<"reshape">, v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const outShape = dimsOf(v.results[0]!);
  if (inShape.some((d) => d === 0)) return NO_RULE;
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  let inDim = 0;
  let outDim = 0;
  // Products of the dimension sizes walked so far, and of the factors added so far, per side.
  let dimsIn = 1;
  let dimsOut = 1;
  let factorsIn = 1;
  let factorsOut = 1;
  while (inDim < inShape.length || outDim < outShape.length) {
    if (inDim < inShape.length && inShape[inDim] === 1) {
      b.addFactor([inDim++], [NULL_DIM], 1);
      continue;
    }
    if (outDim < outShape.length && outShape[outDim] === 1) {
      b.addFactor([NULL_DIM], [outDim++], 1);
      continue;
    }
    if (inDim < inShape.length && dimsIn === factorsIn) dimsIn *= inShape[inDim]!;
    if (outDim < outShape.length && dimsOut === factorsOut) dimsOut *= outShape[outDim]!;
    let nextIn = dimsIn / factorsIn;
    let nextOut = dimsOut / factorsOut;
    const g = gcd(nextIn, nextOut);
    // Once the sides diverged, the side behind takes the factor that brings the
    // products together again if it can, else one that keeps the common divisor for later.
    const nextIfDiverged = (next: number, smaller: number, larger: number): number => {
      if (larger % smaller === 0 && next % (larger / smaller) === 0) return larger / smaller;
      if (next > g) return next / g;
      return next;
    };
    if (factorsIn === factorsOut) {
      if (g > 1) {
        b.addFactor([inDim], [outDim], g);
        factorsIn *= g;
        factorsOut *= g;
      } else {
        b.addFactor([inDim], [NULL_DIM], nextIn);
        factorsIn *= nextIn;
        b.addFactor([NULL_DIM], [outDim], nextOut);
        factorsOut *= nextOut;
      }
    } else if (factorsIn < factorsOut) {
      nextIn = nextIfDiverged(nextIn, factorsIn, factorsOut);
      b.addFactor([inDim], [NULL_DIM], nextIn);
      factorsIn *= nextIn;
    } else {
      nextOut = nextIfDiverged(nextOut, factorsOut, factorsIn);
      b.addFactor([NULL_DIM], [outDim], nextOut);
      factorsOut *= nextOut;
    }
    if (inDim < inShape.length && dimsIn === factorsIn) inDim++;
    if (outDim < outShape.length && dimsOut === factorsOut) outDim++;
  }
  return ruleOrNone(b.build());
}

/**
 * Pointwise along the result's dimensions. The concatenated dimension needs
 * replication, unless the operands are all slices, or slices of one tensor and that
 * tensor itself, which makes it a permutation. Conservatively it gets no factor.
 */
export function concatenate(inst: Instruction<"concatenate">, v: OpValues, ctx: RuleContext): RuleOutcome {
  const dimension = inst.attrs.dimension;
  const beforeSlice = (o: Instruction): Instruction => (o.opcode === "slice" ? o.operands[0]! : o);
  const concatType = (): FactorType => {
    const operands = inst.operands;
    if (operands.every((o) => o.opcode === "slice")) return "permutation";
    const source = beforeSlice(operands[0]!);
    if (operands.every((o) => beforeSlice(o) === source) && operands.some((o) => o.opcode === "slice")) return "permutation";
    return "needReplication";
  };
  const b = new OpShardingRuleBuilder(v.operands, v.results).addPointwiseIf(
    dimsOf(v.results[0]!), (dim) => !ctx.conservative || dim !== dimension,
    (dim) => (dim === dimension ? concatType() : "passThrough"));
  return ruleOrNone(b.build());
}

/** Padded (pad) or sliced (slice) dimensions are permutations; blocked when conservative. */
export function padOrSlice(_inst: Instruction<"pad" | "slice">, v: OpValues, ctx: RuleContext): RuleOutcome {
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwiseWithDiffTypeForMismatch(dimsOf(v.operands[0]!), dimsOf(v.results[0]!), "permutation", ctx.conservative)
    .build());
}

export function reverse(inst: Instruction<"reverse">, v: OpValues): RuleOutcome {
  const reversed = new Set(inst.attrs.dimensions);
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(dimsOf(v.results[0]!), (dim) => (reversed.has(dim) ? "permutation" : "passThrough"))
    .build());
}

/** Sliced dimensions need replication and are never propagated along (the offsets are only known at run time). */
export function dynamicSlice(_inst: Instruction<"dynamicSlice">, v: OpValues): RuleOutcome {
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwiseWithDiffTypeForMismatch(dimsOf(v.operands[0]!), dimsOf(v.results[0]!), "needReplication", true)
    .build());
}

/**
 * The operand and result stay sharded along a sliced dimension (each device updates
 * its own shard with its local offsets); the update's dimension gets a factor of its
 * own, which needs replication unless every start index is a constant.
 */
export function dynamicUpdateSlice(inst: Instruction<"dynamicUpdateSlice">, v: OpValues): RuleOutcome {
  const operandShape = dimsOf(v.operands[0]!);
  const updateShape = dimsOf(v.operands[1]!);
  const constantIndices = inst.operands.slice(2).every((o) => o.opcode === "constant" || o.opcode === "sdyConstant");
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  operandShape.forEach((size, dim) => {
    if (size === updateShape[dim]) {
      b.addFactorAll(dim, size);
      return;
    }
    const only = (operand: number): number[] => v.operands.map((_, i) => (i === operand ? dim : NULL_DIM));
    b.addFactor(only(0), [dim], size);
    b.addFactor(only(1), [NULL_DIM], updateShape[dim]!, constantIndices ? "passThrough" : "needReplication");
  });
  return ruleOrNone(b.build());
}
