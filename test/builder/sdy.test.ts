// Shardings from the builder give the IR the MLIR text gives: each builder function is
// compared with the module parsed from the equivalent Shardy text (printed with the
// MLIR printer, and field by field for meshes, argument/result shardings and the sdy
// ops' attributes). Bad input fails at the builder call, naming the op, the argument
// and Shardy's rule; what only the whole module can show fails in `buildModule` with
// the sdy verifier's message, the same the parsed text gets.

import assert from "node:assert/strict";
import { test } from "node:test";
import { XlaBuilder, parameter, type XlaOp } from "../../src/builder/xla_builder.js";
import { manualComputation, propagationBarrier, shardingConstraint, shardingGroup, type BarrierDirection } from "../../src/builder/sdy.js";
import { parseSharding, sharding } from "../../src/builder/sharding_spec.js";
import { add, mul, neg } from "../../src/builder/elementwise.js";
import type { HloModule, Instruction } from "../../src/ir/computation.js";
import { OP_TABLE } from "../../src/ir/opcodes.js";
import { SdyParseError, SdyVerifyError } from "../../src/text/mlir/diagnostics.js";
import { verifySdy } from "../../src/sdy/verify.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { ShapeError } from "../../src/types/errors.js";
import { arrayShape } from "../../src/types/shape.js";

const f32 = (...dims: number[]) => arrayShape("f32", dims);
const MESH = 'sdy.mesh @mesh = <["data"=2, "model"=2]>';

/** The sdy ops of a module (all computations), with their attributes but not their bodies. */
function sdyOps(m: HloModule): { opcode: string; attrs: Record<string, unknown> }[] {
  return m.computations.flatMap((c) => c.instructions).filter((i) => OP_TABLE[i.opcode].family === "sdy").map((i: Instruction) => {
    const { body: _body, ...attrs } = i.attrs as Record<string, unknown>;
    return { opcode: i.opcode, attrs };
  });
}

/** The built module is the one `text` parses to: same printed MLIR, same typed Shardy values. */
function assertSameIr(built: HloModule, text: string): void {
  const parsed = parseStableHlo(text);
  assert.deepEqual(verifySdy(parsed), [], "the reference text verifies");
  assert.equal(printStableHlo(built), printStableHlo(parsed));
  assert.deepEqual(built.meshes, parsed.meshes);
  assert.deepEqual(built.entry.argShardings, parsed.entry.argShardings);
  assert.deepEqual(built.entry.resultShardings, parsed.entry.resultShardings);
  assert.deepEqual(sdyOps(built), sdyOps(parsed));
}

/** A builder with the 2x2 mesh `@mesh`. */
function meshBuilder(): XlaBuilder {
  const b = new XlaBuilder("main");
  b.mesh("mesh", { data: 2, model: 2 });
  return b;
}

test("mesh: axes as a record or pairs, device ids, several meshes; iota device ids dropped as Shardy does", () => {
  const b = new XlaBuilder("main");
  assert.equal(b.mesh("mesh", [["data", 2], ["model", 2]], [3, 2, 1, 0]), "mesh");
  b.mesh("iota", { x: 4 }, [0, 1, 2, 3]);
  b.mesh("maximal", [], [5]);
  const x = parameter(b, 0, f32(8, 4), { name: "x", sharding: sharding("mesh", [["model", "data"], []]) });
  const m = b.buildModule(neg(x));
  assertSameIr(m, `module @main {
  sdy.mesh @mesh = <["data"=2, "model"=2], device_ids=[3, 2, 1, 0]>
  sdy.mesh @iota = <["x"=4]>
  sdy.mesh @maximal = <[], device_ids=[5]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model", "data"}, {}]>}) -> tensor<8x4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}`);
});

