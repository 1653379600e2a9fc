// Sharding layouts (layout.ts) as one self-contained HTML page: a figure per tensor,
// its blocks drawn as inline SVG rectangles (striped with the colors of the devices
// that hold them, a dashed remainder where a shard is padded), labelled with device
// ids and element ranges, and a caption with the sharding in Shardy's text form, the
// mesh, a summary (text.ts's describeLayout) and the mesh's devices at their positions.
// No scripts, fonts or other assets are loaded.

import type { Mesh } from "../../sharding/model.js";
import { meshSize } from "../../sharding/mesh.js";
import { meshIndexOf, type ShardingLayout, type Tile } from "./layout.js";
import { describeLayout, dimBlockLabel, meshSummary, summaryLine, tileLabel } from "./text.js";
import { maxOf } from "../../types/arrays.js";

export interface ShardingFigure {
  /** `@main %arg0: tensor<8x8xf32>`. */
  readonly title: string;
  /** `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`. */
  readonly shardingText: string;
  /** `@mesh = <["x"=2, "y"=2]>`. */
  readonly meshText: string;
  readonly layout: ShardingLayout;
  /** What happens at this value (`xlats shardings --reshards`: the reshard that makes it). */
  readonly note?: string;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** A light color per device id, spread around the hue circle by the golden angle so neighbours differ. */
export function deviceColor(id: number): string {
  return `hsl(${Math.round((id * 137.508) % 360)}, 70%, 78%)`;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));
const CHAR_WIDTH = 7.5;

/** The fraction of a shard that holds data rather than padding. */
function dataFraction(tile: Tile, dim: number, shardSize: number): number {
  const b = tile.dims[dim];
  if (b === undefined) return 1;
  return shardSize === 0 ? 0 : (b.end - b.start) / shardSize;
}

