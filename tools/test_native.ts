// `npm run test:native`: the op-test folders (as test:wasm runs them), the native
// backend's own tests and the random-program differential test, on the native backend
// (XLATS_TEST_BACKEND=native). Where no C compiler builds modules, says why and passes:
// the native backend does not exist there, and every program runs on wasm instead.

import { spawnSync } from "node:child_process";
import { nativeToolchain } from "../src/compiler/native/toolchain.js";

const FILES = [
  "dist/test/elementwise", "dist/test/data_movement", "dist/test/reduction", "dist/test/linalg", "dist/test/control",
  "dist/test/random/rng.test.js", "dist/test/random/rng_bit_generator.test.js", "dist/test/collective/single_device.test.js",
  "dist/test/transfer", "dist/test/seeds", "dist/test/integration", "dist/test/types/convert.test.js",
  "dist/test/types/bitcast_reduce.test.js", "dist/test/ir/kit.test.js", "dist/test/readme_examples.test.js",
  "dist/test/compiler/differential.test.js",
];

const toolchain = nativeToolchain();
if (typeof toolchain === "string") {
  process.stdout.write(`test:native skipped: no C compiler (${toolchain})\n`);
  process.exit(0);
}
const r = spawnSync(process.execPath, ["--test", ...FILES], { stdio: "inherit", env: { ...process.env, XLATS_TEST_BACKEND: "native" } });
process.exit(r.status ?? 1);
