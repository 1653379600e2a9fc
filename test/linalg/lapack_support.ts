// Shared by the LAPACK custom-call tests: reading test/fixtures/lapack/ (values computed
// once by jaxlib's LAPACK, see tools/fixtures/lapack.py) and comparing up to the
// freedoms LAPACK's routines have (the phase of an eigen/singular vector, the order of
// eigenvalues a QR iteration finds).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arrayShape, Literal, parseStableHlo, readNpz, type ElementType } from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { rng } from "../support/prng.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository's test/fixtures/lapack (tests run from dist/test/linalg). */
export const FIXTURES = path.resolve(here, "../../../test/fixtures/lapack");

export const readFixtureNpz = (file: string): Map<string, Literal> => readNpz(new Uint8Array(readFileSync(path.join(FIXTURES, file))), { name: file });

/** A complex matrix (or vector, cols = 1) in f64, row-major. */
export interface CMat {
  readonly rows: number;
  readonly cols: number;
  readonly re: number[];
  readonly im: number[];
}

/** The literal's last two dimensions as a matrix (a vector is one column), batch `b`. */
export function toCMat(lit: Literal, b = 0): CMat {
  const dims = lit.dimensions;
  const [rows, cols] = dims.length >= 2 ? [dims[dims.length - 2]!, dims[dims.length - 1]!] : [dims[0] ?? 1, 1];
  const values = lit.values().slice(b * rows * cols, (b + 1) * rows * cols);
  const re = values.map((v) => (typeof v === "object" ? v.re : Number(v)));
  const im = values.map((v) => (typeof v === "object" ? v.im : 0));
  return { rows, cols, re, im };
}

/** The literal's last dimension as a column vector, batch `b`. */
export function toCVec(lit: Literal, b = 0): CMat {
  const n = lit.dimensions[lit.dimensions.length - 1] ?? 1;
  const values = lit.values().slice(b * n, (b + 1) * n);
  return { rows: n, cols: 1, re: values.map((v) => (typeof v === "object" ? v.re : Number(v))), im: values.map((v) => (typeof v === "object" ? v.im : 0)) };
}

export function matmul(a: CMat, b: CMat): CMat {
  const re = new Array<number>(a.rows * b.cols).fill(0), im = new Array<number>(a.rows * b.cols).fill(0);
  for (let i = 0; i < a.rows; i++) for (let k = 0; k < a.cols; k++) for (let j = 0; j < b.cols; j++) {
    const ar = a.re[i * a.cols + k]!, ai = a.im[i * a.cols + k]!, br = b.re[k * b.cols + j]!, bi = b.im[k * b.cols + j]!;
    re[i * b.cols + j] += ar * br - ai * bi;
    im[i * b.cols + j] += ar * bi + ai * br;
  }
  return { rows: a.rows, cols: b.cols, re, im };
}

export function adjoint(a: CMat): CMat {
  const re: number[] = [], im: number[] = [];
  for (let j = 0; j < a.cols; j++) for (let i = 0; i < a.rows; i++) {
    re.push(a.re[i * a.cols + j]!);
    im.push(-a.im[i * a.cols + j]!);
  }
  return { rows: a.cols, cols: a.rows, re, im };
}

export const identity = (n: number): CMat => ({
  rows: n, cols: n, re: Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 1 : 0)), im: new Array<number>(n * n).fill(0),
});

export function maxAbs(a: CMat): number {
  return a.re.reduce((m, r, k) => Math.max(m, Math.hypot(r, a.im[k]!)), 0);
}

/** max |a - b| <= tol * max(1, max |b|), with a message naming `what`. */
export function assertNear(a: CMat, b: CMat, tol: number, what: string): void {
  assert.equal(a.re.length, b.re.length, `${what}: sizes differ`);
  const scale = Math.max(1, maxAbs(b));
  let worst = 0, at = -1;
  a.re.forEach((r, k) => {
    const d = Math.hypot(r - b.re[k]!, a.im[k]! - b.im[k]!);
    if (!(d <= worst)) [worst, at] = [d, k];
  });
  assert.ok(worst <= tol * scale, `${what}: element ${at} differs by ${worst} (tolerance ${tol * scale}): got ${a.re[at]}+${a.im[at]}i, want ${b.re[at]}+${b.im[at]}i`);
}

