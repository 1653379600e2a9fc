// xlats' WebAssembly compiler. Loaded through an import path held in a variable, so the
// harness builds and runs before src/compiler/index.ts exists: the table then says
// "n/a: compiler not built yet". The API it expects:
//   const exe = await compile(computation, { backend: "wasm", threads });
//   const bufs = args.map((a) => exe.device.bufferFromLiteral(a));
//   exe.execute(bufs) → DeviceArray (toLiteral(), delete()); exe.stats?.peakBytes

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
  readonly stats?: { readonly peakBytes?: number };
  dispose?(): void;
}

interface CompilerModule {
  compile(computation: Computation, options: { backend: "wasm"; threads: number }): Promise<ExecutableLike>;
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
      if (code === "ERR_MODULE_NOT_FOUND") return "compiler not built yet";
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
  return {
    name: "xlats-wasm",
    threads,
    init: async () => {
      const m = await loadCompiler();
      if (typeof m === "string") return m;
      compiler = m;
      return undefined;
    },
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared | string> => {
      if (compiler === undefined) return "compiler not loaded";
      let exe: ExecutableLike;
      try {
        exe = await compiler.compile(buildComputation(w), { backend: "wasm", threads });
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
        dispose: () => { for (const a of args) a.delete(); exe.dispose?.(); },
      };
    },
  };
}
