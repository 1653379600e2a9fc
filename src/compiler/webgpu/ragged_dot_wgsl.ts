// The ragged dot (chlo.ragged_dot, the raggedDot opcode) as one WGSL kernel: the grouped
// GEMM of kernel/ragged_dot_plan.ts (the forms taken, the modes, the units), rendered on
// the tiled WGSL GEMM (gemm_wgsl.ts, gemm_tiles_wgsl.ts), whose tile loads, register
// blocks and stores it keeps; only which tile a workgroup computes changes. The group
// sizes are read on the GPU when the kernel runs, so a ragged dot whose sizes an earlier
// kernel computes (a mixture-of-experts router's counts) reads nothing back.
//
// Workgroups are the plan's units (raggedUnits) with the GPU's BM-row tiles for rows and
// a tile of BN columns for a chunk: (outer index, slot, column tile). Invocation 0 of a
// workgroup walks the group sizes to its tile and hands it to the others through
// workgroup memory (workgroupUniformLoad: the tile's range of k bounds the loop holding
// the barriers, which must be uniform):
// - "nonContracting": slots dealt out in group order, a slot a BM-row tile of group g's
//   rows against g's matrix of B; then tiles of zeros past the last group (their range of
//   k empty); the slots left do nothing (their tile starts at or past m);
// - "contracting": the tile of group g's product over its range of k (the walk over k
//   starts at the multiple of BK below it, loads outside it zero; loads along k are then
//   scalar, since the range's start need not be a multiple of 4): an empty range stores
//   zeros;
// - "batch": a batch past the groups' end sums no k (zeros).
// Each group's range is the sizes so far cut at the ragged dimension's end (64-bit sizes
// as word pairs, wgsl_int64.ts's layout: low word first; a high word set is past any
// dimension).
//
// A negative size (s32, s64) is the interpreter's ExecutionError: invocation 0 of
// workgroup 0 scans the sizes and, at the first negative one, writes [1, index, low
// word, high word] to the program's status word (program.ts GpuProgram.status, its slot
// after the result), unless an earlier kernel of the run wrote it first; the executable
// zeroes it before each run and reads it with the results, raising the interpreter's
// error (executable.ts). The kernel itself computes on regardless (each size read as
// unsigned and cut at the dimension's end: bounded work), its results dropped.
//
// Arguments: lhs, rhs, group sizes, result, status word.

import type { Instruction } from "../../ir/computation.js";
import type { Declined } from "../kernel/declined.js";
import { raggedGemmKernelName, raggedGemmSpecOf, raggedUnits, type RaggedElementRule, type RaggedGemmSpec } from "../kernel/ragged_dot_plan.js";
import { gemmKernel } from "./gemm_wgsl.js";
import { productStorage, tileCols, tileName, tileRows, type GemmTile, type GpuLimits, type MemoryWords } from "./gemm_tiles_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import type { ArrayShape } from "../../types/shape.js";
import type { ElementType } from "../../types/element_type.js";

/** Argument slots: lhs, rhs, group sizes, result, status word. */
const SLOT = { lhs: 0, rhs: 1, sizes: 2, out: 3, status: 4 } as const;

/** The status word's words: the flag, the group's index, the size's low and high words (an s32 size sign-extended). */
export const STATUS_WORDS = 4;

/**
 * The element types the WGSL GEMM stores (gemm_tiles_wgsl.ts productStorage), as the
 * plain dots take them: float operands (f32, the halves, the one-byte floats, integers
 * of up to 16 bits) widened exactly and summed in f32 to a float result rounded once;
 * integer operands of an integer result widened to i32 and summed wrapping, the result
 * cut to its width: the interpreter's sums in the result type, modulo 2^width, whatever
 * the order. The rest is declined with productStorage's reason (WGSL has no f64 nor
 * 64-bit integers; pred; s32 or u32 operands of a float result). The spec's element
 * type is f32 for all of them (its geometry is what the kernel reads of it).
 */
const gpuElementTypes: RaggedElementRule = (l, r, result) => {
  const storage = productStorage([l, r, result]);
  return "declined" in storage ? { declined: `ragged-dot of ${storage.declined}` } : "f32";
};

