// The compiled surface: the builder fuzzer's random programs, their refused steps
// skipped so that every program is valid, compiled on a backend (wasm or native) and
// run, each output compared with the interpreter's within what its ops allow
// (compare_compiled.ts). Several programs go into one module, so that one compile
// (about a second for native, mostly the C compiler) covers them all; a finding is
// saved as its own program (HLO text, arguments as .npz) to replay with `--replay`.

import { readFileSync, existsSync } from "node:fs";
import { compileSync, type BackendName } from "../../src/compiler/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { Computation, HloModule } from "../../src/ir/computation.js";
import { factoryFor, liveInstructions, withInstructions } from "../../src/ir/rewrite.js";
import { parseHlo, printHlo } from "../../src/text/hlo/index.js";
import { XlaBuilder } from "../../src/builder/xla_builder.js";
import { tuple } from "../../src/builder/control.js";
import { XlaError } from "../../src/types/errors.js";
import { Literal } from "../../src/types/literal.js";
import { readNpz, writeNpz } from "../../src/types/npz.js";
import { argumentFor, ProgramMaker, programRandom } from "./builder.js";
import { failureOutcome, type Outcome, type SavedInput } from "./check_input.js";
import { compareLeaf, cones, elementTypeOf, generatorFailures, type CompareTally } from "./compare_compiled.js";

export type CompiledBackend = Extract<BackendName, "wasm" | "native">;

/** How long the interpreter may take on one batch before it stops (a DeadlineError, typed). */
const EVALUATE_DEADLINE_MS = 5_000;

export interface ProgramBatch {
  readonly module: HloModule;
  readonly args: readonly Literal[];
  /** The program each output of the tuple root came from. */
  readonly owners: readonly number[];
}

/** Programs first .. first + count - 1 of the run with `seed`, as one module whose root is the tuple of their outputs. */
export function programBatch(seed: number, first: number, count: number): ProgramBatch {
  const b = new XlaBuilder(count === 1 ? `fuzz_program_${first}` : `fuzz_programs_${first}_${first + count - 1}`);
  const args: Literal[] = [];
  const outputs = [];
  const owners: number[] = [];
  for (let i = first; i < first + count; i++) {
    const rng = programRandom(seed, i);
    // One program in four has larger dimensions (up to 33), for the compiled loops' vector bodies and tails.
    const maker = new ProgramMaker(rng, b, args, undefined, rng.next() < 0.25 ? 33 : 4);
    maker.validSteps(1 + rng.int(8));
    for (const o of maker.outputs()) {
      outputs.push(o);
      owners.push(i);
    }
  }
  return { module: b.buildModule(tuple(b, outputs)), args, owners };
}

/** The saved form of a program: its HLO text and its arguments (`arg0`, `arg1`, ... in an .npz). */
export function savedProgram(name: string, module: HloModule, args: readonly Literal[]): SavedInput {
  return { name, files: [["hlo", printHlo(module)], ["npz", writeNpz(args.map((a, i): [string, Literal] => [`arg${i}`, a]))]] };
}

/**
 * The interpreter's value of each output of `entry`, one program at a time (`owners[k]`
 * is output k's program): a program the interpreter refuses (its deadline) leaves its
 * outputs undefined, and the batch's other programs are still checked.
 */
function interpretEachProgram(entry: Computation, args: readonly Literal[], owners: readonly number[]): { expected: (Literal | undefined)[]; refused?: string } {
  const leaves = entry.root.opcode === "tuple" ? entry.root.operands : [entry.root];
  const expected: (Literal | undefined)[] = leaves.map(() => undefined);
  const factory = factoryFor(entry);
  let refused: string | undefined;
  for (const owner of new Set(owners)) {
    const outputs = leaves.flatMap((_, k) => (owners[k] === owner ? [k] : []));
    const root = factory.add("tuple", outputs.map((k) => leaves[k]!), {});
    const program = withInstructions(entry, liveInstructions([...entry.instructions, root], root), root);
    try {
      const values = evaluate(program, args, { deadline: Date.now() + EVALUATE_DEADLINE_MS }).elements;
      outputs.forEach((k, j) => { expected[k] = values[j]; });
    } catch (e) {
      if (!(e instanceof XlaError)) throw e;
      refused = `evaluate ${e.name}`;
    }
  }
  return { expected, ...(refused !== undefined ? { refused } : {}) };
}

/**
 * Runs `entry` on the interpreter (each program of a batch alone) and compiled on
 * `backend` (the whole batch in one module) and compares: a mismatch, a compiler or run
 * error on a program the interpreter runs, and a code generator that failed (and fell
 * back silently) are findings. A batch the interpreter refuses entirely is typed.
 */
