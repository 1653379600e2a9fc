// Adding sdy ops to propagation's value graph where MLIR's rewriter would put them.
// An insertion point is "before this op" in a region; ops created at one point are
// placed one after the other, as with MLIR's IRRewriter. "After a value" is before
// the op that follows its definition (the start of the block for a block argument).

import type { AxisRef, TensorSharding } from "../../../sharding/model.js";
import { regionOf, type MadeOpcode, type PGraph, type POp, type PRegion, type PUse, type PValue } from "../../propagation/graph.js";
import type { AxesPerDim } from "../../../ir/opcodes.js";

export interface InsertionPoint {
  readonly parent: POp;
  readonly region: PRegion;
  /** New ops go right before this one. */
  readonly before: POp;
}

export function before(op: POp): InsertionPoint {
  const { region } = regionOf(op);
  return { parent: op.parent!, region, before: op };
}

/** Right after `op` (before the op that follows it now). */
export function after(op: POp): InsertionPoint {
  const { region, position } = regionOf(op);
  return { parent: op.parent!, region, before: region.ops[position + 1]! };
}

export function afterValue(v: PValue): InsertionPoint {
  if (v.def.kind === "result") return after(v.def.op);
  const region = v.def.op.regions[v.def.region]!;
  return { parent: v.def.op, region, before: region.ops[0]! };
}

/** Points `use` at `v` (MLIR's OpOperand::set). */
export function setUse(use: PUse, v: PValue): void {
  const old = use.op.operands[use.index]!;
  if (old === v) return;
  const k = old.uses.findIndex((u) => u.op === use.op && u.index === use.index);
  if (k >= 0) old.uses.splice(k, 1);
  use.op.operands[use.index] = v;
  v.uses.push({ op: use.op, index: use.index });
}

export type MadeOp =
  | { readonly opcode: "sdyReshard" }
  | { readonly opcode: "sdyAllReduce"; readonly reductionAxes: readonly AxisRef[]; readonly reductionOp?: TensorSharding["reductionOp"] }
  | { readonly opcode: "sdyReplicatedToUnreduced"; readonly axes: readonly AxisRef[] }
  | { readonly opcode: "sdyShardedToUnreduced"; readonly axes: AxesPerDim };

const MLIR_NAMES: Record<MadeOp["opcode"], string> = {
  sdyReshard: "sdy.reshard", sdyAllReduce: "sdy.all_reduce",
  sdyReplicatedToUnreduced: "sdy.replicated_to_unreduced", sdyShardedToUnreduced: "sdy.sharded_to_unreduced",
};

/** A new sdy op of `input` whose result has `sharding`, placed at `ip`; returns its result. */
export function createSdyOp(graph: PGraph, ip: InsertionPoint, made: MadeOp, input: PValue, sharding: TensorSharding): PValue {
  const { opcode, ...attrs } = made;
  const op = graph.op({
    kind: "generic", name: MLIR_NAMES[opcode], parent: ip.parent, pure: opcode === "sdyReshard", isElementwise: true,
    operands: [input], resultDims: [input.dims], made: { opcode: opcode as MadeOpcode, attrs: attrs as Record<string, unknown> },
  });
  ip.region.ops.splice(ip.region.ops.indexOf(ip.before), 0, op);
  graph.shardings.set(op.results[0]!, sharding);
  return op.results[0]!;
}
