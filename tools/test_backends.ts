// `npm test`'s reruns: the op-test folders, once on every backend of the table
// (src/compiler/backends.ts) other than the interpreter (the default run's), with
// XLATS_TEST_BACKEND naming it. `node dist/tools/test_backends.js wasm` (npm run
// test:wasm) runs one. A backend not available here (no C compiler for native, no
// WebGPU adapter) is skipped with the reason: it does not exist there, and its programs
// run elsewhere.
// A backend that compiles only asynchronously (webgpu) runs the suites through a worker
// the tests wait on (tools/sync_backend.ts). Without a GPU it runs on SwiftShader, where
// every pipeline compiles in software: `npm test` reruns there the folders of
// ASYNC_DEFAULT_TESTS, every op-test folder; the differential test runs when it is named
// (npm run test:webgpu).
// The files run a few to a process (shardEntries): a process per file spent about 0.9 s of
// CPU on each file's start (Node, the library's modules, the backend's setup: a compiled
// backend's worker, Dawn) before its first test, more than many files' tests take.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BACKEND_NAMES, BACKENDS, type BackendName } from "../src/compiler/backends.js";

/** The tests every backend reruns: the op tests, which compare with independently known values, and the random-program differential test. */
const OP_TESTS = [
  "dist/test/elementwise", "dist/test/data_movement", "dist/test/reduction", "dist/test/linalg", "dist/test/control",
  "dist/test/random/rng.test.js", "dist/test/random/rng_bit_generator.test.js", "dist/test/collective/single_device.test.js",
  "dist/test/transfer", "dist/test/seeds", "dist/test/integration", "dist/test/types/convert.test.js",
  "dist/test/types/bitcast_reduce.test.js", "dist/test/ir/kit.test.js", "dist/test/readme_examples.test.js",
  "dist/test/compiler/differential.test.js",
];

/**
 * What an asynchronous backend reruns in `npm test` (the rest by name): every op-test
 * folder; the differential test compares a synchronous backend with the interpreter
 * (webgpu's random programs are in test/compiler/webgpu/). Times: docs/backends.md,
 * "Testing a backend".
 */
const ASYNC_DEFAULT_TESTS = OP_TESTS.filter((t) => t !== "dist/test/compiler/differential.test.js");

/** The test files of `paths`, in order: a file itself, a folder's `*.test.js` files at any depth (its other modules are the tests' helpers). */
function testFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    if (!statSync(path).isDirectory()) return [resolve(path)];
    return readdirSync(path).sort().flatMap((name) => {
      const inner = join(path, name);
      return statSync(inner).isDirectory() ? testFiles([inner]) : name.endsWith(".test.js") ? [resolve(inner)] : [];
    });
  });
}

/**
 * The files dealt in turn into `count` entry modules written in `dir`, each importing its
 * files one after the other: `node --test` runs each entry in a process of its own, so a
 * rerun starts `count` processes instead of one per file, and each file's tests run as in
 * their own process (the same backend from XLATS_TEST_BACKEND; the op-test files set no
 * process-wide state; seed001's root `before`, which starts its client, runs before its
 * tests, and root `after` hooks at the process's end). The default run (`node --test
 * dist/test/`) still runs every file alone.
 */
function shardEntries(files: readonly string[], count: number, dir: string): string[] {
  const shards = Array.from({ length: Math.min(count, files.length) }, (): string[] => []);
  files.forEach((file, i) => shards[i % shards.length]!.push(file));
  return shards.map((shard, i) => {
    const entry = join(dir, `rerun-${i + 1}-of-${shards.length}.mjs`);
    // A file that throws while it loads fails as a test of its own, and the next files still run.
    writeFileSync(entry, [
      `import { test } from "node:test";`,
      `for (const file of ${JSON.stringify(shard.map((file) => pathToFileURL(file).href))}) {`,
      `  try { await import(file); } catch (error) { test(\`\${file}: the test file loads\`, () => { throw error; }); }`,
      `}`,
    ].join("\n") + "\n");
    return entry;
  });
}

const asked = process.argv.slice(2);
for (const name of asked) {
  if (!(BACKEND_NAMES as readonly string[]).includes(name)) {
    process.stderr.write(`test_backends: unknown backend "${name}" (the table has: ${BACKEND_NAMES.join(", ")})\n`);
    process.exit(2);
  }
}
const asyncOnly = (name: BackendName): boolean => BACKENDS[name].compileSync === undefined;
const names = asked.length > 0 ? (asked as BackendName[]) : BACKEND_NAMES.filter((n) => n !== "interpreter");

/**
 * Whether `name` can run here: the table's answer, and for webgpu in Node (whose answer is
 * true before the device is asked for) an adapter, acquired once and released.
 */
async function availability(name: BackendName): Promise<true | string> {
  const available = BACKENDS[name].available();
  if (available !== true || name !== "webgpu") return available;
  const { gpuContext, releaseGpu } = await import("../src/compiler/webgpu/adapter.js");
  try {
    await gpuContext();
    return true;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await releaseGpu();
  }
}

let status = 0;
for (const name of names) {
  const available = await availability(name);
  if (available !== true) {
    process.stdout.write(`test:${name} skipped: the ${name} backend is not available here (${available})\n`);
    continue;
  }
  // One test file per core (node's default leaves one idle): the native rerun spends much
  // of its time waiting on the C compiler, which the other file's tests overlap.
  const concurrency = `--test-concurrency=${Math.max(2, availableParallelism())}`;
  const tests = !asyncOnly(name) ? OP_TESTS
    : asked.length > 0 ? OP_TESTS.filter((t) => t !== "dist/test/compiler/differential.test.js") : ASYNC_DEFAULT_TESTS;
  if (asyncOnly(name) && asked.length === 0) process.stdout.write(`test:${name}: the op suites of ${tests.length} folders and files (all of them: npm run test:${name})\n`);
  // Two entries a file slot: a long file's shard does not leave the other slots idle at the end.
  const dir = mkdtempSync(join(tmpdir(), "xlats-rerun-"));
  try {
    const entries = shardEntries(testFiles(tests), 2 * Math.max(2, availableParallelism()), dir);
    const r = spawnSync(process.execPath, [concurrency, "--test", ...entries], { stdio: "inherit", env: { ...process.env, XLATS_TEST_BACKEND: name } });
    if (r.status !== 0) status = r.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(status);