export function checkCompiled(
  entry: Computation, args: readonly Literal[], backend: CompiledBackend, owners?: readonly number[],
): { problem?: string; typed?: string; tally: CompareTally; output?: number } {
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  const leafCount = entry.root.opcode === "tuple" ? entry.root.operands.length : 1;
  const { expected: wants, refused } = interpretEachProgram(entry, args, owners ?? Array.from({ length: leafCount }, () => 0));
  if (refused !== undefined && wants.every((w) => w === undefined)) return { typed: refused, tally };
  let actual: Literal;
  try {
    const executable = compileSync(entry, { backend });
    try {
      const failed = generatorFailures(executable);
      if (failed.length > 0) return { problem: `code generator failed: ${failed.join("; ")}`, tally };
      actual = executable.run(args);
    } finally {
      executable.delete();
    }
  } catch (e) {
    // The interpreter ran this program: the compiled backend must too.
    return { problem: `${backend} refused a program the interpreter runs: ${e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e)}`, tally };
  }
  const root = entry.root;
  const leaves = root.opcode === "tuple" ? root.operands : [root];
  const gots = root.opcode === "tuple" ? actual.elements : [actual];
  const cone = cones(entry);
  for (let k = 0; k < leaves.length; k++) {
    const t = elementTypeOf(leaves[k]!);
    const w = wants[k];
    const g = gots[k];
    if (t === undefined || w === undefined) continue;
    if (g === undefined || g.shape.kind !== "array" || g.arrayShape.elementType !== t || g.dimensions.join() !== w.dimensions.join()) {
      return { problem: `output ${k} is ${g === undefined ? "missing" : JSON.stringify(g.shape)}`, tally, output: k };
    }
    const diff = compareLeaf(t, cone.get(leaves[k]!)!, w.values(), g.values(), tally);
    if (diff !== undefined) return { problem: `output ${k}: ${diff}`, tally, output: k };
  }
  return { tally };
}

/** Checks batch `index` (programs index·batch ..) on `backend`; a finding carries its program, alone when it still fails alone. */
export function compiledOutcome(seed: number, index: number, batch: number, backend: CompiledBackend, tally?: CompareTally): Outcome {
  let step = "build";
  try {
    const { module, args, owners } = programBatch(seed, index * batch, batch);
    step = backend;
    const r = checkCompiled(module.entry, args, backend, owners);
    if (tally !== undefined) {
      tally.compared += r.tally.compared;
      tally.unbounded += r.tally.unbounded;
    }
    if (r.typed !== undefined) return { status: "typed", phase: step, name: r.typed };
    if (r.problem === undefined) return { status: "ok" };
    // Rebuilt alone, the failing program is what to replay (when it still fails alone).
    const owner = r.output !== undefined ? owners[r.output]! : undefined;
    if (owner !== undefined) {
      const alone = programBatch(seed, owner, 1);
      const again = checkCompiled(alone.module.entry, alone.args, backend);
      if (again.problem !== undefined) {
        return { status: "mismatch", phase: step, message: `program ${owner}: ${again.problem}`, input: savedProgram(`program-${owner}`, alone.module, alone.args) };
      }
    }
    return { status: "mismatch", phase: step, message: r.problem, input: savedProgram(`batch-${index}`, module, args) };
  } catch (e) {
    return failureOutcome(e, step);
  }
}

/** Batch `index` as saved for a hang or a crash (the whole batch: which program it was is unknown). */
export function compiledInput(seed: number, index: number, batch: number): SavedInput {
  const { module, args } = programBatch(seed, index * batch, batch);
  return savedProgram(`batch-${index}`, module, args);
}

/**
 * Replays a saved program: its HLO text, its arguments from the .npz beside it (or, if
 * there is none, the fuzzer's arguments for its parameter shapes). Returns the problem,
 * or undefined when the backend now agrees with the interpreter.
 */
export function replayCompiled(file: string, backend: CompiledBackend): string | undefined {
  const module = parseHlo(readFileSync(file, "utf8"), file);
  const npz = file.replace(/\.hlo$/, "") + ".npz";
  const args = existsSync(npz)
    ? [...readNpz(readFileSync(npz)).values()]
    : module.entry.parameters.map((p, i) => {
      if (p.shape.kind !== "array") throw new Error(`${file}: parameter ${i} is not an array; give its arguments in ${npz}`);
      return argumentFor(p.shape, i);
    });
  const r = checkCompiled(module.entry, args, backend);
  return r.problem ?? (r.typed !== undefined ? `the interpreter refused it: ${r.typed}` : undefined);
}
