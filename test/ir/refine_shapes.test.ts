// refine-shapes (StableHLO's stablehlo-refine-shapes): real shape-polymorphic JAX
// exports (test/fixtures/shape_poly, made by tools/fixtures/shape_poly.py) run for two
// batch sizes and match what XLA computed; hand-written cases check folding, the
// static forms, specialization of callees and the errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { hasDynamicShapes, refineEntry, refineShapes, RefineError } from "../../src/passes/refine_shapes.js";
import { getBackend } from "../../src/runtime/backend_registry.js";
import { DEFAULT_BACKEND } from "../../src/compiler/backends.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import { readNpz } from "../../src/types/npz.js";
import { assertCloseToXla } from "../support/close.js";
import { arrayShape } from "../../src/types/shape.js";
import { passNamed } from "../../src/cli/pass_registry.js";

const here = path.dirname(fileURLToPath(import.meta.url));
// dist/test/ir -> the repository root.
const fixtures = path.resolve(here, "../../../test/fixtures/shape_poly");

for (const name of ["weighted_rows", "doubled_pairs", "softmax_layer", "padded_window", "carried_loop"]) {
  test(`jax.export with a symbolic batch: ${name} matches XLA for batches 3 and 5`, async () => {
    const module = parseStableHlo(readFileSync(path.join(fixtures, `${name}.mlir`), "utf8"), `${name}.mlir`);
    assert.ok(hasDynamicShapes(module.entry));
    const arrays = readNpz(readFileSync(path.join(fixtures, `${name}.npz`)));
    for (const i of [0, 1]) {
      const x = arrays.get(`x${i}`)!;
      const y = arrays.get(`y${i}`)!;
      const program = refineEntry(module.entry, [x.shape]);
      assert.ok(!hasDynamicShapes(program), `${name}: the refined program is static`);
      assertCloseToXla(evaluate(program, [x]), y, `${name} (interpreter, batch ${x.dimensions[0]})`);
      assertCloseToXla(await getBackend(DEFAULT_BACKEND).evaluate!(program, [x]), y, `${name} (${DEFAULT_BACKEND}, batch ${x.dimensions[0]})`);
    }
  });
}

const POLY = `func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %d1 = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %shape = stablehlo.concatenate %d1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %b = stablehlo.dynamic_broadcast_in_dim %two, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %r = stablehlo.multiply %x, %b : tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}`;

