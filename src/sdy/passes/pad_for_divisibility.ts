// -sdy-pad-for-divisibility (Shardy's PadForDivisibilityPass): where a dimension's
// size is not a multiple of the number of shards the mesh axes sharding it make, the
// value is padded at the high end so the partitioner can split it evenly. Function
// arguments and results must already divide (an error otherwise). Inside a function:
// an sdy.all_slice, sdy.reduce_scatter or sdy.all_to_all pads its operand to what its
// out sharding divides; an sdy.all_gather or sdy.all_to_all slices the gathered
// dimensions back to their true sizes; a stablehlo.slice whose result would not divide
// takes more of its operand; other StableHLO ops are rebuilt on padded operands; a
// dot_general makes sure its contracting dimensions are padded with zeros (a select
// where the padding is not known to be zero); a reduce sets the padding along the
// dimensions it reduces, and a reduce_window along every padded dimension, to its init
// values.
//
// Which padded values are known to hold zeros in their padding is tracked per function:
// pads the pass creates, and collectives and trims of such values. Shardy's pass also
// knows a "ones" kind that nothing creates yet; only zero is modelled here.
//
// Cases the rewrite does not cover (a convolution whose kernel spatial dimensions or
// non-spatial result dimensions need padding, a multi-result op whose results need
// padding, a value in a region that needs padding, a value an unconverted op would see
// padded) fail with a ShardingError naming the op, never with silently wrong IR.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { sourceLocation } from "../../ir/locations.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, scalarShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { axisSize, ShardingError } from "../../sharding/axis.js";
import { SdyVerifyError, type SdyDiagnostic } from "../../text/mlir/diagnostics.js";
import { meshOf, meshTable } from "../../sharding/mesh.js";
import type { Mesh, TensorSharding } from "../../sharding/model.js";

export const PAD_FOR_DIVISIBILITY = "sdy-pad-for-divisibility";

/** The sdy ops rebuilt like StableHLO ops on padded operands (Shardy's GenericOpPattern takes them). */
const GENERIC_SDY_OPS: ReadonlySet<Opcode> = new Set<Opcode>(["sdyAllReduce", "sdyShardedToUnreduced", "sdyReplicatedToUnreduced"]);

/** Collectives with an out sharding of their own (its sharding is their result's). */
const SDY_COLLECTIVES: ReadonlySet<Opcode> = new Set<Opcode>([
  "sdyAllGather", "sdyAllSlice", "sdyAllReduce", "sdyReduceScatter", "sdyAllToAll", "sdyCollectivePermute",
  "sdyShardedToUnreduced", "sdyReplicatedToUnreduced",
]);

function isStablehloOp(opcode: Opcode): boolean {
  return OP_TABLE[opcode].stablehlo?.startsWith("stablehlo.") === true;
}

function opName(inst: Instruction): string {
  return OP_TABLE[inst.opcode].stablehlo ?? inst.opcode;
}

function unsupported(inst: Instruction, why: string): ShardingError {
  return new ShardingError(`${PAD_FOR_DIVISIBILITY}: '${opName(inst)}' (${inst.name}): ${why}`);
}

