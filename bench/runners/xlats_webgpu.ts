// xlats' WebGPU backend: programs compiled for the page's (or Dawn's) GPU, arguments put
// in the device's memory once, `execute` timed on device arrays. A run counts until the
// GPU has finished its work (the queue's onSubmittedWorkDone), as the GPU peers' runs do;
// nothing is read back except by result().

import { compile, type Executable } from "../../src/compiler/index.js";
import type { GpuArray, WebGpuExecutable } from "../../src/compiler/webgpu/executable.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation } from "../workloads/index.js";
import type { Workload } from "../workloads/specs.js";
import { literalOutputs, toLiterals } from "./xlats_interpreter.js";

export function createWebGpuRunner(): Runner {
  return {
    name: "xlats-webgpu",
    threads: 1,
    init: async () => undefined,
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared | string> => {
      let exe: WebGpuExecutable;
      try {
        exe = (await compile(buildComputation(w, inputs), { backend: "webgpu" })) as Executable & WebGpuExecutable;
      } catch (e) {
        return `compile failed: ${(e as Error).message.split("\n")[0]}`;
      }
      const args: GpuArray[] = toLiterals(w, inputs).map((a) => exe.bufferFromLiteral(a));
      const queue = exe.gpu.device.queue;
      const execute = async (): Promise<GpuArray[]> => {
        const outs = await exe.execute(args);
        await queue.onSubmittedWorkDone();
        return outs;
      };
      const steps = exe.stats.interpreted;
      const run = async (): Promise<void> => { for (const out of await execute()) out.delete(); };
      await run(); // pipelines are compiled by compile(); as for the GPU peers, one run before any is timed
      return {
        run,
        result: async () => {
          const outs = await execute();
          const values = (await Promise.all(outs.map((o) => o.toLiteral()))).flatMap((l) => literalOutputs(l));
          for (const o of outs) o.delete();
          return values;
        },
        detail: `${exe.stats.kernels} kernel(s), compile ${(exe.stats.compileMs / 1000).toFixed(1)} s` +
          (steps.length > 0 ? `; ${steps.length} host step(s): ${[...new Set(steps.map((s) => s.why))].join(", ")}` : ""),
        dispose: () => {
          for (const a of args) a.delete();
          exe.delete();
        },
      };
    },
  };
}
