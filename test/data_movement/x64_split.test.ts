// XLA's 64-bit split custom calls (X64SplitLow, X64SplitHigh, X64Combine), on the
// selected backend: the halves of known bit patterns (two's complement, IEEE-754 by
// hand), the round trip bit for bit (a NaN payload and -0 included), and typed errors.

import assert from "node:assert/strict";
import { test } from "node:test";
import { parseStableHlo } from "../../src/index.js";
import { ExecutionError } from "../../src/types/errors.js";
import { Literal } from "../../src/types/literal.js";
import { arrayShape } from "../../src/types/shape.js";
import { evaluate } from "../support/backend.js";

/** Each 64-bit type split into its halves and combined back, in one program (one compile on a compiled backend). */
const WIDE = ["i64", "ui64", "f64"];
const PROGRAM = `func.func @main(${WIDE.map((t, i) => `%x${i}: tensor<4x${t}>`).join(", ")}) -> (${WIDE.map((t) => `tensor<4xui32>, tensor<4xui32>, tensor<4x${t}>`).join(", ")}) {
${WIDE.map((t, i) => `  %lo${i} = stablehlo.custom_call @X64SplitLow(%x${i}) : (tensor<4x${t}>) -> tensor<4xui32>
  %hi${i} = stablehlo.custom_call @X64SplitHigh(%x${i}) : (tensor<4x${t}>) -> tensor<4xui32>
  %back${i} = stablehlo.custom_call @X64Combine(%lo${i}, %hi${i}) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4x${t}>`).join("\n")}
  return ${WIDE.map((_, i) => `%lo${i}, %hi${i}, %back${i}`).join(", ")} : ${WIDE.map((t) => `tensor<4xui32>, tensor<4xui32>, tensor<4x${t}>`).join(", ")}
}`;

/** An f64 literal of the given (high, low) bit patterns. */
function f64Bits(pairs: readonly [number, number][]): Literal {
  const words = new Uint32Array(pairs.flatMap(([hi, lo]) => [lo, hi]));
  return Literal.fromStorage(arrayShape("f64", [pairs.length]), new Float64Array(words.buffer));
}

test("X64SplitLow/High: the halves of s64 (two's complement), u64 and f64 bit patterns; X64Combine puts them back bit for bit", () => {
  const s64 = Literal.fromValues("s64", [4], [-2n, 2n ** 40n + 5n, -(2n ** 63n), 0x12345678_9abcdef0n]);
  const u64 = Literal.fromValues("u64", [4], [2n ** 64n - 1n, 1n, 2n ** 32n, 0n]);
  // 1.0 = 0x3FF00000_00000000; -0.0 = 0x80000000_00000000; a quiet NaN with payload 1; 2^-1074 = 0x00000000_00000001.
  const f64 = f64Bits([[0x3ff00000, 0], [0x80000000, 0], [0x7ff80000, 1], [0, 1]]);
  const out = evaluate(parseStableHlo(PROGRAM).entry, [s64, u64, f64]).elements;
  const halves = (k: number): number[][] => [out[3 * k]!.toNumbers(), out[3 * k + 1]!.toNumbers()];
  assert.deepEqual(halves(0), [[0xfffffffe, 5, 0, 0x9abcdef0], [0xffffffff, 256, 0x80000000, 0x12345678]]);
  assert.deepEqual(halves(1), [[0xffffffff, 1, 0, 0], [0xffffffff, 0, 1, 0]]);
  assert.deepEqual(halves(2), [[0, 0, 1, 1], [0x3ff00000, 0x80000000, 0x7ff80000, 0]]);
  assert.deepEqual(out[2]!.values(), s64.values());
  assert.deepEqual(out[5]!.values(), u64.values());
  assert.deepEqual([...new Uint32Array((out[8]!.data as Float64Array).slice().buffer)], [0, 0x3ff00000, 0, 0x80000000, 1, 0x7ff80000, 1, 0]);
});

test("X64 calls on the wrong types are ExecutionErrors naming the call and the argument", () => {
  const narrow = `func.func @main(%x: tensor<4xf32>) -> tensor<4xui32> {
  %0 = stablehlo.custom_call @X64SplitLow(%x) : (tensor<4xf32>) -> tensor<4xui32>
  return %0 : tensor<4xui32>
}`;
  assert.throws(() => evaluate(parseStableHlo(narrow).entry, [Literal.fromValues("f32", [4], [1, 2, 3, 4])]),
    (e: unknown) => e instanceof ExecutionError && /X64SplitLow: operand 0 must be s64, u64 or f64, got f32\[4\]/.test(e.message));
  const halves = `func.func @main(%a: tensor<4xui32>, %b: tensor<2xui32>) -> tensor<4xi64> {
  %0 = stablehlo.custom_call @X64Combine(%a, %b) : (tensor<4xui32>, tensor<2xui32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}`;
  assert.throws(() => evaluate(parseStableHlo(halves).entry, [Literal.fromValues("u32", [4], [1, 2, 3, 4]), Literal.fromValues("u32", [2], [1, 2])]),
    (e: unknown) => e instanceof ExecutionError && /X64Combine: operand 1 u32\[2\] must have the result's dimensions s64\[4\]/.test(e.message));
});