/** Column j of m. */
export const column = (m: CMat, j: number): CMat => ({
  rows: m.rows, cols: 1, re: Array.from({ length: m.rows }, (_, i) => m.re[i * m.cols + j]!), im: Array.from({ length: m.rows }, (_, i) => m.im[i * m.cols + j]!),
});

/** got = phase * want for some |phase| = 1 (the freedom of a normalized eigen/singular vector). */
export function assertSameUpToPhase(got: CMat, want: CMat, tol: number, what: string): void {
  // phase = <want, got> / |<want, got>|
  let pr = 0, pi = 0;
  want.re.forEach((wr, k) => {
    const wi = want.im[k]!, gr = got.re[k]!, gi = got.im[k]!;
    pr += wr * gr + wi * gi;
    pi += wr * gi - wi * gr;
  });
  const m = Math.hypot(pr, pi) || 1;
  const rotated: CMat = {
    rows: want.rows, cols: want.cols,
    re: want.re.map((r, k) => r * (pr / m) - want.im[k]! * (pi / m)),
    im: want.re.map((r, k) => r * (pi / m) + want.im[k]! * (pr / m)),
  };
  assertNear(got, rotated, tol, what);
}

/** Tolerance for results of this element type (LAPACK and xlats differ in rounding order). */
export const tolerance = (lit: Literal): number => (["f32", "c64"].includes(lit.elementType) ? 2e-4 : 1e-10);

const MLIR_ELEMENT: Record<string, string> = { f32: "f32", f64: "f64", c64: "complex<f32>", c128: "complex<f64>", s32: "i32" };
const tensorType = (lit: Literal): string => `tensor<${[...lit.dimensions, MLIR_ELEMENT[lit.elementType]].join("x")}>`;

/** The custom call as a program: main(operands...) -> results. */
export function callText(target: string, attributes: string, operands: readonly Literal[], results: readonly Literal[]): string {
  const ins = operands.map(tensorType), outs = results.map(tensorType);
  const args = ins.map((t, i) => `%arg${i}: ${t}`).join(", ");
  const refs = results.length === 1 ? "%0" : results.map((_, i) => `%0#${i}`).join(", ");
  const lhs = results.length === 1 ? "%0" : `%0:${results.length}`;
  return `func.func @main(${args}) -> (${outs.join(", ")}) {
  ${lhs} = stablehlo.custom_call @${target}(${ins.map((_, i) => `%arg${i}`).join(", ")}) {mhlo.backend_config = ${attributes}} : (${ins.join(", ")}) -> (${outs.join(", ")})
  return ${refs} : ${outs.join(", ")}
}`;
}

export function runCall(target: string, attributes: string, operands: readonly Literal[], results: readonly Literal[]): Literal[] {
  const module = parseStableHlo(callText(target, attributes, operands, results));
  const out = evaluate(module.entry, operands);
  return out.shape.kind === "tuple" ? [...out.elements] : [out];
}


// Random and structured inputs for the identity-based tests, per LAPACK type prefix.

export type Kind = "s" | "d" | "c" | "z";
export const KINDS: readonly Kind[] = ["s", "d", "c", "z"];
export const TYPE: Record<Kind, ElementType> = { s: "f32", d: "f64", c: "c64", z: "c128" };
export const REAL: Record<Kind, ElementType> = { s: "f32", d: "f64", c: "f32", z: "f64" };
export const complexKind = (k: Kind): boolean => k === "c" || k === "z";
/** Tolerance for an identity over matrices of order n in this type. */
export const tol = (k: Kind, n: number): number => (k === "s" || k === "c" ? 5e-6 : 1e-14) * 20 * Math.max(1, n);

