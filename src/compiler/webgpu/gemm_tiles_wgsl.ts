// The tiled matrix product in WGSL that the GEMM (gemm_wgsl.ts) and the convolution
// (conv_wgsl.ts) kernels share, and the plain types their results are made of.
//
// C[z][row][col] = sum_k A[z](row, k) * B[z](k, col) over `count` independent products
// (a GEMM's batch, a convolution's feature groups). A workgroup computes one BM x BN
// tile of C: it walks k in steps of BK, each step loading the BM x BK slice of A and
// the BK x BN slice of B into workgroup memory (zeros past the edges), then each
// invocation multiplies its RM x RN block (RN = 4 x vec4sPerThread columns) from there,
// its accumulators in registers as vec4s. A software adapter's tiles (TileStaging
// "registers") skip the workgroup memory: each invocation reads the elements its block
// needs straight from storage. Where the operand's contiguous dimension is a
// multiple of 4, a load reads a vec4 at once. How an element of A or B is found (strides,
// a transposition, a convolution's patch gathered on the fly) is the caller's: it gives
// WGSL expressions. Accumulation is in f32, for each element of C in order of k, with
// fused multiply-adds (the order, not the rounding, is fixed: fma may round once or twice
// on a given GPU); an integer product's in i32, whose multiply-add wraps as two's
// complement (WGSL's integer arithmetic), so its sum is exact modulo 2^32 and so modulo
// 2^bits of any integer result of up to 32 bits, as the interpreter's wrapped steps give.

import { appendAll } from "../../types/arrays.js";
import { ELEMENT_TYPES, storageBytes, type ElementType } from "../../types/element_type.js";
import type { Declined } from "../kernel/declined.js";
import { memoryHelpers, storeAs } from "./wgsl_kernel.js";
import { BF16_ROUNDING, F16_ROUNDING, wrap } from "./wgsl_values.js";
import { isByteFloat, narrowFloatSource, narrowFloatWidening } from "./wgsl_narrow_float.js";

/** The adapter's limits a kernel is sized by (the subset of GPUSupportedLimits it reads). */
export interface GpuLimits {
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupSizeX: number;
  readonly maxComputeWorkgroupSizeY: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly maxStorageBufferBindingSize: number;
}

/** WebGPU's default limits: what every adapter offers at least. */
export const DEFAULT_GPU_LIMITS: GpuLimits = {
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupsPerDimension: 65535,
  maxStorageBufferBindingSize: 134217728,
};

/** One storage buffer a kernel binds (all in bind group 0). */
export interface GpuBinding {
  /** The binding number (memory "device": the operand's slot in the argument buffer). */
  readonly binding: number;
  /** The WGSL variable it is declared as. */
  readonly name: string;
  /** What it holds: an operand, the result, or a buffer an epilogue declared. */
  readonly role: "lhs" | "rhs" | "output" | "epilogue";
  readonly access: "read" | "read_write";
  /**
   * Bytes the kernel reads or writes from the binding's start (its offset in the
   * backend's buffer must be a multiple of minStorageBufferOffsetAlignment); at least 4
   * and a multiple of 4 (packed f16 of an odd count rounds up: the backend allocates it).
   */
  readonly byteSize: number;
}

/** A compute kernel ready for createComputePipeline and one dispatch. */
export interface GpuKernel {
  /** A WGSL module; its one entry point is `entryPoint`. */
  readonly code: string;
  readonly entryPoint: string;
  readonly workgroupSize: readonly [number, number, number];
  /** dispatchWorkgroups(x, y, z); [0, 1, 1] when the result is empty (nothing to run). */
  readonly dispatch: readonly [number, number, number];
  readonly bindings: readonly GpuBinding[];
  /** Which kernel and tile were chosen, and why, for dump() and the tuner. */
  readonly choice: KernelChoice;
  /** 2 x multiply-adds: for GFLOP/s. */
  readonly flops: number;
}

export type KernelChoice =
  | {
      readonly kind: "tiled";
      readonly tile: GemmTile;
      /** "limits": defaultTile's choice; "options": the caller's; "tuner": the fastest of the tuner's timings (gemm_tune.ts). */
      readonly tileFrom: "limits" | "options" | "tuner";
      readonly vectorLoads: { readonly lhs: boolean; readonly rhs: boolean } }
  | { readonly kind: "skinny"; readonly columnsPerWorkgroup: number; readonly depthSlices: number; readonly swapped: boolean; readonly vectorLoads: boolean };

/**
 * Where a tile's operands pass on their way to the multiply-adds: "workgroup" (the
 * default), staged in workgroup memory a BK-deep slice at a time, each element loaded
 * once for the workgroup, two barriers a slice; "registers", read by each invocation
 * straight from storage into registers, no workgroup memory and no barrier, each
 * element loaded again by every invocation that needs it. A GPU wants the first (its
 * memory is far, its barriers cheap); a software adapter the second (SOFTWARE_TILES).
 */
export type TileStaging = "workgroup" | "registers";

/** A tile of the tiled product: threadsX x threadsY invocations, each rowsPerThread x (4 x vec4sPerThread) outputs. */
export interface GemmTile {
  readonly threadsX: number;
  readonly threadsY: number;
  readonly rowsPerThread: number;
  readonly vec4sPerThread: number;
  /** Steps of k per load into workgroup memory; with staging "registers", per turn of the k loop where the depth is a multiple of it (else one). A multiple of 4. */
  readonly depth: number;
  /** Absent: "workgroup" (the GPU's tiles stay as they were, names and WGSL). */
  readonly staging?: TileStaging;
}

export const tileRows = (t: GemmTile): number => t.threadsY * t.rowsPerThread;
export const tileCols = (t: GemmTile): number => t.threadsX * t.vec4sPerThread * 4;
export const tileStaging = (t: GemmTile): TileStaging => t.staging ?? "workgroup";
/** Workgroup memory of a tile: BK x BM floats of A and BK x BN of B (each a plain f32 array); none when read from storage. */
export const tileStorageBytes = (t: GemmTile): number => (tileStaging(t) === "registers" ? 0 : 4 * t.depth * (tileRows(t) + tileCols(t)));
export const tileName = (t: GemmTile): string =>
  `${tileRows(t)}x${tileCols(t)}x${t.depth}${tileStaging(t) === "registers" ? " from storage" : ""} (${t.threadsX}x${t.threadsY} threads, ${t.rowsPerThread}x${4 * t.vec4sPerThread} each)`;

/**
 * The tiles the kernels choose among, largest first: 128x128 (8x8 per invocation) for
 * large products, 64x64 (4x4), 32x64 and 32x32 for smaller ones, 16x32 for the smallest.
 */
