// `xlats opt FILE FLAGS...`, spelled like mlir-opt / sdy_opt: parse StableHLO text, run
// the passes the flags name, in order, and print the module as MLIR prints it.
// Diagnostics go to stderr as `FILE:LINE:COL: error: MESSAGE` (the position of the op
// they are about, in the original file). `-split-input-file` handles each `// -----`
// chunk on its own and joins the outputs with `// -----`; `-verify-diagnostics` leaves
// the checking of diagnostics to the caller (a lit-style harness) and exits 0 after
// reporting them; `-allow-unregistered-dialect` keeps ops of unknown dialects.

import { runPass, type Pass, type PassContext } from "../passes/pass.js";
import { describePassList, passFromFlagIn, passNameOfFlag, type PassRegistration } from "../passes/pass_options.js";
import type { HloModule } from "../ir/computation.js";
import { verifyModule } from "../ir/verify.js";
import { parseStableHlo, printStableHlo } from "../text/mlir/index.js";
import { XlaError } from "../types/errors.js";
import { CliError, reportError, type CliIo } from "./io.js";
import { SdyVerifyError } from "../text/mlir/diagnostics.js";
import { verifySdy } from "../sdy/verify.js";
import { appendAll } from "../types/arrays.js";
import { loadSdyPasses } from "./sdy_pass_modules.js";
import { formatDiagnostic, formatWarning } from "./diagnostics.js";

interface OptFlags {
  readonly file: string;
  readonly split: boolean;
  readonly verifyDiagnostics: boolean;
  readonly allowUnregisteredDialect: boolean;
  readonly explain: boolean;
  readonly passes: readonly Pass[];
}

const SPLIT_MARKER = "// -----";
/** opt's own flags (without the dash); every other flag names a pass. */
const OPT_FLAGS = ["split-input-file", "verify-diagnostics", "allow-unregistered-dialect", "explain"];

/** `registrations` are the passes the flags may name (pass_registry.ts's registeredPasses(), or the Shardy passes the flags name). */
function parseOptArgs(args: readonly string[], registrations: readonly PassRegistration[]): OptFlags {
  let file: string | undefined;
  let split = false;
  let verifyDiagnostics = false;
  let allowUnregisteredDialect = false;
  let explain = false;
  const passes: Pass[] = [];
  for (const a of args) {
    if (a === "--") continue;
    if (!a.startsWith("-") || a === "-") {
      if (file !== undefined) throw new CliError(`opt: expected one FILE, got ${file} and ${a}`, 2);
      file = a;
      continue;
    }
    const flag = a.replace(/^--?/, "");
    if (flag === "split-input-file") split = true;
    else if (flag === "verify-diagnostics") verifyDiagnostics = true;
    else if (flag === "allow-unregistered-dialect") allowUnregisteredDialect = true;
    else if (flag === "explain") explain = true;
    else {
      let pass: Pass | undefined;
      try {
        pass = passFromFlagIn(registrations, a);
      } catch (e) {
        if (e instanceof XlaError) throw new CliError(`opt: ${e.message}`, 2);
        throw e;
      }
      if (pass === undefined) throw new CliError(`opt: unknown pass or flag '${a}'; known passes:\n${describePassList(registrations)}`, 2);
      passes.push(pass);
    }
  }
  if (file === undefined) throw new CliError("opt: expected a FILE", 2);
  return { file, split, verifyDiagnostics, allowUnregisteredDialect, explain, passes };
}

/** The chunks of `text` between lines that are exactly `// -----`, each with the line it starts on (0-based). */
export function splitInputFile(text: string): { text: string; lineOffset: number }[] {
  const lines = text.split("\n");
  const chunks: { text: string; lineOffset: number }[] = [];
  let start = 0;
  for (let i = 0; i <= lines.length; i++) {
    if (i === lines.length || lines[i]!.trimEnd() === SPLIT_MARKER) {
      chunks.push({ text: lines.slice(start, i).join("\n"), lineOffset: start });
      start = i + 1;
    }
  }
  return chunks;
}

/** Parses, verifies, runs the passes (verifying after each that changed the module) and prints one module. */
function processChunk(text: string, lineOffset: number, flags: OptFlags, io: CliIo): string {
  let module: HloModule = parseStableHlo(text, flags.file, lineOffset, {
    recordLocations: true, allowUnregisteredDialect: flags.allowUnregisteredDialect,
  });
  verifyModule(module);
  const sdy = verifySdy(module);
  if (sdy.length > 0) throw new SdyVerifyError(sdy);
  const explanation: string[] = [];
  const ctx: PassContext = {
    verify: true, log: () => {}, warn: (_pass, message, at) => io.err(formatWarning(message, at, flags.file)),
    ...(flags.explain ? { explain: (pass: string, lines: readonly string[]) => appendAll(explanation, [`-${pass}:`, ...lines.map((l) => `  ${l}`)]) } : {}),
  };
  for (const pass of flags.passes) module = runPass(pass, module, ctx);
  const printed = printStableHlo(module);
  if (!flags.explain) return printed;
  const notes = explanation.length > 0 ? explanation : ["no pass explained anything (--explain covers sharding propagation)"];
  return `${printed.replace(/\n$/, "")}\n${notes.map((l) => `// ${l}`.trimEnd()).join("\n")}\n`;
}

/**
 * `xlats opt ARGS` as a whole command: its exit code, errors reported. cli.ts runs it
 * without loading the other commands (the compilers, the runtime), and when every pass
 * flag names a Shardy pass, with only the modules of those passes
 * (sdy_pass_modules.ts), not the compiler's passes (pass_registry.ts, with the
 * interpreter's kernels for constant folding) nor the other Shardy passes: they cost
 * more than opt itself to load, and Shardy's lit tests start one opt process per case.
 */
export async function runOpt(args: readonly string[], io: CliIo): Promise<number> {
  try {
    const passFlags = args.filter((a) => a.startsWith("-") && a !== "-" && a !== "--" && !OPT_FLAGS.includes(a.replace(/^--?/, "")));
    const passes = await loadSdyPasses(passFlags.map(passNameOfFlag)) ?? (await import("./pass_registry.js")).registeredPasses();
    return optCommand(args, io, passes);
  } catch (e) {
    return reportError(e, io);
  }
}

/** `xlats opt ARGS` with the flags' passes taken from `passes` (errors thrown, for the caller to report). */
export function optCommand(args: readonly string[], io: CliIo, registrations: readonly PassRegistration[]): number {
  const flags = parseOptArgs(args, registrations);
  const text = io.readFile(flags.file);
  // opt reads StableHLO only (its passes and output are MLIR's); HLO text would fail on its first line with an MLIR syntax error.
  if (/^\s*HloModule\b/.test(text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, " "))) {
    throw new CliError(`opt: ${flags.file} is HLO text; opt takes StableHLO: convert it first with 'xlats convert ${flags.file} --to mlir > FILE.mlir'`);
  }
  const chunks = flags.split ? splitInputFile(text) : [{ text, lineOffset: 0 }];
  const outputs: string[] = [];
  let failed = false;
  for (const chunk of chunks) {
    try {
      outputs.push(processChunk(chunk.text, chunk.lineOffset, flags, io));
    } catch (e) {
      if (!(e instanceof XlaError)) throw e;
      io.err(formatDiagnostic(e, flags.file));
      failed = true;
    }
  }
  if (outputs.length > 0) io.out(outputs.map((o) => o.replace(/\n$/, "")).join(`\n${SPLIT_MARKER}\n`));
  return failed && !flags.verifyDiagnostics ? 1 : 0;
}
