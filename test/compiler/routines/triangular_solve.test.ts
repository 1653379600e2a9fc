// Compiled triangular-solve against substitution in double rounded once
// (test/support/triangular_substitution.ts: the routine's specification; the interpreter
// now runs XLA's expansion instead, a few ulp apart), bit for bit: every
// combination of left_side, lower, unit_diagonal and transpose_a (ADJOINT included), f32
// and f64, sizes 1 to 40 (primes, powers of two), batches, right-hand-side counts that
// do and do not fill the kernel's column blocks; the other triangle of A holds garbage
// the solve must not read. Singular and signed-zero systems take the exact path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { XlaBuilder, arrayShape, parameter, triangularSolve, type ElementType, type Literal } from "../../../src/index.js";
import { Literal as L } from "../../../src/types/literal.js";
import { compile } from "../../../src/compiler/index.js";
import { compileRoutine } from "../../../src/compiler/routines.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { isUnsupported } from "../../../src/compiler/wasm/kernel.js";
import { checkCompiled, checkRoutine, conformanceOnWasm, rng } from "./harness.js";
import { triangularSolveBySubstitution } from "../../support/triangular_substitution.js";

type Transpose = "NO_TRANSPOSE" | "TRANSPOSE" | "ADJOINT";
const TRANSPOSES: readonly Transpose[] = ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"];

interface Case {
  t: ElementType; batch: number[]; n: number; cols: number;
  leftSide: boolean; lower: boolean; unitDiagonal: boolean; transposeA: Transpose;
}

function build(c: Case): ReturnType<XlaBuilder["build"]> {
  const b = new XlaBuilder("trsm");
  const bDims = c.leftSide ? [...c.batch, c.n, c.cols] : [...c.batch, c.cols, c.n];
  const a = parameter(b, 0, arrayShape(c.t, [...c.batch, c.n, c.n]), "a");
  const rhs = parameter(b, 1, arrayShape(c.t, bDims), "b");
  return b.build(triangularSolve(a, rhs, c.leftSide, c.lower, c.unitDiagonal, c.transposeA));
}

/** Random A with a diagonal of magnitude 1 to 2 (well conditioned), random B. */
function operands(next: () => number, c: Case): [Literal, Literal] {
  const count = c.batch.reduce((p, d) => p * d, 1);
  const a: number[] = [];
  for (let m = 0; m < count; m++) {
    for (let i = 0; i < c.n; i++) {
      for (let j = 0; j < c.n; j++) a.push(i === j ? (next() < 0.5 ? -1 : 1) * (1 + next()) : (next() * 2 - 1) * 0.5);
    }
  }
  const bDims = c.leftSide ? [...c.batch, c.n, c.cols] : [...c.batch, c.cols, c.n];
  const bCount = bDims.reduce((p, d) => p * d, 1);
  return [L.fromValues(c.t, [...c.batch, c.n, c.n], a), L.fromValues(c.t, bDims, Array.from({ length: bCount }, () => (next() * 2 - 1) * 10))];
}

const describe = (c: Case): string => JSON.stringify(c);

const reference = (c: Case, [a, b]: readonly Literal[]): Literal =>
  triangularSolveBySubstitution(a!, b!, c.leftSide, c.lower, c.unitDiagonal, c.transposeA);

function check(c: Case, args: readonly Literal[], options: { anyNaN?: boolean } = {}): void {
  checkRoutine(build(c), args, `${options.anyNaN === true ? "special values " : ""}${describe(c)}`, options, reference(c, args));
}

test("triangular-solve: every attribute combination, f32 and f64, matches substitution in double bit for bit", () => {
  const next = rng(71);
  const sizes: [number, number][] = [[1, 1], [2, 3], [7, 5], [13, 17], [16, 2], [5, 40]];
  let trial = 0;
  for (const leftSide of [true, false]) {
    for (const lower of [true, false]) {
      for (const unitDiagonal of [false, true]) {
        for (const transposeA of TRANSPOSES) {
          const [n, cols] = sizes[trial % sizes.length]!;
          const batch = [[], [3], [2, 2]][trial % 3]!;
          const t: ElementType = trial % 2 === 0 ? "f64" : "f32";
          const c: Case = { t, batch, n, cols, leftSide, lower, unitDiagonal, transposeA };
          check(c, operands(next, c));
          trial++;
        }
      }
    }
  }
});

