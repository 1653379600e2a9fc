// The part of lit/FileCheck that StableHLO's interpreter tests use, checked by value:
// `// RUN:` lines (which flags, which check prefixes, `--args`) and `// CHECK:` /
// `// CHECK-NEXT:` blocks describing what `stablehlo-translate --interpret` prints for
// each value (a function result, or an `interpreter.print`):
//
//   tensor<2x2xi8> {          (or `%0 = tensor<...> {` for a print; rank 0: `tensor<ui8> {1}`)
//     [
//       [1, 2],
//       [3, 4]
//     ]
//   }
//
// and, with --interpreter-print-dense, `dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>`.
// Elements are compared as the interpreter prints them: integers and booleans exactly,
// floats in C's `%e` form (7 significant digits), complex values as [re, im] pairs;
// dense forms are parsed and compared bit for bit. A block matches the first value at or
// after the previous match (FileCheck's CHECK order); what the matcher cannot read
// (regular expressions, CHECK-SAME/-NOT/-LABEL/-DAG, other text) makes the case a skip.
//
// RUN lines of other tools are another kind of lit test (a pass pipeline checked by
// FileCheck, Shardy's executable tests' wrapper script): foreignRunLines finds them and
// says what each is and what runs it, for the runner to skip with that reason.

import { ELEMENT_TYPES } from "../types/element_type.js";
import type { Literal, Scalar } from "../types/literal.js";
import { shapesEqual } from "../types/shape.js";
import { parseMlirLiteral } from "../text/mlir/literal.js";
import { shapeToMlir } from "../text/mlir/types.js";
import { showScalar, type CheckOutcome } from "./compare.js";
import { appendAll } from "../types/arrays.js";

/** One `// RUN:` line of stablehlo-translate --interpret. */
export interface RunLine {
  readonly text: string;
  /** FileCheck prefixes it checks (none when its output is not piped to FileCheck). */
  readonly prefixes: readonly string[];
  /** --interpreter-print-dense: values print as dense<...> : tensor<...>. */
  readonly dense: boolean;
  /** --args="[...]": the text of each argument literal. */
  readonly args?: readonly string[];
  /** Why the runner cannot honour this line (`not ...` expecting the tool's own error text). */
  readonly unsupported?: string;
}

/** A value the program printed: a function result, or (print) an interpreter.print. */
export interface PrintedValue {
  readonly print: boolean;
  readonly value: Literal;
}

/** A `// RUN:` line that runs no interpreter. */
export interface ForeignRunLine {
  /** 1-based line of the file. */
  readonly line: number;
  readonly text: string;
  /** It only writes a file for a later RUN line (`> %t.mlir`), checking nothing itself. */
  readonly prepares: boolean;
  /** What it tests and what runs it, e.g. "an `xlats opt` lit test (RUN: sdy_opt ... | FileCheck): run it with ...". */
  readonly description: string;
}

/** The commands of a file's `// RUN:` lines, with their 1-based line numbers. */
function runCommands(fileText: string): { readonly line: number; readonly text: string }[] {
  const lines = fileText.split(/\r?\n/);
  const out: { line: number; text: string }[] = [];
  lines.forEach((l, n) => {
    const m = /^\s*\/\/\s*RUN:\s*(.*)$/.exec(l);
    if (m) out.push({ line: n + 1, text: m[1]!.trim() });
  });
  return out;
}

/** A RUN line of stablehlo-translate --interpret (what the runner runs), however its input is made. */
function runsInterpreter(text: string): boolean {
  return /stablehlo-translate/.test(text) && /--interpret\b/.test(text);
}

/**
 * The lit tools whose tests other files are, by the RUN line's first program (without
 * its directory): what such a file is, and what runs it. Tools not listed are named as
 * they are.
 */
