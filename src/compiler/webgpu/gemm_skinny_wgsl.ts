// The skinny GEMM in WGSL: a few rows of A (at most SKINNY_MAX_ROWS, as in a matrix-vector
// product) times B. A tiled kernel would leave most of each tile's rows empty and read B
// once per tile; here each workgroup owns a block of output columns for all the rows, its
// invocations split k into slices, each slice's partial sums go to workgroup memory, and
// a tree over the slices adds them. B, the large operand, is read once, coalesced:
// - B stored along its columns (k x n): the workgroup's x runs over columns (a vec4 of 4
//   columns each where n % 4 == 0), y over k slices;
// - B stored along k (n x k, or A^T times a vector): x runs over k (vec4s of k where
//   k % 4 == 0), y over columns.
// Accumulation in f32: each invocation sums its slice in order of k, then the slices are
// added pairwise (the tree's order is fixed by the workgroup size).

import type { Declined } from "../kernel/declined.js";
import { positiveZeroStatement, spreadDispatch, type GpuLimits, type TileOperand } from "./gemm_tiles_wgsl.js";

/** The most rows of A the skinny kernel takes (its partial sums: rows x 4 per invocation in workgroup memory). */
export const SKINNY_MAX_ROWS = 4;

export interface SkinnyProduct {
  readonly count: number;
  readonly rows: number;
  readonly cols: number;
  readonly depth: number;
  readonly declarations: string;
  /** f32 expression of A(row, k) of product z (row a constant below `rows`). */
  aScalar(row: string, k: string, z: string): string;
  /** vec4<f32> of A(row, k .. k+3), k a multiple of 4 (undefined: four scalar reads). */
  readonly aVector?: (row: string, k: string, z: string) => string;
  /** B as a tile operand: outer = column. */
  readonly b: TileOperand;
  readonly vectorB: boolean;
  store(value: string, row: string, col: string, z: string): string;
}

export interface SkinnyLayout {
  /** "columns": x over columns, y over k slices; "depth": x over k slices, y over columns. */
  readonly along: "columns" | "depth";
  readonly threadsX: number;
  readonly threadsY: number;
  readonly vectorLoads: boolean;
  readonly columnsPerWorkgroup: number;
  readonly depthSlices: number;
}

const u = (x: number): string => `${x}u`;

/** Workgroups the skinny kernel aims for along B's columns, so that a GPU's cores all get some (B is read once either way). */
const MIN_SKINNY_GROUPS = 64;

/**
 * The workgroup shape: 256 invocations (fewer where the limits say so). Along "depth",
 * 64 k slices x 4 columns. Along "columns", the widest block of columns (64 x vec4 down
 * to 8) that still makes MIN_SKINNY_GROUPS workgroups, the rest of the invocations
 * splitting k, so that a long k over few columns is still shared out.
 */
export function skinnyLayout(p: SkinnyProduct, limits: GpuLimits): SkinnyLayout | Declined {
  const along = p.b.contiguous === "outer" ? "columns" : "depth";
  const width = p.vectorB && p.b.vector !== undefined ? 4 : 1;
  const slotsPerThread = along === "columns" ? p.rows * width : p.rows;
  let threads = 256;
  while (threads > limits.maxComputeInvocationsPerWorkgroup) threads /= 2;
  const fits = (tx: number, ty: number): boolean =>
    tx <= limits.maxComputeWorkgroupSizeX && ty <= limits.maxComputeWorkgroupSizeY && 4 * slotsPerThread * tx * ty <= limits.maxComputeWorkgroupStorageSize;
  const shapes: [number, number][] = [];
  for (let x = Math.min(64, threads); x >= Math.min(8, threads); x /= 2) {
    for (let total = threads; total >= x; total /= 2) {
      if (fits(x, total / x)) {
        shapes.push([x, total / x]);
        break;
      }
    }
  }
  if (shapes.length === 0) return { declined: "webgpu gemm: the skinny kernel's workgroup does not fit the adapter's limits" };
  if (along === "depth") {
    const [x, y] = shapes[0]!;
    return { along, threadsX: x, threadsY: y, vectorLoads: width === 4, columnsPerWorkgroup: y, depthSlices: x };
  }
  const groups = (x: number): number => p.count * Math.ceil(p.cols / (x * width));
  const [x, y] = shapes.find(([sx]) => groups(sx) >= MIN_SKINNY_GROUPS) ?? shapes[shapes.length - 1]!;
  return { along, threadsX: x, threadsY: y, vectorLoads: width === 4, columnsPerWorkgroup: x * width, depthSlices: y };
}

