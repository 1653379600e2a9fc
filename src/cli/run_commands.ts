// `xlats run`, `xlats test` and `xlats compile`: the commands that run or compile on a
// backend. Their module imports the backends (compiler/backends.ts registers them all:
// --backend's default is picked among them), the runtime's clients and the check runner;
// the other commands load none of it (cli.ts imports each command's module when it runs).

import { backendNames, defaultBackend, findBackend, getBackend, type BackendEntry } from "../runtime/backend_registry.js";
// Importing the table registers the built-in backends.
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
import { DeadlineError, XlaError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { setBeforeFirstNativeBuild } from "../compiler/native/toolchain.js";
import { oneFile, parseArgs, RUN_FLAGS, RUN_SWITCHES, single, timeoutSeconds, type ParsedArgs } from "./args.js";
import { parseModule } from "./formats.js";
import { CliError, type CliIo } from "./io.js";
import { runSharded } from "./partition.js";
import { isShardedModule } from "../sdy/partition/index.js";
import { importShardings, needsShardingImport } from "../sdy/passes/xla_import.js";
import { argumentLabel, formatRunResult, parsePrintFormat, readRunArgument, writeRunResults } from "./run_arrays.js";

/** `xlats run|test|compile ARGS` (without the command's name): the exit code; errors are thrown, for runCli to report. */
export async function backendCommand(command: "run" | "test" | "compile", rest: readonly string[], io: CliIo): Promise<number> {
  try {
    switch (command) {
      case "run": return await runCommand(noteNativeBuilds(parseArgs(rest, RUN_FLAGS, "run", RUN_SWITCHES), io), io);
      case "test": return await testCommand(noteNativeBuilds(parseArgs(rest, ["backend", "probe-output-dir", "accumulation"], "test", ["verbose", "fold-constants"]), io), io);
      case "compile": return compileCommand(noteNativeBuilds(parseArgs(rest, ["backend"], "compile", ["dump", "dump-after-each", "verbose"]), io), io);
    }
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

/** The backend --backend names (default: defaultBackend()); an unknown name is a usage error listing the known ones. */
function backendOf(args: ParsedArgs, command: string): BackendEntry {
  const name = single(args, "backend", command) ?? defaultBackend();
  const entry = findBackend(name);
  if (entry === undefined) throw new CliError(`${command}: unknown backend '${name}' (known backends: ${backendNames().join(", ")})`, 2);
  return entry;
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
  let results: readonly Literal[];
  try {
    results = sharded
      ? await runSharded(module, entryName, literals, backend, io, options)
      : resultsOf(await runOnOneDevice(backend, program, literals, { ...options, customCalls }));
  } catch (e) {
    // Each backend words its own deadline check; the user set the deadline with --timeout,
    // so the message says which limit stopped the run, as the supervisor's message does.
    if (e instanceof DeadlineError) throw new CliError(`run: stopped at its --timeout of ${seconds} s (${e.message})`);
    throw e;
  }
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
  // the process can exit, or given back to the process that lent it (io.clients), to
  // serve its next command only if every case of this one passed. 16 devices hold the
  // largest grids of the shared executable tests (a 4x4 mesh).
  let client: Client | undefined;
  let clean = false;
  try {
    for (const file of files) {
      let results: CheckCaseResult[];
      try {
        const text = io.readFile(file);
        if (client === undefined && text.includes("interpreter.run_parallel")) {
          client = io.clients !== undefined ? await io.clients.borrow(backend, 16) : await createClient({ deviceCount: 16, backend });
        }
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
    clean = failed === 0;
  } finally {
    if (client !== undefined) await (io.clients !== undefined ? io.clients.release(client, clean) : client.close());
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
    // Name the backends that do compile, so the fix is in the message; a backend named by
    // --backend that cannot compile is a flag given a wrong value, exit code 2 like the others.
    const compiling = backendNames().filter((n) => getBackend(n).compileAndDump !== undefined);
    if (named) {
      throw new CliError(`compile: backend '${backend.host.name}' runs programs but does not compile them; --backend takes one that compiles: ${compiling.join(", ")}`, 2);
    }
    throw new CliError(`compile: no registered backend compiles (known backends: ${backendNames().join(", ")})`);
  }
  const module = parseModule(io.readFile(file), file);
  const text = backend.compileAndDump(module, { dump: args.switches.has("dump"), dumpAfterEach: args.switches.has("dump-after-each") });
  if (text !== "") io.out(text.replace(/\n$/, ""));
  return 0;
}
