// The random program generator makes valid programs: each verifies and runs on the
// interpreter, and the generator is deterministic in its seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { verifyComputation } from "../../src/ir/verify.js";
import { ALL_FAMILIES, EXTRA_FAMILIES, literalsIdentical, randomProgram } from "./random_program.js";

test("200 random programs verify and run on the interpreter", () => {
  const opcodes = new Map<string, number>();
  const types = new Set<string>();
  for (let seed = 1; seed <= 200; seed++) {
    const { computation, args } = randomProgram(seed);
    verifyComputation(computation);
    evaluate(computation, args);
    for (const inst of computation.instructions) {
      opcodes.set(inst.opcode, (opcodes.get(inst.opcode) ?? 0) + 1);
      if (inst.shape.kind === "array") types.add(inst.shape.elementType);
    }
  }
  // The generator covers what it promises.
  for (const op of ["add", "multiply", "broadcastInDim", "reshape", "transpose", "slice", "pad", "concatenate", "reverse",
    "iota", "convert", "compare", "select", "clamp", "reduce", "dot", "constant", "negate", "tuple"]) {
    assert.ok((opcodes.get(op) ?? 0) > 0, `no ${op} in 200 programs`);
  }
  for (const t of ["pred", "s8", "s32", "u32", "s64", "f16", "bf16", "f32", "f64"]) assert.ok(types.has(t), `no ${t} values`);
});

test("random programs are deterministic in their seed and honour their options", () => {
  const a = randomProgram(7);
  const b = randomProgram(7);
  assert.equal(a.computation.instructions.length, b.computation.instructions.length);
  assert.ok(literalsIdentical(evaluate(a.computation, a.args), evaluate(b.computation, b.args)));
  for (let seed = 1; seed <= 30; seed++) {
    const { computation } = randomProgram(seed, { elementTypes: ["f32"], families: ["elementwise", "shape"], size: 30 });
    for (const inst of computation.instructions) {
      // Only the allowed type, and the pred that is-finite makes (and what then combines with it).
      if (inst.shape.kind === "array") assert.ok(["f32", "pred"].includes(inst.shape.elementType), inst.shape.elementType);
      assert.ok(!["dot", "reduce", "iota"].includes(inst.opcode), inst.opcode);
    }
  }
});

test("the opt-in families (call, map, batch norm, dynamic slices) and random layouts make valid programs", () => {
  const seen = new Set<string>();
  for (let seed = 1; seed <= 100; seed++) {
    const { computation, args } = randomProgram(seed, { families: [...ALL_FAMILIES, ...EXTRA_FAMILIES], layoutProbability: 0.3, specialValueProbability: 0 });
    verifyComputation(computation);
    evaluate(computation, args);
    for (const inst of computation.instructions) seen.add(inst.opcode);
  }
  for (const op of ["call", "map", "batchNormTraining", "batchNormInference", "batchNormGrad", "dynamicSlice", "dynamicUpdateSlice"]) {
    assert.ok(seen.has(op), `no ${op}`);
  }
});
