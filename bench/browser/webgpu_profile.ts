// Where a GPU runner's run of a bench workload goes in headless Chromium (harness/webgpu_profile.ts,
// run in the bench's page by page.ts's profileWebGpu):
//
//   node dist/bench/browser/webgpu_profile.js [--runners xlats-webgpu,jax-webgpu] [--only transformer]
//       [--reps 4] [--rounds 1] [--wgsl PREFIX] [--json] [--chromium /usr/bin/chromium]
//
// Each runner gets a browser of its own, as in the bench (run.ts); with --rounds R the
// runners run R times, their order reversed every other round (pairs in one sitting).
// Prints, a runner a workload: whole runs' wall milliseconds, the WebGPU calls of one, each
// kernel alone (wall: the GPU process's CPU is not the page's to read). --wgsl PREFIX writes
// each runner's kernels' WGSL to PREFIX-RUNNER-KIND.wgsl.

import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { profileText, wgslText, type WebGpuProfile } from "../harness/webgpu_profile.js";
import { CHROMIUM_ARGS, loadChromium, WEBGPU_ARGS } from "./chromium.js";
import { startServer } from "./serve.js";
import { probeArgs } from "../harness/probe_args.js";

const options = probeArgs("browser/webgpu_profile", {
  options: {
    "--runners": { kind: "list", default: ["xlats-webgpu", "jax-webgpu"], pattern: /^(xlats-webgpu|jax-webgpu)$/, help: "the GPU runners" },
    "--only": { kind: "list", default: ["transformer"], help: "bench workloads" },
    "--reps": { kind: "number", default: 4, min: 1, integer: true, help: "dispatches a replay" },
    "--rounds": { kind: "number", default: 1, min: 1, integer: true, help: "rounds, the runners' order reversed every other one" },
    "--wgsl": { kind: "string", help: "each runner's kernels' WGSL to PREFIX-RUNNER-KIND.wgsl" },
    "--json": { kind: "flag", help: "each profile as JSON" },
    "--chromium": { kind: "string", help: "the Chromium (default $CHROMIUM or /usr/bin/chromium)" },
  },
});
const { "--runners": runners, "--only": kinds, "--reps": reps, "--rounds": rounds, "--wgsl": wgslPrefix, "--json": json } = options;
const LOAD_TIMEOUT_MS = 60_000;

const chromium = await loadChromium();
if (typeof chromium === "string") { console.error(chromium); process.exit(2); }
const executablePath = options["--chromium"] ?? process.env["CHROMIUM"] ?? "/usr/bin/chromium";
const server = await startServer(fileURLToPath(new URL("../../../", import.meta.url)));
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? runners : [...runners].reverse();
    for (const name of order) {
      for (const kind of kinds) {
        const browser = await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS, ...WEBGPU_ARGS] });
        try {
          const page = await (await browser.newContext()).newPage();
          page.on("pageerror", (e) => process.stderr.write(`  [page error ${name}] ${e.message}\n`));
          await page.goto(server.url, { timeout: LOAD_TIMEOUT_MS });
          await page.waitForFunction("globalThis.xlatsBench !== undefined", undefined, { timeout: LOAD_TIMEOUT_MS });
          const request = { name, kind, reps, wgsl: wgslPrefix !== undefined };
          const loadBefore = loadavg()[0]!;
          const profile = await page.evaluate((r: typeof request) =>
            (globalThis as unknown as { xlatsBench: { profileWebGpu(r: typeof request): Promise<WebGpuProfile | string> } }).xlatsBench.profileWebGpu(r), request);
          const context = { round: round + 1, load: `${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`, at: new Date().toISOString() };
          if (typeof profile === "string") { console.log(`${name} ${kind}: ${profile}`); continue; }
          if (wgslPrefix !== undefined) writeFileSync(`${wgslPrefix}-${name}-${kind}.wgsl`, wgslText(profile));
          const { wgsl: _, ...shown } = profile;
          console.log(json ? JSON.stringify({ ...shown, ...context }) : `${profileText(profile)}\n  Chromium, round ${context.round}, load ${context.load}, ${context.at}`);
        } finally {
          await browser.close().catch(() => {});
        }
      }
    }
  }
} finally {
  await server.close();
}
