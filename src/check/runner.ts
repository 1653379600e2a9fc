// Runs check-style test files (StableHLO's interpreter tests): split on `// -----`,
// parse each chunk, run its @main (or every function without arguments), and report
// each check.* op. Check ops are custom calls ("check.expect_eq", ...) in the IR, as is
// `stablehlo.custom_call @check.eq` (StableHLO's quantized test files); the
// runner registers those targets with the interpreter and records what they find.
// `// RUN:` lines are honoured where they can be: `--args="[...]"` passes arguments to
// main, and output piped to FileCheck is checked by value (filecheck.ts).
//
// Only cases that check something pass. A file whose RUN lines all run other tools
// (`sdy_opt ... | FileCheck`: a pass pipeline's lit test) is not an interpreter test:
// it is one skip, saying what it is and what runs it; in a file that also has interpret
// RUN lines, the other tools' checking lines are one skip beside its cases. A file with
// no RUN line tests only what its check ops check: a case that ran without one is a skip.
//
// `interpreter.run_parallel` runs its programs on the multi-device runtime, which is
// asynchronous: `runCheckTextAsync` handles it; `runCheckText` (synchronous) skips
// those cases. Evaluation itself stays synchronous: when the interpreter reaches a
// run_parallel whose results are not known yet, the evaluation stops there, the runner
// awaits the runtime, and evaluates the entry again from the start with the results
// of that (and every earlier) run_parallel at hand. Programs are deterministic, so each
// replay takes the same path up to the next unknown run_parallel.
//
// `backend` picks who evaluates (a name in the runtime's registry): one-device cases use
// the backend's in-process `evaluate` (with the check targets as custom calls), and
// run_parallel's programs run on a client of that backend. A backend whose evaluate is
// asynchronous needs runCheckTextAsync.
//
// On a backend other than the interpreter, each case's entry (and each run_parallel
// program) takes its array constants as parameters (lift_constants.ts): the suites'
// programs are constants only, which a compiler folds with the interpreter's kernels, so
// without it the backend's own kernels would never run. `foldConstants` keeps them.

