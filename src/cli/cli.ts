// The `xlats` command: run a program, run check-style test files, compile and dump
// (run_commands.ts), convert between HLO and StableHLO text, print canonically
// (text_commands.ts), run passes (opt.ts), partition (partition.ts), draw shardings
// (shardings.ts). Everything works on an injected `CliIo` (files and output), so the
// logic is independent of Node; main.ts supplies Node's. Backends are named with
// --backend from the runtime's registry.
//
// This module and what it imports statically (usage.ts, args.ts, io.ts) are light:
// each command's module is imported when the command runs, so that a command loads
// only what it needs. `xlats opt` on a Shardy case, for one, would otherwise load every
// backend's compiler, the runtime and the check runner first (over 400 modules, against
// about 110 for opt), and Shardy's lit tests start one opt process per case.

import { parseArgs, RUN_FLAGS, RUN_SWITCHES, single, oneFile, timeoutSeconds, type ParsedArgs } from "./args.js";
import { CliError, reportError, type CliIo } from "./io.js";
import type { ShardingsOptions } from "./shardings.js";
import { COMMANDS, commandUsage, USAGE } from "./usage.js";

export { CliError, type CliIo } from "./io.js";
export { USAGE, commandUsage } from "./usage.js";

/** Runs one command (`argv` without the program name); resolves to the exit code (`test` runs multi-device cases on worker threads, hence async). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (e) {
    return reportError(e, io);
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.err(USAGE);
    return 2;
  }
  // Help for a command that does not exist is the unknown-command error (exit 2), not the
  // general usage with exit 0: a mistyped name would otherwise look accepted.
  const unknown = (name: string): CliError => new CliError(`unknown command '${name}'\n\n${USAGE}`, 2);
  if (command === "--help" || command === "-h" || command === "help") {
    if (rest.length === 1 && !rest[0]!.startsWith("-") && !COMMANDS.includes(rest[0]!)) throw unknown(rest[0]!);
    io.out(rest.length === 1 ? commandUsage(rest[0]!) : USAGE);
    return 0;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    if (!COMMANDS.includes(command)) throw unknown(command);
    io.out(commandUsage(command));
    return 0;
  }
  switch (command) {
    case "run":
    case "test":
    case "compile":
      return (await import("./run_commands.js")).backendCommand(command, rest, io);
    case "convert": {
      const args = parseArgs(rest, ["to"], "convert");
      return (await import("./text_commands.js")).convertCommand(args, io);
    }
    case "print": {
      const args = parseArgs(rest, [], "print", ["lower-chlo"]);
      return (await import("./text_commands.js")).printCommand(args, io);
    }
    case "opt": return (await import("./opt.js")).runOpt(rest, io);
    case "partition": {
      const a = parseArgs(rest, ["entry"], "partition", ["report"]);
      const entry = single(a, "entry", "partition");
      const options = { file: oneFile(a, "partition"), report: a.switches.has("report"), ...(entry !== undefined ? { entry } : {}) };
      return (await import("./partition.js")).partitionCommand(options, io);
    }
    case "shardings": {
      const options = shardingsOptions(parseArgs(rest, ["func", "values", "html"], "shardings", ["propagate", "reshards"]));
      return (await import("./shardings.js")).shardingsCommand(options, io);
    }
    default: throw unknown(command);
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
