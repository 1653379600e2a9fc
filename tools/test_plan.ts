// What `npm test` runs after the build, and how its processes are laid out: the default
// run (every test file under dist/test/, each in a process of its own, on the
// interpreter: defaultRunFiles) and the reruns of the op-test folders on every other backend of the table
// (src/compiler/backends.ts) that is available here, with XLATS_TEST_BACKEND naming it.
// tools/run_tests.ts runs them all as one `node --test`; tools/test_backends.ts runs one
// backend's rerun (npm run test:wasm, test:native, test:webgpu). A backend not available
// here (no C compiler for native, no WebGPU adapter) is skipped with the reason: it does
// not exist there, and its programs run elsewhere.
// A backend that compiles only asynchronously (webgpu) runs the suites through a worker
// the tests wait on (tools/sync_backend.ts). Without a GPU it runs on SwiftShader, where
// every pipeline compiles in software: `npm test` reruns there every op-test folder
// (rerunTests); the differential test runs when its rerun is named (npm run test:webgpu).
// A rerun's files run a few to a process (writeRerunEntry): a process per file spent about
// 0.9 s of CPU on each file's start (Node, the library's modules, the backend's setup: a
// compiled backend's worker, Dawn) before its first test, more than many files' tests take.

import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BACKENDS, type BackendName } from "../src/compiler/backends.js";

/** The tests every backend reruns: the op tests, which compare with independently known values, and the random-program differential test. */
export const OP_TESTS = [
  "dist/test/elementwise", "dist/test/data_movement", "dist/test/reduction", "dist/test/linalg", "dist/test/control",
  "dist/test/random/rng.test.js", "dist/test/random/rng_bit_generator.test.js", "dist/test/collective/single_device.test.js",
  "dist/test/transfer", "dist/test/seeds", "dist/test/integration", "dist/test/types/convert.test.js",
  "dist/test/types/bitcast_reduce.test.js", "dist/test/ir/kit.test.js", "dist/test/readme_examples.test.js",
  "dist/test/compiler/differential.test.js",
];

const DIFFERENTIAL = "dist/test/compiler/differential.test.js";

/** Whether `name` compiles only asynchronously (webgpu): its reruns go through tools/sync_backend.ts. */
export const asyncOnly = (name: BackendName): boolean => BACKENDS[name].compileSync === undefined;

/**
 * What `name` reruns: every op test; an asynchronous backend leaves out the differential
 * test unless its rerun was asked for by name (`named`): the differential test compares a
 * synchronous backend with the interpreter (webgpu's random programs are in
 * test/compiler/webgpu/). Times: docs/backends.md, "Testing a backend".
 */
export function rerunTests(name: BackendName, named: boolean): string[] {
  return asyncOnly(name) && !named ? OP_TESTS.filter((t) => t !== DIFFERENTIAL) : OP_TESTS;
}

/** The test files of `paths`, in order: a file itself, a folder's `*.test.js` files at any depth (its other modules are the tests' helpers). */
export function testFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    if (!statSync(path).isDirectory()) return [resolve(path)];
    return readdirSync(path).sort().flatMap((name) => {
      const inner = join(path, name);
      return statSync(inner).isDirectory() ? testFiles([inner]) : name.endsWith(".test.js") ? [resolve(inner)] : [];
    });
  });
}

/**
 * The default run's files, sorted: every `*.test.js` under `dist/test/` (never in
 * node_modules), and the scripts of SCRIPTS_RUN. `node --test dist/test/` runs every `.js`
 * under a folder named `test` (Node 20's pattern `test/.+`), so it also starts, each in a
 * process of its own (about 0.2-1 CPU-s each, 50 CPU-s in all, tools/test_times.json of
 * session 51), the tests' helper modules, which only define what the tests import, and
 * the child scripts the tests start with their own arguments and whose output they
 * check (test/compiler/native/*_child.ts): none of them asserts anything on its own.
 */
export function defaultRunFiles(dir = "dist/test"): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const inner = join(dir, name);
    if (statSync(inner).isDirectory()) return name === "node_modules" ? [] : defaultRunFiles(inner);
    return name.endsWith(".test.js") || SCRIPTS_RUN.some((s) => inner.endsWith(s)) ? [resolve(inner)] : [];
  });
}

/**
 * Scripts that are not test files but still run in the default run: the kernel
 * fingerprints (test/compiler/kernel/kernel_hashes.ts) generate every backend's kernels
 * for random programs at sizes no test uses; their run asserts nothing, but one that
 * throws fails it.
 */