test("triangular-solve: random sizes and batches", () => {
  const next = rng(72);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  for (let trial = 0; trial < 40; trial++) {
    const c: Case = {
      t: next() < 0.5 ? "f32" : "f64", batch: Array.from({ length: int(0, 2) }, () => int(1, 3)), n: int(1, 24), cols: int(1, 35),
      leftSide: next() < 0.5, lower: next() < 0.5, unitDiagonal: next() < 0.3, transposeA: TRANSPOSES[int(0, 2)]!,
    };
    check(c, operands(next, c));
  }
});

test("triangular-solve: zeros, signed zeros, a zero diagonal, infinities and NaN take the exact path and still match", () => {
  const next = rng(73);
  for (const leftSide of [true, false]) {
    for (const transposeA of TRANSPOSES) {
      for (const t of ["f32", "f64"] as const) {
        const c: Case = { t, batch: [4], n: 6, cols: 5, leftSide, lower: transposeA !== "TRANSPOSE", unitDiagonal: false, transposeA };
        const [a, b] = operands(next, c);
        const av = a.toNumbers(), bv = b.toNumbers();
        // Matrix 0: identity-like with -0 off the diagonal and a B with signed zeros.
        for (let i = 0; i < 36; i++) av[i] = i % 7 === 0 ? 1 : -0;
        for (let i = 0; i < 30; i += 2) bv[i] = i % 4 === 0 ? -0 : 0;
        // Matrix 1: a zero on the diagonal (infinities, then NaN, downstream).
        av[36 + 2 * 7] = 0;
        // Matrix 2: an infinite right-hand side entry; matrix 3: a NaN in A's triangle.
        bv[60 + 3] = Infinity;
        av[108 + (c.lower ? 4 * 6 + 1 : 6 + 4)] = NaN;
        check(c, [L.fromValues(t, a.dimensions, av), L.fromValues(t, b.dimensions, bv)], { anyNaN: true });
      }
    }
  }
});

test("triangular-solve: the compiled program runs it as a kernel", async () => {
  const next = rng(74);
  const c: Case = { t: "f32", batch: [2], n: 33, cols: 20, leftSide: false, lower: true, unitDiagonal: false, transposeA: "ADJOINT" };
  const args = operands(next, c);
  await checkCompiled(build(c), args, describe(c), reference(c, args));
  const exe = await compile(build(c));
  try {
    assert.match(exe.dump(), /triangular-solve f32 2x33x33 right lower ADJOINT/);
    assert.equal(exe.stats.interpreted.length, 0);
  } finally {
    exe.delete();
  }
});

test("triangular-solve: complex types are left to the interpreter, with the reason in dump()", async () => {
  const c: Case = { t: "c64", batch: [], n: 3, cols: 2, leftSide: true, lower: true, unitDiagonal: false, transposeA: "NO_TRANSPOSE" };
  const computation = build(c);
  const kernel = compileRoutine(computation.root, detectWasmTarget());
  assert.ok(isUnsupported(kernel) && /c64 runs on the interpreter's kernel/.test(kernel.unsupported));
  const exe = await compile(computation);
  try {
    assert.equal(exe.stats.interpreted.length, 1);
    assert.match(exe.dump(), /c64 runs on the interpreter's kernel/);
  } finally {
    exe.delete();
  }
});

test("triangular-solve: StableHLO's triangular_solve.mlir cases pass on the wasm backend, the real ones as compiled kernels", () => {
  const { results, kernels, interpreted } = conformanceOnWasm("triangular_solve.mlir");
  assert.deepEqual(results.filter((r) => r.status !== "pass").map((r) => `${r.name}: ${r.message}`), []);
  assert.equal(results.length, 27);
  // 25 real cases; the two complex ones (complex_example, complex_example_adjoint) run on the interpreter's kernel.
  assert.equal(kernels.get("triangular-solve"), 25);
  assert.equal(interpreted.get("triangularSolve"), 2);
});
