// Kernels of the Shardy ops on global values (seed 002). Shardings say how a value is
// laid out over devices, not what it is: on the global value, constraints, reshards,
// barriers, edges and the sdy collectives are the identity, a sharding group computes
// nothing, and a named computation calls its body. A manual computation's body is
// written per device along its manual axes; on one device it runs once per position
// along those axes, on that device's local slices, and the local results are put back
// together: exact as long as the body does not talk to other devices.

import { calleesFirst, type Computation, type Instruction } from "../../ir/computation.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { axisSize, indexAlongAxisRef } from "../../sharding/axis.js";
import { findAxisSize, meshOf } from "../../sharding/mesh.js";
import type { Mesh, ReductionOp, TensorSharding } from "../../sharding/model.js";
import { resultShapes } from "../../ir/shape/sdy.js";
import type { SdyOpcode } from "../../ir/shape/sdy.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal, literalToString } from "../../types/literal.js";
import { arrayShape, shapesEqual, shapeToString } from "../../types/shape.js";
import type { EvalContext, Kernel, KernelTable } from "../context.js";
import { copyElement } from "./element_copy.js";

const identity = <O extends SdyOpcode>(): Kernel<O> => (_inst, [operand]) => operand!;

function pack(values: readonly Literal[]): Literal {
  return values.length === 1 ? values[0]! : Literal.tuple(values);
}

/** Runs `body` and checks what it returns against its declared result shape. */
function callBody(ctx: EvalContext, inst: Instruction, body: Computation, args: readonly Literal[]): Literal {
  const result = ctx.call(body, args);
  if (!shapesEqual(result.shape, body.programShape.result)) {
    throw new ExecutionError(`${inst.name}: body ${body.name} returned ${shapeToString(result.shape)}, declared ${shapeToString(body.programShape.result)}`);
  }
  return result;
}