const u = (x: number): string => `${x}u`;

/**
 * Statements (invocation 0's) setting `next` to the end of group `g`'s range from `start`:
 * start + size, cut at the ragged dimension's end.
 */
function advance(spec: RaggedGemmSpec, words: MemoryWords, g: string): string {
  const r = u(spec.raggedSize);
  if (spec.groupSizeType === "s32" || spec.groupSizeType === "u32") {
    return `start = next; { let s = ${words.load(SLOT.sizes, g)}; next = select(start + s, ${r}, s > ${r} - start); }`;
  }
  return `start = next; { let lo = ${words.load(SLOT.sizes, `2u * ${g}`)}; let hi = ${words.load(SLOT.sizes, `2u * ${g} + 1u`)}; next = select(start + lo, ${r}, hi != 0u || lo > ${r} - start); }`;
}

/** Invocation 0 of workgroup 0: the first negative size to the status word, unless it is set already (s32 and s64 sizes). */
function statusCheck(spec: RaggedGemmSpec, words: MemoryWords): string {
  if (spec.groupSizeType === "u32" || spec.groupSizeType === "u64") return "";
  const wide = spec.groupSizeType === "s64";
  const lo = words.load(SLOT.sizes, wide ? "2u * g" : "g");
  const hi = wide ? words.load(SLOT.sizes, "2u * g + 1u") : "select(0u, 0xffffffffu, (lo >> 31u) != 0u)";
  return [
    `    if (group == 0u && ${words.load(SLOT.status, "0u")} == 0u) {`,
    `      for (var g = 0u; g < ${u(spec.groups)}; g = g + 1u) {`,
    `        let lo = ${lo}; let hi = ${hi};`,
    `        if ((hi >> 31u) != 0u) {`,
    `          ${words.store(SLOT.status, "1u", "g")} ${words.store(SLOT.status, "2u", "lo")} ${words.store(SLOT.status, "3u", "hi")} ${words.store(SLOT.status, "0u", "1u")}`,
    "          break;",
    "        }",
    "      }",
    "    }",
  ].join("\n");
}

/**
 * The prologue of a workgroup (gemm_tiles_wgsl.ts TileSchedule): invocation 0 finds the
 * tile in xk_tile = [z, row0, col0, rowEnd, kBegin, kEnd, bBase, cz], read by all.
 */
function prologue(spec: RaggedGemmSpec, tile: GemmTile, words: MemoryWords, slots: number): string {
  const BM = tileRows(tile), BN = tileCols(tile);
  const { m, n, k, groups, perIndex, batch } = spec;
  const tilesN = Math.ceil(n / BN), tilesM = Math.ceil(m / BM);
  let find: string;
  switch (spec.mode) {
    case "nonContracting":
      find = `
    let tileN = group % ${u(tilesN)}; let slot = (group / ${u(tilesN)}) % ${u(slots)}; let bi = group / ${u(tilesN * slots)};
    var start = 0u; var next = 0u; var first = 0u; var found = false;
    // Tiles of zeros past the last group unless a group's rows hold the slot.
    var t = array<u32, 8>(bi, 0u, tileN * ${u(BN)}, ${u(m)}, 0u, 0u, 0u, bi);
    for (var g = 0u; g < ${u(groups)}; g = g + 1u) {
      ${advance(spec, words, "g")}
      let tiles = ((next - start) * ${u(perIndex)} + ${u(BM - 1)}) / ${u(BM)};
      if (slot < first + tiles) {
        t[1] = start * ${u(perIndex)} + (slot - first) * ${u(BM)}; t[3] = next * ${u(perIndex)}; t[5] = ${u(k)};
        t[6] = bi * ${u(spec.rhsBatchStride)} + g * ${u(spec.rhsGroupStride)};
        found = true;
        break;
      }
      first = first + tiles;
    }
    if (!found) { t[1] = next * ${u(perIndex)} + (slot - first) * ${u(BM)}; }`;
      break;
    case "contracting":
      find = `
    let tileN = group % ${u(tilesN)}; let tileM = (group / ${u(tilesN)}) % ${u(tilesM)}; let o = group / ${u(tilesN * tilesM)};
    let bi = o % ${u(batch)};
    var start = 0u; var next = 0u;
    for (var g = 0u; g <= o / ${u(batch)}; g = g + 1u) { ${advance(spec, words, "g")} }
    var t = array<u32, 8>(bi, tileM * ${u(BM)}, tileN * ${u(BN)}, ${u(m)}, start, next, bi * ${u(k * n)}, o);`;
      break;
    case "batch":
      find = `
    let tileN = group % ${u(tilesN)}; let tileM = (group / ${u(tilesN)}) % ${u(tilesM)}; let bi = group / ${u(tilesN * tilesM)};
    var start = 0u; var next = 0u;
    for (var g = 0u; g < ${u(groups)}; g = g + 1u) { ${advance(spec, words, "g")} }
    var t = array<u32, 8>(bi, tileM * ${u(BM)}, tileN * ${u(BN)}, ${u(m)}, 0u, select(0u, ${u(k)}, bi < next * ${u(perIndex)}), bi * ${u(k * n)}, bi);`;
      break;
  }
  return [
    "  if (li == 0u) {",
    statusCheck(spec, words),
    find,
    "    xk_tile = t;",
    "  }",
    "  let xk_t = workgroupUniformLoad(&xk_tile);",
    "  let z = xk_t[0]; let row0 = xk_t[1]; let col0 = xk_t[2]; let rowEnd = xk_t[3];",
    "  let kBegin = xk_t[4]; let kEnd = xk_t[5]; let bBase = xk_t[6]; let cz = xk_t[7];",
  ].filter((x) => x !== "").join("\n");
}

