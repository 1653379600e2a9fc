// jax.lax: the primitives at XLA's level, one function per primitive of primitives.ts.
// As in JAX, operands of an elementwise op have one shape and one dtype, except that a
// JS number (weakly typed) takes the other operand's dtype and shape. numpy.ts adds
// broadcasting and type promotion on top.

import { Array as ConcreteArray, ArrayBase, asArrayValue, bind, bind1, convertElementType, type ArrayLike } from "./core.js";
import { dtypeKind, isInexact, isIntegral, type DType } from "./dtypes.js";
import type { GatherDimensionNumbersInput, ScatterDimensionNumbersInput } from "../builder/data_movement.js";
import { FrontendError } from "./errors.js";
import type { PrimitiveName, PrimitiveParams } from "./primitives.js";
import { elementCount } from "../types/shape.js";

export { convertElementType };

type NoParams = { [N in PrimitiveName]: PrimitiveParams[N] extends Record<string, never> ? N : never }[PrimitiveName];

const unary = (name: NoParams) => (x: ArrayLike): ArrayBase => bind1(name, [asArrayValue(x)], {} as never);

/** Both operands as arrays; a JS scalar takes the other's dtype and shape (weak typing). */
export function matchOperands(name: string, x: ArrayLike, y: ArrayLike): [ArrayBase, ArrayBase] {
  const xa = x instanceof ArrayBase ? x : undefined;
  const ya = y instanceof ArrayBase ? y : undefined;
  if (xa === undefined && ya === undefined) return [asArrayValue(x, undefined, name), asArrayValue(y, undefined, name)];
  const like = (xa ?? ya)!;
  const fill = (v: ArrayLike, a: ArrayBase | undefined): ArrayBase =>
    a ?? (typeof v === "number" ? constantOperand(like.shape, v, like.dtype, like.weakType) : full(like.shape, v, like.dtype));
  return [fill(x, xa), fill(y, ya)];
}

const binary = (name: NoParams) => (x: ArrayLike, y: ArrayLike): ArrayBase => bind1(name, matchOperands(name, x, y), {} as never);

export const neg = unary("neg");
export const exp = unary("exp");
export const log = unary("log");
export const sin = unary("sin");
export const cos = unary("cos");
export const tan = unary("tan");
export const tanh = unary("tanh");
export const logistic = unary("logistic");
export const sqrt = unary("sqrt");
export const rsqrt = unary("rsqrt");
export const abs = unary("abs");
export const sign = unary("sign");
export const floor = unary("floor");
export const ceil = unary("ceil");
export const round = unary("round");
export const log1p = unary("log1p");
export const expm1 = unary("expm1");
export const erf = unary("erf");
export const not = unary("not");
export const isFinite = unary("isFinite");
export const stopGradient = unary("stopGradient");

export const add = binary("add");
export const sub = binary("sub");
export const mul = binary("mul");
export const div = binary("div");
export const max = binary("max");
export const min = binary("min");
export const pow = binary("pow");
export const rem = binary("rem");
export const atan2 = binary("atan2");
export const and = binary("and");
export const or = binary("or");
export const xor = binary("xor");
export const shiftLeft = binary("shiftLeft");
export const shiftRightLogical = binary("shiftRightLogical");
export const erfInv = unary("erfInv");
/** lax.lgamma: log|Γ(x)| (float operands). */
export const lgamma = unary("lgamma");
/** lax.digamma: ψ(x) = d/dx log Γ(x). */
export const digamma = unary("digamma");

/** lax.polygamma(m, x): ψ⁽ᵐ⁾(x), the m-th derivative of digamma; m a non-negative integer (a JS number, or a concrete integer-valued scalar array), as JAX differentiates only in x. */
export function polygamma(m: ArrayLike, x: ArrayLike): ArrayBase {
  const order = m instanceof ArrayBase ? (m.ndim === 0 ? Number(m.item()) : NaN) : typeof m === "number" ? m : NaN;
  if (!Number.isInteger(order) || order < 0) {
    throw new FrontendError(`polygamma: the order m must be a non-negative integer given as a number or a concrete scalar (got ${String(m)})`, "polygamma", "m");
  }
  return bind1("polygamma", [asArrayValue(x, undefined, "polygamma")], { order });
}
export const eq = binary("eq");
export const ne = binary("ne");
export const lt = binary("lt");
export const le = binary("le");
export const gt = binary("gt");
export const ge = binary("ge");