export const TILE_CANDIDATES: readonly GemmTile[] = [
  { threadsX: 16, threadsY: 16, rowsPerThread: 8, vec4sPerThread: 2, depth: 8 },
  { threadsX: 16, threadsY: 16, rowsPerThread: 4, vec4sPerThread: 1, depth: 16 },
  { threadsX: 16, threadsY: 8, rowsPerThread: 4, vec4sPerThread: 1, depth: 16 },
  { threadsX: 8, threadsY: 8, rowsPerThread: 4, vec4sPerThread: 1, depth: 32 },
  { threadsX: 8, threadsY: 8, rowsPerThread: 2, vec4sPerThread: 1, depth: 16 },
];

/** Why an adapter cannot run a tile, or undefined. */
export function tileProblem(t: GemmTile, limits: GpuLimits): string | undefined {
  if (t.threadsX * t.threadsY > limits.maxComputeInvocationsPerWorkgroup) return `${t.threadsX * t.threadsY} invocations exceed maxComputeInvocationsPerWorkgroup ${limits.maxComputeInvocationsPerWorkgroup}`;
  if (t.threadsX > limits.maxComputeWorkgroupSizeX || t.threadsY > limits.maxComputeWorkgroupSizeY) return "workgroup size exceeds maxComputeWorkgroupSizeX/Y";
  if (tileStorageBytes(t) > limits.maxComputeWorkgroupStorageSize) return `${tileStorageBytes(t)} bytes of workgroup memory exceed maxComputeWorkgroupStorageSize ${limits.maxComputeWorkgroupStorageSize}`;
  if (t.depth % 4 !== 0 || t.depth <= 0) return "depth must be a positive multiple of 4";
  for (const x of [t.threadsX, t.threadsY, t.rowsPerThread, t.vec4sPerThread]) if (!Number.isInteger(x) || x < 1) return "tile sizes must be positive integers";
  return undefined;
}

/**
 * The tiles read from storage (staging "registers") a software adapter chooses among,
 * largest first: 64x64 (8x8 outputs an invocation), 32x32 (4x4), 16x32 (2x4), each
 * 64 invocations. On SwiftShader (2026-12-02, 2 cores, CPU a run of the encoder's
 * 128x256x256, 128x256x1024 and 128x1024x256) 8x8 outputs an invocation cost 10-30%
 * less than 4x4 (in workgroups of 64 or 256) or 4x8: each element loaded serves
 * more multiply-adds; docs/benchmarks.md, "The WGSL GEMM on a software adapter".
 */
export const SOFTWARE_TILES: readonly GemmTile[] = [
  { threadsX: 8, threadsY: 8, rowsPerThread: 8, vec4sPerThread: 2, depth: 4, staging: "registers" },
  { threadsX: 8, threadsY: 8, rowsPerThread: 4, vec4sPerThread: 1, depth: 4, staging: "registers" },
  { threadsX: 8, threadsY: 8, rowsPerThread: 2, vec4sPerThread: 1, depth: 4, staging: "registers" },
];

/** The tiles of one staging, largest first. */
const stagingTiles = (staging: TileStaging): readonly GemmTile[] => (staging === "registers" ? SOFTWARE_TILES : TILE_CANDIDATES);

/** The tiles an adapter can run, of one staging. */
export const fittingTiles = (limits: GpuLimits, staging: TileStaging = "workgroup"): GemmTile[] =>
  stagingTiles(staging).filter((t) => tileProblem(t, limits) === undefined);

/** Workgroups a product over `count` x rows x cols gets with a tile. */
export const tileGroups = (t: GemmTile, count: number, rows: number, cols: number): number => count * Math.ceil(rows / tileRows(t)) * Math.ceil(cols / tileCols(t));

/**
 * Workgroups a product read from storage gets at least where a smaller tile gives them:
 * a software adapter runs workgroups on the CPU's cores (a thread each), and a few
 * workgroups a core keep them busy while larger tiles do more work per load.
 */
export const SOFTWARE_MIN_WORKGROUPS = 8;

/**
 * The untuned choice: the largest tile that still gives the GPU at least 64 workgroups
 * (enough to fill a mid-size GPU's cores several times over); the smallest fitting tile
 * when none does. Larger tiles reuse each loaded element more (BM x BN x BK multiply-adds
 * per BK x (BM + BN) loads) but leave cores idle on small products.
 */
export function defaultTile(count: number, rows: number, cols: number, limits: GpuLimits, staging: TileStaging = "workgroup"): GemmTile | Declined {
  const fitting = fittingTiles(limits, staging);
  const candidates = stagingTiles(staging);
  if (fitting.length === 0) return { declined: `webgpu gemm: no tile fits the adapter's limits (${tileProblem(candidates[candidates.length - 1]!, limits)})` };
  const enough = staging === "registers" ? SOFTWARE_MIN_WORKGROUPS : 64;
  return fitting.find((t) => tileGroups(t, count, rows, cols) >= enough) ?? fitting[fitting.length - 1]!;
}

/**
 * An operand's or result's element type as the kernels store it: f32 (a word each); f16
 * and bf16 packed two to a u32 and widened to f32 exactly (f16 with unpack2x16float,
 * which is core WGSL: no `shader-f16` feature needed; bf16 by shifting each half into an
 * f32's upper half); the one-byte floats (f8, f6, f4: four to a word, widened to f32
 * exactly on their bits, narrowFloatWidening; a result rounded on bits, xk_round_<t>); integers of up to 32 bits (a byte, two
 * bytes or a word each, widened by shifts: sign-extended or zero-extended).
 */
export type StorageType = ElementType;

/** What a product sums in: f32 (float results) or i32 (integer results: wrapping multiply-adds). */
export type Accumulator = "f32" | "i32";

/** A product's storage types (operands, then result) and what it sums in. */
export interface ProductStorage {
  readonly types: readonly StorageType[];
  readonly accumulator: Accumulator;
}

const isInteger = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "signed" || ELEMENT_TYPES[t].kind === "unsigned";
/** The result types the kernels round an f32 sum to: f32, the halves and the one-byte floats (wgsl_narrow_float.ts's rounding). */
const isFloatResult = (t: ElementType): boolean => t === "f32" || t === "f16" || t === "bf16" || isByteFloat(t);

