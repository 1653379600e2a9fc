// Decomposition: batch norms into elementwise ops, reduce and broadcast (matching the
// interpreter's kernels within float tolerance), calls and composites inlined (exactly).
import { test } from "node:test";
import assert from "node:assert/strict";
import { batchNormGrad, batchNormInference, batchNormTraining } from "../../../src/builder/linalg.js";
import { call, compositeCall, getTupleElement, tuple } from "../../../src/builder/control.js";
import { add, mul } from "../../../src/builder/elementwise.js";
import { parameter } from "../../../src/builder/xla_builder.js";
import { constantR0 } from "../../../src/builder/data_movement.js";
import { map } from "../../../src/builder/reduction.js";
import { arrayShape, scalarShape, elementCount } from "../../../src/types/shape.js";
import { Literal } from "../../../src/types/literal.js";
import { decompose, dce, defaultSimplificationPipeline, simplify } from "../../../src/compiler/passes/index.js";
import { rng } from "../../support/prng.js";
import { build, eval1, opcodes, run } from "./helpers.js";
import { checkDifferential } from "./differential.js";
import { firstDifference, literalsClose, literalsIdentical, ALL_FAMILIES } from "../random_program.js";

const randomLiteral = (t: "f32" | "f64", dims: number[], seed: number, positive = false): Literal => {
  const next = rng(seed);
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, () => (positive ? 0.1 + next() * 2 : next() * 6 - 3)));
};

test("batch norm training, inference and grad decompose into elementwise ops, reduce and broadcast", () => {
  for (const t of ["f32", "f64"] as const) {
    for (const fi of [0, 1, 2]) {
      const dims = [3, 4, 2];
      const f = dims[fi]!;
      const m = build("bn", [[t, dims], [t, [f]], [t, [f]], [t, [f]], [t, [f]], [t, dims]], (b, [x, scale, offset, mean, variance, dy]) => {
        const tr = batchNormTraining(x!, scale!, offset!, 1e-3, fi);
        return tuple(b, [
          getTupleElement(tr, 0), getTupleElement(tr, 1), getTupleElement(tr, 2),
          batchNormInference(x!, scale!, offset!, mean!, variance!, 1e-3, fi),
          batchNormGrad(x!, scale!, mean!, variance!, dy!, 1e-3, fi),
        ]);
      });
      const out = run(m, decompose, simplify(), dce);
      const ops = new Set(opcodes(out));
      for (const o of ["batchNormTraining", "batchNormInference", "batchNormGrad", "getTupleElement"]) assert.ok(!ops.has(o as never), o);
      assert.ok(ops.has("reduce") && ops.has("broadcastInDim") && ops.has("sqrt"));
      const args = [randomLiteral(t, dims, 1), randomLiteral(t, [f], 2), randomLiteral(t, [f], 3), randomLiteral(t, [f], 4),
        randomLiteral(t, [f], 5, true), randomLiteral(t, dims, 6)];
      const [expected, actual] = [eval1(m, args), eval1(out, args)];
      const tol = t === "f32" ? 1e-4 : 1e-12;
      assert.ok(literalsClose(expected, actual, tol, tol), `${t} feature ${fi}: ${firstDifference(expected, actual)}`);
    }
  }
});

test("calls and composites are inlined, exactly", () => {
  const m = build("c", [["s32", [3]], ["s32", [3]]], (b, [x, y]) => {
    const sub = b.createSubBuilder("f");
    const p = parameter(sub, 0, arrayShape("s32", [3]));
    const q = parameter(sub, 1, arrayShape("s32", [3]));
    const callee = sub.build(mul(add(p, q), p));
    const comp = b.createSubBuilder("g");
    const cp = parameter(comp, 0, arrayShape("s32", [3]));
    const decomposition = comp.build(add(cp, cp));
    return add(call(b, callee, [x!, y!]), compositeCall(b, decomposition, [call(b, callee, [y!, x!])], "my.double"));
  });
  const out = run(m, decompose, dce);
  assert.deepEqual(opcodes(out), ["add", "multiply", "add", "multiply", "add", "add"]);
  assert.equal(out.computations.length, 1);
  const args = [Literal.fromValues("s32", [3], [1, -2, 2147483647]), Literal.fromValues("s32", [3], [4, 5, 1])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("decompose keeps random programs with calls bit-identical", () => {
  assert.ok(checkDifferential([decompose], { seeds: 200, families: [...ALL_FAMILIES, "call"] }) > 50);
});

test("decompose keeps random programs with batch norms within float tolerance", () => {
  const options = { seeds: 200, families: ["batchNorm", "shape", "broadcast"] as const, elementTypes: ["f32", "f64"] as const, specialValueProbability: 0 };
  assert.ok(checkDifferential([decompose], { ...options, families: [...options.families], elementTypes: [...options.elementTypes], rtol: 2e-3 }) > 100);
  assert.ok(checkDifferential([decompose, defaultSimplificationPipeline()], {
    ...options, families: [...options.families], elementTypes: [...options.elementTypes], rtol: 2e-3, firstSeed: 500,
  }) > 100);
});

test("a map of an elementwise scalar computation becomes its ops on the arrays; other maps stay", () => {
  const m = build("m", [["f32", [2, 3]], ["f32", [2, 3]]], (b, [x, y]) => {
    const s = b.createSubBuilder("f");
    const p = parameter(s, 0, scalarShape("f32"));
    const q = parameter(s, 1, scalarShape("f32"));
    const f = s.build(mul(add(p, constantR0(s, "f32", 0.5)), q));
    return map(b, [x!, y!], f, [0, 1]);
  });
  const out = run(m, decompose, dce);
  assert.deepEqual(opcodes(out), ["constant", "broadcastInDim", "add", "multiply"]);
  assert.equal(out.computations.length, 1);
  const args = [Literal.fromValues("f32", [2, 3], [1, -0.5, NaN, 3, 4, -0]), Literal.fromValues("f32", [2, 3], [2, 3, 4, -1, 0, 7])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});
