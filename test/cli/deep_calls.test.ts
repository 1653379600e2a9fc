// A call chain 2,000 functions deep in a sharded program: Shardy's import makes each call
// a named computation nesting the callee's body, and propagation, the partitioner and
// the drawings walked that nesting recursively until the stack ran out ("internal
// error: Maximum call stack size exceeded"). Past the 1000 levels the interpreter and
// the compiler also stop at, each command now says so.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempFiles, xlats } from "./helpers.js";

function shardedChain(depth: number): string {
  let text = `module {\n  sdy.mesh @mesh = <["x"=2]>\n`;
  for (let i = 0; i < depth; i++) {
    const body = i > 0 ? `call @f${i - 1}(%0) : (tensor<4xf32>) -> tensor<4xf32>` : "stablehlo.abs %0 : tensor<4xf32>";
    text += `  func.func private @f${i}(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.negate %arg0 : tensor<4xf32>\n    %1 = ${body}\n    return %1 : tensor<4xf32>\n  }\n`;
  }
  return `${text}  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
    %0 = call @f${depth - 1}(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }\n}\n`;
}

test("partition, run and shardings stop a 2000-deep sharded call chain with a typed error", () => {
  const dir = tempFiles({ "chain.mlir": shardedChain(2000) });
  const file = join(dir, "chain.mlir");
  for (const args of [["partition", file], ["run", file, "--arg", "dense<[1.0, -2.0, 3.0, -4.0]> : tensor<4xf32>"], ["shardings", file, "--propagate"]]) {
    const r = xlats(...args);
    assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /internal error|Maximum call stack/, args[0]);
    assert.match(r.stderr, /calls from @main nest 2001 deep, more than the 1000/, args[0]);
  }
});
