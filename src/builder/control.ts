// Builder functions for control flow and structure (seed 000: Tuple, GetTupleElement,
// Call, CompositeCall, Conditional, While, CustomCall, OptimizationBarrier, AfterAll,
// CreateToken, AddDependency). Sub-computations are built beforehand, e.g. with
// `b.createSubBuilder("body")`, and passed in.

import type { AttributeValue } from "../ir/attributes.js";
import type { Computation } from "../ir/computation.js";
import type { Shape } from "../types/shape.js";
import { builderOf } from "./operands.js";
import type { XlaBuilder, XlaOp } from "./xla_builder.js";

/** A tuple of the given values (which may be arrays, tuples or tokens). */
export function tuple(b: XlaBuilder, elements: readonly XlaOp[]): XlaOp {
  return b.addInstruction("tuple", elements, {});
}

/** Element `index` of a tuple. */
export function getTupleElement(tupleData: XlaOp, index: number): XlaOp {
  return tupleData.builder.addInstruction("getTupleElement", [tupleData], { index });
}

/** Calls `computation` on `operands` (their count and shapes must match its parameters). */
export function call(b: XlaBuilder, computation: Computation, operands: readonly XlaOp[]): XlaOp {
  return b.addInstruction("call", operands, { toApply: computation });
}

export interface CompositeOptions {
  /** The composite's attributes (StableHLO composite_attributes). */
  attributes?: Readonly<Record<string, AttributeValue>>;
  /** Bumped when the composite's semantics change; default 0. */
  version?: number;
}

/** A call that names a composite op `name`; `computation` is its decomposition, which is what runs. */
export function compositeCall(
  b: XlaBuilder, computation: Computation, operands: readonly XlaOp[], name: string, options: CompositeOptions = {},
): XlaOp {
  return b.addInstruction("composite", operands, {
    name, decomposition: computation, version: options.version ?? 0, compositeAttributes: options.attributes ?? {},
  });
}

/** Runs `trueComputation(trueOperand)` if `predicate` (pred[]) holds, else `falseComputation(falseOperand)`. */
export function conditional(
  predicate: XlaOp, trueOperand: XlaOp, trueComputation: Computation, falseOperand: XlaOp, falseComputation: Computation,
): XlaOp {
  return predicate.builder.addInstruction("conditional", [predicate, trueOperand, falseOperand], {
    branches: [trueComputation, falseComputation],
  });
}

/**
 * Runs `branchComputations[branchIndex](branchOperands[branchIndex])`; an index (s32[])
 * below 0 or past the end runs the last branch.
 */
export function conditionalIndexed(
  branchIndex: XlaOp, branchComputations: readonly Computation[], branchOperands: readonly XlaOp[],
): XlaOp {
  return branchIndex.builder.addInstruction("conditional", [branchIndex, ...branchOperands], { branches: branchComputations });
}

/**
 * XLA's While: runs `body` while `condition` (T -> pred[]) holds, starting from `init`;
 * returns the last body result. Pass several init values for StableHLO's multi-value
 * form (condition and body then take one parameter per value and the body returns a
 * tuple of them, as does the loop).
 */
export function whileLoop(condition: Computation, body: Computation, init: XlaOp | readonly XlaOp[]): XlaOp {
  const values = Array.isArray(init) ? (init as readonly XlaOp[]) : [init as XlaOp];
  return builderOf("while", values).addInstruction("while", values, { condition, body });
}

export interface CustomCallOptions {
  /** Opaque configuration handed to the target (XLA's opaque / backend_config). */
  backendConfig?: string;
  /** Marks a call with effects beyond its result; never removed or reordered. */
  hasSideEffect?: boolean;
  calledComputations?: readonly Computation[];
}

/** Calls the user-registered target `target` (see CustomCallRegistry); its result must have `shape`. */
export function customCall(
  b: XlaBuilder, target: string, operands: readonly XlaOp[], shape: Shape, options: CustomCallOptions = {},
): XlaOp {
  return b.addInstruction("customCall", operands, {
    target, resultShape: shape, backendConfig: options.backendConfig ?? "",
    hasSideEffect: options.hasSideEffect ?? false, calledComputations: options.calledComputations ?? [],
  });
}

/** Passes `operand` through; no optimization moves computation across it. */
export function optimizationBarrier(operand: XlaOp): XlaOp {
  return operand.builder.addInstruction("optimizationBarrier", [operand], {});
}

/** A token that follows all of `tokens` (none: a fresh token). */
export function afterAll(b: XlaBuilder, tokens: readonly XlaOp[]): XlaOp {
  return b.addInstruction("afterAll", tokens, {});
}

/** A fresh token (XLA's CreateToken: an AfterAll of nothing). */
export function createToken(b: XlaBuilder): XlaOp {
  return afterAll(b, []);
}

/** `operand`, ordered after `token`. */
export function addDependency(operand: XlaOp, token: XlaOp): XlaOp {
  return operand.builder.addInstruction("addDependency", [operand, token], {});
}
