// Known-answer tests of the generators behind RngBitGenerator. The expected words are
// Random123's published kat_vectors (Threefry2x32-20 and Philox4x32-10), written
// as (counter, key) -> output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, parseStableHlo, ShapeError } from "../../src/index.js";
import { philox4x32, threefry2x32 } from "../../src/interpreter/kernels/prng.js";
import { evaluate } from "../support/backend.js";

test("Threefry2x32-20 matches Random123's known answers", () => {
  assert.deepEqual(threefry2x32(0, 0, 0, 0), [0x6b200159, 0x99ba4efe]);
  assert.deepEqual(threefry2x32(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), [0x1cb996fc, 0xbb002be7]);
  assert.deepEqual(threefry2x32(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), [0xc4923a9c, 0x483df7a0]);
});

test("Philox4x32-10 matches Random123's known answers", () => {
  assert.deepEqual(philox4x32([0, 0, 0, 0], 0, 0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
  assert.deepEqual(
    philox4x32([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], 0xffffffff, 0xffffffff),
    [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
  assert.deepEqual(
    philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], 0xa4093822, 0x299f31d0),
    [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]);
});

test("cu_threefry2x32_ffi / hip_threefry2x32_ffi (jaxlib's GPU kernel): Random123's known answers element by element, keys per element", () => {
  const text = (target: string, y2 = "tensor<3xui32>"): string => `func.func @main(%k1: tensor<3xui32>, %k2: tensor<3xui32>, %x1: tensor<3xui32>, %x2: tensor<3xui32>) -> (tensor<3xui32>, ${y2}) {
  %0:2 = stablehlo.custom_call @${target}(%k1, %k2, %x1, %x2) {mhlo.backend_config = {}} : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, ${y2})
  return %0#0, %0#1 : tensor<3xui32>, ${y2}
}`;
  const u32 = (values: number[]): Literal => Literal.fromValues("u32", [3], values);
  const args = [u32([0, 0xffffffff, 0x13198a2e]), u32([0, 0xffffffff, 0x03707344]), u32([0, 0xffffffff, 0x243f6a88]), u32([0, 0xffffffff, 0x85a308d3])];
  for (const target of ["cu_threefry2x32_ffi", "hip_threefry2x32_ffi"]) {
    const out = evaluate(parseStableHlo(text(target)).entry, args);
    assert.deepEqual(out.elements.map((y) => y.toNumbers()), [[0x6b200159, 0x1cb996fc, 0xc4923a9c], [0x99ba4efe, 0xbb002be7, 0x483df7a0]], target);
  }
  const bad = text("cu_threefry2x32_ffi", "tensor<3xi32>");
  assert.throws(() => evaluate(parseStableHlo(bad).entry, args), (e: unknown) => e instanceof ShapeError && /cu_threefry2x32_ffi: result 1 must be u32\[3\], got s32\[3\]/.test(e.message));
});
