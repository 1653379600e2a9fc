// The new user's check: programs exported by `jax.jit(jnp.linalg.qr).lower(x).as_text()`
// (and eigh, svd, solve, inv, det, cholesky, eig, lu, hessenberg, tridiagonal,
// tridiagonal_solve) run unchanged, and their results match what JAX computed with
// LAPACK on the same arguments (tools/fixtures/lapack.py), up to the freedoms the
// routines have: the sign/phase of eigen- and singular vectors, the order of a general
// matrix's eigenvalues.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseHlo, parseStableHlo, printHlo, type Literal } from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { assertNear, assertSameUpToPhase, column, FIXTURES, readFixtureNpz, toCMat, type CMat } from "./lapack_support.js";
import { elementCount } from "../../src/types/shape.js";

const PROGRAMS = path.join(FIXTURES, "programs");
const names = readdirSync(PROGRAMS).filter((f) => f.endsWith(".mlir")).map((f) => f.slice(0, -".mlir".length)).sort();

/** f32 results of a whole program (solve, inv amplify rounding by the condition number). */
const tol = (lit: Literal): number => (["f32", "c64"].includes(lit.elementType) ? 1e-3 : 1e-9);

const rows = (m: CMat): CMat[] => Array.from({ length: m.rows }, (_, i) => ({
  rows: 1, cols: m.cols, re: m.re.slice(i * m.cols, (i + 1) * m.cols), im: m.im.slice(i * m.cols, (i + 1) * m.cols),
}));

test("lapack programs: every exported program has a fixture", () => {
  assert.ok(["qr", "eigh", "svd", "solve", "inv", "det", "cholesky", "eig"].every((n) => names.includes(n)), names.join(", "));
});

const hloNames = new Set(readdirSync(PROGRAMS).filter((f) => f.endsWith(".hlo")).map((f) => f.slice(0, -".hlo".length)));
const variants = names.flatMap((name) => [{ name, file: `${name}.mlir` }, ...(hloNames.has(name) ? [{ name, file: `${name}.hlo` }] : [])]);

test("lapack programs: some are exported as HLO text as well; their custom calls print back (api_version, buffer hints, typed backend_config)", () => {
  assert.ok(["qr", "eigh", "svd", "eig"].every((n) => hloNames.has(n)), [...hloNames].join(", "));
  for (const name of hloNames) {
    const printed = printHlo(parseHlo(readFileSync(path.join(PROGRAMS, `${name}.hlo`), "utf8")));
    assert.equal(printHlo(parseHlo(printed)), printed, `${name}: print(parse(print(x))) == print(x)`);
    assert.match(printed, /custom_call_target="lapack_\w+_ffi", operand_layout_constraints=\{.*\}, api_version=API_VERSION_TYPED_FFI, backend_config=\{/);
  }
});

for (const { name, file } of variants) {
  test(`lapack programs: ${file} as JAX exports it runs and matches JAX's results`, () => {
    const text = readFileSync(path.join(PROGRAMS, file), "utf8");
    const module = file.endsWith(".hlo") ? parseHlo(text, file) : parseStableHlo(text, file);
    const data = readFixtureNpz(`programs/${name}.npz`);
    const args = [...data.keys()].filter((k) => k.startsWith("arg")).sort().map((k) => data.get(k)!);
    const want = [...data.keys()].filter((k) => k.startsWith("result")).sort().map((k) => data.get(k)!);
    const check = String.fromCharCode(...data.get("check")!.toNumbers());
    const out = evaluate(module.entry, args);
    const got = out.shape.kind === "tuple" ? [...out.elements] : [out];
    assert.equal(got.length, want.length, "result count");
    got.forEach((g, i) => {
      assert.equal(g.elementType, want[i]!.elementType, `result ${i} type`);
      assert.deepEqual(g.dimensions, want[i]!.dimensions, `result ${i} dimensions`);
    });
    const batches = (lit: Literal): number => elementCount(lit.dimensions.slice(0, -2));
    switch (check) {
      case "exact":
        got.forEach((g, i) => {
          if (g.elementType === "s32") return assert.deepEqual(g.toNumbers(), want[i]!.toNumbers(), `result ${i}`);
          for (let b = 0; b < batches(g); b++) assertNear(toCMat(g, b), toCMat(want[i]!, b), tol(g), `result ${i} batch ${b}`);
        });
        return;
      case "eigh": {
        assertNear(toCMat(got[0]!), toCMat(want[0]!), tol(got[0]!), "eigenvalues");
        const v = toCMat(got[1]!), vw = toCMat(want[1]!);
        for (let j = 0; j < v.cols; j++) assertSameUpToPhase(column(v, j), column(vw, j), tol(got[1]!), `eigenvector ${j}`);
        return;
      }
      case "svd": {
        assertNear(toCMat(got[1]!), toCMat(want[1]!), tol(got[1]!), "singular values");
        const k = got[1]!.dimensions[got[1]!.dimensions.length - 1]!;
        const u = toCMat(got[0]!), uw = toCMat(want[0]!), vh = rows(toCMat(got[2]!)), vhw = rows(toCMat(want[2]!));
        for (let j = 0; j < k; j++) {
          assertSameUpToPhase(column(u, j), column(uw, j), tol(got[0]!), `left singular vector ${j}`);
          assertSameUpToPhase(vh[j]!, vhw[j]!, tol(got[2]!), `right singular vector ${j}`);
        }
        return;
      }
      case "eigvals":
      case "eig": {
        const w = toCMat(got[0]!), ww = toCMat(want[0]!);
        const used = new Set<number>();
        for (let j = 0; j < w.rows; j++) {
          let best = -1;
          for (let k = 0; k < ww.rows; k++) {
            if (used.has(k)) continue;
            const d = Math.hypot(ww.re[k]! - w.re[j]!, ww.im[k]! - w.im[j]!);
            if (best < 0 || d < Math.hypot(ww.re[best]! - w.re[j]!, ww.im[best]! - w.im[j]!)) best = k;
          }
          used.add(best);
          assert.ok(Math.hypot(ww.re[best]! - w.re[j]!, ww.im[best]! - w.im[j]!) <= tol(got[0]!), `eigenvalue ${j} (${w.re[j]}+${w.im[j]}i) matches JAX's`);
          if (check === "eig") assertSameUpToPhase(column(toCMat(got[1]!), j), column(toCMat(want[1]!), best), tol(got[1]!), `eigenvector ${j}`);
        }
        return;
      }
      default:
        assert.fail(`unknown check '${check}'`);
    }
  });
}
