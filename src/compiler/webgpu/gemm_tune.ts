// The GEMM tuner: times the tiled kernel of a spec with each tile the adapter fits (at
// most a few, largest first) and keeps the fastest. Optional and cheap: one timed run
// per candidate, done once per spec and adapter when a cache is passed. The candidates
// are the tiles of the options' staging (workgroup memory, or a software adapter's tiles
// read from storage). Timing is the caller's (the backend owns the device): `measure`
// returns seconds per dispatch.
// Specs the skinny kernel takes are not tuned (it has one layout per shape).

import type { Declined } from "../kernel/declined.js";
import { gemmKernelName, type GemmSpec } from "../kernel/gemm_plan.js";
import { gemmKernel, type GemmWgslOptions } from "./gemm_wgsl.js";
import { fittingTiles, tileName, type GemmTile, type GpuKernel, type GpuLimits } from "./gemm_tiles_wgsl.js";

/** How many tiles the tuner times at most. */
export const MAX_TUNED_TILES = 4;

export interface TunedGemm {
  /** The fastest kernel; its choice says "tuner" and which tile. */
  readonly kernel: GpuKernel;
  /** Every candidate timed, in the order tried (empty: nothing was timed, see `reason`). */
  readonly timings: readonly { readonly tile: string; readonly seconds: number }[];
  readonly reason: string;
}

/** Tiles chosen before, by spec, element types and limits (a backend keeps one per device). */
export type GemmTuneCache = Map<string, GemmTile>;

const cacheKey = (spec: GemmSpec, limits: GpuLimits, options: GemmWgslOptions): string =>
  `${gemmKernelName(spec)} in ${options.lhsType ?? "f32"} x ${options.rhsType ?? "f32"} out ${options.outputType ?? "f32"} staged in ${options.staging ?? "workgroup"} ${JSON.stringify(limits)}`;

function asTuned(kernel: GpuKernel): GpuKernel {
  return kernel.choice.kind === "tiled" ? { ...kernel, choice: { ...kernel.choice, tileFrom: "tuner" } } : kernel;
}

export async function tuneGemm(
  spec: GemmSpec, limits: GpuLimits, measure: (kernel: GpuKernel) => Promise<number>,
  options: GemmWgslOptions = {}, cache?: GemmTuneCache,
): Promise<TunedGemm | Declined> {
  const untuned = gemmKernel(spec, limits, options);
  if ("declined" in untuned) return untuned;
  if (untuned.choice.kind !== "tiled") return { kernel: untuned, timings: [], reason: "the skinny kernel is not tuned" };
  const key = cacheKey(spec, limits, options);
  const known = cache?.get(key);
  if (known !== undefined) {
    const kernel = gemmKernel(spec, limits, { ...options, tile: known });
    if (!("declined" in kernel)) return { kernel: asTuned(kernel), timings: [], reason: `tile ${tileName(known)} from the cache` };
  }
  const timings: { tile: string; seconds: number }[] = [];
  let best: { kernel: GpuKernel; tile: GemmTile; seconds: number } | undefined;
  for (const tile of fittingTiles(limits, options.staging).slice(0, MAX_TUNED_TILES)) {
    const kernel = gemmKernel(spec, limits, { ...options, kind: "tiled", tile });
    if ("declined" in kernel) continue;
    const seconds = await measure(kernel);
    timings.push({ tile: tileName(tile), seconds });
    if (best === undefined || seconds < best.seconds) best = { kernel, tile, seconds };
  }
  if (best === undefined) return { kernel: untuned, timings, reason: "no candidate tile could be built; the default stays" };
  cache?.set(key, best.tile);
  return { kernel: asTuned(best.kernel), timings, reason: `fastest of ${timings.length} tiles` };
}
