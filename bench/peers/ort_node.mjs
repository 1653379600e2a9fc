// onnxruntime-node: the native CPU build (not WebAssembly: a reference for what the
// hardware can do from Node). Threads: intraOpNumThreads per session, its pool threads
// not spinning after a run (allow_spinning 0): the bench runs every peer in one process,
// and a spinning pool would take a core from whichever runner is timed next.

import { createRequire } from "node:module";
import { createOrtRunner } from "./ort_common.mjs";

export function createRunner({ threads }) {
  return createOrtRunner({
    name: "ort-node",
    threads,
    load: async () => {
      try {
        return createRequire(import.meta.url)("onnxruntime-node");
      } catch (e) {
        return `onnxruntime-node did not load: ${String(e.message ?? e).split("\n")[0]}`;
      }
    },
    sessionOptions: (n) => ({
      executionProviders: ["cpu"], intraOpNumThreads: n, interOpNumThreads: 1,
      extra: { session: { intra_op: { allow_spinning: "0" } } },
    }),
  });
}
