// xlats' WebAssembly compiler. Loaded through an import path held in a variable, so the
// harness builds and runs wherever src/compiler/index.ts is missing or broken: the table
// then says "n/a: why". The API it uses:
//   const device = new WasmDevice({ threads });
//   const exe = await compile(computation, { backend: "wasm", device, threads });
//   const bufs = args.map((a) => exe.device.bufferFromLiteral(a));
//   exe.execute(bufs) → DeviceArray[] (one per array leaf of the result; toLiteral(), delete())
//   exe.stats?.peakBytes; exe.delete()

import type { Computation, Literal } from "../../src/index.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation } from "../workloads/index.js";
import type { Workload } from "../workloads/specs.js";
import { literalOutputs, toLiterals } from "./xlats_interpreter.js";

interface DeviceArrayLike {
  toLiteral(): Literal;
  delete(): void;
}

interface ExecutableLike {
  readonly device: { bufferFromLiteral(literal: Literal): DeviceArrayLike };
  execute(args: readonly DeviceArrayLike[]): DeviceArrayLike | readonly DeviceArrayLike[];
  readonly stats?: { readonly peakBytes?: number; readonly interpreted?: readonly { readonly name: string; readonly why?: string }[] };
  delete?(): void;
}

interface CompilerModule {
  compile(computation: Computation, options: { backend: "wasm"; threads: number; device?: unknown }): Promise<ExecutableLike>;
  /** One device per thread count: the device owns the threads. */
  WasmDevice?: new (options: { threads: number }) => unknown;
}

const COMPILER_PATH = "../../src/compiler/index.js";

let compilerModule: Promise<CompilerModule | string> | undefined;

function loadCompiler(): Promise<CompilerModule | string> {
  compilerModule ??= (async () => {
    const url = new URL(COMPILER_PATH, import.meta.url);
    try {
      const m = (await import(url.href)) as Partial<CompilerModule>;
      return typeof m.compile === "function" ? (m as CompilerModule) : "compiler has no compile()";
    } catch (e) {
      const code = (e as { code?: string }).code;
      // Only the compiler's own entry point missing means "not built"; a missing import inside it is an error.
      if (code === "ERR_MODULE_NOT_FOUND" && (e as Error).message.includes(url.pathname)) return "compiler not built yet";
      return `compiler failed to load: ${(e as Error).message}`;
    }
  })();
  return compilerModule;
}

function outputsOf(result: DeviceArrayLike | readonly DeviceArrayLike[]): DeviceArrayLike[] {
  return Array.isArray(result) ? [...(result as readonly DeviceArrayLike[])] : [result as DeviceArrayLike];
}

export function createWasmRunner(threads: number): Runner {
  let compiler: CompilerModule | undefined;
  let device: unknown;
  return {
    name: "xlats-wasm",
    threads,
    init: async () => {
      const m = await loadCompiler();
      if (typeof m === "string") return m;
      compiler = m;
      device = m.WasmDevice !== undefined ? new m.WasmDevice({ threads }) : undefined;
      return undefined;
    },
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared | string> => {
      if (compiler === undefined) return "compiler not loaded";
      let exe: ExecutableLike;
      try {
        exe = await compiler.compile(buildComputation(w), { backend: "wasm", threads, ...(device !== undefined ? { device } : {}) });
      } catch (e) {
        return `compile failed: ${(e as Error).message.split("\n")[0]}`;
      }
      const args = toLiterals(w, inputs).map((a) => exe.device.bufferFromLiteral(a));
      return {
        run: () => { for (const out of outputsOf(exe.execute(args))) out.delete(); },
        result: () => {
          const outs = outputsOf(exe.execute(args));
          const values = outs.flatMap((o) => literalOutputs(o.toLiteral()));
          for (const o of outs) o.delete();
          return values;
        },
        get peakBytes() { return exe.stats?.peakBytes; },
        get detail() {
          const steps = exe.stats?.interpreted ?? [];
          if (steps.length === 0) return undefined;
          const reasons = [...new Set(steps.map((s) => `${s.name.replace(/[._]?\d+$/, "")}${s.why !== undefined ? ` (${s.why})` : ""}`))];
          const text = `${steps.length} step(s) on the interpreter's kernels: ${reasons.join(", ")}`;
          return text.length > 300 ? `${text.slice(0, 297)}...` : text;
        },
        dispose: () => { for (const a of args) a.delete(); exe.delete?.(); },
      };
    },
  };
}
