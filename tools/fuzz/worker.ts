// A fuzz worker process: builds input `index` of the run itself (from the seed the
// driver passes as its argument) and sends back the outcome of checking it. The driver
// times every input, so a hang here is seen and this process killed; a process (not a
// thread) so that running out of memory kills only it.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkInput, type Outcome } from "./check_input.js";
import { loadCorpus } from "./corpus.js";
import { fuzzInput } from "./driver.js";

export interface WorkRequest {
  readonly index: number;
}

export interface WorkReply {
  readonly index: number;
  readonly outcome: Outcome;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const corpus = loadCorpus(repoRoot);
const seed = Number(process.argv[2]);

process.on("message", (request: WorkRequest) => {
  const input = fuzzInput(corpus, seed, request.index);
  process.send!({ index: request.index, outcome: checkInput(input.kind, input.text) } satisfies WorkReply);
});
process.send!("ready");
