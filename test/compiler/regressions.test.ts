// Bugs the op tests and the differential tests (differential.test.ts) found in the
// compiled backend, each as the smallest program that showed it, compared with the
// interpreter (the specification) or with values known independently.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, clamp, CompileError, constantR0, constantR1, getDimensionSize, Literal, min, parameter, reduce, rev, scalarShape,
  setDimensionSize, XlaBuilder,
} from "../../src/index.js";
import { compileSync } from "../../src/compiler/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";

test("a program with dynamic dimensions is refused, not run with its bounds (seed 000 SetDimensionSize)", () => {
  // get-dimension-size(set-dimension-size(f32[10], 5)) gave 10 (the bound) and a reverse
  // of the first 6 elements gave all 10: device arrays have no run-time sizes.
  const b = new XlaBuilder("dynamic");
  const v = setDimensionSize(constantR1(b, "f32", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), constantR0(b, "s32", 5), 0);
  const size = b.build(getDimensionSize(v, 0));
  assert.equal(evaluate(size, []).values()[0], 5);
  assert.throws(() => compileSync(size), (e: unknown) => e instanceof CompileError && /dynamic dimensions/.test(e.message));
  const b2 = new XlaBuilder("dynamic_rev");
  const reversed = b2.build(rev(setDimensionSize(constantR1(b2, "f32", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), constantR0(b2, "s32", 6), 0), [0]));
  assert.deepEqual(evaluate(reversed, []).toNumbers(), [6, 5, 4, 3, 2, 1]);
  assert.throws(() => compileSync(reversed), CompileError);
});

test("a reduce kernel whose init value is a parameter compiles (random program seeds 23, 63)", () => {
  // The reduce emitter computed the init's load without its index: "unsigned LEB128 of
  // undefined" or "node 5 has no scalar local" when the fused reduce kept a dimension.
  const x = Literal.from("s32", [[1, 2, 3], [4, 5, 6]]);
  for (const [dims, expected] of [[[0], [1, 2, 3]], [[1], [1, 3]]] as const) {
    const b = new XlaBuilder("reduce_min");
    const sub = b.createSubBuilder("min");
    const minimum = sub.build(min(parameter(sub, 0, scalarShape("s32")), parameter(sub, 1, scalarShape("s32"))));
    const c = b.build(reduce(parameter(b, 0, arrayShape("s32", [2, 3])), parameter(b, 1, scalarShape("s32")), minimum, dims));
    const executable = compileSync(c);
    assert.equal(executable.stats.kernels, 1, "the reduce is a compiled kernel");
    assert.deepEqual(executable.run([x, Literal.scalar("s32", 3)]).toNumbers(), expected);
    executable.delete();
  }
});

test("clamp of an operand in a non-default layout: the interpreter and the compiled backend agree (random seeds 10407, 10439)", () => {
  // clamp's shape rule kept the operand's layout, so the interpreter's kernel wrote
  // row-major values into a column-major result: clamp(x, x, 3.5) came out transposed.
  const b = new XlaBuilder("clamp_layout");
  const layout = { minorToMajor: [0, 1] };
  const p = parameter(b, 0, arrayShape("f32", [2, 3], { layout }));
  const c = b.build(clamp(p, p, constantR0(b, "f32", 3.5)));
  const x = Literal.fromValues("f32", [2, 3], [1, 2, 3, 4, 5, 6], layout);
  const expected = [1, 2, 3, 3.5, 3.5, 3.5];
  assert.deepEqual(evaluate(c, [x]).values(), expected);
  const executable = compileSync(c);
  assert.deepEqual(executable.run([x]).values(), expected);
  executable.delete();
});