/** A cross-device op the body (or what it calls) uses, if any. */
function crossDeviceOp(body: Computation): Instruction | undefined {
  for (const c of calleesFirst([body])) {
    const found = c.instructions.find((i) => OP_TABLE[i.opcode].family === "collective");
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The manual axes and their sizes, from the mesh the in/out shardings are bound to. */
function manualAxisSizes(inst: Instruction<"sdyManualComputation">, ctx: EvalContext): { name: string; size: number }[] {
  const { inShardings, outShardings, manualAxes } = inst.attrs;
  if (manualAxes.length === 0) return [];
  const bound = [...inShardings, ...outShardings][0];
  const meshes = ctx.meshes ?? new Map<string, Mesh>();
  const mesh = bound === undefined ? undefined : meshOf(bound, meshes);
  if (mesh === undefined) {
    const name = bound !== undefined && typeof bound.meshOrRef === "string" ? `@${bound.meshOrRef}` : "of its shardings";
    throw new ExecutionError(`${inst.name}: sdy.manual_computation needs the mesh ${name} to split its operands; evaluate with the module's meshes (EvaluateOptions.meshes = meshTable(module))`);
  }
  return manualAxes.map((name) => {
    const size = findAxisSize(mesh, name);
    if (size === undefined) throw new ExecutionError(`${inst.name}: unknown manual axis "${name}"`);
    return { name, size };
  });
}

/**
 * For one value with `sharding`, per dimension: how many pieces the manual axes cut it
 * into and which piece the device at `position` (index along each manual axis) holds.
 */
function pieces(sharding: TensorSharding, mesh: Mesh, position: ReadonlyMap<string, number>): { count: number; index: number }[] {
  return sharding.dimShardings.map((dim) => {
    let count = 1;
    let index = 0;
    for (const ref of dim.axes) {
      const along = position.get(ref.name);
      if (along === undefined) continue; // a free axis: the body sees this dimension whole along it
      const size = axisSize(ref, mesh);
      count *= size;
      index = index * size + indexAlongAxisRef(ref, along, mesh);
    }
    return { count, index };
  });
}

/** `pieces` for a value of rank `rank`, which its sharding must have (the sdy verifier checks it; here it is an error to run). */
function cutsOf(
  inst: Instruction, sharding: TensorSharding, rank: number, mesh: Mesh, position: ReadonlyMap<string, number>,
): { count: number; index: number }[] {
  if (sharding.dimShardings.length !== rank) {
    throw new ExecutionError(`${inst.name}: a sharding of rank ${sharding.dimShardings.length} for a value of rank ${rank}`);
  }
  for (const ref of sharding.dimShardings.flatMap((d) => d.axes)) {
    const full = findAxisSize(mesh, ref.name);
    const sub = ref.subAxis;
    if (position.has(ref.name) && sub !== undefined && (sub.preSize < 1 || sub.size < 1 || (full ?? 0) % (sub.preSize * sub.size) !== 0)) {
      throw new ExecutionError(`${inst.name}: sub-axis "${ref.name}":(${sub.preSize})${sub.size} does not split the axis of size ${full}`);
    }
  }
  return pieces(sharding, mesh, position);
}

/** The block of `global` that piece `index` of `count` along each dimension covers. */
function slice(inst: Instruction, global: Literal, cuts: readonly { count: number; index: number }[]): Literal {
  const dims = global.dimensions;
  dims.forEach((d, i) => {
    if (d % cuts[i]!.count !== 0) throw new ExecutionError(`${inst.name}: dimension ${i} of size ${d} does not split into ${cuts[i]!.count} equal pieces`);
  });
  const local = dims.map((d, i) => d / cuts[i]!.count);
  const out = Literal.zeros(arrayShape(global.elementType, local));
  const strides = rowMajorStrides(dims);
  let to = 0;
  forEachIndex(local, (idx) => {
    copyElement(global, idx.reduce((acc, x, d) => acc + (cuts[d]!.index * local[d]! + x) * strides[d]!, 0), out, to++);
  });
  return out;
}

/** Writes `piece` into its block of `global` (the inverse of `slice`). */
function place(inst: Instruction, global: Literal, piece: Literal, cuts: readonly { count: number; index: number }[]): void {
  const local = piece.dimensions;
  global.dimensions.forEach((d, i) => {
    if (local[i]! * cuts[i]!.count !== d) {
      throw new ExecutionError(`${inst.name}: a local result of size ${local[i]} in dimension ${i}, in ${cuts[i]!.count} pieces, does not make the global size ${d}`);
    }
  });
  const strides = rowMajorStrides(global.dimensions);
  let from = 0;
  forEachIndex(local, (idx) => {
    copyElement(piece, from++, global, idx.reduce((acc, x, d) => acc + (cuts[d]!.index * local[d]! + x) * strides[d]!, 0));
  });
}

/** `a` op `b` element by element, for the reduction pending along unreduced axes. */
function combine(inst: Instruction, a: Literal, b: Literal, op: ReductionOp): Literal {
  const out = a.clone();
  const n = a.data.length;
  for (let i = 0; i < n && a.isArray; i++) {
    const x = a.readLinear(i);
    const y = b.readLinear(i);
    if (typeof x === "number" && typeof y === "number") {
      out.writeLinear(i, op === "sum" ? x + y : op === "max" ? (x >= y || Number.isNaN(x) ? x : y) : (x <= y || Number.isNaN(x) ? x : y));
    } else if (typeof x === "bigint" && typeof y === "bigint") {
      out.writeLinear(i, op === "sum" ? x + y : op === "max" ? (x >= y ? x : y) : (x <= y ? x : y));
    } else if (typeof x === "boolean" && typeof y === "boolean") {
      out.writeLinear(i, op === "min" ? x && y : x || y);
    } else {
      throw new ExecutionError(`${inst.name}: cannot reduce ${a.elementType} values along unreduced manual axes`);
    }
  }
  return out;
}

function manualComputation(inst: Instruction<"sdyManualComputation">, operands: readonly Literal[], ctx: EvalContext): Literal {
  const { inShardings, outShardings, body, resultShape } = inst.attrs;
  const axes = manualAxisSizes(inst, ctx);
  if (axes.length === 0) return callBody(ctx, inst, body, operands);
  const collective = crossDeviceOp(body);
  if (collective !== undefined) {
    throw new ExecutionError(`${inst.name}: the body of this sdy.manual_computation uses ${OP_TABLE[collective.opcode].hlo} (${collective.name}), which talks to other devices; run the partitioned program on several devices instead of evaluating it on one`);
  }
  const mesh = meshOf([...inShardings, ...outShardings][0]!, ctx.meshes ?? new Map())!;
  // Per result: per block of the global value, the local results by position along the
  // result's unreduced manual axes (devices that differ only along a replicated axis must agree).
  const blocks = outShardings.map(() => new Map<string, { cuts: { count: number; index: number }[]; partial: Map<string, Literal> }>());
  const devices = axes.reduce((n, a) => n * a.size, 1);
  for (let device = 0; device < devices; device++) {
    // The device's index along each manual axis (the last axis varies fastest).
    const position = new Map<string, number>();
    let rest = device;
    for (let a = axes.length - 1; a >= 0; a--) {
      position.set(axes[a]!.name, rest % axes[a]!.size);
      rest = Math.floor(rest / axes[a]!.size);
    }
    const args = operands.map((v, i) => (v.isArray ? slice(inst, v, cutsOf(inst, inShardings[i]!, v.dimensions.length, mesh, position)) : v));
    const out = callBody(ctx, inst, body, args);
    const locals = outShardings.length === 1 ? [out] : out.elements;
    locals.forEach((piece, j) => {
      const sharding = outShardings[j]!;
      const cuts = piece.isArray ? cutsOf(inst, sharding, piece.dimensions.length, mesh, position) : [];
      const blockKey = cuts.map((c) => c.index).join(",");
      const block = blocks[j]!.get(blockKey) ?? { cuts, partial: new Map<string, Literal>() };
      blocks[j]!.set(blockKey, block);
      const unreducedKey = sharding.unreducedAxes.map((a) => position.get(a.name) ?? "").join(",");
      const earlier = block.partial.get(unreducedKey);
      if (earlier === undefined) block.partial.set(unreducedKey, piece);
      else if (literalToString(earlier, Infinity) !== literalToString(piece, Infinity)) {
        throw new ExecutionError(`${inst.name}: result ${j} is replicated along a manual axis by its out sharding, but the devices computed different values for it`);
      }
    });
  }
  const globals = resultShapes(resultShape, outShardings.length);
  const results = globals.map((g, j) => {
    const sharding = outShardings[j]!;
    const global = g.kind === "array" ? Literal.zeros(arrayShape(g.elementType, g.dimensions)) : undefined;
    let whole: Literal | undefined;
    for (const { cuts, partial } of blocks[j]!.values()) {
      const reduced = [...partial.values()].reduce((acc, v) => combine(inst, acc, v, sharding.reductionOp ?? "sum"));
      if (global === undefined) whole = reduced;
      else place(inst, global, reduced, cuts);
    }
    return global ?? whole!;
  });
  return pack(results);
}

/** sdy.constant's value (the literal in the default layout). */
const constant: Kernel<"sdyConstant"> = (inst) => inst.attrs.literal.toDefaultLayout();

export const sdyKernels: KernelTable<SdyOpcode> = {
  sdyShardingConstraint: identity(),
  sdyReshard: identity(),
  sdyDataFlowEdge: identity(),
  sdyFuncDataFlowEdge: identity(),
  sdyPropagationBarrier: identity(),
  sdyAllGather: identity(),
  sdyAllSlice: identity(),
  sdyAllReduce: identity(),
  sdyReduceScatter: identity(),
  sdyAllToAll: identity(),
  sdyCollectivePermute: identity(),
  sdyShardedToUnreduced: identity(),
  sdyReplicatedToUnreduced: identity(),
  sdyShardingGroup: () => Literal.tuple([]),
  sdyConstant: constant,
  sdyNamedComputation: (inst, operands, ctx) => callBody(ctx, inst, inst.attrs.body, operands),
  sdyManualComputation: manualComputation,
};