/** Why the kernels take no product of these types (operands, then result), or undefined. */
function productTypesProblem(types: readonly (ElementType | undefined)[]): string | undefined {
  if (types.some((t) => t === undefined)) return "operands and result must be arrays";
  const all = types as ElementType[];
  if (all.some((t) => t === "f64" || t === "c128")) return "WGSL has no f64";
  if (all.some((t) => ELEMENT_TYPES[t].kind === "complex")) return "complex products are not compiled to WGSL";
  if (all.some((t) => isInteger(t) && ELEMENT_TYPES[t].bitWidth > 32)) return "WGSL has no 64-bit integers";
  if (all.some((t) => t === "pred")) return "pred products are not compiled to WGSL";
  const result = all.at(-1)!, operands = all.slice(0, -1);
  if (isInteger(result)) {
    return operands.every(isInteger) ? undefined : "an integer result of float operands is not compiled to WGSL";
  }
  if (!isFloatResult(result)) return `a ${result} result is not compiled to WGSL (the kernels round their f32 sum to f32, f16, bf16 or a one-byte float)`;
  for (const t of operands) {
    // A 32-bit integer converted to f32 rounds (and WGSL's conversion leaves the rounding to the implementation).
    if (isInteger(t) && ELEMENT_TYPES[t].bitWidth > 16) return `a ${t} operand of a float result is not compiled to WGSL (its conversion to f32 rounds)`;
  }
  return undefined;
}

/** A product's element types (operands, then result) as the GEMM and convolution kernels store them and what they sum in, or why they take no such product (its host step's reason). */
export function productStorage(types: readonly (ElementType | undefined)[]): ProductStorage | Declined {
  const why = productTypesProblem(types);
  if (why !== undefined) return { declined: `${types.slice(0, -1).join(" x ")} -> ${types.at(-1)} (${why}; it runs on the host)` };
  const all = types as ElementType[];
  return { types: all, accumulator: isInteger(all.at(-1)!) ? "i32" : "f32" };
}

/** How each half type is widened: the WGSL function of a word to its two values (element 2i in x, 2i+1 in y: little-endian), and the helpers it needs. */
const HALF_PAIRS: Record<"f16" | "bf16", { readonly pair: string; readonly vector: string; readonly helpers: string }> = {
  f16: {
    pair: "unpack2x16float",
    vector: "f16x4",
    helpers: "fn f16x4(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }",
  },
  bf16: {
    pair: "bf16x2",
    vector: "bf16x4",
    helpers: [
      "fn bf16x2(w: u32) -> vec2<f32> { return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u)); }",
      "fn bf16x4(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(bf16x2(w.x), bf16x2(w.y)); }",
    ].join("\n"),
  },
};

/**
 * The helper functions operands of these types read through (each once, however many
 * operands share a type) and a one-byte float result is rounded by (its format's
 * functions, wgsl_narrow_float.ts), but those `declared` (an epilogue's declarations)
 * defines already: its values may compute on the same one-byte floats.
 */
export function storageHelpers(types: readonly StorageType[], declared = "", result?: StorageType): string {
  const rounded = result !== undefined && isByteFloat(result) && !declared.includes(`fn xk_round_${result}(`) ? result : undefined;
  const widening = (t: ElementType): string[] => (declared.includes(`fn xk_widen_${t}(`) || t === rounded ? [] : [narrowFloatWidening(t)]);
  const operands = [...new Set(types)].flatMap((t) => (t === "f16" || t === "bf16" ? [HALF_PAIRS[t].helpers] : isByteFloat(t) ? widening(t) : []));
  return [...operands, ...(rounded !== undefined ? [narrowFloatSource(rounded)] : [])].join("\n");
}

/** The value of integer or one-byte float type t from its bits `x` (a u32 expression; bits above t's are ignored) in the accumulator's type. */
function widened(t: ElementType, accumulator: Accumulator, x: string): string {
  if (isByteFloat(t)) return `xk_widen_${t}(${x})`;
  const w = ELEMENT_TYPES[t].bitWidth;
  const signedBits = w === 32 ? `bitcast<i32>(${x})` : ELEMENT_TYPES[t].kind === "signed"
    ? `(bitcast<i32>((${x}) << ${32 - w}u) >> ${32 - w}u)` : `bitcast<i32>((${x}) & 0x${(2 ** w - 1).toString(16)}u)`;
  return accumulator === "i32" ? signedBits : `f32(${signedBits})`;
}

export interface OperandAccess {
  readonly declaration: string;
  /** f32 expression of element `index` (a u32 expression). */
  scalar(index: string): string;
  /** vec4<f32> of elements index .. index+3 (index a multiple of 4); only when declared with vectors. */
  vector(index: string): string;
  /** Bytes for `elements` elements as declared. */
  byteSize(elements: number): number;
}

/**
 * Where a kernel's operands and result live:
 * - "bindings": each in a storage binding of its own (0 lhs, 1 rhs, 2 out), as a caller
 *   running a kernel alone binds them;
 * - "device": all in the WebGPU backend's one device memory (binding 0, `mem`, u32
 *   words) at byte offsets the backend writes in its argument buffer (binding 1,
 *   `args`: lhs, rhs, out), as its loop kernels read theirs. A dispatch may not bind one
 *   buffer both read-only and writable (WebGPU's usage scopes), nor two writable ranges
 *   of it that overlap (dot(x, x)), so the backend cannot bind its arrays as ranges.
 */
export type KernelMemory = "bindings" | "device";

/**
 * The device memory's declarations (memory "device"); every operand's access reads
 * through them. `atomic`: its words are atomic (a kernel storing elements narrower than
 * a word one by one, which neighbouring invocations share words of: wgsl_kernel.ts's
 * loop kernels do the same), every access an atomic load or store.
 */
export const deviceMemoryDeclarations = (atomic: boolean): string => [
  `@group(0) @binding(0) var<storage, read_write> mem: array<${atomic ? "atomic<u32>" : "u32"}>;`,
  "@group(0) @binding(1) var<storage, read> args: array<u32>;",
].join("\n");

/** The reference to word w (a u32 expression) of the array at argument slot `slot` in the device memory. */
const wordRef = (slot: number, w: string): string => `mem[(args[${slot}u] >> 2u) + ${w}]`;

/** Word w of the array at argument slot `slot` in the device memory. */
const memoryWord = (slot: number, w: string, atomic: boolean): string => (atomic ? `atomicLoad(&${wordRef(slot, w)})` : wordRef(slot, w));

/** Reads and writes of words of the arrays in the device memory, as it is declared (atomic or not: deviceMemoryDeclarations). */
export interface MemoryWords {
  /** Word w (a u32 expression) of the array at argument slot `slot`. */
  load(slot: number, w: string): string;
  /** A statement storing u32 `value` there. */
  store(slot: number, w: string, value: string): string;
}

