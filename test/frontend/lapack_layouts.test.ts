// The LAPACK custom calls the front end lowers linalg to carry the operand and result
// layouts JAX writes (column-major matrices, row-major vectors), compared with the
// calls in the JAX-exported programs under test/fixtures/lapack/programs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { numpy as np, lax, jit, parseStableHlo, evaluate, Literal, type FrontendArray } from "../../src/index.js";

const PROGRAMS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/lapack/programs");

/** The operand_layouts and result_layouts of the call to `target` in StableHLO text. */
function layoutsOf(text: string, target: string): { operands: string; results: string } {
  const line = text.split("\n").find((l) => l.includes(`@${target}(`));
  assert.ok(line !== undefined, `no call to ${target} in\n${text}`);
  const list = (name: string): string => line.match(new RegExp(`${name} = \\[((?:dense<[^>]*> : tensor<[0-9]*xindex>(?:, )?)*)\\]`))?.[1] ?? `missing ${name}`;
  return { operands: list("operand_layouts"), results: list("result_layouts") };
}

const cases: readonly { file: string; target: string; lowered: () => string }[] = [
  { file: "lu.mlir", target: "lapack_sgetrf_ffi", lowered: () => jit((x: FrontendArray) => lax.lu(x)[0]).lower(np.zeros([4, 4])).asText() },
  { file: "eigh.mlir", target: "lapack_ssyevd_ffi", lowered: () => jit((x: FrontendArray) => lax.eigh(x)[0]).lower(np.zeros([4, 4])).asText() },
  { file: "eig.mlir", target: "lapack_sgeev_ffi", lowered: () => jit((x: FrontendArray) => np.linalg.eig(x).eigenvectors).lower(np.zeros([4, 4])).asText() },
  { file: "eigvals_c64.mlir", target: "lapack_cgeev_ffi", lowered: () => jit((x: FrontendArray) => np.linalg.eigvals(x)).lower(np.zeros([3, 3], { dtype: "complex64" })).asText() },
  { file: "svd.mlir", target: "lapack_sgesdd_ffi", lowered: () => jit((x: FrontendArray) => np.linalg.svd(x).U).lower(np.zeros([4, 3])).asText() },
  { file: "qr_batched_f64.mlir", target: "lapack_dgeqrf_ffi", lowered: () => jit((x: FrontendArray) => np.linalg.qr(x).Q).lower(np.zeros([2, 4, 3], { dtype: "float64" })).asText() },
  { file: "qr_batched_f64.mlir", target: "lapack_dorgqr_ffi", lowered: () => jit((x: FrontendArray) => np.linalg.qr(x).Q).lower(np.zeros([2, 4, 3], { dtype: "float64" })).asText() },
];

for (const c of cases) {
  test(`${c.target}: the layouts of JAX's call (${c.file})`, () => {
    const expected = layoutsOf(readFileSync(path.join(PROGRAMS, c.file), "utf8"), c.target);
    assert.ok(expected.operands.includes("dense<"), `the fixture's layouts were read: ${expected.operands}`);
    const actual = layoutsOf(c.lowered(), c.target);
    assert.deepEqual(actual, expected);
  });
}

test("eig and eigvals: geev's attributes, result types and JAX's NaNs where info != 0, as in JAX's programs", () => {
  const call = (text: string, target: string): string => text.split("\n").find((l) => l.includes(`@${target}(`))!;
  const attributes = (line: string): string => line.match(/mhlo\.backend_config = \{[^}]*\}/)![0];
  const signature = (line: string): string => line.slice(line.lastIndexOf(" : ("));
  const cases = [
    { file: "eig.mlir", target: "lapack_sgeev_ffi", text: jit((x: FrontendArray) => { const r = np.linalg.eig(x); return [r.eigenvalues, r.eigenvectors]; }).lower(np.zeros([4, 4])).asText() },
    { file: "eigvals_c64.mlir", target: "lapack_cgeev_ffi", text: jit((x: FrontendArray) => np.linalg.eigvals(x)).lower(np.zeros([3, 3], { dtype: "complex64" })).asText() },
  ];
  for (const c of cases) {
    const jax = call(readFileSync(path.join(PROGRAMS, c.file), "utf8"), c.target);
    const ours = call(c.text, c.target);
    assert.equal(attributes(ours), attributes(jax), `${c.file}: compute_left / compute_right`);
    assert.equal(signature(ours), signature(jax), `${c.file}: operand and result types`);
    // info compared with 0 (SIGNED), and a select against a complex NaN per result.
    assert.match(c.text, /stablehlo\.compare EQ, %0#\d, %\d+, SIGNED/);
    assert.match(c.text, /stablehlo\.constant dense<\(0x7FC00000,0x7FC00000\)> : tensor<complex<f32>>/);
    assert.equal(c.text.match(/stablehlo\.select/g)!.length, readFileSync(path.join(PROGRAMS, c.file), "utf8").match(/stablehlo\.select/g)!.length, `${c.file}: one select per result`);
  }
});

test("eigh and svd: JAX's NaNs where info != 0 (the compare and one select per result, as in JAX's programs)", () => {
  const cases = [
    { file: "eigh.mlir", text: jit((x: FrontendArray) => lax.eigh(x)).lower(np.zeros([4, 4])).asText() },
    { file: "svd.mlir", text: jit((x: FrontendArray) => { const r = np.linalg.svd(x); return [r.U, r.S, r.Vh]; }).lower(np.zeros([4, 3])).asText() },
  ];
  for (const c of cases) {
    const jax = readFileSync(path.join(PROGRAMS, c.file), "utf8");
    assert.match(c.text, /stablehlo\.compare EQ, %\d+#\d, %\d+, SIGNED/, c.file);
    assert.match(c.text, /stablehlo\.constant dense<0x7FC00000> : tensor<f32>/, c.file);
    assert.equal(c.text.match(/stablehlo\.select/g)?.length, jax.match(/stablehlo\.select/g)!.length, `${c.file}: one select per result`);
  }
  // Values without selects: singular values alone take one select.
  const values = jit((x: FrontendArray) => np.linalg.svd(x, { computeUv: false })).lower(np.zeros([4, 3])).asText();
  assert.equal(values.match(/stablehlo\.select/g)?.length, 1);
});

test("the lowered text with layouts parses back and evaluates to the eager result", () => {
  const a = np.array([[4, 1, 2], [1, 3, 0], [2, 0, 5]], { dtype: "float64" });
  const f = (x: FrontendArray): FrontendArray => np.linalg.det(np.add(x, np.linalg.inv(x)));
  const text = jit(f).lower(a).asText();
  assert.match(text, /operand_layouts = \[dense<\[0, 1\]> : tensor<2xindex>\]/);
  const out = evaluate(parseStableHlo(text).entry, [Literal.from("f64", a.tolist() as number[][])]);
  const expected = Number(f(a).item());
  const got = Number(out.toNested());
  assert.ok(Math.abs(got - expected) < 1e-9 * Math.abs(expected), `${got} vs ${expected}`);
});
