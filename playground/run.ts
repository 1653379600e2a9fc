// The run worker's logic (run_worker.ts): a program's text and arguments in, each
// device's results out, as text for the page and as one .npz. It imports the package's
// browser entry, which registers the backends (wasm, interpreter) that createClient names;
// the webgpu backend (offered where the browser has navigator.gpu) runs here by compile.

import { Literal, compile, createClient, numpyRepr, parseMlirLiteral, printMlirLiteral, writeNpz, type Client, type Computation } from "../dist/src/browser.js";
import { shapeToMlir } from "../dist/src/text/mlir/index.js";
import { elementCount } from "../dist/src/types/shape.js";
import { ArgumentError, check, diagnosticsOf, npyLiteral, type Argument, type Diagnostic } from "./check.js";

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
    const results = request.backend === "webgpu"
      ? [await runOnGpu(entry, literals, request.deviceCount)]
      : await (await clientFor(request.backend, request.deviceCount)).run(entry, Array.from({ length: request.deviceCount }, () => literals), { replicas: request.deviceCount });
    const arrays = results.map((r) => (r.shape.kind === "tuple" ? r.elements : [r]));
    return { ok: true, printed: arrays.map((vs) => vs.map(printResult)), npz: resultsNpz(arrays) };
  } catch (e) {
    return { ok: false, diagnostics: diagnosticsOf(e) };
  }
}

/**
 * The webgpu backend runs in this worker, on the GPU the browser gives it (navigator.gpu):
 * one device, since its runtime clients are not written yet (docs/backends.md).
 */
async function runOnGpu(entry: Computation, literals: readonly Literal[], deviceCount: number): Promise<Literal> {
  if (deviceCount !== 1) throw new ArgumentError(`the webgpu backend runs on one device here, not ${deviceCount}`);
  const executable = await compile(entry, { backend: "webgpu" });
  try {
    return await executable.run(literals);
  } finally {
    executable.delete();
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
