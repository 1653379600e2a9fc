// -sdy-unflatten-call-graph with and without dedup-functions-fully, as `xlats opt` runs
// it. Expectations from Shardy's pass: functions are grouped by their original name
// (`sdy.original_func_name`, else their own) and manual axes, and, unless
// dedup-functions-fully is set, by their argument and result shardings; every call of
// a group goes to one function. Without the option that is the first called; with it,
// the one with the most calls among functions of equal shardings (the first on a tie;
// among equally sharded copies, the one whose call took the count past the others).
// The pass only retargets calls and drops the flattening attributes: functions left
// without calls stay (symbol-dce removes them), and no reshard is inserted.

import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluate, Literal, parseStableHlo } from "../../../src/index.js";
import { line, opt } from "./opt.js";

const SHARDED = (n: string, ins: string, outs: string, original: string | undefined): string =>
  `func.func private @${n}(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [${ins}]>}) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [${outs}]>})` +
  (original === undefined ? "" : ` attributes {sdy.original_func_name = "${original}"}`) + ` {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}`;

// g is called once with shardings A, g_1 and g_2 (both from g) twice with shardings B.
const PROGRAM = `sdy.mesh @mesh = <["p"=2, "q"=2]>
func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = call @g(%arg0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = call @g_1(%0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = call @g_2(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = call @h(%2) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
${SHARDED("g", '{"p"}, {}', '{"p"}, {}', undefined)}
${SHARDED("g_1", '{}, {"q"}', '{}, {"q"}', "g")}
${SHARDED("g_2", '{}, {"q"}', '{}, {"q"}', "g")}
${SHARDED("h", '{}, {"q"}', '{}, {"q"}', undefined)}`;

const callees = (out: string): string[] => [...out.matchAll(/= call @(\w+)\(/g)].map((m) => m[1]!);

test("-sdy-unflatten-call-graph: calls of equally sharded copies go to the first; copies sharded differently stay apart", () => {
  const out = opt(PROGRAM, "-sdy-unflatten-call-graph");
  assert.deepEqual(callees(out), ["g", "g_1", "g_1", "h"]);
  assert.doesNotMatch(out, /original_func_name/);
  // Uncalled, g_2 stays: removing it is symbol-dce's work.
  assert.match(out, /func\.func private @g_2/);
});

test("-sdy-unflatten-call-graph{dedup-functions-fully=true}: one function per original, the one called most", () => {
  const out = opt(PROGRAM, "-sdy-unflatten-call-graph=dedup-functions-fully=true");
  // g_1 and g_2 share shardings, so their two calls outnumber g's one. As in Shardy, the
  // function taken is the one whose call made its shardings' count the largest: g_2.
  // h has another original name and stays its own.
  assert.deepEqual(callees(out), ["g_2", "g_2", "g_2", "h"]);
  assert.equal(line(out, "(%arg0) :"), "%0 = call @g_2(%arg0) : (tensor<4x2xf32>) -> tensor<4x2xf32>");
  // Each function computes x + x: the program is 16 x, before and after.
  const x = Literal.fromValues("f32", [4, 2], [1, -2, 3.5, 0, 7, -8, 0.25, 6]);
  for (const text of [PROGRAM, out]) {
    assert.deepEqual(evaluate(parseStableHlo(text, "p.mlir").entry, [x]).toNumbers(), [16, -32, 56, 0, 112, -128, 4, 96]);
  }
});

test("-sdy-unflatten-call-graph{dedup-functions-fully=true}: on a tie the first called stays; manual axes still separate", () => {
  const tie = PROGRAM.replace("%2 = call @g_2(%1)", "%2 = call @g(%1)");
  assert.deepEqual(callees(opt(tie, "-sdy-unflatten-call-graph=dedup-functions-fully=true")), ["g", "g", "g", "h"]);
  const manual = PROGRAM.replace('attributes {sdy.original_func_name = "g"} {\n  %0 = stablehlo.add %arg0, %arg0 : tensor<4x2xf32>\n  return %0 : tensor<4x2xf32>\n}\nfunc.func private @h',
    'attributes {sdy.original_func_name = "g", sdy.func_manual_axes = #sdy<manual_axes{"p"}>} {\n  %0 = stablehlo.add %arg0, %arg0 : tensor<4x2xf32>\n  return %0 : tensor<4x2xf32>\n}\nfunc.func private @h');
  assert.notEqual(manual, PROGRAM);
  // g_2 now has manual axes: it is a group of its own; g_1 (one call) ties with g (one call), and g, called first, stays.
  assert.deepEqual(callees(opt(manual, "-sdy-unflatten-call-graph=dedup-functions-fully=true")), ["g", "g", "g_2", "h"]);
});
