// Whether this machine has something to run WebGPU on: Dawn's Node binding (the `webgpu`
// package) or SwiftShader's Vulkan driver. The webgpu test files skip on this reason.
// And `both`, their common check: a program on the GPU and on the interpreter; and
// `gpuLoopBatches`, the readbacks a GPU-driven while loop makes.

import { existsSync } from "node:fs";
import { compile } from "../../../src/compiler/index.js";
import type { WebGpuExecutable } from "../../../src/compiler/webgpu/executable.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Computation } from "../../../src/ir/computation.js";
import type { Literal } from "../../../src/types/literal.js";

async function packageLoads(): Promise<boolean> {
  try {
    const name = "webgpu"; // a variable: the optional package is not resolved at build time
    await import(name);
    return true;
  } catch {
    return false;
  }
}

const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";
const hasDriver = process.env["VK_ICD_FILENAMES"] !== undefined || existsSync(SWIFTSHADER_ICD);

/** false where WebGPU can run here, else the reason the tests are skipped. */
export const webgpuSkip: false | string = (await packageLoads()) || hasDriver
  ? false
  : "the webgpu package (Dawn's Node binding) and SwiftShader's Vulkan driver are both missing here: nothing to run WebGPU on";

/** Runs `c` on the WebGPU backend and on the interpreter; returns both results and the executable (deleted: its stats and dump remain). */
export async function both(c: Computation, args: readonly Literal[]): Promise<{ want: Literal; got: Literal; exe: WebGpuExecutable }> {
  const exe = await compile(c, { backend: "webgpu" });
  try {
    return { want: evaluate(c, args), got: await exe.run(args), exe };
  } finally {
    exe.delete();
  }
}

/** The readbacks of a GPU-driven loop of `trips` iterations: batches of 1, 2, 4, ... 64, until one runs fewer bodies than it has iterations. */
export function gpuLoopBatches(trips: number, cap = 64): number {
  let batches = 0;
  for (let done = 0, batch = 1; ; done += batch, batch = Math.min(2 * batch, cap)) {
    batches++;
    if (trips - done < batch) return batches;
  }
}