test("parameter and result shardings: closed and open dims, priorities, sub-axes, replicated and unreduced axes, text form", () => {
  const b = meshBuilder();
  b.mesh("big", { x: 4 });
  const x = parameter(b, 0, f32(8, 4), {
    name: "x", sharding: sharding("mesh", [{ axes: ["data"], priority: 1 }, { axes: [], open: true }], { replicated: ["model"] }),
  });
  const y = parameter(b, 1, f32(8, 4), { sharding: sharding("big", [[{ name: "x", subAxis: { preSize: 1, size: 2 } }], []], { open: true }) });
  const z = parameter(b, 2, f32(8, 4), "z");
  const w = parameter(b, 3, f32(8, 4), { sharding: '#sdy.sharding<@mesh, [{}, {"data", ?}p0], unreduced=max{"model"}>' });
  const sum = add(add(x, y), add(z, w));
  const m = b.buildModule(sum, { resultShardings: [sharding("mesh", [["data"], ["model"]], { open: true })] });
  assertSameIr(m, `module @main {
  ${MESH}
  sdy.mesh @big = <["x"=4]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}p1, {?}], replicated={"model"}>},
                  %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@big, [{"x":(1)2, ?}, {?}]>},
                  %arg2: tensor<8x4xf32>,
                  %arg3: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data", ?}p0], unreduced=max{"model"}>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", ?}, {"model", ?}]>}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x4xf32>
    %1 = stablehlo.add %arg2, %arg3 : tensor<8x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}`);
  assert.equal(m.entry.argShardings?.[2], undefined);
});

test("shardingConstraint, typed and as text, with an inlined mesh", () => {
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  const c1 = shardingConstraint(x, sharding("mesh", [["data"], []], { open: true }));
  const c2 = shardingConstraint(neg(c1), '<@mesh, [{}, {"model"}], replicated={"data"}>');
  const c3 = shardingConstraint(c2, sharding({ axes: [{ name: "a", size: 4 }] }, [["a"], []]));
  const m = b.buildModule(c3);
  assertSameIr(m, `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data", ?}, {?}]> : tensor<8x4xf32>
    %1 = stablehlo.negate %0 : tensor<8x4xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"model"}], replicated={"data"}> : tensor<8x4xf32>
    %3 = sdy.sharding_constraint %2 <mesh<["a"=4]>, [{"a"}, {}]> : tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}`);
});

test("manualComputation: the body sees local shapes; one result, then two results, nested in a manual computation", () => {
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  const y = parameter(b, 1, f32(8, 4), "y");
  const [one] = manualComputation([x], ['<@mesh, [{"data"}, {}]>'], [sharding("mesh", [["data"], []])], ["data"], (_sb, a) => {
    assert.deepEqual(a.arrayShape.dimensions, [4, 4]);
    return neg(a);
  });
  const [p, q] = manualComputation(
    [one!, y], [sharding("mesh", [["data"], ["model"]]), sharding("mesh", [[], ["model"]])],
    [sharding("mesh", [["data"], ["model"]]), sharding("mesh", [[], []])], ["data", "model"],
    (_sb, a, c) => {
      assert.deepEqual([a.arrayShape.dimensions, c.arrayShape.dimensions], [[4, 2], [8, 2]]);
      return [add(a, a), mul(c, c)];
    });
  // q's body result is [8, 2] and its out-sharding has no manual axes: the global result is [8, 2].
  assert.deepEqual(q!.arrayShape.dimensions, [8, 2]);
  const m = b.buildModule(add(p!, p!));
  assertSameIr(m, `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg2: tensor<4x4xf32>) {
      %3 = stablehlo.negate %arg2 : tensor<4x4xf32>
      sdy.return %3 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1:2 = sdy.manual_computation(%0, %arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{}, {"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{}, {}]>] manual_axes={"data", "model"} (%arg2: tensor<4x2xf32>, %arg3: tensor<8x2xf32>) {
      %3 = stablehlo.add %arg2, %arg2 : tensor<4x2xf32>
      %4 = stablehlo.multiply %arg3, %arg3 : tensor<8x2xf32>
      sdy.return %3, %4 : tensor<4x2xf32>, tensor<8x2xf32>
    } : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>)
    %2 = stablehlo.add %1#0, %1#0 : tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}`);
});