/** The kernel of a ragged dot, or why it runs on the host. */
export function raggedDotKernelWgsl(inst: Instruction<"raggedDot">, limits: GpuLimits): WgslKernel | Declined {
  const spec = raggedGemmSpecOf(inst, gpuElementTypes);
  if ("declined" in spec) return spec;
  // Arrays of types productStorage takes: raggedGemmSpecOf checked them.
  const [lhsType, rhsType, outputType] = [inst.operands[0]!, inst.operands[1]!, inst].map((x) => (x.shape as ArrayShape).elementType) as [ElementType, ElementType, ElementType];
  const contracting = spec.mode === "contracting";
  // One product of m x n x k a matrix of A: A at z·m·k (its batch), B and C from the prologue.
  const gemm = gemmKernel({ elementType: "f32", batch: spec.batch, m: spec.m, n: spec.n, k: spec.k, lhsTransposed: false, rhsTransposed: spec.rhsTransposed }, limits, {
    memory: "device", kind: "tiled", lhsType, rhsType, outputType, slots: { lhs: SLOT.lhs, rhs: SLOT.rhs, out: SLOT.out },
    grouped: {
      resultMatrices: contracting ? spec.groups * spec.batch : spec.batch,
      raggedDepth: contracting,
      schedule: (tile, words) => {
        const { slots, outer } = raggedUnits(spec, Math.ceil(spec.m / tileRows(tile)));
        return {
          workgroups: outer * slots * Math.ceil(spec.n / tileCols(tile)),
          declarations: "var<workgroup> xk_tile: array<u32, 8>;",
          prologue: prologue(spec, tile, words, slots),
        };
      },
    },
  });
  if ("declined" in gemm) return gemm;
  if (gemm.choice.kind !== "tiled") throw new Error("ragged dot: the grouped GEMM is the tiled kernel");
  const types = lhsType === "f32" && rhsType === "f32" && outputType === "f32" ? "" : ` from ${lhsType === rhsType ? lhsType : `${lhsType} x ${rhsType}`} to ${outputType}`;
  return {
    source: gemm.code, buffers: 5, units: gemm.dispatch[0] * gemm.dispatch[1], invocationsPerUnit: gemm.workgroupSize[0] * gemm.workgroupSize[1],
    workgroups: [gemm.dispatch[0], gemm.dispatch[1]],
    what: `${raggedGemmKernelName(spec).replace(/ f32$/, "")}${types}, tiled ${tileName(gemm.choice.tile)}, group sizes ${spec.groupSizeType} read on the GPU`,
    status: true,
  };
}
