// GEMM kernels in WGSL: C[b][m][n] = sum_k A[b][m][k] * B[b][k][n] of a GemmSpec
// (kernel/gemm_plan.ts: row-major, A optionally stored [b][k][m], B [b][n][k]; or, with
// options.layout, a StridedGemm's operands read in place and its result stored through its
// strides), as one compute dispatch. Two kernels:
// - the tiled product (gemm_tiles_wgsl.ts): workgroup-memory tiles of A and B (or, with
//   `staging` "registers", a software adapter's, none: each invocation reads its own
//   from storage), a register block per invocation, vec4 loads where a contiguous
//   extent is a multiple of 4; the tile from the adapter's limits (defaultTile) or the
//   tuner (gemm_tune.ts);
// - the skinny kernel (gemm_skinny_wgsl.ts) for m <= SKINNY_MAX_ROWS, and for n = 1 by
//   computing C^T = B^T A^T (the same memory when n = 1).
//
// Element types (gemm_tiles_wgsl.ts productStorage): float operands f32, f16, bf16 or a
// one-byte float (f8...), or integers of up to 16 bits, widened to f32 exactly and
// summed in f32, the result f32, or f16 or bf16 rounded once from the f32 sum, on bits;
// integer operands of an integer result (up to 32 bits each) widened by shifts and
// summed in i32, wrapping, the result wrapped to its width. A result narrower than a
// word is stored by vec4s or pairs of columns where a word's elements are one
// invocation's (n a multiple of 4; a 2-byte type's n even, or one row), else element by
// element through byte stores on an atomic memory (the tiled kernel, memory "device").
// This needs no `shader-f16` feature, so it runs on every adapter; an `array<f16>`
// variant for adapters with the feature is not written (none here has it to test on).
// f64 and 64-bit integers are declined: WGSL has neither. (The spec's elementType is
// f32 for every one of these: the geometry is what the kernels read of it.)
//
// Interface: bindings 0 (`lhs`, A), 1 (`rhs`, B), 2 (`out`, C), in bind group 0, each
// from its operand's first element; an epilogue may declare more (3 and up). The
// backend asks for memory "device" instead: A, B and C in its one memory buffer at the
// offsets of its argument slot (gemm_tiles_wgsl.ts, KernelMemory). All sizes are
// constants in the WGSL: one module per spec.

import { CompileError } from "../../types/errors.js";
import type { Declined } from "../kernel/declined.js";
import { checkGemmSpec, gemmKernelName, gemmLayoutOfSpec, stridedExtent, type GemmSpec, type StridedGemm } from "../kernel/gemm_plan.js";
import type { ArgumentSlots } from "./epilogue_wgsl.js";
import { renderSkinny, SKINNY_MAX_ROWS, skinnyLayout } from "./gemm_skinny_wgsl.js";
import { storageBytes } from "../../types/element_type.js";
import {
  defaultTile, deviceMemoryDeclarations, memoryWords, type MemoryWords, operandAccess, productStorage, productValue, renderTiledProduct, resultAccess, storageHelpers, type GemmTile, type GpuBinding,
  type GpuKernel, type GpuLimits, type KernelChoice, type KernelMemory, type StorageType, type TileOperand, type TileSchedule, type TileStaging,
} from "./gemm_tiles_wgsl.js";

/** What an epilogue's statements are given for one element of C. */
export interface EpilogueSite {
  /** The product's element as the loop kernels hold a value of its type (gemm_tiles_wgsl.ts productValue; WGSL expression). */
  readonly value: string;
  /** Row of C seen as a (batch·m) x n matrix, as kernel/epilogue_plan.ts sees a dot's product (u32 expression). */
  readonly row: string;
  readonly col: string;
  /** The element's index in `out` (row·n + col; u32 expression). */
  readonly index: string;
}

/**
 * An output fusion's epilogue: statements that store the fused result of one element of
 * C (memory "device": in the device memory at the result's slot), in place of the plain
 * store. Its declarations (module scope: more bindings from 3 up, functions) come first.
 */
export interface GpuEpilogue {
  readonly declarations?: string;
  readonly bindings?: readonly GpuBinding[];
  /** Whether its stores are of elements narrower than a word (the kernel then declares the device memory atomic). */
  readonly storesBytes?: boolean;
  store(site: EpilogueSite): string;
}

