// xlats' compilers: the WebAssembly backend (one device per thread count: the device owns
// the threads) or the native one (the program's kernels as C, built by the machine's C
// compiler into a Node-API module; `threads` is the module's own thread count). Programs
// are compiled for the device, arguments put on it once, `execute` timed on device arrays.
// The native runner builds into a fresh cache directory, so every program's first
// compile is a real compiler run, and its time is reported beside the figure.

import { compile, WasmDevice, type DeviceArray, type Executable } from "../../src/compiler/index.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation, type WeightsAs } from "../workloads/index.js";
import { donatedInputs, type Workload } from "../workloads/specs.js";
import { literalOutputs, toLiterals } from "./xlats_interpreter.js";

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 297)}...` : text);

/** How the runner gives a workload's weights: the workloads' own choices, or parameters marked as weights (compile's `weights`). */
export type XlatsWeights = WeightsAs | "marked parameters";

/**
 * `weightsAs` "parameters": the workload's weights are fed on every run instead of being
 * the program's constants (for comparison: their GEMMs pack B on every call); "marked
 * parameters": fed so, and marked as weights, so that their GEMMs pack each weight once
 * (the same device arrays are passed to every run). The workload's donatedInputs (the decode
 * step's caches) are donated to each run and taken back from its outputs, as a decode
 * loop does; `donate` false keeps them (every run writes new caches), for comparison.
 */
export function createCompiledRunner(backend: "wasm" | "native", threads: number, weightsAs: XlatsWeights = "constants", donate = true): Runner {
  const fed: WeightsAs = weightsAs === "constants" ? "constants" : "parameters";
  const native = backend === "native";
  let device: WasmDevice | undefined;
  let removeCacheDir = (): void => {};
  return {
    name: `xlats-${backend}`,
    threads,
    init: async () => {
      if (native) {
        // Node's modules only here: the browser bench runs xlats-wasm from this file too.
        const [{ mkdtempSync, rmSync }, { tmpdir }, { join }, { nativeToolchain }] = await Promise.all([
          import("node:fs"), import("node:os"), import("node:path"), import("../../src/compiler/native/toolchain.js")]);
        const dir = mkdtempSync(join(tmpdir(), "xlats-bench-native-"));
        removeCacheDir = () => rmSync(dir, { recursive: true, force: true });
        process.env["XLATS_NATIVE_CACHE"] = dir;
        const t = nativeToolchain();
        if (typeof t === "string") return `no native backend here: ${t}`;
      }
      device = await WasmDevice.create({ threads: native ? 1 : threads });
      return undefined;
    },
    setup: async (w: Workload, inputs: Float32Array[], shapes: readonly (readonly number[])[], firstWeight: number): Promise<Prepared | string> => {
      if (device === undefined) return "device not created";
      let exe: Executable;
      const donated = donate ? donatedInputs(w) : [];
      // Fed as parameters, the weights are the parameters from firstWeight on.
      const weights = weightsAs === "marked parameters" ? Array.from({ length: shapes.length - firstWeight }, (_, i) => firstWeight + i) : [];
      try {
        exe = await compile(buildComputation(w, inputs, fed), {
          device, ...(native ? { backend: "native", threads } : {}), ...(donated.length > 0 ? { donate: donated } : {}),
          ...(weights.length > 0 ? { weights } : {}),
        });
      } catch (e) {
        return `compile failed: ${(e as Error).message.split("\n")[0]}`;
      }
      const args: DeviceArray[] = toLiterals(w, inputs, fed).map((a) => device!.bufferFromLiteral(a));
      // One run: its outputs, the donated inputs' taken back as the next run's arguments.
      const step = (): { outs: DeviceArray[]; free: () => void } => {
        const outs = exe.execute(args);
        for (const i of donated) args[i] = outs[i]!;
        return { outs, free: () => outs.forEach((o, i) => { if (!donated.includes(i)) o.delete(); }) };
      };
      const module = exe.stats.native;
      return {
        run: () => step().free(),
        result: () => {
          const { outs, free } = step();
          const values = outs.flatMap((o) => literalOutputs(o.toLiteral()));
          free();
          return values;
        },
        ...(module !== undefined ? { compileMs: module.compileMs } : {}),
        get peakBytes() { return exe.stats.peakBytes; },
        get detail() {
          const steps = exe.stats.interpreted;
          const parts: string[] = [];
          const notC = native ? exe.stats.kernels - (module?.kernels ?? 0) : 0;
          if (notC > 0) parts.push(`${notC} of ${exe.stats.kernels} kernel(s) WebAssembly (no C generator took them)`);
          if (steps.length > 0) parts.push(`${steps.length} step(s) on the interpreter's kernels: ${[...new Set(steps.map((s) => `${s.name.replace(/[._]?\d+$/, "")} (${s.why})`))].join(", ")}`);
          return parts.length === 0 ? undefined : clip(parts.join("; "));
        },
        dispose: () => {
          for (const a of args) a.delete();
          exe.delete();
        },
      };
    },
    close: async () => {
      await device?.close();
      removeCacheDir();
    },
  };
}
