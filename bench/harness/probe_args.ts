// The probes' options (bench/*_probe.ts and the other one-off `node dist/bench/<name>.js`
// scripts), parsed in one place. A probe declares what it takes and gets the values typed;
// anything it does not take is refused, so that a misspelled option (`round=3`) never
// runs with the default and prints figures that answer another question.
//
// The words on a probe's command line:
//   name=value   an option (number, string, list or repeated); a flag given a value is refused;
//   name         a flag (`cold`, `fma`, `--quick`);
//   --name value an option whose declared name starts with "--" (the npm scripts' style);
//   help         (or --help) the options, on stdout;
//   anything else, in order, the probe's positional words, then its `rest` words (so a
//   positional string with neither choices nor a pattern takes a misspelled flag as its value).

/** One option: its kind, its default (none: undefined when not given) and a line of help. */
export type OptionSpec =
  | { readonly kind: "flag"; readonly help: string }
  | { readonly kind: "number"; readonly default?: number; readonly min?: number; readonly max?: number; readonly integer?: boolean; readonly help: string }
  | { readonly kind: "string"; readonly default?: string; readonly choices?: readonly string[]; readonly pattern?: RegExp; readonly help: string }
  /** Comma-separated values: strings (each matching `pattern`), or numbers with `of: "number"` (each at least `min`). */
  | { readonly kind: "list"; readonly default?: readonly string[] | readonly number[]; readonly of?: "number"; readonly min?: number; readonly pattern?: RegExp; readonly help: string }
  /** The whole value of each time the option is given, in order (values that hold commas: JSON). */
  | { readonly kind: "repeated"; readonly help: string };

/** A positional word: a number or a string, with its default. */
export type WordSpec = { readonly name: string } & Extract<OptionSpec, { kind: "number" | "string" }>;

/** What a probe takes. */
export interface ProbeSpec {
  readonly options?: { readonly [name: string]: OptionSpec };
  /** Positional words, in order (each optional: its default when not given). */
  readonly words?: readonly WordSpec[];
  /** Any number of further words (after the positional ones), each matching `pattern` where one is given. */
  readonly rest?: { readonly name: string; readonly kind: "number" | "string"; readonly pattern?: RegExp; readonly help: string };
}

type Defaulted<S, T> = S extends { readonly default: unknown } ? T : T | undefined;
type ValueOf<S> =
  S extends { readonly kind: "flag" } ? boolean
  : S extends { readonly kind: "number" } ? Defaulted<S, number>
  : S extends { readonly kind: "string"; readonly choices: readonly (infer C)[] } ? Defaulted<S, C>
  : S extends { readonly kind: "string" } ? Defaulted<S, string>
  : S extends { readonly kind: "list"; readonly of: "number" } ? Defaulted<S, number[]>
  : S extends { readonly kind: "list" } ? Defaulted<S, string[]>
  : S extends { readonly kind: "repeated" } ? string[]
  : never;

type OptionsOf<S> = S extends { readonly options: infer O } ? O : Record<never, never>;
type WordOf<S> = S extends { readonly words: readonly (infer W)[] } ? W : never;
type RestOf<S> = S extends { readonly rest: infer R } ? R : never;
type NameOf<T> = T extends { readonly name: infer N extends string } ? N : never;

/** The values a spec gives: one property per option, positional word and the rest. */
export type ProbeArgs<S extends ProbeSpec> =
  & { -readonly [K in keyof OptionsOf<S>]: ValueOf<OptionsOf<S>[K]> }
  & { -readonly [W in WordOf<S> as NameOf<W>]: ValueOf<W> }
  & { -readonly [R in RestOf<S> as NameOf<R>]: R extends { readonly kind: "number" } ? number[] : string[] };

/** The parse's outcome: the values, the help text asked for, or why the command line is refused. */
export type ParsedProbeArgs<S extends ProbeSpec> =
  | { readonly values: ProbeArgs<S> }
  | { readonly help: string }
  | { readonly error: string };