export interface GemmWgslOptions {
  /** How A is stored (default f32). f16, bf16: packed pairs; integers and one-byte floats by bytes: see the file comment. */
  readonly lhsType?: StorageType;
  /** How B is stored (default f32). */
  readonly rhsType?: StorageType;
  /** How C is stored (default f32). Other types need the tiled kernel; narrower than a word, vectors or pairs (see the file comment) or memory "device". */
  readonly outputType?: StorageType;
  /** Force a kernel (default: "skinny" for m <= 4 or n = 1 with an f32 sum and result, else "tiled"). */
  readonly kind?: "tiled" | "skinny";
  /** The tiled kernel's tile (default: defaultTile of `staging`; the tuner passes its candidates). */
  readonly tile?: GemmTile;
  /** How the default tile stages its operands (default "workgroup"; a software adapter's backend: "registers", codegen.ts productStagingFor). */
  readonly staging?: TileStaging;
  /** Whether vec4 loads may be used where alignment allows (default true; tests turn it off to cover the scalar loads). */
  readonly vectorLoads?: boolean;
  readonly epilogue?: GpuEpilogue;
  /** Where operands and result live (default "bindings"; the backend: "device", see KernelMemory). */
  readonly memory?: KernelMemory;
  /** With memory "device": the argument slots of A, B and C (default 0, 1, 2; an output fusion's follow its parameters). */
  readonly slots?: ArgumentSlots;
  /** A grouped GEMM (a ragged dot: ragged_dot_wgsl.ts): the tiled kernel, its workgroups' tiles from this schedule. */
  readonly grouped?: GroupedGemm;
  /**
   * Where the operands' elements are, read in place (a dot_general whose batch, free or
   * contracting dimensions are not in GEMM form: kernel/gemm_plan.ts stridedGemmOfDot);
   * its batch, m, n and k must be the spec's, whose transposition flags it replaces.
   * Default: the spec's layout (gemmLayoutOfSpec).
   */
  readonly layout?: StridedGemm;
}

/**
 * How a grouped GEMM's workgroups find their tiles and operands (ragged_dot_wgsl.ts). Its
 * schedule's prologue (gemm_tiles_wgsl.ts TileSchedule) also defines `bBase`, the
 * element at which its B matrix starts (a group's, in place of z·k·n), and `cz`, the
 * matrix of C it stores to (in place of z); A is the spec's, at z·m·k.
 */
export interface GroupedGemm {
  /** `words`: how the prologue reads and writes words of the device memory (atomic where the result is stored by bytes). */
  schedule(tile: GemmTile, words: MemoryWords): TileSchedule;
  /** Matrices of C (default: the spec's batch). */
  readonly resultMatrices: number;
  /** Whether its range of k starts anywhere (vec4 loads along k are then not aligned: scalar loads). */
  readonly raggedDepth: boolean;
}

const u = (x: number): string => `${x}u`;

/** Argument slots of a lone GEMM or convolution step (lhs, rhs, out). */
export const DEFAULT_SLOTS: ArgumentSlots = { lhs: 0, rhs: 1, out: 2 };

function declined(spec: GemmSpec, why: string): Declined {
  return { declined: `webgpu ${gemmKernelName(spec)}: ${why}` };
}

