// `xlats run` with .npy arguments, .npz/.npy outputs and numpy-style printing. The
// expected repr strings are numpy 2.4's (`repr(x + y)` for the same arrays).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Literal, readNpz } from "../../src/index.js";
import { tempFiles, xlats } from "./helpers.js";

const PROGRAM = `func.func @main(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = stablehlo.add %x, %y : tensor<2x2xf32>
  %p = stablehlo.multiply %x, %y : tensor<2x2xf32>
  return %s, %p : tensor<2x2xf32>, tensor<2x2xf32>
}
`;

function setup(): string {
  const dir = tempFiles({ "prog.mlir": PROGRAM });
  writeFileSync(join(dir, "x.npy"), Literal.from("f32", [[1, 2], [3, 4]]).toNpy());
  // y in Fortran order and big-endian would be numpy's job; here Fortran order via toNpy.
  writeFileSync(join(dir, "y.npy"), Literal.from("f32", [[0.5, -1], [2, 10]]).toNpy({ fortranOrder: true }));
  return dir;
}

test("run: .npy arguments, --out results.npz, --print numpy", () => {
  const dir = setup();
  const out = join(dir, "results.npz");
  const r = xlats("run", join(dir, "prog.mlir"), "--arg", join(dir, "x.npy"), "--arg", join(dir, "y.npy"), "--out", out, "--print", "numpy");
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "array([[ 1.5,  1. ],\n       [ 5. , 14. ]], dtype=float32)\narray([[ 0.5, -2. ],\n       [ 6. , 40. ]], dtype=float32)\n");
  const results = readNpz(new Uint8Array(readFileSync(out)));
  assert.deepEqual([...results.keys()], ["arr_0", "arr_1"]);
  assert.deepEqual(results.get("arr_0")!.toNested(), [[1.5, 1], [5, 14]]);
  assert.deepEqual(results.get("arr_1")!.toNested(), [[0.5, -2], [6, 40]]);
});

test("run: --arg mixes MLIR literals and .npy files; --out FILE.npy for one result", () => {
  const dir = tempFiles({ "neg.mlir": "func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.subtract %x, %y : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n" });
  writeFileSync(join(dir, "y.npy"), Literal.from("f32", [1, 2]).toNpy());
  const out = join(dir, "r.npy");
  const r = xlats("run", join(dir, "neg.mlir"), "--arg", "dense<[10.0, 20.0]> : tensor<2xf32>", "--arg", join(dir, "y.npy"), "--out", out);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "dense<[9.000000e+00, 1.800000e+01]> : tensor<2xf32>\n");
  assert.deepEqual(Literal.fromNpy(new Uint8Array(readFileSync(out))).toNested(), [9, 18]);
});

test("run: a .npy of the wrong type, a truncated .npy, a bad --out or --print are clear errors", () => {
  const dir = setup();
  writeFileSync(join(dir, "f64.npy"), Literal.from("f64", [[1, 2], [3, 4]]).toNpy());
  const prog = join(dir, "prog.mlir");
  let r = xlats("run", prog, "--arg", join(dir, "f64.npy"), "--arg", join(dir, "y.npy"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--arg for parameter 0: .*f64\.npy: holds f64 \(dtype '<f8'\), expected f32 \(convert it first, e\.g\. with numpy: np\.save\(f, np\.load\(f\)\.astype\("float32"\)\), or pass --cast to convert it here\)/);
  writeFileSync(join(dir, "cut.npy"), readFileSync(join(dir, "x.npy")).subarray(0, 130));
  r = xlats("run", prog, "--arg", join(dir, "x.npy"), "--arg", join(dir, "cut.npy"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--arg for parameter 1: .*cut\.npy: truncated/);
  r = xlats("run", prog, "--arg", join(dir, "x.npy"), "--arg", join(dir, "missing.npy"));
  assert.match(r.stderr, /cannot read .*missing\.npy: no such file/);
  r = xlats("run", prog, "--arg", join(dir, "x.npy"), "--arg", join(dir, "y.npy"), "--out", join(dir, "r.npy"));
  assert.match(r.stderr, /a \.npy holds one array, the program has 2 results/);
  r = xlats("run", prog, "--arg", join(dir, "x.npy"), "--arg", join(dir, "y.npy"), "--print", "json");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--print must be mlir or numpy/);
});

/**
 * A model as JAX exports it (tools/fixtures/jax_mlp.py: an MLP with its weights closed over,
 * embedded as hex dense constants, gelu and log_softmax, an argmax), its input as .npy and
 * XLA's own outputs as .npz: `xlats run` on both backends matches XLA.
 */
for (const backend of ["interpreter", "wasm"]) {
  test(`run: a JAX-exported model with hex weights, .npy in, .npz out, matches XLA (${backend})`, () => {
    const fixtures = join(import.meta.dirname, "../../../test/fixtures/jax_mlp");
    const dir = tempFiles({});
    const out = join(dir, "r.npz");
    const r = xlats("run", join(fixtures, "model.mlir"), "--arg", join(fixtures, "x.npy"), "--out", out, "--backend", backend);
    assert.equal(r.code, 0, r.stderr);
    const got = readNpz(new Uint8Array(readFileSync(out)));
    const want = readNpz(new Uint8Array(readFileSync(join(fixtures, "expected.npz"))));
    assert.deepEqual([...got.keys()], ["arr_0", "arr_1"]);
    assert.deepEqual(got.get("arr_1")!.toNested(), want.get("arr_1")!.toNested(), "argmax labels");
    const g = got.get("arr_0")!.toNested() as number[][];
    const w = want.get("arr_0")!.toNested() as number[][];
    assert.equal(g.length, 8);
    // XLA's gelu (tanh form) and exp are not correctly rounded either: a few f32 ulps apart.
    g.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - w[i]![j]!) <= 1e-5 * Math.max(1, Math.abs(w[i]![j]!)), `[${i}][${j}]: ${v} vs XLA ${w[i]![j]}`)));
  });
}