/** select_n(which, ...cases): cases[which] elementwise; `which` a bool array picks cases[0] where false, cases[1] where true. */
export function selectN(which: ArrayLike, ...cases: ArrayLike[]): ArrayBase {
  if (cases.length !== 2) throw new FrontendError(`selectN: ${cases.length} cases given; a bool selector picks between exactly 2`, "selectN", "cases");
  const [onFalse, onTrue] = matchOperands("selectN", cases[0]!, cases[1]!);
  return bind1("selectN", [asArrayValue(which, "bool", "selectN"), onFalse, onTrue], {});
}

/** lax.bitcast_convert_type between types of one width. */
export function bitcastConvertType(x: ArrayLike, newDtype: DType): ArrayBase {
  return bind1("bitcastConvertType", [asArrayValue(x)], { newDtype });
}

export function broadcastInDim(x: ArrayLike, shape: readonly number[], broadcastDimensions: readonly number[]): ArrayBase {
  const a = asArrayValue(x);
  // The identity (as np.matmul's and np.broadcastTo's operands of the final shape ask for) is no op, as for reshape and transpose.
  if (a.ndim === shape.length && broadcastDimensions.length === a.ndim && broadcastDimensions.every((d, i) => d === i && a.shape[i] === shape[i])) return a;
  return bind1("broadcastInDim", [a], { shape: [...shape], broadcastDimensions: [...broadcastDimensions] });
}

/** `x` (of rank 0 or of `shape`'s trailing rank) broadcast to `shape` as numpy aligns trailing dimensions. */
export function broadcastTo(x: ArrayBase, shape: readonly number[]): ArrayBase {
  if (x.shape.join(",") === shape.join(",")) return x;
  const offset = shape.length - x.ndim;
  if (offset < 0) throw new FrontendError(`broadcastTo: cannot broadcast shape [${x.shape}] to the lower-rank [${shape}]`, "broadcastTo");
  return broadcastInDim(x, shape, x.shape.map((_, i) => i + offset));
}

/** An array of `shape` filled with `value` (of dtype `dtype`, or a weak JS scalar's). */
export function full(shape: readonly number[], value: ArrayLike, dtype?: DType): ArrayBase {
  const v = asArrayValue(value, dtype, "full");
  if (v.ndim !== 0) return broadcastTo(v, shape);
  return shape.length === 0 ? v : broadcastInDim(v, shape, []);
}

const SMALL_CONSTANT = 4096;
const CONSTANT_CACHE_ENTRIES = 256;
const constants = new Map<string, ConcreteArray>();

/**
 * `full` of a JS number as an operand of an op, made once per (dtype, shape, value):
 * the 2 of np.multiply(x, 2) costs no op after the first. Only operands come from here,
 * never results, so no caller can dispose a shared constant.
 */
export function constantOperand(shape: readonly number[], value: number, dtype: DType, weakType = false): ArrayBase {
  const make = (): ArrayBase => convertElementType(full(shape, value, dtype), dtype, weakType);
  if (elementCount(shape) > SMALL_CONSTANT) return make();
  const key = `${dtype}|${weakType}|${shape.join(",")}|${Object.is(value, -0) ? "-0" : String(value)}`;
  const cached = constants.get(key);
  if (cached !== undefined) return cached;
  const out = make();
  if (out instanceof ConcreteArray) {
    if (constants.size >= CONSTANT_CACHE_ENTRIES) constants.delete(constants.keys().next().value!);
    constants.set(key, out);
  }
  return out;
}

export function reshape(x: ArrayLike, newSizes: readonly number[]): ArrayBase {
  const a = asArrayValue(x);
  if (a.shape.join(",") === newSizes.join(",")) return a;
  return bind1("reshape", [a], { newSizes: [...newSizes] });
}

export function transpose(x: ArrayLike, permutation: readonly number[]): ArrayBase {
  const a = asArrayValue(x);
  if (permutation.every((p, i) => p === i)) return a;
  return bind1("transpose", [a], { permutation: [...permutation] });
}