test("refine-shapes: the argument shape folds the shape computation and makes the broadcast static", () => {
  const module = parseStableHlo(POLY);
  const refined = refineShapes(module, [arrayShape("f32", [3, 4])]);
  const printed = printStableHlo(refined);
  assert.match(printed, /func\.func @main\(%arg0: tensor<3x4xf32>\) -> tensor<3x4xf32>/);
  assert.match(printed, /stablehlo\.broadcast_in_dim %cst, dims = \[\] : \(tensor<f32>\) -> tensor<3x4xf32>/);
  assert.doesNotMatch(printed, /get_dimension_size|dynamic_broadcast_in_dim|concatenate/);
  const x = Literal.from("f32", [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]);
  assert.deepEqual(evaluate(refined.entry, [x]).toNumbers(), [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
});

test("refine-shapes: without argument shapes a ? stays (xlats opt -stablehlo-refine-shapes)", () => {
  const module = parseStableHlo(POLY);
  const out = passNamed("-stablehlo-refine-shapes").run(module, { verify: true, log: () => {} });
  assert.match(printStableHlo(out), /dynamic_broadcast_in_dim/);
  // With a static argument type, the pass alone makes the program static.
  const fixed = parseStableHlo(POLY.replace("%x: tensor<?x4xf32>", "%x: tensor<2x4xf32>"));
  const printed = printStableHlo(passNamed("-stablehlo-refine-shapes").run(fixed, { verify: true, log: () => {} }));
  assert.match(printed, /stablehlo\.multiply %arg0, %0 : tensor<2x4xf32>/);
});

test("refine-shapes: each call is refined for its operands; jax.global_constant arguments become their values", () => {
  const text = `func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
    %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %m = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %a = func.call @scale(%n, %x) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
    %b = func.call @scale(%m, %y) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
    func.return %a, %b : tensor<?xf32>, tensor<?xf32>
  }
  func.func private @scale(%n: tensor<i32> {jax.global_constant = "n"}, %v: tensor<?xf32>) -> tensor<?xf32> {
    %f = stablehlo.convert %n : (tensor<i32>) -> tensor<f32>
    %s = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %b = stablehlo.dynamic_broadcast_in_dim %f, %s, dims = [] : (tensor<f32>, tensor<1xi32>) -> tensor<?xf32>
    %r = stablehlo.multiply %v, %b : tensor<?xf32>
    func.return %r : tensor<?xf32>
  }`;
  const refined = refineShapes(parseStableHlo(text), [arrayShape("f32", [2]), arrayShape("f32", [3])]);
  const printed = printStableHlo(refined);
  // Two versions of @scale: one per operand shape and value of n.
  assert.match(printed, /func\.func private @scale\(%arg0: tensor<i32> \{jax\.global_constant = "n"\}, %arg1: tensor<2xf32>\) -> tensor<2xf32>/);
  assert.match(printed, /func\.func private @scale_1\(%arg0: tensor<i32> \{jax\.global_constant = "n"\}, %arg1: tensor<3xf32>\) -> tensor<3xf32>/);
  const out = evaluate(refined.entry, [Literal.from("f32", [1, 2]), Literal.from("f32", [1, 2, 3])]);
  assert.deepEqual(out.elements.map((e) => e.toNumbers()), [[2, 4], [3, 6, 9]]);
});

test("refine-shapes: a failed shape_assertion reports JAX's message with the values; a contradicting shape is a RefineError", () => {
  const text = `func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %ok = stablehlo.compare GE, %d, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%ok, %d) {api_version = 2 : i32, error_message = "expected b >= 2, got b = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    func.return %x : tensor<?xf32>
  }`;
  const module = parseStableHlo(text);
  assert.throws(() => refineShapes(module, [arrayShape("f32", [1])]), (e: unknown) =>
    e instanceof RefineError && /custom_call at 5:5: expected b >= 2, got b = 1/.test(e.message));
  // The assertion holds for 3: it is gone from the refined program.
  assert.doesNotMatch(printStableHlo(refineShapes(module, [arrayShape("f32", [3])])), /shape_assertion/);
  assert.throws(() => refineShapes(module, [arrayShape("f32", [3, 1])]), /argument 0 of @main has shape f32\[3,1\], not compatible with the declared f32\[\?\]/);
  const contradiction = parseStableHlo(`func.func @main(%x: tensor<?xf32>) -> tensor<4xf32> {
    %s = stablehlo.constant dense<[4]> : tensor<1xi32>
    %r = stablehlo.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<1xi32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }`);
  assert.throws(() => refineShapes(contradiction, [arrayShape("f32", [3])]), (e: unknown) =>
    e instanceof RefineError && /at 3:5: .*3 elements|at 3:5: .*reshape/.test(e.message));
});

/** Element-wise equality (integers, and floats top_k copies unchanged). */
function assertSame(actual: Literal, expected: Literal, what: string): void {
  assert.deepEqual(actual.dimensions, expected.dimensions, `${what}: shape`);
  assert.deepEqual(actual.values(), expected.values(), `${what}: values`);
}

for (const [name, targetOp] of [["top_half", "topK"], ["random_bits", "rngBitGenerator"]] as const) {
  test(`jax.export's ${name === "top_half" ? "dynamic_top_k" : "dynamic_rng_bit_generator"} custom call: refined to ${targetOp}, matches XLA`, () => {
    const module = parseStableHlo(readFileSync(path.join(fixtures, `${name}.mlir`), "utf8"), `${name}.mlir`);
    const arrays = readNpz(readFileSync(path.join(fixtures, `${name}.npz`)));
    for (const i of [0, 1]) {
      const xs = [...arrays.keys()].filter((k) => k.startsWith(`x${i}_`)).sort().map((k) => arrays.get(k)!);
      const ys = [...arrays.keys()].filter((k) => k.startsWith(`y${i}_`)).sort().map((k) => arrays.get(k)!);
      const refined = refineShapes(module, xs.map((x) => x.shape));
      assert.ok(!hasDynamicShapes(refined.entry), `${name}: the refined program is static`);
      const ops = refined.functions!.flatMap((f) => f.instructions.map((inst) => inst.opcode));
      assert.ok(ops.includes(targetOp) && !ops.includes("customCall"), `${name}: ${ops.join(",")}`);
      const results = evaluate(refined.entry, xs).elements;
      ys.forEach((y, j) => assertSame(results[j]!, y, `${name}, batch ${i}, result ${j}`));
    }
  });
}

test("the interpreter runs dynamic_top_k and dynamic_rng_bit_generator with run-time k and output shape", () => {
  const program = parseStableHlo(`func.func @main(%x: tensor<2x4xf32>, %k: tensor<i32>, %state: tensor<2xui64>, %shape: tensor<2xi64>)
      -> (tensor<2x?xf32>, tensor<2x?xi32>, tensor<2xui64>, tensor<?x?xui32>) {
    %t:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) {api_version = 2 : i32} : (tensor<2x4xf32>, tensor<i32>) -> (tensor<2x?xf32>, tensor<2x?xi32>)
    %r:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%state, %shape) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>, tensor<2xi64>) -> (tensor<2xui64>, tensor<?x?xui32>)
    return %t#0, %t#1, %r#0, %r#1 : tensor<2x?xf32>, tensor<2x?xi32>, tensor<2xui64>, tensor<?x?xui32>
  }`);
  const state = Literal.from("u64", [5n, 7n]);
  const [values, indices, newState, bits] = evaluate(program.entry, [
    Literal.from("f32", [[3, 9, -1, 9], [0, -2, 8, 1]]), Literal.scalar("s32", 3), state, Literal.from("s64", [2, 3]),
  ]).elements;
  // Largest first; equal values keep their order (top_k is stable).
  assert.deepEqual(values!.values(), [9, 9, 3, 8, 1, 0]);
  assert.deepEqual(indices!.values(), [1, 3, 0, 2, 3, 0]);
  assert.deepEqual(values!.dimensions, [2, 3]);
  // The same bits as the static rng_bit_generator of that shape.
  const fixed = parseStableHlo(`func.func @main(%state: tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>) {
    %r:2 = stablehlo.rng_bit_generator %state, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
    return %r#0, %r#1 : tensor<2xui64>, tensor<2x3xui32>
  }`);
  const [expectedState, expectedBits] = evaluate(fixed.entry, [state]).elements;
  assert.deepEqual(bits!.dimensions, [2, 3]);
  assert.deepEqual(bits!.values(), expectedBits!.values());
  assert.deepEqual(newState!.values(), expectedState!.values());
  assert.throws(() => evaluate(program.entry, [Literal.from("f32", [[1, 2, 3, 4], [5, 6, 7, 8]]), Literal.scalar("s32", 5), state, Literal.from("s64", [2, 3])]),
    /dynamic_top_k: the shape operands. values are invalid: .*5 must be in \[0, 4\]/);
});

test("refine-shapes: a while loop whose carried shape changes across iterations is a RefineError", () => {
  const module = parseStableHlo(`func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<?xf32>
    cond {
      %three = stablehlo.constant dense<3> : tensor<i32>
      %c = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      %w = stablehlo.concatenate %v, %v, dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      stablehlo.return %n, %w : tensor<i32>, tensor<?xf32>
    }
    return %r#1 : tensor<?xf32>
  }`);
  assert.throws(() => refineShapes(module, [arrayShape("f32", [3])]), (e: unknown) => e instanceof RefineError &&
    /while at \d+:\d+: carried value 1 enters the loop as f32\[3\] but the body returns f32\[6\]: a shape that changes across iterations/.test((e as Error).message));
});

test("dynamic_top_k: a k past the last dimension is a RefineError naming the op", () => {
  const module = parseStableHlo(`func.func @main(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
    %k = stablehlo.constant dense<7> : tensor<i32>
    %r:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) {api_version = 2 : i32} : (tensor<2x?xf32>, tensor<i32>) -> (tensor<2x?xf32>, tensor<2x?xi32>)
    return %r#0 : tensor<2x?xf32>
  }`);
  assert.throws(() => refineShapes(module, [arrayShape("f32", [2, 5])]), (e: unknown) => e instanceof RefineError && /custom_call.*k|top/i.test((e as Error).message));
});