const LIT_TOOLS: readonly { readonly tool: string; readonly what: string; readonly how: string }[] = [
  {
    tool: "sdy_opt",
    what: "an `xlats opt` lit test",
    how: "run it with a lit harness, `xlats opt` as sdy_opt (../shared/tools/sdy-harness.mjs)",
  },
  {
    tool: "run_sdy_interpreter_test.sh",
    what: "a Shardy executable test",
    how: "sdy_opt partitions it, stablehlo-translate --interpret runs it; run it with ../shared/tools/sdy-harness.mjs, `xlats opt` as sdy_opt and `xlats test` as --interp",
  },
];

/**
 * The RUN lines of a file that run no interpreter, each with what it tests; empty when
 * every RUN line (or none) is stablehlo-translate --interpret.
 */
export function foreignRunLines(fileText: string): ForeignRunLine[] {
  return runCommands(fileText).filter((r) => !runsInterpreter(r.text)).map(({ line, text }) => {
    const program = /^(?:not\s+)?(\S+)/.exec(text)?.[1] ?? text;
    const tool = program.slice(program.lastIndexOf("/") + 1);
    // `sdy_opt ... | FileCheck`, `sdy_opt ... -verify-diagnostics`: the tool and what checks its output.
    const fileCheck = /\|\s*FileCheck\b/.test(text);
    const checks = `${/\s-?-verify-diagnostics\b/.test(text) ? " -verify-diagnostics" : ""}${fileCheck ? " | FileCheck" : ""}`;
    const run = `RUN: ${tool} ...${checks}`;
    const known = LIT_TOOLS.find((t) => t.tool === tool);
    const description = known !== undefined
      ? `${known.what} (${run}): ${known.how}`
      : `a lit test of ${tool} (${run}): xlats test runs only stablehlo-translate --interpret RUN lines`;
    // `stablehlo-opt --chlo-legalize-to-stablehlo %s > %t.mlir` makes the input of the
    // interpret line after it: the runner reads the file as it is (CHLO imports as StableHLO).
    return { line, text, prepares: !fileCheck && />\s*%t/.test(text), description };
  });
}

/** The interpret RUN lines of a file. Other RUN lines (other tools) are ignored (foreignRunLines). */
export function parseRunLines(fileText: string): RunLine[] {
  const out: RunLine[] = [];
  for (const { text } of runCommands(fileText)) {
    if (!runsInterpreter(text)) continue;
    const checked = /\|\s*FileCheck\b(.*)$/.exec(text);
    const prefixes: string[] = [];
    if (checked) {
      const p = /--check-prefix(?:es)?[= ](\S+)/.exec(checked[1]!);
      appendAll(prefixes, (p ? p[1]!.split(",") : ["CHECK"]));
    }
    const argsMatch = /--args=("([^"]*)"|'([^']*)'|(\S+))/.exec(text);
    const line: { -readonly [K in keyof RunLine]: RunLine[K] } = { text, prefixes, dense: /--interpreter-print-dense\b/.test(text) };
    if (argsMatch) line.args = splitArgs(argsMatch[2] ?? argsMatch[3] ?? argsMatch[4]!);
    if (/^not\s/.test(text)) line.unsupported = "expects stablehlo-translate to fail with its own error message";
    out.push(line);
  }
  return out;
}

