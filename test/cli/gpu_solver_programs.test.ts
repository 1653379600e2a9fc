// A new user's check: `jnp.linalg.eigh` as JAX exports it for a CUDA GPU (the program
// `jax.jit(jnp.linalg.eigh).lower(x).as_text()` writes there: the cusolver_syevd_ffi
// custom call with jaxlib's column-major layouts and bool attributes, then the info
// check that turns a failed batch into NaN) runs with `xlats run` on the interpreter
// and on the compiled backends, and gives the eigenvalues known in closed form.

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { BACKEND_NAMES, BACKENDS } from "../../src/compiler/backends.js";
import { parseMlirLiteral } from "../../src/text/mlir/index.js";
import { xlats } from "./helpers.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/gpu_solvers");

/** Every backend of the table that runs here (native needs a C compiler). */
const AVAILABLE = BACKEND_NAMES.filter((name) => BACKENDS[name].available() === true);

/** The tridiagonal Toeplitz matrix (2 on the diagonal, `off` beside it) of order n: eigenvalues 2 + 2·off·cos(jπ/(n+1)). */
const toeplitz = (n: number, off: number): number[][] =>
  Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 2 : Math.abs(i - j) === 1 ? off : 0)));

const toeplitzEigenvalues = (n: number): number[] => Array.from({ length: n }, (_, j) => 2 + 2 * Math.cos(((j + 1) * Math.PI) / (n + 1))).sort((x, y) => x - y);

const dense = (value: unknown, type: string): string => `dense<${JSON.stringify(value)}> : ${type}`;

/** Checks A v = λ v for each column v of `vectors` (batch b) and the eigenvalues against `want`. */
function checkEigh(a: number[][], values: number[], vectors: number[][], want: number[], tol: number, what: string): void {
  values.forEach((x, i) => assert.ok(Math.abs(x - want[i]!) <= tol, `${what}: eigenvalue ${i} is ${x}, want ${want[i]}`));
  const n = a.length;
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      const av = a[i]!.reduce((s, aik, k) => s + aik * vectors[k]![j]!, 0);
      assert.ok(Math.abs(av - values[j]! * vectors[i]![j]!) <= tol * 10, `${what}: (A v)[${i}] = λ v[${i}] for eigenvector ${j}`);
    }
  }
}

for (const backend of AVAILABLE) {
  test(`run: jnp.linalg.eigh exported for CUDA (cusolver_syevd_ffi), f32, gives the known eigenvalues (${backend})`, () => {
    const a = toeplitz(4, 1);
    const r = xlats("run", join(FIXTURES, "eigh_cuda.mlir"), "--backend", backend, "--arg", dense(a, "tensor<4x4xf32>"));
    assert.equal(r.code, 0, r.stderr);
    const [values, vectors] = r.stdout.trim().split("\n").map((line) => parseMlirLiteral(line).toNested());
    checkEigh(a, values as number[], vectors as number[][], toeplitzEigenvalues(4), 1e-5, backend);
  });

  test(`run: a batch of two 3×3 matrices through cusolver_syevd_ffi, f64 (${backend})`, () => {
    // [2 -1 0; -1 2 -1; 0 -1 2]: 2 - √2, 2, 2 + √2. [4 1 1; 1 4 1; 1 1 4] = 3 I + ones: 3, 3, 6.
    const batch = [toeplitz(3, -1), [[4, 1, 1], [1, 4, 1], [1, 1, 4]]];
    const r = xlats("run", join(FIXTURES, "eigh_cuda_batched_f64.mlir"), "--backend", backend, "--arg", dense(batch, "tensor<2x3x3xf64>"));
    assert.equal(r.code, 0, r.stderr);
    const [values, vectors] = r.stdout.trim().split("\n").map((line) => parseMlirLiteral(line).toNested() as number[][]);
    checkEigh(batch[0]!, values![0]!, (vectors as unknown as number[][][])[0]!, [2 - Math.SQRT2, 2, 2 + Math.SQRT2], 1e-13, `${backend} batch 0`);
    checkEigh(batch[1]!, values![1]!, (vectors as unknown as number[][][])[1]!, [3, 3, 6], 1e-13, `${backend} batch 1`);
  });
}
