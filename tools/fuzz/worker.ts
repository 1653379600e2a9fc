// A fuzz worker process: builds input `index` of the run itself (from the seed and the
// surface the driver passes as its arguments) and sends back the outcome of checking
// it. The driver times every input, so a hang here is seen and this process killed; a
// process (not a thread) so that running out of memory, or a crash in native code,
// kills only it.

import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Outcome } from "./check_input.js";
import { loadCorpus, type Corpus } from "./corpus.js";
import { surfaceOf, type SurfaceSpec } from "./surfaces.js";

export interface WorkRequest {
  readonly index: number;
}

export interface WorkReply {
  readonly index: number;
  readonly outcome: Outcome;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const spec = JSON.parse(process.argv[3]!) as SurfaceSpec;
// The text surface's seeds are loaded before "ready", outside every input's time guard.
let corpus: Corpus | undefined = spec.surface === "text" ? loadCorpus(repoRoot) : undefined;
const surface = surfaceOf(spec, Number(process.argv[2]), () => (corpus ??= loadCorpus(repoRoot)));

process.on("message", (request: WorkRequest) => {
  void (async () => {
    process.send!({ index: request.index, outcome: await surface.check(request.index) } satisfies WorkReply);
  })();
});
process.on("disconnect", () => void surface.close().finally(() => process.exit(0)));
await surface.prepare();
process.send!("ready");
