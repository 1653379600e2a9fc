// Parsing StableHLO text into IR, the errors it reports, and printing back.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, Computation, HloModule, Literal, ParseError, tupleShape, type Instruction,
} from "../../../src/index.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";

const opcodes = (c: Computation): string[] => c.instructions.map((i) => i.opcode);
const stable = (text: string): string => {
  const first = printStableHlo(parseStableHlo(text));
  assert.equal(printStableHlo(parseStableHlo(first)), first);
  return first;
};

test("parse: pretty and generic forms give the same IR", () => {
  const pretty = parseStableHlo(`func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xi1> {
    %0 = stablehlo.add %a, %b : tensor<2x3xf32>
    %1 = stablehlo.compare GT, %0, %b, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    func.return %1 : tensor<2x3xi1>
  }`);
  const generic = parseStableHlo(`func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xi1> {
    %0 = "stablehlo.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.compare"(%0, %b) {comparison_direction = #stablehlo<comparison_direction GT>,
      compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    "func.return"(%1) : (tensor<2x3xi1>) -> ()
  }`);
  for (const m of [pretty, generic]) {
    assert.deepEqual(opcodes(m.entry), ["parameter", "parameter", "add", "compare"]);
    assert.deepEqual(m.entry.root.attrs, { direction: "GT", compareType: "FLOAT" });
    assert.deepEqual(m.entry.root.shape, arrayShape("pred", [2, 3]));
  }
  assert.equal(printStableHlo(pretty), printStableHlo(generic));
});

test("parse: gather attributes, multiple results, func.call and nested modules", () => {
  const m = parseStableHlo(`module @outer {
  func.func private @pair(%x: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
    func.return %x, %x : tensor<i64>, tensor<i64>
  }
  func.func @main(%op: tensor<3x4x2xi64>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64> {
    %c = stablehlo.constant dense<7> : tensor<i64>
    %r:2 = func.call @pair(%c) : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %g = "stablehlo.gather"(%op, %idx) {
      dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>,
      slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false
    } : (tensor<3x4x2xi64>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64>
    func.return %g : tensor<2x3x2x2xi64>
  }
}`);
  assert.equal(m.name, "outer");
  const gather = m.entry.root as Instruction<"gather">;
  assert.deepEqual(gather.attrs.dimensionNumbers, {
    offsetDims: [2, 3], collapsedSliceDims: [0], operandBatchingDims: [], startIndicesBatchingDims: [],
    startIndexMap: [1, 0], indexVectorDim: 2,
  });
  assert.deepEqual(gather.attrs.sliceSizes, [1, 2, 2]);
  const call = m.entry.instructions.find((i) => i.opcode === "call") as Instruction<"call">;
  assert.equal(call.attrs.toApply.name, "pair");
  // %r#0 and %r#1 are never used: no get-tuple-element is left for them.
  assert.equal(m.entry.instructions.filter((i) => i.opcode === "getTupleElement").length, 0);
  assert.equal(m.getComputation("pair")?.visibility, "private");
  stable(printStableHlo(m));
});

test("parse: while with captured values threads them through the loop state", () => {
  const m = parseStableHlo(`func.func @main(%limit: tensor<i64>) -> tensor<i64> {
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %one = stablehlo.constant dense<1> : tensor<i64>
    %i, %s = stablehlo.while(%a = %zero, %b = %zero) : tensor<i64>, tensor<i64>
    cond {
      %p = stablehlo.compare LT, %a, %limit : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %a, %one : tensor<i64>
      %t = stablehlo.add %b, %a : tensor<i64>
      stablehlo.return %n, %t : tensor<i64>, tensor<i64>
    }
    func.return %s : tensor<i64>
  }`);
  const loop = m.entry.instructions.find((i) => i.opcode === "while") as Instruction<"while">;
  // State: (a, b, limit); the constant %one is copied into the body instead.
  assert.deepEqual(loop.shape, tupleShape([arrayShape("s64", []), arrayShape("s64", []), arrayShape("s64", [])]));
  assert.ok(loop.attrs.body.instructions.some((i) => i.opcode === "constant"));
  assert.equal(loop.attrs.body.root.operands.length, 3);
  stable(printStableHlo(m));
});

test("parse: case and if pass each branch the value it captures (a tuple when several)", () => {
  const m = parseStableHlo(`func.func @main(%x: tensor<2xi64>, %p: tensor<i1>) -> tensor<2xi64> {
    %r = "stablehlo.if"(%p) ({
      stablehlo.return %x : tensor<2xi64>
    }, {
      %n = stablehlo.negate %x : tensor<2xi64>
      stablehlo.return %n : tensor<2xi64>
    }) : (tensor<i1>) -> tensor<2xi64>
    func.return %r : tensor<2xi64>
  }`);
  const cond = m.entry.root as Instruction<"conditional">;
  assert.equal(cond.opcode, "conditional");
  assert.equal(cond.operands.length, 3);
  assert.equal(cond.attrs.branches.length, 2);
  const text = stable(printStableHlo(m));
  assert.match(text, /"stablehlo.if"\(%arg1\)/);
  assert.doesNotMatch(text, /stablehlo.tuple/);
});