export const memoryWords = (atomic: boolean): MemoryWords => ({
  load: (slot, w) => memoryWord(slot, w, atomic),
  store: (slot, w, value) => (atomic ? `atomicStore(&${wordRef(slot, w)}, ${value});` : `${wordRef(slot, w)} = ${value};`),
});

/**
 * An operand of integers or one-byte floats: element i is the (bytes)-wide field of its
 * word, widened to the accumulator's type (widened); a vector of four reads the four
 * elements (for one-byte elements one word, four fields).
 */
function packedOperandAccess(name: string, slot: number, type: StorageType, vectors: boolean, memory: KernelMemory, accumulator: Accumulator, atomic: boolean): OperandAccess {
  const bytes = storageBytes(type);
  const word = memory === "device" ? (w: string) => memoryWord(slot, w, atomic) : (w: string) => `${name}[${w}]`;
  const perWord = 4 / bytes;
  const field = bytes === 4 ? word("i") : `(${word(`(i >> ${Math.log2(perWord)}u)`)} >> ((i & ${perWord - 1}u) * ${8 * bytes}u))`;
  const vec = `vec4<${accumulator}>`;
  const lines = [
    memory === "bindings" ? `@group(0) @binding(${slot}) var<storage, read> ${name}: array<u32>;` : "",
    `fn ${name}At(i: u32) -> ${accumulator} { return ${widened(type, accumulator, field)}; }`,
  ];
  if (vectors) {
    lines.push(bytes === 1
      ? `fn ${name}At4(i: u32) -> ${vec} { let w = ${word("(i >> 2u)")}; return ${vec}(${[0, 8, 16, 24].map((b) => widened(type, accumulator, `(w >> ${b}u)`)).join(", ")}); }`
      : `fn ${name}At4(i: u32) -> ${vec} { return ${vec}(${[0, 1, 2, 3].map((j) => `${name}At(i + ${j}u)`).join(", ")}); }`);
  }
  return {
    declaration: lines.filter((x) => x !== "").join("\n"),
    scalar: (i) => `${name}At(${i})`,
    vector: (i) => (vectors ? `${name}At4(${i})` : (() => { throw new Error("operand declared without vectors"); })()),
    byteSize: (e) => Math.max(4, Math.ceil((e * bytes) / 4) * 4),
  };
}

/**
 * How operand `name` (argument slot or binding `slot`) is read, in the accumulator's
 * type: f32 words, halves packed two to a word (their helpers from storageHelpers),
 * integers and one-byte floats by bytes of words (packedOperandAccess). `atomic`: the
 * device memory is declared atomic (a result stored by bytes: deviceMemoryDeclarations).
 */
export function operandAccess(name: string, slot: number, type: StorageType, vectors: boolean, memory: KernelMemory = "bindings", accumulator: Accumulator = "f32", atomic = false): OperandAccess {
  if (type !== "f32" && type !== "f16" && type !== "bf16") return packedOperandAccess(name, slot, type, vectors, memory, accumulator, atomic);
  if (memory === "device") return deviceOperandAccess(name, slot, type, vectors, atomic);
  const head = `@group(0) @binding(${slot}) var<storage, read> ${name}`;
  if (type === "f32") {
    return vectors
      ? { declaration: `${head}: array<vec4<f32>>;`, scalar: (i) => `${name}[(${i}) >> 2u][(${i}) & 3u]`, vector: (i) => `${name}[(${i}) >> 2u]`, byteSize: (e) => Math.max(16, Math.ceil(e / 4) * 16) }
      : { declaration: `${head}: array<f32>;`, scalar: (i) => `${name}[${i}]`, vector: () => { throw new Error("operand declared without vectors"); }, byteSize: (e) => Math.max(4, 4 * e) };
  }
  const { pair, vector } = HALF_PAIRS[type];
  if (vectors) {
    return {
      declaration: `${head}: array<vec2<u32>>;`,
      scalar: (i) => `${pair}(${name}[(${i}) >> 2u][((${i}) >> 1u) & 1u])[(${i}) & 1u]`,
      vector: (i) => `${vector}(${name}[(${i}) >> 2u])`,
      byteSize: (e) => Math.max(8, Math.ceil(e / 4) * 8),
    };
  }
  return {
    declaration: `${head}: array<u32>;`,
    scalar: (i) => `${pair}(${name}[(${i}) >> 1u])[(${i}) & 1u]`,
    vector: () => { throw new Error("operand declared without vectors"); },
    byteSize: (e) => Math.max(4, Math.ceil(e / 2) * 4),
  };
}

/**
 * An operand in the device memory: functions reading element i from the word at its
 * offset (args[slot], a byte offset aligned to 64), a vector as four words (or two
 * pairs of halves): the memory is one array of words for every kernel of the backend.
 */
function deviceOperandAccess(name: string, slot: number, type: "f32" | "f16" | "bf16", vectors: boolean, atomic: boolean): OperandAccess {
  const word = (w: string): string => memoryWord(slot, w, atomic);
  const f32 = type === "f32";
  const half = type === "f32" ? undefined : HALF_PAIRS[type];
  const declaration = [
    half === undefined ? `fn ${name}At(i: u32) -> f32 { return bitcast<f32>(${word("i")}); }`
      : `fn ${name}At(i: u32) -> f32 { return ${half.pair}(${word("(i >> 1u)")})[i & 1u]; }`,
    vectors && half === undefined ? `fn ${name}At4(i: u32) -> vec4<f32> { return vec4<f32>(${[0, 1, 2, 3].map((j) => `bitcast<f32>(${word(`i + ${j}u`)})`).join(", ")}); }` : "",
    vectors && half !== undefined ? `fn ${name}At4(i: u32) -> vec4<f32> { let w = i >> 1u; return ${half.vector}(vec2<u32>(${word("w")}, ${word("w + 1u")})); }` : "",
  ].filter((x) => x !== "").join("\n");
  return {
    declaration,
    scalar: (i) => `${name}At(${i})`,
    vector: (i) => (vectors ? `${name}At4(${i})` : (() => { throw new Error("operand declared without vectors"); })()),
    byteSize: (e) => (f32 ? Math.max(4, 4 * e) : Math.max(4, Math.ceil(e / 2) * 4)),
  };
}

/** How a kernel stores its result: element by element, by vec4s, or by pairs (a 2-byte type's word). */
export interface ResultAccess {
  readonly declaration: string;
  /** Statements storing accumulator `value` (f32 or i32) at element `index`, as the result's type (f32 bindings, or memory "device"). */
  store(index: string, value: string): string;
  /** Statements storing vec4 `value` at elements index .. index+3 (index a multiple of 4); only with vectors. */
  storeVector(index: string, value: string): string;
  /** Statements storing vec2 `value` at elements index, index+1 (index even: one word of a 2-byte result). */
  storePair(index: string, value: string): string;
  /** Bytes for `elements` elements as declared. */
  byteSize(elements: number): number;
}

