// The interpreter's dot_general, convolution and triangular_solve against the outputs of
// XLA's CPU backend (JAX 0.10.2), from test/fixtures/accumulation (written by
// tools/fixtures/accumulation.py; cases.json says what each case shows). These fixtures
// define the interpreter's arithmetic, so they run on the interpreter whatever backend
// the op tests use.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { isComplex, type ElementType } from "../../src/types/element_type.js";
import { Literal, type Scalar } from "../../src/types/literal.js";
import { readNpz } from "../../src/types/npz.js";

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/accumulation");

interface FixtureCase { readonly name: string; readonly kind: "exact" | "kernel" | "bound" | "solve"; readonly note: string }
const cases = JSON.parse(readFileSync(path.join(dir, "cases.json"), "utf8")) as FixtureCase[];

function load(name: string): { run: (args: readonly Literal[]) => Literal; args: Literal[]; expected: Literal } {
  const module = parseStableHlo(readFileSync(path.join(dir, `${name}.mlir`), "utf8"), `${name}.mlir`);
  const entry = module.entry;
  const types: Record<string, ElementType> = {};
  entry.parameters.forEach((p, i) => { if (p.shape.kind === "array") types[`arg_${i}`] = p.shape.elementType; });
  const root = entry.root.shape;
  const resultShape = root.kind === "tuple" ? root.elements[0]! : root;
  if (resultShape.kind === "array") types["result"] = resultShape.elementType;
  const arrays = readNpz(new Uint8Array(readFileSync(path.join(dir, `${name}.npz`))), { name, elementTypes: types });
  const args = entry.parameters.map((_, i) => arrays.get(`arg_${i}`)!);
  const run = (xs: readonly Literal[]): Literal => {
    const r = evaluate(entry, xs);
    return r.shape.kind === "tuple" ? r.elements[0]! : r;
  };
  return { run, args, expected: arrays.get("result")! };
}

const parts = (v: Scalar): number[] => (typeof v === "object" ? [v.re, v.im] : [Number(v)]);

/** Each element's real and imaginary parts as numbers. */
const numbers = (lit: Literal): number[] => lit.values().flatMap(parts);

/** A literal of the same type whose elements are `f` of each element (complex: of each part, imaginary parts 0 when `real`). */
function mapLiteral(lit: Literal, f: (x: number) => number, real = false): Literal {
  const complex = isComplex(lit.elementType);
  const values = lit.values().map((v): Scalar => {
    if (!complex) return f(Number(v));
    const [re, im] = parts(v) as [number, number];
    return real ? { re: f(re) + f(im), im: 0 } : { re: f(re), im: f(im) };
  });
  return Literal.fromValues(lit.elementType, lit.dimensions, values);
}

for (const c of cases) {
  test(`accumulation fixture ${c.name} (${c.kind}): ${c.note}`, (t) => {
    const { run, args, expected } = load(c.name);
    const actual = run(args);
    assert.equal(actual.elementType, expected.elementType);
    assert.deepEqual([...actual.dimensions], [...expected.dimensions]);
    const got = numbers(actual), want = numbers(expected);
    if (c.kind === "exact" || c.kind === "kernel") {
      got.forEach((g, i) => assert.ok(Object.is(g, want[i]), `${c.name}[${i}]: interpreter ${g}, XLA ${want[i]}`));
      return;
    }
    if (c.kind === "solve") {
      got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 1e-5 * Math.max(1, Math.abs(want[i]!)), `${c.name}[${i}]: interpreter ${g}, XLA ${want[i]}`));
      return;
    }
    // Both sums are of the same products in f32 (or f32 parts), each in some order with one
    // rounding per step: each is within K u sum|a b| of the exact value (u = 2^-24), K
    // counted by running the bilinear program on ones, sum|a b| on the operands' magnitudes.
    const terms = numbers(run(args.map((a) => mapLiteral(a, () => 1, true))));
    const magnitudes = numbers(run(args.map((a) => mapLiteral(a, Math.abs, true))));
    const complexFactor = isComplex(actual.elementType) ? 2 : 1;
    let same = 0;
    got.forEach((g, i) => {
      const k = terms[complexFactor === 2 ? i - (i % 2) : i]!, s = magnitudes[complexFactor === 2 ? i - (i % 2) : i]!;
      const bound = 2 * complexFactor * k * 2 ** -24 * s * 1.01;
      if (Object.is(g, want[i])) same++;
      assert.ok(Math.abs(g - want[i]!) <= bound, `${c.name}[${i}]: interpreter ${g}, XLA ${want[i]}, bound ${bound}`);
    });
    t.diagnostic(`${c.name}: ${same} of ${got.length} parts equal XLA's bit for bit`);
  });
}
