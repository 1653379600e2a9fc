// Dawn's WebGPU in Node (the optional `webgpu` package), loaded by adapter.ts through
// importNodeAdapter only where it runs in Node, so that a browser's module graph never
// reaches a `node:` import or the package.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Gpu } from "./gpu_types.js";

/** SwiftShader's Vulkan driver description, as Debian's chromium package installs it. */
const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

/**
 * Dawn's window-system probing (libwayland) prints "error: XDG_RUNTIME_DIR is invalid or
 * not set in the environment." where the variable is unset (a container, a CI job, ssh):
 * it is pointed at a private, empty directory (mkdtemp: mode 0700, as the variable
 * requires), removed when the process exits. A variable already set is left alone.
 */
function giveDawnARuntimeDir(): void {
  if (process.env["XDG_RUNTIME_DIR"] !== undefined) return;
  const dir = mkdtempSync(join(tmpdir(), "xlats-xdg-"));
  process.env["XDG_RUNTIME_DIR"] = dir;
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
}

/**
 * The environment Dawn reads: a runtime directory, and without a GPU the Vulkan loader
 * pointed at SwiftShader. Called on the main thread before a worker thread loads Dawn: a
 * worker's process.env is its own copy, which the Vulkan loader never sees.
 */
export function prepareDawnEnvironment(): void {
  giveDawnARuntimeDir();
  if (process.env["VK_ICD_FILENAMES"] === undefined && existsSync(SWIFTSHADER_ICD)) process.env["VK_ICD_FILENAMES"] = SWIFTSHADER_ICD;
}

/**
 * Dawn's zero-initialization of workgroup memory, off: every kernel of the backend writes
 * its workgroup variables before reading them (the subgroup reductions' leader bits are
 * cleared explicitly, wgsl_kernel.ts, and the per-matrix kernels' atomics,
 * matrix_kernel_wgsl.ts zeroWorkgroupAtomics), so it would only cost time, and on SwiftShader a
 * great deal: it compiles as a store per element, 16 CPU-s for the 32 KB line of an
 * FFT of 4096 (41 ms without), seconds for a GEMM's tiles (2026-11-30). A browser's
 * pages cannot turn it off: there the same kernels run with it, and
 * XLATS_WEBGPU_ZERO_INIT=1 leaves it on here, to measure what a page pays (bench/webgpu_run_probe.ts).
 */
const DAWN_NO_WORKGROUP_INIT = "enable-dawn-features=disable_workgroup_init";

/** Dawn's GPU entry point, or why there is none. */
export async function nodeGpu(): Promise<Gpu | string> {
  prepareDawnEnvironment();
  let dawn: { create(options: string[]): Gpu; globals: object };
  try {
    // A variable specifier: the type checker does not need the optional package.
    const name = "webgpu";
    dawn = (await import(name)) as typeof dawn;
  } catch (e) {
    return `the optional "webgpu" package (Dawn's Node binding) could not be loaded: ${(e as Error).message.split("\n")[0]}`;
  }
  // Dawn's constants (GPUBufferUsage, ...) as a browser has them; the backend itself uses its own (gpu_types.ts).
  for (const [k, v] of Object.entries(dawn.globals)) if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
  return dawn.create(process.env["XLATS_WEBGPU_ZERO_INIT"] === "1" ? [] : [DAWN_NO_WORKGROUP_INIT]);
}
