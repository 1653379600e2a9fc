// Constants made parameters, so that a compiled backend's kernels compute what the
// program computes. The compiler folds an op whose operands are all constants with the
// interpreter's kernels (compiler/passes/constant_fold.ts); test programs are mostly
// made of constants (StableHLO's interpreter suite is constants only, as are most op
// tests), so without this a test on wasm, native or webgpu would check the interpreter
// again. The check runner lifts every case's constants on a compiled backend (`xlats
// test --backend X`; --fold-constants keeps them), and the op tests' backend runs do too
// (test/support/backend.ts).

import { Computation, type Instruction } from "../ir/computation.js";
import { rebuild } from "../ir/rewrite.js";
import type { Literal } from "../types/literal.js";

/** A computation with its constants lifted, and the arguments it now takes. */
export interface LiftedProgram {
  readonly computation: Computation;
  readonly args: readonly Literal[];
}

/**
 * The computation's array constants made parameters (appended after its own), with
 * their values appended to `args`. Sub-computations (reducers, loop bodies, branches)
 * keep their constants: they are not folded as a whole, and a parameter there would
 * have to be threaded through every caller. Tuple constants stay (no kernel takes a
 * tuple). A computation without array constants is returned as it is.
 */
export function liftConstants(computation: Computation, args: readonly Literal[]): LiftedProgram {
  const parameters: Instruction<"parameter">[] = [...computation.parameters];
  const values = [...args];
  const lifted = rebuild(computation, (inst, _operands, factory) => {
    if (inst.opcode !== "constant" || inst.shape.kind !== "array") return undefined;
    const parameter = factory.parameter(parameters.length, inst.shape);
    parameters.push(parameter);
    values.push((inst as Instruction<"constant">).attrs.literal);
    return parameter;
  });
  if (lifted === computation) return { computation, args: values };
  return { computation: new Computation(computation.name, parameters, lifted.instructions, lifted.root), args: values };
}
