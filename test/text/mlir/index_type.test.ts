// MLIR's `index` element type: custom calls' layout attributes (`tensor<2xindex>`) and
// shape computations carry it. It is a 64-bit signed integer (exact past 2^53), prints
// back as `index` in StableHLO text and as s64 in HLO text, which has no index type.

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";
import { parseHlo, printHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { ELEMENT_TYPES } from "../../../src/types/element_type.js";

const LAYOUTS = `func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @foo(%arg0) {operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`;

test("index: a 64-bit signed integer type", () => {
  assert.equal(ELEMENT_TYPES.index.kind, "signed");
  assert.equal(ELEMENT_TYPES.index.bitWidth, 64);
});

test("index: custom call layouts as JAX writes them parse and print back unchanged", () => {
  const printed = printStableHlo(parseStableHlo(LAYOUTS));
  assert.match(printed, /operand_layouts = \[dense<\[0, 1\]> : tensor<2xindex>\], result_layouts = \[dense<\[1, 0\]> : tensor<2xindex>\]/);
  assert.equal(printStableHlo(parseStableHlo(printed)), printed);
});

test("index: values past 2^53 stay exact; HLO text writes the type as s64", () => {
  const text = `func.func @main(%arg0: tensor<2xindex>) -> tensor<2xindex> {
    %c = stablehlo.constant dense<[4611686018427387904, -3]> : tensor<2xindex>
    %0 = stablehlo.add %arg0, %c : tensor<2xindex>
    return %0 : tensor<2xindex>
  }`;
  const module = parseStableHlo(text);
  const out = evaluate(module.entry, [Literal.fromValues("index", [2], [1n, 9007199254740993n])]);
  assert.equal(out.shape.kind === "array" && out.shape.elementType, "index");
  // 2^62 + 1 and 2^53 + 1 - 3, worked out by hand.
  assert.deepEqual(out.values(), [4611686018427387905n, 9007199254740990n]);
  const hlo = printHlo(module);
  assert.match(hlo, /s64\[2\]\{0\} constant\(\{4611686018427387904, -3\}\)/);
  assert.doesNotMatch(hlo, /index\[/);
  // The HLO text reads back as an s64 program that computes the same.
  const back = evaluate(parseHlo(hlo).entry, [Literal.fromValues("s64", [2], [1n, 9007199254740993n])]);
  assert.deepEqual(back.values(), [4611686018427387905n, 9007199254740990n]);
});

test("index: HLO text rejects the name, with its position", () => {
  assert.throws(() => parseHlo(`HloModule m
ENTRY %main (p: index[2]) -> index[2] {
  ROOT %p = index[2]{0} parameter(0)
}`), /2:\d+: .*unknown element type 'index'/);
});
