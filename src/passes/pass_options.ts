// Pass registrations and their options: what `xlats opt` needs to know about a pass
// (name, description, typed options with defaults) and MLIR's option syntax
// (`-name=opt1=val1 opt2=val2`, also `opt1=val1,opt2=val2`). Kept apart from the
// registry itself so that pass modules can import these types without a cycle.

import type { Pass } from "./pass.js";
import { CompileError } from "../types/errors.js";

export type PassOptionValue = boolean | number | string | readonly string[];

/** One option of a pass: `bool` (`x`, `x=true`, `x=0`), `int`, `string`, or `list` (comma-separated). */
export interface PassOptionSpec {
  /** As written on the command line (`conservative-propagation`). */
  readonly name: string;
  readonly type: "bool" | "int" | "string" | "list";
  readonly description: string;
  readonly default: PassOptionValue;
  /** For `string` options with a fixed set of values (an enum). */
  readonly values?: readonly string[];
}

export interface PassRegistration {
  /** The flag without its dash (`sdy-basic-propagate`). */
  readonly name: string;
  readonly description: string;
  readonly options: readonly PassOptionSpec[];
  create(options: PassOptions): Pass;
}

/** A bad pass name or option: the message names the pass and the option. */
export class PassOptionError extends CompileError {
  override name = "PassOptionError";
}

/** Parsed options of one pass, every declared option present (defaults filled in), read by type. */
export class PassOptions {
  constructor(readonly passName: string, private readonly values: ReadonlyMap<string, PassOptionValue>) {}

  private get(name: string, type: PassOptionSpec["type"]): PassOptionValue {
    const v = this.values.get(name);
    if (v === undefined) throw new PassOptionError(`-${this.passName}: reads option '${name}', which it does not declare`);
    const actual = typeof v === "boolean" ? "bool" : typeof v === "number" ? "int" : typeof v === "string" ? "string" : "list";
    if (actual !== type) throw new PassOptionError(`-${this.passName}: option '${name}' is a ${actual} option, read as ${type}`);
    return v;
  }

  bool(name: string): boolean {
    return this.get(name, "bool") as boolean;
  }

  int(name: string): number {
    return this.get(name, "int") as number;
  }

  string(name: string): string {
    return this.get(name, "string") as string;
  }

  list(name: string): readonly string[] {
    return this.get(name, "list") as readonly string[];
  }

  /** The options as `name=value` pairs, in declaration order (for logs and tests). */
  entries(): [string, PassOptionValue][] {
    return [...this.values];
  }
}

/**
 * Splits a flag's option text into items: on blanks outside quotes and braces, and on
 * commas that start another `option=` of the pass (`a=1,b=2`), so that a list value
 * (`ops=x,y`) keeps its commas. Quotes around a value are removed.
 */
function optionItems(text: string, optionNames: ReadonlySet<string>): string[] {
  const items: string[] = [];
  let cur = "";
  let quote: string | undefined;
  let braces = 0;
  const flush = (): void => {
    if (cur !== "") items.push(cur);
    cur = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      continue;
    }
    if (ch === "{") braces++;
    if (ch === "}") braces = Math.max(0, braces - 1);
    if (braces === 0 && (ch === " " || ch === "\t")) {
      flush();
      continue;
    }
    if (braces === 0 && ch === ",") {
      const next = /^([A-Za-z0-9_-]+)(=|,|$)/.exec(text.slice(i + 1));
      if (next !== null && optionNames.has(next[1]!)) {
        flush();
        continue;
      }
    }
    cur += ch;
  }
  if (quote !== undefined) throw new PassOptionError(`unterminated ${quote} in pass options '${text}'`);
  flush();
  return items;
}

function parseValue(pass: string, spec: PassOptionSpec, text: string | undefined): PassOptionValue {
  const bad = (what: string): never => {
    throw new PassOptionError(`-${pass}: option '${spec.name}' expects ${what}, got '${text ?? ""}'`);
  };
  switch (spec.type) {
    case "bool": {
      if (text === undefined) return true;
      const t = text.toLowerCase();
      if (t === "true" || t === "1") return true;
      if (t === "false" || t === "0") return false;
      return bad("true or false");
    }
    case "int": {
      if (text === undefined || !/^-?[0-9]+$/.test(text)) return bad("an integer");
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : bad("an integer in range");
    }
    case "string": {
      if (text === undefined) return bad("a value");
      if (spec.values !== undefined && !spec.values.includes(text)) return bad(`one of ${spec.values.join(", ")}`);
      return text;
    }
    case "list":
      if (text === undefined) return bad("a comma-separated list");
      return text === "" ? [] : text.split(",").map((s) => s.trim());
  }
}

/** The options of `registration` given as `text` (the part after `-name=`), defaults filled in. */
export function parsePassOptions(registration: PassRegistration, text: string): PassOptions {
  const specs = new Map(registration.options.map((o) => [o.name, o]));
  const values = new Map<string, PassOptionValue>(registration.options.map((o) => [o.name, o.default]));
  for (const item of optionItems(text, new Set(specs.keys()))) {
    const eq = item.indexOf("=");
    const key = eq < 0 ? item : item.slice(0, eq);
    const spec = specs.get(key);
    if (spec === undefined) {
      const known = registration.options.length === 0 ? "it takes no options"
        : `its options: ${registration.options.map((o) => o.name).join(", ")}`;
      throw new PassOptionError(`-${registration.name}: unknown option '${key}' (${known})`);
    }
    values.set(key, parseValue(registration.name, spec, eq < 0 ? undefined : item.slice(eq + 1)));
  }
  return new PassOptions(registration.name, values);
}


/** The pass name a command-line flag carries: `-name`, `--name` and `-name=options` all give `name`. */
export function passNameOfFlag(flag: string): string {
  const body = flag.replace(/^--?/, "");
  const eq = body.indexOf("=");
  return eq < 0 ? body : body.slice(0, eq);
}

/** The pass a flag names, made from its registration among `passes` with the flag's options; undefined when none has that name. */
export function passFromFlagIn(passes: readonly PassRegistration[], flag: string): Pass | undefined {
  const name = passNameOfFlag(flag);
  const registration = passes.find((p) => p.name === name);
  if (registration === undefined) return undefined;
  const eq = flag.indexOf("=");
  return registration.create(parsePassOptions(registration, eq < 0 ? "" : flag.slice(eq + 1)));
}

/** `name  description` lines of `passes` for help and errors, with each pass's options indented under it. */
export function describePassList(passes: readonly PassRegistration[]): string {
  const lines: string[] = [];
  for (const p of passes) {
    lines.push(`  -${p.name}  ${p.description}`);
    for (const o of p.options) {
      const values = o.values !== undefined ? ` (${o.values.join("|")})` : "";
      lines.push(`      ${o.name}=<${o.type}>${values}  ${o.description} (default ${Array.isArray(o.default) ? o.default.join(",") : String(o.default)})`);
    }
  }
  return lines.join("\n");
}
