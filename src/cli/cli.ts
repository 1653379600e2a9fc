// The `xlats` command: run a program, run check-style test files, compile and dump,
// convert between HLO and StableHLO text, print canonically, run passes (opt.ts), draw
// shardings (shardings.ts). Everything here works on an injected `CliIo` (files and
// output), so the logic is independent of Node; main.ts supplies Node's. Backends are named with --backend from the runtime's registry.

import { backendNames, defaultBackend, findBackend, getBackend, type BackendEntry } from "../runtime/backend_registry.js";
// The CLI is an entry point: importing the table registers the built-in backends.
import "../compiler/backends.js";
import { createClient, type Client } from "../runtime/client.js";
import { runCheckTextAsync, type CheckCaseResult } from "../check/runner.js";
import { memoryProbeDirectory, PROBE_INDEX, probeTargets, type ProbeDirectory } from "../check/probe.js";
import type { Computation } from "../ir/computation.js";
import { verifyMemoryBudget } from "../ir/verify.js";
import type { EvaluateOptions } from "../interpreter/evaluate.js";
import { ACCUMULATIONS, type Accumulation } from "../interpreter/context.js";
import { shapeToMlir } from "../text/mlir/index.js";
import { refineEntry } from "../passes/refine_shapes.js";
import { UNBOUNDED_SIZE, type Shape } from "../types/shape.js";
import { XlaError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { lowerChloModule } from "../compiler/expansions/index.js";
import { setBeforeFirstNativeBuild } from "../compiler/native/toolchain.js";
import { detectFormat, parseModule, printModule, type TextFormat } from "./formats.js";
import { CliError, reportError, type CliIo } from "./io.js";
import { OPT_USAGE, optCommand } from "./opt.js";
import { registeredPasses } from "./pass_registry.js";
import { PARTITION_USAGE, partitionCommand, runSharded } from "./partition.js";
import { isShardedModule } from "../sdy/partition/index.js";
import { importShardings, needsShardingImport } from "../sdy/passes/xla_import.js";
import { argumentLabel, formatRunResult, parsePrintFormat, readRunArgument, writeRunResults } from "./run_arrays.js";
import { SHARDINGS_USAGE, shardingsCommand, type ShardingsOptions } from "./shardings.js";

export { CliError, type CliIo } from "./io.js";

export const USAGE = `xlats: XLA for TypeScript

Usage:
  xlats run FILE [--entry NAME] [--arg LITERAL|FILE.npy]... [--cast]
              [--out FILE.npz|FILE.npy] [--print mlir|numpy] [--backend NAME]
              [--timeout SECONDS] [--probe-output-dir DIR]
      Run the entry computation of FILE (HLO or StableHLO text) on one device;
      --timeout stops a run still going after SECONDS (an endless loop, a long
      kernel; sharded runs too) with an error and exit code 1.
      Each --arg is an MLIR literal, e.g. --arg 'dense<[1.0, 2.0]> : tensor<2xf32>',
      or a .npy file; --cast converts an argument of another element type to its
      parameter's (as stablehlo.convert does). Prints each result on its own line
      as an MLIR literal, or as numpy's repr with --print numpy (over 2^20
      elements: summarised); --out also writes them to a .npz (arr_0, arr_1, ...)
      or, for one result, a .npy. A program with a mesh and sdy shardings
      is partitioned and runs on one device per mesh device (see partition); so does
      a JAX shard_map export (mhlo.sharding strings), read as Shardy shardings first.
      interpreter.probe values are serialized as in test (in memory, and to DIR with
      --probe-output-dir); a failing check.expect_serialized_eq makes the exit code 1.
  xlats test FILE|DIR... [--backend NAME] [--probe-output-dir DIR]
              [--accumulation xla-cpu|stablehlo-reference] [--fold-constants]
      Run check-style test files (directories are searched for *.mlir). Prints
      PASS/FAIL/SKIP per case and a summary; exits with 1 if any case fails.
      On a compiling backend each case's constants are passed as arguments, so
      that the backend's kernels compute what is checked; --fold-constants leaves
      them in the program, where the compiler folds them with the interpreter's
      kernels (the cases' programs are mostly constants).
      interpreter.probe values are serialized as .npy (with an index.csv) in memory,
      and also written to DIR with --probe-output-dir. --accumulation
      stablehlo-reference makes dot and convolution sum as StableHLO's reference
      interpreter does (in the result type, product and sum rounded separately, no
      FMA; on the interpreter backend), for files whose exact checks assume it (the
      Shardy executable tests); the default, xla-cpu, sums as XLA's CPU backend.
  xlats compile FILE [--dump] [--dump-after-each] [--backend NAME]
      Compile FILE with a compiling backend: --dump prints the compiled program,
      --dump-after-each the module after every pass; neither: only check it compiles.
  xlats convert FILE --to mlir|hlo
      Convert between HLO text and StableHLO text.
  xlats print FILE [--lower-chlo]
      Parse and check FILE, then print it canonically in its own format. CHLO's
      broadcasting and constant ops always import as StableHLO; --lower-chlo also
      rewrites acos, asin, atan, acosh, asinh, atanh, cosh, sinh, erfc and next_after
      on real types into StableHLO ops (the gamma family, erf_inv, bessel_i1e and
      complex operands stay chlo ops, computed by the interpreter's kernels).
  ${OPT_USAGE}
  ${PARTITION_USAGE}
  ${SHARDINGS_USAGE}
  xlats --help
      Show this help.

--backend NAME picks the backend: one of ${backendNames().join(", ")} (default: native where a C compiler works, else wasm).
The native backend's first build of a program is said on stderr when it is a terminal, or with --verbose (run, test, compile).

Exit codes: 0 success, 1 bad input or failing tests, 2 bad usage.`;

const COMMANDS = ["run", "test", "compile", "convert", "print", "opt", "partition", "shardings"];

/** One command's part of USAGE (`xlats run --help`), with the notes on backends and exit codes. */
export function commandUsage(command: string): string {
  const start = USAGE.indexOf(`\n  xlats ${command} `);
  if (!COMMANDS.includes(command) || start < 0) return USAGE;
  const end = USAGE.indexOf("\n  xlats ", start + 1);
  const section = USAGE.slice(start + 1, end).split("\n").map((l) => l.slice(2)).join("\n");
  const notes = USAGE.slice(USAGE.indexOf("\n\n--backend NAME"));
  return `Usage:\n  ${section.split("\n").join("\n  ")}${section.includes("--backend") ? notes : notes.slice(notes.indexOf("\n\nExit codes"))}`;
}

interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
  /** Boolean flags given (`--dump`). */
  switches: Set<string>;
}

