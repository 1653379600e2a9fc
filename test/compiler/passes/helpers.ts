// Small helpers for the passes' unit tests: build a one-computation module with
// XlaBuilder, run a pass, and look at what came out.

import { XlaBuilder, parameter, type XlaOp } from "../../../src/builder/xla_builder.js";
import { HloModule, type Computation, type Instruction } from "../../../src/ir/computation.js";
import { runPasses, type Pass } from "../../../src/passes/pass.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { arrayShape } from "../../../src/types/shape.js";
import type { ElementType } from "../../../src/types/element_type.js";
import type { Literal } from "../../../src/types/literal.js";

export function build(name: string, params: readonly [ElementType, readonly number[]][], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): HloModule {
  const b = new XlaBuilder(name);
  const ps = params.map(([t, d], i) => parameter(b, i, arrayShape(t, d)));
  return new HloModule(name, b.build(body(b, ps)));
}

export function run(module: HloModule, ...passes: Pass[]): HloModule {
  return runPasses(module, passes, { verify: true }).module;
}

/** The opcodes of the entry's instructions, in order, parameters left out. */
export function opcodes(m: HloModule | Computation): string[] {
  const c = m instanceof HloModule ? m.entry : m;
  return c.instructions.filter((i) => i.opcode !== "parameter").map((i) => i.opcode);
}

export function rootOf(m: HloModule): Instruction {
  return m.entry.root;
}

export function eval1(m: HloModule, args: readonly Literal[]): Literal {
  return evaluate(m.entry, args);
}
