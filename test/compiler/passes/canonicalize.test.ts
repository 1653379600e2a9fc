// The canonicalizer's own behavior (MLIR's greedy driver): constants uniqued and
// hoisted as MLIR's OperationFolder does, MLIR's trivially-dead removal, a pattern
// table driven to a fixpoint. Expected programs are derived by hand from those rules.

import assert from "node:assert/strict";
import { test } from "node:test";
import { runPasses } from "../../../src/passes/pass.js";
import { any, type CanonicalPattern, op } from "../../../src/passes/pattern.js";
import { canonicalize } from "../../../src/passes/canonicalize.js";
import { findPass } from "../../../src/cli/pass_registry.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";

/** The function body lines of the printed module, trimmed. */
function body(printed: string): string[] {
  return printed.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("%") || l.startsWith("return") || l.startsWith("sdy.all"));
}

function canonicalized(text: string, patterns: readonly CanonicalPattern[] = []): string[] {
  return body(printStableHlo(runPasses(parseStableHlo(text), [canonicalize(patterns)], { verify: true }).module));
}

test("-canonicalize is registered and takes no options", () => {
  const reg = findPass("canonicalize");
  assert.ok(reg !== undefined);
  assert.deepEqual(reg.options, []);
});

test("constants: equal ones merge into the first; others move to the top in MLIR's order; dead pure ops go", () => {
  const out = canonicalized(`func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %arg0 : tensor<2xf32>
  %1 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %2 = stablehlo.add %0, %1 : tensor<2xf32>
  %3 = stablehlo.constant dense<2.0> : tensor<2xf32>
  %4 = stablehlo.multiply %2, %3 : tensor<2xf32>
  %5 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %6 = stablehlo.add %4, %5 : tensor<2xf32>
  %7 = stablehlo.negate %arg0 : tensor<2xf32>
  %8 = stablehlo.exponential %7 : tensor<2xf32>
  return %6 : tensor<2xf32>
}`);
  // dense<1> moves to the top (it follows abs), then dense<2> moves above it (it follows
  // the add); the second dense<1> is the first one; negate -> exponential is unused.
  assert.deepEqual(out, [
    "%cst = stablehlo.constant dense<2.000000e+00> : tensor<2xf32>",
    "%cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>",
    "%0 = stablehlo.abs %arg0 : tensor<2xf32>",
    "%1 = stablehlo.add %0, %cst_0 : tensor<2xf32>",
    "%2 = stablehlo.multiply %1, %cst : tensor<2xf32>",
    "%3 = stablehlo.add %2, %cst_0 : tensor<2xf32>",
    "return %3 : tensor<2xf32>",
  ]);
});

test("constants already together at the top keep their order; the same value of another type is another constant", () => {
  const out = canonicalized(`func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf64>) {
  %0 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %1 = stablehlo.constant dense<1.0> : tensor<2xf64>
  %2 = stablehlo.add %arg0, %0 : tensor<2xf32>
  %3 = stablehlo.add %1, %1 : tensor<2xf64>
  return %2, %3 : tensor<2xf32>, tensor<2xf64>
}`);
  assert.deepEqual(out.slice(0, 2), [
    "%cst = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>",
    "%cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<2xf64>",
  ]);
});

test("unused ops MLIR gives no memory effects stay (Shardy collectives, stablehlo collectives); unused pure ones go", () => {
  const out = canonicalized(`sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<4xf32> {
  %0 = sdy.all_gather [{"a"}] %arg0 out_sharding=<@mesh, [{}]> : tensor<4xf32>
  %1 = sdy.reshard %arg0 <@mesh, [{}]> : tensor<4xf32>
  %2 = "stablehlo.all_reduce"(%arg0) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.abs %arg0 : tensor<4xf32>
  return %3 : tensor<4xf32>
}`);
  assert.ok(out.some((l) => l.startsWith("%0 = sdy.all_gather")), out.join("\n"));
  assert.ok(!out.some((l) => l.includes("sdy.reshard")), out.join("\n"));
  assert.ok(out.some((l) => l.includes("stablehlo.all_reduce")), out.join("\n"));
});

test("patterns apply to a fixpoint: a rule's result is matched again, and what it leaves unused is removed", () => {
  // negate(negate(x)) -> x, as a table entry: three nested negations leave one.
  const doubleNegation: CanonicalPattern = {
    name: "DoubleNegation", root: "negate", operands: [op("negate", [any("x")])], rewrite: (m) => m.get("x"),
  };
  const text = (n: number): string => {
    const lines = Array.from({ length: n }, (_, i) => `  %${i} = stablehlo.negate ${i === 0 ? "%arg0" : `%${i - 1}`} : tensor<4xf32>`);
    return `func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n${lines.join("\n")}\n  return %${n - 1} : tensor<4xf32>\n}`;
  };
  assert.deepEqual(canonicalized(text(3), [doubleNegation]), ["%0 = stablehlo.negate %arg0 : tensor<4xf32>", "return %0 : tensor<4xf32>"]);
  assert.deepEqual(canonicalized(text(4), [doubleNegation]), ["return %arg0 : tensor<4xf32>"]);
  // Without the pattern, nothing changes.
  assert.equal(canonicalized(text(4)).length, 5);
});
