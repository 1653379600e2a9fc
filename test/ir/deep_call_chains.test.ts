// Call chains thousands of functions deep (issue 10: "stack overflows on ... call
// chains"): the MLIR importer and the HLO printer walk them without recursion, the
// interpreter and the compiler's inliner stop a chain deeper than 1000 calls with a
// typed error, not a RangeError, and a shallower chain runs on both backends (negate
// applied n times, then abs), compiled in time linear in its depth.

import { test } from "node:test";
import assert from "node:assert/strict";
import { CompileError, ExecutionError, Literal, arrayShape, evaluate, parseHlo, parseStableHlo, printHlo } from "../../src/index.js";
import { compile } from "../../src/compiler/index.js";
import { MAX_CALL_DEPTH } from "../../src/types/resource.js";

function chain(depth: number): string {
  let text = "";
  for (let i = 0; i < depth; i++) {
    const body = i > 0 ? `call @f${i - 1}(%0) : (tensor<4xf32>) -> tensor<4xf32>` : "stablehlo.abs %0 : tensor<4xf32>";
    text += `func.func private @f${i}(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.negate %arg0 : tensor<4xf32>\n  %1 = ${body}\n  return %1 : tensor<4xf32>\n}\n`;
  }
  return `${text}func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = call @f${depth - 1}(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n`;
}

const x = Literal.fromStorage(arrayShape("f32", [4]), new Float32Array([1, -2, 3, -4]));

test("an 8000-deep call chain imports, prints as HLO and parses back; evaluating it is a typed error", () => {
  const module = parseStableHlo(chain(8000));
  assert.equal(module.computations.length, 8001);
  const hlo = printHlo(module);
  assert.equal(parseHlo(hlo).computations.length, 8001);
  assert.throws(() => evaluate(module.entry, [x]), (e: unknown) => e instanceof ExecutionError && /nest more than 1000 calls deep/.test(e.message));
});

test("a chain just inside the call depth runs on the interpreter and compiled", async () => {
  const module = parseStableHlo(chain(MAX_CALL_DEPTH - 1));
  assert.deepEqual(evaluate(module.entry, [x]).toNumbers(), [1, 2, 3, 4]);
  // Inlined top-down from the entry: bottom-up, every level held a copy of all below it
  // (this chain took 10 s to compile, 5000 levels ran out of memory).
  const exe = await compile(module.entry);
  assert.deepEqual(exe.run([x]).toNumbers(), [1, 2, 3, 4]);
  await assert.rejects(compile(parseStableHlo(chain(1500)).entry), (e: unknown) => e instanceof CompileError && /nest more than 1000 deep/.test(e.message));
});