/** Splits arguments into positionals, `--flag value` / `--flag=value` pairs and boolean `--switch`es. */
function parseArgs(args: readonly string[], valueFlags: readonly string[], command: string, switches: readonly string[] = []): ParsedArgs {
  const out: ParsedArgs = { positional: [], flags: new Map(), switches: new Set() };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("--") || a === "--") {
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const flag = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (switches.includes(flag)) {
      if (eq >= 0) throw new CliError(`${command}: --${flag} takes no value`, 2);
      out.switches.add(flag);
      continue;
    }
    if (!valueFlags.includes(flag)) throw new CliError(`${command}: unknown option --${flag}\n\n${commandUsage(command)}`, 2);
    let value: string;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (i + 1 < args.length) value = args[++i]!;
    else throw new CliError(`${command}: --${flag} needs a value`, 2);
    out.flags.set(flag, [...(out.flags.get(flag) ?? []), value]);
  }
  return out;
}

function single(args: ParsedArgs, flag: string, command: string): string | undefined {
  const v = args.flags.get(flag);
  if (v !== undefined && v.length > 1) throw new CliError(`${command}: --${flag} given more than once`, 2);
  return v?.[0];
}

function oneFile(args: ParsedArgs, command: string): string {
  if (args.positional.length !== 1) {
    throw new CliError(`${command}: expected one FILE, got ${args.positional.length === 0 ? "none" : args.positional.join(" ")}`, 2);
  }
  return args.positional[0]!;
}