/**
 * Two f32 values rounded to a half (to nearest even, on bits: wgsl_values.ts; a NaN the
 * positive quiet NaN, as the interpreter's conversion of a result gives it) and packed
 * in a word, as xk_pack(v). f16: not pack2x16float, as WGSL leaves its rounding,
 * subnormals and out-of-range values to the implementation, and SwiftShader's gives NaN
 * for infinity and for values past 65520 and rounds some subnormals the other way.
 */
const HALF_PACKING: Record<"f16" | "bf16", string> = {
  f16: `${F16_ROUNDING}
fn xk_pack(v: vec2<f32>) -> u32 { return xk_f16_bits(v.x, false) | (xk_f16_bits(v.y, false) << 16u); }`,
  bf16: `${BF16_ROUNDING}
fn xk_pack(v: vec2<f32>) -> u32 { return xk_bf16_bits(v.x, false) | (xk_bf16_bits(v.y, false) << 16u); }`,
};

/**
 * The product's value `acc` (its f32 or i32 sum) as the loop kernels hold a value of
 * result type t (wgsl_values.ts): f32 itself, a half's bits rounded once (to nearest
 * even, a NaN the positive quiet NaN), an integer wrapped to t's width (in i32 or u32).
 */
export function productValue(t: StorageType, acc: string): string {
  if (t === "f32") return acc;
  if (t === "f16" || t === "bf16") return `xk_${t}_bits(${acc}, false)`;
  if (isByteFloat(t)) return `xk_round_${t}(${acc}, false)`;
  return ELEMENT_TYPES[t].kind === "signed" ? wrap(t, acc) : wrap(t, `bitcast<u32>(${acc})`);
}

/**
 * The result's access: binding 2 (`out`), or the device memory at args[slot] (see
 * KernelMemory). f32 and 32-bit integers a word an element. A narrower result (a half,
 * an 8- or 16-bit integer) by vectors or pairs where it can: a word holds two or four
 * elements, which one invocation writes together; else (memory "device" only) element
 * by element through the loop kernels' byte stores (storeAs), which need the memory
 * atomic (`atomic`), other invocations owning the word's other bytes.
 */
export function resultAccess(type: StorageType, vectors: boolean, memory: KernelMemory = "bindings", slot = 2, atomic = false): ResultAccess {
  const bytes = storageBytes(type);
  const byteSize = (e: number): number => (bytes < 4 ? Math.max(8, Math.ceil((e * bytes) / 8) * 8) : vectors ? Math.max(16, Math.ceil(e / 4) * 16) : Math.max(4, 4 * e));
  const unsupported = (what: string) => (): string => { throw new Error(`a ${type} result is not stored ${what}`); };
  // Every result but f32 in bindings is an array of words, in either memory.
  const at = (w: string): string => (memory === "device" ? `mem[(args[${slot}u] >> 2u) + ${w}]` : `out[${w}]`);
  if (type === "f32" && memory === "bindings") {
    return {
      declaration: `@group(0) @binding(2) var<storage, read_write> out: array<${vectors ? "vec4<f32>" : "f32"}>;`,
      store: (i, v) => `out[${i}] = ${v};`,
      storeVector: (i, v) => `out[(${i}) >> 2u] = ${v};`,
      storePair: unsupported("by pairs"),
      byteSize,
    };
  }
  if (type === "f32") {
    return {
      declaration: "",
      store: (i, v) => `${at(`(${i})`)} = bitcast<u32>(${v});`,
      storeVector: (i, v) => `{ let w = ${i}; let x = bitcast<vec4<u32>>(${v}); ${[0, 1, 2, 3].map((j) => `${at(`w + ${j}u`)} = x[${j}];`).join(" ")} }`,
      storePair: unsupported("by pairs"),
      byteSize,
    };
  }
  const put = (w: string, v: string): string => (atomic ? `atomicStore(&${at(w)}, ${v});` : `${at(w)} = ${v};`);
  const half = type === "f16" || type === "bf16";
  // A lane's bits in its field of a word.
  const field = (v: string, lane: number): string => {
    const bits = half ? v : isByteFloat(type) ? productValue(type, v) : bytes === 4 ? `bitcast<u32>(${v})` : `(bitcast<u32>(${v}) & 0x${(2 ** (8 * bytes) - 1).toString(16)}u)`;
    return lane === 0 ? bits : `(${bits} << ${8 * bytes * lane}u)`;
  };
  const pack = (x: string, lanes: readonly number[]): string => (half ? `xk_pack(${x}.${lanes.map((j) => "xyzw"[j]).join("")})` : lanes.map((j, n) => field(`${x}[${j}]`, n)).join(" | "));
  const perWord = 4 / bytes;
  const storeVector = (i: string, v: string): string => {
    const words = [0, 1, 2, 3].slice(0, bytes).map((w) => put(`w + ${w}u`, pack("x", [0, 1, 2, 3].slice(w * perWord, (w + 1) * perWord))));
    return `{ let w = (${i}) >> ${Math.log2(perWord)}u; let x = ${v}; ${words.join(" ")} }`;
  };
  const storePair = bytes !== 2 ? unsupported("by pairs") : (i: string, v: string) => `{ let x = ${v}; ${put(`((${i}) >> 1u)`, pack("x", [0, 1]))} }`;
  // A word an element as it is; a narrower element through the loop kernels' byte stores.
  const byElement = memory === "device" && atomic && bytes < 4;
  const store = bytes === 4 ? (i: string, v: string) => put(`(${i})`, `bitcast<u32>(${v})`)
    : !byElement ? unsupported("element by element (memory \"device\" with atomic words only)")
    : (i: string, v: string) => storeAs(type, `(i32(args[${slot}u]) + i32(${i}) * ${bytes})`, productValue(type, v));
  return {
    declaration: [
      memory === "bindings" ? "@group(0) @binding(2) var<storage, read_write> out: array<u32>;" : "",
      half ? HALF_PACKING[type] : "",
      byElement ? memoryHelpers(atomic) : "",
    ].filter((x) => x !== "").join("\n"),
    store, storeVector, storePair, byteSize,
  };
}

/** One operand of the tiled product as the tile loads see it. */
export interface TileOperand {
  /** The element at (outer, k) of product z (A: outer = row; B: outer = col), both in range, in the accumulator's type. */
  scalar(outer: string, k: string, z: string): string;
  /** Which index runs along memory (consecutive invocations load consecutive elements). */
  readonly contiguous: "k" | "outer";
  /** vec4 of 4 elements consecutive along `contiguous`, the first index a multiple of 4 (undefined: scalar loads only). */
  readonly vector?: (outer: string, k: string, z: string) => string;
}

