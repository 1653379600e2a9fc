// The pattern matcher: operand patterns (opcode, any, splat, same), captures,
// commutative matching, guards, and the shape check on replacements.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, broadcastInDim, mul, neg } from "../../../src/builder/elementwise.js";
import { constantR0, reshape } from "../../../src/builder/data_movement.js";
import { any, applyRules, matchRule, op, same, splat, splatValue, type Rule } from "../../../src/passes/pattern.js";
import { build, opcodes, rootOf, run } from "./helpers.js";

const addZero: Rule = { name: "add-zero", root: "add", operands: [any("x"), splat((v) => v === 0)], rewrite: (m) => m.get("x") };

test("patterns match opcodes, any value, splats (through broadcasts) and repeated captures", () => {
  const m = build("t", [["s32", [2]]], (b, [x]) => {
    const n = neg(x!);
    return b.addInstruction("tuple", [
      add(x!, broadcastInDim(constantR0(b, "s32", 0), [2], [])),
      add(broadcastInDim(constantR0(b, "s32", 0), [2], []), x!),
      mul(n, n),
      mul(n, neg(x!)), // same("n") means the same instruction, not an equal one
    ], {});
  });
  const [a0, a1, m0, m1] = rootOf(m).operands as [never, never, never, never];
  assert.ok(matchRule(addZero, a0, (a0 as { operands: never[] }).operands) !== undefined);
  assert.equal(matchRule(addZero, a1, (a1 as { operands: never[] }).operands), undefined, "not commutative");
  assert.ok(matchRule({ ...addZero, commutative: true }, a1, (a1 as { operands: never[] }).operands) !== undefined);
  const square: Rule = { name: "square", root: "multiply", operands: [op("negate", [any("x")], "n"), same("n")], rewrite: () => undefined };
  assert.ok(matchRule(square, m0, (m0 as { operands: never[] }).operands) !== undefined);
  assert.equal(matchRule(square, m1, (m1 as { operands: never[] }).operands), undefined);
  const guarded: Rule = { ...square, guard: () => false };
  assert.equal(matchRule(guarded, m0, (m0 as { operands: never[] }).operands), undefined);
  assert.equal(splatValue(rootOf(m).operands[0]!.operands[1]!), 0);
});

test("applyRules rewrites bottom-up, re-applies rules to what it made, and skips replacements of another shape", () => {
  const m = build("t", [["f32", [2, 3]]], (_b, [x]) => neg(neg(neg(neg(x!)))));
  const negNeg: Rule = { name: "neg-neg", root: "negate", operands: [op("negate", [any("x")])], rewrite: (mm) => mm.get("x") };
  const out = run(m, applyRules("t", [negNeg]));
  assert.equal(rootOf(out).opcode, "parameter");
  // A rule whose replacement has another shape is not applied.
  const m2 = build("t", [["f32", [2, 3]]], (_b, [x]) => neg(reshape(x!, [3, 2])));
  const wrong: Rule = { name: "wrong", root: "negate", operands: [op("reshape", [any("x")])], rewrite: (mm, f) => f.add("negate", [mm.get("x")], {}) };
  assert.deepEqual(opcodes(run(m2, applyRules("t", [wrong]))), ["reshape", "negate"]);
});
