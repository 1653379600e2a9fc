// The spec's constraints on quantized types and on ops with quantized operands: each
// bad program is refused at parse time with the rule it breaks, at its line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { printHlo } from "../../src/text/hlo/index.js";
import { ParseError, VerifyError } from "../../src/types/errors.js";

const Q = (body: string): string => `!quant.uniform<${body}>`;

/** A function taking `x` of type `type` and returning it. */
const identity = (type: string): string => `func.func @main(%x: ${type}) -> ${type} {\n  return %x : ${type}\n}`;

/** A function with one binary op `op` of operand types `l`, `r` and result `res`. */
const binary = (op: string, l: string, r: string, res: string, attrs = ""): string =>
  `func.func @main(%a: ${l}, %b: ${r}) -> ${res} {\n  %0 = ${op} %a, %b${attrs} : (${l}, ${r}) -> ${res}\n  return %0 : ${res}\n}`;

function refused(text: string, message: RegExp, line?: number): void {
  assert.throws(() => parseStableHlo(text), (e: Error) => {
    assert.ok(e instanceof ParseError, `${e.constructor.name}: ${e.message}`);
    assert.match(e.message, message);
    if (line !== undefined) assert.match(e.message, new RegExp(`^<input>:${line}:`));
    return true;
  });
}

test("quantized element types: the spec's C3-C13 with the rule named", () => {
  refused(identity(`tensor<2x${Q("i8:f32, 0.0:1")}>`), /scale 0 must be positive \(C5\)/, 1);
  refused(identity(`tensor<2x${Q("i8:f32, 1.0:200")}>`), /zero point 200 must lie in the storage range \[-128, 127\] \(C7\)/);
  refused(identity(`tensor<2x${Q("i8<-127:127>:f32, 1.0:-128")}>`), /zero point -128 must lie in the storage range \[-127, 127\] \(C7\)/);
  refused(identity(`tensor<2x${Q("i8<5:5>:f32, 1.0")}>`), /storage_min < storage_max .*\(C3\)/);
  refused(identity(`tensor<2x${Q("u4<0:16>:f32, 1.0")}>`), /storage range \[0, 16\] .*\(C3\)/);
  refused(identity(`tensor<2x${Q("i8:i32, 1.0")}>`), /expressed type s32 must be a floating-point type \(C4\)/);
  refused(identity(`tensor<2x${Q("i8:f32, {1.0,2.0}")}>`), /per-tensor quantization takes one scale, got 2 \(C10\)/);
  refused(identity(`tensor<2x${Q("i8:f32:1, {1.0,2.0}")}>`), /quantization dimension 1 is out of range for rank 1 \(C12\)/);
  refused(identity(`tensor<3x${Q("i8:f32:0, {1.0,2.0}")}>`), /dimension 0 has size 3 but the type has 2 scales \(C13\)/);
  refused(identity(`tensor<2x${Q("i64:f32, 1.0")}>`), /'i64' is not a quantized storage type/);
});

const I8 = (params: string, shape = "2x2"): string => `tensor<${shape}x${Q(`i8:f32${params}`)}>`;

