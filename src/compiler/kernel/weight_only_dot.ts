// Weight-only quantized and bf16 matrix products, backend-neutral: a dot of f32
// activations with weights stored narrower (int8 with a per-output-channel f32 scale,
// or bf16), which the GEMV kernels read in their stored type and widen to f32 in
// registers, so a decode step streams 4x (int8) or 2x (bf16) fewer bytes of weights.
//
// The forms matched (on dots in GEMM form, after the dot decomposer), with w: s8 or bf16
// and s: f32[n], one scale per column of B (an output channel):
//
//   "none":     dot(x, convert(w))
//   "weights":  dot(x, multiply(convert(w), broadcast(s)))     the scale on B's columns
//   "product":  multiply(dot(x, convert(w)), broadcast(s))     the scale on C's columns
//
// The kernels compute C[i][j] = s[j] · Σ_p x[i][p]·w[p][j] in all three (s = 1 for
// "none"): exactly the program's arithmetic for "product"; for "weights" the program
// rounds each w·s first, and the two differ by rounding only, as an f32 dot of depth k
// differs between summation orders (tests: |C − C_interpreter| ≤ 2(k+2)·2⁻²⁴·Σ_p|x||w||s|).
// Both forms are matched because both occur: quantization tools write the first (the
// weight is dequantized, then used), hand-written inference code the second (the scale
// factored out of the sum, as an int8 GEMM applies it).
//
// The weights pass (passes/weight_only_dot.ts) wraps a match into a fusion of kind
// "custom" whose computation is the matched ops themselves, over parameters
// (x, w[, s]): the interpreter and any backend without the kernel evaluate it as the
// program says, and weightOnlyDotOf reads it back for the kernels (wasm/gemv_narrow.ts,
// native/gemv_narrow_c.ts). Only products of 1 to GEMV_MAX_ROWS rows are matched: they
// are bandwidth-bound, so bytes read are time; larger products are compute-bound, and
// there the convert stays a loop kernel writing f32 weights that the packed GEMM reads
// (one pass over the weights, 1/m of the GEMM's work).

import type { Computation, Instruction } from "../../ir/computation.js";
import type { ArrayShape } from "../../types/shape.js";
import type { Declined } from "./declined.js";
import { checkGemmSpec, GEMV_MAX_ROWS, gemmSpecOfDot, ROW_DOT_COLUMNS, type GemmSpec } from "./gemm_plan.js";
import { roundUp } from "../../types/index_util.js";

/** Stored types of weights the kernels widen. */
export type NarrowWeight = "s8" | "bf16";

export const narrowWeightBytes = (w: NarrowWeight): number => (w === "s8" ? 1 : 2);

/** Where the per-column scale enters (see the file's comment). */
export type ScalePlacement = "none" | "weights" | "product";

/** A weight-only dot: the f32 GEMM it is (B as the f32 weights), what B is stored as, its scale. */
export interface WeightOnlyDot {
  /** The product's GEMM form; B's element type is the stored `weight`, not spec.elementType. */
  readonly spec: GemmSpec;
  readonly weight: NarrowWeight;
  readonly scale: ScalePlacement;
}

/** The fused computation's parameters: the activations, the stored weights, the scale. */
export const WEIGHT_ONLY_OPERANDS = { x: 0, w: 1, scale: 2 } as const;

const arrayShapeOf = (inst: Instruction): ArrayShape | undefined => (inst.shape.kind === "array" ? inst.shape : undefined);

/** `inst` = convert(w) from s8 or bf16 to f32: w. */
function widenedWeight(inst: Instruction): Instruction | undefined {
  if (inst.opcode !== "convert" || arrayShapeOf(inst)?.elementType !== "f32") return undefined;
  const w = inst.operands[0]!;
  const t = arrayShapeOf(w)?.elementType;
  return t === "s8" || t === "bf16" ? w : undefined;
}

