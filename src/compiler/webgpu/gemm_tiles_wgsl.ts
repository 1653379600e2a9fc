// The tiled matrix product in WGSL that the GEMM (gemm_wgsl.ts) and the convolution
// (conv_wgsl.ts) kernels share, and the plain types their results are made of.
//
// C[z][row][col] = sum_k A[z](row, k) * B[z](k, col) over `count` independent products
// (a GEMM's batch, a convolution's feature groups). A workgroup computes one BM x BN
// tile of C: it walks k in steps of BK, each step loading the BM x BK slice of A and
// the BK x BN slice of B into workgroup memory (zeros past the edges), then each
// invocation multiplies its RM x RN block (RN = 4 x vec4sPerThread columns) from there,
// its accumulators in registers as vec4s. Where the operand's contiguous dimension is a
// multiple of 4, a load reads a vec4 at once. How an element of A or B is found (strides,
// a transposition, a convolution's patch gathered on the fly) is the caller's: it gives
// WGSL expressions. Accumulation is in f32, for each element of C in order of k, with
// fused multiply-adds (the order, not the rounding, is fixed: fma may round once or twice
// on a given GPU).

import type { Declined } from "../kernel/declined.js";
import { BF16_ROUNDING, F16_ROUNDING } from "./wgsl_values.js";

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

/** A tile of the tiled product: threadsX x threadsY invocations, each rowsPerThread x (4 x vec4sPerThread) outputs. */
export interface GemmTile {
  readonly threadsX: number;
  readonly threadsY: number;
  readonly rowsPerThread: number;
  readonly vec4sPerThread: number;
  /** Steps of k per load into workgroup memory (a multiple of 4). */
  readonly depth: number;
}

export const tileRows = (t: GemmTile): number => t.threadsY * t.rowsPerThread;
export const tileCols = (t: GemmTile): number => t.threadsX * t.vec4sPerThread * 4;
/** Workgroup memory of a tile: BK x BM floats of A and BK x BN of B (each a plain f32 array). */
export const tileStorageBytes = (t: GemmTile): number => 4 * t.depth * (tileRows(t) + tileCols(t));
export const tileName = (t: GemmTile): string => `${tileRows(t)}x${tileCols(t)}x${t.depth} (${t.threadsX}x${t.threadsY} threads, ${t.rowsPerThread}x${4 * t.vec4sPerThread} each)`;

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

/** The tiles an adapter can run. */
export const fittingTiles = (limits: GpuLimits): GemmTile[] => TILE_CANDIDATES.filter((t) => tileProblem(t, limits) === undefined);

/** Workgroups a product over `count` x rows x cols gets with a tile. */
export const tileGroups = (t: GemmTile, count: number, rows: number, cols: number): number => count * Math.ceil(rows / tileRows(t)) * Math.ceil(cols / tileCols(t));

/**
 * The untuned choice: the largest tile that still gives the GPU at least 64 workgroups
 * (enough to fill a mid-size GPU's cores several times over); the smallest fitting tile
 * when none does. Larger tiles reuse each loaded element more (BM x BN x BK multiply-adds
 * per BK x (BM + BN) loads) but leave cores idle on small products.
 */
export function defaultTile(count: number, rows: number, cols: number, limits: GpuLimits): GemmTile | Declined {
  const fitting = fittingTiles(limits);
  if (fitting.length === 0) return { declined: `webgpu gemm: no tile fits the adapter's limits (${tileProblem(TILE_CANDIDATES[TILE_CANDIDATES.length - 1]!, limits)})` };
  return fitting.find((t) => tileGroups(t, count, rows, cols) >= 64) ?? fitting[fitting.length - 1]!;
}

/**
 * How a kernel reads one operand from its binding: f32 (as array<f32>, or array<vec4<f32>>
 * when it reads vec4s), or a half (f16, bf16) packed two to a u32 (array<u32>,
 * array<vec2<u32>> for vec4s) and widened to f32 exactly: f16 with unpack2x16float,
 * which is core WGSL (no `shader-f16` feature needed), bf16 by shifting each half into
 * an f32's upper half (a bf16 is an f32 with 16 fewer significand bits).
 */
