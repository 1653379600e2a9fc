// select with a scalar on_true or on_false, as XlaBuilder's Select allows: the scalar is
// broadcast to the dimensions of the array operands (seed 000's examples, with one
// operand a scalar); array operands of other dimensions are a ShapeError that names the
// argument and does not suggest broadcast_dimensions, which select does not take.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, ShapeError, XlaBuilder, arrayShape, constantR0, evaluate, parameter, scalarShape, select, type XlaOp,
} from "../../src/index.js";
import { parseHlo } from "../../src/index.js";

const PRED = [true, false, false, true];

function run(f: (b: XlaBuilder, pred: XlaOp, v: XlaOp) => XlaOp, predScalar = false): Literal {
  const b = new XlaBuilder("select_scalars");
  const pred = parameter(b, 0, predScalar ? scalarShape("pred") : arrayShape("pred", [4]), "pred");
  const v = parameter(b, 1, arrayShape("s32", [4]), "v");
  return evaluate(b.build(f(b, pred, v)), [predScalar ? Literal.scalar("pred", true) : Literal.fromValues("pred", [4], PRED), Literal.fromValues("s32", [4], [1, 2, 3, 4])]);
}

test("a scalar on_false or on_true is broadcast: seed 000's example with 100 for the array of on_false values", () => {
  assert.deepEqual([...run((b, p, v) => select(p, v, constantR0(b, "s32", 100))).data], [1, 100, 100, 4]);
  assert.deepEqual([...run((b, p, v) => select(p, constantR0(b, "s32", 100), v)).data], [100, 2, 3, 100]);
  // Both scalars, pred an array: the result takes pred's dimensions.
  assert.deepEqual([...run((b, p) => select(p, constantR0(b, "s32", 7), constantR0(b, "s32", -7))).data], [7, -7, -7, 7]);
  // A scalar pred still selects whole arrays (seed 000), with a scalar on_false broadcast.
  assert.deepEqual([...run((b, p, v) => select(p, v, constantR0(b, "s32", 0)), true).data], [1, 2, 3, 4]);
});

test("array operands of other dimensions, and other element types, are ShapeErrors naming the argument", () => {
  const b = new XlaBuilder("bad_select");
  const p = parameter(b, 0, arrayShape("pred", [4]), "p");
  const v = parameter(b, 1, arrayShape("s32", [4]), "v");
  const w = parameter(b, 2, arrayShape("s32", [3]), "w");
  assert.throws(() => select(p, v, w), (e: unknown) => e instanceof ShapeError && e.argument === "on_false" &&
    /^select: on_false: s32\[3\] does not have the dimensions of on_true s32\[4\]; only a scalar is broadcast/.test(e.message));
  assert.throws(() => select(p, v, constantR0(b, "f32", 1)), (e: unknown) => e instanceof ShapeError && /must have the same element type/.test(e.message));
});

test("HLO text keeps select's rule: equal shapes, only pred may be a scalar, and the message does not name broadcast_dimensions", () => {
  const text = `HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  v = s32[4] parameter(1)
  z = s32[] constant(0)
  ROOT s = s32[4] select(p, v, z)
}
`;
  assert.throws(() => parseHlo(text), (e: unknown) => {
    const message = e instanceof Error ? e.message : "";
    return /must have the same dimensions \(only pred may be a scalar; the builder's select broadcasts a scalar on_true or on_false\)/.test(message) &&
      !/broadcast_dimensions/.test(message);
  });
});