/** `inst` = broadcast(s) with s an f32 vector along dimension `dim` of the result alone: s. */
function columnScale(inst: Instruction, dim: number): Instruction | undefined {
  if (inst.opcode !== "broadcastInDim") return undefined;
  const s = inst.operands[0]!;
  const shape = arrayShapeOf(s);
  const dims = (inst as Instruction<"broadcastInDim">).attrs.broadcastDimensions;
  if (shape?.elementType !== "f32" || shape.dimensions.length !== 1 || dims.length !== 1 || dims[0] !== dim) return undefined;
  return s;
}

/** multiply(p, q) in either order, with `left` matching one operand and `right` the other. */
function product<L, R>(inst: Instruction, left: (i: Instruction) => L | undefined, right: (i: Instruction) => R | undefined): [L, R] | undefined {
  if (inst.opcode !== "multiply") return undefined;
  const [p, q] = inst.operands as [Instruction, Instruction];
  for (const [a, b] of [[p, q], [q, p]] as const) {
    const l = left(a);
    const r = l === undefined ? undefined : right(b);
    if (l !== undefined && r !== undefined) return [l, r];
  }
  return undefined;
}

/** B's one free dimension (its column index n) in a GEMM-form dot's rhs, or undefined when B has several. */
function rhsColumnDimension(dot: Instruction<"dot">, spec: GemmSpec): number | undefined {
  const rank = arrayShapeOf(dot.operands[1]!)!.dimensions.length;
  const nb = dot.attrs.dimensionNumbers.rhsBatchDimensions.length;
  if (rank !== nb + 2) return undefined;
  return spec.rhsTransposed ? nb : nb + 1;
}

/** The parts of a match: the dot, the activations, the stored weights, the scale (none for "none"). */
export interface WeightOnlyMatch {
  readonly dot: Instruction<"dot">;
  readonly x: Instruction;
  readonly w: Instruction;
  readonly s?: Instruction;
  readonly scale: ScalePlacement;
}

/** Why the GEMV kernels do not take a dot of this GEMM form, or undefined. */
export function weightOnlyProblem(spec: GemmSpec): string | undefined {
  const problem = checkGemmSpec(spec);
  if (problem !== undefined) return problem;
  if (spec.elementType !== "f32") return `weight-only dot: the product is ${spec.elementType} (the kernels take f32)`;
  if (spec.m < 1 || spec.m > GEMV_MAX_ROWS) return `weight-only dot: ${spec.m} rows of A (the GEMV kernels take 1 to ${GEMV_MAX_ROWS}; more are compute-bound)`;
  if (spec.k === 0 || spec.n === 0 || spec.batch === 0) return "weight-only dot: an empty product";
  if (spec.lhsTransposed === true && spec.m > 1) return "weight-only dot: A stored transposed";
  return undefined;
}

/** The dot's match as a weight-only dot with the scale on B ("weights") or none, or undefined. */
function matchDot(dot: Instruction<"dot">): WeightOnlyMatch | undefined {
  const spec = gemmSpecOfDot(dot);
  if ("declined" in spec || weightOnlyProblem(spec) !== undefined) return undefined;
  const [x, b] = dot.operands as [Instruction, Instruction];
  const w = widenedWeight(b);
  if (w !== undefined) return { dot, x, w, scale: "none" };
  const column = rhsColumnDimension(dot, spec);
  if (column === undefined) return undefined;
  const scaled = product(b, widenedWeight, (i) => columnScale(i, column));
  return scaled === undefined || arrayShapeOf(scaled[0])!.elementType !== "s8" ? undefined : { dot, x, w: scaled[0], s: scaled[1], scale: "weights" };
}

/**
 * A weight-only dot rooted at `inst`: a dot ("none", "weights"), or the multiply of a
 * plain one by its column scale ("product"); undefined when `inst` is neither.
 * The scale goes with int8 weights only (bf16 weights need none).
 */
export function matchWeightOnlyDot(inst: Instruction): WeightOnlyMatch | undefined {
  if (inst.opcode === "dot") return matchDot(inst as Instruction<"dot">);
  const result = arrayShapeOf(inst);
  if (result === undefined || result.elementType !== "f32") return undefined;
  const plainDot = (i: Instruction): WeightOnlyMatch | undefined => {
    const m = i.opcode === "dot" ? matchDot(i as Instruction<"dot">) : undefined;
    return m?.scale === "none" && arrayShapeOf(m.w)!.elementType === "s8" ? m : undefined;
  };
  // The product's columns are its last dimension (GEMM form: [batch..., m, n]).
  const scaled = product(inst, plainDot, (i) => columnScale(i, result.dimensions.length - 1));
  return scaled === undefined ? undefined : { ...scaled[0], s: scaled[1], scale: "product" };
}