/** The matrix (or the batch of matrices, in order) as a literal of type k and dimensions dims. */
export function literal(k: Kind, dims: readonly number[], m: CMat | readonly CMat[]): Literal {
  const all = Array.isArray(m) ? (m as readonly CMat[]) : [m as CMat];
  const re = all.flatMap((x) => x.re), im = all.flatMap((x) => x.im);
  if (complexKind(k)) return Literal.fromValues(TYPE[k], dims, re.map((r, i) => ({ re: r, im: im[i]! })));
  return Literal.fromValues(TYPE[k], dims, re);
}

/** The value as the element type stores it (f32 inputs are rounded). */
export const stored = (k: Kind, m: CMat): CMat => toCMat(literal(k, [m.rows, m.cols], m));

export const zeros = (t: ElementType, dims: readonly number[]): Literal => Literal.zeros(arrayShape(t, dims));

/** A LAPACK character attribute as jaxlib writes it. */
export const char = (c: string): string => `${c.charCodeAt(0)} : ui8`;

/** Random matrices with entries in [-1, 1) (complex parts for c and z) from a seeded generator. */
export function matrixSource(seed: number): { random: (k: Kind, rows: number, cols: number) => CMat; hermitian: (k: Kind, n: number) => CMat } {
  const next = rng(seed);
  const random = (k: Kind, rows: number, cols: number): CMat => {
    const re = Array.from({ length: rows * cols }, () => next() * 2 - 1);
    const im = re.map(() => (complexKind(k) ? next() * 2 - 1 : 0));
    return { rows, cols, re, im };
  };
  const hermitian = (k: Kind, n: number): CMat => {
    const a = random(k, n, n);
    return stored(k, { ...a, re: a.re.map((_, i) => (a.re[i]! + a.re[(i % n) * n + Math.floor(i / n)]!) / 2), im: a.im.map((_, i) => (a.im[i]! - a.im[(i % n) * n + Math.floor(i / n)]!) / 2) });
  };
  return { random, hermitian };
}

/** The unit lower triangle of the first k columns of an LU factor (rows × k). */
export const lowerUnit = (lu: CMat, k: number): CMat => ({
  rows: lu.rows, cols: k,
  re: Array.from({ length: lu.rows * k }, (_, p) => { const i = Math.floor(p / k), j = p % k; return i === j ? 1 : i > j ? lu.re[i * lu.cols + j]! : 0; }),
  im: Array.from({ length: lu.rows * k }, (_, p) => { const i = Math.floor(p / k), j = p % k; return i > j ? lu.im[i * lu.cols + j]! : 0; }),
});

/** The upper triangle of m's first `rows` rows. */
export const upper = (m: CMat, rows: number): CMat => ({
  rows, cols: m.cols,
  re: Array.from({ length: rows * m.cols }, (_, p) => { const i = Math.floor(p / m.cols), j = p % m.cols; return j >= i ? m.re[i * m.cols + j]! : 0; }),
  im: Array.from({ length: rows * m.cols }, (_, p) => { const i = Math.floor(p / m.cols), j = p % m.cols; return j >= i ? m.im[i * m.cols + j]! : 0; }),
});

/** The tridiagonal matrix with A(i, i-1) = dl(i), A(i, i) = d(i), A(i, i+1) = du(i) (JAX's convention; dl(0), du(n-1) unused). */
export function tridiagonalMatrix(dl: CMat, d: CMat, du: CMat): CMat {
  const n = d.re.length;
  const a: CMat = { rows: n, cols: n, re: new Array<number>(n * n).fill(0), im: new Array<number>(n * n).fill(0) };
  for (let i = 0; i < n; i++) {
    for (const [v, j] of [[dl, i - 1], [d, i], [du, i + 1]] as const) {
      if (j < 0 || j >= n) continue;
      a.re[i * n + j] = v.re[i]!;
      a.im[i * n + j] = v.im[i]!;
    }
  }
  return a;
}
