// The runner set-up the paired probes share (membw_probe, native_probe, wait_probe,
// weights_probe): a runner initialised and given one workload, its first result checked
// against the plain-JS reference before anything of it is timed, as the bench does
// (measure.ts). Each probe decides what a runner that cannot run here means to it: a row
// it prints as n/a, or an error.

import type { Prepared, Runner } from "./runner.js";
import { checkResult } from "../workloads/reference.js";
import { describe, firstWeight, inputShapes, type Workload } from "../workloads/specs.js";

/** A runner with one workload set up on it and its result checked. */
export interface CheckedSetup {
  /** The probe's name for it, in its rows and messages. */
  readonly label: string;
  readonly runner: Runner;
  readonly prepared: Prepared;
}

/**
 * `runner` (or why it could not be made: measure.ts's createRunner for a peer) initialised
 * and set up on `w` with `inputs` (those from `weightsFrom` on are weights), one result
 * checked: the set-up, or why this runner cannot run `w` here (the runner then closed).
 * A wrong result throws: a probe must not time a runner that computes something else.
 */
export async function setUpChecked(
  label: string, runner: Runner | string, w: Workload, inputs: Float32Array[], weightsFrom: number = firstWeight(w),
): Promise<CheckedSetup | string> {
  if (typeof runner === "string") return runner;
  const why = await runner.init();
  const prepared = why ?? await runner.setup(w, inputs, inputShapes(w), weightsFrom);
  if (typeof prepared === "string") {
    await runner.close?.();
    return prepared;
  }
  const bad = checkResult(w, inputs, await prepared.result());
  if (bad !== undefined) throw new Error(`${label} on ${describe(w)}: wrong result: ${bad}`);
  return { label, runner, prepared };
}

/** Frees a set-up's arrays and closes its runner. */
export async function release(s: CheckedSetup): Promise<void> {
  await s.prepared.dispose?.();
  await s.runner.close?.();
}
