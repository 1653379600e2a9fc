// One fuzz input through everything a user's text goes through: parse (StableHLO or
// HLO), verify, and for small programs evaluate on the interpreter. Every failure must
// be one of the project's typed errors (XlaError and its subclasses); anything else is
// a finding.

import type { Computation, HloModule } from "../../src/ir/computation.js";
import { verifyMemoryBudget, verifyModule } from "../../src/ir/verify.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { CustomCallTarget } from "../../src/interpreter/context.js";
import { parseHlo } from "../../src/text/hlo/index.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { XlaError } from "../../src/types/errors.js";
import { Literal } from "../../src/types/literal.js";
import { arrayLeaves, elementCount, isArray, type Shape } from "../../src/types/shape.js";
import type { InputKind } from "./corpus.js";

export type Phase = "parse" | "verify" | "evaluate";

/** An input as saved with a finding: files named `<name>.<extension>` (a program's text, its arguments...). */
export interface SavedInput {
  readonly name: string;
  readonly files: readonly (readonly [extension: string, data: string | Uint8Array])[];
}

/** What became of one input. `phase` names the step (parse, verify, evaluate; a backend...); a mismatch is a wrong answer, with the input that shows it. */
export type Outcome =
  | { readonly status: "ok" }
  | { readonly status: "typed"; readonly phase: string; readonly name: string }
  | { readonly status: "untyped"; readonly phase: string; readonly name: string; readonly message: string; readonly stack: string }
  | { readonly status: "mismatch"; readonly phase: string; readonly message: string; readonly input?: SavedInput };

/** The outcome of an error thrown at `phase`: typed when it is one of xlats' errors, else a finding. */
export function failureOutcome(e: unknown, phase: string): Outcome {
  if (e instanceof XlaError) return { status: "typed", phase, name: e.name };
  const error = e instanceof Error ? e : new Error(String(e));
  return { status: "untyped", phase, name: error.name, message: error.message.slice(0, 500), stack: (error.stack ?? "").slice(0, 4000) };
}

/** Programs whose values all hold fewer elements than this are evaluated. */
const EVALUATE_ELEMENT_LIMIT = 1 << 16;
/** Longer texts (thousands of repeated lines, deep chains) are parsed and verified only: evaluating them tests nothing new and takes seconds. */
const EVALUATE_TEXT_LIMIT = 100_000;
/** How long one evaluation may run before the interpreter stops it (an endless `while` is a valid program). */
const EVALUATE_DEADLINE_MS = 500;

/** The check dialect's ops as no-op targets, so evaluation runs past them. */
const CHECK_TARGETS: ReadonlyMap<string, CustomCallTarget> = new Map(
  ["check.expect_eq", "check.expect_almost_eq", "check.expect_close", "check.expect_eq_const", "check.expect_almost_eq_const"]
    .map((name): [string, CustomCallTarget] => [name, () => Literal.tuple([])]),
);

export function checkInput(kind: InputKind, text: string): Outcome {
  let phase: Phase = "parse";
  try {
    const module = kind === "mlir" ? parseStableHlo(text) : parseHlo(text);
    phase = "verify";
    verifyModule(module);
    verifyMemoryBudget(module);
    phase = "evaluate";
    for (const entry of entriesOf(module)) {
      if (text.length > EVALUATE_TEXT_LIMIT || !isSmall(entry)) continue;
      const args = entry.parameters.map((p) => (isArray(p.shape) ? Literal.zeros(p.shape) : undefined));
      if (args.some((a) => a === undefined)) continue;
      evaluate(entry, args as Literal[], { customCalls: CHECK_TARGETS, deadline: Date.now() + EVALUATE_DEADLINE_MS });
    }
    return { status: "ok" };
  } catch (e) {
    return failureOutcome(e, phase);
  }
}

function entriesOf(module: HloModule): readonly Computation[] {
  const functions = module.functions ?? [module.entry];
  const main = functions.find((f) => f.name === "main");
  return main !== undefined ? [main] : functions.filter((f) => f.parameters.length === 0);
}

/** Every computation reachable from `entry` has only small values (iterative: call chains may be deep). */
function isSmall(entry: Computation): boolean {
  const small = (s: Shape): boolean => arrayLeaves(s).every((a) => elementCount(a) < EVALUATE_ELEMENT_LIMIT);
  const seen = new Set<Computation>([entry]);
  const pending = [entry];
  for (let c = pending.pop(); c !== undefined; c = pending.pop()) {
    if (!c.instructions.every((i) => small(i.shape))) return false;
    for (const callee of c.calledComputations()) {
      if (!seen.has(callee)) {
        seen.add(callee);
        pending.push(callee);
      }
    }
  }
  return true;
}
