// Where a GPU runner's run of a bench workload goes, in Node on Dawn (harness/webgpu_profile.ts):
//
//   node dist/bench/webgpu_profile.js [RUNNER] [KIND] [REPS] [--wgsl FILE] [--json]
//
// RUNNER xlats-webgpu (default) or jax-webgpu (jax-js given Dawn's GPU as navigator.gpu, with
// the same toggles as xlats': Dawn's zero-initialization of workgroup memory off unless
// XLATS_WEBGPU_ZERO_INIT=1, as in a browser's page); KIND a bench workload (default
// transformer, the encoder block); REPS dispatches a replay (default 4). Prints whole runs'
// wall milliseconds, the WebGPU calls of one, each kernel alone, with the process's CPU
// milliseconds of each (SwiftShader's threads are the process's). --wgsl FILE writes each
// kernel's WGSL there; --json prints the profile as JSON. Runs on the CPUs too (SwiftShader).

import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { gpuContext } from "../src/compiler/webgpu/adapter.js";
import { giveNavigatorDawnGpu } from "./harness/node_gpu_globals.js";
import { profileRunner, profileText, wgslText } from "./harness/webgpu_profile.js";
import { probeArgs } from "./harness/probe_args.js";

const { runner, kind, reps, "--wgsl": wgslFile, "--json": json } = probeArgs("webgpu_profile", {
  words: [
    { name: "runner", kind: "string", default: "xlats-webgpu", choices: ["xlats-webgpu", "jax-webgpu"], help: "the GPU runner" },
    { name: "kind", kind: "string", default: "transformer", help: "a bench workload" },
    { name: "reps", kind: "number", default: 4, min: 1, integer: true, help: "dispatches a replay" },
  ],
  options: {
    "--wgsl": { kind: "string", help: "the file each kernel's WGSL is written to" },
    "--json": { kind: "flag", help: "the profile as JSON" },
  },
});

if (runner === "jax-webgpu") {
  // jax-js takes its GPU from navigator.gpu (and reads navigator.userAgent): Dawn's, as xlats' backend makes it.
  const why = await giveNavigatorDawnGpu();
  if (why !== undefined) { console.error(why); process.exit(2); }
}

const deviceOf = async (name: string): Promise<unknown> => {
  if (name === "xlats-webgpu") return (await gpuContext()).device;
  // The module the peer loaded (bench/peers/jax.mjs imports it by name from bench/node_modules).
  const jax = (await import(new URL("../../bench/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href)) as { getWebGPUDevice(): unknown };
  return jax.getWebGPUDevice();
};

const cpuMs = (): number => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const profile = await profileRunner(runner, kind, deviceOf, reps, wgslFile !== undefined, cpuMs);
if (typeof profile === "string") { console.error(`${runner}: ${profile}`); process.exit(1); }
if (wgslFile !== undefined) writeFileSync(wgslFile, wgslText(profile));
const { wgsl: _, ...shown } = profile;
const context = { zeroInit: process.env["XLATS_WEBGPU_ZERO_INIT"] === "1", load: +loadavg()[0]!.toFixed(1), at: new Date().toISOString() };
console.log(json ? JSON.stringify({ ...shown, ...context }) : `${profileText(profile)}\n  zero-init ${context.zeroInit ? "on" : "off"}, load ${context.load}, ${context.at}`);
process.exit(0);
