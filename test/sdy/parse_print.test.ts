// Shardy's parse/print lit tests (ir/test/*_parse_print.mlir): the input parses into
// typed IR and prints what Shardy prints. Every literal CHECK line (the text Shardy's
// own printer produced, FileCheck variables aside) must appear in xlats' output, and
// printing is stable (print -> parse -> print gives the same text).

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo, printStableHlo } from "../../src/index.js";
import { available, literalChecks, readLit } from "./lit.js";

/** Functions left out, with why: their syntax is outside the sdy dialect. */
const LEFT_OUT: Readonly<Record<string, readonly string[]>> = {
  // `stablehlo.add` with a dynamic result from static operands (StableHLO's type refinement, not sdy).
  "manual_computation_parse_print.mlir": ["manual_computation_dynamic_shapes"],
};

/** The file without the functions named (each from its CHECK-LABEL to the next one). */
function without(text: string, functions: readonly string[]): string {
  let out = text;
  for (const f of functions) {
    const start = out.indexOf(`// CHECK-LABEL: func @${f}\n`);
    const next = out.indexOf("// CHECK-LABEL:", start + 1);
    assert.ok(start >= 0, `no function @${f}`);
    out = out.slice(0, start) + (next < 0 ? "" : out.slice(next));
  }
  return out;
}

const squash = (s: string): string => s.replace(/\s+/g, " ").trim();

/**
 * What of a CHECK line this test compares: a line of sdy op syntax whole; in other lines
 * (ops of other dialects, whose printing is not Shardy's) each `#sdy...` attribute.
 */
function sdyPieces(check: string): string[] {
  if (/^(%\S+ = )?sdy\./.test(check) || /^(in|out)_shardings=|^manual_axes=/.test(check)) return [check];
  const pieces: string[] = [];
  for (let i = check.indexOf("#sdy"); i >= 0; i = check.indexOf("#sdy", i + 1)) {
    let depth = 0;
    let j = check.indexOf("<", i);
    for (; j < check.length; j++) {
      if (check[j] === "<") depth++;
      else if (check[j] === ">" && check[j - 1] !== "-" && --depth === 0) break;
    }
    if (depth === 0 && j < check.length) pieces.push(check.slice(i, j + 1));
  }
  return pieces;
}

for (const file of ["tensor_sharding_parse_print.mlir", "manual_computation_parse_print.mlir", "edge_sharding_parse_print.mlir", "propagation_barrier_parse_print.mlir"]) {
  test(`${file}: parses to typed IR and prints as Shardy does`, { skip: !available && "conformance data not found" }, () => {
    const text = without(readLit(file), LEFT_OUT[file] ?? []);
    const printed = printStableHlo(parseStableHlo(text, file));
    const output = squash(printed);
    const checks = literalChecks(text).filter((c) => !c.startsWith("func @") && c !== "sdy.mesh");
    // edge_sharding's CHECK lines split one op's attributes over lines: compared whole, in order.
    const pieces = file.startsWith("edge_sharding") ? checks : checks.flatMap(sdyPieces);
    assert.ok(pieces.length > 0 || file.startsWith("propagation_barrier"));
    let from = 0;
    for (const piece of pieces) {
      const at = output.indexOf(squash(piece), from);
      assert.ok(at >= 0, `missing (in order): ${piece}`);
      from = at;
    }
    assert.equal(printStableHlo(parseStableHlo(printed, "printed")), printed);
  });
}

test("propagation_barrier_parse_print.mlir: each direction prints back (its CHECK lines lack the colon FileCheck needs)", { skip: !available && "conformance data not found" }, () => {
  const text = readLit("propagation_barrier_parse_print.mlir");
  const printed = printStableHlo(parseStableHlo(text, "barrier.mlir"));
  for (const line of text.split("\n")) {
    const m = /\/\/ CHECK (sdy\.propagation_barrier .*)$/.exec(line);
    if (m === null) continue;
    const expected = m[1]!.replace('{sdy.sharding=#sdy.sharding_per_value<[<@mesh, [{"a",?}]>]>}', '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>]>}');
    assert.ok(printed.includes(expected), `missing: ${expected}`);
  }
});