/** Runs the command line `argv` (without the program name); returns the exit code. */
/** Runs one command; resolves to the exit code (`test` runs multi-device cases on worker threads, hence async). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (e) {
    return reportError(e, io);
  } finally {
    setBeforeFirstNativeBuild(undefined);
  }
}

/**
 * The commands that may compile C: with --verbose, or when stderr is a terminal, say once
 * that the native backend is building (its first build of a program takes a second or
 * more, and the backend is picked without being named).
 */
function noteNativeBuilds(args: ParsedArgs, io: CliIo): ParsedArgs {
  if (args.switches.has("verbose") || io.errIsTerminal === true) {
    setBeforeFirstNativeBuild(() => io.err("xlats: building native kernels with the C compiler (first run of this program; later runs load them from the cache)"));
  }
  return args;
}

function dispatch(argv: readonly string[], io: CliIo): number | Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.err(USAGE);
    return 2;
  }
  if (command === "--help" || command === "-h" || command === "help") {
    io.out(rest.length === 1 ? commandUsage(rest[0]!) : USAGE);
    return 0;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out(commandUsage(command));
    return 0;
  }
  switch (command) {
    case "run": return runCommand(noteNativeBuilds(parseArgs(rest, RUN_FLAGS, "run", RUN_SWITCHES), io), io);
    case "test": return testCommand(noteNativeBuilds(parseArgs(rest, ["backend", "probe-output-dir", "accumulation"], "test", ["verbose", "fold-constants"]), io), io);
    case "compile": return compileCommand(noteNativeBuilds(parseArgs(rest, ["backend"], "compile", ["dump", "dump-after-each", "verbose"]), io), io);
    case "convert": return convertCommand(parseArgs(rest, ["to"], "convert"), io);
    case "print": return printCommand(parseArgs(rest, [], "print", ["lower-chlo"]), io);
    case "opt": return optCommand(rest, io, registeredPasses());
    case "partition": {
      const a = parseArgs(rest, ["entry"], "partition", ["report"]);
      const entry = single(a, "entry", "partition");
      return partitionCommand({ file: oneFile(a, "partition"), report: a.switches.has("report"), ...(entry !== undefined ? { entry } : {}) }, io);
    }
    case "shardings": return shardingsCommand(shardingsOptions(parseArgs(rest, ["func", "values", "html"], "shardings", ["propagate", "reshards"])), io);
    default: throw new CliError(`unknown command '${command}'\n\n${USAGE}`, 2);
  }
}

function shardingsOptions(args: ParsedArgs): ShardingsOptions {
  const func = single(args, "func", "shardings");
  const html = single(args, "html", "shardings");
  const values = args.flags.get("values")?.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
  return {
    file: oneFile(args, "shardings"), propagate: args.switches.has("propagate"), reshards: args.switches.has("reshards"),
    ...(func !== undefined ? { func } : {}), ...(html !== undefined ? { html } : {}), ...(values !== undefined ? { values } : {}),
  };
}

/** The backend --backend names (default: defaultBackend()); an unknown name is a usage error listing the known ones. */
function backendOf(args: ParsedArgs, command: string): BackendEntry {
  const name = single(args, "backend", command) ?? defaultBackend();
  const entry = findBackend(name);
  if (entry === undefined) throw new CliError(`${command}: unknown backend '${name}' (known backends: ${backendNames().join(", ")})`, 2);
  return entry;
}

const RUN_FLAGS = ["entry", "arg", "backend", "out", "print", "timeout", "probe-output-dir"];
const RUN_SWITCHES = ["cast", "verbose"];

function timeoutSeconds(args: ParsedArgs): number | undefined {
  const timeout = single(args, "timeout", "run");
  const seconds = timeout === undefined ? undefined : Number(timeout);
  if (seconds !== undefined && !(seconds > 0 && seconds < Infinity)) throw new CliError(`run: --timeout takes a positive number of seconds, got '${timeout}'`, 2);
  return seconds;
}

