// xlats' WebAssembly compiler: one device per thread count (the device owns the threads),
// programs compiled for it, arguments put on it once, `execute` timed on device arrays.

import { compile, WasmDevice, type DeviceArray, type Executable } from "../../src/compiler/index.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation } from "../workloads/index.js";
import type { Workload } from "../workloads/specs.js";
import { literalOutputs, toLiterals } from "./xlats_interpreter.js";

export function createWasmRunner(threads: number): Runner {
  let device: WasmDevice | undefined;
  return {
    name: "xlats-wasm",
    threads,
    init: async () => {
      device = await WasmDevice.create({ threads });
      return undefined;
    },
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared | string> => {
      if (device === undefined) return "device not created";
      let exe: Executable;
      try {
        exe = await compile(buildComputation(w), { device });
      } catch (e) {
        return `compile failed: ${(e as Error).message.split("\n")[0]}`;
      }
      const args: DeviceArray[] = toLiterals(w, inputs).map((a) => device!.bufferFromLiteral(a));
      return {
        run: () => { for (const out of exe.execute(args)) out.delete(); },
        result: () => {
          const outs = exe.execute(args);
          const values = outs.flatMap((o) => literalOutputs(o.toLiteral()));
          for (const o of outs) o.delete();
          return values;
        },
        get peakBytes() { return exe.stats.peakBytes; },
        get detail() {
          const steps = exe.stats.interpreted;
          if (steps.length === 0) return undefined;
          const reasons = [...new Set(steps.map((s) => `${s.name.replace(/[._]?\d+$/, "")} (${s.why})`))];
          const text = `${steps.length} step(s) on the interpreter's kernels: ${reasons.join(", ")}`;
          return text.length > 300 ? `${text.slice(0, 297)}...` : text;
        },
        dispose: () => { for (const a of args) a.delete(); exe.delete(); },
      };
    },
    close: async () => { await device?.close(); },
  };
}
