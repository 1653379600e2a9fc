// `npm test`'s reruns: the op-test folders, once on every backend of the table
// (src/compiler/backends.ts) other than the interpreter (the default run's), with
// XLATS_TEST_BACKEND naming it. `node dist/tools/test_backends.js wasm` (npm run
// test:wasm) runs one. A backend not available here (no C compiler for native) is
// skipped with the reason: it does not exist there, and its programs run elsewhere.
// A backend that compiles only asynchronously (webgpu) runs the suites through a worker
// the tests wait on (tools/sync_backend.ts); it runs only when named (npm run
// test:webgpu): on SwiftShader its suites take far longer than CI's budget.

import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { BACKEND_NAMES, BACKENDS, type BackendName } from "../src/compiler/backends.js";

/** The tests every backend reruns: the op tests, which compare with independently known values, and the random-program differential test. */
const OP_TESTS = [
  "dist/test/elementwise", "dist/test/data_movement", "dist/test/reduction", "dist/test/linalg", "dist/test/control",
  "dist/test/random/rng.test.js", "dist/test/random/rng_bit_generator.test.js", "dist/test/collective/single_device.test.js",
  "dist/test/transfer", "dist/test/seeds", "dist/test/integration", "dist/test/types/convert.test.js",
  "dist/test/types/bitcast_reduce.test.js", "dist/test/ir/kit.test.js", "dist/test/readme_examples.test.js",
  "dist/test/compiler/differential.test.js",
];

const asked = process.argv.slice(2);
for (const name of asked) {
  if (!(BACKEND_NAMES as readonly string[]).includes(name)) {
    process.stderr.write(`test_backends: unknown backend "${name}" (the table has: ${BACKEND_NAMES.join(", ")})\n`);
    process.exit(2);
  }
}
const asyncOnly = (name: BackendName): boolean => BACKENDS[name].compileSync === undefined;
const names = asked.length > 0 ? (asked as BackendName[]) : BACKEND_NAMES.filter((n) => n !== "interpreter" && !asyncOnly(n));
if (asked.length === 0) {
  for (const n of BACKEND_NAMES.filter(asyncOnly)) process.stdout.write(`test:${n} not run here: its op suites run by name (npm run test:${n})\n`);
}
let status = 0;
for (const name of names) {
  const available = BACKENDS[name].available();
  if (available !== true) {
    process.stdout.write(`test:${name} skipped: the ${name} backend is not available here (${available})\n`);
    continue;
  }
  // One test file per core (node's default leaves one idle): the native rerun spends much
  // of its time waiting on the C compiler, which the other file's tests overlap.
  const concurrency = `--test-concurrency=${Math.max(2, availableParallelism())}`;
  // The differential test compares a synchronous compiled backend with the interpreter; an
  // asynchronous one has its own random-program test (test/compiler/webgpu/webgpu.test.ts).
  const tests = asyncOnly(name) ? OP_TESTS.filter((t) => t !== "dist/test/compiler/differential.test.js") : OP_TESTS;
  const r = spawnSync(process.execPath, [concurrency, "--test", ...tests], { stdio: "inherit", env: { ...process.env, XLATS_TEST_BACKEND: name } });
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);
