// `xlats run --probe-output-dir DIR`: interpreter.probe writes .npy files and index.csv
// there (the format `xlats test` writes), check.expect_serialized_eq reads them back,
// on the interpreter and on the compiling backends (whose custom calls run on the
// interpreter's targets). The values are worked out by hand: x + 1, then + 1 again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Literal } from "../../src/index.js";
import { tempFiles, xlats } from "./helpers.js";

const program = (expected: string): string => `func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %a = stablehlo.add %x, %one : tensor<2xf32>
  %p = interpreter.probe %a, probe_id = "sum/x" : tensor<2xf32>
  %b = stablehlo.add %p, %one : tensor<2xf32>
  %q = interpreter.probe %b, probe_id = "sum/x" : tensor<2xf32>
  %e = stablehlo.constant dense<${expected}> : tensor<2xf32>
  check.expect_serialized_eq %e, probe_id = "sum/x", iter = 1 : tensor<2xf32>
  func.return %q : tensor<2xf32>
}
`;
const ARG = "dense<[1.5, -2.0]> : tensor<2xf32>";

for (const backend of ["interpreter", "wasm"]) {
  test(`run --probe-output-dir (${backend}): each probe's .npy and the index, as test writes them`, () => {
    const dir = tempFiles({ "p.mlir": program("[3.5, 0.0]") });
    const out = join(dir, "probes");
    mkdirSync(out);
    const r = xlats("run", join(dir, "p.mlir"), "--arg", ARG, "--backend", backend, "--probe-output-dir", out);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), "dense<[3.500000e+00, 0.000000e+00]> : tensor<2xf32>");
    assert.equal(readFileSync(join(out, "index.csv"), "utf8"), '"sum/x",sum_x_0.npy,f32[2]\n"sum/x",sum_x_1.npy,f32[2]\n');
    assert.deepEqual(Literal.fromNpy(readFileSync(join(out, "sum_x_0.npy"))).toNumbers(), [2.5, -1]);
    assert.deepEqual(Literal.fromNpy(readFileSync(join(out, "sum_x_1.npy"))).toNumbers(), [3.5, 0]);
  });
}

test("run: probes work without a directory too; a failing expect_serialized_eq exits with 1 and says why", () => {
  const dir = tempFiles({ "p.mlir": program("[3.5, 0.0]"), "bad.mlir": program("[3.5, 1.0]") });
  const ok = xlats("run", join(dir, "p.mlir"), "--arg", ARG, "--backend", "interpreter");
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(!existsSync(join(dir, "index.csv")));
  const bad = xlats("run", join(dir, "bad.mlir"), "--arg", ARG, "--backend", "interpreter");
  assert.equal(bad.code, 1);
  assert.equal(bad.stdout.trim(), "dense<[3.500000e+00, 0.000000e+00]> : tensor<2xf32>");
  assert.match(bad.stderr, /check\.expect_serialized_eq failed: 1 of 2 element\(s\) differ/);
});

test("run --probe-output-dir: a missing directory and a repeated flag are clear errors", () => {
  const dir = tempFiles({ "p.mlir": program("[3.5, 0.0]") });
  const missing = xlats("run", join(dir, "p.mlir"), "--arg", ARG, "--backend", "interpreter", "--probe-output-dir", join(dir, "nowhere"));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot write .*sum_x_0\.npy/);
  const twice = xlats("run", join(dir, "p.mlir"), "--arg", ARG, "--probe-output-dir", dir, "--probe-output-dir", dir);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /run: --probe-output-dir given more than once/);
});