test("parse: sugar ops map onto IR opcodes", () => {
  const m = parseStableHlo(`func.func @main(%x: tensor<3xf32>, %m: tensor<3x4xf32>) -> tensor<4xf32> {
    %b = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2>} : (tensor<3xf32>) -> tensor<2x3xf32>
    %d = "stablehlo.dot"(%x, %m) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
    %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
    %i = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi64>) -> tensor<2x3xi32>
    func.return %d : tensor<4xf32>
  }`);
  const ops = opcodes(m.entry);
  assert.ok(ops.includes("broadcastInDim") && ops.includes("dot") && ops.includes("iota"));
  const b = m.entry.instructions.find((i) => i.opcode === "broadcastInDim") as Instruction<"broadcastInDim">;
  assert.deepEqual(b.attrs, { dimensions: [2, 3], broadcastDimensions: [1] });
});

test("parse: errors carry line, column, the source line and a caret", () => {
  const cases: [string, RegExp, number][] = [
    ["func.func @main() {\n  %0 = stablehlo.frobnicate : tensor<f32>\n  func.return\n}", /unknown operation 'stablehlo.frobnicate'/, 2],
    ["func.func @main() {\n  %0 = stablehlo.add %1, %1 : tensor<f32>\n  func.return\n}", /undefined value %1/, 2],
    ["func.func @main(%a: tensor<2xf32>) {\n  %0 = stablehlo.convert %a : (tensor<3xf32>) -> tensor<3xf64>\n  func.return\n}", /operand 0/, 2],
    ["func.func @main(%a: tensor<2xq9>) {\n  func.return\n}", /unknown element type 'q9'/, 1],
    ["func.func @main() {\n  %0 = stablehlo.constant dense<1.0> : tensor<?xf32>\n  func.return\n}", /elements literal type must have static shape/, 2],
    ["func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f64>\n  func.return %0 : tensor<f64>\n}", /signature declares/, 3],
  ];
  for (const [text, reason, line] of cases) {
    assert.throws(() => parseStableHlo(text, "t.mlir"), (e: unknown) => {
      assert.ok(e instanceof ParseError, String(e));
      assert.match(e.reason, reason);
      assert.equal(e.line, line);
      assert.equal(e.file, "t.mlir");
      assert.match(e.message, /\n.*\n *\^$/);
      return true;
    });
  }
});

test("parse: deep nesting and garbage give ParseErrors, never a crash or hang", () => {
  const deep = `func.func @main() {\n %0 = stablehlo.constant dense<${"[".repeat(5000)}1${"]".repeat(5000)}> : tensor<1xf32>\n func.return\n}`;
  assert.throws(() => parseStableHlo(deep), ParseError);
  const regions = `func.func @main() {\n${'"stablehlo.case"(%x) ({\n'.repeat(3000)}`;
  assert.throws(() => parseStableHlo(regions), ParseError);
  for (const junk of ["}", "func.func", "func.func @f(", "module {", '"', "%0 = ", "func.func @f() { %0:99999999999999999999 = }"]) {
    assert.throws(() => parseStableHlo(junk), ParseError, JSON.stringify(junk));
  }
});

test("parse: a module without functions (empty text, meshes only) is accepted, as MLIR accepts it, and prints without a function", () => {
  assert.equal(printStableHlo(parseStableHlo("")), "module {\n}\n");
  assert.equal(printStableHlo(parseStableHlo('sdy.mesh @mesh = <["x"=2]>\n')), 'module {\n  sdy.mesh @mesh = <["x"=2]>\n}\n');
});

test("parse: an unranked signature type is reported after the module parses, so an earlier-in-MLIR error wins", () => {
  const unranked = "func.func @main(%a: tensor<*xf32>) -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n  func.return %0 : tensor<f32>\n}";
  assert.throws(() => parseStableHlo(unranked), (e: unknown) => e instanceof ParseError && /unranked tensor types/.test(e.reason) && e.line === 1 && e.column === 21);
  const both = "func.func @main() -> tensor<*xf32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<?xf32>\n  func.return %0 : tensor<?xf32>\n}";
  assert.throws(() => parseStableHlo(both), (e: unknown) => e instanceof ParseError && /static shape/.test(e.reason) && e.line === 2);
});