/** `[dense<1> : tensor<2xi32>, dense<2> : tensor<2xi32>]` -> the literal texts (not an array: one unparseable item). */
function splitArgs(text: string): string[] {
  const t = text.trim();
  if (!t.startsWith("[") || !t.endsWith("]")) return [t];
  const items: string[] = [];
  let depth = 0;
  let start = 1;
  for (let i = 1; i < t.length - 1; i++) {
    const ch = t[i]!;
    if (ch === "<" || ch === "[" || ch === "(") depth++;
    else if (ch === ">" || ch === "]" || ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      items.push(t.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = t.slice(start, -1).trim();
  if (last !== "") items.push(last);
  return items;
}

/** One expected printed value. */
interface Block {
  readonly line: number;
  /** `%name = ` before it: an interpreter.print (the SSA name itself is not compared). */
  readonly print: boolean;
  readonly text: string;
  readonly dense: boolean;
}

const DIRECTIVE = (prefix: string): RegExp =>
  new RegExp(`^\\s*//\\s*${prefix.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&")}(-[A-Z]+)?(\\{LITERAL\\})?:(.*)$`);

/** The blocks for `prefix` in a chunk, or why they cannot be checked. */
export function parseCheckBlocks(chunk: string, prefix: string, dense: boolean): Block[] | { unsupported: string } {
  const re = DIRECTIVE(prefix);
  const blocks: Block[] = [];
  let open: { line: number; print: boolean; text: string; depth: number } | undefined;
  const lines = chunk.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const m = re.exec(lines[n]!);
    if (!m) continue;
    const kind = m[1] ?? "";
    const literal = m[2] !== undefined;
    const content = m[3]!.trim();
    if (kind !== "" && kind !== "-NEXT") {
      // Another prefix sharing this one's start (CHECK-DENSE for CHECK) is not a directive of it.
      if (/^-(SAME|NOT|LABEL|DAG|EMPTY|COUNT)/.test(kind)) return { unsupported: `${prefix}${kind} directives are not supported` };
      continue;
    }
    if (!literal && /\{\{|\[\[/.test(content)) return { unsupported: `line ${n + 1}: FileCheck patterns ({{...}} / [[...]]) are not supported` };
    if (kind === "-NEXT") {
      if (open === undefined) return { unsupported: `line ${n + 1}: ${prefix}-NEXT outside a printed value` };
      open.text += `\n${content}`;
      open.depth += depthChange(content);
    } else {
      if (open !== undefined) return { unsupported: `line ${n + 1}: a new ${prefix} line before the previous value closed` };
      const head = /^(%[^\s=]+\s*=\s*)?(.*)$/.exec(content)!;
      open = { line: n + 1, print: head[1] !== undefined, text: head[2]!, depth: dense ? 0 : depthChange(head[2]!) };
      if (!(dense ? /^dense</.test(open.text) : /^tensor<.*\{/.test(open.text))) {
        return { unsupported: `line ${n + 1}: "${content}" is not a printed value` };
      }
    }
    if (open.depth === 0) {
      blocks.push({ line: open.line, print: open.print, text: open.text, dense });
      open = undefined;
    }
  }
  if (open !== undefined) return { unsupported: `line ${open.line}: the printed value never closes` };
  return blocks;
}

const depthChange = (s: string): number => [...s].reduce((d, ch) => d + (ch === "{" ? 1 : ch === "}" ? -1 : 0), 0);

/** Matches the blocks in order against the printed values (each block at or after the previous match). */
export function matchBlocks(blocks: readonly Block[], printed: readonly PrintedValue[]): CheckOutcome {
  let at = 0;
  for (const block of blocks) {
    let reason = "nothing was printed after the previous match";
    let found = -1;
    for (let i = at; i < printed.length && found < 0; i++) {
      const p = printed[i]!;
      if (block.print && !p.print) {
        reason = "expected an interpreter.print, found a result";
        continue;
      }
      const r = block.dense ? matchDense(block.text, p.value) : matchTensor(block.text, p.value);
      if (r === undefined) found = i;
      else if (i === at) reason = r;
    }
    if (found < 0) return { ok: false, message: `CHECK at line ${block.line} (${firstLine(block.text)}): ${reason}` };
    at = found + 1;
  }
  return { ok: true };
}

const firstLine = (s: string): string => s.split("\n")[0]!;

/** Undefined when `text` (dense<...> : tensor<...>) is exactly `value`, else why not. */
function matchDense(text: string, value: Literal): string | undefined {
  let expected: Literal;
  try {
    expected = parseMlirLiteral(text);
  } catch (e) {
    return `cannot read the expected value: ${(e as Error).message.split("\n")[0]}`;
  }
  if (value.shape.kind !== "array" || !shapesEqual(expected.shape, value.shape)) {
    return `type ${value.shape.kind === "array" ? shapeToMlir(value.shape) : value.shape.kind} differs`;
  }
  const a = value.values();
  const e = expected.values();
  const same = (x: Scalar, y: Scalar): boolean =>
    typeof x === "object" && typeof y === "object" ? same(x.re, y.re) && same(x.im, y.im)
      : x === y || (typeof x === "number" && typeof y === "number" && Number.isNaN(x) && Number.isNaN(y));
  const bad = a.findIndex((x, i) => !same(x, e[i]!));
  return bad < 0 ? undefined : `element ${bad} is ${showScalar(a[bad]!)}, expected ${showScalar(e[bad]!)}`;
}

type Nested = string | Nested[];

/** Undefined when the `tensor<...> {...}` text prints `value`, else why not. */
function matchTensor(text: string, value: Literal): string | undefined {
  if (value.shape.kind !== "array") return `a ${value.shape.kind} is not printed as a tensor`;
  const head = /^tensor<(.*?)>\s*\{([\s\S]*)\}\s*$/.exec(text);
  if (head === null) return "cannot read the expected value";
  const actualType = shapeToMlir(value.shape).replace(/\s/g, "");
  if (`tensor<${head[1]!}>`.replace(/\s/g, "") !== actualType) return `type ${actualType} differs from tensor<${head[1]}>`;
  const tokens = head[2]!.match(/\[|\]|,|[^\s[\],]+/g) ?? [];
  let k = 0;
  const parse = (): Nested => {
    const t = tokens[k++];
    if (t !== "[") return t ?? "";
    const items: Nested[] = [];
    while (tokens[k] !== "]" && k < tokens.length) {
      items.push(parse());
      if (tokens[k] === ",") k++;
    }
    k++;
    return items;
  };
  const body = parse();
  if (k !== tokens.length) return "unexpected text after the value";
  const t = value.elementType;
  const complex = ELEMENT_TYPES[t].kind === "complex";
  const flat: Nested[] = [];
  const dims = value.shape.dimensions;
  const walk = (v: Nested, depth: number): string | undefined => {
    if (depth === dims.length) {
      flat.push(v);
      return undefined;
    }
    if (typeof v === "string" || v.length !== dims[depth]) return `dimension ${depth} does not have ${dims[depth]} entries`;
    for (const item of v) {
      const r = walk(item, depth + 1);
      if (r) return r;
    }
    return undefined;
  };
  const structure = walk(body, 0);
  if (structure) return structure;
  const actual = value.values();
  for (let i = 0; i < actual.length; i++) {
    const v = actual[i]!;
    const e = flat[i]!;
    const ok = complex
      ? Array.isArray(e) && e.length === 2 && typeof e[0] === "string" && typeof e[1] === "string" && typeof v === "object" &&
        printsAs(v.re, e[0]) && printsAs(v.im, e[1])
      : typeof e === "string" && elementMatches(v, e, ELEMENT_TYPES[t].kind);
    if (!ok) return `element ${i} is ${showScalar(v)}, expected ${JSON.stringify(e)}`;
  }
  return undefined;
}

function elementMatches(v: Scalar, token: string, kind: string): boolean {
  if (typeof v === "boolean") return token === String(v);
  if (typeof v === "object") return false;
  if (kind === "float") return typeof v === "number" && printsAs(v, token);
  if (!/^-?\d+$/.test(token)) return false;
  return BigInt(v) === BigInt(token);
}

/** Whether C's `%e` of x is the token (or the value the token names, printed the same way). */
function printsAs(x: number, token: string): boolean {
  const e = /^-?(nan|inf)$/i.test(token) ? Number(token.replace(/nan/i, "NaN").replace(/inf/i, "Infinity")) : Number(token);
  if (Number.isNaN(e) && !/nan/i.test(token)) return false;
  return formatE(x) === formatE(e);
}

/** C's printf("%e"): 6 digits after the point, a signed exponent of at least two digits. */
export function formatE(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x < 0 ? "-inf" : "inf";
  const s = Math.abs(x).toExponential(6).replace(/e([-+])(\d)$/, "e$10$2");
  return (x < 0 || Object.is(x, -0) ? "-" : "") + s;
}
