// `npm run fuzz -- [options]`: the project's fuzzer (`--help` lists the options). Every
// surface makes input i of a run from (seed, i) alone, checks it in worker processes
// under a time guard, and reports every error that is not one of xlats' typed errors,
// every wrong answer, crash and hang; it exits 1 when it finds any, and saves each
// finding's input under --findings.

import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadCorpus } from "./fuzz/corpus.js";
import { runFuzz, type Finding } from "./fuzz/driver.js";
import { fuzzBuilder } from "./fuzz/builder.js";
import { replayCompiled, type CompiledBackend } from "./fuzz/compiled.js";
import type { SurfaceSpec } from "./fuzz/surfaces.js";

const HELP = `usage: npm run fuzz -- [--surface S] [options]

surfaces:
  text       (default) mutated StableHLO conformance programs and their HLO text:
             parse, verify, evaluate
  builder    random programs through the builder API, valid and not: build, verify,
             print, read back, evaluate (in this process)
  compiled   random valid programs compiled on --backend and run, each output compared
             with the interpreter (bit-exact, or within the documented ulp bounds)
  arrays     random and mutated .npy and .npz files: read, write back, read again
  sharded    random programs on random meshes (up to 8 devices) with random
             shardings, partitioned and run on a client, compared with the
             unsharded interpreter run

options:
  --count N        inputs to run (default 100000; builder 10000); compiled: programs
  --start I        the first input's index (default 0): runs inputs I .. I+N-1, so a
                   long run can be done in chunks; compiled: a program's index, a
                   multiple of --batch
  --seed S         the run's seed (default 1): input i is the same for the same seed
  --workers W      worker processes (default: cores, at most 4)
  --timeout-ms T   an input running longer is a hang (default 10000; sharded 60000;
                   compiled batches 1000 more per program past the first)
  --findings DIR   where findings are saved (default fuzz-findings)
  --backend B      compiled: wasm (default) or native
  --batch K        compiled: programs per compiled module (default 1 on wasm, 32 on
                   native): one compile checks K programs, each compared with its own
                   interpreter run
  --replay FILE    compiled: run a saved program (FILE.hlo, arguments from FILE.npz)
                   on --backend and compare it with the interpreter
  --help           this text
`;

// This file runs as dist/tools/fuzz.js: the checkout is two levels up.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const argv = process.argv.slice(2);

function text(name: string): string | undefined {
  const at = argv.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`--${name} takes a value (see --help)`);
  return value;
}

function option(name: string, otherwise: number): number {
  const given = text(name);
  if (given === undefined) return otherwise;
  const value = Number(given);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number, got '${given}'`);
  return value;
}

function choice<T extends string>(name: string, choices: readonly T[], otherwise: T): T {
  const given = text(name) ?? otherwise;
  if (!(choices as readonly string[]).includes(given)) throw new Error(`--${name} takes ${choices.join(", ")}, got '${given}'`);
  return given as T;
}

function main(): Promise<number> | number {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(HELP);
    return 0;
  }
  const surface = choice("surface", ["text", "builder", "compiled", "arrays", "sharded"] as const, "text");
  const backend = choice<CompiledBackend>("backend", ["wasm", "native"], "wasm");
  const replay = text("replay");
  if (replay !== undefined) {
    const problem = replayCompiled(replay, backend);
    console.log(problem === undefined ? `${replay}: ${backend} agrees with the interpreter` : `${replay}: ${problem}`);
    return problem === undefined ? 0 : 1;
  }
  const seed = option("seed", 1);
  if (surface === "builder") {
    const count = option("count", 10_000);
    const started = Date.now();
    const report = fuzzBuilder(seed, count, option("timeout-ms", 5_000));
    console.log(`fuzz builder: ${report.programs} programs in ${((Date.now() - started) / 1000).toFixed(1)} s, seed ${seed}: ${report.ran} ran`);
    for (const [key, n] of [...report.typed].sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${key}`);
    console.log(`fuzz builder: ${report.findings.length} untyped errors`);
    for (const f of report.findings.slice(0, 50)) console.log(`  program ${f.program} (${f.step}): ${f.error}`);
    return report.findings.length === 0 ? 0 : 1;
  }
  return fuzzWorkers(surface, seed, backend);
}

async function fuzzWorkers(surface: SurfaceSpec["surface"], seed: number, backend: CompiledBackend): Promise<number> {
  const batch = surface === "compiled" ? option("batch", backend === "native" ? 32 : 1) : 1;
  if (batch < 1) throw new Error("--batch takes at least 1");
  const spec: SurfaceSpec = surface === "compiled" ? { surface, backend, batch } : { surface };
  const findingsDir = path.resolve(text("findings") ?? "fuzz-findings");
  // The compiled surface counts programs; its driver's inputs are batches of them.
  const start = option("start", 0);
  if (start % batch !== 0) throw new Error(`--start takes a multiple of --batch (${batch}), got ${start}`);
  const options = {
    seed,
    start: start / batch,
    count: Math.ceil(option("count", 100_000) / batch),
    workers: option("workers", Math.max(1, Math.min(4, os.availableParallelism()))),
    // A sharded input may first remake and warm up its client's devices (seconds each on a
    // loaded machine); a batch's compile grows with its programs (gcc: about 0.25 s each at load 20).
    timeoutMs: option("timeout-ms", surface === "sharded" ? 60_000 : 10_000 + (batch - 1) * 1_000),
  };
  const name = surface === "compiled" ? `compiled ${backend}` : surface;
  const corpus = surface === "text" ? loadCorpus(repoRoot) : undefined;
  const unit = batch > 1 ? ` programs (batches of ${batch})` : " inputs";
  console.log(`fuzz ${name}: ${corpus !== undefined ? `${corpus.seeds.length} seeds, ` : ""}${options.count * batch}${unit}${start > 0 ? ` from ${start}` : ""}, seed ${seed}, ${options.workers} workers`);
  const report = await runFuzz({
    ...options, surface: spec, findingsDir, ...(corpus !== undefined ? { corpus } : {}),
    progress: (done) => { if ((done * batch) % (surface === "compiled" ? 1_000 : 10_000) < batch) console.log(`  ${done * batch}${unit}`); },
  });
  let typedCount = 0;
  for (const n of report.typed.values()) typedCount += n;
  const rate = `${(report.inputs * batch / report.seconds).toFixed(2)}${batch > 1 ? " programs" : " inputs"}/s`;
  console.log(`fuzz ${name}: ${report.inputs * batch}${unit} in ${report.seconds.toFixed(1)} s (${rate}): ${report.ok} ${batch > 1 ? "batches " : ""}ran clean, ${typedCount} typed errors`);
  for (const [key, n] of [...report.typed].sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${key}`);
  const groups = new Map<string, Finding[]>();
  for (const f of report.findings) {
    const key = `${f.problem}: ${f.summary}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const count = (problem: Finding["problem"]): number => report.findings.filter((f) => f.problem === problem).length;
  console.log(`fuzz ${name}: ${count("untyped")} untyped errors, ${count("mismatch")} wrong answers, ${count("hang")} hangs, ${count("crash")} crashes`);
  for (const [key, fs] of groups) console.log(`  ${fs.length}\t${key.slice(0, 200)}\n\te.g. ${fs[0]!.file ?? `input ${fs[0]!.index}`}`);
  return report.findings.length === 0 ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (e) {
  process.stderr.write(`fuzz: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
