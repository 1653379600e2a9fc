// One backend's rerun of the op suites, or each available backend's one after the other:
// `node dist/tools/test_backends.js wasm` (npm run test:wasm, test:native, test:webgpu).
// What a rerun holds and how its files are laid out into processes: tools/test_plan.ts.
// `npm test` runs the reruns beside the default run, in one `node --test`
// (tools/run_tests.ts).

import { mkdtempSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { BACKEND_NAMES, type BackendName } from "../src/compiler/backends.js";
import { availability, dealFiles, rerunTests, skippedLine, testFiles, writeRerunEntry } from "./test_plan.js";

const asked = process.argv.slice(2);
for (const name of asked) {
  if (!(BACKEND_NAMES as readonly string[]).includes(name)) {
    process.stderr.write(`test_backends: unknown backend "${name}" (the table has: ${BACKEND_NAMES.join(", ")})\n`);
    process.exit(2);
  }
}
const names = asked.length > 0 ? (asked as BackendName[]) : BACKEND_NAMES.filter((n) => n !== "interpreter");

let status = 0;
for (const name of names) {
  const available = await availability(name);
  if (available !== true) {
    process.stdout.write(skippedLine(name, available));
    continue;
  }
  // One test file per core (node's default leaves one idle): the native rerun spends much
  // of its time waiting on the C compiler, which the other file's tests overlap.
  const slots = Math.max(2, availableParallelism());
  // Two entries a file slot: a long file's shard does not leave the other slots idle at the end.
  const dir = mkdtempSync(join(tmpdir(), "xlats-rerun-"));
  try {
    const shards = dealFiles(testFiles(rerunTests(name, asked.length > 0)), 2 * slots);
    const entries = shards.map((files, i) => {
      const entry = join(dir, `rerun-${name}-${i + 1}-of-${shards.length}.mjs`);
      writeRerunEntry(name, files, entry);
      return entry;
    });
    const r = spawnSync(process.execPath, [`--test-concurrency=${slots}`, "--test", ...entries], { stdio: "inherit" });
    if (r.status !== 0) status = r.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(status);
