// The primitive table: every operation of the front end is one row here, with
//   lower    its builder lowering (the IR's shape inference gives its result shapes)
//   jvp      its JVP rule (tangents out from tangents in), or "zero" where the result
//            does not vary continuously with the inputs (integer and boolean results,
//            comparisons, rounding), or { unsupported } with the reason
//   vjp      its VJP rule (cotangents of the inputs from the cotangents of the results;
//            null for a zero cotangent), with the same alternatives
//   batch    its batching rule for vmap
//   example  arguments and params at which test/frontend/rules.test.ts checks the rules
//            (JVP and VJP against central finite differences in float64, batching
//            against a loop), so a new row is tested without writing a test.
// The table's type is total over PrimitiveParams: a new primitive without a row, or a
// row without a rule, is a compile error naming what is missing.
//
// Rules are written with lax's functions, so they are themselves differentiable,
// batchable and traceable (grad of grad, vmap of grad, grad under jit).

import { XlaBuilder, parameter, type XlaOp } from "../builder/xla_builder.js";
import { and, compare, or, select } from "../builder/elementwise.js";
import { getTupleElement } from "../builder/control.js";
import { constantR0, sort as sortOp } from "../builder/data_movement.js";
import { convertElementType as convertOp } from "../builder/conversion.js";
import { dotGeneral as dotOp } from "../builder/linalg.js";
import type { ComparisonDirection } from "../ir/attributes.js";
import type { Opcode } from "../ir/opcodes.js";
import { arrayShape, scalarShape } from "../types/shape.js";
import { makeWindow } from "../ir/shape/window.js";
import type { Scalar } from "../types/literal.js";
import { bind, type ArrayBase } from "./core.js";
import { DTYPES, dtypeKind, isInexact, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { takeAlongAxis } from "./indexing.js";
import { GATHER_SCATTER_ROWS, type GatherParams, type ScatterParams } from "./gather_scatter.js";
import { LINALG_ROWS } from "./linalg_rules.js";
import { LU_ROWS } from "./lu_rules.js";
import { DECOMPOSITION_ROWS } from "./decomposition_rules.js";
import { COMPLEX_ROWS } from "./complex_rules.js";
import { FFT_ROWS } from "./fft_rules.js";
import { WINDOW_ROWS, type ConvParams, type WindowParams } from "./window_rules.js";
import { SHARDING_ROWS, type MeshAxes } from "./sharding_rules.js";
import { range } from "../types/arrays.js";

type None = Record<string, never>;
type Axes = { readonly axes: readonly number[] };
type ArgIndex = { readonly axis: number; readonly indexDtype: DType };
type Cumulative = { readonly axis: number; readonly reverse: boolean };
type Fft = { readonly fftLength: readonly number[] };

/** Each primitive's params (plain data: they key the eager cache). */
export interface PrimitiveParams {
  neg: None; exp: None; log: None; sin: None; cos: None; tan: None; tanh: None; logistic: None; sqrt: None;
  rsqrt: None; abs: None; sign: None; floor: None; ceil: None; round: None; log1p: None; expm1: None; erf: None;
  not: None; isFinite: None; stopGradient: None;
  add: None; sub: None; mul: None; div: None; max: None; min: None; pow: None; rem: None; atan2: None;
  and: None; or: None; xor: None; shiftLeft: None; shiftRightLogical: None;
  erfInv: None;
  /** log|Γ(x)|, its derivative ψ(x), and ψ's order-th derivative (a static non-negative integer order, as XLA's polygamma(m, x) with m constant). */
  lgamma: None; digamma: None; polygamma: { readonly order: number };
  eq: None; ne: None; lt: None; le: None; gt: None; ge: None;
  selectN: None;
  convertElementType: { readonly newDtype: DType; readonly weakType: boolean };
  /** Reinterprets the bits (same width): uint32 random bits as float32, say. */
  bitcastConvertType: { readonly newDtype: DType };
  broadcastInDim: { readonly shape: readonly number[]; readonly broadcastDimensions: readonly number[] };
  reshape: { readonly newSizes: readonly number[] };
  transpose: { readonly permutation: readonly number[] };
  reduceSum: Axes; reduceMax: Axes; reduceMin: Axes; reduceProd: Axes; reduceAnd: Axes; reduceOr: Axes;
  argmax: ArgIndex; argmin: ArgIndex;
  /** Running sums (products) along `axis`; `reverse` runs from the end. */
  cumsum: Cumulative; cumprod: Cumulative;
  dotGeneral: {
    readonly lhsContracting: readonly number[]; readonly rhsContracting: readonly number[];
    readonly lhsBatch: readonly number[]; readonly rhsBatch: readonly number[];
    readonly preferredElementType?: DType;
  };
  slice: { readonly startIndices: readonly number[]; readonly limitIndices: readonly number[]; readonly strides: readonly number[] };
  pad: { readonly low: readonly number[]; readonly high: readonly number[]; readonly interior: readonly number[] };
  concatenate: { readonly dimension: number };
  rev: { readonly dimensions: readonly number[] };
  iota: { readonly dtype: DType; readonly shape: readonly number[]; readonly dimension: number };
  gather: GatherParams;
  /** The scatters differ in how an update combines with the value it lands on: replaces it, adds, multiplies, min, max. */
  scatter: ScatterParams; scatterAdd: ScatterParams; scatterMul: ScatterParams; scatterMin: ScatterParams; scatterMax: ScatterParams;
  /** dynamic_slice(operand, ...startIndices): the start indices are scalar operands. */
  dynamicSlice: { readonly sliceSizes: readonly number[] };
  /** dynamic_update_slice(operand, update, ...startIndices). */
  dynamicUpdateSlice: None;
  /** Sorts its operands together along `dimension`, lexicographically by the first `numKeys`; floats in total order (NaN last). */
  sort: { readonly dimension: number; readonly isStable: boolean; readonly numKeys: number };
  /** The lower Cholesky factor of (a batch of) symmetric positive-definite matrices; reads only the lower triangle. */
  cholesky: None;
  /** Solves op(a) x = b (leftSide) or x op(a) = b for lower (or upper) triangular a; op transposes when transposeA. */
  triangularSolve: { readonly leftSide: boolean; readonly lower: boolean; readonly unitDiagonal: boolean; readonly transposeA: boolean };
  /** P a = L U with partial pivoting: (L and U packed in one matrix, the 0-based row swaps, the permutation P applies); square matrices. */
  lu: None;
  /** Solves op(a) x = b for square a by its LU factorization; op transposes when transposeA. */
  solve: { readonly transposeA: boolean };
  /** The determinant of square matrices, from their LU factorization. */
  det: None;
  /** Q R = a with orthonormal columns of Q and upper-triangular R: (q, r); fullMatrices gives Q all m columns. */
  qr: { readonly fullMatrices: boolean };
  /** The eigenvectors (columns) and ascending eigenvalues of symmetric matrices: (v, w); reads the `lower` (or upper) triangle. */
  eigh: { readonly lower: boolean };
  /**
   * The eigenvalues of square matrices, then (as asked) their left and right eigenvectors
   * (columns, unit 2-norm, largest component real: LAPACK's geev), all complex: (w, vl?,
   * vr?). The eigenvectors' derivatives are refused unless enableEigvecDerivs, as JAX's.
   */
  eig: { readonly computeLeftEigenvectors: boolean; readonly computeRightEigenvectors: boolean; readonly enableEigvecDerivs: boolean };
  /** a = U diag(s) Vᵀ: (s, u, vt), or (s) without computeUv; s descending. */
  svd: { readonly fullMatrices: boolean; readonly computeUv: boolean };
  /** complex(re, im) from two float arrays of one dtype; real, imag and conj of complex arrays. */
  complex: None; real: None; imag: None; conj: None;
  /** XLA's FFT over the innermost fftLength.length (1 to 3) dimensions: complex to complex (fft, ifft), real to half-spectrum (rfft) and back (irfft). */
  fft: Fft; ifft: Fft; rfft: Fft; irfft: Fft;
  /** XLA's convolution as JAX's conv_general_dilated (window_rules.ts). */
  convGeneralDilated: ConvParams;
  /** reduce_window with add, max or min from the reduction's identity (window_rules.ts). */
  reduceWindowSum: WindowParams; reduceWindowMax: WindowParams; reduceWindowMin: WindowParams;
  /** sdy.sharding_constraint on the program's one mesh (`mesh`): each dimension's mesh axes (sharding_rules.ts). */
  shardingConstraint: { readonly mesh: MeshAxes; readonly dims: readonly (readonly string[])[] };
}

export type PrimitiveName = keyof PrimitiveParams;

type V = ArrayBase;
/** A derivative the rule tables do not give: "zero" (the result is piecewise constant in the inputs) or unsupported, with why. */
export type NoDerivative = "zero" | { readonly unsupported: string };
/** Tangents are null where zero (an input that does not depend on the differentiated ones); at least one is not. */
export type JvpRule<P> = (tangents: readonly (V | null)[], primalsIn: readonly V[], primalsOut: readonly V[], params: P) => V[];
export type VjpRule<P> = (cotangents: readonly V[], primalsIn: readonly V[], primalsOut: readonly V[], params: P) => (V | null)[];
/** Batch dimension of each value (null: not batched); the rule returns the results and theirs. */
export type BatchRule<P> = (values: readonly V[], dims: readonly (number | null)[], params: P, axisSize: number) => { values: V[]; dims: (number | null)[] };

/** An argument of a row's example: its shape, and bool, uint32 (any bits) or a float range (default [-2, 2]). */
export interface ExampleArg {
  readonly shape: readonly number[];
  /**
   * int32: integers drawn from [range[0], range[1]) (indices, which may be out of bounds on purpose);
   * spd: symmetric positive-definite matrices (m mᵀ + n I for a random m), for factorizations;
   * complex: complex128 values with both parts drawn from the range (their tangents complex too).
   */
  readonly kind?: "bool" | "float" | "uint32" | "int32" | "spd" | "complex";
  readonly range?: readonly [number, number];
}

export interface PrimitiveRow<P> {
  readonly lower: (b: XlaBuilder, operands: readonly XlaOp[], params: P) => XlaOp[];
  /** Whether the result is weakly typed, where the default (every input is, and the dtype is kept) is wrong. */
  readonly weakType?: (params: P) => boolean;
  readonly jvp: JvpRule<P> | NoDerivative;
  /** "transpose": reverse mode transposes the JVP rule (which is linear in the tangents), as JAX derives it, for rules whose transpose is long to write. */
  readonly vjp: VjpRule<P> | NoDerivative | "transpose";
  readonly batch: BatchRule<P>;
  readonly example: { readonly args: readonly ExampleArg[]; readonly params: P };
  /** Further points the rule test checks (other dtypes or parameters that take another branch of a rule: complex inputs, odd lengths). */
  readonly moreExamples?: readonly { readonly args: readonly ExampleArg[]; readonly params: P }[];
}

// ---- helpers of the rules

export { range };
export const without = (all: readonly number[], ...drop: (readonly number[])[]): number[] => all.filter((d) => !drop.some((l) => l.includes(d)));
const argsort = (xs: readonly number[]): number[] => range(xs.length).sort((a, b) => xs[a]! - xs[b]!);
export const zerosLike = (x: V): V => lax.full(x.shape, 0, x.dtype);

/** `x` with its batch dimension `d` moved to the front, or broadcast to have one of `size` there when it has none. */
export function moveBatchToFront(x: V, d: number | null, size: number): V {
  if (d === null) return lax.broadcastInDim(x, [size, ...x.shape], range(x.ndim, 1));
  return d === 0 ? x : lax.transpose(x, [d, ...without(range(x.ndim), [d])]);
}

/** Applies primitive `name` (the rules' way to re-bind their own primitive with other params). */
export const bindRow = <N extends PrimitiveName>(name: N) => (args: readonly V[], params: PrimitiveParams[N]): V[] => bind(name, args, params);

/**
 * The batching rule of an op that batches its leading dimensions (an op on matrices,
 * or an elementwise one): every operand's batch dimension moved to the front (a new one
 * broadcast where it has none), and so every result's.
 * (A function declaration: the rows of other modules call it while this one loads.)
 */
export function matrixBatch<N extends PrimitiveName>(name: N): BatchRule<PrimitiveParams[N]> {
  return (xs, dims, p, size) => {
    const out = bindRow(name)(xs.map((x, i) => moveBatchToFront(x, dims[i]!, size)), p);
    return { values: out, dims: out.map(() => 0) };
  };
}

/** Elementwise batching is the same: every operand gets the batch dimension in front. */
const elementwiseBatch = matrixBatch;

/** The tangents with zeros (of each primal's shape and dtype) for the null ones. */
export const instantiate = (t: readonly (V | null)[], x: readonly V[]): V[] => t.map((ti, i) => ti ?? zerosLike(x[i]!));

/** A linear primitive's JVP: the primitive applied to the tangents. */
// (A function declaration: the rows of other modules call it while this one loads.)
export function linearJvp<N extends PrimitiveName>(name: N): JvpRule<PrimitiveParams[N]> {
  return (t, x, _y, params) => bind(name, instantiate(t, x), params);
}

/** The sum of the terms whose tangent is not zero (a zero tangent's term is skipped, not computed: it may be 0 * NaN). */
const sumTerms = (terms: readonly (V | null)[]): V => terms.filter((t): t is V => t !== null).reduce((acc, t) => lax.add(acc, t));

/** t * d, without multiplying by a literal 1 or -1. */
const scale = (t: V, d: V | 1 | -1): V => (d === 1 ? t : d === -1 ? lax.neg(t) : lax.mul(t, d));

const unaryLower = (opcode: Opcode) => (b: XlaBuilder, [x]: readonly XlaOp[]): XlaOp[] => [b.addInstruction(opcode as "abs", [x!], {})];
const binaryLower = (opcode: Opcode) => (b: XlaBuilder, [x, y]: readonly XlaOp[]): XlaOp[] => [b.addInstruction(opcode as "add", [x!, y!], {})];

const UNARY_EXAMPLE = { args: [{ shape: [2, 3] }], params: {} };
const POSITIVE_EXAMPLE = { args: [{ shape: [2, 3], range: [0.5, 2] as const }], params: {} };
const BINARY_EXAMPLE = { args: [{ shape: [2, 3] }, { shape: [2, 3] }], params: {} };
const UINT32_BINARY_EXAMPLE = { args: [{ shape: [4], kind: "uint32" as const }, { shape: [4], kind: "uint32" as const }], params: {} };
const POSITIVE_BINARY_EXAMPLE = { args: [{ shape: [2, 3], range: [0.5, 2] as const }, { shape: [2, 3], range: [0.5, 2] as const }], params: {} };

/** A differentiable unary elementwise row, from dy/dx as a function of the input and the result. */
function unaryRow(name: PrimitiveName, opcode: Opcode, derivative: (x: V, y: V) => V | -1, example: PrimitiveRow<None>["example"] = UNARY_EXAMPLE): PrimitiveRow<None> {
  return {
    lower: unaryLower(opcode),
    jvp: ([t], [x], [y]) => [scale(t!, derivative(x!, y!))],
    vjp: ([ct], [x], [y]) => [scale(ct!, derivative(x!, y!))],
    batch: elementwiseBatch(name),
    example,
  };
}

/** A unary elementwise row whose derivative is zero (or whose result is not a float). */
function constantUnaryRow(name: PrimitiveName, opcode: Opcode, example: PrimitiveRow<None>["example"] = UNARY_EXAMPLE): PrimitiveRow<None> {
  return { lower: unaryLower(opcode), jvp: "zero", vjp: "zero", batch: elementwiseBatch(name), example };
}

/** A differentiable binary elementwise row, from the partial derivatives as functions of the inputs and the result. */
function binaryRow(name: PrimitiveName, opcode: Opcode, partials: (x: V, y: V, out: V) => [V | 1 | -1, V | 1 | -1], example: PrimitiveRow<None>["example"] = BINARY_EXAMPLE): PrimitiveRow<None> {
  return {
    lower: binaryLower(opcode),
    jvp: ([tx, ty], [x, y], [out]) => {
      const [dx, dy] = partials(x!, y!, out!);
      return [sumTerms([tx ? scale(tx, dx) : null, ty ? scale(ty, dy) : null])];
    },
    vjp: ([ct], [x, y], [out]) => {
      const [dx, dy] = partials(x!, y!, out!);
      return [scale(ct!, dx), scale(ct!, dy)];
    },
    batch: elementwiseBatch(name),
    example,
  };
}

function constantBinaryRow(name: PrimitiveName, lower: PrimitiveRow<None>["lower"], example: PrimitiveRow<None>["example"] = BINARY_EXAMPLE): PrimitiveRow<None> {
  return { lower, jvp: "zero", vjp: "zero", batch: elementwiseBatch(name), example };
}

const compareRow = (name: PrimitiveName, direction: ComparisonDirection): PrimitiveRow<None> =>
  constantBinaryRow(name, (_b, [x, y]) => [compare(x!, y!, direction)]);

/** 1 where `a` wins a max/min against `b`, 1/2 where they tie (JAX splits a tie's derivative evenly). */
function winner(a: V, b: V, direction: "gt" | "lt"): V {
  const wins = lax.convertElementType(direction === "gt" ? lax.gt(a, b) : lax.lt(a, b), a.dtype);
  const ties = lax.convertElementType(lax.eq(a, b), a.dtype);
  return lax.add(wins, lax.mul(ties, 0.5));
}

/** The reducer computation `combine` over scalars of type `dtype`. */
export function scalarReducer(b: XlaBuilder, dtype: DType, combine: (x: XlaOp, y: XlaOp) => XlaOp): ReturnType<XlaBuilder["build"]> {
  const sb = b.createSubBuilder("reducer");
  const s = scalarShape(DTYPES[dtype]);
  return sb.build(combine(parameter(sb, 0, s), parameter(sb, 1, s)));
}

/** The identity of a max (lowest) or min (highest) reduction for `dtype`. */
function extremum(dtype: DType, lowest: boolean): Scalar {
  const kind = dtypeKind(dtype);
  if (kind === "bool") return !lowest;
  if (kind === "float" || kind === "complex") return lowest ? -Infinity : Infinity;
  const bits = Number(dtype.replace(/^u?int/, ""));
  const big = dtype === "int64" || dtype === "uint64";
  if (kind === "unsigned") return lowest ? (big ? 0n : 0) : (big ? (1n << 64n) - 1n : 2 ** bits - 1);
  return lowest ? (big ? -(1n << 63n) : -(2 ** (bits - 1))) : (big ? (1n << 63n) - 1n : 2 ** (bits - 1) - 1);
}

function reduceRow(name: PrimitiveName, opcode: Opcode, init: (d: DType) => Scalar, derivatives: Pick<PrimitiveRow<Axes>, "jvp" | "vjp">): PrimitiveRow<Axes> {
  return {
    lower: (b, [x], { axes }) => {
      const dtype = dtypeOfOp(x!);
      const initOp = constantR0(b, DTYPES[dtype], init(dtype));
      const reducer = scalarReducer(b, dtype, (p, q) => p.builder.addInstruction(opcode as "add", [p, q], {}));
      return [b.addInstruction("reduce", [x!, initOp], { dimensions: [...axes], toApply: reducer })];
    },
    ...derivatives,
    batch: ([x], [d], { axes }, size) => ({ values: bindRow(name)([moveBatchToFront(x!, d!, size)], { axes: axes.map((a) => a + 1) }), dims: [0] }),
    example: { args: [{ shape: [2, 3, 4] }], params: { axes: [0, 2] } },
  };
}

export const dtypeOfOp = (x: XlaOp): DType => {
  const e = x.arrayShape.elementType;
  const d = (Object.keys(DTYPES) as DType[]).find((k) => DTYPES[k] === e);
  if (d === undefined) throw new FrontendError(`the element type ${e} has no front-end dtype`);
  return d;
};

/** `ct` (of the reduced shape) broadcast back over the reduced axes of `x`. */
const unreduce = (ct: V, x: V, axes: readonly number[]): V => lax.broadcastInDim(ct, x.shape, without(range(x.ndim), axes));

/** The derivative of a max or min reduction: the cotangent split evenly between the positions that attain it. */
function chooserDerivatives(): Pick<PrimitiveRow<Axes>, "jvp" | "vjp"> {
  const weights = (x: V, y: V, axes: readonly number[]): V => {
    const at = lax.convertElementType(lax.eq(x, unreduce(y, x, axes)), x.dtype);
    return lax.div(at, unreduce(lax.reduceSum(at, axes), x, axes));
  };
  return {
    jvp: ([t], [x], [y], { axes }) => [lax.reduceSum(lax.mul(t!, weights(x!, y!, axes)), axes)],
    vjp: ([ct], [x], [y], { axes }) => [lax.mul(unreduce(ct!, x!, axes), weights(x!, y!, axes))],
  };
}

/**
 * The product of all the other elements of each reduced group (d prod / d x), without
 * dividing (a zero element has a nonzero derivative): the reduced axes moved last and
 * merged, then exclusive running products from the left times those from the right.
 */
function productOfOthers(x: V, axes: readonly number[]): V {
  const kept = without(range(x.ndim), axes);
  const perm = [...kept, ...axes];
  const lead = kept.map((d) => x.shape[d]!);
  const n = axes.reduce((m, d) => m * x.shape[d]!, 1);
  if (n === 0) return x;
  const flat = lax.reshape(lax.transpose(x, perm), [...lead, n]);
  const last = lead.length;
  const one = lax.full([...lead, 1], 1, x.dtype);
  const start = [...lead.map(() => 0), 0];
  const left = lax.cumprod(lax.concatenate([one, lax.slice(flat, start, [...lead, n - 1])], last), last);
  const right = lax.cumprod(lax.concatenate([lax.slice(flat, [...lead.map(() => 0), 1], [...lead, n]), one], last), last, { reverse: true });
  return lax.transpose(lax.reshape(lax.mul(left, right), perm.map((d) => x.shape[d]!)), argsort(perm));
}

/** `x` with `axis` moved last (and reversed along it for a reversed running op), and the inverse for a result of that layout. */
function alongLast(x: V, axis: number, reverse: boolean): { moved: V; back: (y: V) => V } {
  const perm = [...without(range(x.ndim), [axis]), axis];
  const last = x.ndim - 1;
  const flip = (y: V): V => (reverse ? lax.rev(y, [last]) : y);
  return { moved: flip(lax.transpose(x, perm)), back: (y) => lax.transpose(flip(y), argsort(perm)) };
}

/**
 * For a running product along the last axis of x ([..., n]): M[..., j, i] = d y_i / d x_j,
 * the product of x_k over k <= i, k != j (zero for j > i). Row j is the running product
 * of x with x_j replaced by 1, so no division by a zero element is needed.
 */
function runningProductPartials(x: V): V {
  const n = x.shape.at(-1)!;
  const lead = x.shape.slice(0, -1);
  const r = lead.length;
  const square = [...lead, n, n];
  const rows = lax.broadcastedIota("int32", square, r);
  const cols = lax.broadcastedIota("int32", square, r + 1);
  const replaced = lax.selectN(lax.eq(rows, cols), lax.broadcastInDim(x, square, [...range(r), r + 1]), lax.full(square, 1, x.dtype));
  return lax.selectN(lax.le(rows, cols), lax.full(square, 0, x.dtype), lax.cumprod(replaced, r + 1));
}

/** argmax/argmin: a variadic reduce over (value, index) pairs; the first index wins a tie, and NaN wins (as numpy's). */
function argRow(name: "argmax" | "argmin"): PrimitiveRow<ArgIndex> {
  return {
    lower: (b, [x], { axis, indexDtype }) => {
      const dtype = dtypeOfOp(x!);
      const shape = x!.arrayShape.dimensions;
      const index = DTYPES[indexDtype];
      const sb = b.createSubBuilder(name);
      const vs = scalarShape(DTYPES[dtype]);
      const is = scalarShape(index);
      const [av, ai, bv, bi] = [parameter(sb, 0, vs), parameter(sb, 1, is), parameter(sb, 2, vs), parameter(sb, 3, is)];
      const aNan = compare(av, av, "NE");
      const bNan = compare(bv, bv, "NE");
      const better = compare(av, bv, name === "argmax" ? "GT" : "LT");
      const firstOnTie = and(compare(av, bv, "EQ"), compare(ai, bi, "LT"));
      const bothNanFirst = and(and(aNan, bNan), compare(ai, bi, "LT"));
      const pickA = or(or(and(aNan, notOp(bNan)), bothNanFirst), or(better, firstOnTie));
      const reducer = sb.build(sb.addInstruction("tuple", [select(pickA, av, bv), select(pickA, ai, bi)], {}));
      const iota = b.addInstruction("iota", [], { shape: arrayShape(index, shape), iotaDimension: axis });
      const init = [constantR0(b, DTYPES[dtype], extremum(dtype, name === "argmax")), constantR0(b, index, indexDtype === "int64" ? 0n : 0)];
      const pair = b.addInstruction("reduce", [x!, iota, ...init], { dimensions: [axis], toApply: reducer });
      return [getTupleElement(pair, 1)];
    },
    jvp: "zero",
    vjp: "zero",
    batch: ([x], [d], p, size) => ({ values: bindRow(name)([moveBatchToFront(x!, d!, size)], { ...p, axis: p.axis + 1 }), dims: [0] }),
    example: { args: [{ shape: [3, 4] }], params: { axis: 1, indexDtype: "int32" } },
  };
}

/**
 * A running reduction along one axis as XLA's CPU lowering of cumsum does it: a
 * reduce_window whose window covers the whole axis, padded so that element i sees
 * elements 0..i (or i..n-1 when reversed).
 */
function cumulativeRow(name: "cumsum" | "cumprod", opcode: Opcode, init: number, derivatives: Pick<PrimitiveRow<Cumulative>, "jvp" | "vjp">): PrimitiveRow<Cumulative> {
  return {
    lower: (b, [x], { axis, reverse }) => {
      const dtype = dtypeOfOp(x!);
      const dims = x!.arrayShape.dimensions;
      const n = dims[axis]!;
      const window = makeWindow({
        sizes: dims.map((_, i) => (i === axis ? n : 1)),
        padding: dims.map((_, i) => (i === axis ? (reverse ? [0, n - 1] as const : [n - 1, 0] as const) : [0, 0] as const)),
      });
      const reducer = scalarReducer(b, dtype, (p, q) => p.builder.addInstruction(opcode as "add", [p, q], {}));
      return [b.addInstruction("reduceWindow", [x!, constantR0(b, DTYPES[dtype], init)], { window, toApply: reducer })];
    },
    ...derivatives,
    batch: ([x], [d], p, size) => ({ values: bindRow(name)([moveBatchToFront(x!, d!, size)], { ...p, axis: p.axis + 1 }), dims: [0] }),
    example: { args: [{ shape: [3, 4] }], params: { axis: 1, reverse: false } },
  };
}

const notOp = (x: XlaOp): XlaOp => x.builder.addInstruction("not", [x], {});

type DotParams = PrimitiveParams["dotGeneral"];

/**
 * The cotangent of dot_general's lhs: ct contracted with rhs over the rhs's free
 * dimensions (batch dims matched), then transposed into the lhs's dimension order (or,
 * where that order needs no transpose, rhs contracted with ct).
 * `swapAns`: the result holds rhs-free before lhs-free (the rhs's cotangent, computed
 * by calling this with the operands swapped).
 */
function dotTransposeLhs(ct: V, lhsRank: number, rhs: V, p: DotParams, swapAns: boolean): V {
  const lhsKept = without(range(lhsRank), p.lhsContracting, p.lhsBatch);
  const rhsKept = without(range(rhs.ndim), p.rhsContracting, p.rhsBatch);
  const nb = p.lhsBatch.length;
  const ctRhsFree = swapAns ? range(rhsKept.length, nb) : range(rhsKept.length, nb + lhsKept.length);
  // The product is (batch, lhs kept, rhs contracting in rhs order) = lhs's contracting dims ordered by their rhs partner.
  const lhsContractingByRhs = argsort(p.rhsContracting).map((i) => p.lhsContracting[i]!);
  const order = [...p.lhsBatch, ...lhsKept, ...lhsContractingByRhs];
  // With the operands the other way round the product is (batch, lhs contracting, lhs kept):
  // where that is already the lhs's order (a weight's cotangent, x·W's W), it needs no
  // transpose, as XLA's simplifier would fold it.
  const swappedOrder = [...p.lhsBatch, ...lhsContractingByRhs, ...lhsKept];
  if (!isIdentity(order) && isIdentity(swappedOrder)) {
    return lax.dotGeneral(rhs, ct, {
      lhsContractingDimensions: rhsKept, rhsContractingDimensions: ctRhsFree,
      lhsBatchDimensions: p.rhsBatch, rhsBatchDimensions: range(nb),
    });
  }
  return lax.transpose(lax.dotGeneral(ct, rhs, {
    lhsContractingDimensions: ctRhsFree, rhsContractingDimensions: rhsKept,
    lhsBatchDimensions: range(nb), rhsBatchDimensions: p.rhsBatch,
  }), argsort(order));
}

const isIdentity = (permutation: readonly number[]): boolean => permutation.every((d, i) => d === i);

const swapDot = (p: DotParams): DotParams => ({ lhsContracting: p.rhsContracting, rhsContracting: p.lhsContracting, lhsBatch: p.rhsBatch, rhsBatch: p.lhsBatch });

function dotBatch([lhs, rhs]: readonly V[], [ld, rd]: readonly (number | null)[], p: DotParams): { values: V[]; dims: number[] } {
  const shift = (ds: readonly number[]): number[] => ds.map((d) => d + 1);
  const nb = p.lhsBatch.length;
  if (ld !== null && rd !== null) {
    const l = moveBatchToFront(lhs!, ld!, 0);
    const r = moveBatchToFront(rhs!, rd!, 0);
    const q = { ...p, lhsContracting: shift(p.lhsContracting), rhsContracting: shift(p.rhsContracting), lhsBatch: [0, ...shift(p.lhsBatch)], rhsBatch: [0, ...shift(p.rhsBatch)] };
    return { values: bindRow("dotGeneral")([l, r], q), dims: [0] };
  }
  if (ld !== null) {
    // The batch dimension, moved to the front, is lhs's first free dimension.
    const l = moveBatchToFront(lhs!, ld!, 0);
    return { values: bindRow("dotGeneral")([l, rhs!], { ...p, lhsContracting: shift(p.lhsContracting), lhsBatch: shift(p.lhsBatch) }), dims: [nb] };
  }
  const r = moveBatchToFront(rhs!, rd!, 0);
  const lhsFree = lhs!.ndim - p.lhsContracting.length - nb;
  return { values: bindRow("dotGeneral")([lhs!, r], { ...p, rhsContracting: shift(p.rhsContracting), rhsBatch: shift(p.rhsBatch) }), dims: [nb + lhsFree] };
}

export const realOnly = (x: V, what: string): void => {
  if (dtypeKind(x.dtype) === "complex") throw new FrontendError(`${what}: derivatives of complex values are not supported by the front end yet`, what);
};

const SQRT_PI = Math.sqrt(Math.PI);

/** conj(z)/|z| (|z| = y), with |z| = 0 taken as 1 so that the derivative of |z| at 0 is 0. */
const complexSign = (z: V, y: V): V => lax.div(lax.conj(z), lax.convertElementType(lax.selectN(lax.eq(y, 0), y, lax.full(y.shape, 1, y.dtype)), z.dtype));

export const PRIMITIVES: { readonly [N in PrimitiveName]: PrimitiveRow<PrimitiveParams[N]> } = {
  neg: unaryRow("neg", "negate", () => -1),
  exp: unaryRow("exp", "exp", (_x, y) => y),
  log: unaryRow("log", "log", (x) => lax.div(1, x), POSITIVE_EXAMPLE),
  sin: unaryRow("sin", "sin", (x) => lax.cos(x)),
  cos: unaryRow("cos", "cos", (x) => lax.neg(lax.sin(x))),
  tan: unaryRow("tan", "tan", (_x, y) => lax.add(1, lax.mul(y, y)), { args: [{ shape: [2, 3], range: [-1, 1] }], params: {} }),
  tanh: unaryRow("tanh", "tanh", (_x, y) => lax.sub(1, lax.mul(y, y))),
  logistic: unaryRow("logistic", "logistic", (_x, y) => lax.mul(y, lax.sub(1, y))),
  sqrt: unaryRow("sqrt", "sqrt", (_x, y) => lax.div(0.5, y), POSITIVE_EXAMPLE),
  rsqrt: unaryRow("rsqrt", "rsqrt", (x, y) => lax.mul(lax.div(y, x), -0.5), POSITIVE_EXAMPLE),
  abs: {
    ...unaryRow("abs", "abs", (x) => lax.sign(x)),
    // |z| of a complex z is not holomorphic: d|z| = Re(conj(z)/|z| · dz), whose transpose (JAX's
    // pairing, complex_rules.ts) is ct ↦ ct · conj(z)/|z|; 0 at z = 0, as JAX's (|z| taken as 1 there).
    jvp: ([t], [x], [y]) => [dtypeKind(x!.dtype) === "complex" ? lax.real(lax.mul(t!, complexSign(x!, y!))) : scale(t!, lax.sign(x!))],
    vjp: ([ct], [x], [y]) => [dtypeKind(x!.dtype) === "complex" ? lax.mul(lax.convertElementType(ct!, x!.dtype), complexSign(x!, y!)) : scale(ct!, lax.sign(x!))],
    moreExamples: [{ args: [{ shape: [2, 3], kind: "complex" }], params: {} }],
  },
  log1p: unaryRow("log1p", "log1p", (x) => lax.div(1, lax.add(x, 1)), POSITIVE_EXAMPLE),
  expm1: unaryRow("expm1", "expm1", (_x, y) => lax.add(y, 1)),
  erf: unaryRow("erf", "erf", (x) => lax.mul(lax.exp(lax.neg(lax.mul(x, x))), 2 / SQRT_PI)),
  sign: constantUnaryRow("sign", "sign"),
  floor: constantUnaryRow("floor", "floor"),
  ceil: constantUnaryRow("ceil", "ceil"),
  round: constantUnaryRow("round", "roundNearestAfz"),
  not: constantUnaryRow("not", "not", { args: [{ shape: [2, 3], kind: "bool" }], params: {} }),
  isFinite: constantUnaryRow("isFinite", "isFinite"),
  // Identity on values; its derivative is zero by definition (jax.lax.stop_gradient).
  stopGradient: { lower: (_b, [x]) => [x!], jvp: "zero", vjp: "zero", batch: elementwiseBatch("stopGradient"), example: UNARY_EXAMPLE },

  add: binaryRow("add", "add", () => [1, 1]),
  sub: binaryRow("sub", "subtract", () => [1, -1]),
  mul: binaryRow("mul", "multiply", (x, y) => [y, x]),
  div: binaryRow("div", "divide", (_x, y, out) => [lax.div(1, y), lax.neg(lax.div(out, y))], POSITIVE_BINARY_EXAMPLE),
  max: binaryRow("max", "maximum", (x, y) => [winner(x, y, "gt"), winner(y, x, "gt")]),
  min: binaryRow("min", "minimum", (x, y) => [winner(x, y, "lt"), winner(y, x, "lt")]),
  // d/dy x^y = log(x) x^y, taken as 0 at x = 0 (as JAX does, so 0^y has a finite gradient).
  pow: binaryRow("pow", "power", (x, y, out) => [
    lax.mul(y, lax.pow(x, lax.sub(y, 1))),
    lax.mul(lax.log(lax.selectN(lax.eq(x, 0), x, lax.full(x.shape, 1, x.dtype))), out),
  ], POSITIVE_BINARY_EXAMPLE),
  // rem(x, y) = x - y * trunc(x / y).
  rem: binaryRow("rem", "remainder", (x, y) => {
    const q = lax.div(x, y);
    return [1, lax.neg(lax.mul(lax.sign(q), lax.floor(lax.abs(q))))];
  }, POSITIVE_BINARY_EXAMPLE),
  atan2: binaryRow("atan2", "atan2", (x, y) => {
    const r2 = lax.add(lax.mul(x, x), lax.mul(y, y));
    return [lax.div(y, r2), lax.neg(lax.div(x, r2))];
  }, POSITIVE_BINARY_EXAMPLE),
  and: constantBinaryRow("and", binaryLower("and"), { args: [{ shape: [4], kind: "bool" }, { shape: [4], kind: "bool" }], params: {} }),
  or: constantBinaryRow("or", binaryLower("or"), { args: [{ shape: [4], kind: "bool" }, { shape: [4], kind: "bool" }], params: {} }),
  xor: constantBinaryRow("xor", binaryLower("xor"), { args: [{ shape: [4], kind: "bool" }, { shape: [4], kind: "bool" }], params: {} }),
  shiftLeft: constantBinaryRow("shiftLeft", binaryLower("shiftLeft"), UINT32_BINARY_EXAMPLE),
  shiftRightLogical: constantBinaryRow("shiftRightLogical", binaryLower("shiftRightLogical"), UINT32_BINARY_EXAMPLE),
  // d/dx erf⁻¹(x) = √π/2 · exp(erf⁻¹(x)²).
  erfInv: unaryRow("erfInv", "erfInv", (_x, y) => lax.mul(lax.exp(lax.mul(y, y)), SQRT_PI / 2), { args: [{ shape: [2, 3], range: [-0.9, 0.9] }], params: {} }),
  // d lgamma = ψ (digamma), dψ = ψ⁽¹⁾ (polygamma of order 1), dψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾: every order is differentiable.
  lgamma: unaryRow("lgamma", "lgamma", (x) => lax.digamma(x), POSITIVE_EXAMPLE),
  digamma: unaryRow("digamma", "digamma", (x) => lax.polygamma(1, x), POSITIVE_EXAMPLE),
  polygamma: {
    // XLA's polygamma takes the order as an operand: a constant of x's shape here.
    lower: (b, [x], { order }) => {
      const { elementType, dimensions } = x!.arrayShape;
      const m = b.addInstruction("broadcastInDim", [constantR0(b, elementType, order)], { dimensions: [...dimensions], broadcastDimensions: [] });
      return [b.addInstruction("polygamma", [m, x!], {})];
    },
    jvp: ([t], [x], _y, { order }) => [lax.mul(t!, lax.polygamma(order + 1, x!))],
    vjp: ([ct], [x], _y, { order }) => [lax.mul(ct!, lax.polygamma(order + 1, x!))],
    batch: elementwiseBatch("polygamma"),
    example: { args: [{ shape: [2, 3], range: [0.5, 2] }], params: { order: 1 } },
    moreExamples: [{ args: [{ shape: [2, 3], range: [0.5, 2] }], params: { order: 0 } }, { args: [{ shape: [2, 3], range: [0.5, 2] }], params: { order: 3 } }],
  },
  eq: compareRow("eq", "EQ"),
  ne: compareRow("ne", "NE"),
  lt: compareRow("lt", "LT"),
  le: compareRow("le", "LE"),
  gt: compareRow("gt", "GT"),
  ge: compareRow("ge", "GE"),

  selectN: {
    lower: (_b, [which, onFalse, onTrue]) => [select(which!, onTrue!, onFalse!)],
    jvp: ([, tf, tt], [which, onFalse, onTrue]) => [lax.selectN(which!, tf ?? zerosLike(onFalse!), tt ?? zerosLike(onTrue!))],
    vjp: ([ct], [which, onFalse]) => {
      const zeros = zerosLike(onFalse!);
      return [null, lax.selectN(which!, ct!, zeros), lax.selectN(which!, zeros, ct!)];
    },
    batch: elementwiseBatch("selectN"),
    example: { args: [{ shape: [2, 3], kind: "bool" }, { shape: [2, 3] }, { shape: [2, 3] }], params: {} },
  },

  convertElementType: {
    lower: (_b, [x], { newDtype }) => [convertOp(x!, DTYPES[newDtype])],
    weakType: ({ weakType }) => weakType,
    jvp: ([t], [x], _y, { newDtype }) => [isInexact(x!.dtype) && isInexact(newDtype) ? lax.convertElementType(t!, newDtype) : lax.full(t!.shape, 0, newDtype)],
    vjp: ([ct], [x], _y, { newDtype }) => [isInexact(x!.dtype) && isInexact(newDtype) ? lax.convertElementType(ct!, x!.dtype, x!.weakType) : null],
    batch: elementwiseBatch("convertElementType"),
    example: { args: [{ shape: [2, 3] }], params: { newDtype: "float32", weakType: false } },
  },

  bitcastConvertType: {
    lower: (b, [x], { newDtype }) => [b.addInstruction("bitcastConvert", [x!], { elementType: DTYPES[newDtype] })],
    jvp: "zero",
    vjp: "zero",
    batch: elementwiseBatch("bitcastConvertType"),
    example: { args: [{ shape: [2, 3], kind: "uint32" }], params: { newDtype: "int32" } },
  },

  broadcastInDim: {
    lower: (b, [x], { shape, broadcastDimensions }) =>
      [b.addInstruction("broadcastInDim", [x!], { dimensions: [...shape], broadcastDimensions: [...broadcastDimensions] })],
    jvp: linearJvp("broadcastInDim"),
    vjp: ([ct], [x], _y, { shape, broadcastDimensions: bd }) => {
      // Sum over the new dimensions and over the size-1 dimensions that were stretched.
      const stretched = bd.filter((d, i) => x!.shape[i] === 1 && shape[d] !== 1);
      const summed = lax.reduceSum(ct!, without(range(shape.length), bd).concat(stretched).sort((a, c) => a - c));
      return [lax.reshape(summed, x!.shape)];
    },
    batch: ([x], [d], { shape, broadcastDimensions }, size) => ({
      values: bindRow("broadcastInDim")([moveBatchToFront(x!, d!, size)], { shape: [size, ...shape], broadcastDimensions: [0, ...broadcastDimensions.map((b) => b + 1)] }),
      dims: [0],
    }),
    example: { args: [{ shape: [3, 1] }], params: { shape: [2, 3, 4], broadcastDimensions: [1, 2] } },
  },

  reshape: {
    lower: (b, [x], { newSizes }) => [b.addInstruction("reshape", [x!], { dimensions: [...newSizes] })],
    jvp: linearJvp("reshape"),
    vjp: ([ct], [x]) => [lax.reshape(ct!, x!.shape)],
    batch: ([x], [d], { newSizes }, size) => ({ values: bindRow("reshape")([moveBatchToFront(x!, d!, size)], { newSizes: [size, ...newSizes] }), dims: [0] }),
    example: { args: [{ shape: [2, 6] }], params: { newSizes: [3, 4] } },
  },

  transpose: {
    lower: (b, [x], { permutation }) => [b.addInstruction("transpose", [x!], { permutation: [...permutation] })],
    jvp: linearJvp("transpose"),
    vjp: ([ct], _x, _y, { permutation }) => [lax.transpose(ct!, argsort(permutation))],
    batch: ([x], [d], { permutation }, size) => ({
      values: bindRow("transpose")([moveBatchToFront(x!, d!, size)], { permutation: [0, ...permutation.map((p) => p + 1)] }), dims: [0],
    }),
    example: { args: [{ shape: [2, 3, 4] }], params: { permutation: [2, 0, 1] } },
  },

  reduceSum: reduceRow("reduceSum", "add", () => 0, {
    jvp: linearJvp("reduceSum"),
    vjp: ([ct], [x], _y, { axes }) => [unreduce(ct!, x!, axes)],
  }),
  reduceMax: reduceRow("reduceMax", "maximum", (d) => extremum(d, true), chooserDerivatives()),
  reduceMin: reduceRow("reduceMin", "minimum", (d) => extremum(d, false), chooserDerivatives()),
  reduceProd: reduceRow("reduceProd", "multiply", () => 1, {
    jvp: ([t], [x], _y, { axes }) => [lax.reduceSum(lax.mul(t!, productOfOthers(x!, axes)), axes)],
    vjp: ([ct], [x], _y, { axes }) => [lax.mul(unreduce(ct!, x!, axes), productOfOthers(x!, axes))],
  }),
  reduceAnd: { ...reduceRow("reduceAnd", "and", () => true, { jvp: "zero", vjp: "zero" }), example: { args: [{ shape: [2, 3, 4], kind: "bool" }], params: { axes: [0, 2] } } },
  reduceOr: { ...reduceRow("reduceOr", "or", () => false, { jvp: "zero", vjp: "zero" }), example: { args: [{ shape: [2, 3, 4], kind: "bool" }], params: { axes: [0, 2] } } },
  argmax: argRow("argmax"),
  argmin: argRow("argmin"),

  cumsum: cumulativeRow("cumsum", "add", 0, {
    jvp: linearJvp("cumsum"),
    // Each input element contributes to every later running sum: the cotangent runs the other way.
    vjp: ([ct], _x, _y, p) => bindRow("cumsum")([ct!], { ...p, reverse: !p.reverse }),
  }),
  cumprod: cumulativeRow("cumprod", "multiply", 1, {
    // dy_i = sum_j M[j, i] t_j, and the cotangent of x_j is sum_i M[j, i] ct_i (M of runningProductPartials).
    jvp: ([t], [x], _y, { axis, reverse }) => {
      const { moved, back } = alongLast(x!, axis, reverse);
      const m = runningProductPartials(moved);
      const r = moved.ndim - 1;
      return [back(lax.reduceSum(lax.mul(m, lax.broadcastInDim(alongLast(t!, axis, reverse).moved, m.shape, range(r + 1))), [r]))];
    },
    vjp: ([ct], [x], _y, { axis, reverse }) => {
      const { moved, back } = alongLast(x!, axis, reverse);
      const m = runningProductPartials(moved);
      const r = moved.ndim - 1;
      return [back(lax.reduceSum(lax.mul(m, lax.broadcastInDim(alongLast(ct!, axis, reverse).moved, m.shape, [...range(r), r + 1])), [r + 1]))];
    },
  }),

  dotGeneral: {
    lower: (_b, [lhs, rhs], p) => [dotOp(lhs!, rhs!, {
      lhsContractingDimensions: [...p.lhsContracting], rhsContractingDimensions: [...p.rhsContracting],
      lhsBatchDimensions: [...p.lhsBatch], rhsBatchDimensions: [...p.rhsBatch],
    }, p.preferredElementType === undefined ? {} : { preferredElementType: DTYPES[p.preferredElementType] })],
    // Bilinear: for complex operands too, the transposes need no conjugate (JAX's pairing, complex_rules.ts).
    jvp: ([tl, tr], [lhs, rhs], _y, p) => {
      const dn = { lhsContractingDimensions: p.lhsContracting, rhsContractingDimensions: p.rhsContracting, lhsBatchDimensions: p.lhsBatch, rhsBatchDimensions: p.rhsBatch };
      return [sumTerms([tl ? lax.dotGeneral(tl, rhs!, dn) : null, tr ? lax.dotGeneral(lhs!, tr, dn) : null])];
    },
    vjp: ([ct], [lhs, rhs], _y, p) => {
      return [dotTransposeLhs(ct!, lhs!.ndim, rhs!, p, false), dotTransposeLhs(ct!, rhs!.ndim, lhs!, swapDot(p), true)];
    },
    batch: (values, dims, p) => dotBatch(values, dims, p),
    example: { args: [{ shape: [2, 3, 4] }, { shape: [2, 4, 5] }], params: { lhsContracting: [2], rhsContracting: [1], lhsBatch: [0], rhsBatch: [0] } },
    moreExamples: [{ args: [{ shape: [3, 4], kind: "complex" }, { shape: [4, 2], kind: "complex" }], params: { lhsContracting: [1], rhsContracting: [0], lhsBatch: [], rhsBatch: [] } }],
  },

  slice: {
    lower: (b, [x], p) => [b.addInstruction("slice", [x!], { startIndices: [...p.startIndices], limitIndices: [...p.limitIndices], strides: [...p.strides] })],
    jvp: linearJvp("slice"),
    vjp: ([ct], [x], _y, { startIndices, strides }) => {
      if (ct!.size === 0) return [zerosLike(x!)];
      // Zeros around (and between, for strides) the slice's elements.
      return [lax.pad(ct!, lax.full([], 0, x!.dtype), x!.shape.map((n, i) => {
        const last = startIndices[i]! + (ct!.shape[i]! - 1) * strides[i]!;
        return [startIndices[i]!, n - 1 - last, strides[i]! - 1] as const;
      }))];
    },
    batch: ([x], [d], p, size) => ({
      values: bindRow("slice")([moveBatchToFront(x!, d!, size)], { startIndices: [0, ...p.startIndices], limitIndices: [size, ...p.limitIndices], strides: [1, ...p.strides] }),
      dims: [0],
    }),
    example: { args: [{ shape: [5, 6] }], params: { startIndices: [1, 0], limitIndices: [4, 6], strides: [1, 2] } },
  },

  pad: {
    lower: (b, [x, v], p) => [b.addInstruction("pad", [x!, v!], { edgePaddingLow: [...p.low], edgePaddingHigh: [...p.high], interiorPadding: [...p.interior] })],
    jvp: linearJvp("pad"),
    vjp: ([ct], [x], _y, { low, interior }) => {
      const inner = lax.slice(ct!, low, x!.shape.map((n, i) => (n === 0 ? low[i]! : low[i]! + (n - 1) * (interior[i]! + 1) + 1)), interior.map((s) => s + 1));
      const all = range(x!.ndim);
      return [inner, lax.sub(lax.reduceSum(ct!, all), lax.reduceSum(inner, all))];
    },
    batch: ([x, v], [d, vd], p, size) => {
      if (vd !== null) throw new FrontendError("pad: a batched padding value is not supported by vmap yet", "pad", "paddingValue");
      return {
        values: bindRow("pad")([moveBatchToFront(x!, d!, size), v!], { low: [0, ...p.low], high: [0, ...p.high], interior: [0, ...p.interior] }),
        dims: [0],
      };
    },
    example: { args: [{ shape: [2, 3] }, { shape: [] }], params: { low: [1, 0], high: [0, 2], interior: [1, 1] } },
  },

  concatenate: {
    lower: (b, xs, { dimension }) => [b.addInstruction("concatenate", xs, { dimension })],
    jvp: linearJvp("concatenate"),
    vjp: ([ct], xs, _y, { dimension }) => {
      let at = 0;
      return xs.map((x) => {
        const start = ct!.shape.map((_, i) => (i === dimension ? at : 0));
        at += x.shape[dimension]!;
        return lax.slice(ct!, start, ct!.shape.map((n, i) => (i === dimension ? at : n)));
      });
    },
    batch: (xs, dims, { dimension }, size) => ({
      values: bindRow("concatenate")(xs.map((x, i) => moveBatchToFront(x, dims[i]!, size)), { dimension: dimension + 1 }), dims: [0],
    }),
    example: { args: [{ shape: [2, 3] }, { shape: [2, 1] }], params: { dimension: 1 } },
  },

  rev: {
    lower: (b, [x], { dimensions }) => [b.addInstruction("reverse", [x!], { dimensions: [...dimensions] })],
    jvp: linearJvp("rev"),
    vjp: ([ct], _x, _y, { dimensions }) => [lax.rev(ct!, dimensions)],
    batch: ([x], [d], { dimensions }, size) => ({ values: bindRow("rev")([moveBatchToFront(x!, d!, size)], { dimensions: dimensions.map((v) => v + 1) }), dims: [0] }),
    example: { args: [{ shape: [2, 3] }], params: { dimensions: [1] } },
  },

  iota: {
    lower: (b, _x, { dtype, shape, dimension }) => [b.addInstruction("iota", [], { shape: arrayShape(DTYPES[dtype], shape), iotaDimension: dimension })],
    jvp: "zero",
    vjp: "zero",
    // iota has no operands, so no batched value ever reaches it.
    batch: () => {
      throw new FrontendError("iota: has no operands to batch");
    },
    example: { args: [], params: { dtype: "int32", shape: [2, 3], dimension: 1 } },
  },

  ...GATHER_SCATTER_ROWS,
  ...LINALG_ROWS,
  ...LU_ROWS,
  ...DECOMPOSITION_ROWS,
  ...COMPLEX_ROWS,
  ...FFT_ROWS,
  ...WINDOW_ROWS,
  ...SHARDING_ROWS,

  sort: {
    lower: (b, operands, { dimension, isStable, numKeys }) => {
      const sb = b.createSubBuilder("comparator");
      const pairs = operands.map((o, i) => {
        const s = scalarShape(o.arrayShape.elementType);
        return [parameter(sb, 2 * i, s), parameter(sb, 2 * i + 1, s)] as const;
      });
      // Lexicographic over the keys: key k decides unless it ties, then key k + 1.
      let less: XlaOp | undefined;
      for (let k = numKeys - 1; k >= 0; k--) {
        const [a, c] = pairs[k]!;
        const options = isInexact(dtypeOfOp(operands[k]!)) ? { compareType: "TOTALORDER" as const } : {};
        const lt = compare(a, c, "LT", options);
        less = less === undefined ? lt : or(lt, and(compare(a, c, "EQ", options), less));
      }
      const out = sortOp(operands, sb.build(less!), dimension, isStable);
      return operands.length === 1 ? [out] : operands.map((_, i) => getTupleElement(out, i));
    },
    // Each output is its operand permuted: the tangents follow the same permutation, the cotangents its inverse.
    jvp: (t, xs, _y, p) => {
      const perm = sortPermutation(xs, p);
      return xs.map((x, i) => takeAlongAxis(t[i] ?? zerosLike(x), perm, p.dimension, { mode: "clip" }));
    },
    vjp: (cts, xs, _y, p) => {
      const perm = sortPermutation(xs, p);
      const inverse = bindRow("sort")([perm, lax.broadcastedIota("int32", perm.shape, p.dimension)], { dimension: p.dimension, isStable: true, numKeys: 1 })[1]!;
      return cts.map((c) => takeAlongAxis(c, inverse, p.dimension, { mode: "clip" }));
    },
    batch: (xs, dims, p, size) => ({
      values: bindRow("sort")(xs.map((x, i) => moveBatchToFront(x, dims[i]!, size)), { ...p, dimension: p.dimension + 1 }),
      dims: xs.map(() => 0),
    }),
    example: { args: [{ shape: [3, 4] }, { shape: [3, 4] }], params: { dimension: 1, isStable: true, numKeys: 1 } },
  },
};

/** Where each element of a sort's outputs comes from along the sorted dimension (the sort of the keys with an iota carried along). */
function sortPermutation(xs: readonly V[], p: PrimitiveParams["sort"]): V {
  const iota = lax.broadcastedIota("int32", xs[0]!.shape, p.dimension);
  return bindRow("sort")([...xs.slice(0, p.numKeys), iota], { ...p, isStable: true }).at(-1)!;
}

/** The primitives whose derivative is zero, and those whose derivative is not supported yet (with why): the coverage list. */
export function derivativeCoverage(): { zero: PrimitiveName[]; unsupported: [PrimitiveName, string][]; differentiable: PrimitiveName[] } {
  const names = Object.keys(PRIMITIVES) as PrimitiveName[];
  const rule = (n: PrimitiveName): NoDerivative | "rule" => {
    const j = PRIMITIVES[n].jvp;
    return typeof j === "function" ? "rule" : j;
  };
  return {
    zero: names.filter((n) => rule(n) === "zero"),
    unsupported: names.flatMap((n) => {
      const r = rule(n);
      return typeof r === "object" ? [[n, r.unsupported] as [PrimitiveName, string]] : [];
    }),
    differentiable: names.filter((n) => rule(n) === "rule"),
  };
}
