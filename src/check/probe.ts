// `interpreter.probe` and `check.expect_serialized_eq`, as stablehlo-translate --interpret
// --probe-output-dir runs them: each time a probe runs it serializes its operand to a
// .npy file in the probe directory and records it in the directory's index.csv
// (probe id, file, type); expect_serialized_eq reads the `iter`-th value serialized for a
// probe id back and compares it exactly with its operand. The directory is an interface
// so the runner works in a browser: in memory by default, files on disk from the CLI.

import type { CustomCallTarget } from "../interpreter/context.js";
import { parseAttributeDictionary } from "../interpreter/attribute_dictionary.js";
import { ExecutionError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { shapeToString } from "../types/shape.js";
import { expectEq, type CheckOutcome } from "./compare.js";

export const PROBE = "interpreter.probe";
export const EXPECT_SERIALIZED_EQ = "check.expect_serialized_eq";

/** Where probes write their files (names are plain file names, no directories). */
export interface ProbeDirectory {
  write(name: string, bytes: Uint8Array): void;
  /** The file's bytes; undefined when there is none. */
  read(name: string): Uint8Array | undefined;
}

/** A probe directory held in memory. */
export function memoryProbeDirectory(): ProbeDirectory {
  const files = new Map<string, Uint8Array>();
  return { write: (name, bytes) => void files.set(name, bytes.slice()), read: (name) => files.get(name) };
}

/** The directory's index file: one line per serialized value, `"probe id",file,type`. */
export const PROBE_INDEX = "index.csv";

/** A probe id as a file name: characters other than letters, digits, '-' and '_' become '_'. */
const sanitize = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, "_");

function probeId(backendConfig: string, op: string): string {
  const id = parseAttributeDictionary(backendConfig, op).get("probe_id");
  if (typeof id !== "string") throw new ExecutionError(`${op}: probe_id must be a string attribute`);
  return id;
}

interface IndexEntry {
  readonly id: string;
  readonly type: string;
  readonly file: string;
}

function readIndex(dir: ProbeDirectory): IndexEntry[] {
  const bytes = dir.read(PROBE_INDEX);
  if (bytes === undefined) return [];
  return new TextDecoder().decode(bytes).split("\n").filter((l) => l !== "").map((line) => {
    // The id is JSON-quoted (it may hold commas), the file name holds none; the type is the rest.
    const m = /^("(?:[^"\\]|\\.)*"),([^,]*),(.*)$/.exec(line);
    if (m === null) throw new ExecutionError(`${PROBE}: malformed ${PROBE_INDEX} line '${line}'`);
    return { id: JSON.parse(m[1]!) as string, file: m[2]!, type: m[3]! };
  });
}

/** The two targets over one probe directory. `record` receives each comparison's outcome. */
export function probeTargets(dir: ProbeDirectory, record: (outcome: CheckOutcome) => void): [string, CustomCallTarget][] {
  const probe: CustomCallTarget = (operands, _shape, backendConfig) => {
    const value = operands[0];
    if (operands.length !== 1 || value === undefined || value.shape.kind !== "array") throw new ExecutionError(`${PROBE}: expects one array operand`);
    const id = probeId(backendConfig, PROBE);
    const index = readIndex(dir);
    const iteration = index.filter((e) => e.id === id).length;
    const file = `${sanitize(id)}_${iteration}.npy`;
    dir.write(file, value.toNpy());
    const line = `${JSON.stringify(id)},${file},${shapeToString(value.shape)}\n`;
    const before = dir.read(PROBE_INDEX) ?? new Uint8Array();
    const added = new TextEncoder().encode(line);
    const next = new Uint8Array(before.length + added.length);
    next.set(before);
    next.set(added, before.length);
    dir.write(PROBE_INDEX, next);
    return value;
  };
  const expect: CustomCallTarget = (operands, _shape, backendConfig) => {
    const expected = operands[0];
    if (operands.length !== 1 || expected === undefined || expected.shape.kind !== "array") throw new ExecutionError(`${EXPECT_SERIALIZED_EQ}: expects one array operand`);
    const attrs = parseAttributeDictionary(backendConfig, EXPECT_SERIALIZED_EQ);
    const id = probeId(backendConfig, EXPECT_SERIALIZED_EQ);
    const iter = attrs.get("iter") ?? 0;
    if (typeof iter !== "number" || !Number.isInteger(iter) || iter < 0) throw new ExecutionError(`${EXPECT_SERIALIZED_EQ}: iter must be a non-negative integer`);
    const entry = readIndex(dir).filter((e) => e.id === id)[iter];
    const bytes = entry === undefined ? undefined : dir.read(entry.file);
    if (entry === undefined || bytes === undefined) {
      record({ ok: false, message: `no value of probe "${id}" was serialized at iteration ${iter}` });
    } else {
      record(expectEq(Literal.fromNpy(bytes, { elementType: expected.elementType, name: entry.file }), expected));
    }
    return Literal.tuple([]);
  };
  return [[PROBE, probe], [EXPECT_SERIALIZED_EQ, expect]];
}