const SCRIPTS_RUN = ["dist/test/compiler/kernel/kernel_hashes.js"];

/**
 * Whether `name` can run here: the table's answer, and for webgpu in Node (whose answer is
 * true before the device is asked for) an adapter, acquired once and released.
 */
export async function availability(name: BackendName): Promise<true | string> {
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

/**
 * The WebGPU backend's own tests (test/compiler/webgpu/: its kernels, numerics, linear
 * algebra, control flow) also run on a second software adapter where one is installed:
 * Mesa's lavapipe (tools/install_lavapipe.sh), whose shader compiler folds float algebra
 * on run-time values and whose workgroup memory keeps what the last workgroup left, as
 * GPUs' do, where SwiftShader does neither. There the kernels take the forms a GPU gets
 * (writeAdapterEntry), which no software adapter takes by itself. Its Vulkan driver file,
 * where the script puts it.
 */
export const LAVAPIPE_ICD = ".cache/lavapipe/lvp_icd.json";

/**
 * The files of test/compiler/webgpu/ run on lavapipe: all but the GPU-driven nested loops'
 * and the runtime clients' (62 and 17 of the folder's 240 CPU-s there with Mesa's shader
 * cache warm, 2026-12-03), which test how loops and devices are driven more than what
 * kernels compute: the other files run the same kernels.
 */
export function lavapipeTestFiles(): string[] {
  const left = new Set(["gpu_nested_loop.test.js", "client.test.js"]);
  return testFiles(["dist/test/compiler/webgpu"]).filter((file) => !left.has(file.slice(file.lastIndexOf("/") + 1)));
}

/**
 * Writes at `path` the entry module of one shard of the WebGPU tests on the adapter of the
 * Vulkan driver file `icd`, as writeRerunEntry's: it points VK_ICD_FILENAMES at it (Dawn
 * reads it when it starts, and the backend sets SwiftShader's only where it is unset) and
 * has the kernels take a GPU's forms (XLATS_WEBGPU_KERNEL_FORMS=gpu, codegen.ts
 * softwareKernelForms: tiles staged in workgroup memory, a row a workgroup, subgroup
 * operations), so that what a GPU runs is tested on a compiler that behaves as a GPU's,
 * and SwiftShader's pass tests the software adapters' forms.
 */
export function writeAdapterEntry(icd: string, files: readonly string[], path: string): void {
  writeShardEntry({ VK_ICD_FILENAMES: resolve(icd), XLATS_WEBGPU_KERNEL_FORMS: "gpu" }, files, path);
}

/** The line a skipped rerun prints. */
export const skippedLine = (name: BackendName, why: string): string => `test:${name} skipped: the ${name} backend is not available here (${why})\n`;

/** `files` dealt in turn into `count` shards (fewer when there are fewer files). */
export function dealFiles(files: readonly string[], count: number): string[][] {
  const shards = Array.from({ length: Math.min(count, files.length) }, (): string[] => []);
  files.forEach((file, i) => shards[i % shards.length]!.push(file));
  return shards;
}

/**
 * Writes at `path` the entry module of one shard of `name`'s rerun: it sets
 * XLATS_TEST_BACKEND and imports the shard's files one after the other. `node --test`
 * runs each entry in a process of its own, so a rerun starts a process a shard instead
 * of one per file, and each file's tests run as in their own process (the op-test files
 * set no process-wide state; seed001's root `before`, which starts its client, runs
 * before its tests, and root `after` hooks at the process's end). The variable is set
 * before the first file loads (test/support/backend.ts reads it as it loads), and the
 * processes the tests start inherit it.
 */
export function writeRerunEntry(name: BackendName, files: readonly string[], path: string): void {
  writeShardEntry({ XLATS_TEST_BACKEND: name }, files, path);
}

/** An entry module at `path` that sets the environment variables `env`, then imports `files` in turn. */
function writeShardEntry(env: Readonly<Record<string, string>>, files: readonly string[], path: string): void {
  // A file that throws while it loads fails as a test of its own, and the next files still run.
  writeFileSync(path, [
    `import { test } from "node:test";`,
    ...Object.entries(env).map(([key, value]) => `process.env.${key} = ${JSON.stringify(value)};`),
    `for (const file of ${JSON.stringify(files.map((file) => pathToFileURL(file).href))}) {`,
    `  try { await import(file); } catch (error) { test(\`\${file}: the test file loads\`, () => { throw error; }); }`,
    `}`,
  ].join("\n") + "\n");
}
