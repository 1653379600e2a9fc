// The native backend's first C build in a process is said once on stderr with --verbose
// (or when stderr is a terminal), and not when the program's module is in the cache, nor
// without --verbose when stderr is a pipe (as in these tests).

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import { CLI, tempFiles } from "./helpers.js";

const NOTICE = "xlats: building native kernels with the C compiler (first run of this program; later runs load them from the cache)\n";

test("run --verbose says once that it builds native kernels; a cached program and a run without --verbose say nothing", (t) => {
  const toolchain = nativeToolchain();
  if (typeof toolchain === "string") { t.skip(`no C compiler: ${toolchain}`); return; }
  // A fresh cache: the probe and the program are built in the first run.
  const cache = mkdtempSync(join(tmpdir(), "xlats-notice-"));
  const dir = tempFiles({ "exp.mlir": `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %s = stablehlo.add %e, %x : tensor<4xf32>
  return %s : tensor<4xf32>
}
` });
  const run = (...extra: string[]) => spawnSync(process.execPath, [CLI, "run", join(dir, "exp.mlir"), "--backend", "native", "--arg", "dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>", ...extra], {
    encoding: "utf8", timeout: 120_000, env: { ...process.env, XLATS_NATIVE_CACHE: cache },
  });
  const first = run("--verbose");
  assert.equal(first.status, 0, first.stderr);
  assert.equal(first.stderr, NOTICE);
  // exp(x) + x: 1, e + 1, e^2 + 2, e^3 + 3 (f32).
  const values = /^dense<\[(.*)\]> : tensor<4xf32>\n$/.exec(first.stdout)![1]!.split(", ").map(Number);
  values.forEach((v, i) => assert.ok(Math.abs(v - (Math.exp(i) + i)) <= 1e-6 * (Math.exp(i) + i), `${v} at ${i}`));
  const cached = run("--verbose");
  assert.equal(cached.status, 0, cached.stderr);
  assert.equal(cached.stderr, "");
  assert.equal(cached.stdout, first.stdout);
  // A new program, without --verbose and with stderr a pipe: built without a word.
  const quiet = run("--arg", "dense<[0.0]> : tensor<1xf32>");
  assert.equal(quiet.status, 1);
  assert.doesNotMatch(quiet.stderr, /building native kernels/);
});