const reduction = (name: "reduceSum" | "reduceMax" | "reduceMin" | "reduceProd" | "reduceAnd" | "reduceOr") =>
  (x: ArrayLike, axes: readonly number[]): ArrayBase => {
    const a = asArrayValue(x);
    return axes.length === 0 ? a : bind1(name, [a], { axes: [...axes] });
  };
export const reduceSum = reduction("reduceSum");
export const reduceMax = reduction("reduceMax");
export const reduceMin = reduction("reduceMin");
export const reduceProd = reduction("reduceProd");
export const reduceAnd = reduction("reduceAnd");
export const reduceOr = reduction("reduceOr");

export function argmax(x: ArrayLike, axis: number, indexDtype: DType = "int32"): ArrayBase {
  return bind1("argmax", [asArrayValue(x)], { axis, indexDtype });
}

export function argmin(x: ArrayLike, axis: number, indexDtype: DType = "int32"): ArrayBase {
  return bind1("argmin", [asArrayValue(x)], { axis, indexDtype });
}

/** lax.cumsum: running sums along `axis` (from the end with `reverse`). */
export function cumsum(x: ArrayLike, axis = 0, options: { reverse?: boolean } = {}): ArrayBase {
  return bind1("cumsum", [asArrayValue(x)], { axis, reverse: options.reverse ?? false });
}

/** lax.cumprod: running products along `axis`. */
export function cumprod(x: ArrayLike, axis = 0, options: { reverse?: boolean } = {}): ArrayBase {
  return bind1("cumprod", [asArrayValue(x)], { axis, reverse: options.reverse ?? false });
}

export interface DotDimensionNumbers {
  readonly lhsContractingDimensions: readonly number[];
  readonly rhsContractingDimensions: readonly number[];
  readonly lhsBatchDimensions?: readonly number[];
  readonly rhsBatchDimensions?: readonly number[];
}

/** dot_general: contracts and batches the given dimensions; the result is (batch, lhs free, rhs free). */
export function dotGeneral(lhs: ArrayLike, rhs: ArrayLike, dimensionNumbers: DotDimensionNumbers, options: { preferredElementType?: DType } = {}): ArrayBase {
  const d = dimensionNumbers;
  return bind1("dotGeneral", [asArrayValue(lhs), asArrayValue(rhs)], {
    lhsContracting: [...d.lhsContractingDimensions], rhsContracting: [...d.rhsContractingDimensions],
    lhsBatch: [...(d.lhsBatchDimensions ?? [])], rhsBatch: [...(d.rhsBatchDimensions ?? [])],
    ...(options.preferredElementType === undefined ? {} : { preferredElementType: options.preferredElementType }),
  });
}

export function slice(x: ArrayLike, startIndices: readonly number[], limitIndices: readonly number[], strides?: readonly number[]): ArrayBase {
  const a = asArrayValue(x);
  return bind1("slice", [a], { startIndices: [...startIndices], limitIndices: [...limitIndices], strides: [...(strides ?? a.shape.map(() => 1))] });
}

/** lax.pad: `config` per dimension is [low, high, interior] (low and high may not be negative here). */
export function pad(x: ArrayLike, paddingValue: ArrayLike, config: readonly (readonly [number, number, number])[]): ArrayBase {
  const a = asArrayValue(x);
  const v = asArrayValue(paddingValue, a.dtype, "pad");
  if (config.some(([lo, hi]) => lo < 0 || hi < 0)) throw new FrontendError("pad: negative edge padding is not supported by the front end yet (slice instead)", "pad", "config");
  return bind1("pad", [a, v], { low: config.map((c) => c[0]), high: config.map((c) => c[1]), interior: config.map((c) => c[2]) });
}

export function concatenate(operands: readonly ArrayLike[], dimension: number): ArrayBase {
  if (operands.length === 0) throw new FrontendError("concatenate: needs at least one operand", "concatenate", "operands");
  const arrays = operands.map((o) => asArrayValue(o));
  return arrays.length === 1 ? arrays[0]! : bind1("concatenate", arrays, { dimension });
}