function arrayDims(shape: Shape): readonly number[] | undefined {
  return shape.kind === "array" ? shape.dimensions : undefined;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * `dims` with every dimension rounded up to a multiple of the number of shards its
 * axes make (Shardy's getDivisiblePaddedType); `dims` itself without a sharding, for a
 * fully replicated one or an unknown mesh.
 */
export function divisiblePaddedDims(dims: readonly number[], sharding: TensorSharding | undefined, meshes: ReadonlyMap<string, Mesh>): readonly number[] {
  if (sharding === undefined || sharding.dimShardings.every((d) => d.axes.length === 0)) return dims;
  const mesh = meshOf(sharding, meshes);
  if (mesh === undefined) return dims;
  let changed = false;
  const out = dims.map((size, i) => {
    const shards = (sharding.dimShardings[i]?.axes ?? []).reduce((n, a) => n * axisSize(a, mesh), 1);
    if (shards <= 1 || size % shards === 0) return size;
    changed = true;
    return size + shards - (size % shards);
  });
  return changed ? out : dims;
}

/** The sharding of a value: a function argument's, a collective's out sharding, an op's `sdy.sharding`. */
function shardingOf(v: Instruction, fn: Computation): TensorSharding | undefined {
  if (v.opcode === "parameter") return fn.argShardings?.[(v as Instruction<"parameter">).attrs.number];
  if (SDY_COLLECTIVES.has(v.opcode)) return (v.attrs as { readonly outSharding: TensorSharding }).outSharding;
  if (v.opcode === "getTupleElement" && v.sdySharding === undefined) {
    return v.operands[0]!.sdySharding?.[(v as Instruction<"getTupleElement">).attrs.index];
  }
  return v.shape.kind === "array" ? v.sdySharding?.[0] : undefined;
}

/** Per-function state of the rewrite. */
class FunctionPadder {
  /** Padded values whose padding is known to hold zeros. */
  private readonly zeroPadded = new Set<Instruction>();

  constructor(private readonly fn: Computation, private readonly meshes: ReadonlyMap<string, Mesh>) {}

  private padded(dims: readonly number[], sharding: TensorSharding | undefined): readonly number[] {
    return divisiblePaddedDims(dims, sharding, this.meshes);
  }

  /** Whether a value of the original function divides under its own sharding (every element of a tuple). */
  isLegal(v: Instruction): boolean {
    if (v.shape.kind === "tuple") {
      return v.shape.elements.every((e, i) => e.kind !== "array" || sameDims(this.padded(e.dimensions, v.sdySharding?.[i]), e.dimensions));
    }
    const dims = arrayDims(v.shape);
    return dims === undefined || sameDims(this.padded(dims, shardingOf(v, this.fn)), dims);
  }

  private sharded(s: TensorSharding | undefined): { sdySharding: readonly TensorSharding[] } | Record<string, never> {
    return s === undefined ? {} : { sdySharding: [s] };
  }

  /** `value` padded at the high end to `dims` with zeros, keeping its sharding (Shardy's createPaddedValue). */
  private pad(value: Instruction, dims: readonly number[], f: InstructionFactory): Instruction {
    const shape = value.shape as ArrayShape;
    const zero = f.constant(Literal.zeros(scalarShape(shape.elementType)));
    const none = dims.map(() => 0);
    return f.add("pad", [value, zero], {
      edgePaddingLow: none, edgePaddingHigh: dims.map((d, i) => d - shape.dimensions[i]!), interiorPadding: none,
    }, this.sharded(shardingOf(value, this.fn)));
  }

  /**
   * `input` (padded from `origDims`) with its padding along `enforce` (every padded
   * dimension by default) set to the scalar `padValue` by an iota mask and a select
   * (Shardy's ensurePaddingWithValue); `input` itself when no such dimension is padded.
   */
  private withPaddingValue(input: Instruction, origDims: readonly number[], padValue: Instruction, f: InstructionFactory, enforce?: readonly number[]): Instruction {
    const shape = input.shape as ArrayShape;
    const dims = shape.dimensions;
    const s = this.sharded(shardingOf(input, this.fn));
    let mask: Instruction | undefined;
    for (let d = 0; d < dims.length; d++) {
      if (origDims[d] === dims[d] || (enforce !== undefined && !enforce.includes(d))) continue;
      const indexShape = arrayShape("s32", dims);
      const iota = f.add("iota", [], { shape: indexShape, iotaDimension: d }, s);
      const limit = f.constant(Literal.scalar("s32", origDims[d]!));
      const limits = f.add("broadcastInDim", [limit], { dimensions: [...dims], broadcastDimensions: [] }, s);
      const inRange = f.add("compare", [iota, limits], { direction: "LT" }, s);
      mask = mask === undefined ? inRange : f.add("and", [mask, inRange], {}, s);
    }
    if (mask === undefined) return input;
    const fill = f.add("broadcastInDim", [padValue], { dimensions: [...dims], broadcastDimensions: [] }, s);
    return f.add("select", [mask, input, fill], {}, s);
  }

  /** `input` with zeros in its padding along `enforce` (Shardy's ensurePaddingWithKind for kZero). */
  private withZeroPadding(input: Instruction, origDims: readonly number[], f: InstructionFactory, enforce?: readonly number[]): Instruction {
    const dims = arrayDims(input.shape)!;
    if (sameDims(dims, origDims) || this.zeroPadded.has(input)) return input;
    const zero = f.constant(Literal.zeros(scalarShape((input.shape as ArrayShape).elementType)));
    const selected = this.withPaddingValue(input, origDims, zero, f, enforce);
    if (selected !== input && enforce === undefined) this.zeroPadded.add(selected);
    return selected;
  }

  /** `value` sliced back to `origDims` along `trimDims` where it is larger, with `sharding` (Shardy's trimOutputForDims). */
  private trim(value: Instruction, origDims: readonly number[], trimDims: readonly number[], sharding: TensorSharding | undefined, zero: boolean, f: InstructionFactory): Instruction {
    const dims = arrayDims(value.shape)!;
    const limits = dims.map((d, i) => (trimDims.includes(i) && d > origDims[i]! ? origDims[i]! : d));
    if (sameDims(limits, dims)) return value;
    const slice = f.add("slice", [value], { startIndices: dims.map(() => 0), limitIndices: limits, strides: dims.map(() => 1) }, this.sharded(sharding));
    if (zero) this.zeroPadded.add(slice);
    return slice;
  }

  /** The op on `operands`, its result as large as inference and its own sharding say (Shardy's padGenericOp). */
  private generic(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    f.releaseName(inst.name);
    const made = f.add(inst.opcode, operands, inst.attrs, { from: inst });
    if (inst.shape.kind === "tuple") {
      if (!this.isLegal(inst)) throw unsupported(inst, "a result of a multi-result op needs padding");
      return made;
    }
    const dims = arrayDims(inst.shape);
    const inferred = arrayDims(made.shape);
    if (dims !== undefined && inferred !== undefined) {
      const wanted = this.padded(dims, shardingOf(inst, this.fn));
      if (wanted.some((d, i) => d > inferred[i]!)) {
        throw unsupported(inst, `its result ${JSON.stringify(dims)} must be padded to ${JSON.stringify(wanted)}, beyond the shape its operands give (${JSON.stringify(inferred)})`);
      }
    }
    return made;
  }

  /** An sdy.all_slice, sdy.reduce_scatter or sdy.all_to_all on its operand padded to what its out sharding divides (Shardy's padCollectiveOp). */
  private paddedCollective(inst: Instruction, input: Instruction, f: InstructionFactory): { op: Instruction; zero: boolean } {
    const outSharding = (inst.attrs as { readonly outSharding: TensorSharding }).outSharding;
    const dims = arrayDims(input.shape)!;
    const want = this.padded(dims, outSharding);
    const paddedBefore = !sameDims(dims, arrayDims(inst.operands[0]!.shape)!);
    let zero = this.zeroPadded.has(input);
    let operand = input;
    if (!sameDims(want, dims)) {
      // Padding a value that was not padded before makes all its padding zeros.
      zero = !paddedBefore || zero;
      operand = this.pad(input, want, f);
      if (zero) this.zeroPadded.add(operand);
    }
    f.releaseName(inst.name);
    const op = f.add(inst.opcode, [operand], inst.attrs, { from: inst });
    if (zero) this.zeroPadded.add(op);
    return { op, zero };
  }

  /** The replacement of one op of the function, or undefined to keep it. */
  visit(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
    const reshaped = operands.some((o, i) => !shapesAlike(o.shape, inst.operands[i]!.shape));
    const keep = (): undefined => {
      // Shardy would hand the op a cast back to the unpadded type; that is not modelled.
      if (reshaped) throw unsupported(inst, "an operand was padded but the op itself needs no padding, which the pass does not rewrite");
      return undefined;
    };
    switch (inst.opcode) {
      case "sdyAllSlice":
      case "sdyReduceScatter": {
        const outSharding = (inst.attrs as { readonly outSharding: TensorSharding }).outSharding;
        const orig = arrayDims(inst.operands[0]!.shape)!;
        if (sameDims(this.padded(orig, outSharding), orig)) return keep();
        return this.paddedCollective(inst, operands[0]!, f).op;
      }
      case "sdyAllToAll": {
        if (this.isLegal(inst.operands[0]!) && this.isLegal(inst)) return keep();
        const zeroBefore = this.zeroPadded.has(operands[0]!);
        const { op } = this.paddedCollective(inst, operands[0]!, f);
        const srcDims = (inst as Instruction<"sdyAllToAll">).attrs.params.map((p) => p.srcDim);
        return this.trim(op, arrayDims(inst.operands[0]!.shape)!, srcDims, shardingOf(inst, this.fn), zeroBefore, f);
      }
      case "sdyAllGather": {
        if (this.isLegal(inst.operands[0]!)) return keep();
        const op = this.generic(inst, operands, f);
        const zero = this.zeroPadded.has(operands[0]!);
        if (zero) this.zeroPadded.add(op);
        const gathered = (inst as Instruction<"sdyAllGather">).attrs.gatheringAxes.flatMap((axes, d) => (axes.length > 0 ? [d] : []));
        return this.trim(op, arrayDims(inst.shape)!, gathered, shardingOf(inst, this.fn), zero, f);
      }
      default:
        break;
    }
    const converted = (isStablehloOp(inst.opcode) || GENERIC_SDY_OPS.has(inst.opcode))
      && !(this.isLegal(inst) && inst.operands.every((o) => this.isLegal(o)));
    if (!converted) return keep();
    switch (inst.opcode) {
      case "slice": return this.slice(inst as Instruction<"slice">, operands, f);
      case "pad": return this.padOp(inst as Instruction<"pad">, operands, f);
      case "dot": {
        const dn = (inst as Instruction<"dot">).attrs.dimensionNumbers;
        const lhs = this.withZeroPadding(operands[0]!, arrayDims(inst.operands[0]!.shape)!, f, dn.lhsContractingDimensions);
        const rhs = this.withZeroPadding(operands[1]!, arrayDims(inst.operands[1]!.shape)!, f, dn.rhsContractingDimensions);
        return this.generic(inst, [lhs, rhs, ...operands.slice(2)], f);
      }
      case "convolution": return this.convolution(inst as Instruction<"convolution">, operands, f);
      case "reduce": {
        // Padding along a reduced dimension would enter the reduction: it must hold the
        // init value, which every reducer leaves the others unchanged by (an `or` over
        // zero-padded comparisons of padding came out true).
        const reduced = (inst as Instruction<"reduce">).attrs.dimensions;
        return this.generic(inst, this.withInitPadding(inst, operands, f, reduced), f);
      }
      case "reduceWindow":
        // A window reaching into the padding must see what the op's own padding holds: the init value.
        return this.generic(inst, this.withInitPadding(inst, operands, f), f);
      case "reshape": {
        // Its result shape is an attribute: the padded one (the resolved reshape keeps each shard's elements in row-major order).
        const dims = this.padded(arrayDims(inst.shape)!, shardingOf(inst, this.fn));
        f.releaseName(inst.name);
        return f.add("reshape", operands, { dimensions: dims }, { from: inst });
      }
      default:
        return this.generic(inst, operands, f);
    }
  }

  /**
   * A variadic reduce's or reduce_window's inputs (the first half of its operands) with
   * their padding along `enforce` (every padded dimension by default) set to their init
   * values (the second half).
   */
  private withInitPadding(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, enforce?: readonly number[]): Instruction[] {
    const inputs = operands.length / 2;
    return operands.map((operand, i) => (i < inputs
      ? this.withPaddingValue(operand, arrayDims(inst.operands[i]!.shape)!, operands[inputs + i]!, f, enforce)
      : operand));
  }

  /**
   * A convolution on operands zero-padded along their feature and spatial dimensions
   * (batch and output-feature padding passes through), its output spatial dimensions
   * trimmed to what its sharding needs (Shardy's StablehloConvolutionOpPattern).
   */
  private convolution(inst: Instruction<"convolution">, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    const dn = inst.attrs.dimensionNumbers;
    const [lhsOrig, rhsOrig] = [arrayDims(inst.operands[0]!.shape)!, arrayDims(inst.operands[1]!.shape)!];
    const rhsDims = arrayDims(operands[1]!.shape)!;
    // The window's sizes are the kernel's spatial sizes: a padded kernel would need a new window.
    if (dn.kernelSpatialDimensions.some((d) => rhsDims[d] !== rhsOrig[d])) throw unsupported(inst, "a kernel spatial dimension is padded");
    const lhs = this.withZeroPadding(operands[0]!, lhsOrig, f, [dn.inputFeatureDimension, ...dn.inputSpatialDimensions]);
    const rhs = this.withZeroPadding(operands[1]!, rhsOrig, f, [dn.kernelInputFeatureDimension, ...dn.kernelSpatialDimensions]);
    f.releaseName(inst.name);
    const conv = f.add("convolution", [lhs, rhs, ...operands.slice(2)], inst.attrs, { from: inst });
    const sharding = shardingOf(inst, this.fn);
    const want = this.padded(arrayDims(inst.shape)!, sharding);
    const inferred = arrayDims(conv.shape)!;
    const short = want.findIndex((size, d) => inferred[d]! < size || (!dn.outputSpatialDimensions.includes(d) && inferred[d]! !== size));
    if (short >= 0) {
      throw unsupported(inst, `result dimension ${short} comes out as ${inferred[short]}, not the ${want[short]} its sharding needs (resolve the sharding to divide first)`);
    }
    return this.trim(conv, want, dn.outputSpatialDimensions, sharding, true, f);
  }

  /** A slice whose result must be padded takes that much more of its operand (Shardy's StablehloSliceOpPattern). */
  private slice(inst: Instruction<"slice">, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    const dims = arrayDims(inst.shape)!;
    const sharding = shardingOf(inst, this.fn);
    const want = this.padded(dims, sharding);
    if (sameDims(want, dims)) return this.generic(inst, operands, f);
    const operandDims = arrayDims(operands[0]!.shape)!;
    const { startIndices, limitIndices, strides } = inst.attrs;
    const limits = want.map((size, d) => {
      if (size === dims[d]) return limitIndices[d]!;
      const limit = startIndices[d]! + size;
      if (strides[d] !== 1 || limit > operandDims[d]!) {
        throw unsupported(inst, `dimension ${d} cannot be widened to ${size} (stride ${strides[d]}, operand size ${operandDims[d]})`);
      }
      return limit;
    });
    f.releaseName(inst.name);
    return f.add("slice", [operands[0]!], { startIndices, limitIndices: limits, strides }, { from: inst });
  }

  /**
   * A pad whose result must be padded grows its high edge. Where the operand's own
   * padding lands inside the true result, that padding is set to the pad value first
   * (Shardy's StablehloPadOpPattern). Along a dimension whose operand was padded, the
   * first padding element sits at low + n·(interior + 1) for n true elements, inside the
   * result (of size low + (n − 1)·(interior + 1) + 1 + high) exactly when high > interior,
   * or high > 0 when n = 0.
   */
  private padOp(inst: Instruction<"pad">, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    const inputDims = arrayDims(operands[0]!.shape)!;
    const trueDims = arrayDims(inst.operands[0]!.shape)!;
    const want = this.padded(arrayDims(inst.shape)!, shardingOf(inst, this.fn));
    const { edgePaddingLow: low, edgePaddingHigh: high, interiorPadding: interior } = inst.attrs;
    const newHigh = want.map((size, d) => size - inputDims[d]! - low[d]! - Math.max(0, inputDims[d]! - 1) * interior[d]!);
    const paddingInside = inputDims.some((size, d) => size > trueDims[d]! && high[d]! > (trueDims[d] === 0 ? 0 : interior[d]!));
    let input = operands[0]!;
    if (paddingInside) input = this.withPaddingValue(input, trueDims, operands[1]!, f);
    f.releaseName(inst.name);
    return f.add("pad", [input, operands[1]!], { edgePaddingLow: low, edgePaddingHigh: newHigh, interiorPadding: interior }, { from: inst });
  }
}

function shapesAlike(a: Shape, b: Shape): boolean {
  if (a.kind === "array" && b.kind === "array") return sameDims(a.dimensions, b.dimensions);
  if (a.kind === "tuple" && b.kind === "tuple") return a.elements.length === b.elements.length && a.elements.every((e, i) => shapesAlike(e, b.elements[i]!));
  return a.kind === b.kind;
}

/** The function's argument and result shapes with their shardings. */
function ioShapes(fn: Computation): { args: readonly Shape[]; results: readonly Shape[] } {
  const root = fn.root;
  const results = fn.resultShardings !== undefined && fn.resultShardings.length > 1 && root.shape.kind === "tuple" ? root.shape.elements : [root.shape];
  return { args: fn.parameters.map((p) => p.shape), results };
}

/** The diagnostics Shardy reports for a function whose arguments or results do not divide; none when they all do. */
function functionIoErrors(fn: Computation, meshes: ReadonlyMap<string, Mesh>): SdyDiagnostic[] {
  const at = sourceLocation(fn);
  const where = at === undefined ? {} : { line: at.line, column: at.column };
  const divides = (shape: Shape, s: TensorSharding | undefined): boolean =>
    shape.kind !== "array" || sameDims(divisiblePaddedDims(shape.dimensions, s, meshes), shape.dimensions);
  const { args, results } = ioShapes(fn);
  let problem: string | undefined;
  const badArg = args.findIndex((shape, i) => !divides(shape, fn.argShardings?.[i]));
  if (badArg >= 0) problem = `argument #${badArg}`;
  else {
    const badResult = results.findIndex((shape, i) => !divides(shape, fn.resultShardings?.[i]));
    if (badResult >= 0) problem = `result #${badResult}`;
  }
  if (problem === undefined) return [];
  return [
    { severity: "error", message: `'func.func' op ${problem} has a non-divisible sharding. Shardy expects function IO to be divisible.`, ...where },
    { severity: "error", message: "failed to legalize operation 'func.func'", ...where },
  ];
}

export function padForDivisibility(module: HloModule): HloModule {
  const meshes = meshTable(module);
  const functions = module.functions ?? [module.entry];
  for (const fn of functions) {
    const errors = functionIoErrors(fn, meshes);
    if (errors.length > 0) throw new SdyVerifyError(errors);
  }
  const names = new Set(functions.map((fn) => fn.name));
  return mapComputations(module, (c) => {
    if (!names.has(c.name)) {
      // Regions (a manual computation's body, ...) are not rewritten: refuse one that would need it.
      const checker = new FunctionPadder(c, meshes);
      const bad = c.instructions.find((inst) => !checker.isLegal(inst));
      if (bad !== undefined) throw unsupported(bad, `a value in region '${c.name}' needs padding; only function bodies are rewritten`);
      return c;
    }
    const padder = new FunctionPadder(c, meshes);
    const out = rebuildFunction(c, padder);
    if (!shapesAlike(out.root.shape, c.root.shape)) {
      throw new ShardingError(`${PAD_FOR_DIVISIBILITY}: function '${c.name}' would return a padded value (${JSON.stringify(arrayDims(out.root.shape))})`);
    }
    return out;
  });
}

function rebuildFunction(c: Computation, padder: FunctionPadder): Computation {
  return rebuild(c, (inst, operands, f) => padder.visit(inst, operands, f));
}

export const padForDivisibilityPass: Pass = { name: PAD_FOR_DIVISIBILITY, run: (module) => padForDivisibility(module) };

export const PAD_FOR_DIVISIBILITY_REGISTRATION: PassRegistration = {
  name: PAD_FOR_DIVISIBILITY,
  description: "pads values whose dimensions their shardings do not divide, and slices them back where they are gathered",
  options: [],
  create: () => padForDivisibilityPass,
};