test("run prints a result of more than 2^20 elements summarised, says so on stderr, and --out still writes every value", () => {
  const n = (1 << 20) + 1;
  const dir = tempFiles({ "iota.mlir": `func.func @main() -> tensor<${n}xf32> {
  %i = stablehlo.iota dim = 0 : tensor<${n}xf32>
  return %i : tensor<${n}xf32>
}
` });
  const out = join(dir, "r.npy");
  const r = xlats("run", join(dir, "iota.mlir"), "--backend", "interpreter", "--out", out);
  assert.equal(r.code, 0, r.stderr);
  // numpy 2.4: repr(np.arange(2**20 + 1, dtype=np.float32)).
  assert.equal(r.stdout, `array([0.000000e+00, 1.000000e+00, 2.000000e+00, ..., 1.048574e+06,\n       1.048575e+06, 1.048576e+06], shape=(${n},), dtype=float32)\n`);
  assert.match(r.stderr, new RegExp(`^run: result 0 \\(f32\\[${n}\\]\\) has ${n} elements, more than 1048576: printed summarised; --out FILE\\.npz writes every value\\n$`));
  const written = Literal.fromNpy(readFileSync(out));
  assert.equal(written.data.length, n);
  assert.equal(written.data[n - 1], n - 1);
});

test("run --cast converts .npy and literal arguments of another element type to the parameters' (round to nearest even)", () => {
  const dir = setup();
  // 0.1 as f64 rounds to the f32 nearest it; 2^24 + 1 (exact in f64) rounds to even, 2^24.
  writeFileSync(join(dir, "f64.npy"), Literal.from("f64", [[0.1, 2 ** 24 + 1], [-3, 4]]).toNpy());
  const r = xlats("run", join(dir, "prog.mlir"), "--cast", "--arg", join(dir, "f64.npy"), "--arg", "dense<[[1, 1], [1, 1]]> : tensor<2x2xi32>", "--print", "numpy");
  assert.equal(r.code, 0, r.stderr);
  // numpy: x = np.array([[0.1, 2**24 + 1], [-3, 4]]).astype(np.float32); repr(x + 1), repr(x * 1).
  assert.equal(r.stdout, "array([[ 1.1000000e+00,  1.6777216e+07],\n       [-2.0000000e+00,  5.0000000e+00]], dtype=float32)\n" +
    "array([[ 1.0000000e-01,  1.6777216e+07],\n       [-3.0000000e+00,  4.0000000e+00]], dtype=float32)\n");
  // Without --cast the literal's type is refused as before.
  assert.equal(xlats("run", join(dir, "prog.mlir"), "--arg", join(dir, "x.npy"), "--arg", "dense<[[1, 1], [1, 1]]> : tensor<2x2xi32>").code, 1);
});