test("parse: a declared type with a ? dimension is accepted where inference knows the size, and kept; a different size is an error", () => {
  const ok = "func.func @main(%a: tensor<16x32xf32>) -> tensor<?x32xf32> {\n  %0 = stablehlo.add %a, %a : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<?x32xf32>\n  func.return %0 : tensor<?x32xf32>\n}";
  assert.match(printStableHlo(parseStableHlo(ok)), /-> tensor<\?x32xf32>/);
  const bad = ok.replace(/-> tensor<\?x32xf32>\n  func/, "-> tensor<8x32xf32>\n  func");
  assert.throws(() => parseStableHlo(bad), (e: unknown) => e instanceof ParseError && /does not match the inferred/.test(e.reason) && e.line === 2);
});

test("print: a hand-built program with a reducer prints as StableHLO and is stable", () => {
  const s32 = arrayShape("s32", []);
  const p0 = { id: 0, name: "a", opcode: "parameter", operands: [], shape: s32, attrs: { number: 0, shape: s32 } } as Instruction<"parameter">;
  const p1 = { id: 1, name: "b", opcode: "parameter", operands: [], shape: s32, attrs: { number: 1, shape: s32 } } as Instruction<"parameter">;
  const sum = { id: 2, name: "sum", opcode: "add", operands: [p0, p1], shape: s32, attrs: {} } as Instruction<"add">;
  const reducer = new Computation("adder", [p0, p1], [p0, p1, sum], sum);
  const x = { id: 0, name: "x", opcode: "parameter", operands: [], shape: arrayShape("s32", [2, 3]), attrs: { number: 0, shape: arrayShape("s32", [2, 3]) } } as Instruction<"parameter">;
  const zero = { id: 1, name: "zero", opcode: "constant", operands: [], shape: s32, attrs: { literal: Literal.scalar("s32", 0) } } as Instruction<"constant">;
  const red = { id: 2, name: "r", opcode: "reduce", operands: [x, zero], shape: arrayShape("s32", [2]), attrs: { dimensions: [1], toApply: reducer } } as Instruction<"reduce">;
  const entry = new Computation("builder_main", [x], [x, zero, red], red);
  const text = stable(printStableHlo(new HloModule("m", entry)));
  assert.match(text, /func\.func @main\(%arg0: tensor<2x3xi32>\) -> tensor<2xi32>/);
  // A reducer of one commutative op of its arguments prints in StableHLO's compact form
  // (stablehlo/tests/print_reduce.mlir); an integer constant is named %c, as StableHLO names it.
  assert.match(text, /%c = stablehlo\.constant dense<0> : tensor<i32>\n/);
  assert.match(text, /%0 = stablehlo\.reduce\(%arg0 init: %c\) applies stablehlo\.add across dimensions = \[1\] : \(tensor<2x3xi32>, tensor<i32>\) -> tensor<2xi32>/);
});

test("parse: attributes of no dialect that the op does not read are kept and print back sorted", () => {
  const printed = stable(`func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.constant {zeta = 3 : i64, alpha} dense<1.000000e+00> : tensor<2xf32>
    %1 = call @f(%arg0) {random_attr = "random_value", mhlo.frontend_attributes = {k = "v"}} : (tensor<2xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @Host(%1) {backend_config = ""} : (tensor<2xf32>) -> tensor<2xf32>
    %3 = stablehlo.add %0, %2 : tensor<2xf32>
    return %3 : tensor<2xf32>
  }
  func.func private @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    return %arg0 : tensor<2xf32>
  }`);
  assert.ok(printed.includes("stablehlo.constant {alpha, zeta = 3 : i64} dense<1.000000e+00> : tensor<2xf32>"), printed);
  assert.ok(printed.includes('call @f(%arg0) {mhlo.frontend_attributes = {k = "v"}, random_attr = "random_value"} : (tensor<2xf32>) -> tensor<2xf32>'), printed);
  // An empty backend_config is none to XLA, but one written explicitly prints back.
  assert.ok(printed.includes('stablehlo.custom_call @Host(%0) {backend_config = ""} : (tensor<2xf32>) -> tensor<2xf32>'), printed);
  // Attributes the op reads are not repeated as unknown ones.
  const iota = stable(`func.func @main() -> tensor<4xi32> {
    %0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>
    return %0 : tensor<4xi32>
  }`);
  assert.ok(iota.includes("%0 = stablehlo.iota dim = 0 : tensor<4xi32>"), iota);
});

test("parse: an sdy.mesh keeps its discardable attributes", () => {
  const printed = stable(`sdy.mesh @mesh = <["a"=4]> {stablehlo.mesh = {axes = [{name = "a", size = 4 : i64}]}, tag}
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }`);
  assert.ok(printed.includes('sdy.mesh @mesh = <["a"=4]> {stablehlo.mesh = {axes = [{name = "a", size = 4 : i64}]}, tag}'), printed);
});
