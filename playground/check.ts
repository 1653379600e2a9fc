// The playground's logic, apart from the page: parse and verify a program into
// diagnostics placed at a line and column, run it on a client's devices, and draw its
// shardings with `xlats shardings`' own code (an in-memory CliIo).

import {
  DiagnosticList, Literal, ParseError, SdyParseError, SdyVerifyError, XlaError, createClient, parseHlo, parseMlirLiteral,
  parseStableHlo, printMlirLiteral, verifyModule, verifySdy, writeNpz, type Client, type Computation, type HloModule,
} from "../dist/src/browser.js";
import { shapeToMlir } from "../dist/src/text/mlir/index.js";
import { elementCount } from "../dist/src/types/shape.js";
import { detectFormat, type TextFormat } from "../dist/src/cli/formats.js";
import { shardingsCommand } from "../dist/src/cli/shardings.js";

export const FILE = "input";

export interface Diagnostic {
  readonly severity: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** An argument field that does not hold a literal of its parameter's type. */
export class ArgumentError extends Error {
  override name = "ArgumentError";
}

export type Checked =
  | { readonly ok: true; readonly module: HloModule; readonly format: TextFormat }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** The diagnostics an error stands for, each at its place in the text where it has one. */
export function diagnosticsOf(e: unknown): Diagnostic[] {
  if (e instanceof DiagnosticList) return e.diagnostics.flatMap(diagnosticsOf);
  if (e instanceof SdyParseError || e instanceof SdyVerifyError) return [...e.diagnostics];
  if (e instanceof ParseError) return [{ severity: "error", message: e.reason, line: e.line, column: e.column }];
  if (e instanceof ArgumentError) return [{ severity: "error", message: e.message }];
  if (e instanceof XlaError) {
    const at = e.location;
    return [{ severity: "error", message: `${e.name}: ${e.message}`, ...(at !== undefined ? { line: at.line, column: at.column } : {}) }];
  }
  return [{ severity: "error", message: e instanceof Error ? `internal error: ${e.name}: ${e.message}` : String(e) }];
}

/** `input:3:7: error: ...`, the source line and a caret under the column (`error: ...` where no place is known). */
export function formatDiagnostic(d: Diagnostic, text: string): string {
  if (d.line === undefined || d.column === undefined || d.line < 1) return `${d.severity}: ${d.message}`;
  const source = text.split("\n")[d.line - 1] ?? "";
  return `${FILE}:${d.line}:${d.column}: ${d.severity}: ${d.message}\n${source}\n${" ".repeat(Math.max(0, d.column - 1))}^`;
}

/** Parses (StableHLO or HLO text, told apart as `xlats` does) and verifies, Shardy's constraints included. */
export function check(text: string): Checked {
  try {
    const format = detectFormat(text, FILE);
    const module = format === "hlo" ? parseHlo(text, FILE) : parseStableHlo(text, FILE, 0, { recordLocations: true });
    verifyModule(module);
    const sdy = verifySdy(module);
    if (sdy.length > 0) throw new SdyVerifyError(sdy);
    return { ok: true, module, format };
  } catch (e) {
    return { ok: false, diagnostics: diagnosticsOf(e) };
  }
}

/** The entry's parameters as names and MLIR types, for the argument fields. */
export function parametersOf(entry: Computation): { name: string; type: string }[] {
  return entry.parameters.map((p) => ({ name: p.name, type: shapeToMlir(p.shape) }));
}

/** A zero literal of the parameter's type, as the default argument. */
export function defaultArgument(entry: Computation, index: number): string {
  const shape = entry.parameters[index]!.shape;
  return shape.kind === "array" ? printMlirLiteral(Literal.zeros(shape)) : "";
}

let client: { key: string; client: Client } | undefined;

/** A client of `deviceCount` devices of `backend`, kept while neither changes. */
async function clientFor(backend: string, deviceCount: number): Promise<Client> {
  const key = `${backend}/${deviceCount}`;
  if (client?.key === key) return client.client;
  const previous = client;
  client = undefined;
  await previous?.client.close();
  client = { key, client: await createClient({ backend, deviceCount }) };
  return client.client;
}

/** An argument: an MLIR literal typed in its field, or an array opened from a .npy file. */
export type Argument = string | { readonly file: string; readonly literal: Literal };

/** What one run gives back: each device's results, as MLIR literals for the page and as arrays for the .npz. */
export interface RunResults {
  readonly printed: readonly (readonly string[])[];
  readonly arrays: readonly (readonly Literal[])[];
}

/** Reads a .npy file's bytes as an argument, with the file's name in any error. */
export function npyArgument(file: string, bytes: Uint8Array): Argument {
  try {
    return { file, literal: Literal.fromNpy(bytes) };
  } catch (e) {
    throw new ArgumentError(`${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Runs the entry on `deviceCount` devices as that many replicas, every device with the same
 * arguments (one per parameter).
 */
export async function run(entry: Computation, args: readonly Argument[], backend: string, deviceCount: number): Promise<RunResults> {
  if (args.length !== entry.parameters.length) throw new ArgumentError(`@${entry.name} takes ${entry.parameters.length} argument(s), got ${args.length}`);
  const literals = args.map((a, i) => {
    if (typeof a !== "string") return a.literal;
    try {
      return parseMlirLiteral(a);
    } catch (e) {
      // The literal's own line and column are in the field, not in the program: said in words.
      throw new ArgumentError(`argument ${i} (%${entry.parameters[i]?.name ?? i}): ${e instanceof Error ? e.message.replace(/^<literal>:/, "") : String(e)}`);
    }
  });
  literals.forEach((lit, i) => {
    const want = entry.parameters[i]!.shape;
    if (shapeToMlir(lit.shape) !== shapeToMlir(want)) {
      const given = args[i]!;
      const from = typeof given === "string" ? "" : ` (${given.file})`;
      throw new ArgumentError(`argument ${i} (%${entry.parameters[i]!.name})${from} is ${shapeToMlir(lit.shape)}, but the parameter is ${shapeToMlir(want)}`);
    }
  });
  const c = await clientFor(backend, deviceCount);
  const results = await c.run(entry, Array.from({ length: deviceCount }, () => literals), { replicas: deviceCount });
  const arrays = results.map((r) => (r.shape.kind === "tuple" ? r.elements : [r]));
  return { arrays, printed: arrays.map((vs) => vs.map(printResult)) };
}

/** Results with more elements than this are summarized on the page (the .npz has them whole): printing a million would stall it. */
const PRINTED_ELEMENTS = 10_000;

function printResult(v: Literal): string {
  if (v.shape.kind !== "array") return v.toString();
  const n = elementCount(v.shape);
  return n <= PRINTED_ELEMENTS ? printMlirLiteral(v) : `${shapeToMlir(v.shape)}: ${n} elements (too many to print here: save as .npz)`;
}

/**
 * The results as one .npz: arr_0, arr_1, ... as np.savez names positional arrays (one
 * device), or device0_arr_0, ... (several).
 */
export function resultsNpz(results: RunResults): Uint8Array {
  const several = results.arrays.length > 1;
  const entries = results.arrays.flatMap((vs, d) => vs.map((v, k) => [`${several ? `device${d}_` : ""}arr_${k}`, v] as const));
  return writeNpz(entries);
}

/** `xlats shardings --html` on the text: a self-contained HTML page, or undefined when no tensor has a sharding. */
export function drawShardings(text: string, propagate: boolean): { html?: string; message: string } {
  let html: string | undefined;
  const lines: string[] = [];
  shardingsCommand({ file: FILE, propagate, html: "shardings.html" }, {
    readFile: () => text,
    isDirectory: () => false,
    listDirectory: () => [],
    joinPath: (dir, name) => `${dir}/${name}`,
    writeFile: (_path, contents) => { html = contents; },
    out: (line) => lines.push(line),
    err: (line) => lines.push(line),
  });
  const none = html === undefined || html.includes("No tensor in this selection has a sharding.");
  return { ...(none || html === undefined ? {} : { html }), message: lines.join("\n") };
}