test("manualComputation nested: the inner one works on the free axes, and its body's ops may not use the bound ones", () => {
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  const [r] = manualComputation([x], ['<@mesh, [{"data"}, {}]>'], ['<@mesh, [{"data"}, {}]>'], ["data"], (_sb, a) => {
    assert.throws(() => shardingConstraint(a, '<@mesh, [{"data"}, {}]>'),
      (e: unknown) => e instanceof ShapeError && e.op === "sdy.sharding_constraint" &&
        e.message.includes('operates on axis "data" which is already bound by a parent sdy.manual_computation op'));
    const [inner] = manualComputation([a], ['<@mesh, [{}, {"model"}]>'], ['<@mesh, [{}, {"model"}]>'], ["model"], (_s, l) => neg(l));
    return inner!;
  });
  assertSameIr(b.buildModule(r), `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<4x4xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"model"}]>] out_shardings=[<@mesh, [{}, {"model"}]>] manual_axes={"model"} (%arg2: tensor<4x2xf32>) {
        %2 = stablehlo.negate %arg2 : tensor<4x2xf32>
        sdy.return %2 : tensor<4x2xf32>
      } : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %1 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}`);
});

test("shardingGroup and propagationBarrier", () => {
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  const y = parameter(b, 1, f32(8, 4), "y");
  shardingGroup(x, 0);
  shardingGroup(y, 0);
  const fwd = propagationBarrier(x, "FORWARD");
  const none = propagationBarrier(y, "NONE");
  const back = propagationBarrier(add(fwd, none), "BACKWARD");
  assertSameIr(b.buildModule(back), `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> tensor<8x4xf32> {
    sdy.sharding_group %arg0 group_id=0 : tensor<8x4xf32>
    sdy.sharding_group %arg1 group_id=0 : tensor<8x4xf32>
    %0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : tensor<8x4xf32>
    %1 = sdy.propagation_barrier %arg1 allowed_direction=NONE : tensor<8x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x4xf32>
    %3 = sdy.propagation_barrier %2 allowed_direction=BACKWARD : tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}`);
});

/** Asserts `fn` throws a ShapeError naming `op` and `argument` whose message holds `rule`. */
function throwsShape(fn: () => unknown, op: string, argument: string, rule: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ShapeError, `expected a ShapeError, got ${String(e)}`);
    assert.equal(e.op, op);
    assert.equal(e.argument, argument);
    assert.ok(e.message.includes(rule), e.message);
    return true;
  });
}

