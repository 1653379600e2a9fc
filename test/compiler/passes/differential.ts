// The differential property every pass must have: on random programs, the interpreter
// gives the same result before and after the pass, and the output verifies.

import assert from "node:assert/strict";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { HloModule } from "../../../src/ir/computation.js";
import { verifyModule } from "../../../src/ir/verify.js";
import { runPasses, type Pass } from "../../../src/passes/pass.js";
import { printHlo } from "../../../src/text/hlo/printer.js";
import type { Literal } from "../../../src/types/literal.js";
import { firstDifference, literalsClose, randomProgram, type RandomProgramOptions } from "../random_program.js";

export interface DifferentialOptions extends RandomProgramOptions {
  seeds?: number;
  firstSeed?: number;
  /** Compare floats within this relative tolerance instead of exactly. */
  rtol?: number;
  /** Map the arguments before running the pass's output (e.g. to default layouts). */
  argsAfter?: (args: readonly Literal[], after: HloModule) => readonly Literal[];
}

/** Runs `passes` on random programs; returns how many programs they changed. */
export function checkDifferential(passes: readonly Pass[], options: DifferentialOptions = {}): number {
  const n = options.seeds ?? 200;
  const first = options.firstSeed ?? 1;
  let changed = 0;
  for (let seed = first; seed < first + n; seed++) {
    const { computation, args } = randomProgram(seed, options);
    const before = new HloModule(`random_${seed}`, computation);
    const expected = evaluate(computation, args);
    let after: HloModule;
    try {
      after = runPasses(before, passes, { verify: true }).module;
      verifyModule(after);
    } catch (e) {
      assert.fail(`seed ${seed}: ${e instanceof Error ? e.message : String(e)}\n${printHlo(before)}`);
    }
    if (after !== before) changed++;
    const actual = evaluate(after.entry, options.argsAfter?.(args, after) ?? args);
    const diff = options.rtol === undefined ? firstDifference(expected, actual)
      : literalsClose(expected, actual, options.rtol, options.rtol) ? undefined : firstDifference(expected, actual);
    if (diff !== undefined) {
      assert.fail(`seed ${seed}: results differ (${diff})\nbefore:\n${printHlo(before)}\nafter:\n${printHlo(after)}`);
    }
  }
  return changed;
}
