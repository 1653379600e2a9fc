// Layout assignment: every instruction ends in the default layout, the entry's layouts
// are kept in the module config, and the program computes the same values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, neg } from "../../../src/builder/elementwise.js";
import { transpose } from "../../../src/builder/data_movement.js";
import { constantLiteral, parameter, XlaBuilder } from "../../../src/builder/xla_builder.js";
import { HloModule, type Computation } from "../../../src/ir/computation.js";
import { arrayShape, hasDefaultLayout, shapeToString, type Shape } from "../../../src/types/shape.js";
import { Literal } from "../../../src/types/literal.js";
import { defaultSimplificationPipeline, layoutAssignment } from "../../../src/compiler/passes/index.js";
import { eval1, run } from "./helpers.js";
import { checkDifferential } from "./differential.js";
import * as RANDOM from "../random_program.js";
const { literalsIdentical } = RANDOM;

const allDefault = (s: Shape): boolean =>
  s.kind === "token" || (s.kind === "tuple" ? s.elements.every(allDefault) : hasDefaultLayout(s));

function everyShapeDefault(c: Computation): boolean {
  return c.instructions.every((i) => allDefault(i.shape) && (i.opcode !== "constant" || allDefault((i.attrs as { literal: Literal }).literal.shape)));
}

test("parameters and constants in other layouts get the default one; the entry's layouts go to the config", () => {
  const b = new XlaBuilder("l");
  const colMajor = { minorToMajor: [0, 1] };
  const x = parameter(b, 0, arrayShape("f32", [2, 3], { layout: colMajor }));
  const c = constantLiteral(b, Literal.fromValues("f32", [2, 3], [1, 2, 3, 4, 5, 6], colMajor));
  const m = new HloModule("l", b.build(transpose(add(neg(x), c), [1, 0])));
  const out = run(m, layoutAssignment);
  assert.ok(out !== m);
  assert.ok(out.computations.every(everyShapeDefault));
  assert.equal(shapeToString(out.config.entryParameterShapes![0]!, true), "f32[2,3]{0,1}");
  assert.equal(shapeToString(out.config.entryResultShape!, true), "f32[3,2]{1,0}");
  const arg = Literal.fromValues("f32", [2, 3], [10, 20, 30, 40, 50, 60], colMajor);
  assert.deepEqual(eval1(out, [arg]).values(), [-9, -36, -18, -45, -27, -54]);
  assert.ok(literalsIdentical(eval1(m, [arg]), eval1(out, [arg])));
  assert.equal(run(out, layoutAssignment), out, "already in the default layout: the same module");
});

test("layout assignment keeps random programs with random layouts bit-identical", () => {
  const options = { seeds: 200, layoutProbability: 0.5 };
  assert.ok(checkDifferential([layoutAssignment], options) > 50);
  checkDifferential([layoutAssignment, defaultSimplificationPipeline()], { ...options, firstSeed: 300 });
  for (let seed = 1; seed <= 50; seed++) {
    // Every instruction of the output is in the default layout.
    const { randomProgram } = RANDOM;
    const out = run(new HloModule("m", randomProgram(seed, options).computation), layoutAssignment);
    assert.ok(out.computations.every(everyShapeDefault), `seed ${seed}`);
  }
});
