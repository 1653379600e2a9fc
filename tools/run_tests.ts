// `npm test` after the build: the default run (every test file under dist/test/, each in
// a process of its own) and the op suites' reruns on the other backends (tools/test_plan.ts),
// as ONE `node --test`, longest first. Run one after the other, the
// default run's last long file and each rerun's last shard left a core idle at their ends
// (Shardy's lit tests alone were about 290 s of one core), and the reruns waited for the
// default run to finish; in one queue the two file slots stay busy until the very end.
//
// `node --test` sorts the files it is given, so the order is set by name: the run's
// files are symbolic links (default run) and entry modules (reruns) in a temporary
// folder, named `NNNN~path~of~the~file.js` with NNNN the file's rank by its expected time,
// tools/test_times.json: each file's CPU seconds, its children's included (the C compiler,
// the commands it starts), which on two cores kept busy is about the time it holds a core
// and, unlike wall time, hardly moves with the load of a shared machine. `node
// dist/tools/run_tests.js --record` runs the tests and rewrites the table
// (tools/test_times_probe.ts); a file not in it counts as UNKNOWN_SECONDS. A link runs as
// the file itself: Node loads a main module from its real path, so its import.meta.url,
// its folder and its package's module type are the file's own.
//
// The closing lines are node's test runner's summary of every test of both runs; the exit
// code is node's (1 when a test failed).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BACKEND_NAMES, type BackendName } from "../src/compiler/backends.js";
import { availability, dealFiles, defaultRunFiles, LAVAPIPE_ICD, lavapipeTestFiles, rerunTests, skippedLine, testFiles, writeAdapterEntry, writeRerunEntry } from "./test_plan.js";

const TIMES = "tools/test_times.json";
/** The expected seconds of a file the table does not know yet: most files take a few seconds. */
const UNKNOWN_SECONDS = 5;
/** The processes each rerun is dealt into: about 15 files each, each file's tests as in a process of their own. */
const RERUN_SHARDS = 4;
/** Files at once, as `npm test`'s `node --test --test-concurrency=2` always ran them. */
const CONCURRENCY = 2;

interface Times {
  readonly measured: string;
  /** CPU seconds by key: a default-run file's path under dist/test/, or `rerun:BACKEND` (the rerun's shards together). */
  readonly seconds: Record<string, number>;
}

const args = process.argv.slice(2);
const record = args.includes("--record");
for (const a of args) {
  if (a !== "--record") {
    process.stderr.write(`run_tests: unknown argument "${a}" (usage: node dist/tools/run_tests.js [--record])\n`);
    process.exit(2);
  }
}

const times = JSON.parse(readFileSync(TIMES, "utf8")) as Times;
const expected = (key: string): number => times.seconds[key] ?? UNKNOWN_SECONDS;

interface Job {
  /** The key of tools/test_times.json. */
  readonly key: string;
  readonly seconds: number;
  /** Writes the job's file in `dir`, its name starting with `rank`; returns its path. */
  readonly write: (dir: string, rank: string) => string;
}

const jobs: Job[] = defaultRunFiles().map((file) => {
  const key = relative("dist/test", file);
  return {
    key, seconds: expected(key),
    write: (dir, rank) => {
      const link = join(dir, `${rank}~${key.replaceAll("/", "~")}`);
      symlinkSync(file, link);
      return link;
    },
  };
});

for (const name of BACKEND_NAMES.filter((n): n is BackendName => n !== "interpreter")) {
  const available = await availability(name);
  if (available !== true) {
    process.stdout.write(skippedLine(name, available));
    continue;
  }
  const files = testFiles(rerunTests(name, false));
  const shards = dealFiles(files, RERUN_SHARDS);
  process.stdout.write(`test:${name}: the op suites rerun, ${files.length} files in ${shards.length} processes\n`);
  shards.forEach((shard, i) => jobs.push({
    key: `rerun:${name}`, seconds: expected(`rerun:${name}`) / shards.length,
    write: (dir, rank) => {
      const entry = join(dir, `${rank}~rerun-${name}-${i + 1}-of-${shards.length}.mjs`);
      writeRerunEntry(name, shard, entry);
      return entry;
    },
  }));
}

// The WebGPU backend's own tests again on lavapipe, where tools/install_lavapipe.sh put it, the kernels in a GPU's forms.
if (!existsSync(LAVAPIPE_ICD)) {
  process.stdout.write(`test:webgpu on lavapipe skipped: no ${LAVAPIPE_ICD} (bash tools/install_lavapipe.sh installs it)\n`);
} else {
  const files = lavapipeTestFiles();
  const shards = dealFiles(files, RERUN_SHARDS);
  process.stdout.write(`test:webgpu on lavapipe: ${files.length} files of test/compiler/webgpu/ in ${shards.length} processes, the kernels in a GPU's forms\n`);
  shards.forEach((shard, i) => jobs.push({
    key: "lavapipe:webgpu", seconds: expected("lavapipe:webgpu") / shards.length,
    write: (dir, rank) => {
      const entry = join(dir, `${rank}~lavapipe-webgpu-${i + 1}-of-${shards.length}.mjs`);
      writeAdapterEntry(LAVAPIPE_ICD, shard, entry);
      return entry;
    },
  }));
}

// Longest first (ties by key, so the order is the same from run to run).
jobs.sort((a, b) => b.seconds - a.seconds || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
const dir = mkdtempSync(join(tmpdir(), "xlats-test-"));
let status = 1;
try {
  const width = String(jobs.length).length;
  const paths = jobs.map((job, i) => job.write(dir, String(i + 1).padStart(width, "0")));
  const log = join(dir, "times.log");
  const env = record ? { ...process.env, XLATS_TEST_TIMES_LOG: log, NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --import ${pathToFileURL(resolve("dist/tools/test_times_probe.js")).href}` } : process.env;
  const r = spawnSync(process.execPath, ["--test", `--test-concurrency=${CONCURRENCY}`, ...paths], { stdio: "inherit", env });
  status = r.status ?? 1;
  if (record) recordTimes(existsSync(log) ? readFileSync(log, "utf8") : "", new Map(paths.map((p, i) => [p, jobs[i]!.key])));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);

/** Rewrites tools/test_times.json with the run's CPU seconds: each file's process and its children, a rerun's shards summed. */
function recordTimes(log: string, keys: ReadonlyMap<string, string>): void {
  const seconds: Record<string, number> = {};
  for (const line of log.split("\n").filter((l) => l !== "")) {
    const { script, cpu } = JSON.parse(line) as { script: string; cpu: number };
    const key = keys.get(script);
    // Other processes (the commands and children the tests start) log too: not the run's files.
    if (key !== undefined) seconds[key] = Math.round(((seconds[key] ?? 0) + cpu) * 10) / 10;
  }
  const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(TIMES, JSON.stringify({ measured: `${new Date().toISOString()}: node dist/tools/run_tests.js --record (each file's CPU seconds, its children's included)`, seconds: sorted }, null, 1) + "\n");
  process.stdout.write(`run_tests: ${Object.keys(sorted).length} files' times written to ${TIMES}\n`);
}
