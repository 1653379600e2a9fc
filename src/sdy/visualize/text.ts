// A sharding layout (layout.ts) as text for a terminal: a grid of the tensor's blocks,
// each labelled with the devices that hold it, a summary of how each dimension is cut,
// and the mesh as a grid of device ids. Rank 1 is one row of blocks, rank 2 rows by
// columns, higher ranks one grid of the last two dimensions per shard of the leading
// ones. Colors (ANSI, one per device) only when the caller asks for them.

import { axisSize, axisToString } from "../../sharding/axis.js";
import type { Mesh } from "../../sharding/model.js";
import { isMaximalMesh, meshSize } from "../../sharding/mesh.js";
import { MAX_DRAWN, meshIndexOf, unusedAxes, type DimBlock, type ShardingLayout, type Tile } from "./layout.js";
import { appendAll, maxOf, minOf } from "../../types/arrays.js";
import { elementCount } from "../../types/shape.js";

/** `0:4`, the half-open range of elements; `4:5 +1 pad` when the shard is padded. */
export function dimBlockLabel(b: DimBlock): string {
  return b.padding > 0 ? `${b.start}:${b.end} +${b.padding} pad` : `${b.start}:${b.end}`;
}

/** Device ids sorted, runs of three or more as `a-b`: `0-3,6`. */
export function deviceListLabel(ids: readonly number[]): string {
  const sorted = [...ids].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}-${sorted[j]}` : sorted.slice(i, j + 1).join(","));
    i = j + 1;
  }
  return parts.join(",");
}

/** The devices of a tile: copies joined by `,`, partial values (unreduced axes) by ` + `; `all` on the empty mesh. */
export function tileLabel(tile: Tile): string {
  return tile.copies.length === 0 ? "all" : tile.copies.map(deviceListLabel).join(" + ");
}

/** The device a tile is colored by: the lowest id holding it. */
export function tileColorDevice(tile: Tile): number | undefined {
  const ids = tile.copies.flat();
  return ids.length === 0 ? undefined : minOf(ids);
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** How the layout cuts each dimension and where the copies are, one sentence a line. */
export function describeLayout(layout: ShardingLayout): string[] {
  const { mesh, sharding } = layout;
  if (isMaximalMesh(mesh)) return [`maximal: device ${mesh.deviceIds![0]} holds the whole tensor`];
  if (layout.deviceCount === 0) return ["empty mesh: every device holds the whole tensor"];
  const lines = layout.shape.map((n, d) => {
    const dim = sharding.dimShardings[d]!;
    const open = dim.isClosed ? "" : " (open: propagation may shard it further)";
    const count = layout.shardCounts[d]!;
    if (count === 1) return `dim ${d} (${n}): whole${open}`;
    const size = layout.shardSizes[d]!;
    const padding = count * size - n;
    const padded = padding > 0 ? `, padded by ${plural(padding, "element")} at the end` : "";
    return `dim ${d} (${n}): ${count} shards of ${size} along ${dim.axes.map(axisToString).join(", ")}${padded}${open}`;
  });
  const { replicated, unreduced } = unusedAxes(layout);
  // Counted, not listed (a summarised layout lists no devices): the devices not telling
  // blocks or partial values apart hold copies.
  const partials = unreduced.reduce((n, a) => n * axisSize(a, mesh), 1);
  const copies = layout.deviceCount / (elementCount(layout.shardCounts) * partials);
  const along = replicated.length > 0 ? ` (replicated along ${replicated.map(axisToString).join(", ")})` : "";
  lines.push(`each block on ${plural(copies, "device")}${along}`);
  if (unreduced.length > 0) {
    lines.push(`unreduced along ${unreduced.map(axisToString).join(", ")}: each block is the ${sharding.reductionOp ?? "sum"} of ${partials} partial values (joined by + in the grid)`);
  }
  return lines;
}

// ---------------------------------------------------------------- grids

// Pastel 256-color backgrounds, readable under black text.
const PALETTE = [153, 217, 151, 223, 183, 216, 159, 193, 225, 187, 195, 230];

function colored(text: string, device: number | undefined, color: boolean): string {
  if (!color || device === undefined) return text;
  return `\x1b[48;5;${PALETTE[device % PALETTE.length]}m\x1b[30m${text}\x1b[0m`;
}

function center(text: string, width: number): string {
  const left = Math.floor((width - text.length) / 2);
  return " ".repeat(left) + text + " ".repeat(width - text.length - left);
}

interface Cell {
  readonly label: string;
  readonly device: number | undefined;
}

/** A box-drawn grid with row labels on the left and column labels on top. */
function grid(rowLabels: readonly string[], colLabels: readonly string[], cells: readonly (readonly Cell[])[], color: boolean): string[] {
  const widths = colLabels.map((c, j) => Math.max(c.length, maxOf(cells.map((row) => row[j]!.label.length))) + 2);
  const margin = Math.max(0, maxOf(rowLabels.map((r) => r.length)));
  const pad = (s: string): string => s.padStart(margin) + " ";
  const rule = (l: string, m: string, r: string): string => pad("") + l + widths.map((w) => "─".repeat(w)).join(m) + r;
  const header = (pad("") + " " + colLabels.map((c, j) => center(c, widths[j]!)).join(" ")).trimEnd();
  const lines = [...(header === "" ? [] : [header]), rule("┌", "┬", "┐")];
  cells.forEach((row, i) => {
    if (i > 0) lines.push(rule("├", "┼", "┤"));
    lines.push(pad(rowLabels[i]!) + "│" + row.map((cell, j) => colored(center(cell.label, widths[j]!), cell.device, color)).join("│") + "│");
  });
  lines.push(rule("└", "┴", "┘"));
  return lines;
}

/** The grid of the tiles whose leading shard indices are `leading`: rows along dim r-2, columns along dim r-1. */
function tileGrid(layout: ShardingLayout, tiles: readonly Tile[], color: boolean): string[] {
  const rank = layout.shape.length;
  const cell = (t: Tile): Cell => ({ label: tileLabel(t), device: tileColorDevice(t) });
  if (rank === 0) return grid([""], [""], [[cell(tiles[0]!)]], color);
  const cols = layout.shardCounts[rank - 1]!;
  const rows = tiles.length / cols;
  const matrix = Array.from({ length: rows }, (_, i) => tiles.slice(i * cols, (i + 1) * cols));
  const colLabels = matrix[0]!.map((t) => dimBlockLabel(t.dims[rank - 1]!));
  const rowLabels = rank === 1 ? [""] : matrix.map((row) => dimBlockLabel(row[0]!.dims[rank - 2]!));
  return grid(rowLabels, colLabels, matrix.map((row) => row.map(cell)), color);
}

/** The tensor's blocks: one grid (rank <= 2), or one per shard of the leading dimensions, each under its index. */
export function renderLayoutGrid(layout: ShardingLayout, color = false): string[] {
  const rank = layout.shape.length;
  if (layout.summarized) return [summaryLine(layout)];
  if (rank <= 2) {
    const axes = rank === 2 ? ["rows: dim 0, columns: dim 1"] : rank === 1 ? ["columns: dim 0"] : [];
    return [...axes, ...tileGrid(layout, layout.tiles, color)];
  }
  const perGrid = layout.shardCounts[rank - 2]! * layout.shardCounts[rank - 1]!;
  const leading = rank === 3 ? "dim 0" : `dims 0-${rank - 3}`;
  const lines = [`rows: dim ${rank - 2}, columns: dim ${rank - 1}; one grid per block of ${leading}`];
  for (let k = 0; k < layout.tiles.length; k += perGrid) {
    const tiles = layout.tiles.slice(k, k + perGrid);
    const index = tiles[0]!.dims.slice(0, rank - 2).map(dimBlockLabel);
    appendAll(lines, [`[${[...index, ":", ":"].join(", ")}]`, ...tileGrid(layout, tiles, color)]);
  }
  return lines;
}

/** What a summarised layout draws in place of its grid. */
export function summaryLine(layout: ShardingLayout): string {
  const blocks = elementCount(layout.shardCounts);
  return `${plural(blocks, "block")} on ${plural(layout.deviceCount, "device")}: more than ${MAX_DRAWN} to draw, summarised`;
}

/** A mesh too large to draw, in one line; undefined when it is drawn. */
export function meshSummary(mesh: Mesh): string | undefined {
  const count = meshSize(mesh);
  if (count <= MAX_DRAWN) return undefined;
  return `${count} devices (${mesh.axes.map((a) => `${a.name}=${a.size}`).join(", ")}): more than ${MAX_DRAWN} to draw`;
}

/** The mesh's devices at their positions: a grid for one or two axes, `id=(i, j, k)` lines for more; one line past MAX_DRAWN devices. */
export function renderMeshLegend(mesh: Mesh, color = false): string[] {
  if (mesh.axes.length === 0) return [];
  const summary = meshSummary(mesh);
  if (summary !== undefined) return [summary];
  const ids = Array.from({ length: meshSize(mesh) }, (_, p) => mesh.deviceIds?.[p] ?? p);
  const cell = (id: number): Cell => ({ label: String(id), device: id });
  const [first, second] = mesh.axes;
  if (mesh.axes.length === 1) return grid([""], ids.map((_, i) => `${first!.name}=${i}`), [ids.map(cell)], color);
  if (mesh.axes.length === 2) {
    const rows = Array.from({ length: first!.size }, (_, i) => ids.slice(i * second!.size, (i + 1) * second!.size).map(cell));
    return grid(rows.map((_, i) => `${first!.name}=${i}`), Array.from({ length: second!.size }, (_, j) => `${second!.name}=${j}`), rows, color);
  }
  const names = mesh.axes.map((a) => a.name).join(", ");
  const entries = ids.map((id, p) => `${colored(String(id), id, color)}=(${meshIndexOf(p, mesh).join(",")})`);
  const lines = [`device=(${names}):`];
  for (let i = 0; i < entries.length; i += 8) lines.push(`  ${entries.slice(i, i + 8).join("  ")}`);
  return lines;
}