export function rev(x: ArrayLike, dimensions: readonly number[]): ArrayBase {
  const a = asArrayValue(x);
  return dimensions.length === 0 ? a : bind1("rev", [a], { dimensions: [...dimensions] });
}

export function iota(dtype: DType, size: number): ArrayBase {
  return broadcastedIota(dtype, [size], 0);
}

export function broadcastedIota(dtype: DType, shape: readonly number[], dimension: number): ArrayBase {
  return bind1("iota", [], { dtype, shape: [...shape], dimension });
}

const indexArray = (x: ArrayLike, where: string, what: string): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  if (!isIntegral(a.dtype)) throw new FrontendError(`${where}: ${what} must be integers, got ${a.dtype}`, where, what);
  return a;
};

/** lax.gather with XLA's semantics: each start index is clamped so that its slice lies inside the operand. */
export function gather(operand: ArrayLike, startIndices: ArrayLike, dimensionNumbers: GatherDimensionNumbersInput, sliceSizes: readonly number[], options: { indicesAreSorted?: boolean } = {}): ArrayBase {
  const d = dimensionNumbers;
  return bind1("gather", [asArrayValue(operand, undefined, "gather"), indexArray(startIndices, "gather", "startIndices")], {
    dimensionNumbers: {
      offsetDims: [...d.offsetDims], collapsedSliceDims: [...d.collapsedSliceDims], startIndexMap: [...d.startIndexMap],
      operandBatchingDims: [...(d.operandBatchingDims ?? [])], startIndicesBatchingDims: [...(d.startIndicesBatchingDims ?? [])], indexVectorDim: d.indexVectorDim,
    },
    sliceSizes: [...sliceSizes], indicesAreSorted: options.indicesAreSorted ?? false,
  });
}

export interface ScatterOptions {
  readonly indicesAreSorted?: boolean;
  /** A promise that no two updates land on one element. */
  readonly uniqueIndices?: boolean;
}

/** lax.scatter and its combining forms, with XLA's semantics: an update element whose index falls outside the operand is skipped. */
const scatterOf = (name: "scatter" | "scatterAdd" | "scatterMul" | "scatterMin" | "scatterMax") =>
  (operand: ArrayLike, scatterIndices: ArrayLike, updates: ArrayLike, dimensionNumbers: ScatterDimensionNumbersInput, options: ScatterOptions = {}): ArrayBase => {
    const x = asArrayValue(operand, undefined, name);
    const d = dimensionNumbers;
    return bind1(name, [x, indexArray(scatterIndices, name, "scatterIndices"), asArrayValue(updates, x.dtype, name)], {
      dimensionNumbers: {
        updateWindowDims: [...d.updateWindowDims], insertedWindowDims: [...d.insertedWindowDims], scatterDimsToOperandDims: [...d.scatterDimsToOperandDims],
        inputBatchingDims: [...(d.inputBatchingDims ?? [])], scatterIndicesBatchingDims: [...(d.scatterIndicesBatchingDims ?? [])], indexVectorDim: d.indexVectorDim,
      },
      indicesAreSorted: options.indicesAreSorted ?? false, uniqueIndices: options.uniqueIndices ?? false,
    });
  };
/** Each update replaces the element it lands on (of several on one element, the last in the updates' row-major order wins). */
export const scatter = scatterOf("scatter");
export const scatterAdd = scatterOf("scatterAdd");
export const scatterMul = scatterOf("scatterMul");
export const scatterMin = scatterOf("scatterMin");
export const scatterMax = scatterOf("scatterMax");

/** Start indices as scalar arrays of one integer dtype (JS numbers take the first array's, or int32). */
function startIndexArrays(where: string, startIndices: readonly ArrayLike[]): ArrayBase[] {
  const first = startIndices.find((s): s is ArrayBase => s instanceof ArrayBase);
  const dtype = first?.dtype ?? "int32";
  return startIndices.map((s, i) => {
    const a = indexArray(s, where, "startIndices");
    if (a.ndim !== 0) throw new FrontendError(`${where}: start index ${i} has shape [${a.shape}]; start indices are scalars`, where, "startIndices");
    return convertElementType(a, dtype);
  });
}

