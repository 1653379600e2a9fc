// Compiled Cholesky against the interpreter's kernel, bit for bit: lower and upper, f32
// and f64, sizes 1 to 40 (primes, powers of two), batches; the other triangle of the
// operand holds garbage it must not read. Identity and signed-zero matrices (zeros in the
// factor: the exact path), matrices that are not positive definite (all NaN, alone and
// among good ones in a batch), infinities and NaN.
import { test } from "node:test";
import assert from "node:assert/strict";
import { XlaBuilder, arrayShape, cholesky, parameter, type ElementType, type Literal } from "../../../src/index.js";
import { Literal as L } from "../../../src/types/literal.js";
import { compile } from "../../../src/compiler/index.js";
import { compileRoutine } from "../../../src/compiler/routines.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkCompiled, checkRoutine, rng } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

function build(t: ElementType, dims: readonly number[], lower: boolean): ReturnType<XlaBuilder["build"]> {
  const b = new XlaBuilder("cholesky");
  return b.build(cholesky(parameter(b, 0, arrayShape(t, dims), "a"), lower));
}

/** n x n symmetric positive definite G Gᵀ + n·I in the `lower` (or upper) triangle, garbage in the other. */
function spd(next: () => number, n: number, lower: boolean): number[] {
  const g = Array.from({ length: n * n }, () => next() * 2 - 1);
  const a = new Array<number>(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = i === j ? n : 0;
      for (let k = 0; k < n; k++) s += g[i * n + k]! * g[j * n + k]!;
      a[i * n + j] = (lower ? i >= j : i <= j) ? s : (next() - 0.5) * 1e6;
    }
  }
  return a;
}

function batchOf(next: () => number, t: ElementType, batch: readonly number[], n: number, lower: boolean): Literal {
  const count = elementCount(batch);
  return L.fromValues(t, [...batch, n, n], Array.from({ length: count }, () => spd(next, n, lower)).flat());
}

test("cholesky: lower and upper, f32 and f64, sizes and batches match the interpreter bit for bit", () => {
  const next = rng(81);
  let trial = 0;
  for (const n of [1, 2, 3, 7, 8, 13, 16, 31, 40]) {
    for (const lower of [true, false]) {
      for (const t of ["f32", "f64"] as const) {
        const batch = [[], [3], [2, 2]][trial++ % 3]!;
        checkRoutine(build(t, [...batch, n, n], lower), [batchOf(next, t, batch, n, lower)], `${t} ${n} lower=${lower} batch=${batch}`);
      }
    }
  }
});

test("cholesky: zeros in the factor, signed zeros, non-positive-definite matrices, infinities and NaN", () => {
  const next = rng(82);
  const n = 5;
  for (const lower of [true, false]) {
    for (const t of ["f32", "f64"] as const) {
      const good = (): number[] => spd(next, n, lower);
      const identity = Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 1 : -0));
      const blockDiagonal = good().map((v, k) => (Math.floor(k / n) < 2) === (k % n < 2) ? v : -0);
      const indefinite = good().map((v, k) => (k === 3 * (n + 1) ? -v : v));
      const lateNaN = good().map((v, k) => (k === (lower ? 4 * n + 2 : 2 * n + 4) ? NaN : v));
      const infinite = good().map((v, k) => (k === (lower ? 3 * n + 1 : n + 3) ? Infinity : v));
      const negativeZeroDiagonal = good().map((v, k) => (k === 0 ? -0 : v));
      const matrices = [identity, good(), blockDiagonal, indefinite, lateNaN, infinite, negativeZeroDiagonal];
      checkRoutine(build(t, [matrices.length, n, n], lower), [L.fromValues(t, [matrices.length, n, n], matrices.flat())], `${t} lower=${lower}`, { anyNaN: true });
    }
  }
});

test("cholesky: the compiled program runs it as a kernel", async () => {
  const next = rng(83);
  const c = build("f64", [2, 45, 45], false);
  await checkCompiled(c, [batchOf(next, "f64", [2], 45, false)], "cholesky f64 2x45x45 upper");
  const exe = await compile(c);
  try {
    assert.match(exe.dump(), /cholesky f64 2x45x45 upper/);
    assert.equal(exe.stats.interpreted.length, 0);
  } finally {
    exe.delete();
  }
});

test("cholesky: complex and narrow float types are left to the interpreter, with the reason", async () => {
  for (const t of ["c128", "bf16"] as const) {
    const c = build(t, [3, 3], true);
    const kernel = compileRoutine(c.root, { wasm: detectWasmTarget() });
    assert.ok(isDeclined(kernel) && kernel.declined.includes(`${t} runs on the interpreter's kernel`), t);
    const exe = await compile(c);
    try {
      assert.match(exe.dump(), new RegExp(`${t} runs on the interpreter's kernel`));
    } finally {
      exe.delete();
    }
  }
});

test("cholesky: a matrix too large for the compiled routine's scratch is left to the interpreter, with the reason", () => {
  const kernel = compileRoutine(build("f32", [3000, 3000], true).root, { wasm: detectWasmTarget() });
  assert.ok(isDeclined(kernel) && /needs more scratch/.test(kernel.declined));
});
