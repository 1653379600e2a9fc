// The fuzzer's comparison of compiled results with the interpreter's
// (tools/fuzz/compare_compiled.ts), on values whose verdict is known: an exact cone
// takes only identical values (NaN for NaN), a transcendental's output its stated ulp
// bound and no more, a cone after a rounding its relative tolerance, and a compare of
// a rounded value nothing at all. And a saved program replays (`--replay`).

import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { XlaBuilder, parameter } from "../../src/builder/xla_builder.js";
import { binaryOp, compare, unaryOp } from "../../src/builder/elementwise.js";
import { reshape } from "../../src/builder/data_movement.js";
import { arrayShape } from "../../src/types/shape.js";
import { compareLeaf, cones } from "../../tools/fuzz/compare_compiled.js";
import { compiledInput, replayCompiled } from "../../tools/fuzz/compiled.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The f32 `steps` representable values above x. */
const above = (x: number, steps: number): number => {
  f32[0] = x;
  u32[0] = u32[0]! + steps;
  return f32[0];
};

test("cones: exact ops exact, a transcendental within its ulp bound (through a reshape), then rounded, then unbounded past a compare", () => {
  const b = new XlaBuilder("cones");
  const x = parameter(b, 0, arrayShape("f32", [2]), "x");
  const sum = binaryOp("add", x, x);
  const e = unaryOp("exp", sum);
  const moved = reshape(e, [2]);
  const scaled = binaryOp("multiply", moved, x);
  const flag = compare(scaled, x, "GT");
  const c = b.build(flag);
  const cone = cones(c);
  const at = (op: typeof x) => cone.get(op.instruction)!;
  assert.equal(at(sum).cls, "exact");
  assert.deepEqual([at(e).cls, at(e).ulps], ["ulp", 3]);
  assert.deepEqual([at(moved).cls, at(moved).ulps], ["ulp", 3]);
  assert.equal(at(scaled).cls, "rounded");
  assert.equal(at(flag).cls, "unbounded");
});

test("compareLeaf: the verdicts of each cone class", () => {
  const tally = { compared: 0, unbounded: 0 };
  const exact = { cls: "exact", ulps: 0, eps: 0 } as const;
  const ulp3 = { cls: "ulp", ulps: 3, eps: 2 ** -23 } as const;
  const rounded = { cls: "rounded", ulps: 0, eps: 2 ** -23 } as const;
  assert.equal(compareLeaf("f32", exact, [1, Number.NaN, -2], [1, Number.NaN, -2], tally), undefined);
  assert.match(compareLeaf("f32", exact, [1, 0], [1, -0], tally)!, /at 1: expected 0, got -0/);
  assert.match(compareLeaf("s32", exact, [7], [8], tally)!, /at 0/);
  assert.equal(compareLeaf("f32", ulp3, [1.5], [above(1.5, 3)], tally), undefined);
  assert.match(compareLeaf("f32", ulp3, [1.5], [above(1.5, 4)], tally)!, /within 3 ulp/);
  assert.match(compareLeaf("f32", ulp3, [Number.POSITIVE_INFINITY], [3.4028234663852886e38], tally)!, /expected Infinity/);
  assert.match(compareLeaf("f32", ulp3, [Number.NaN], [0], tally)!, /expected NaN/);
  // Relative to |expected| plus the output's largest |expected|: 64 eps of 2 + 2.
  assert.equal(compareLeaf("f32", rounded, [2, 0], [2 + 200 * 2 ** -23, 100 * 2 ** -23], tally), undefined);
  assert.match(compareLeaf("f32", rounded, [2, 0], [2, 300 * 2 ** -23], tally)!, /rounding tolerance/);
  assert.equal(compareLeaf("c64", exact, [{ re: 1, im: Number.NaN }], [{ re: 1, im: Number.NaN }], tally), undefined);
  assert.match(compareLeaf("c64", exact, [{ re: 1, im: 2 }], [{ re: 1, im: -2 }], tally)!, /expected 1\+2i, got 1-2i/);
  assert.equal(compareLeaf("pred", { cls: "unbounded", ulps: 0, eps: 0 }, [true], [false], tally), undefined);
  assert.equal(tally.unbounded, 1);
});

test("a saved batch of fuzz programs replays on wasm: the interpreter and wasm agree", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "xlats-fuzz-"));
  const saved = compiledInput(5, 2, 4);
  for (const [extension, data] of saved.files) writeFileSync(path.join(dir, `p.${extension}`), data);
  assert.equal(replayCompiled(path.join(dir, "p.hlo"), "wasm"), undefined);
});
