// ComputationEdit / editModule: insertions next to a value with its uses re-pointed,
// moves, removals, annotations and callers following edited callees; checked by
// evaluating and by reading the edited structure back.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Instruction } from "../../src/ir/computation.js";
import { ComputationEdit, editModule } from "../../src/ir/edit.js";
import { factoryFor } from "../../src/ir/rewrite.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";

const program = `
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    %1 = stablehlo.add %0, %0 : tensor<4xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }`;

/** @main calls @f, which negates. */
const callerAndCallee = `
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }`;

const opcodes = (insts: readonly Instruction[]): string[] => insts.map((i) => i.opcode);

test("an instruction inserted after a value takes over the uses the filter accepts", () => {
  const m = parseStableHlo(program);
  const c = m.entry;
  const neg = c.instructions.find((i) => i.opcode === "negate")!;
  const add = c.instructions.find((i) => i.opcode === "add")!;
  const abs = factoryFor(c).add("abs", [neg], {});
  const out = editModule(m, (k) => {
    if (k !== c) return undefined;
    const e = new ComputationEdit(k);
    e.insertAfter(neg, abs);
    e.replaceUses(neg, abs, (user) => user === add);
    return e;
  });
  const insts = out.entry.instructions;
  assert.deepEqual(opcodes(insts), ["parameter", "negate", "abs", "add", "multiply"]);
  const newAdd = insts.find((i) => i.opcode === "add")!;
  const newMul = insts.find((i) => i.opcode === "multiply")!;
  assert.deepEqual(newAdd.operands.map((o) => o.opcode), ["abs", "abs"]);
  assert.deepEqual(newMul.operands.map((o) => o.opcode), ["add", "negate"], "the multiply's direct use of negate stays");
  assert.equal(newMul.operands[0], newAdd, "users follow the copy of an edited instruction");
  assert.equal(out.entry.root, newMul);
  assert.equal(m.entry.instructions.length, 4, "the input module is unchanged");
});

test("moves, removals, annotations and computation fields; nothing to do gives the same module", () => {
  const m = parseStableHlo(`
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.negate %arg0 : tensor<4xf32>
      %1 = stablehlo.abs %arg0 : tensor<4xf32>
      %2 = stablehlo.add %0, %0 : tensor<4xf32>
      return %2 : tensor<4xf32>
    }`);
  assert.equal(editModule(m, () => undefined), m);
  const c = m.entry;
  const [, neg, abs, add] = c.instructions;
  const out = editModule(m, (k) => {
    const e = new ComputationEdit(k);
    e.remove(abs!);
    e.moveAfter(neg!, "start");
    e.annotate(add!, { frontendAttributes: { note: "x" } });
    e.fields = { argShardings: [{ meshOrRef: "mesh", dimShardings: [{ axes: [], isClosed: false }], replicatedAxes: [], unreducedAxes: [] }] };
    return e;
  });
  assert.deepEqual(opcodes(out.entry.instructions), ["parameter", "negate", "add"]);
  assert.deepEqual(out.entry.root.frontendAttributes, { note: "x" });
  assert.equal(out.entry.argShardings?.length, 1);
  assert.equal(out.entry.root.id, add!.id, "ids and names are kept");
  assert.equal(out.entry.root.name, add!.name);
});

test("callers are re-pointed at an edited callee", () => {
  const m = parseStableHlo(callerAndCallee);
  const f = m.computations.find((c) => c.name === "f")!;
  const out = editModule(m, (k) => {
    if (k !== f) return undefined;
    const e = new ComputationEdit(k);
    e.annotate(k.root, { frontendAttributes: { edited: "yes" } });
    return e;
  });
  const call = out.entry.instructions.find((i) => i.opcode === "call") as Instruction<"call">;
  assert.deepEqual(call.attrs.toApply.root.frontendAttributes, { edited: "yes" });
  assert.ok(out.computations.includes(call.attrs.toApply));
});

test("a caller whose attributes are annotated still points at its edited callee", () => {
  // The annotation carries the old callee (a manual computation's attributes rebuilt with new
  // shardings); the edited body must win.
  const m = parseStableHlo(callerAndCallee);
  const f = m.computations.find((c) => c.name === "f")!;
  const out = editModule(m, (k) => {
    const e = new ComputationEdit(k);
    if (k === f) e.annotate(k.root, { frontendAttributes: { edited: "yes" } });
    const call = k.instructions.find((i) => i.opcode === "call") as Instruction<"call"> | undefined;
    if (call !== undefined) e.annotate(call, { attrs: { ...call.attrs }, frontendAttributes: { caller: "annotated" } });
    return e;
  });
  const call = out.entry.instructions.find((i) => i.opcode === "call") as Instruction<"call">;
  assert.deepEqual(call.frontendAttributes, { caller: "annotated" });
  assert.deepEqual(call.attrs.toApply.root.frontendAttributes, { edited: "yes" });
});

test("a parameter replaced by a wider tuple: what read it reads its stand-in, new elements read the new parameter", () => {
  const m = parseStableHlo(program);
  const c = m.entry;
  const [param, neg] = c.instructions;
  const f = factoryFor(c);
  const replacement = f.parameter(0, { kind: "tuple", elements: [param!.shape, param!.shape] });
  const first = f.add("getTupleElement", [replacement], { index: 0 });
  const second = f.add("getTupleElement", [replacement], { index: 1 });
  // An instruction the edit inserts that names the old parameter reads the stand-in too.
  const abs = f.add("abs", [param!], {});
  const out = editModule(m, (k) => {
    if (k !== c) return undefined;
    const e = new ComputationEdit(k);
    e.replaceParameter(param as Instruction<"parameter">, replacement, first);
    e.insertAfter("start", second);
    e.insertAfter(neg!, abs);
    e.setOperand(neg!, 0, second);
    return e;
  });
  const insts = out.entry.instructions;
  assert.deepEqual(out.entry.parameters, [replacement]);
  assert.deepEqual(opcodes(insts), ["parameter", "getTupleElement", "getTupleElement", "negate", "abs", "add", "multiply"]);
  assert.equal(insts[1], first);
  assert.equal(insts.find((i) => i.opcode === "negate")!.operands[0], second);
  assert.equal(insts.find((i) => i.opcode === "abs")!.operands[0], first);
  assert.ok(insts.every((i) => !i.operands.includes(param!)), "nothing reads the old parameter");
});
