// The interpreter's dot_general, convolution and triangular_solve against the outputs of
// XLA's CPU backend (JAX 0.10.2), from test/fixtures/accumulation (written by
// tools/fixtures/accumulation.py; cases.json says what each case shows). These fixtures
// define the interpreter's arithmetic, so they run on the interpreter whatever backend
// the op tests use.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { isComplex } from "../../src/types/element_type.js";
import { Literal, type Scalar } from "../../src/types/literal.js";
import { fixtureDir, loadJaxFixture } from "../support/jax_fixture.js";

const dir = fixtureDir("accumulation");

interface FixtureCase { readonly name: string; readonly kind: "exact" | "kernel" | "bound" | "solve" | "solve_bound"; readonly note: string }
const cases = JSON.parse(readFileSync(path.join(dir, "cases.json"), "utf8")) as FixtureCase[];

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
    const { run, args, arrays } = loadJaxFixture(dir, c.name);
    const expected = arrays.get("result")!;
    const actual = run(args);
    assert.equal(actual.elementType, expected.elementType);
    assert.deepEqual([...actual.dimensions], [...expected.dimensions]);
    const got = numbers(actual), want = numbers(expected);
    if (c.kind === "exact" || c.kind === "kernel" || c.kind === "solve") {
      got.forEach((g, i) => assert.ok(Object.is(g, want[i]), `${c.name}[${i}]: interpreter ${g}, XLA ${want[i]}`));
      return;
    }
    if (c.kind === "solve_bound") {
      got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 1e-5 * Math.max(1, Math.abs(want[i]!)), `${c.name}[${i}]: interpreter ${g}, XLA ${want[i]}`));
      t.diagnostic(`${c.name}: ${got.filter((g, i) => Object.is(g, want[i])).length} of ${got.length} equal XLA's bit for bit`);
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
