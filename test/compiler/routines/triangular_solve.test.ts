// Compiled triangular-solve against the interpreter's kernel (XLA's expansion of the op),
// bit for bit: every combination of left_side, lower, unit_diagonal and transpose_a
// (ADJOINT included) on f32, on both of the expansion's paths (substitution for more than
// 8 matrices under 32 rows, inverted diagonal blocks otherwise, several blocks past 128
// rows), sizes 1 to 140, batches, right-hand-side counts that do and do not fill the
// kernel's column blocks; the other triangle of A holds garbage the solve must not read.
// Singular and signed-zero systems, and sums on f32 rounding midpoints or below f32's
// normal range (the fused multiply-add's exact path), match too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { XlaBuilder, arrayShape, parameter, triangularSolve, type ElementType, type Literal } from "../../../src/index.js";
import { Literal as L } from "../../../src/types/literal.js";
import { compile } from "../../../src/compiler/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { compileRoutine } from "../../../src/compiler/routines.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkCompiled, checkRoutine, conformanceOnWasm, rng } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

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
  const count = elementCount(c.batch);
  const a: number[] = [];
  for (let m = 0; m < count; m++) {
    for (let i = 0; i < c.n; i++) {
      for (let j = 0; j < c.n; j++) a.push(i === j ? (next() < 0.5 ? -1 : 1) * (1 + next()) : (next() * 2 - 1) * 0.5);
    }
  }
  const bDims = c.leftSide ? [...c.batch, c.n, c.cols] : [...c.batch, c.cols, c.n];
  const bCount = elementCount(bDims);
  return [L.fromValues(c.t, [...c.batch, c.n, c.n], a), L.fromValues(c.t, bDims, Array.from({ length: bCount }, () => (next() * 2 - 1) * 10))];
}

const describe = (c: Case): string => JSON.stringify(c);

function check(c: Case, args: readonly Literal[], options: { anyNaN?: boolean } = {}): void {
  checkRoutine(build(c), args, `${options.anyNaN === true ? "special values " : ""}${describe(c)}`, options);
}

test("triangular-solve: every attribute combination on both paths matches the interpreter bit for bit", () => {
  const next = rng(71);
  // Inverted blocks for one matrix or a few; substitution for 9 or 12 small ones.
  const sizes: [number, number, number[]][] = [[1, 1, []], [2, 3, [3]], [7, 5, [9]], [13, 17, [2, 2]], [16, 2, [3, 4]], [5, 40, []], [31, 6, [9]], [32, 3, [9]]];
  let trial = 0;
  for (const leftSide of [true, false]) {
    for (const lower of [true, false]) {
      for (const unitDiagonal of [false, true]) {
        for (const transposeA of TRANSPOSES) {
          const [n, cols, batch] = sizes[trial % sizes.length]!;
          const c: Case = { t: "f32", batch, n, cols, leftSide, lower, unitDiagonal, transposeA };
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
      t: "f32", batch: next() < 0.3 ? [int(9, 11)] : Array.from({ length: int(0, 2) }, () => int(1, 3)), n: int(1, 40), cols: int(1, 35),
      leftSide: next() < 0.5, lower: next() < 0.5, unitDiagonal: next() < 0.3, transposeA: TRANSPOSES[int(0, 2)]!,
    };
    check(c, operands(next, c));
  }
});

test("triangular-solve: several inverted blocks (past 128 rows, the last one short) and more than one column block", () => {
  const next = rng(75);
  for (const [leftSide, lower, transposeA] of [[true, true, "NO_TRANSPOSE"], [false, false, "TRANSPOSE"], [true, false, "ADJOINT"], [false, true, "NO_TRANSPOSE"]] as const) {
    const c: Case = { t: "f32", batch: [], n: 140, cols: leftSide ? 130 : 3, leftSide, lower, unitDiagonal: false, transposeA };
    check(c, operands(next, c));
  }
});

test("triangular-solve: a double sum on an f32 midpoint, normal or subnormal, is rounded as the exact fused multiply-add", () => {
  // x0 = fma(u, v, c) for u·v = h - tiny, with h half an f32 ulp of c (c's last bit 1):
  // the double sum rounds onto the midpoint c + h, then to even would be c + 2h; the
  // fused multiply-add gives c. The inverted upper block's row 0 is [1, u]; substitution
  // computes the same fma(-a01, x1, b0). Both paths, normal and subnormal c.
  const ulp = 2 ** -23;
  for (const [c, u, v] of [[1 + ulp, 1 + ulp, 2 ** -24 * (1 - ulp)], [2 ** -127 + 2 ** -149, 2 ** -75 * (1 + ulp), 2 ** -75 * (1 - ulp)]] as const) {
    for (const batch of [[], [9]]) {
      const count = elementCount(batch);
      const a = Array.from({ length: count }, () => [1, -u, 7, 1]).flat();
      const b = Array.from({ length: count }, () => [c, v]).flat();
      const cs: Case = { t: "f32", batch, n: 2, cols: 1, leftSide: true, lower: false, unitDiagonal: false, transposeA: "NO_TRANSPOSE" };
      const args = [L.fromValues("f32", [...batch, 2, 2], a), L.fromValues("f32", [...batch, 2, 1], b)];
      assert.equal(evaluate(build(cs), args).toNumbers()[0], c, "the interpreter's exact fused multiply-add");
      check(cs, args);
    }
  }
});

test("triangular-solve: zeros, signed zeros, a zero diagonal, infinities and NaN match", () => {
  const next = rng(73);
  for (const leftSide of [true, false]) {
    for (const transposeA of TRANSPOSES) {
      for (const batch of [[4], [9]]) {
        const t = "f32";
        const c: Case = { t, batch, n: 6, cols: 5, leftSide, lower: transposeA !== "TRANSPOSE", unitDiagonal: false, transposeA };
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
  await checkCompiled(build(c), args, describe(c));
  const exe = await compile(build(c));
  try {
    assert.match(exe.dump(), /triangular-solve f32 2x33x33 right lower ADJOINT/);
    assert.equal(exe.stats.interpreted.length, 0);
  } finally {
    exe.delete();
  }
});

test("triangular-solve: f64 and complex types are left to the interpreter, with the reason in dump()", async () => {
  for (const t of ["f64", "c64"] as const) {
    const c: Case = { t, batch: [], n: 3, cols: 2, leftSide: true, lower: true, unitDiagonal: false, transposeA: "NO_TRANSPOSE" };
    const computation = build(c);
    const kernel = compileRoutine(computation.root, { wasm: detectWasmTarget() });
    const reason = new RegExp(`${t} runs on the interpreter's kernel`);
    assert.ok(isDeclined(kernel) && reason.test(kernel.declined));
    const exe = await compile(computation);
    try {
      assert.equal(exe.stats.interpreted.length, 1);
      assert.match(exe.dump(), reason);
    } finally {
      exe.delete();
    }
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