/** One SVG grid of `tiles` (rows along dim rank-2, columns along dim rank-1). */
function tileSvg(layout: ShardingLayout, tiles: readonly Tile[]): string {
  const rank = layout.shape.length;
  const cols = rank === 0 ? 1 : layout.shardCounts[rank - 1]!;
  const rows = tiles.length / cols;
  const labels = tiles.map(tileLabel);
  const width = clamp(Math.max(480 / cols, maxOf(labels.map((l) => l.length * CHAR_WIDTH + 12))), 48, 200);
  const height = clamp(320 / rows, 34, 90);
  const rowLabels = rank >= 2 ? Array.from({ length: rows }, (_, i) => dimBlockLabel(tiles[i * cols]!.dims[rank - 2]!)) : [];
  const left = 8 + Math.max(0, maxOf(rowLabels.map((l) => l.length * CHAR_WIDTH)));
  const top = rank >= 1 ? 22 : 4;
  const parts: string[] = [];
  tiles.forEach((tile, k) => {
    const i = Math.floor(k / cols);
    const j = k % cols;
    const x = left + j * width;
    const y = top + i * height;
    const fx = rank >= 1 ? dataFraction(tile, rank - 1, layout.shardSizes[rank - 1]!) : 1;
    const fy = rank >= 2 ? dataFraction(tile, rank - 2, layout.shardSizes[rank - 2]!) : 1;
    const ids = tile.copies.flat();
    const where = tile.dims.map(dimBlockLabel).join(", ");
    parts.push(`<g><title>${escapeHtml(`${ids.length === 0 ? "every device" : `device${ids.length > 1 ? "s" : ""} ${tileLabel(tile)}`}: [${where}]`)}</title>`);
    parts.push(`<rect x="${x}" y="${y}" width="${width}" height="${height}" fill="#f4f4f4" stroke="#999" stroke-dasharray="4 3"/>`);
    const dataWidth = width * fx;
    const dataHeight = height * fy;
    const stripes = ids.length === 0 ? [undefined] : ids;
    if (dataWidth > 0 && dataHeight > 0) {
      const stripe = dataWidth / stripes.length;
      stripes.forEach((id, s) => {
        const fill = id === undefined ? "#ddd" : deviceColor(id);
        parts.push(`<rect x="${(x + s * stripe).toFixed(1)}" y="${y}" width="${stripe.toFixed(1)}" height="${dataHeight.toFixed(1)}" fill="${fill}"/>`);
      });
      parts.push(`<rect x="${x}" y="${y}" width="${dataWidth.toFixed(1)}" height="${dataHeight.toFixed(1)}" fill="none" stroke="#333"/>`);
    }
    const cx = x + (dataWidth > 0 ? dataWidth : width) / 2;
    const cy = y + (dataHeight > 0 ? dataHeight : height) / 2 + 4;
    parts.push(`<text x="${cx.toFixed(1)}" y="${cy.toFixed(1)}" class="dev">${escapeHtml(labels[k]!)}</text></g>`);
  });
  if (rank >= 1) {
    for (let j = 0; j < cols; j++) {
      parts.push(`<text x="${(left + (j + 0.5) * width).toFixed(1)}" y="14" class="range">${escapeHtml(dimBlockLabel(tiles[j]!.dims[rank - 1]!))}</text>`);
    }
  }
  rowLabels.forEach((label, i) => {
    parts.push(`<text x="${left - 6}" y="${(top + (i + 0.5) * height + 4).toFixed(1)}" class="range row">${escapeHtml(label)}</text>`);
  });
  const w = Math.ceil(left + cols * width + 2);
  const h = Math.ceil(top + rows * height + 2);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${parts.join("")}</svg>`;
}

/** The grids of a layout: one, or one per shard of the leading dimensions under its index. */
function layoutSvgs(layout: ShardingLayout): string {
  const rank = layout.shape.length;
  if (layout.summarized) return `<p>${escapeHtml(summaryLine(layout))}</p>`;
  if (rank <= 2) return tileSvg(layout, layout.tiles);
  const perGrid = layout.shardCounts[rank - 2]! * layout.shardCounts[rank - 1]!;
  const out: string[] = [];
  for (let k = 0; k < layout.tiles.length; k += perGrid) {
    const tiles = layout.tiles.slice(k, k + perGrid);
    const index = [...tiles[0]!.dims.slice(0, rank - 2).map(dimBlockLabel), ":", ":"].join(", ");
    out.push(`<div class="slab"><div class="index">[${escapeHtml(index)}]</div>${tileSvg(layout, tiles)}</div>`);
  }
  return out.join("");
}

/** The mesh's devices at their positions, colored as in the grids. */
function meshLegend(mesh: Mesh): string {
  if (mesh.axes.length === 0) return "";
  const summary = meshSummary(mesh);
  if (summary !== undefined) return `<div class="mesh">${escapeHtml(summary)}</div>`;
  const ids = Array.from({ length: meshSize(mesh) }, (_, p) => mesh.deviceIds?.[p] ?? p);
  const cell = (id: number): string => `<td style="background:${deviceColor(id)}">${id}</td>`;
  if (mesh.axes.length <= 2) {
    const [first, second] = mesh.axes.length === 1 ? [undefined, mesh.axes[0]!] : [mesh.axes[0]!, mesh.axes[1]!];
    const head = `<tr><th></th>${Array.from({ length: second.size }, (_, j) => `<th>${escapeHtml(second.name)}=${j}</th>`).join("")}</tr>`;
    const rows = Array.from({ length: first?.size ?? 1 }, (_, i) =>
      `<tr><th>${first === undefined ? "" : `${escapeHtml(first.name)}=${i}`}</th>${ids.slice(i * second.size, (i + 1) * second.size).map(cell).join("")}</tr>`);
    return `<table class="mesh">${head}${rows.join("")}</table>`;
  }
  const names = mesh.axes.map((a) => escapeHtml(a.name)).join(", ");
  const chips = ids.map((id, p) => `<span class="chip" style="background:${deviceColor(id)}">${id}=(${meshIndexOf(p, mesh).join(",")})</span>`);
  return `<div class="mesh">device=(${names}): ${chips.join(" ")}</div>`;
}

function figure(f: ShardingFigure): string {
  const summary = describeLayout(f.layout).map((l) => `<li>${escapeHtml(l)}</li>`).join("");
  const note = f.note === undefined ? "" : `<div class="note">${escapeHtml(f.note)}</div>`;
  return `<figure${f.note === undefined ? "" : ' class="reshard"'}>${layoutSvgs(f.layout)}<figcaption><div class="title">${escapeHtml(f.title)}</div>${note}` +
    `<code>${escapeHtml(f.shardingText)}</code><div>mesh <code>${escapeHtml(f.meshText)}</code></div>` +
    `<ul>${summary}</ul>${meshLegend(f.layout.mesh)}</figcaption></figure>`;
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:24px;color:#222}
figure{border:1px solid #ddd;border-radius:6px;padding:12px;margin:0 0 20px;display:inline-block;vertical-align:top}
figcaption{font-size:13px;margin-top:8px;max-width:640px}
.title{font-weight:600;font-size:14px;margin-bottom:4px}
figure.reshard{border:2px solid #c2410c}.note{color:#c2410c;font-weight:600;margin-bottom:4px}
code{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
svg text{font-family:ui-monospace,monospace;font-size:12px;text-anchor:middle}
svg text.dev{paint-order:stroke;stroke:#fff;stroke-width:3px}
svg text.range{fill:#555;font-size:11px}svg text.row{text-anchor:end}
.slab{display:inline-block;margin-right:12px}.index{font-family:ui-monospace,monospace;font-size:12px}
table.mesh{border-collapse:collapse;margin-top:6px;font-family:ui-monospace,monospace;font-size:12px}
table.mesh td,table.mesh th{border:1px solid #ccc;padding:2px 8px;text-align:center}
.chip{font-family:ui-monospace,monospace;font-size:12px;padding:1px 4px;border-radius:3px;display:inline-block;margin:1px}`;

/** The whole page. */
export function renderShardingsHtml(title: string, figures: readonly ShardingFigure[]): string {
  const body = figures.length === 0 ? "<p>No tensor in this selection has a sharding.</p>" : figures.map(figure).join("\n");
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>\n` +
    `<body><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`;
}
