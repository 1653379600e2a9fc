// chlo.lgamma and chlo.digamma against exactly rounded values from mpmath (60 digits;
// tools/fixtures/gamma_negative.py): dense around every pole from -1 to -50, a few ulp
// from every zero of log|Γ| and ψ there (where the reflection formula in double was off
// by up to 16 and 55 ulp, and by the sign next to the zeros), far out to -2^51 and next
// to 0. The bound is 3 ulp for f64 and for f32 (run as a program, f32 in and out).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { digamma, lgamma } from "../../src/interpreter/kernels/chlo/gamma.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import { ulpDistance } from "../support/ulp.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** Rows [x, lgamma(x), digamma(x)]; infinities are written as strings. */
const sweep = JSON.parse(readFileSync(path.join(repoRoot, "test/fixtures/gamma_negative/sweep.json"), "utf8")) as Record<"f64" | "f32", (number | string)[][]>;
const rows = (type: "f64" | "f32"): number[][] => sweep[type].map((row) => row.map(Number));

const MAX_ULP = 3;

function worst(type: "f64" | "f32", xs: readonly number[], actual: ArrayLike<number>, expected: readonly number[], what: string): number {
  let max = 0;
  let at = "";
  for (let i = 0; i < xs.length; i++) {
    const d = ulpDistance(type, actual[i]!, expected[i]!);
    if (d > max) { max = d; at = `${what}(${xs[i]}) = ${actual[i]}, exactly rounded ${expected[i]}`; }
  }
  assert.ok(max <= MAX_ULP, `${type} ${at}: ${max} ulp`);
  return max;
}

test("lgamma and digamma on f64: within 3 ulp of mpmath across the negative poles and zeros", () => {
  const table = rows("f64");
  assert.ok(table.length > 1500 && table.some((r) => r[0]! < -(2 ** 50)) && table.some((r) => r[0]! > -1e-300 && r[0]! < 0));
  const xs = table.map((r) => r[0]!);
  worst("f64", xs, xs.map(lgamma), table.map((r) => r[1]!), "lgamma");
  worst("f64", xs, xs.map(digamma), table.map((r) => r[2]!), "digamma");
});

test("chlo.lgamma and chlo.digamma on f32 tensors: within 3 ulp of the exactly rounded float", () => {
  const table = rows("f32");
  const n = table.length;
  const program = parseStableHlo(`func.func @main(%x: tensor<${n}xf32>) -> (tensor<${n}xf32>, tensor<${n}xf32>) {
    %0 = chlo.lgamma %x : tensor<${n}xf32> -> tensor<${n}xf32>
    %1 = chlo.digamma %x : tensor<${n}xf32> -> tensor<${n}xf32>
    return %0, %1 : tensor<${n}xf32>, tensor<${n}xf32>
  }`);
  const xs = table.map((r) => r[0]!);
  const [lg, dg] = evaluate(program.entry, [Literal.from("f32", xs)]).elements;
  worst("f32", xs, lg!.toNumbers(), table.map((r) => r[1]!), "lgamma");
  worst("f32", xs, dg!.toNumbers(), table.map((r) => r[2]!), "digamma");
});