/** lax.dynamic_slice: the start indices are clamped so that the slice lies inside the operand. */
export function dynamicSlice(operand: ArrayLike, startIndices: readonly ArrayLike[], sliceSizes: readonly number[]): ArrayBase {
  return bind1("dynamicSlice", [asArrayValue(operand, undefined, "dynamicSlice"), ...startIndexArrays("dynamicSlice", startIndices)], { sliceSizes: [...sliceSizes] });
}

/** lax.dynamic_update_slice: `update` written into `operand` at the (clamped) start indices. */
export function dynamicUpdateSlice(operand: ArrayLike, update: ArrayLike, startIndices: readonly ArrayLike[]): ArrayBase {
  const x = asArrayValue(operand, undefined, "dynamicUpdateSlice");
  return bind1("dynamicUpdateSlice", [x, asArrayValue(update, x.dtype, "dynamicUpdateSlice"), ...startIndexArrays("dynamicUpdateSlice", startIndices)], {});
}

/**
 * lax.sort: sorts `operand` (or a JS list of arrays together, by the first `numKeys` of
 * them lexicographically) along `dimension` (default the last); floats in total order
 * (NaN last). Stable unless `isStable` is false.
 */
export function sort(operand: ArrayLike | readonly ArrayLike[], options: { dimension?: number; isStable?: boolean; numKeys?: number } = {}): ArrayBase | ArrayBase[] {
  // A JS list of arrays is several operands; anything else (an array, nested JS numbers) is one.
  const single = !(globalThis.Array.isArray(operand) && operand.length > 0 && operand.every((o) => o instanceof ArrayBase));
  const ops = (single ? [operand as ArrayLike] : operand as readonly ArrayLike[]).map((o) => asArrayValue(o, undefined, "sort"));
  if (ops.length === 0) throw new FrontendError("sort: needs at least one operand", "sort", "operand");
  const rank = ops[0]!.ndim;
  for (const o of ops) if (o.shape.join(",") !== ops[0]!.shape.join(",")) throw new FrontendError(`sort: the operands have different shapes ([${ops[0]!.shape}] and [${o.shape}])`, "sort", "operand");
  const dimension = options.dimension ?? -1;
  const d = dimension < 0 ? dimension + rank : dimension;
  if (!Number.isInteger(d) || d < 0 || d >= rank) throw new FrontendError(`sort: dimension ${dimension} is out of range for rank ${rank}`, "sort", "dimension");
  const numKeys = options.numKeys ?? 1;
  if (!Number.isInteger(numKeys) || numKeys < 1 || numKeys > ops.length) throw new FrontendError(`sort: numKeys ${numKeys} must be between 1 and the ${ops.length} operand(s)`, "sort", "numKeys");
  const out = bind("sort", ops, { dimension: d, isStable: options.isStable ?? true, numKeys });
  return single ? out[0]! : out;
}

/** lax.linalg.cholesky: the lower Cholesky factor (the upper triangle zero) of symmetric positive-definite matrices (the last two dimensions); reads the lower triangle. */
export function cholesky(x: ArrayLike): ArrayBase {
  const a = asArrayValue(x, undefined, "cholesky");
  if (a.ndim < 2 || a.shape.at(-1) !== a.shape.at(-2)) throw new FrontendError(`cholesky: needs square matrices in the last two dimensions, got shape [${a.shape}]`, "cholesky", "x");
  return bind1("cholesky", [a], {});
}

/** lax.linalg.triangular_solve: x with op(a) x = b (leftSide) or x op(a) = b, a lower (or upper) triangular; op(a) is aᵀ with transposeA. */
export function triangularSolve(a: ArrayLike, b: ArrayLike, options: { leftSide?: boolean; lower?: boolean; unitDiagonal?: boolean; transposeA?: boolean } = {}): ArrayBase {
  const x = asArrayValue(a, undefined, "triangularSolve");
  return bind1("triangularSolve", [x, asArrayValue(b, x.dtype, "triangularSolve")], {
    leftSide: options.leftSide ?? false, lower: options.lower ?? false, unitDiagonal: options.unitDiagonal ?? false, transposeA: options.transposeA ?? false,
  });
}

/**
 * lax.linalg.lu of square matrices: [lu, pivots, permutation] with P a = L U (P's row i is
 * a's row permutation[i]), L unit lower triangular below lu's diagonal and U upper
 * triangular on and above it; pivots are LAPACK's row swaps, 0-based (int32).
 */
