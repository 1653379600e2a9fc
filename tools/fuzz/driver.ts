// The fuzz driver: builds input `index` of a run from (seed, index) alone, hands inputs
// to worker processes one at a time each, and times every input: one that takes longer
// than the time guard is a hang (its worker is terminated and replaced), one that
// kills its worker (out of memory) a crash. Any surface (surfaces.ts) runs this way.
// Findings are saved as files to replay with `xlats`, `checkInput` or `--replay`.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Outcome, SavedInput } from "./check_input.js";
import { loadCorpus, type Corpus } from "./corpus.js";
import { surfaceOf, type SurfaceSpec } from "./surfaces.js";
import type { WorkReply, WorkRequest } from "./worker.js";

export interface FuzzOptions {
  /** What to fuzz (default: text). */
  readonly surface?: SurfaceSpec;
  /** The text surface's seeds (loaded when needed if absent). */
  readonly corpus?: Corpus;
  readonly seed: number;
  /** The first input's index (default 0): a long run can be done in chunks, each input the same as in one run. */
  readonly start?: number;
  readonly count: number;
  readonly workers: number;
  /** An input still running after this long is a hang. */
  readonly timeoutMs: number;
  /** Where findings are written (nothing is written when absent). */
  readonly findingsDir?: string;
  /** Called every so often with the number of inputs done. */
  readonly progress?: (done: number) => void;
}

export interface Finding {
  readonly index: number;
  /** What the input was: its seed (text), the program or batch (compiled)... */
  readonly input: string;
  readonly problem: "untyped" | "hang" | "crash" | "mismatch";
  /** Error name and first line (untyped), the disagreement (mismatch), or what happened (hang, crash). */
  readonly summary: string;
  readonly detail: string;
  /** The first saved file of the input (with `.txt` beside it: what was found). */
  readonly file?: string;
}

export interface FuzzReport {
  readonly inputs: number;
  readonly ok: number;
  /** Typed errors by phase and class name (`parse ParseError`). */
  readonly typed: ReadonlyMap<string, number>;
  readonly findings: readonly Finding[];
  readonly seconds: number;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** A worker's heap: enough for every seed program, small enough that a runaway allocation ends quickly. */
const WORKER_HEAP_MB = 1024;

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const typed = new Map<string, number>();
  const findings: Finding[] = [];
  let ok = 0;
  const end = (options.start ?? 0) + options.count;
  let next = options.start ?? 0;
  let done = 0;

  const spec = options.surface ?? { surface: "text" };
  let corpus = options.corpus;
  const surface = surfaceOf(spec, options.seed, () => (corpus ??= loadCorpus(repoRoot)));
  const record = (index: number, problem: Finding["problem"], summary: string, detail: string, saved?: SavedInput): void => {
    const input = saved ?? surface.input(index);
    let file: string | undefined;
    if (options.findingsDir !== undefined) {
      mkdirSync(options.findingsDir, { recursive: true });
      const base = path.join(options.findingsDir, `${problem}-${options.seed}-${index}-${input.name}`);
      for (const [extension, data] of input.files) writeFileSync(`${base}.${extension}`, data);
      file = `${base}.${input.files[0]![0]}`;
      writeFileSync(`${base}.txt`, `${summary}\ninput: ${input.name}\n\n${detail}\n`);
    }
    findings.push({ index, input: input.name, problem, summary, detail, ...(file !== undefined ? { file } : {}) });
  };

  const workerPath = fileURLToPath(new URL("./worker.js", import.meta.url));
  type Result = { outcome: Outcome } | { hang: true } | { crash: string };
  /** Waits for the worker's next message; a crash if it dies first. */
  const listen = (w: ChildProcess, onMessage: (m: unknown) => Result | undefined, timeoutMs?: number): Promise<Result> =>
    new Promise((resolve) => {
      const settle = (value: Result): void => {
        clearTimeout(timer);
        w.removeAllListeners();
        resolve(value);
      };
      // Past the guard, answers already received are read first (setImmediate runs after
      // the poll phase), so a busy driver does not mistake a slow reply for a hang.
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => setImmediate(() => settle({ hang: true })), timeoutMs);
      w.on("message", (m) => {
        const r = onMessage(m);
        if (r !== undefined) settle(r);
      });
      w.on("error", (e: Error) => settle({ crash: `${e.name}: ${e.message}` }));
      w.on("exit", (code, signal) => settle({ crash: `worker exited with ${signal ?? `code ${code}`}` }));
    });
  const lane = async (): Promise<void> => {
    let worker: ChildProcess | undefined;
    try {
      while (next < end) {
        if (worker === undefined) {
          const w = fork(workerPath, [String(options.seed), JSON.stringify(spec)], { execArgv: [`--max-old-space-size=${WORKER_HEAP_MB}`], serialization: "advanced", stdio: ["ignore", "ignore", "ignore", "ipc"] });
          const ready = await listen(w, (m) => (m === "ready" ? { outcome: { status: "ok" } } : undefined));
          if (!("outcome" in ready)) throw new Error(`fuzz worker failed to start: ${"crash" in ready ? ready.crash : "no answer"}`);
          worker = w;
        }
        if (next >= end) break;
        const w = worker;
        const index = next++;
        const answer = listen(w, (m) => ((m as WorkReply).index === index ? { outcome: (m as WorkReply).outcome } : undefined), options.timeoutMs);
        w.send({ index } satisfies WorkRequest);
        const result = await answer;
        if ("outcome" in result) {
          const o = result.outcome;
          if (o.status === "ok") ok++;
          else if (o.status === "typed") typed.set(`${o.phase} ${o.name}`, (typed.get(`${o.phase} ${o.name}`) ?? 0) + 1);
          else if (o.status === "mismatch") record(index, "mismatch", `${o.phase}: ${o.message.split("\n")[0]}`, o.message, o.input);
          else record(index, "untyped", `${o.phase}: ${o.name}: ${o.message.split("\n")[0]}`, o.stack);
        } else {
          w.kill("SIGKILL");
          worker = undefined;
          if ("hang" in result) record(index, "hang", `no answer in ${options.timeoutMs} ms`, "");
          else record(index, "crash", result.crash, "");
        }
        done++;
        if (done % 1000 === 0) options.progress?.(done);
      }
    } finally {
      worker?.kill("SIGKILL");
    }
  };
  await Promise.all(Array.from({ length: options.workers }, lane));
  return { inputs: done, ok, typed, findings, seconds: (Date.now() - started) / 1000 };
}
