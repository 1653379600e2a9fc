// Builds one-function modules with the encoder and runs them against a fresh memory.

import assert from "node:assert/strict";
import { ModuleBuilder, type FunctionBuilder, type ValType } from "../../../src/compiler/wasm/encoder.js";
import { MEMORY_MAX_PAGES } from "../../../src/compiler/wasm/kernel.js";

export interface Built {
  readonly run: (...args: number[]) => number;
  readonly memory: WebAssembly.Memory;
  readonly bytes: Uint8Array;
}

/** A module exporting `run`, importing a memory of `pages` pages (shared when asked). */
export function buildRun(params: ValType[], results: ValType[], body: (f: FunctionBuilder) => void, options: { shared?: boolean; pages?: number; extra?: (m: ModuleBuilder) => void } = {}): Built {
  const shared = options.shared ?? false;
  const m = new ModuleBuilder().importMemory({ sharedMemory: shared });
  options.extra?.(m);
  m.addFunction("run", params, results, body);
  const bytes = m.finish();
  assert.ok(WebAssembly.validate(bytes), "module must validate");
  const memory = new WebAssembly.Memory({ initial: options.pages ?? 1, maximum: MEMORY_MAX_PAGES, shared });
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
  return { run: instance.exports["run"] as (...args: number[]) => number, memory, bytes };
}