export function renderSkinny(p: SkinnyProduct, layout: SkinnyLayout, limits: GpuLimits): { code: string; dispatch: readonly [number, number, number] } | Declined {
  const { along, threadsX: TX, threadsY: TY, vectorLoads } = layout;
  const threads = TX * TY;
  const colsPerGroup = layout.columnsPerWorkgroup;
  const slices = layout.depthSlices;
  const tilesN = Math.ceil(p.cols / colsPerGroup);
  const groups = p.rows === 0 || p.cols === 0 ? 0 : p.count * tilesN;
  const dispatch = spreadDispatch(groups, limits);
  if ("declined" in dispatch) return dispatch;
  const width = vectorLoads ? 4 : 1;
  // Per invocation: one accumulator per row (a vec4 of 4 columns along "columns" with vectors).
  const accType = along === "columns" && vectorLoads ? "vec4<f32>" : "f32";
  const lanes = accType === "f32" ? 1 : 4;
  const slots = p.rows * lanes;
  const R = p.rows;
  const lines: string[] = [p.declarations];
  lines.push(`var<workgroup> partial: array<f32, ${slots * threads}>;`);
  lines.push("");
  lines.push(`@compute @workgroup_size(${TX}, ${TY}, 1)`);
  lines.push("fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {");
  lines.push("  let group = wid.x + wid.y * nwg.x;");
  lines.push(`  if (group >= ${u(groups)}) { return; }`);
  lines.push(`  let z = group / ${u(tilesN)};`);
  lines.push(`  let col0 = (group % ${u(tilesN)}) * ${u(colsPerGroup)};`);
  const [sliceId, colLocal] = along === "columns" ? ["lid.y", `lid.x * ${u(width)}`] : ["lid.x", "lid.y"];
  const sliceStride = along === "columns" ? TX : 1;
  const colStride = along === "columns" ? 1 : TX;
  lines.push(`  let slice = ${sliceId};`);
  lines.push(`  let col = col0 + ${colLocal};`);
  for (let r = 0; r < R; r++) lines.push(`  var acc_${r} = ${accType}(0.0);`);
  lines.push(`  if (col < ${u(p.cols)}) {`);
  if (along === "columns") {
    lines.push(`    for (var k = slice; k < ${u(p.depth)}; k = k + ${u(slices)}) {`);
    lines.push(`      let b = ${vectorLoads ? p.b.vector!("col", "k", "z") : p.b.scalar("col", "k", "z")};`);
    for (let r = 0; r < R; r++) lines.push(`      acc_${r} = fma(${accType}(${p.aScalar(u(r), "k", "z")}), b, acc_${r});`);
    lines.push("    }");
  } else if (vectorLoads) {
    lines.push(`    for (var k = slice * 4u; k < ${u(p.depth)}; k = k + ${u(4 * slices)}) {`);
    lines.push(`      let b = ${p.b.vector!("col", "k", "z")};`);
    for (let r = 0; r < R; r++) {
      const a = p.aVector !== undefined
        ? p.aVector(u(r), "k", "z")
        : `vec4<f32>(${[0, 1, 2, 3].map((j) => p.aScalar(u(r), `k + ${u(j)}`, "z")).join(", ")})`;
      lines.push(`      acc_${r} = acc_${r} + dot(${a}, b);`);
    }
    lines.push("    }");
  } else {
    lines.push(`    for (var k = slice; k < ${u(p.depth)}; k = k + ${u(slices)}) {`);
    lines.push(`      let b = ${p.b.scalar("col", "k", "z")};`);
    for (let r = 0; r < R; r++) lines.push(`      acc_${r} = fma(${p.aScalar(u(r), "k", "z")}, b, acc_${r});`);
    lines.push("    }");
  }
  lines.push("  }");
  for (let r = 0; r < R; r++) lines.push(`  ${positiveZeroStatement(`acc_${r}`, accType)}`);
  // partial[slot][invocation]: the invocation's position is slice * sliceStride + column * colStride.
  const me = `slice * ${u(sliceStride)} + ${along === "columns" ? "lid.x" : "lid.y"} * ${u(colStride)}`;
  lines.push(`  let me = ${me};`);
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < lanes; j++) lines.push(`  partial[${u((r * lanes + j) * threads)} + me] = acc_${r}${lanes === 1 ? "" : `[${j}]`};`);
  }
  // The tree over slices: barriers in uniform control flow (every invocation runs every step).
  for (let s = slices / 2; s >= 1; s /= 2) {
    lines.push("  workgroupBarrier();");
    lines.push(`  if (slice < ${u(s)}) {`);
    for (let slot = 0; slot < slots; slot++) {
      lines.push(`    partial[${u(slot * threads)} + me] = partial[${u(slot * threads)} + me] + partial[${u(slot * threads + s * sliceStride)} + me];`);
    }
    lines.push("  }");
  }
  lines.push("  workgroupBarrier();");
  lines.push("  if (slice == 0u) {");
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < lanes; j++) {
      const c = j === 0 ? "col" : `col + ${u(j)}`;
      lines.push(`    if (${c} < ${u(p.cols)}) { ${p.store(`partial[${u((r * lanes + j) * threads)} + me]`, u(r), c, "z")} }`);
    }
  }
  lines.push("  }");
  lines.push("}");
  return { code: lines.join("\n") + "\n", dispatch };
}
