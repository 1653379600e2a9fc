// `npm run fuzz [-- --count N --seed S --workers W --timeout-ms T --findings DIR]`:
// mutates the StableHLO conformance files (and the HLO text printed from them), runs
// every input through parse, verify and (small programs) evaluation under a time
// guard, and reports every error that is not one of xlats' typed errors and every
// hang. Exits 1 when it finds any; the inputs are saved under --findings.
// `npm run fuzz -- --surface builder [--count N --seed S]` builds random programs
// through the builder API instead (fuzz/builder.ts) and runs them on the interpreter.

import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadCorpus } from "./fuzz/corpus.js";
import { runFuzz } from "./fuzz/driver.js";
import { fuzzBuilder } from "./fuzz/builder.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function option(name: string, otherwise: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return otherwise;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number, got '${process.argv[at + 1]}'`);
  return value;
}

const surfaceAt = process.argv.indexOf("--surface");
const surface = surfaceAt >= 0 ? process.argv[surfaceAt + 1] : "text";
if (surface !== "text" && surface !== "builder") throw new Error(`--surface takes text or builder, got '${surface}'`);
if (surface === "builder") {
  const seed = option("seed", 1), count = option("count", 10_000);
  const started = Date.now();
  const report = fuzzBuilder(seed, count, option("timeout-ms", 5_000));
  console.log(`fuzz builder: ${report.programs} programs in ${((Date.now() - started) / 1000).toFixed(1)} s, seed ${seed}: ${report.ran} ran`);
  for (const [key, n] of [...report.typed].sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${key}`);
  console.log(`fuzz builder: ${report.findings.length} untyped errors`);
  for (const f of report.findings.slice(0, 50)) console.log(`  program ${f.program} (${f.step}): ${f.error}`);
  process.exit(report.findings.length === 0 ? 0 : 1);
}

const findingsAt = process.argv.indexOf("--findings");
const findingsDir = path.resolve(findingsAt >= 0 ? process.argv[findingsAt + 1]! : "fuzz-findings");
const options = {
  seed: option("seed", 1),
  count: option("count", 100_000),
  workers: option("workers", Math.max(1, Math.min(4, os.availableParallelism()))),
  timeoutMs: option("timeout-ms", 10_000),
};
const corpus = loadCorpus(repoRoot);
console.log(`fuzz: ${corpus.seeds.length} seeds, ${options.count} inputs, seed ${options.seed}, ${options.workers} workers`);
const report = await runFuzz({
  ...options, corpus, findingsDir,
  progress: (done) => { if (done % 10_000 === 0) console.log(`  ${done} inputs`); },
});
console.log(`fuzz: ${report.inputs} inputs in ${report.seconds.toFixed(1)} s: ${report.ok} ran clean, ` +
  `${[...report.typed.values()].reduce((a, b) => a + b, 0)} typed errors`);
for (const [key, n] of [...report.typed].sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${key}`);
const groups = new Map<string, typeof report.findings[number][]>();
for (const f of report.findings) groups.set(`${f.problem}: ${f.summary}`, [...(groups.get(`${f.problem}: ${f.summary}`) ?? []), f]);
const untyped = report.findings.filter((f) => f.problem === "untyped").length;
const hangs = report.findings.filter((f) => f.problem === "hang").length;
const crashes = report.findings.filter((f) => f.problem === "crash").length;
console.log(`fuzz: ${untyped} untyped errors, ${hangs} hangs, ${crashes} crashes`);
for (const [key, fs] of groups) console.log(`  ${fs.length}\t${key.slice(0, 200)}\n\te.g. ${fs[0]!.file ?? `input ${fs[0]!.index}`}`);
process.exitCode = report.findings.length === 0 ? 0 : 1;