/** A tiled product to render: sizes, where A and B come from, and how C is stored. */
export interface TiledProduct {
  readonly count: number;
  readonly rows: number;
  readonly cols: number;
  readonly depth: number;
  /** Module-scope WGSL: the bindings and any functions the expressions call. */
  readonly declarations: string;
  /** What the product sums in (default f32); the operands' expressions and the stores' values are of its type. */
  readonly accumulator?: Accumulator;
  readonly a: TileOperand;
  readonly b: TileOperand;
  /** Statements storing `value` (the accumulator's type) at (row, col) of product z; row and col in range. */
  store(value: string, row: string, col: string, z: string): string;
  /** Statements storing a vec4 at columns col .. col+3, all in range (only when cols % 4 == 0). */
  readonly storeVector?: (value: string, row: string, col: string, z: string) => string;
  /**
   * Statements storing a vec2 at columns col, col+1, col even (a half result's word),
   * where storeVector is not used. col+1 may be past cols only where C has one row: its
   * value (0: the tiles are zero past the edges) lands in the word's upper half, past
   * C's last element (a packed half's buffer is whole words).
   */
  readonly storePair?: (value: string, row: string, col: string, z: string) => string;
  /** Which tile each workgroup computes, where not the plain grid over (count, rows, cols): a grouped GEMM's (TileSchedule). */
  readonly schedule?: TileSchedule;
}

/**
 * A caller's mapping of workgroups to tiles (a ragged dot's groups: ragged_dot_wgsl.ts),
 * decided when the kernel runs. `prologue`: statements every invocation runs first, given
 * `group` (the workgroup's index, u32) and `li` (its local index), that define the u32
 * values `z` (the product the operands' expressions are given), `row0` and `col0` (the
 * tile's first row and column), `rowEnd` (the tile's rows below it are loaded and
 * stored; the rest belong to another group or to none), and `kBegin`, `kEnd` (the range
 * of k summed; elements outside it load as zeros). All must be uniform over the
 * workgroup (from workgroupUniformLoad: the k loop's barriers depend on them).
 */
export interface TileSchedule {
  readonly workgroups: number;
  /** Module-scope WGSL the prologue uses (its workgroup memory). */
  readonly declarations: string;
  readonly prologue: string;
}

const u = (x: number): string => `${x}u`;

/** Spreads `groups` workgroups over x and y within maxComputeWorkgroupsPerDimension. */
export function spreadDispatch(groups: number, limits: GpuLimits): [number, number, number] | Declined {
  if (groups === 0) return [0, 1, 1];
  const max = limits.maxComputeWorkgroupsPerDimension;
  const y = Math.ceil(groups / max);
  if (y > max) return { declined: `webgpu gemm: ${groups} workgroups exceed maxComputeWorkgroupsPerDimension² (${max}²)` };
  return [Math.min(groups, max), y, 1];
}

/** WGSL statements loading one operand's BK x outer slice into workgroup memory. */
function tileLoad(
  op: TileOperand, which: "A" | "B", outerTile: number, depth: number, threads: number,
  outer0: string, outerExtent: string, k: { readonly low?: string; readonly end: string }, vectorOk: boolean, arith: Arithmetic,
): string {
  // Workgroup layout: tileA[k * BM + row], tileB[k * BN + col], both scalars: no store ever
  // writes one component of a vector (some WGSL translations turn that into a
  // read-modify-write of the whole vector, a race between invocations).
  const put = (kIndex: string, outerIndex: string, value: string): string => `tile${which}[(${kIndex}) * ${u(outerTile)} + ${outerIndex}] = ${value};`;
  const vectorAlong = vectorOk && op.vector !== undefined ? op.contiguous : undefined;
  const width = vectorAlong === undefined ? 1 : 4;
  const loads = (outerTile * depth) / width;
  // The index `i` runs fastest along the operand's contiguous dimension, so neighbouring invocations read neighbouring memory.
  const fastExtent = (op.contiguous === "k" ? depth : outerTile) / width;
  const fast = `(i % ${u(fastExtent)})`;
  const slow = `(i / ${u(fastExtent)})`;
  const [kLocal, outerLocal] = op.contiguous === "k" ? [width === 4 ? `${fast} * 4u` : fast, slow] : [slow, width === 4 ? `${fast} * 4u` : fast];
  const body: string[] = [];
  body.push(`let kl = ${kLocal}; let ol = ${outerLocal};`);
  body.push(`let gk = k0 + kl; let go = ${outer0} + ol;`);
  const inRange = `${k.low !== undefined ? `gk >= ${k.low} && ` : ""}gk < ${k.end} && go < ${outerExtent}`;
  if (width === 1) {
    body.push(`var v = ${arith.zero}; if (${inRange}) { v = ${op.scalar("go", "gk", "z")}; }`);
    body.push(put("kl", "ol", "v"));
  } else {
    body.push(`var v = ${arith.vector}(${arith.zero}); if (${inRange}) { v = ${op.vector!("go", "gk", "z")}; }`);
    for (let j = 0; j < 4; j++) {
      body.push(vectorAlong === "k" ? put(`kl + ${u(j)}`, "ol", `v[${j}]`) : put("kl", `ol + ${u(j)}`, `v[${j}]`));
    }
  }
  return `    for (var i = li; i < ${u(loads)}; i = i + ${u(threads)}) {\n      ${body.join("\n      ")}\n    }`;
}

/** How the product's sums are written in WGSL for its accumulator. */
interface Arithmetic {
  readonly scalar: Accumulator;
  readonly vector: string;
  readonly zero: string;
  /** acc + a * b, one step (f32: fused; i32: wrapping). */
  madd(a: string, b: string, acc: string): string;
}

const ARITHMETIC: Record<Accumulator, Arithmetic> = {
  f32: { scalar: "f32", vector: "vec4<f32>", zero: "0.0", madd: (a, b, acc) => `fma(${a}, ${b}, ${acc})` },
  i32: { scalar: "i32", vector: "vec4<i32>", zero: "0i", madd: (a, b, acc) => `${acc} + ${a} * ${b}` },
};

/**
 * The statement that turns an f32 accumulator (`type` f32 or vec4<f32>) holding -0 into +0,
 * on bits. A sum of products begun at +0 is never -0 (x + -x and +0 + -0 are +0 when
 * rounding to nearest), and the interpreter's never is; but a shader compiler may fold the
 * first step, fma(a, b, 0), into a·b, which is -0 where a·b is (Mesa's NIR does, once it
 * has unrolled a short loop over k: a column of an f8 product came out -0 on lavapipe).
 */