import type { Computation, HloModule } from "../ir/computation.js";
import type { CustomCallContext, CustomCallTarget } from "../interpreter/context.js";
import type { EvaluateOptions } from "../interpreter/evaluate.js";
import { defaultBackend, getBackend, type BackendEntry } from "../runtime/backend_registry.js";
// The runner picks backends by name from the registry: importing the table of built-in
// backends registers them (as the package's entry points and the CLI do).
import "../compiler/backends.js";
import { createClient, type Client } from "../runtime/client.js";
import { ExecutionError, ParseError, XlaError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import type { Shape } from "../types/shape.js";
import { parseStableHlo } from "../text/mlir/index.js";
import { refineEntry } from "../passes/refine_shapes.js";
import { parseMlirLiteral } from "../text/mlir/literal.js";
import { checkEq, expectAlmostEq, expectClose, expectEq, type CheckOutcome } from "./compare.js";
import { foreignRunLines, matchBlocks, parseCheckBlocks, parseRunLines, type PrintedValue, type RunLine } from "./filecheck.js";
import { liftConstants } from "./lift_constants.js";
import { memoryProbeDirectory, probeTargets, type ProbeDirectory } from "./probe.js";
import { parseRunParallelConfig, PRINT, RUN_PARALLEL, runParallel, usesRunParallel, type ParallelOutcome, type ParallelRequest } from "./parallel.js";

export interface CheckCaseResult {
  name: string;
  status: "pass" | "fail" | "skip";
  message?: string;
  /** Where a failure happened: the text did not parse/import, an op has no kernel yet, evaluation failed, or a check did not hold. */
  phase?: "parse" | "evaluate" | "check";
}

export interface CheckRunOptions {
  /** Passed to the backend's evaluate (the check targets are added to its customCalls). */
  evaluateOptions?: EvaluateOptions;
  /** The registered backend that evaluates the cases (default: defaultBackend(): native where a C compiler works, else wasm). */
  backend?: string;
  /**
   * The directory interpreter.probe writes to and check.expect_serialized_eq reads from,
   * one per evaluation of a case (`case` names it); default: a fresh one in memory.
   */
  probeDirectory?: (caseName: string) => ProbeDirectory;
  /**
   * Keep the cases' constants in the programs, where a compiling backend folds them
   * (with the interpreter's kernels). Default false: on every backend but the
   * interpreter (which evaluates constants and parameters alike) the entry's and the
   * run_parallel programs' array constants become parameters, so the backend's kernels
   * compute the checked values.
   */
  foldConstants?: boolean;
}

export interface CheckRunAsyncOptions extends CheckRunOptions {
  /**
   * The runtime client run_parallel executes on (it needs a device per process). When
   * absent, one of `backend` is created for the call and closed at its end (under Node:
   * worker threads; elsewhere pass a client made with a WorkerFactory).
   */
  client?: Client;
}

const SPLIT = /^\/\/ -----[ \t]*$/m;

/** A chunk's case, ready to run, or its result already (parse failures, skips). */
type Planned =
  | { readonly name: string; readonly result: Omit<CheckCaseResult, "name"> }
  | PlannedCase;

interface PlannedCase {
  readonly name: string;
  readonly entry: Computation;
  readonly spec: CaseSpec;
}

/** What to pass and what to check besides the check ops. */
interface CaseSpec {
  readonly args: readonly Literal[];
  /** Per honoured RUN line with FileCheck blocks: the blocks. */
  readonly fileChecks: readonly { readonly run: RunLine; readonly blocks: ReturnType<typeof parseCheckBlocks> }[];
  /**
   * The file has no RUN line, so only check ops check the case: one that ran none is a
   * skip. (Under a RUN line, running cleanly is what lit checks, as for a case whose
   * values go unprinted.)
   */
  readonly needsCheckOp: boolean;
}

/** Results of every case of a check-style file; each case is `file:function` (or `file:index` if names repeat). */
export function runCheckText(text: string, fileName: string, options: CheckRunOptions = {}): CheckCaseResult[] {
  const backend = evaluatingBackend(options);
  const lift = liftsConstants(options, backend.host.name);
  return plan(text, fileName).map((p) => {
    if ("result" in p) return { name: p.name, ...p.result };
    if (usesRunParallel(p.entry)) {
      return { name: p.name, status: "skip", message: `${RUN_PARALLEL} needs the multi-device runtime: use runCheckTextAsync` };
    }
    const { entry, spec } = lift ? lifted(p) : p;
    const run = evaluateCase(backend, entry, spec, options, []);
    if (run instanceof Promise) {
      void run.catch(() => undefined);
      return { name: p.name, status: "fail", phase: "evaluate", message: `backend "${backend.host.name}" evaluates asynchronously: use runCheckTextAsync` };
    }
    return { name: p.name, ...(run.kind === "suspended" ? { status: "fail", phase: "evaluate", message: "unexpected suspension" } : finish(run, spec)) };
  });
}

/** As runCheckText, and runs `interpreter.run_parallel` on the multi-device runtime. */
export async function runCheckTextAsync(text: string, fileName: string, options: CheckRunAsyncOptions = {}): Promise<CheckCaseResult[]> {
  const backend = evaluatingBackend(options);
  const lift = liftsConstants(options, backend.host.name);
  const accumulation = options.evaluateOptions?.accumulation;
  const planned = plan(text, fileName);
  let own: Client | undefined;
  const clientFor = async (processes: number): Promise<Client> => {
    if (options.client !== undefined) return options.client;
    if (own !== undefined && own.devices.length >= processes) return own;
    await own?.close();
    own = await createClient({ deviceCount: Math.max(processes, 4), backend: backend.host.name });
    return own;
  };
  try {
    const results: CheckCaseResult[] = [];
    for (const p of planned) {
      if ("result" in p) {
        results.push({ name: p.name, ...p.result });
        continue;
      }
      const { entry, spec } = lift ? lifted(p) : p;
      const known: ParallelOutcome[] = [];
      let run = await evaluateCase(backend, entry, spec, options, known);
      while (run.kind === "suspended") {
        try {
          const processes = parseRunParallelConfig(run.request.backendConfig).programs.flat().length;
          const client = await clientFor(processes);
          checkAccumulation(options, client.backend.name);
          known.push(await runParallel(run.request, client, {
            ...(accumulation === undefined ? {} : { compileOptions: { accumulation } }),
            liftConstants: liftsConstants(options, client.backend.name),
          }));
        } catch (e) {
          run = { kind: "error", error: e as Error };
          break;
        }
        run = await evaluateCase(backend, entry, spec, options, known);
      }
      results.push({ name: p.name, ...finish(run, spec) });
    }
    return results;
  } finally {
    await own?.close();
  }
}

/** Splits, parses and selects entries; no evaluation. */
function plan(text: string, fileName: string): Planned[] {
  const out: Planned[] = [];
  const usedNames = new Set<string>();
  const nameCase = (base: string, index: number): string => {
    const name = usedNames.has(`${fileName}:${base}`) ? `${fileName}:${index}` : `${fileName}:${base}`;
    usedNames.add(name);
    return name;
  };
  const runLines = parseRunLines(text);
  const honoured = runLines.filter((r) => r.unsupported === undefined);
  const unhonoured = runLines.filter((r) => r.unsupported !== undefined);
  const foreign = foreignRunLines(text);
  if (runLines.length === 0 && foreign.length > 0) {
    return [{ name: fileName, result: { status: "skip", message: (foreign.find((r) => !r.prepares) ?? foreign[0]!).description } }];
  }
  const unrun = foreign.filter((r) => !r.prepares);
  if (unrun.length > 0) {
    const lines = unrun.map((r) => r.line).join(", ");
    out.push({ name: fileName, result: { status: "skip", message: `RUN line${unrun.length > 1 ? "s" : ""} ${lines} not run here: ${unrun[0]!.description}` } });
  }
  let lineOffset = 0;
  let functionsSeen = false;
  text.split(SPLIT).forEach((chunk, index) => {
    const offset = lineOffset;
    lineOffset += chunk.split("\n").length - 1;
    const funcNames = [...chunk.matchAll(/func\.func\s+(?:public\s+|private\s+)?@([A-Za-z0-9_$.-]+)/g)].map((m) => m[1]!);
    if (funcNames.length === 0) return;
    functionsSeen = true;
    const moduleName = /module\s+@([A-Za-z0-9_$.-]+)/.exec(chunk)?.[1];
    const chunkName = moduleName ?? (funcNames.includes("main") ? "main" : funcNames[funcNames.length - 1]!);
    const skip = (message: string): void => {
      out.push({ name: nameCase(chunkName, index), result: { status: "skip", message } });
    };
    if (honoured.length === 0 && unhonoured.length > 0) return skip(`its RUN line ${unhonoured[0]!.unsupported}`);
    let module: HloModule;
    try {
      module = parseStableHlo(chunk, fileName, offset);
    } catch (e) {
      const message = e instanceof ParseError ? e.message : `import failed: ${(e as Error).message}`;
      out.push({ name: nameCase(chunkName, index), result: { status: "fail", phase: "parse", message } });
      return;
    }
    const functions = module.functions ?? [module.entry];
    const main = functions.find((f) => f.name === "main");
    const entries = main ? [main] : functions.filter((f) => f.parameters.length === 0);
    const argTexts = new Set(honoured.map((r) => JSON.stringify(r.args ?? [])));
    if (argTexts.size > 1) return skip("its RUN lines pass different --args");
    let args: Literal[] = [];
    try {
      args = (honoured[0]?.args ?? []).map((a) => parseMlirLiteral(a));
    } catch (e) {
      return skip(`--args could not be read: ${(e as Error).message.split("\n")[0]}`);
    }
    const fileChecks = honoured.flatMap((run) => run.prefixes.map((prefix) => ({ run, blocks: parseCheckBlocks(chunk, prefix, run.dense) })))
      .filter((c) => !Array.isArray(c.blocks) || c.blocks.length > 0);
    const unsupported = fileChecks.find((c) => !Array.isArray(c.blocks));
    if (unsupported !== undefined) return skip(`FileCheck lines not checked: ${(unsupported.blocks as { unsupported: string }).unsupported}`);
    if (fileChecks.length > 0 && entries.length > 1) return skip("FileCheck lines for a chunk with several entry functions are not matched");
    for (const entry of entries) {
      const name = nameCase(main && moduleName ? moduleName : entry.name, index);
      const entryArgs = entry === main ? args : [];
      // Shape-polymorphic ops run as their static forms for these arguments (stablehlo-refine-shapes).
      let refined: Computation;
      try {
        // Arguments that do not fit are reported by the evaluation, as for any program.
        refined = entryArgs.length === entry.parameters.length ? refineEntry(entry, entryArgs.map((a) => a.shape), entryArgs) : entry;
      } catch (e) {
        if (!(e instanceof XlaError)) throw e;
        out.push({ name, result: { status: "fail", phase: "parse", message: e.message } });
        continue;
      }
      out.push({ name, entry: refined, spec: { args: entryArgs, fileChecks, needsCheckOp: runLines.length === 0 } });
    }
  });
  if (!functionsSeen) out.push({ name: fileName, result: { status: "skip", message: "no func.func to run (a check-style test file is StableHLO text)" } });
  return out;
}

type Evaluation =
  | { readonly kind: "done"; readonly outcomes: readonly CheckOutcome[]; readonly printed: readonly PrintedValue[] }
  | { readonly kind: "suspended"; readonly request: ParallelRequest }
  | { readonly kind: "error"; readonly error: Error };

/** Stops an evaluation at a run_parallel whose results are not known yet. */
class Suspend {
  constructor(readonly request: ParallelRequest) {}
}

/** Whether cases run on `backend` take their constants as parameters (CheckRunOptions.foldConstants). */
function liftsConstants(options: CheckRunOptions, backend: string): boolean {
  return options.foldConstants !== true && backend !== "interpreter";
}

/** The case with its entry's array constants made parameters, their values appended to its arguments. */
function lifted(p: PlannedCase): { entry: Computation; spec: CaseSpec } {
  const { computation, args } = liftConstants(p.entry, p.spec.args);
  return { entry: computation, spec: { ...p.spec, args } };
}

/**
 * Only the interpreter's kernels sum as evaluateOptions.accumulation says (compiled
 * backends keep their own kernels' order): another backend would ignore it silently.
 */
function checkAccumulation(options: CheckRunOptions, backend: string): void {
  const accumulation = options.evaluateOptions?.accumulation;
  if (accumulation !== undefined && accumulation !== "xla-cpu" && backend !== "interpreter") {
    throw new ExecutionError(`accumulation "${accumulation}" needs the interpreter backend (backend "${backend}" sums with its own kernels)`);
  }
}

/** The registered backend the options name, with an in-process evaluate. */
function evaluatingBackend(options: CheckRunOptions): BackendEntry & Required<Pick<BackendEntry, "evaluate">> {
  const backend = getBackend(options.backend ?? defaultBackend());
  checkAccumulation(options, backend.host.name);
  if (backend.evaluate === undefined) {
    throw new ExecutionError(`backend "${backend.host.name}" has no in-process evaluate: the check runner cannot run its one-device cases`);
  }
  return backend as BackendEntry & Required<Pick<BackendEntry, "evaluate">>;
}

/**
 * Evaluates the entry once with the check targets; the k-th run_parallel returns
 * known[k] or suspends. A Promise when the backend evaluates asynchronously.
 */
function evaluateCase(
  backend: Required<Pick<BackendEntry, "evaluate">>, entry: Computation, spec: CaseSpec, options: CheckRunOptions, known: readonly ParallelOutcome[],
): Evaluation | Promise<Evaluation> {
  const outcomes: CheckOutcome[] = [];
  const printed: PrintedValue[] = [];
  const record = (check: (a: Literal, b: Literal, config: Map<string, string>) => CheckOutcome): CustomCallTarget =>
    (operands, _shape, backendConfig) => {
      outcomes.push(check(operands[0]!, operands[1]!, parseConfig(backendConfig)));
      return Literal.tuple([]);
    };
  let parallelCalls = 0;
  const customCalls = new Map(options.evaluateOptions?.customCalls ?? []);
  customCalls.set("check.expect_eq", record((a, b) => expectEq(a, b)));
  customCalls.set("check.expect_almost_eq", record((a, b, c) => {
    const tolerance = c.get("tolerance");
    return expectAlmostEq(a, b, tolerance === undefined ? undefined : Number(tolerance));
  }));
  customCalls.set("check.expect_close", record((a, b, c) => {
    const bound = (key: string, otherwise: bigint): bigint => (c.has(key) ? BigInt(c.get(key)!) : otherwise);
    return expectClose(a, b, bound("min_ulp_difference", 0n), bound("max_ulp_difference", 3n));
  }));
  // StableHLO's quantized test files: `stablehlo.custom_call @check.eq(%expected, %got) : (...) -> tensor<i1>`, true when they match.
  customCalls.set("check.eq", (operands) => {
    if (operands.length !== 2) throw new ExecutionError(`custom_call @check.eq takes two operands (expected, actual), got ${operands.length}`);
    const outcome = checkEq(operands[1]!, operands[0]!);
    outcomes.push(outcome);
    return Literal.scalar("pred", outcome.ok);
  });
  const probes = options.probeDirectory?.(entry.name) ?? memoryProbeDirectory();
  for (const [name, target] of probeTargets(probes, (outcome) => outcomes.push(outcome))) customCalls.set(name, target);
  customCalls.set(PRINT, (operands) => {
    printed.push({ print: true, value: operands[0]! });
    return operands[0]!;
  });
  customCalls.set(RUN_PARALLEL, (operands: readonly Literal[], resultShape: Shape, backendConfig: string, context: CustomCallContext) => {
    const outcome = known[parallelCalls++];
    if (outcome === undefined) throw new Suspend({ operands, resultShape, backendConfig, context });
    for (const value of outcome.printed) printed.push({ print: true, value });
    return outcome.result;
  });
  const failed = (e: unknown): Evaluation =>
    e instanceof Suspend ? { kind: "suspended", request: e.request } : { kind: "error", error: e as Error };
  const done = (result: Literal): Evaluation => {
    // stablehlo-translate --interpret prints the entry's results after what it printed on the way.
    const results = result.shape.kind === "tuple" && entry.root.opcode === "tuple" ? result.elements : [result];
    for (const value of results) if (value.shape.kind === "array") printed.push({ print: false, value });
    return { kind: "done", outcomes, printed };
  };
  let result: Literal | Promise<Literal>;
  try {
    result = backend.evaluate(entry, spec.args, { ...options.evaluateOptions, customCalls });
  } catch (e) {
    return failed(e);
  }
  return result instanceof Promise ? result.then(done, failed) : done(result);
}

function finish(run: Evaluation, spec: CaseSpec): Omit<CheckCaseResult, "name"> {
  if (run.kind === "error") return { status: "fail", phase: "evaluate", message: `${run.error.name}: ${run.error.message}` };
  if (run.kind === "suspended") return { status: "fail", phase: "evaluate", message: `${RUN_PARALLEL} was not run` };
  if (spec.needsCheckOp && run.outcomes.length === 0) {
    return { status: "skip", message: "it ran but checked nothing: no check op ran, and no RUN line checks what it prints" };
  }
  const failed = run.outcomes.filter((o) => !o.ok);
  if (failed.length > 0) {
    return { status: "fail", phase: "check", message: `${failed.length} of ${run.outcomes.length} check(s) failed: ${failed[0]!.message}` };
  }
  for (const { run: line, blocks } of spec.fileChecks) {
    const outcome = matchBlocks(blocks as Exclude<typeof blocks, { unsupported: string }>, run.printed);
    if (!outcome.ok) return { status: "fail", phase: "check", message: `RUN ${line.text}: ${outcome.message}` };
  }
  return { status: "pass" };
}

/** The check's attributes, as written (ULP bounds are uint64: kept as text, read as BigInt). */
function parseConfig(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(",")) {
    const m = /^\s*([a-z_]+)\s*=\s*(\S+)\s*$/.exec(part);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