function describeDefault(spec: OptionSpec): string {
  if (spec.kind === "flag" || spec.kind === "repeated" || spec.default === undefined) return "";
  return ` (default ${Array.isArray(spec.default) ? spec.default.join(",") : String(spec.default)})`;
}

function expected(spec: OptionSpec): string {
  switch (spec.kind) {
    case "flag": return "no value";
    case "number": {
      const bounds = [spec.min !== undefined ? `at least ${spec.min}` : "", spec.max !== undefined ? `at most ${spec.max}` : ""].filter((s) => s !== "");
      return `${spec.integer === true ? "a whole number" : "a number"}${bounds.length > 0 ? `, ${bounds.join(" and ")}` : ""}`;
    }
    case "string": return spec.choices !== undefined ? `one of ${spec.choices.join("|")}` : spec.pattern !== undefined ? `a value matching ${spec.pattern.source}` : "a value";
    case "list": return spec.of === "number" ? `comma-separated numbers${spec.min !== undefined ? ` (each at least ${spec.min})` : ""}`
      : `comma-separated values${spec.pattern !== undefined ? ` (each matching ${spec.pattern.source})` : ""}`;
    case "repeated": return "a value (may be given again)";
  }
}

function usageOf(name: string, spec: OptionSpec): string {
  if (spec.kind === "flag") return name;
  return name.startsWith("--") ? `${name} VALUE` : `${name}=VALUE`;
}

/** An option's help line: its help, what it takes (where that says more than "a value") and its default. */
function helpOf(spec: OptionSpec): string {
  const plain = spec.kind === "flag" || (spec.kind === "string" && spec.choices === undefined && spec.pattern === undefined);
  return `${spec.help}${plain ? "" : `: ${expected(spec)}`}${describeDefault(spec)}`;
}

/** The probe's options, one a line: what `help` prints and what a refusal lists. */
export function probeUsage(probe: string, spec: ProbeSpec): string {
  const lines: [string, string][] = [];
  for (const w of spec.words ?? []) lines.push([`[${w.name}]`, helpOf(w)]);
  if (spec.rest !== undefined) lines.push([`[${spec.rest.name} ...]`, `${spec.rest.help}${spec.rest.pattern !== undefined ? ` (${spec.rest.pattern.source})` : ""}`]);
  for (const [name, o] of Object.entries(spec.options ?? {})) lines.push([usageOf(name, o), helpOf(o)]);
  const width = Math.max(0, ...lines.map(([u]) => u.length));
  return [`${probe} takes:`, ...lines.map(([u, h]) => `  ${u.padEnd(width)}  ${h}`), `  ${"help".padEnd(width)}  these lines`].join("\n");
}

type Converted = { readonly value: unknown } | { readonly problem: string };

function convertNumber(text: string, spec: { readonly min?: number; readonly max?: number; readonly integer?: boolean }): number | undefined {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) return undefined;
  if (spec.integer === true && !Number.isInteger(n)) return undefined;
  if (spec.min !== undefined && n < spec.min) return undefined;
  if (spec.max !== undefined && n > spec.max) return undefined;
  return n;
}

function convert(spec: Exclude<OptionSpec, { kind: "flag" | "repeated" }>, text: string): Converted {
  switch (spec.kind) {
    case "number": {
      const n = convertNumber(text, spec);
      return n === undefined ? { problem: expected(spec) } : { value: n };
    }
    case "string":
      return (spec.choices !== undefined && !spec.choices.includes(text)) || spec.pattern?.test(text) === false ? { problem: expected(spec) } : { value: text };
    case "list": {
      const items = text.split(",");
      if (spec.of !== "number") return spec.pattern !== undefined && !items.every((item) => spec.pattern!.test(item)) ? { problem: expected(spec) } : { value: items };
      const numbers = items.map((item) => convertNumber(item, spec));
      return numbers.some((n) => n === undefined) ? { problem: expected(spec) } : { value: numbers };
    }
  }
}