export function positiveZeroStatement(acc: string, type: "f32" | "vec4<f32>"): string {
  return type === "f32"
    ? `${acc} = select(${acc}, 0.0, bitcast<u32>(${acc}) == 0x80000000u);`
    : `${acc} = select(${acc}, vec4<f32>(0.0), bitcast<vec4<u32>>(${acc}) == vec4<u32>(0x80000000u));`;
}

/** The k loop of a tile staged in workgroup memory: each BK-deep slice of A and B loaded by the workgroup, then multiplied from there. */
function stagedLoop(p: TiledProduct, tile: GemmTile, arith: Arithmetic, rowEnd: string, k: { readonly low?: string; readonly end: string }, vectorA: boolean, vectorB: boolean): string[] {
  const BM = tileRows(tile), BN = tileCols(tile), BK = tile.depth;
  const { rowsPerThread: RM, vec4sPerThread: NV } = tile;
  const threads = tile.threadsX * tile.threadsY;
  const acc = (i: number, v: number): string => `acc_${i}_${v}`;
  const lines: string[] = [];
  lines.push(`  for (var k0 = ${p.schedule !== undefined ? `kBegin / ${u(BK)} * ${u(BK)}` : "0u"}; k0 < ${k.end}; k0 = k0 + ${u(BK)}) {`);
  lines.push(tileLoad(p.a, "A", BM, BK, threads, "row0", rowEnd, k, vectorA, arith));
  lines.push(tileLoad(p.b, "B", BN, BK, threads, "col0", u(p.cols), k, vectorB, arith));
  lines.push("    workgroupBarrier();");
  lines.push(`    for (var kk = 0u; kk < ${u(BK)}; kk = kk + 1u) {`);
  for (let v = 0; v < NV; v++) {
    lines.push(`      let bAt_${v} = kk * ${u(BN)} + (lid.x * ${u(NV)} + ${u(v)}) * 4u;`);
    lines.push(`      let b_${v} = ${arith.vector}(tileB[bAt_${v}], tileB[bAt_${v} + 1u], tileB[bAt_${v} + 2u], tileB[bAt_${v} + 3u]);`);
  }
  for (let i = 0; i < RM; i++) {
    lines.push(`      let a_${i} = ${arith.vector}(tileA[kk * ${u(BM)} + lid.y * ${u(RM)} + ${u(i)}]);`);
    for (let v = 0; v < NV; v++) lines.push(`      ${acc(i, v)} = ${arith.madd(`a_${i}`, `b_${v}`, acc(i, v))};`);
  }
  lines.push("    }");
  lines.push("    workgroupBarrier();");
  lines.push("  }");
  return lines;
}

/**
 * The k loop of a tile read from storage (staging "registers"): each invocation loads
 * the elements of A and B its block needs straight from the operands, `depth` steps of
 * k a turn where the product's depth is a multiple of it (one otherwise), vec4s along
 * an operand's contiguous dimension where allowed. No workgroup memory and no barrier:
 * on a software adapter those cost more than the loads repeated between invocations
 * (docs/backends.md). Rows and columns past the edges read the last row or column (in
 * range: their sums are never stored), so the loads need no test; each element of C is
 * summed in order of k with the same multiply-adds as the staged loop.
 */
function registerLoop(p: TiledProduct, tile: GemmTile, arith: Arithmetic, vectorA: boolean, vectorB: boolean): string[] {
  const { rowsPerThread: RM, vec4sPerThread: NV } = tile;
  const steps = p.depth % tile.depth === 0 ? tile.depth : 1;
  const acc = (i: number, v: number): string => `acc_${i}_${v}`;
  const lines: string[] = [];
  const lastRow = u(Math.max(p.rows - 1, 0)), lastCol = u(Math.max(p.cols - 1, 0));
  // A vec4 along the outer dimension covers 4 rows (columns) from a multiple of 4: all in range or all past the edge, the extent being a multiple of 4.
  const aOuterVectors = vectorA && p.a.vector !== undefined && p.a.contiguous === "outer" && RM % 4 === 0;
  const aKVectors = vectorA && p.a.vector !== undefined && p.a.contiguous === "k" && steps % 4 === 0;
  const bOuterVectors = vectorB && p.b.vector !== undefined && p.b.contiguous === "outer";
  const bKVectors = vectorB && p.b.vector !== undefined && p.b.contiguous === "k" && steps % 4 === 0;
  lines.push(`  let rowBase = row0 + lid.y * ${u(RM)};`);
  lines.push(`  let colBase = col0 + lid.x * ${u(4 * NV)};`);
  if (aOuterVectors) for (let q = 0; q < RM / 4; q++) lines.push(`  let ar4_${q} = min(rowBase + ${u(4 * q)}, ${u(Math.max(p.rows - 4, 0))});`);
  else for (let i = 0; i < RM; i++) lines.push(`  let ar_${i} = min(rowBase + ${u(i)}, ${lastRow});`);
  for (let v = 0; v < NV; v++) {
    if (bOuterVectors) lines.push(`  let bc4_${v} = min(colBase + ${u(4 * v)}, ${u(Math.max(p.cols - 4, 0))});`);
    else for (let j = 0; j < 4; j++) lines.push(`  let bc_${v}_${j} = min(colBase + ${u(4 * v + j)}, ${lastCol});`);
  }
  lines.push(`  for (var k0 = 0u; k0 < ${u(p.depth)}; k0 = k0 + ${u(steps)}) {`);
  const kAt = (s: number): string => (s === 0 ? "k0" : `k0 + ${u(s)}`);
  // A's value of row i at step s (a scalar of the accumulator's type).
  const aValue: (i: number, s: number) => string = aOuterVectors ? (i, s) => `a4_${s}_${Math.floor(i / 4)}[${i % 4}]`
    : aKVectors ? (i, s) => `ak_${i}_${Math.floor(s / 4)}[${s % 4}]`
    : (i, s) => `a_${i}_${s}`;
  for (let s = 0; s < steps; s++) {
    if (aOuterVectors) for (let q = 0; q < RM / 4; q++) lines.push(`    let a4_${s}_${q} = ${p.a.vector!(`ar4_${q}`, kAt(s), "z")};`);
    else if (aKVectors) { if (s % 4 === 0) for (let i = 0; i < RM; i++) lines.push(`    let ak_${i}_${s / 4} = ${p.a.vector!(`ar_${i}`, kAt(s), "z")};`); }
    else for (let i = 0; i < RM; i++) lines.push(`    let a_${i}_${s} = ${p.a.scalar(`ar_${i}`, kAt(s), "z")};`);
  }
  for (let s = 0; s < steps; s++) {
    for (let v = 0; v < NV; v++) {
      if (bOuterVectors) lines.push(`    let b_${v}_${s} = ${p.b.vector!(`bc4_${v}`, kAt(s), "z")};`);
      else if (bKVectors) {
        if (s % 4 === 0) for (let j = 0; j < 4; j++) lines.push(`    let bk_${v}_${j}_${s / 4} = ${p.b.vector!(`bc_${v}_${j}`, kAt(s), "z")};`);
        lines.push(`    let b_${v}_${s} = ${arith.vector}(${[0, 1, 2, 3].map((j) => `bk_${v}_${j}_${Math.floor(s / 4)}[${s % 4}]`).join(", ")});`);
      } else lines.push(`    let b_${v}_${s} = ${arith.vector}(${[0, 1, 2, 3].map((j) => p.b.scalar(`bc_${v}_${j}`, kAt(s), "z")).join(", ")});`);
    }
  }
  for (let s = 0; s < steps; s++) {
    for (let i = 0; i < RM; i++) {
      for (let v = 0; v < NV; v++) lines.push(`    ${acc(i, v)} = ${arith.madd(`${arith.vector}(${aValue(i, s)})`, `b_${v}_${s}`, acc(i, v))};`);
    }
  }
  lines.push("  }");
  return lines;
}

