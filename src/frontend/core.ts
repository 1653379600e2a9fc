// The front end's core: arrays, tracers and `bind`.
//
// Every operation of the front end is a primitive of primitives.ts applied with
// `bind(name, args, params)`. Outside any transformation the arguments are concrete
// Arrays and bind runs the primitive eagerly (a compiled single-op executable, cached by
// primitive, params and input signature). Inside `jit`, `jvp`, `vjp` or `vmap` some
// arguments are Tracers of that transformation's Trace; bind hands the primitive to the
// trace of the highest level among them (the innermost transformation), which lifts the
// other arguments into it and processes the primitive (stages it into a builder,
// applies its JVP rule, records it on a tape, applies its batching rule). This is JAX's
// design (autodidax), with one trace object per active transformation.
//
// Arrays are values: no op consumes its inputs, and a device buffer is freed when its
// Array is garbage-collected (a FinalizationRegistry) or at once by `dispose()`.

import { compileSync } from "../compiler/index.js";
import type { DeviceArray } from "../compiler/device.js";
import { defaultDevice } from "../compiler/backend.js";
import type { Executable } from "../compiler/executable.js";
import { XlaBuilder, parameter, type XlaOp } from "../builder/xla_builder.js";
import { tuple } from "../builder/control.js";
import { Literal, type Complex, type NestedValues, type Scalar } from "../types/literal.js";
import { arrayShape, type ArrayShape, elementCount } from "../types/shape.js";
import { DTYPES, dtypeKind, dtypeOf, resultType, DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INT, type DType } from "./dtypes.js";
import { ConcretizationError, FrontendError } from "./errors.js";
import { getItem, IndexUpdateRef, type Index } from "./indexing.js";
// A cycle, as indexing.ts's: numpy's functions are only called from the methods below.
import * as np from "./numpy.js";
import { PRIMITIVES, type PrimitiveName, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";
import type { NamedSharding } from "./sharding.js";

// This module's `Array` is the front end's array class; JS arrays are globalThis.Array.
const isJsArray = (x: unknown): x is readonly unknown[] => globalThis.Array.isArray(x);

/** What a transformation knows of a value: its shape and dtype, and whether its dtype is weak (a JS number's). */
export interface Aval {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly weakType: boolean;
}

export const avalString = (a: Aval): string => `${a.dtype}[${a.shape.join(",")}]${a.weakType ? "{weak}" : ""}`;
export const shapeOfAval = (a: Aval): ArrayShape => arrayShape(DTYPES[a.dtype], a.shape);

/** The front end's array: a concrete Array or a Tracer. */
export abstract class ArrayBase {
  abstract readonly aval: Aval;
  /** How a sharded jit splits the array over a mesh's devices (arrays that sharded jit returns, and devicePut's); undefined for others. */
  abstract readonly sharding: NamedSharding | undefined;

  get shape(): number[] {
    return [...this.aval.shape];
  }

  get dtype(): DType {
    return this.aval.dtype;
  }

  get weakType(): boolean {
    return this.aval.weakType;
  }

  get ndim(): number {
    return this.aval.shape.length;
  }

  get size(): number {
    return elementCount(this.aval.shape);
  }

  /** The contents as nested JS values (numbers, booleans; bigint for 64-bit integers). */
  abstract tolist(): NestedValues;

  /** The one element of a size-1 array. */
  item(): Scalar {
    if (this.size !== 1) throw new FrontendError(`item: the array has ${this.size} elements, not 1`, "item");
    const list = this.tolist();
    let v: unknown = list;
    while (isJsArray(v)) v = v[0];
    return v as Scalar;
  }

  /** The elements in row-major order, as a typed array (a copy). */
  abstract data(): Promise<ArrayLikeStorage>;

  /**
   * numpy's `x[...]`: `x.index(0)`, `x.index(":", "1:3")`, `x.index("...", null)`,
   * `x.index([0, 2])`, `x.index(mask)` (items: integers, slice strings, null for a new
   * axis, "...", integer or boolean arrays; see docs/frontend.md).
   */
  index(...idx: Index[]): ArrayBase {
    return getItem(this, idx);
  }

  /** JAX's `x.at[...]`: `x.at(0, ":").set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`, `.max(v)`, `.get()` (new arrays; x is unchanged). */
  at(...idx: Index[]): IndexUpdateRef {
    return new IndexUpdateRef(this, idx);
  }

  /** numpy's `x.reshape(...)`: `x.reshape([2, 3])` or `x.reshape(2, 3)` (one size may be -1). */
  reshape(...shape: (number | readonly number[])[]): ArrayBase {
    return np.reshape(this, shape.flat());
  }

  /** numpy's `x.astype(dtype)`. */
  astype(dtype: DType): ArrayBase {
    return np.astype(this, dtype);
  }

  /** numpy's `x.T`: the axes reversed. */
  get T(): ArrayBase {
    return np.transpose(this);
  }

  /**
   * The array itself. jax-js's arrays are consumed by each op and `.ref` keeps one alive;
   * here no op consumes its inputs, so code written for jax-js runs unchanged.
   */
  get ref(): this {
    return this;
  }

  /** The sub-arrays along the leading axis (`const [k1, k2] = random.split(key)`). */
  *[Symbol.iterator](): Iterator<ArrayBase> {
    if (this.ndim === 0) throw new FrontendError("iteration over a 0-d array", "iter");
    for (let i = 0; i < this.aval.shape[0]!; i++) yield indexLeading(this, i);
  }

  toString(): string {
    return `Array(${avalString(this.aval)})`;
  }
}

export type ArrayLikeStorage = Literal["data"];

/**
 * A JS value accepted wherever an array is: an array, a number, a boolean, a bigint, a
 * complex number `{ re, im }` (weakly typed, as a Python complex is in JAX), or nested JS
 * arrays of them.
 */
export type ArrayLike = ArrayBase | number | boolean | bigint | Complex | TypedArray | readonly ArrayLike[];

/** A JS typed array, taken as a 1-D array of its element type (as jnp.array takes a numpy array). */
export type TypedArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | BigInt64Array | BigUint64Array | Float32Array | Float64Array;

/** The dtype of each typed array class (Uint8ClampedArray and DataView are not arrays of one). */
const TYPED_ARRAY_DTYPES: readonly [new (n: number) => TypedArray, DType][] = [
  [Int8Array, "int8"], [Int16Array, "int16"], [Int32Array, "int32"], [Uint8Array, "uint8"], [Uint16Array, "uint16"], [Uint32Array, "uint32"],
  [BigInt64Array, "int64"], [BigUint64Array, "uint64"], [Float32Array, "float32"], [Float64Array, "float64"],
];
const typedArrayDtype = (x: unknown): DType | undefined => TYPED_ARRAY_DTYPES.find(([cls]) => x instanceof cls)?.[1];

/** Whether `v` is a JS complex number `{ re, im }` (not an array). */
export const isComplexValue = (v: unknown): v is Complex =>
  typeof v === "object" && v !== null && !(v instanceof ArrayBase) && typeof (v as Complex).re === "number" && typeof (v as Complex).im === "number";

/**
 * A concrete array: a buffer in the default device's memory. A dropped Array needs no
 * finalizer of its own: its DeviceArray, reachable only through it, gives its memory back
 * when collected (the device's FinalizationRegistry), so an eager op registers nothing.
 */
export class Array extends ArrayBase {
  #buffer: DeviceArray | undefined;

  /** @internal Takes ownership of `buffer`. */
  constructor(readonly aval: Aval, buffer: DeviceArray, readonly sharding: NamedSharding | undefined = undefined) {
    super();
    this.#buffer = buffer;
  }

  /** @internal The device buffer (a FrontendError after dispose). */
  get buffer(): DeviceArray {
    if (this.#buffer === undefined) throw new FrontendError(`the array ${avalString(this.aval)} was disposed`, "dispose");
    return this.#buffer;
  }

  /** Frees the device buffer now (later uses of the array throw). */
  dispose(): void {
    if (this.#buffer === undefined) return;
    this.#buffer.delete();
    this.#buffer = undefined;
  }

  get isDisposed(): boolean {
    return this.#buffer === undefined;
  }

  /** @internal The contents as a host literal. */
  toLiteral(): Literal {
    return this.buffer.toLiteral();
  }

  tolist(): NestedValues {
    return this.toLiteral().toNested();
  }

  data(): Promise<ArrayLikeStorage> {
    return Promise.resolve(this.toLiteral().data);
  }

  /** A host-side copy, read synchronously (Node, and the wasm backend in a browser). */
  dataSync(): ArrayLikeStorage {
    return this.toLiteral().data;
  }

  override toString(): string {
    return `Array(${JSON.stringify(this.tolist(), (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}, dtype=${this.dtype})`;
  }
}

/** A value of a transformation's trace: only its aval is known while tracing. */
export abstract class Tracer extends ArrayBase {
  abstract readonly trace: Trace;
  /** A traced value's sharding is the program's business (lax.withShardingConstraint). */
  readonly sharding = undefined;

  /**
   * @internal The concrete array this tracer stands for, where there is one (jvp and
   * vjp outside jit: the primal; vmap outside jit: the batched value, `batched` then
   * saying that it holds one value per batch element). Control flow under those
   * transformations decides with it. Undefined inside jit.
   */
  concrete(): { value: Array; batched: boolean } | undefined {
    return undefined;
  }

  /** Nothing to free: a traced value has no memory of its own (so code that disposes arrays runs unchanged under jit). */
  dispose(): void {}

  tolist(): NestedValues {
    throw this.concretization("tolist");
  }

  data(): Promise<ArrayLikeStorage> {
    throw this.concretization("data");
  }

  private concretization(what: string): ConcretizationError {
    return new ConcretizationError(
      `${what}: the value of a traced array (${avalString(this.aval)}, inside ${this.trace.kind}) is not known while tracing; ` +
      `only its shape and dtype are (mark the argument static with staticArgnums, or compute with np/lax ops)`, what,
    );
  }
}

/** One active transformation. Levels count up from 1 as transformations nest. */
export abstract class Trace<T extends Tracer = Tracer> {
  active = true;
  abstract readonly kind: string;

  constructor(readonly level: number) {}

  /** A concrete array as a tracer of this trace (a constant of the transformation). */
  abstract pure(x: Array): T;
  /** A tracer of an enclosing transformation as a tracer of this one. */
  abstract lift(x: Tracer): T;
  /** Applies primitive `name` to tracers of this trace. */
  abstract process<N extends PrimitiveName>(name: N, args: readonly T[], params: PrimitiveParams[N]): ArrayBase[];
}

const traceStack: Trace[] = [];

/** Runs `body` with a new trace made by `make(level)` active; deactivates it afterwards (its tracers may not be used later). */
export function withTrace<T extends Trace, R>(make: (level: number) => T, body: (trace: T) => R): R {
  const trace = make(traceStack.length + 1);
  traceStack.push(trace);
  try {
    return body(trace);
  } finally {
    traceStack.pop();
    trace.active = false;
  }
}

/** Whether a transformation is active (jit compiles only outside all of them, and inlines inside). */
export const transformationActive = (): boolean => traceStack.length > 0;

/** The active transformations, outermost first. */
export const activeTraces = (): readonly Trace[] => traceStack;

/** The innermost active transformation, if any. */
export const innermostTrace = (): Trace | undefined => traceStack.at(-1);

function raise(trace: Trace, x: ArrayBase): Tracer {
  if (x instanceof Array) return trace.pure(x);
  const t = x as Tracer;
  if (t.trace === trace) return t;
  if (t.trace.level < trace.level) return trace.lift(t);
  throw new FrontendError(`a traced value of ${t.trace.kind} was used inside ${trace.kind} at a lower level: it escaped its transformation`);
}

/** Applies primitive `name` to `args` (see the header). Returns the primitive's results. */
export function bind<N extends PrimitiveName>(name: N, args: readonly ArrayBase[], params: PrimitiveParams[N]): ArrayBase[] {
  let top: Trace | undefined;
  for (const a of args) {
    if (!(a instanceof Tracer)) continue;
    if (!a.trace.active) {
      throw new FrontendError(`${name}: an argument is a traced value of a ${a.trace.kind} that has finished (a leaked tracer: ` +
        `return it from the transformed function instead of storing it outside)`, name);
    }
    if (top === undefined || a.trace.level > top.level) top = a.trace;
  }
  if (top === undefined) return evalEager(name, args as readonly Array[], params);
  const trace = top;
  return trace.process(name, args.map((a) => raise(trace, a)), params);
}

/** The concrete value of `x` (see Tracer.concrete). */
export const concreteOf = (x: ArrayBase): { value: Array; batched: boolean } | undefined =>
  x instanceof Array ? { value: x, batched: false } : (x as Tracer).concrete();

/** `bind` of a single-result primitive. */
export const bind1 = <N extends PrimitiveName>(name: N, args: readonly ArrayBase[], params: PrimitiveParams[N]): ArrayBase =>
  bind(name, args, params)[0]!;

/** Whether the results of a primitive are weakly typed: all its inputs are, and the result keeps the first one's dtype. */
export function resultWeakType(inputs: readonly Aval[], dtype: DType): boolean {
  return inputs.length > 0 && inputs.every((a) => a.weakType) && inputs[0]!.dtype === dtype;
}

/** Lowers primitive `name` on builder ops: its rows' `lower`, and the avals its results have. */
export function lowerPrimitive<N extends PrimitiveName>(
  b: XlaBuilder, name: N, args: readonly XlaOp[], avals: readonly Aval[], params: PrimitiveParams[N],
): { ops: XlaOp[]; avals: Aval[] } {
  const row = PRIMITIVES[name] as unknown as PrimitiveRow<PrimitiveParams[N]>;
  const ops = row.lower(b, args, params);
  const outAvals = ops.map((o) => {
    const s = o.arrayShape;
    const dtype = dtypeOf(s.elementType);
    return { shape: [...s.dimensions], dtype, weakType: row.weakType?.(params) ?? resultWeakType(avals, dtype) };
  });
  return { ops, avals: outAvals };
}

// ---- eager execution
//
// An eager op is the front end's hot path (every np call outside jit), so a cache hit
// does only what the cache fill has not settled once: it builds the key from strings
// memoized per aval object (an eager result shares its entry's aval objects, so chains of
// ops reuse them), allocates the result buffers and runs the executable at their offsets.
// The executable's own argument checks (count, device, shapes) are skipped: the key
// fixes the operands' avals, and the default device holds every concrete Array.

interface EagerEntry {
  readonly executable: Executable;
  readonly avals: readonly Aval[];
  /** The results' device shapes (each call allocates one buffer per result). */
  readonly outputShapes: readonly ArrayShape[];
  /** The eager clock's reading at the entry's last use (the least recently used is evicted first). */
  lastUse: number;
}

/**
 * Compiled single-op executables by primitive, params and operand avals. Past
 * `eagerCacheLimit` entries the least recently used are deleted, so a program that sweeps
 * through many shapes keeps a bounded number of executables (and their device memory).
 */
const eagerCache = new Map<string, EagerEntry>();
let eagerCacheLimit = 1024;
let eagerClock = 0;

/** Sets the most executables the eager cache keeps (at least 1), evicting the least recently used past it; returns the previous limit. */
export function setEagerCacheLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw new FrontendError(`setEagerCacheLimit: the limit must be a positive integer, got ${limit}`, "setEagerCacheLimit");
  const previous = eagerCacheLimit;
  eagerCacheLimit = limit;
  evictEager();
  return previous;
}

function evictEager(): void {
  const excess = eagerCache.size - eagerCacheLimit;
  if (excess <= 0) return;
  const oldest = [...eagerCache].sort(([, x], [, y]) => x.lastUse - y.lastUse).slice(0, excess);
  for (const [key, entry] of oldest) {
    eagerCache.delete(key);
    entry.executable.delete();
  }
}

/** The cache key of a primitive's params (they are plain data: numbers, strings, booleans, lists, records). */
const paramsKey = (params: object): string => {
  for (const _ in params) return JSON.stringify(params);
  return "";
};

/** avalString of each aval object met, so a key costs one lookup per operand (eager ops' and jit's cache keys). */
const avalKeys = new WeakMap<Aval, string>();
export function avalKey(aval: Aval): string {
  let key = avalKeys.get(aval);
  if (key === undefined) avalKeys.set(aval, (key = avalString(aval)));
  return key;
}

/** Compiled single-op executables (for tests of the cache). */
export const eagerCacheSize = (): number => eagerCache.size;

function evalEager<N extends PrimitiveName>(name: N, args: readonly Array[], params: PrimitiveParams[N]): Array[] {
  let key = `${name}|${paramsKey(params)}`;
  for (const a of args) key += `|${avalKey(a.aval)}`;
  const entry = eagerCache.get(key) ?? fillEager(key, name, args, params);
  entry.lastUse = ++eagerClock;
  const device = entry.executable.device;
  const argumentOffsets = args.map((a) => a.buffer.offset);
  const results = entry.outputShapes.map((s) => device.allocate(s));
  try {
    entry.executable.executeAt(argumentOffsets, results.map((r) => r.offset));
  } catch (e) {
    for (const r of results) r.delete();
    throw e;
  }
  return results.map((r, i) => new Array(entry.avals[i]!, r));
}

/** Compiles primitive `name` alone for these operands' avals and caches it under `key`. */
function fillEager<N extends PrimitiveName>(key: string, name: N, args: readonly Array[], params: PrimitiveParams[N]): EagerEntry {
  const b = new XlaBuilder(`eager_${name}`);
  const ops = args.map((a, i) => parameter(b, i, shapeOfAval(a.aval)));
  const lowered = lowerPrimitive(b, name, ops, args.map((a) => a.aval), params);
  const root = lowered.ops.length === 1 ? lowered.ops[0]! : tuple(b, lowered.ops);
  // Always wasm, whatever jit's platform (platform.ts says why).
  const executable = compileSync(b.buildModule(root), { backend: "wasm" });
  const entry: EagerEntry = { executable, avals: lowered.avals, outputShapes: executable.program.outputs, lastUse: ++eagerClock };
  eagerCache.set(key, entry);
  evictEager();
  return entry;
}

// ---- arrays from JS values

/** A concrete array holding `literal`. */
export function arrayFromLiteral(literal: Literal, weakType = false): Array {
  const shape = literal.arrayShape;
  const aval: Aval = { shape: [...shape.dimensions], dtype: dtypeOf(shape.elementType), weakType };
  return new Array(aval, defaultDevice().bufferFromLiteral(literal));
}

/** The shape of nested JS arrays (a FrontendError for ragged nesting). */
function nestedShape(x: unknown, where: string): number[] {
  if (!isJsArray(x)) return [];
  const shapes = (x as unknown[]).map((e) => nestedShape(e, where));
  const first = shapes[0];
  if (first !== undefined && shapes.some((s) => s.join(",") !== first.join(","))) {
    throw new FrontendError(`${where}: the nested arrays are ragged (sub-array shapes ${[...new Set(shapes.map((s) => `[${s.join(",")}]`))].join(" and ")})`, where);
  }
  return [(x as readonly unknown[]).length, ...(first ?? [])];
}

/**
 * The default dtype of JS scalars: bool for booleans, int64 for bigints, int32 for
 * integers, complex64 for `{ re, im }`, float32 otherwise (JAX's defaults). -0 counts as
 * a float: no integer holds its sign.
 */
function inferDtype(leaves: readonly unknown[], where: string): DType {
  let kind: "bool" | "int" | "bigint" | "float" | "complex" | undefined;
  for (const v of leaves) {
    const k = typeof v === "boolean" ? "bool" : typeof v === "bigint" ? "bigint" : typeof v === "number" ? (Number.isInteger(v) && !Object.is(v, -0) ? "int" : "float")
      : isComplexValue(v) ? "complex" : undefined;
    if (k === undefined) throw new FrontendError(`${where}: ${String(v)} (${typeof v}) is not a number, boolean, bigint, complex { re, im } or array`, where);
    const rank = { bool: 0, int: 1, bigint: 2, float: 3, complex: 4 } as const;
    if (kind === undefined || rank[k] > rank[kind]) kind = k;
  }
  return kind === "bool" ? "bool" : kind === "bigint" ? "int64" : kind === "complex" ? DEFAULT_COMPLEX
    : kind === "float" || kind === undefined ? DEFAULT_FLOAT : DEFAULT_INT;
}

const flattenNested = (x: unknown): unknown[] => (isJsArray(x) ? (x as unknown[]).flatMap(flattenNested) : [x]);

/**
 * `x` as an array. Arrays pass through (converted when `dtype` differs); a JS scalar
 * without `dtype` is weakly typed; nested JS arrays become a strong array.
 */
export function asArrayValue(x: ArrayLike, dtype?: DType, where = "asarray"): ArrayBase {
  if (x instanceof ArrayBase) return dtype === undefined || dtype === x.dtype ? x : convertElementType(x, dtype);
  const typed = typedArrayDtype(x);
  if (typed !== undefined) {
    const d = dtype ?? typed;
    const values = globalThis.Array.from(x as TypedArray, (v: number | bigint) => toElement(v, d, where));
    return arrayFromLiteral(Literal.fromValues(DTYPES[d], [values.length], values));
  }
  const shape = nestedShape(x, where);
  const leaves = flattenNested(x);
  if (leaves.some((l) => l instanceof ArrayBase)) return stackNested(x, dtype, where);
  const weak = shape.length === 0 && dtype === undefined && typeof x !== "boolean";
  const d = dtype ?? inferDtype(leaves, where);
  const type = DTYPES[d];
  const values = leaves.map((v) => toElement(v, d, where));
  return arrayFromLiteral(Literal.fromValues(type, shape, values), weak);
}

/** Nested JS arrays holding arrays (traced ones, say): the leaves stacked, in their common dtype (jnp.array of a list of tracers). */
function stackNested(x: ArrayLike, dtype: DType | undefined, where: string): ArrayBase {
  if (!isJsArray(x)) return asArrayValue(x, dtype, where);
  const parts = (x as readonly ArrayLike[]).map((p) => stackNested(p, dtype, where));
  if (parts.length === 0) throw new FrontendError(`${where}: an empty list among arrays`, where);
  const common = dtype ?? resultType(...parts.map((p) => p.aval)).dtype;
  const shape = parts[0]!.shape;
  for (const p of parts) {
    if (p.shape.join(",") !== shape.join(",")) throw new FrontendError(`${where}: the nested arrays are ragged ([${shape}] and [${p.shape}])`, where);
  }
  const rows = parts.map((p) => bind1("reshape", [convertElementType(p, common)], { newSizes: [1, ...shape] }));
  return rows.length === 1 ? rows[0]! : bind1("concatenate", rows, { dimension: 0 });
}

function toElement(v: unknown, d: DType, where: string): Scalar {
  if (isComplexValue(v)) {
    // numpy refuses to drop an imaginary part silently (np.array(1j, dtype=float) raises).
    if (dtypeKind(d) !== "complex") throw new FrontendError(`${where}: the complex value ${v.re}+${v.im}j does not fit dtype ${d}`, where);
    return { re: v.re, im: v.im };
  }
  if (typeof v === "boolean") return d === "bool" ? v : toElement(v ? 1 : 0, d, where);
  if (typeof v === "bigint") return d === "int64" || d === "uint64" ? v : toElement(Number(v), d, where);
  if (typeof v !== "number") throw new FrontendError(`${where}: ${String(v)} is not a number, boolean or bigint`, where);
  if (d === "bool") return v !== 0;
  if (d === "int64" || d === "uint64") {
    if (!Number.isInteger(v)) throw new FrontendError(`${where}: ${v} is not an integer, for dtype ${d}`, where);
    return BigInt(v);
  }
  return v;
}

/** convert_element_type (strong result). */
export function convertElementType(x: ArrayBase, dtype: DType, weakType = false): ArrayBase {
  if (x.dtype === dtype && x.weakType === weakType) return x;
  return bind1("convertElementType", [x], { newDtype: dtype, weakType });
}

/** x[i] along the leading axis (iteration). */
function indexLeading(x: ArrayBase, i: number): ArrayBase {
  const shape = x.aval.shape;
  const start = shape.map((_, d) => (d === 0 ? i : 0));
  const limit = shape.map((s, d) => (d === 0 ? i + 1 : s));
  const sliced = bind1("slice", [x], { startIndices: start, limitIndices: limit, strides: shape.map(() => 1) });
  return bind1("reshape", [sliced], { newSizes: shape.slice(1) });
}
