// The playground's logic, apart from the page: parse and verify a program into
// diagnostics placed at a line and column, run it on a client's devices (in the run
// worker, run_worker.ts, which the page can terminate), and draw its shardings with
// `xlats shardings`' own code (an in-memory CliIo).

import {
  DiagnosticList, Literal, ParseError, SdyParseError, SdyVerifyError, XlaError, createClient, numpyRepr, parseHlo, parseMlirLiteral,
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

/** An argument opened from a .npy file: its name (for errors) and bytes. */
export interface NpyFile {
  readonly file: string;
  readonly bytes: Uint8Array;
}

/** An argument: an MLIR literal typed in its field, or an array opened from a .npy file. */
export type Argument = string | NpyFile;

/** Reads a .npy file's bytes as an array, with the file's name in any error. */
export function npyLiteral(npy: NpyFile): Literal {
  try {
    return Literal.fromNpy(npy.bytes);
  } catch (e) {
    throw new ArgumentError(`${npy.file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** What the page asks the run worker to do: run the program text on these arguments. */
export interface RunRequest {
  readonly text: string;
  readonly args: readonly Argument[];
  readonly backend: string;
  readonly deviceCount: number;
}

/** The run worker's answer: each device's results as text for the page and all of them as one .npz, or what went wrong. */
export type RunReply =
  | { readonly ok: true; readonly printed: readonly (readonly string[])[]; readonly npz: Uint8Array }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/**
 * Runs the request's entry on `deviceCount` devices as that many replicas, every device
 * with the same arguments (one per parameter). The text is verified again here: the
 * worker has only the text, and what it runs must be what was verified.
 */
export async function runRequest(request: RunRequest): Promise<RunReply> {
  try {
    const checked = check(request.text);
    if (!checked.ok) return checked;
    const entry = checked.module.entry;
    const literals = argumentLiterals(entry, request.args);
    const c = await clientFor(request.backend, request.deviceCount);
    const results = await c.run(entry, Array.from({ length: request.deviceCount }, () => literals), { replicas: request.deviceCount });
    const arrays = results.map((r) => (r.shape.kind === "tuple" ? r.elements : [r]));
    return { ok: true, printed: arrays.map((vs) => vs.map(printResult)), npz: resultsNpz(arrays) };
  } catch (e) {
    return { ok: false, diagnostics: diagnosticsOf(e) };
  }
}

/** The arguments as literals, each of its parameter's type. */
function argumentLiterals(entry: Computation, args: readonly Argument[]): Literal[] {
  if (args.length !== entry.parameters.length) throw new ArgumentError(`@${entry.name} takes ${entry.parameters.length} argument(s), got ${args.length}`);
  const literals = args.map((a, i) => {
    if (typeof a !== "string") return npyLiteral(a);
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
  return literals;
}

/**
 * Results with more elements than this are printed summarised, as numpy's repr prints them
 * (the first and last three along each dimension; the .npz has every value): printing a
 * million would stall the page.
 */
const PRINTED_ELEMENTS = 10_000;

function printResult(v: Literal): string {
  if (v.shape.kind !== "array") return v.toString();
  const n = elementCount(v.shape);
  return n <= PRINTED_ELEMENTS ? printMlirLiteral(v) : `${shapeToMlir(v.shape)}, ${n} elements, summarised (save as .npz for every value):\n${numpyRepr(v)}`;
}

/**
 * The results as one .npz: arr_0, arr_1, ... as np.savez names positional arrays (one
 * device), or device0_arr_0, ... (several).
 */
function resultsNpz(arrays: readonly (readonly Literal[])[]): Uint8Array {
  const several = arrays.length > 1;
  return writeNpz(arrays.flatMap((vs, d) => vs.map((v, k) => [`${several ? `device${d}_` : ""}arr_${k}`, v] as const)));
}

/**
 * `xlats shardings --html` on the text: a self-contained HTML page (none when no tensor has
 * a sharding), or the command's errors. What the command prints for a terminal ("wrote 2
 * figures to ...") is not for the page and is dropped.
 */
export function drawShardings(text: string, propagate: boolean): { readonly html?: string; readonly errors: string } {
  let html: string | undefined;
  const errors: string[] = [];
  const status = shardingsCommand({ file: FILE, propagate, html: "shardings.html" }, {
    readFile: () => text,
    isDirectory: () => false,
    listDirectory: () => [],
    joinPath: (dir, name) => `${dir}/${name}`,
    writeFile: (_path, contents) => { html = contents; },
    out: () => {},
    err: (line) => errors.push(line),
  });
  const drawn = status === 0 && html !== undefined && !html.includes("No tensor in this selection has a sharding.");
  return { ...(drawn ? { html } : {}), errors: errors.join("\n") };
}

/** What a link to the playground carries in its fragment: the program, its arguments, devices and backend. */
export interface Shared {
  readonly text: string;
  /** One per parameter: the field's MLIR literal, or a .npy file's name and bytes (base64). */
  readonly args: readonly (string | { readonly file: string; readonly npy: string })[];
  readonly devices: number;
  readonly backend: string;
}

/** The fragment's key: `#program=...`. */
const SHARED_KEY = "program=";

/** The fragment (without `#`) of a link that opens `shared`: its JSON, UTF-8, in base64url. */
export function sharedFragment(shared: Shared): string {
  return SHARED_KEY + toBase64(new TextEncoder().encode(JSON.stringify(shared))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** What a link's fragment (without `#`) carries; undefined for a fragment that is not a shared program, an error for a damaged one. */
export function readSharedFragment(fragment: string): Shared | undefined {
  if (!fragment.startsWith(SHARED_KEY)) return undefined;
  let value: unknown;
  try {
    const b64 = fragment.slice(SHARED_KEY.length).replace(/-/g, "+").replace(/_/g, "/");
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64(b64)));
  } catch (e) {
    throw new ArgumentError(`the link's program could not be read (cut short when copied?): ${e instanceof Error ? e.message : String(e)}`);
  }
  const v = value as Partial<Record<keyof Shared, unknown>>;
  const argOk = (a: unknown): boolean => typeof a === "string" ||
    (typeof a === "object" && a !== null && typeof (a as { file?: unknown }).file === "string" && typeof (a as { npy?: unknown }).npy === "string");
  if (typeof v !== "object" || v === null || typeof v.text !== "string" || !Array.isArray(v.args) || !v.args.every(argOk) ||
      typeof v.devices !== "number" || !Number.isInteger(v.devices) || v.devices < 1 || typeof v.backend !== "string") {
    throw new ArgumentError("the link's program could not be read: it needs text, args, devices (a positive integer) and backend");
  }
  return v as Shared;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Decodes base64, padded or not (atob throws on a character that is not base64). */
export function fromBase64(b64: string): Uint8Array {
  const binary = atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
