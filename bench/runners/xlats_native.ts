// xlats' native backend: the program's kernels as C, built by the machine's C compiler
// into a Node-API module, on one device; `threads` is the module's own thread count.
// Each runner process builds into a fresh cache directory, so every program's first
// compile is a real compiler run, and its time is reported beside the figure.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile, WasmDevice, type DeviceArray, type Executable } from "../../src/compiler/index.js";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation } from "../workloads/index.js";
import type { Workload } from "../workloads/specs.js";
import { literalOutputs, toLiterals } from "./xlats_interpreter.js";

export function createNativeRunner(threads: number): Runner {
  let device: WasmDevice | undefined;
  let cacheDir: string | undefined;
  return {
    name: "xlats-native",
    threads,
    init: async () => {
      cacheDir = mkdtempSync(join(tmpdir(), "xlats-bench-native-"));
      process.env["XLATS_NATIVE_CACHE"] = cacheDir;
      const t = nativeToolchain();
      if (typeof t === "string") return `no native backend here: ${t}`;
      device = await WasmDevice.create({ threads: 1 });
      return undefined;
    },
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared | string> => {
      if (device === undefined) return "device not created";
      let exe: Executable;
      try {
        exe = await compile(buildComputation(w), { device, backend: "native", threads });
      } catch (e) {
        return `compile failed: ${(e as Error).message.split("\n")[0]}`;
      }
      const args: DeviceArray[] = toLiterals(w, inputs).map((a) => device!.bufferFromLiteral(a));
      const native = exe.stats.native;
      return {
        run: () => { for (const out of exe.execute(args)) out.delete(); },
        result: () => {
          const outs = exe.execute(args);
          const values = outs.flatMap((o) => literalOutputs(o.toLiteral()));
          for (const o of outs) o.delete();
          return values;
        },
        ...(native !== undefined ? { compileMs: native.compileMs } : {}),
        get peakBytes() { return exe.stats.peakBytes; },
        get detail() {
          const steps = exe.stats.interpreted;
          const notC = exe.stats.kernels - (native?.kernels ?? 0);
          const parts: string[] = [];
          if (notC > 0) parts.push(`${notC} of ${exe.stats.kernels} kernel(s) WebAssembly (no C generator took them)`);
          if (steps.length > 0) parts.push(`${steps.length} step(s) on the interpreter's kernels: ${[...new Set(steps.map((s) => `${s.name.replace(/[._]?\d+$/, "")} (${s.why})`))].join(", ")}`);
          const text = parts.join("; ");
          return text.length === 0 ? undefined : text.length > 300 ? `${text.slice(0, 297)}...` : text;
        },
        dispose: () => { for (const a of args) a.delete(); exe.delete(); },
      };
    },
    close: async () => {
      await device?.close();
      if (cacheDir !== undefined) rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}