/** The kernel a spec gets with these options (its `choice` says which and why), or why none. Malformed specs throw a CompileError. */
export function gemmKernel(spec: GemmSpec, limits: GpuLimits, options: GemmWgslOptions = {}): GpuKernel | Declined {
  const problem = checkGemmSpec(spec);
  if (problem !== undefined) throw new CompileError(`webgpu ${problem}`);
  if (spec.elementType !== "f32") return declined(spec, "WGSL has no f64 (the webgpu backend's GEMMs sum in f32 or i32)");
  const lhsType = options.lhsType ?? "f32", rhsType = options.rhsType ?? "f32";
  const outputType = options.outputType ?? "f32";
  const storage = productStorage([lhsType, rhsType, outputType]);
  if ("declined" in storage) return declined(spec, storage.declined);
  const accumulator = storage.accumulator;
  const { batch, m, n, k } = spec;
  const lhsT = spec.lhsTransposed === true, rhsT = spec.rhsTransposed === true;
  const memory = options.memory ?? "bindings";
  const epilogue = options.epilogue;
  const plain = outputType === "f32" && accumulator === "f32";
  const grouped = options.grouped;
  if (!plain && options.kind === "skinny") return declined(spec, "the skinny kernel sums and stores f32 only");
  if (grouped !== undefined && (options.kind === "skinny" || epilogue !== undefined || memory !== "device")) return declined(spec, "a grouped GEMM is the tiled kernel on the device memory, with no epilogue");
  const kind = options.kind ?? (grouped === undefined && plain && (m <= SKINNY_MAX_ROWS || n === 1) ? "skinny" : "tiled");
  // C's matrices: a grouped GEMM's may be more than its batch (one a group and batch).
  const matrices = grouped?.resultMatrices ?? batch;
  const layout = options.layout ?? gemmLayoutOfSpec(spec);
  if (layout.batch !== batch || layout.m !== m || layout.n !== n || layout.k !== k) {
    throw new CompileError(`webgpu ${gemmKernelName(spec)}: its layout is of ${layout.batch}x${layout.m}x${layout.n}x${layout.k}`);
  }
  if (grouped !== undefined && options.layout !== undefined) return declined(spec, "a grouped GEMM reads its operands in the spec's layout");
  // C stored other than row-major [batch..., m, n] (a permutation of it: StridedGemm's outRow and outCol).
  const permutedOut = layout.outRow !== n || layout.outCol !== 1 || layout.batchAxes.some((a, i) => a.outStride !== m * n * layout.batchAxes.slice(i + 1).reduce((p, x) => p * x.size, 1));
  // A result narrower than a word: by vec4s (n a multiple of 4) or, a 2-byte type, pairs
  // of columns (n even, or one row: else a word would hold two rows' elements, two
  // invocations'); else element by element, through byte stores on an atomic memory.
  const bytes = storageBytes(outputType);
  // (Stored permuted, columns must still be consecutive: outCol 1, every other stride then a multiple of n.)
  const columnsInRow = layout.outCol === 1;
  const outVectors = n % 4 === 0 && epilogue === undefined && (outputType !== "f32" || kind === "tiled") && columnsInRow;
  const outPairs = bytes === 2 && epilogue === undefined && (n % 2 === 0 || matrices * m === 1) && columnsInRow;
  const atomic = epilogue !== undefined ? epilogue.storesBytes === true : bytes < 4 && !outVectors && !outPairs;
  if (atomic && memory !== "device") return declined(spec, `the ${outputType} output would be stored element by element, which needs memory "device" (its words atomic)`);
  // Which of an operand's dimensions (its rows or columns, "outer", or k) lies along memory: the spec's; read in place, the one of stride 1.
  const contiguousOf = (outerStride: number, depthStride: number, specAlong: "k" | "outer"): "k" | "outer" =>
    options.layout === undefined ? specAlong : depthStride !== 1 && outerStride === 1 ? "outer" : "k";
  const aAlong = contiguousOf(layout.lhsOuter, layout.lhsDepth, lhsT ? "outer" : "k");
  const bAlong = contiguousOf(layout.rhsOuter, layout.rhsDepth, rhsT ? "k" : "outer");
  const allowVectors = options.vectorLoads ?? true;
  // Vector loads need the contiguous dimension's stride 1 and its extent a multiple of 4.
  // Then a vec4 from a multiple of 4 starts at a multiple of 4 in memory: every other
  // dimension lies outside that run (the operands are row-major), its stride a multiple of the run's extent.
  const vectorsFit = (side: "lhs" | "rhs", along: "k" | "outer"): boolean => {
    const [outer, outerStride, depthStride] = side === "lhs" ? [m, layout.lhsOuter, layout.lhsDepth] : [n, layout.rhsOuter, layout.rhsDepth];
    const [extent, unit] = along === "k" ? [k, depthStride] : [outer, outerStride];
    return extent % 4 === 0 && unit === 1;
  };
  const lhsVectors = allowVectors && vectorsFit("lhs", aAlong) && !(grouped?.raggedDepth === true && aAlong === "k");
  const rhsVectors = allowVectors && vectorsFit("rhs", bAlong) && !(grouped?.raggedDepth === true && bAlong === "k");
  const slots = options.slots ?? DEFAULT_SLOTS;
  const lhs = operandAccess("lhs", slots.lhs, lhsType, lhsVectors, memory, accumulator, atomic);
  const rhs = operandAccess("rhs", slots.rhs, rhsType, rhsVectors, memory, accumulator, atomic);
  // Element offsets of A(z, row, p) and B(z, p, col): the matrix's start, then the strided
  // index (the dimension along memory last, unscaled in the spec's layout).
  const batchOffset = (side: "lhs" | "rhs" | "out", z: string): string => {
    const axes = layout.batchAxes;
    if (axes.length === 0) return "0u";
    // z's index along each axis, the last fastest (z < batch: the first needs no modulo).
    let inner = 1;
    const terms: string[] = [];
    for (let i = axes.length - 1; i >= 0; i--) {
      const axis = axes[i]!;
      const quotient = inner === 1 ? z : `${z} / ${u(inner)}`;
      const index = i === 0 ? (inner === 1 ? z : `(${quotient})`) : `(${quotient} % ${u(axis.size)})`;
      terms.unshift(`${index} * ${u(side === "lhs" ? axis.lhsStride : side === "rhs" ? axis.rhsStride : axis.outStride)}`);
      inner *= axis.size;
    }
    return terms.join(" + ");
  };
  const within = (along: "k" | "outer", outer: string, outerStride: number, p: string, depthStride: number): string => {
    const scaled = (x: string, stride: number): string => (options.layout !== undefined && stride === 1 ? x : `(${x}) * ${u(stride)}`);
    return along === "k" ? `${scaled(outer, outerStride)} + ${options.layout === undefined ? p : scaled(p, depthStride)}`
      : `${scaled(p, depthStride)} + ${options.layout === undefined ? outer : scaled(outer, outerStride)}`;
  };
  const aAt = (row: string, p: string, z: string): string => `${batchOffset("lhs", z)} + ${within(aAlong, row, layout.lhsOuter, p, layout.lhsDepth)}`;
  const bMatrix = (z: string): string => (grouped !== undefined ? "bBase" : batchOffset("rhs", z));
  const bAt = (p: string, col: string, z: string): string => `${bMatrix(z)} + ${within(bAlong, col, layout.rhsOuter, p, layout.rhsDepth)}`;
  const a: TileOperand = {
    scalar: (row, p, z) => lhs.scalar(aAt(row, p, z)),
    contiguous: aAlong,
    ...(lhsVectors ? { vector: (row: string, p: string, z: string) => lhs.vector(aAt(row, p, z)) } : {}),
  };
  const b: TileOperand = {
    scalar: (col, p, z) => rhs.scalar(bAt(p, col, z)),
    contiguous: bAlong,
    ...(rhsVectors ? { vector: (col: string, p: string, z: string) => rhs.vector(bAt(p, col, z)) } : {}),
  };

  // The output and its store.
  const result = resultAccess(outputType, outVectors, memory, slots.out, atomic);
  const outBytes = result.byteSize(matrices * m * n);
  const site = (value: string, row: string, col: string, z: string): EpilogueSite => {
    const fullRow = `(${grouped !== undefined ? "cz" : z} * ${u(m)} + ${row})`;
    const index = permutedOut ? `(${batchOffset("out", z)} + (${row}) * ${u(layout.outRow)} + (${col}) * ${u(layout.outCol)})` : `(${fullRow} * ${u(n)} + ${col})`;
    return { value, row: fullRow, col, index };
  };
  const store = (value: string, row: string, col: string, z: string): string => {
    const s = site(value, row, col, z);
    return epilogue !== undefined ? epilogue.store({ ...s, value: productValue(outputType, value) }) : result.store(s.index, value);
  };
  const storeVector = !outVectors ? undefined : (value: string, row: string, col: string, z: string) => result.storeVector(site(value, row, col, z).index, value);
  const storePair = !outPairs ? undefined : (value: string, row: string, col: string, z: string) => result.storePair(site(value, row, col, z).index, value);

  const bindings: GpuBinding[] = [
    { binding: 0, name: "lhs", role: "lhs", access: "read", byteSize: lhs.byteSize(options.layout === undefined ? batch * m * k : stridedExtent(layout, "lhs")) },
    { binding: 1, name: "rhs", role: "rhs", access: "read", byteSize: rhs.byteSize(options.layout === undefined ? batch * k * n : stridedExtent(layout, "rhs")) },
    { binding: 2, name: "out", role: "output", access: "read_write", byteSize: outBytes },
  ];
  for (const extra of epilogue?.bindings ?? []) bindings.push(extra);
  for (const bd of bindings) {
    if (bd.byteSize > limits.maxStorageBufferBindingSize) return declined(spec, `binding ${bd.name} (${bd.byteSize} bytes) exceeds maxStorageBufferBindingSize ${limits.maxStorageBufferBindingSize}`);
  }
  // In the device memory an epilogue declares the loop kernels' helpers its stores use (the result's would repeat them).
  const declarations = [memory === "device" ? deviceMemoryDeclarations(atomic) : "", storageHelpers([lhsType, rhsType], epilogue?.declarations, outputType), lhs.declaration, rhs.declaration, epilogue === undefined || memory === "bindings" ? result.declaration : "", epilogue?.declarations ?? ""].filter((s) => s !== "").join("\n");
  const flops = 2 * batch * m * n * k;

  if (kind === "skinny") {
    // n = 1 with more than SKINNY_MAX_ROWS rows: C^T (1 x m) = B^T (1 x k) times A^T (k x m), B^T being B's memory read along k.
    const swapped = m > SKINNY_MAX_ROWS;
    if (swapped && n !== 1) return declined(spec, `the skinny kernel takes m <= ${SKINNY_MAX_ROWS} or n = 1`);
    const product = swapped
      ? {
          count: batch, rows: 1, cols: m, depth: k, declarations,
          aScalar: (_row: string, p: string, z: string) => b.scalar("0u", p, z),
          ...(b.vector !== undefined && b.contiguous === "k" ? { aVector: (_row: string, p: string, z: string) => b.vector!("0u", p, z) } : {}),
          b: { scalar: a.scalar, contiguous: a.contiguous === "k" ? "k" as const : "outer" as const, ...(a.vector !== undefined ? { vector: a.vector } : {}) },
          vectorB: lhsVectors,
          store: (value: string, _row: string, col: string, z: string) => store(value, col, "0u", z),
        }
      : {
          count: batch, rows: m, cols: n, depth: k, declarations,
          aScalar: a.scalar,
          ...(a.vector !== undefined && a.contiguous === "k" ? { aVector: a.vector } : {}),
          b, vectorB: rhsVectors, store,
        };
    const layout = skinnyLayout(product, limits);
    if ("declined" in layout) return declined(spec, layout.declined);
    const rendered = renderSkinny(product, layout, limits);
    if ("declined" in rendered) return declined(spec, rendered.declined);
    const choice: KernelChoice = { kind: "skinny", columnsPerWorkgroup: layout.columnsPerWorkgroup, depthSlices: layout.depthSlices, swapped, vectorLoads: layout.vectorLoads };
    return { code: rendered.code, entryPoint: "main", workgroupSize: [layout.threadsX, layout.threadsY, 1], dispatch: rendered.dispatch, bindings, choice, flops };
  }

  const tile = options.tile ?? defaultTile(batch, m, n, limits, options.staging);
  if ("declined" in tile) return declined(spec, tile.declined);
  const rendered = renderTiledProduct(
    {
      count: batch, rows: m, cols: n, depth: k, declarations, accumulator, a, b, store, ...(storeVector !== undefined ? { storeVector } : {}), ...(storePair !== undefined ? { storePair } : {}),
      ...(grouped !== undefined ? { schedule: grouped.schedule(tile, memoryWords(atomic)) } : {}),
    },
    tile, limits, lhsVectors, rhsVectors,
  );
  if ("declined" in rendered) return declined(spec, rendered.declined);
  const choice: KernelChoice = { kind: "tiled", tile, tileFrom: options.tile !== undefined ? "options" : "limits", vectorLoads: { lhs: lhsVectors, rhs: rhsVectors } };
  return { code: rendered.code, entryPoint: "main", workgroupSize: [tile.threadsX, tile.threadsY, 1], dispatch: rendered.dispatch, bindings, choice, flops };
}