/** A custom fusion's computation read back as a weight-only dot (what the pass built), or why not. */
export function weightOnlyDotOf(fused: Computation): WeightOnlyDot | Declined {
  const match = matchWeightOnlyDot(fused.root);
  if (match === undefined) return { declined: `fusion ${fused.name}: not a weight-only dot` };
  const { x, w, scale } = WEIGHT_ONLY_OPERANDS;
  const isParameter = (i: Instruction | undefined, number: number): boolean =>
    i?.opcode === "parameter" && (i as Instruction<"parameter">).attrs.number === number;
  if (!isParameter(match.x, x) || !isParameter(match.w, w) || (match.s !== undefined && !isParameter(match.s, scale))) {
    return { declined: `fusion ${fused.name}: the weight-only dot's operands are not its parameters (x, w, scale)` };
  }
  const spec = gemmSpecOfDot(match.dot) as GemmSpec;
  return { spec, weight: arrayShapeOf(match.w)!.elementType as NarrowWeight, scale: match.scale };
}

/** How the kernels split a weight-only dot: units of (batch, chunk of columns), as the GEMV schedules do. */
export interface WeightOnlySchedule {
  readonly dot: WeightOnlyDot;
  /** "rowDots": B stored [n][k], C's elements dot products of rows; "streamB": B stored [k][n], swept row after row. */
  readonly kind: "rowDots" | "streamB";
  readonly chunk: number;
  readonly nChunks: number;
  readonly parallelExtent: number;
  readonly costPerUnit: number;
}

/** Columns the stream kernels take a step (16 int8 weights, one 16-byte load, widen to four f32 vectors of 4). */
export const NARROW_COLUMN_VECTOR = 16;

/**
 * Columns of C the stream kernels sweep at a time (a multiple of NARROW_COLUMN_VECTOR):
 * runs of W's rows of 2 to 4 KiB, and, where that allows, the m rows of C's tile (f32)
 * and the four rows of W a pass reads within 16 KiB of L1 together. Measured on
 * native (gemv_probe, dot ÷ a plain read of the same bytes, load 8-9 on 2 cores): a
 * 4096 x 4096 int8 W read by one row at 0.23 with tiles of 4096 columns (16 KiB of
 * each row of C beside 16 KiB of W), 0.42 with 2048; by four rows at 0.26 with 4096
 * columns and 0.17 with 816 (W's runs too short), hence the 2 KiB floor.
 */
export function streamTileColumns(dot: WeightOnlyDot): number {
  const wb = narrowWeightBytes(dot.weight);
  const fit = Math.floor(16384 / (4 * dot.spec.m + 4 * wb));
  const columns = Math.min(4096 / wb, Math.max(2048 / wb, fit));
  return columns - (columns % NARROW_COLUMN_VECTOR);
}

/** Units of whole column groups: at least 16 units when n allows, each reading at least 4 KiB (streamB: 16 KiB) of weights. */
export function planWeightOnlyDot(dot: WeightOnlyDot): WeightOnlySchedule {
  const { batch, m, n, k } = dot.spec;
  const wb = narrowWeightBytes(dot.weight);
  const kind = dot.spec.rhsTransposed === true ? "rowDots" : "streamB";
  const step = kind === "rowDots" ? ROW_DOT_COLUMNS : NARROW_COLUMN_VECTOR;
  const minBytes = kind === "rowDots" ? 4096 : 16384;
  const chunk = Math.max(roundUp(Math.ceil(n / 16), step), roundUp(Math.ceil(minBytes / (k * wb)), step));
  const nChunks = Math.max(1, Math.ceil(n / chunk));
  const columns = Math.min(chunk, n);
  return { dot, kind, chunk, nChunks, parallelExtent: batch * nChunks, costPerUnit: 2 * m * columns * k + columns * k * wb };
}
