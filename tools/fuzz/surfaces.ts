// The fuzzer's surfaces, each a way to make input `index` of a run from (seed, index)
// alone and to check it: `text` (mutated conformance programs through the parsers,
// the verifier and the interpreter), `compiled` (random programs on a compiled backend
// against the interpreter), `arrays` (.npy and .npz bytes) and `sharded` (random
// programs on random meshes, partitioned and run on a client's devices against the
// unsharded interpreter). The driver runs any of them in worker processes.

import type { Outcome, SavedInput } from "./check_input.js";
import { checkInput } from "./check_input.js";
import type { Corpus } from "./corpus.js";
import { compiledInput, compiledOutcome, type CompiledBackend } from "./compiled.js";
import { arraysInput, arraysOutcome } from "./arrays.js";
import { shardedInput, ShardedChecker } from "./sharded.js";
import { fuzzInput } from "./text_input.js";

export type SurfaceSpec =
  | { readonly surface: "text" }
  | { readonly surface: "compiled"; readonly backend: CompiledBackend; readonly batch: number }
  | { readonly surface: "arrays" }
  | { readonly surface: "sharded" };

export interface Surface {
  /** Checks input `index` (in a worker process: it may crash or hang). */
  check(index: number): Outcome | Promise<Outcome>;
  /** Input `index` as saved with a finding. */
  input(index: number): SavedInput;
  /** Gets ready to check (a sharded run's client, warmed up), before any input's time guard starts. */
  prepare(): Promise<void>;
  /** Frees what checking holds (a sharded run's client). */
  close(): Promise<void>;
}

/** The surface of `spec` for the run with `seed`; the text surface draws on `corpus`. */
export function surfaceOf(spec: SurfaceSpec, seed: number, corpus: () => Corpus): Surface {
  const none = async (): Promise<void> => {};
  switch (spec.surface) {
    case "text": {
      const textOf = (index: number) => fuzzInput(corpus(), seed, index);
      return {
        check: (index) => {
          const input = textOf(index);
          return checkInput(input.kind, input.text);
        },
        input: (index) => {
          const input = textOf(index);
          return { name: input.seedName.replace(/[^A-Za-z0-9_.-]/g, "_"), files: [[input.kind === "mlir" ? "mlir" : "hlo", input.text]] };
        },
        prepare: none,
        close: none,
      };
    }
    case "compiled":
      return { check: (index) => compiledOutcome(seed, index, spec.batch, spec.backend), input: (index) => compiledInput(seed, index, spec.batch), prepare: none, close: none };
    case "arrays":
      return { check: (index) => arraysOutcome(seed, index), input: (index) => arraysInput(seed, index), prepare: none, close: none };
    case "sharded": {
      const checker = new ShardedChecker(seed);
      return { check: (index) => checker.check(index), input: (index) => shardedInput(seed, index), prepare: async () => void (await checker.prepare()), close: () => checker.close() };
    }
  }
}