/**
 * The seconds of a well-formed `run ... --timeout SECONDS` command line, else undefined
 * (other commands, no --timeout, or bad usage, which runCli reports). main.ts runs
 * such a command in a child process that it stops at the deadline: the deadline checks
 * of a run cannot interrupt one long kernel.
 */
export function runTimeout(argv: readonly string[]): number | undefined {
  const [command, ...rest] = argv;
  if (command !== "run" || rest.includes("--help") || rest.includes("-h")) return undefined;
  try {
    return timeoutSeconds(parseArgs(rest, RUN_FLAGS, "run", RUN_SWITCHES));
  } catch {
    return undefined;
  }
}

async function runCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const file = oneFile(args, "run");
  const backend = backendOf(args, "run");
  const seconds = timeoutSeconds(args);
  const text = io.readFile(file);
  const parsed = parseModule(text, file);
  // A JAX shard_map export (mhlo.sharding strings, per-device shapes inside): Shardy reads it, then it runs sharded.
  const module = needsShardingImport(parsed) ? importShardings(parsed) : parsed;
  const entryName = single(args, "entry", "run");
  const entry = entryName === undefined ? module.entry : module.getComputation(entryName);
  if (entry === undefined) {
    const names = (module.functions ?? module.computations).map((c) => c.name);
    throw new CliError(`run: ${file} has no computation named '${entryName}' (it has ${names.join(", ")})`);
  }
  const printFormat = parsePrintFormat(single(args, "print", "run"));
  const out = single(args, "out", "run");
  const cast = args.switches.has("cast");
  const literals = (args.flags.get("arg") ?? []).map((a, i) => readRunArgument(a, i, io, entry.parameters[i]?.shape, cast));
  checkArguments(entry, literals);
  // A shape-polymorphic program runs for the shapes of its arguments (stablehlo-refine-shapes).
  const program = refineEntry(entry, literals.map((l) => l.shape), literals);
  verifyMemoryBudget(module);
  const options = seconds === undefined ? {} : { deadline: io.deadline ?? Date.now() + seconds * 1000 };
  const sharded = isShardedModule(module);
  const probeDirectory = probeDirectoryOf(args, io, "run");
  if (probeDirectory !== undefined && (sharded || backend.evaluate === undefined)) {
    const why = sharded ? "a sharded program runs on a client's devices" : `backend '${backend.host.name}' runs on a client's devices`;
    throw new CliError(`run: --probe-output-dir needs a one-device run in this process (${why}, whose custom calls cannot write files)`, 2);
  }
  // interpreter.probe and check.expect_serialized_eq, as in `test`.
  const checkFailures: string[] = [];
  const customCalls = new Map(probeTargets(probeDirectory?.(entry.name) ?? memoryProbeDirectory(), (outcome) => {
    if (!outcome.ok) checkFailures.push(outcome.message ?? "values differ");
  }));
  const results = sharded
    ? await runSharded(module, entryName, literals, backend, io, options)
    : resultsOf(await runOnOneDevice(backend, program, literals, { ...options, customCalls }));
  if (out !== undefined) writeRunResults(out, results, io);
  results.forEach((value, i) => io.out(formatRunResult(value, printFormat, io, i)));
  for (const message of checkFailures) io.err(`run: check.expect_serialized_eq failed: ${message}`);
  return checkFailures.length > 0 ? 1 : 0;
}

/** The backend's in-process evaluate when it has one, else one device of a client of that backend. */
async function runOnOneDevice(backend: BackendEntry, entry: Computation, literals: readonly Literal[], options: EvaluateOptions): Promise<Literal> {
  if (backend.evaluate !== undefined) return backend.evaluate(entry, literals, options);
  const client = await createClient({ backend: backend.host, deviceCount: 1 });
  try {
    return (await client.run(entry, [literals]))[0]!;
  } finally {
    await client.close();
  }
}

