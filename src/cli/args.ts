// The command line of the `xlats` commands: positionals, `--flag value` pairs and
// `--switch`es, read the same way by every command (each module of a command imports it).

import { CliError } from "./io.js";
import { commandUsage } from "./usage.js";

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
  /** Boolean flags given (`--dump`). */
  switches: Set<string>;
}

/** Splits arguments into positionals, `--flag value` / `--flag=value` pairs and boolean `--switch`es. */
export function parseArgs(args: readonly string[], valueFlags: readonly string[], command: string, switches: readonly string[] = []): ParsedArgs {
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

export function single(args: ParsedArgs, flag: string, command: string): string | undefined {
  const v = args.flags.get(flag);
  if (v !== undefined && v.length > 1) throw new CliError(`${command}: --${flag} given more than once`, 2);
  return v?.[0];
}

export function oneFile(args: ParsedArgs, command: string): string {
  if (args.positional.length !== 1) {
    throw new CliError(`${command}: expected one FILE, got ${args.positional.length === 0 ? "none" : args.positional.join(" ")}`, 2);
  }
  return args.positional[0]!;
}

export const RUN_FLAGS = ["entry", "arg", "backend", "out", "print", "timeout", "probe-output-dir"];
export const RUN_SWITCHES = ["cast", "verbose"];

export function timeoutSeconds(args: ParsedArgs): number | undefined {
  const timeout = single(args, "timeout", "run");
  const seconds = timeout === undefined ? undefined : Number(timeout);
  if (seconds !== undefined && !(seconds > 0 && seconds < Infinity)) throw new CliError(`run: --timeout takes a positive number of seconds, got '${timeout}'`, 2);
  return seconds;
}