/**
 * The WGSL of a tiled product, and its dispatch. `vectorA` / `vectorB`: whether the
 * operand's vector loads may be used (the caller has checked that its contiguous
 * extent is a multiple of 4, so that a vec4 starting in range lies wholly in range).
 */
export function renderTiledProduct(p: TiledProduct, tile: GemmTile, limits: GpuLimits, vectorA: boolean, vectorB: boolean): { code: string; dispatch: readonly [number, number, number] } | Declined {
  const problem = tileProblem(tile, limits);
  if (problem !== undefined) return { declined: `webgpu gemm: tile ${tileName(tile)}: ${problem}` };
  const BM = tileRows(tile), BN = tileCols(tile), BK = tile.depth;
  const { threadsX: TX, threadsY: TY, rowsPerThread: RM, vec4sPerThread: NV } = tile;
  const tilesM = Math.ceil(p.rows / BM), tilesN = Math.ceil(p.cols / BN);
  const s = p.schedule;
  const groups = s !== undefined ? s.workgroups : p.rows === 0 || p.cols === 0 ? 0 : p.count * tilesM * tilesN;
  const dispatch = spreadDispatch(groups, limits);
  if ("declined" in dispatch) return dispatch;
  const acc = (i: number, v: number): string => `acc_${i}_${v}`;
  const arith = ARITHMETIC[p.accumulator ?? "f32"];
  const staged = tileStaging(tile) === "workgroup";
  if (!staged && s !== undefined) return { declined: `webgpu gemm: tile ${tileName(tile)}: a grouped product's tiles are staged in workgroup memory` };
  const lines: string[] = [];
  lines.push(p.declarations);
  if (s !== undefined) lines.push(s.declarations);
  if (staged) {
    lines.push(`var<workgroup> tileA: array<${arith.scalar}, ${BK * BM}>;`);
    lines.push(`var<workgroup> tileB: array<${arith.scalar}, ${BK * BN}>;`);
  }
  lines.push("");
  lines.push(`@compute @workgroup_size(${TX}, ${TY}, 1)`);
  lines.push("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {");
  // The workgroup id is uniform, so the early return keeps the barriers below in uniform control flow.
  lines.push(`  let group = wid.x + wid.y * nwg.x;`);
  lines.push(`  if (group >= ${u(groups)}) { return; }`);
  if (s !== undefined) lines.push(s.prologue);
  else {
    lines.push(`  let tileN = group % ${u(tilesN)};`);
    lines.push(`  let tileM = (group / ${u(tilesN)}) % ${u(tilesM)};`);
    lines.push(`  let z = group / ${u(tilesN * tilesM)};`);
    lines.push(`  let row0 = tileM * ${u(BM)};`);
    lines.push(`  let col0 = tileN * ${u(BN)};`);
  }
  // A schedule's rows end and range of k are its prologue's values; the walk over k starts at a multiple of BK (vec4 loads stay aligned).
  const rowEnd = s !== undefined ? "rowEnd" : u(p.rows);
  const k = s !== undefined ? { low: "kBegin", end: "kEnd" } : { end: u(p.depth) };
  for (let i = 0; i < RM; i++) for (let v = 0; v < NV; v++) lines.push(`  var ${acc(i, v)} = ${arith.vector}(${arith.zero});`);
  appendAll(lines, staged ? stagedLoop(p, tile, arith, rowEnd, k, vectorA, vectorB) : registerLoop(p, tile, arith, vectorA, vectorB));
  if (arith.scalar === "f32") for (let i = 0; i < RM; i++) for (let v = 0; v < NV; v++) lines.push(`  ${positiveZeroStatement(acc(i, v), "vec4<f32>")}`);
  for (let i = 0; i < RM; i++) {
    lines.push(`  let row_${i} = row0 + lid.y * ${u(RM)} + ${u(i)};`);
    lines.push(`  if (row_${i} < ${rowEnd}) {`);
    for (let v = 0; v < NV; v++) {
      const col = `col_${i}_${v}`;
      lines.push(`    let ${col} = col0 + (lid.x * ${u(NV)} + ${u(v)}) * 4u;`);
      if (p.storeVector !== undefined && p.cols % 4 === 0) {
        lines.push(`    if (${col} < ${u(p.cols)}) { ${p.storeVector(acc(i, v), `row_${i}`, col, "z")} }`);
      } else if (p.storePair !== undefined) {
        for (const j of [0, 2]) {
          lines.push(`    if (${col} + ${u(j)} < ${u(p.cols)}) { ${p.storePair(`vec2<${arith.scalar}>(${acc(i, v)}[${j}], ${acc(i, v)}[${j + 1}])`, `row_${i}`, `${col} + ${u(j)}`, "z")} }`);
        }
      } else {
        for (let j = 0; j < 4; j++) {
          lines.push(`    if (${col} + ${u(j)} < ${u(p.cols)}) { ${p.store(`${acc(i, v)}[${j}]`, `row_${i}`, `${col} + ${u(j)}`, "z")} }`);
        }
      }
    }
    lines.push("  }");
  }
  lines.push("}");
  return { code: lines.join("\n") + "\n", dispatch };
}