/** The --arg literals must match the entry's parameters; said in the MLIR types the user wrote. */
function checkArguments(entry: Computation, literals: readonly Literal[]): void {
  const params = entry.parameters.map((p) => shapeToMlir(p.shape));
  if (literals.length !== params.length) {
    throw new CliError(`run: ${entry.name} takes ${params.length} argument(s)${params.length > 0 ? ` (${params.join(", ")})` : ""}; ` +
      `got ${literals.length} --arg`);
  }
  literals.forEach((lit, i) => {
    const given = shapeToMlir(lit.shape);
    // A `?` dimension takes any size, a bounded one any size up to its bound.
    if (given !== params[i] && !fitsDeclared(lit.shape, entry.parameters[i]!.shape)) {
      throw new CliError(`run: ${argumentLabel(i)} is ${given}, but parameter ${i} of ${entry.name} is ${params[i]}`);
    }
  });
}

function fitsDeclared(given: Shape, declared: Shape): boolean {
  if (given.kind !== "array" || declared.kind !== "array" || given.elementType !== declared.elementType) return false;
  if (given.dimensions.length !== declared.dimensions.length) return false;
  return given.dimensions.every((d, k) => {
    const bound = declared.dimensions[k]!;
    return bound === UNBOUNDED_SIZE || (declared.dynamicDimensions[k] ? d <= bound : d === bound);
  });
}

/** A tuple result is several results, printed one per line. */
function resultsOf(result: Literal): readonly Literal[] {
  return result.shape.kind === "tuple" ? result.elements : [result];
}

/**
 * --probe-output-dir DIR: each case's (or the run's) probe files kept in memory (a case
 * reads only what it wrote, not files an earlier run left) and written through to DIR.
 */
function probeDirectoryOf(args: ParsedArgs, io: CliIo, command: "test" | "run"): ((caseName: string) => ProbeDirectory) | undefined {
  const dir = single(args, "probe-output-dir", command);
  if (dir === undefined) return undefined;
  const write = io.writeBytes;
  if (write === undefined) throw new CliError(`${command}: --probe-output-dir needs a file system to write to`, 2);
  // DIR's index.csv lists every case's probes: each case's index only grows, so what it appends is appended here.
  let index = new Uint8Array();
  return () => {
    const memory = memoryProbeDirectory();
    return {
      read: (name) => memory.read(name),
      write: (name, bytes) => {
        const before = memory.read(name)?.length ?? 0;
        memory.write(name, bytes);
        if (name === PROBE_INDEX) {
          const joined = new Uint8Array(index.length + bytes.length - before);
          joined.set(index);
          joined.set(bytes.subarray(before), index.length);
          index = joined;
        }
        write.call(io, io.joinPath(dir, name), name === PROBE_INDEX ? index : bytes);
      },
    };
  };
}

/** `--accumulation NAME` of `xlats test`: stablehlo-reference runs on the interpreter (the default backend then). */
function accumulationOf(args: ParsedArgs): Accumulation | undefined {
  const value = single(args, "accumulation", "test");
  if (value === undefined) return undefined;
  if (!ACCUMULATIONS.includes(value as Accumulation)) {
    throw new CliError(`test: unknown --accumulation '${value}' (one of ${ACCUMULATIONS.join(", ")})`, 2);
  }
  const backend = single(args, "backend", "test");
  if (value !== "xla-cpu" && backend !== undefined && backend !== "interpreter") {
    throw new CliError(`test: --accumulation ${value} needs --backend interpreter (backend '${backend}' sums with its own kernels)`, 2);
  }
  return value as Accumulation;
}

