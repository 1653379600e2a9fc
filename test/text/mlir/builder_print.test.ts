// What the builder makes prints as StableHLO and HLO that our parsers read back with
// the same meaning, and the printers take a built computation as they take a module.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  add, arrayShape, constantR0, evaluate, Literal, lt, mul, parameter, parseHlo, parseStableHlo, printHlo, printStableHlo,
  scalarShape, tuple, whileLoop, XlaBuilder, XlaError,
} from "../../../src/index.js";

/** (i, v) -> while i < 5: (i + 1, v * 2): v ends at 2^(5 - i) v. */
function multiValueWhile() {
  const b = new XlaBuilder("main");
  const i0 = parameter(b, 0, scalarShape("s32"), "i");
  const v0 = parameter(b, 1, arrayShape("f32", [3]), "v");
  const cb = new XlaBuilder("cond");
  const ci = parameter(cb, 0, scalarShape("s32"), "i");
  parameter(cb, 1, arrayShape("f32", [3]), "v");
  const cond = cb.build(lt(ci, constantR0(cb, "s32", 5)));
  const bb = new XlaBuilder("body");
  const bi = parameter(bb, 0, scalarShape("s32"), "i");
  const bv = parameter(bb, 1, arrayShape("f32", [3]), "v");
  const body = bb.build(tuple(bb, [add(bi, constantR0(bb, "s32", 1)), mul(bv, constantR0(bb, "f32", 2))]));
  return b.build(whileLoop(cond, body, [i0, v0]));
}

test("the builder's multi-value while prints as StableHLO that reads back and runs the same", () => {
  const text = printStableHlo(multiValueWhile());
  // The body region returns the two values, not the tuple the builder's body built.
  assert.match(text, /stablehlo\.return %\w+, %\w+ : tensor<i32>, tensor<3xf32>/);
  const args = [Literal.scalar("s32", 2), Literal.fromValues("f32", [3], [1, -0.5, 3])];
  const out = evaluate(parseStableHlo(text).entry, args);
  assert.deepEqual(out.elements.map((e) => e.toNumbers()), [[5], [8, -4, 24]]);
});

test("printHlo takes a built computation, and the text reads back and runs the same", () => {
  const out = evaluate(parseHlo(printHlo(multiValueWhile())).entry, [Literal.scalar("s32", 4), Literal.fromValues("f32", [3], [1, 2, 3])]);
  assert.deepEqual(out.elements.map((e) => e.toNumbers()), [[5], [2, 4, 6]]);
});

test("the printers refuse what is neither a module nor a computation with an XlaError", () => {
  for (const print of [printStableHlo, printHlo]) {
    assert.throws(() => print({} as never), (e: unknown) => e instanceof XlaError && /expected an HloModule or a Computation/.test(e.message));
  }
});