test("dot_general with quantized operands: C14-C17", () => {
  const dims = ", contracting_dims = [1] x [0]";
  refused(binary("stablehlo.dot_general", I8(", 1.0"), I8(", 1.0:3"), I8(", 1.0"), dims), /dot: rhs: zero points must be 0, got 3 \(C15\)/, 2);
  refused(binary("stablehlo.dot_general", I8(", 1.0"), I8(":0, {1.0,2.0}"), I8(", 1.0"), dims), /quantization dimension 0 is a contracting dimension \(C16\)/);
  refused(binary("stablehlo.dot_general", I8(", 1.0"), I8(", 1.0"), "tensor<2x2xf32>", dims), /result: must be quantized when the operands are.*\(C14\)/);
  refused(binary("stablehlo.dot_general", I8(", 1.0"), "tensor<2x2xf32>", I8(", 1.0"), dims), /rhs: must be quantized when lhs is \(C14\)/);
  refused(binary("stablehlo.dot_general", I8(", 1.0"), `tensor<2x2x${Q("i16:f32, 1.0")}>`, I8(", 1.0"), dims), /storage type s16 differs from lhs's s8 \(C17\)/);
  refused(binary("stablehlo.dot_general", "tensor<2x2xf16>", I8(", 1.0"), "tensor<2x2xf16>", dims), /float lhs must have rhs's expressed type f32, got f16 \(C20\)/);
  refused(binary("stablehlo.dot_general", I8(", 1.0"), I8(", 1.0"), I8(":1, {1.0,2.0}"), dims), /per-tensor quantized rhs gives a per-tensor quantized result/);
});

test("dot_general and convolution results may store wider integers (i8 x i8 -> i32) but keep the expressed type (C18, C32)", () => {
  const dims = ", contracting_dims = [1] x [0]";
  const i32 = (expressed: string): string => `tensor<2x2x${Q(`i32:${expressed}, 1.0`)}>`;
  assert.doesNotThrow(() => parseStableHlo(binary("stablehlo.dot_general", I8(", 1.0"), I8(", 1.0"), i32("f32"), dims)));
  refused(binary("stablehlo.dot_general", I8(", 1.0"), I8(", 1.0"), i32("f16"), dims), /dot: result: expressed type f16 must be the operands' f32 \(C18\)/, 2);
  const conv = ` dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}`;
  const convolution = (result: string): string => `func.func @main(%a: ${I8(", 1.0", "1x1x3")}, %b: ${I8(", 1.0", "1x1x2")}) -> tensor<1x1x2x${result}> {
  %0 = stablehlo.convolution(%a, %b)${conv} : (${I8(", 1.0", "1x1x3")}, ${I8(", 1.0", "1x1x2")}) -> tensor<1x1x2x${result}>
  return %0 : tensor<1x1x2x${result}>
}`;
  assert.doesNotThrow(() => parseStableHlo(convolution(Q("i32:f32, 1.0"))));
  refused(convolution(Q("i32:bf16, 1.0")), /convolution: result: expressed type bf16 must be the operands' f32 \(C32\)/, 2);
  refused(binary("stablehlo.dot_general", I8(":0, {1.0,2.0}"), I8(", 1.0"), i32("f32"), dims), /dot: lhs: must be per-tensor quantized, got per-axis .*\(I1\)/, 2);
});

test("convolution with a per-axis kernel: its quantization dimension is the kernel output feature dimension (C29)", () => {
  const conv = ` dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}`;
  const text = `func.func @main(%a: tensor<1x2x3x${Q("i8:f32, 1.0")}>, %b: tensor<2x2x1x${Q("i8:f32:1, {1.0,2.0}")}>) -> tensor<1x2x3x${Q("i8:f32, 1.0")}> {
  %0 = stablehlo.convolution(%a, %b)${conv} : (tensor<1x2x3x${Q("i8:f32, 1.0")}>, tensor<2x2x1x${Q("i8:f32:1, {1.0,2.0}")}>) -> tensor<1x2x3x${Q("i8:f32, 1.0")}>
  return %0 : tensor<1x2x3x${Q("i8:f32, 1.0")}>
}`;
  refused(text, /quantization dimension 1 must be the kernel output feature dimension 0 \(C29\)/, 2);
});

test("elementwise and data movement ops: matching types, per-tensor only where the spec says so, and ops that take no quantized operands", () => {
  const T = (params: string): string => `tensor<2x${Q(`i8:f32${params}`)}>`;
  refused(binary("stablehlo.add", T(", 1.0"), T(", 1.0"), `tensor<2x${Q("i16:f32, 1.0")}>`), /add: result: .* must have the storage type, storage range and expressed type/);
  refused(binary("stablehlo.add", T(":0, {1.0,2.0}"), T(":0, {1.0,2.0}"), T(", 1.0")), /per-axis quantized exactly when lhs or rhs is \(C5\)/);
  refused(binary("stablehlo.concatenate", T(", 1.0"), T(", 2.0"), `tensor<4x${Q("i8:f32, 1.0")}>`, ", dim = 0"), /operand 1: must have the quantized element type of operand 0/);
  refused(binary("stablehlo.multiply", T(":0, {1.0,2.0}"), T(":0, {1.0,2.0}"), T(":0, {1.0,2.0}")), /multiply: operand 0: takes per-tensor quantized tensors only/);
  refused(`func.func @main(%a: ${T(", 1.0")}) -> tensor<1x2x${Q("i8:f32, 2.0")}> {
  %0 = stablehlo.reshape %a : (${T(", 1.0")}) -> tensor<1x2x${Q("i8:f32, 2.0")}>
  return %0 : tensor<1x2x${Q("i8:f32, 2.0")}>
}`, /reshape: declared result type .* does not match the inferred/);
  refused(`func.func @main(%a: ${T(", 1.0")}) -> ${T(", 1.0")} {
  %0 = stablehlo.not %a : ${T(", 1.0")}
  return %0 : ${T(", 1.0")}
}`, /not: operand 0: does not take quantized operands/);
  refused(`func.func @main(%a: tensor<2xf16>) -> ${T(", 1.0")} {
  %0 = stablehlo.uniform_quantize %a : (tensor<2xf16>) -> ${T(", 1.0")}
  return %0 : ${T(", 1.0")}
}`, /uniform-quantize: result: expressed type f32 must be the operand's type f16 \(C2\)/);
  refused(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`, /uniform-dequantize: operand: must be a quantized tensor/);
});

test("HLO text has no quantized types: printing one is a clear error", () => {
  const m = parseStableHlo(identity(`tensor<2x${Q("i8:f32, 0.5:-3")}>`));
  assert.throws(() => printHlo(m), (e: Error) => e instanceof VerifyError && /HLO text has no quantized types/.test(e.message));
});
