// Whether this machine has something to run WebGPU on: Dawn's Node binding (the `webgpu`
// package) or SwiftShader's Vulkan driver. The webgpu test files skip on this reason.

import { existsSync } from "node:fs";

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