/**
 * Parses `argv` (a probe's words, without node and the script) against `spec`. Pure: the
 * caller prints and exits (probeArgs does).
 */
export function parseProbeArgs<const S extends ProbeSpec>(probe: string, spec: S, argv: readonly string[]): ParsedProbeArgs<S> {
  const options = spec.options ?? {};
  const words = spec.words ?? [];
  const refuse = (why: string): { error: string } => ({ error: `${probe}: ${why}\n${probeUsage(probe, spec)}` });
  const values: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(options)) values[name] = o.kind === "flag" ? false : o.kind === "repeated" ? [] : o.default === undefined ? undefined : Array.isArray(o.default) ? [...o.default] : o.default;
  for (const w of words) values[w.name] = w.default;
  const rest: unknown[] = [];
  if (spec.rest !== undefined) values[spec.rest.name] = rest;
  const given = new Set<string>();
  let positional = 0;
  const set = (name: string, o: OptionSpec, text: string, word: string): string | undefined => {
    if (o.kind === "flag") return `${word}: ${name} is a flag and takes no value`;
    if (o.kind === "repeated") { (values[name] as string[]).push(text); return undefined; }
    if (given.has(name)) return `${word}: ${name} is given twice`;
    given.add(name);
    const c = convert(o, text);
    if ("problem" in c) return `${word}: ${name} takes ${c.problem}`;
    values[name] = c.value;
    return undefined;
  };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "help" || word === "--help") return { help: probeUsage(probe, spec) };
    const eq = word.indexOf("=");
    const key = eq > 0 ? word.slice(0, eq) : word;
    const o = Object.hasOwn(options, key) ? options[key] : undefined;
    if (o !== undefined && eq > 0) {
      const problem = set(key, o, word.slice(eq + 1), word);
      if (problem !== undefined) return refuse(problem);
    } else if (o?.kind === "flag") {
      values[key] = true;
    } else if (o !== undefined && key.startsWith("--")) {
      const text = argv[i + 1];
      if (text === undefined) return refuse(`${word}: ${key} takes ${expected(o)} after it`);
      const problem = set(key, o, text, `${word} ${text}`);
      if (problem !== undefined) return refuse(problem);
      i++;
    } else if (o !== undefined) {
      return refuse(`${word}: ${key} takes a value (${key}=...)`);
    } else if (eq > 0 || word.startsWith("--")) {
      return refuse(`unknown option ${word}`);
    } else if (positional < words.length) {
      const w = words[positional++]!;
      const c = convert(w, word);
      if ("problem" in c) return refuse(`${word}: ${w.name} takes ${c.problem}`);
      values[w.name] = c.value;
    } else if (spec.rest !== undefined && (spec.rest.pattern === undefined || spec.rest.pattern.test(word))) {
      const c = spec.rest.kind === "number" ? convert({ kind: "number", help: "" }, word) : { value: word };
      if ("problem" in c) return refuse(`${word}: ${spec.rest.name} takes ${c.problem}`);
      rest.push(c.value);
    } else {
      return refuse(`unknown option ${word}`);
    }
  }
  return { values: values as ProbeArgs<S> };
}

/**
 * The probe's options from process.argv: `help` prints them and exits 0; a command line it
 * does not take prints why and the options to stderr and exits 2.
 */
export function probeArgs<const S extends ProbeSpec>(probe: string, spec: S, argv: readonly string[] = process.argv.slice(2)): ProbeArgs<S> {
  const parsed = parseProbeArgs(probe, spec, argv);
  if ("values" in parsed) return parsed.values;
  if ("help" in parsed) {
    console.log(parsed.help);
    process.exit(0);
  }
  console.error(parsed.error);
  process.exit(2);
}