export function lu(x: ArrayLike): [ArrayBase, ArrayBase, ArrayBase] {
  const a = asArrayValue(x, undefined, "lu");
  if (a.ndim < 2 || a.shape.at(-1) !== a.shape.at(-2)) throw new FrontendError(`lu: needs square matrices in the last two dimensions, got shape [${a.shape}]`, "lu", "x");
  return bind("lu", [a], {}) as [ArrayBase, ArrayBase, ArrayBase];
}

const squareOrAny = (x: ArrayLike, where: string, square: boolean): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  if (a.ndim < 2 || (square && a.shape.at(-1) !== a.shape.at(-2))) throw new FrontendError(`${where}: needs ${square ? "square " : ""}matrices in the last two dimensions, got shape [${a.shape}]`, where, "x");
  return a;
};

/** lax.linalg.qr: [q, r] with q r = x, q's columns orthonormal, r upper triangular; fullMatrices (default true, as JAX's) makes q square. */
export function qr(x: ArrayLike, options: { fullMatrices?: boolean } = {}): [ArrayBase, ArrayBase] {
  return bind("qr", [squareOrAny(x, "qr", false)], { fullMatrices: options.fullMatrices ?? true }) as [ArrayBase, ArrayBase];
}

/**
 * lax.linalg.eigh: [v, w], the eigenvectors (columns of v) and ascending eigenvalues of
 * symmetric (Hermitian) matrices. `lower` (default true) picks the triangle read;
 * `symmetrizeInput` (default true, as JAX's) uses (x + xᴴ) / 2 instead.
 */
export function eigh(x: ArrayLike, options: { lower?: boolean; symmetrizeInput?: boolean } = {}): [ArrayBase, ArrayBase] {
  let a = squareOrAny(x, "eigh", true);
  if (options.symmetrizeInput ?? true) {
    // The Hermitian part (a + aᴴ) / 2.
    const t = transpose(a, [...a.shape.slice(0, -2).map((_, i) => i), a.ndim - 1, a.ndim - 2]);
    a = mul(add(a, dtypeKind(a.dtype) === "complex" ? conj(t) : t), 0.5);
  }
  return bind("eigh", [a], { lower: options.lower ?? true }) as [ArrayBase, ArrayBase];
}

export interface EigOptions {
  /** Compute the left eigenvectors (default true, as JAX's): vlᴴ x = diag(w) vlᴴ. */
  readonly computeLeftEigenvectors?: boolean;
  /** Compute the right eigenvectors (default true): x vr = vr diag(w). */
  readonly computeRightEigenvectors?: boolean;
  /**
   * Differentiate the eigenvectors too (default false, as JAX's enable_eigvec_derivs): the
   * derivative of geev's normalization (unit 2-norm, largest component real), valid where
   * the eigenvalues are distinct and no eigenvector has two components tied for the
   * largest magnitude. Without it, differentiating a call that computes eigenvectors is
   * an error (even through its eigenvalues alone), as in JAX.
   */
  readonly enableEigvecDerivs?: boolean;
}

/**
 * lax.linalg.eig: [w, vl?, vr?], the eigenvalues of square (float or complex) matrices and,
 * as asked, their left and right eigenvectors (columns), all complex (complex64 for
 * float32 and complex64 input, complex128 otherwise), by LAPACK's geev. A matrix with a
 * non-finite entry gives NaNs, as JAX's.
 */
export function eig(x: ArrayLike, options: EigOptions = {}): ArrayBase[] {
  const a = squareOrAny(x, "eig", true);
  if (!isInexact(a.dtype)) throw new FrontendError(`eig: needs float or complex matrices, got ${a.dtype}`, "eig", "x");
  return bind("eig", [a], {
    computeLeftEigenvectors: options.computeLeftEigenvectors ?? true,
    computeRightEigenvectors: options.computeRightEigenvectors ?? true,
    enableEigvecDerivs: options.enableEigvecDerivs ?? false,
  });
}