test("bad shardings fail at the builder call, naming the op, the argument and Shardy's rule", () => {
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  throwsShape(() => parameter(b, 1, f32(8, 4), { sharding: sharding("mesh", [["z"], []]) }), "parameter", "sharding of parameter 1", 'unknown axis name: "z"');
  throwsShape(() => shardingConstraint(x, sharding("mesh", [["data"]])), "sdy.sharding_constraint", "sharding", "sharding doesn't match tensor rank: 1 != 2");
  throwsShape(() => shardingConstraint(x, sharding("other", [[], []])), "sdy.sharding_constraint", "sharding", "unknown mesh: @other");
  throwsShape(() => shardingConstraint(x, sharding("mesh", [[{ name: "model", subAxis: { preSize: 1, size: 2 } }], []])), "sdy.sharding_constraint", "sharding",
    'sub-axis size is equal to the full axis size: "model":(1)2');
  throwsShape(() => shardingConstraint(x, sharding("mesh", [["data"], ["data"]])), "sdy.sharding_constraint", "sharding", 'duplicate axis ref: "data"');
  throwsShape(() => shardingConstraint(x, sharding("mesh", [[], []], { replicated: ["model", "data"] })), "sdy.sharding_constraint", "sharding",
    "replicated axes are not ordered w.r.t. mesh");
  throwsShape(() => manualComputation([parameter(meshBuilder(), 0, f32(3), "v")], ['<@mesh, [{"data"}]>'], ['<@mesh, [{"data"}]>'], ["data"], (_s, a) => a),
    "sdy.manual_computation", "in_shardings 0", "operand dimension size 3 is not divisible by the manual axes size 2");
  throwsShape(() => propagationBarrier(x, "BOTH" as BarrierDirection), "sdy.propagation_barrier", "allowed_direction", "makes the op redundant");
  throwsShape(() => shardingGroup(x, -1), "sdy.sharding_group", "group_id", "non-negative integer");
  throwsShape(() => b.mesh("mesh", { a: 2 }), "sdy.mesh", "mesh", "redefinition of symbol named 'mesh'");
  throwsShape(() => b.mesh("m2", { a: 2, b: 2 }, [0, 1, 2, 2]), "sdy.mesh", "m2", "sorted device ids must be iota(product(axes)), got: 0, 1, 2, 2");
  throwsShape(() => b.mesh("m3", [["a", 2], ["a", 2]]), "sdy.mesh", "m3", 'duplicate axis name: "a"');
  throwsShape(() => b.mesh("m4", { a: 0 }), "sdy.mesh", "m4", "axis size must be at least 1");
  throwsShape(() => manualComputation([x], ['<@mesh, [{"data"}, {}]>'], ['<@mesh, [{"data"}, {}]>'], ["batch"], (_s, a) => a),
    "sdy.manual_computation", "manual_axes", 'unknown manual axis: "batch"');
  throwsShape(() => manualComputation([x], [], [], ["data"], (_s, a) => a), "sdy.manual_computation", "in_shardings", "1 values");
  throwsShape(() => manualComputation([x], ['<@mesh, [{"data"}, {}]>'], [], ["data"], (_s, a) => a),
    "sdy.manual_computation", "out_shardings", "0 shardings vs 1 values");
  throwsShape(() => b.build(x, { resultShardings: [undefined, undefined] }), "return", "resultShardings", "2 sharding(s) for 1 result(s)");
  assert.throws(() => shardingConstraint(x, '<@mesh, [{"data"}'), (e: unknown) => e instanceof SdyParseError && e.message.includes("expected"));
  assert.throws(() => parseSharding('<@mesh, [{}]> extra'), (e: unknown) => e instanceof SdyParseError && e.message.includes("unexpected text after the sharding"));
});

test("a dimension its axes do not divide is accepted, as Shardy's text is (propagation pads it)", () => {
  const b = meshBuilder();
  const v = parameter(b, 0, f32(3), { name: "v", sharding: sharding("mesh", [["data"]]) });
  assertSameIr(b.buildModule(shardingConstraint(neg(v), sharding("mesh", [["model"]]))), `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) -> tensor<3xf32> {
    %0 = stablehlo.negate %arg0 : tensor<3xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"model"}]> : tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}`);
});

test("what needs the whole module fails in buildModule with the sdy verifier's message, as the parsed text does", () => {
  // Manual axes must come before free axes in a dimension (Shardy's manual computation verifier).
  const text = `module @main {
  ${MESH}
  func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", "model"}, {}]>] out_shardings=[<@mesh, [{"data", "model"}, {}]>] manual_axes={"model"} (%arg1: tensor<4x4xf32>) {
      sdy.return %arg1 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}`;
  const expected = verifySdy(parseStableHlo(text));
  assert.ok(expected.length > 0 && expected[0]!.message.includes("must have all manual axes come before free axes"), JSON.stringify(expected));
  const b = meshBuilder();
  const x = parameter(b, 0, f32(8, 4), "x");
  const [r] = manualComputation([x], ['<@mesh, [{"data", "model"}, {}]>'], ['<@mesh, [{"data", "model"}, {}]>'], ["model"], (_s, a: XlaOp) => a);
  assert.throws(() => b.buildModule(r), (e: unknown) => e instanceof SdyVerifyError && e.message === expected[0]!.message);
});
