// Rules of gather and scatter, which share a structure: an input, start indices and
// "slices" (the gather's result, the scatter's updates). Slice offset dimensions
// correspond to input dimensions (shared factor when unsliced), slice batch dimensions
// to indices dimensions (and to input batching dimensions when explicit); collapsed
// (inserted) dimensions and the index vector dimension get factors of their own.

import type { Computation, Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder, type FactorType } from "./builder.js";
import { ruleOrNone, type OpValues, type RuleOutcome } from "./context.js";

type AddFactor = (inputDim: number, indicesDim: number, slicesDim: number, size: number, type: FactorType, isBlocked: boolean) => void;

interface GatherScatterDims {
  readonly input: readonly number[];
  readonly slices: readonly number[];
  readonly indices: readonly number[];
  readonly indexVectorDim: number;
  readonly offsetDims: readonly number[];
  readonly collapsedSliceDims: readonly number[];
  readonly inputBatchingDims: readonly number[];
  readonly indicesBatchingDims: readonly number[];
}

/**
 * Adds the factors of a gather (`scatterReduces` undefined) or a scatter (whether its
 * update computation is a reduction Shardy knows: then an implicit batch dimension, on
 * the indices and updates only, is a reduction factor rather than needing replication).
 */
function addGatherScatterFactors(d: GatherScatterDims, scatterReduces: boolean | undefined, add: AddFactor): void {
  const isScatter = scatterReduces !== undefined;
  let inputDim = 0;
  let batchDimPos = 0;
  d.slices.forEach((slicesSize, slicesDim) => {
    if (d.offsetDims.includes(slicesDim)) {
      // The input dimension this offset dimension slices: the next one that is neither collapsed nor batching.
      while (d.collapsedSliceDims.includes(inputDim) || d.inputBatchingDims.includes(inputDim)) inputDim++;
      const inputSize = d.input[inputDim]!;
      if (inputSize === slicesSize) {
        add(inputDim, NULL_DIM, slicesDim, inputSize, "passThrough", false);
      } else if (isScatter) {
        add(inputDim, NULL_DIM, NULL_DIM, inputSize, "needReplication", false);
        add(NULL_DIM, NULL_DIM, slicesDim, slicesSize, "needReplication", false);
      } else if (slicesSize === 1) {
        // Sharding the input along it needs an all-reduce of the result.
        add(inputDim, NULL_DIM, NULL_DIM, inputSize, "reduction", false);
        add(NULL_DIM, NULL_DIM, slicesDim, slicesSize, "needReplication", false);
      } else {
        add(inputDim, NULL_DIM, slicesDim, inputSize, "needReplication", true);
      }
      inputDim++;
      return;
    }
    // A batch dimension of the slices: its indices dimension skips the index vector dimension.
    const indicesDim = batchDimPos < d.indexVectorDim ? batchDimPos : batchDimPos + 1;
    const k = d.indicesBatchingDims.indexOf(indicesDim);
    const inputBatchDim = k >= 0 ? d.inputBatchingDims[k]! : NULL_DIM;
    // A scatter's implicit batch dimension (on indices and updates only) combines updates: a reduction if the update computation is one.
    const type: FactorType = isScatter && k < 0 ? (scatterReduces ? "reduction" : "needReplication") : "passThrough";
    add(inputBatchDim, indicesDim, slicesDim, slicesSize, type, false);
    batchDimPos++;
  });
  for (const dim of d.collapsedSliceDims) {
    const size = d.input[dim]!;
    // A gather's collapsed dimension, if sharded, needs an all-reduce of the result (pointless for size 1).
    const type: FactorType = isScatter ? "passThrough" : size === 1 ? "needReplication" : "reduction";
    add(dim, NULL_DIM, NULL_DIM, size, type, false);
  }
  if (d.indexVectorDim < d.indices.length) {
    add(NULL_DIM, d.indexVectorDim, NULL_DIM, d.indices[d.indexVectorDim]!, "needReplication", false);
  }
}

export function gather(inst: Instruction<"gather">, v: OpValues): RuleOutcome {
  const n = inst.attrs.dimensionNumbers;
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  addGatherScatterFactors({
    input: dimsOf(v.operands[0]!), slices: dimsOf(v.results[0]!), indices: dimsOf(v.operands[1]!),
    indexVectorDim: n.indexVectorDim, offsetDims: n.offsetDims, collapsedSliceDims: n.collapsedSliceDims,
    inputBatchingDims: n.operandBatchingDims, indicesBatchingDims: n.startIndicesBatchingDims,
  }, undefined, (inputDim, indicesDim, slicesDim, size, type, isBlocked) =>
    b.addFactor([inputDim, indicesDim], [slicesDim], size, type, isBlocked));
  return ruleOrNone(b.build());
}

export function scatter(inst: Instruction<"scatter">, v: OpValues): RuleOutcome {
  const n = inst.attrs.dimensionNumbers;
  const numInputs = v.results.length;
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  addGatherScatterFactors({
    input: dimsOf(v.operands[0]!), slices: dimsOf(v.operands[numInputs + 1]!), indices: dimsOf(v.operands[numInputs]!),
    indexVectorDim: n.indexVectorDim, offsetDims: n.updateWindowDims, collapsedSliceDims: n.insertedWindowDims,
    inputBatchingDims: n.inputBatchingDims, indicesBatchingDims: n.scatterIndicesBatchingDims,
  }, scatterReduction(inst.attrs.toApply, numInputs) !== undefined, (inputDim, indicesDim, slicesDim, size, type, isBlocked) => {
    // Operands: the inputs, the indices, the updates; results: one per input.
    const operandDims = [...Array<number>(numInputs).fill(inputDim), indicesDim, ...Array<number>(numInputs).fill(slicesDim)];
    b.addFactor(operandDims, Array<number>(numInputs).fill(inputDim), size, type, isBlocked);
  });
  return ruleOrNone(b.build());
}

const REDUCING_OPCODES: ReadonlySet<Opcode> = new Set(["add", "multiply", "maximum", "minimum"]);
const LOGICAL_OPCODES: ReadonlySet<Opcode> = new Set(["and", "or"]);

/**
 * The one binary op a scatter's update computation combines each input's old value
 * and update with, when it is add, multiply, maximum or minimum (and/or on
 * predicates), the same for every input, taking the input's parameter and its update's
 * parameter in either order; undefined for any other computation (Shardy's
 * getCommonSupportedReductionOp).
 */
export function scatterReduction(update: Computation, numInputs: number): Opcode | undefined {
  if (update.parameters.length !== 2 * numInputs) return undefined;
  const returned = numInputs === 1 ? [update.root] : update.root.opcode === "tuple" ? update.root.operands : [];
  if (returned.length !== numInputs) return undefined;
  let common: Opcode | undefined;
  for (let i = 0; i < numInputs; i++) {
    const op = returned[i]!;
    if (op.operands.length !== 2 || op.shape.kind !== "array") return undefined;
    const logical = op.shape.elementType === "pred" && LOGICAL_OPCODES.has(op.opcode);
    if (!logical && !REDUCING_OPCODES.has(op.opcode)) return undefined;
    if (common !== undefined && common !== op.opcode) return undefined;
    common = op.opcode;
    const isParam = (x: Instruction, number: number): boolean => x.opcode === "parameter" && (x as Instruction<"parameter">).attrs.number === number;
    const [lhs, rhs] = op.operands as [Instruction, Instruction];
    if (!((isParam(lhs, i) && isParam(rhs, i + numInputs)) || (isParam(lhs, i + numInputs) && isParam(rhs, i)))) return undefined;
  }
  return common;
}