/** lax.linalg.svd: [u, s, vh] with x = u diag(s) vh (s descending), or s alone without computeUv. */
export function svd(x: ArrayLike, options: { fullMatrices?: boolean; computeUv?: boolean } = {}): [ArrayBase, ArrayBase, ArrayBase] | ArrayBase {
  const computeUv = options.computeUv ?? true;
  const out = bind("svd", [squareOrAny(x, "svd", false)], { fullMatrices: options.fullMatrices ?? true, computeUv });
  return computeUv ? [out[1]!, out[0]!, out[2]!] : out[0]!;
}

// ---- complex numbers

const requireComplex = (x: ArrayLike, where: string): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  if (dtypeKind(a.dtype) !== "complex") throw new FrontendError(`${where}: needs a complex array, got ${a.dtype}`, where, "x");
  return a;
};

/** lax.complex: re + i·im from float32 (complex64) or float64 (complex128) arrays of one dtype. */
export function complex(re: ArrayLike, im: ArrayLike): ArrayBase {
  const [x, y] = matchOperands("complex", re, im);
  if (x.dtype !== y.dtype || (x.dtype !== "float32" && x.dtype !== "float64")) {
    throw new FrontendError(`complex: needs two float32 or two float64 arrays, got ${x.dtype} and ${y.dtype}`, "complex");
  }
  return bind1("complex", [x, y], {});
}

/** lax.real: the real parts of a complex array (float32 for complex64, float64 for complex128). */
export const real = (x: ArrayLike): ArrayBase => bind1("real", [requireComplex(x, "real")], {});
/** lax.imag: the imaginary parts of a complex array. */
export const imag = (x: ArrayLike): ArrayBase => bind1("imag", [requireComplex(x, "imag")], {});
/** lax.conj of a complex array. */
export const conj = (x: ArrayLike): ArrayBase => bind1("conj", [requireComplex(x, "conj")], {});

// ---- FFT

export type FftTypeName = "FFT" | "IFFT" | "RFFT" | "IRFFT";
const FFT_PRIMITIVE = { FFT: "fft", IFFT: "ifft", RFFT: "rfft", IRFFT: "irfft" } as const;

/**
 * lax.fft(x, fftType, fftLengths): XLA's FFT over the innermost fftLengths.length (1 to 3)
 * dimensions. FFT and IFFT take complex arrays (IFFT divides by the product of the
 * lengths); RFFT takes float32/float64 arrays whose innermost dimensions are fftLengths
 * and keeps the n/2 + 1 non-negative frequencies of the last; IRFFT inverts it (its last
 * dimension is n/2 + 1 for n = fftLengths' last).
 */
export function fft(x: ArrayLike, fftType: FftTypeName, fftLengths: readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "fft");
  const name = FFT_PRIMITIVE[fftType];
  if (name === undefined) throw new FrontendError(`fft: fftType must be FFT, IFFT, RFFT or IRFFT, got ${String(fftType)}`, "fft", "fftType");
  const k = fftLengths.length;
  if (k < 1 || k > 3 || k > a.ndim) throw new FrontendError(`fft: needs 1 to 3 fft lengths, at most the rank ${a.ndim}, got [${fftLengths}]`, "fft", "fftLengths");
  if (fftLengths.some((n) => !Number.isInteger(n) || n < 0)) throw new FrontendError(`fft: the fft lengths [${fftLengths}] must be non-negative integers`, "fft", "fftLengths");
  const real = fftType === "RFFT";
  if (real ? a.dtype !== "float32" && a.dtype !== "float64" : dtypeKind(a.dtype) !== "complex") {
    throw new FrontendError(`fft: ${fftType} needs a ${real ? "float32 or float64" : "complex"} array, got ${a.dtype}`, "fft", "x");
  }
  const inner = a.shape.slice(a.ndim - k);
  const expected = fftType === "IRFFT" ? [...fftLengths.slice(0, -1), Math.floor(fftLengths.at(-1)! / 2) + 1] : [...fftLengths];
  if (inner.join(",") !== expected.join(",")) {
    throw new FrontendError(`fft: ${fftType} of lengths [${fftLengths}] needs innermost dimensions [${expected}], got [${inner}]`, "fft", "fftLengths");
  }
  return bind1(name, [a], { fftLength: [...fftLengths] });
}