export type StorageType = "f32" | "f16" | "bf16";

const isStorageType = (t: string | undefined): t is StorageType => t === "f32" || t === "f16" || t === "bf16";

/** A product's element types (operands, then result) as the GEMM and convolution kernels store them, or why they take no such product (its host step's reason). */
export function productStorage(types: readonly (string | undefined)[]): readonly StorageType[] | Declined {
  if (types.every(isStorageType)) return types;
  const why = types.some((t) => t === "f64" || t === "c128") ? "WGSL has no f64" : "the kernels take f32, f16 and bf16";
  return { declined: `${types.slice(0, -1).join(" x ")} -> ${types.at(-1)} (${why}; it runs on the host)` };
}

/** How each half type is widened: the WGSL function of a word to its two values (element 2i in x, 2i+1 in y: little-endian), and the helpers it needs. */
const HALF_PAIRS: Record<Exclude<StorageType, "f32">, { readonly pair: string; readonly vector: string; readonly helpers: string }> = {
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

/** The helper functions operands of these types read through (each once, however many operands share a type). */
export function storageHelpers(types: readonly StorageType[]): string {
  return [...new Set(types)].flatMap((t) => (t === "f32" ? [] : [HALF_PAIRS[t].helpers])).join("\n");
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

/** The device memory's declarations (memory "device"); every operand's access reads through them. */
export const DEVICE_MEMORY_DECLARATIONS = [
  "@group(0) @binding(0) var<storage, read_write> mem: array<u32>;",
  "@group(0) @binding(1) var<storage, read> args: array<u32>;",
].join("\n");

/** How operand `name` (argument slot or binding `slot`) is read (f32 words, or halves packed two to a word; their helpers from storageHelpers). */
export function operandAccess(name: string, slot: number, type: StorageType, vectors: boolean, memory: KernelMemory = "bindings"): OperandAccess {
  if (memory === "device") return deviceOperandAccess(name, slot, type, vectors);
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
function deviceOperandAccess(name: string, slot: number, type: StorageType, vectors: boolean): OperandAccess {
  const word = (w: string): string => `mem[(args[${slot}u] >> 2u) + ${w}]`;
  const f32 = type === "f32";
  const half = f32 ? undefined : HALF_PAIRS[type];
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

/** How a kernel stores its result: element by element (f32), or by vec4s (f32, or a half rounded once and packed), or a half by pairs. */
export interface ResultAccess {
  readonly declaration: string;
  /** Statements storing f32 `value` at element `index` (f32 only). */
  store(index: string, value: string): string;
  /** Statements storing vec4<f32> `value` at elements index .. index+3 (index a multiple of 4); only with vectors. */
  storeVector(index: string, value: string): string;
  /** Statements storing vec2<f32> `value` at elements index, index+1 (index even: one word of a half result). */
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
const HALF_PACKING: Record<Exclude<StorageType, "f32">, string> = {
  f16: `${F16_ROUNDING}
fn xk_pack(v: vec2<f32>) -> u32 { return xk_f16_bits(v.x, false) | (xk_f16_bits(v.y, false) << 16u); }`,
  bf16: `${BF16_ROUNDING}
fn xk_pack(v: vec2<f32>) -> u32 { return xk_bf16_bits(v.x, false) | (xk_bf16_bits(v.y, false) << 16u); }`,
};

/**
 * The result's access: binding 2 (`out`), or the device memory at args[slot] (see
 * KernelMemory). A half is stored by vectors or pairs only: a word holds two elements,
 * which one invocation must write together (WGSL has no 2-byte store, and a word
 * written by two invocations would need atomics).
 */
export function resultAccess(type: StorageType, vectors: boolean, memory: KernelMemory = "bindings", slot = 2): ResultAccess {
  const half = type !== "f32";
  const byteSize = (e: number): number => (half ? Math.max(8, Math.ceil(e / 4) * 8) : vectors ? Math.max(16, Math.ceil(e / 4) * 16) : Math.max(4, 4 * e));
  const unsupported = (what: string) => (): string => { throw new Error(`a ${type} result is not stored ${what}`); };
  // A half result is an array of words (each two elements) in either memory.
  const word = memory === "device" ? (w: string): string => `mem[(args[${slot}u] >> 2u) + ${w}]` : (w: string): string => `out[${w}]`;
  if (half) {
    return {
      declaration: [memory === "bindings" ? "@group(0) @binding(2) var<storage, read_write> out: array<u32>;" : "", HALF_PACKING[type]].filter((x) => x !== "").join("\n"),
      store: unsupported("element by element"),
      storeVector: (i, v) => `{ let w = (${i}) >> 1u; let x = ${v}; ${word("w")} = xk_pack(x.xy); ${word("w + 1u")} = xk_pack(x.zw); }`,
      storePair: (i, v) => `${word(`((${i}) >> 1u)`)} = xk_pack(${v});`,
      byteSize,
    };
  }
  if (memory === "device") {
    return {
      declaration: "",
      store: (i, v) => `${word(`(${i})`)} = bitcast<u32>(${v});`,
      storeVector: (i, v) => `{ let w = ${i}; let x = bitcast<vec4<u32>>(${v}); ${[0, 1, 2, 3].map((j) => `${word(`w + ${j}u`)} = x[${j}];`).join(" ")} }`,
      storePair: unsupported("by pairs"),
      byteSize,
    };
  }
  return {
    declaration: `@group(0) @binding(2) var<storage, read_write> out: array<${vectors ? "vec4<f32>" : "f32"}>;`,
    store: (i, v) => `out[${i}] = ${v};`,
    storeVector: (i, v) => `out[(${i}) >> 2u] = ${v};`,
    storePair: unsupported("by pairs"),
    byteSize,
  };
}

/** One operand of the tiled product as the tile loads see it. */
export interface TileOperand {
  /** f32 expression of the element at (outer, k) of product z (A: outer = row; B: outer = col), both in range. */
  scalar(outer: string, k: string, z: string): string;
  /** Which index runs along memory (consecutive invocations load consecutive elements). */
  readonly contiguous: "k" | "outer";
  /** vec4<f32> of 4 elements consecutive along `contiguous`, the first index a multiple of 4 (undefined: scalar loads only). */
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
  readonly a: TileOperand;
  readonly b: TileOperand;
  /** Statements storing f32 `value` at (row, col) of product z; row and col in range. */
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
  outer0: string, outerExtent: number, kExtent: number, vectorOk: boolean,
): string {
  // Workgroup layout: tileA[k * BM + row], tileB[k * BN + col], both f32: no store ever
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
  const inRange = `gk < ${u(kExtent)} && go < ${u(outerExtent)}`;
  if (width === 1) {
    body.push(`var v = 0.0; if (${inRange}) { v = ${op.scalar("go", "gk", "z")}; }`);
    body.push(put("kl", "ol", "v"));
  } else {
    body.push(`var v = vec4<f32>(0.0); if (${inRange}) { v = ${op.vector!("go", "gk", "z")}; }`);
    for (let j = 0; j < 4; j++) {
      body.push(vectorAlong === "k" ? put(`kl + ${u(j)}`, "ol", `v[${j}]`) : put("kl", `ol + ${u(j)}`, `v[${j}]`));
    }
  }
  return `    for (var i = li; i < ${u(loads)}; i = i + ${u(threads)}) {\n      ${body.join("\n      ")}\n    }`;
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
  const threads = TX * TY;
  const tilesM = Math.ceil(p.rows / BM), tilesN = Math.ceil(p.cols / BN);
  const groups = p.rows === 0 || p.cols === 0 ? 0 : p.count * tilesM * tilesN;
  const dispatch = spreadDispatch(groups, limits);
  if ("declined" in dispatch) return dispatch;
  const acc = (i: number, v: number): string => `acc_${i}_${v}`;
  const lines: string[] = [];
  lines.push(p.declarations);
  lines.push(`var<workgroup> tileA: array<f32, ${BK * BM}>;`);
  lines.push(`var<workgroup> tileB: array<f32, ${BK * BN}>;`);
  lines.push("");
  lines.push(`@compute @workgroup_size(${TX}, ${TY}, 1)`);
  lines.push("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {");
  // The workgroup id is uniform, so the early return keeps the barriers below in uniform control flow.
  lines.push(`  let group = wid.x + wid.y * nwg.x;`);
  lines.push(`  if (group >= ${u(groups)}) { return; }`);
  lines.push(`  let tileN = group % ${u(tilesN)};`);
  lines.push(`  let tileM = (group / ${u(tilesN)}) % ${u(tilesM)};`);
  lines.push(`  let z = group / ${u(tilesN * tilesM)};`);
  lines.push(`  let row0 = tileM * ${u(BM)};`);
  lines.push(`  let col0 = tileN * ${u(BN)};`);
  for (let i = 0; i < RM; i++) for (let v = 0; v < NV; v++) lines.push(`  var ${acc(i, v)} = vec4<f32>(0.0);`);
  lines.push(`  for (var k0 = 0u; k0 < ${u(p.depth)}; k0 = k0 + ${u(BK)}) {`);
  lines.push(tileLoad(p.a, "A", BM, BK, threads, "row0", p.rows, p.depth, vectorA));
  lines.push(tileLoad(p.b, "B", BN, BK, threads, "col0", p.cols, p.depth, vectorB));
  lines.push("    workgroupBarrier();");
  lines.push(`    for (var kk = 0u; kk < ${u(BK)}; kk = kk + 1u) {`);
  for (let v = 0; v < NV; v++) {
    lines.push(`      let bAt_${v} = kk * ${u(BN)} + (lid.x * ${u(NV)} + ${u(v)}) * 4u;`);
    lines.push(`      let b_${v} = vec4<f32>(tileB[bAt_${v}], tileB[bAt_${v} + 1u], tileB[bAt_${v} + 2u], tileB[bAt_${v} + 3u]);`);
  }
  for (let i = 0; i < RM; i++) {
    lines.push(`      let a_${i} = vec4<f32>(tileA[kk * ${u(BM)} + lid.y * ${u(RM)} + ${u(i)}]);`);
    for (let v = 0; v < NV; v++) lines.push(`      ${acc(i, v)} = fma(a_${i}, b_${v}, ${acc(i, v)});`);
  }
  lines.push("    }");
  lines.push("    workgroupBarrier();");
  lines.push("  }");
  for (let i = 0; i < RM; i++) {
    lines.push(`  let row_${i} = row0 + lid.y * ${u(RM)} + ${u(i)};`);
    lines.push(`  if (row_${i} < ${u(p.rows)}) {`);
    for (let v = 0; v < NV; v++) {
      const col = `col_${i}_${v}`;
      lines.push(`    let ${col} = col0 + (lid.x * ${u(NV)} + ${u(v)}) * 4u;`);
      if (p.storeVector !== undefined && p.cols % 4 === 0) {
        lines.push(`    if (${col} < ${u(p.cols)}) { ${p.storeVector(acc(i, v), `row_${i}`, col, "z")} }`);
      } else if (p.storePair !== undefined) {
        for (const j of [0, 2]) {
          lines.push(`    if (${col} + ${u(j)} < ${u(p.cols)}) { ${p.storePair(`vec2<f32>(${acc(i, v)}[${j}], ${acc(i, v)}[${j + 1}])`, `row_${i}`, `${col} + ${u(j)}`, "z")} }`);
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
