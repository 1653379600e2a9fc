// Global values and their per-device pieces. A sharding cuts each dimension into as
// many shards as its axes have devices; device d holds, along each dimension, the
// shard its position along those axes names (Shardy's layout: the first axis is the
// major one). Where the dimension does not divide, the last shards are padded (pieces
// carry zeros there; assembling drops them). Replicated axes: every device along them
// holds the same piece, and the first one's is taken.

import { Literal } from "../../types/literal.js";
import { forEachIndex } from "../../types/index_util.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import { ShardingError } from "../../sharding/axis.js";
import { shardIndex } from "../../sharding/local_shapes.js";
import type { Mesh, TensorSharding } from "../../sharding/model.js";

/** Where device `device`'s piece starts in the global value, per dimension. */
function pieceStart(device: number, sharding: TensorSharding | undefined, mesh: Mesh, local: readonly number[]): number[] {
  return local.map((size, d) => {
    const axes = sharding?.dimShardings[d]?.axes ?? [];
    return axes.length === 0 ? 0 : shardIndex(device, mesh, axes) * size;
  });
}

/** Device `device`'s piece of `global` (of shape `local`): its shard, padded with zeros past the end of the value. */
export function pieceOf(global: Literal, sharding: TensorSharding | undefined, mesh: Mesh, device: number, local: ArrayShape): Literal {
  const g = global.shape as ArrayShape;
  const start = pieceStart(device, sharding, mesh, local.dimensions);
  const piece = Literal.zeros(arrayShape(local.elementType, local.dimensions));
  const at = new Array<number>(local.dimensions.length);
  forEachIndex(local.dimensions, (index) => {
    for (let d = 0; d < index.length; d++) {
      at[d] = start[d]! + index[d]!;
      if (at[d]! >= g.dimensions[d]!) return;
    }
    piece.set(index, global.get(at));
  });
  return piece;
}

/**
 * The global value of shape `global` from every device's piece (`pieces[device]`): each
 * element taken from the first device whose piece holds it. Unreduced axes (partial
 * sums still to be combined) are refused: the program must reduce before returning.
 */
export function assemble(pieces: readonly Literal[], sharding: TensorSharding | undefined, mesh: Mesh, global: ArrayShape, what: string): Literal {
  if ((sharding?.unreducedAxes.length ?? 0) > 0) throw new ShardingError(`${what} is unreduced along some axes: it holds partial values, not the result`);
  const out = Literal.zeros(arrayShape(global.elementType, global.dimensions));
  const filled = new Set<string>();
  pieces.forEach((piece, device) => {
    const local = (piece.shape as ArrayShape).dimensions;
    const start = pieceStart(device, sharding, mesh, local);
    const key = start.join(",");
    if (filled.has(key)) return;
    filled.add(key);
    const at = new Array<number>(local.length);
    forEachIndex(local, (index) => {
      for (let d = 0; d < index.length; d++) {
        at[d] = start[d]! + index[d]!;
        if (at[d]! >= global.dimensions[d]!) return;
      }
      out.set(at, piece.get(index));
    });
  });
  return out;
}