async function testCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  if (args.positional.length === 0) throw new CliError("test: expected at least one FILE or DIR", 2);
  const accumulation = accumulationOf(args);
  const backend = accumulation !== undefined && accumulation !== "xla-cpu" ? "interpreter" : backendOf(args, "test").host.name;
  const probeDirectory = probeDirectoryOf(args, io, "test");
  const files: string[] = [];
  for (const p of args.positional) collectTestFiles(p, io, files, 0);
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  // interpreter.run_parallel runs on this client's devices (worker threads, started on
  // first use, so devices no program runs on cost nothing); it is closed at the end so
  // the process can exit. 16 devices hold the largest grids of the shared executable
  // tests (a 4x4 mesh).
  let client: Client | undefined;
  try {
    for (const file of files) {
      let results: CheckCaseResult[];
      try {
        const text = io.readFile(file);
        if (client === undefined && text.includes("interpreter.run_parallel")) client = await createClient({ deviceCount: 16, backend });
        results = await runCheckTextAsync(text, file, {
          backend, foldConstants: args.switches.has("fold-constants"), ...(client ? { client } : {}), ...(probeDirectory ? { probeDirectory } : {}),
          ...(accumulation !== undefined ? { evaluateOptions: { accumulation } } : {}),
        });
      } catch (e) {
        if (!(e instanceof XlaError) && !(e instanceof CliError)) throw e;
        io.out(`FAIL ${file}: ${e.message.replace(/\n/g, "\n    ")}`);
        failed++;
        continue;
      }
      // Case names are `file:function` already.
      for (const r of results) {
        // One line per case; a message's further lines (a parse error's source line and caret) are indented under it.
        const why = r.message !== undefined && r.message !== "" ? `: ${r.message.replace(/\n/g, "\n    ")}` : "";
        if (r.status === "pass") {
          passed++;
          io.out(`PASS ${r.name}`);
        } else if (r.status === "fail") {
          failed++;
          io.out(`FAIL ${r.name}${why}`);
        } else {
          skipped++;
          io.out(`SKIP ${r.name}${why}`);
        }
      }
    }
  } finally {
    await client?.close();
  }
  io.out(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 ? 1 : 0;
}

function collectTestFiles(path: string, io: CliIo, out: string[], depth: number): void {
  if (depth > 64) throw new CliError(`test: directories nest too deeply at ${path}`);
  if (!io.isDirectory(path)) {
    if (depth === 0) {
      io.readFile(path); // a missing file is reported now, with a clear message
      out.push(path);
    } else if (path.endsWith(".mlir")) {
      out.push(path);
    }
    return;
  }
  for (const name of io.listDirectory(path).sort()) collectTestFiles(io.joinPath(path, name), io, out, depth + 1);
}

/**
 * Compiles with the backend --backend names, or without it with the default backend if
 * it compiles, else the first registered backend that does; prints what its
 * compileAndDump returns.
 */
function compileCommand(args: ParsedArgs, io: CliIo): number {
  const file = oneFile(args, "compile");
  const named = single(args, "backend", "compile") !== undefined;
  const chosen = backendOf(args, "compile");
  const backend = chosen.compileAndDump !== undefined || named
    ? chosen
    : backendNames().map((n) => getBackend(n)).find((b) => b.compileAndDump !== undefined) ?? chosen;
  if (backend.compileAndDump === undefined) {
    const which = named ? `backend '${backend.host.name}' does not compile` : `no registered backend compiles (known backends: ${backendNames().join(", ")})`;
    throw new CliError(`compile: ${which}: it has no compileAndDump hook`);
  }
  const module = parseModule(io.readFile(file), file);
  const text = backend.compileAndDump(module, { dump: args.switches.has("dump"), dumpAfterEach: args.switches.has("dump-after-each") });
  if (text !== "") io.out(text.replace(/\n$/, ""));
  return 0;
}

function convertCommand(args: ParsedArgs, io: CliIo): number {
  const file = oneFile(args, "convert");
  const to = single(args, "to", "convert");
  if (to !== "mlir" && to !== "hlo") throw new CliError(`convert: --to must be mlir or hlo${to === undefined ? "" : `, got '${to}'`}`, 2);
  const text = io.readFile(file);
  const module = parseModule(text, file);
  io.out(printModule(module, to).replace(/\n$/, ""));
  return 0;
}

function printCommand(args: ParsedArgs, io: CliIo): number {
  const file = oneFile(args, "print");
  const text = io.readFile(file);
  const format: TextFormat = detectFormat(text, file);
  const module = parseModule(text, file, format);
  io.out(printModule(args.switches.has("lower-chlo") ? lowerChloModule(module) : module, format).replace(/\n$/, ""));
  return 0;
}
