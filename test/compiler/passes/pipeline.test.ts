// compile()'s whole default pipeline (decompose, the simplification fixpoint, layout
// assignment, fusion) keeps random programs' results bit-identical on the interpreter,
// whose fusion kernel runs the fused computations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultPipeline } from "../../../src/compiler/index.js";
import { checkDifferential } from "./differential.js";
import { ALL_FAMILIES } from "../random_program.js";

test("the default compile pipeline keeps random programs bit-identical", () => {
  assert.ok(checkDifferential(defaultPipeline(), { seeds: 200, firstSeed: 100 }) > 150);
  checkDifferential(defaultPipeline(), { seeds: 100, firstSeed: 400, size: 40, families: [...ALL_FAMILIES, "call"] });
  checkDifferential(defaultPipeline(), { seeds: 100, firstSeed: 600, zeroSizeProbability: 0.2 });
});
