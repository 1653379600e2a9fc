// Fixtures exported with JAX (tools/fixtures/*.py): NAME.mlir, a StableHLO program, and
// NAME.npz, its arguments (arg_0, arg_1, ...) with the values to compare against. The
// program runs on the interpreter: the fixtures check the executable specification.

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import type { ElementType } from "../../src/types/element_type.js";
import type { Literal } from "../../src/types/literal.js";
import { readNpz } from "../../src/types/npz.js";

/** test/fixtures/<topic> in the source tree (the compiled tests run from dist/test). */
export function fixtureDir(topic: string): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures", topic);
}

/** The names the fixture scripts give arrays of the result's type: XLA's output and a reference. */
const RESULT_NAMES = ["result", "xla", "reference"];

export interface JaxFixture {
  /** Runs the entry function on the interpreter; its first result. */
  readonly run: (args: readonly Literal[]) => Literal;
  readonly args: Literal[];
  /** The .npz's arrays by name (result, xla, reference: read as the result type where the file cannot say it). */
  readonly arrays: ReadonlyMap<string, Literal>;
}

export function loadJaxFixture(dir: string, name: string): JaxFixture {
  const module = parseStableHlo(readFileSync(path.join(dir, `${name}.mlir`), "utf8"), `${name}.mlir`);
  const entry = module.entry;
  const root = entry.root.shape;
  const resultShape = root.kind === "tuple" ? root.elements[0]! : root;
  const types: Record<string, ElementType> = {};
  entry.parameters.forEach((p, i) => { if (p.shape.kind === "array") types[`arg_${i}`] = p.shape.elementType; });
  if (resultShape.kind === "array") for (const n of RESULT_NAMES) types[n] = resultShape.elementType;
  const arrays = readNpz(new Uint8Array(readFileSync(path.join(dir, `${name}.npz`))), { name, elementTypes: types });
  const args = entry.parameters.map((_, i) => {
    const a = arrays.get(`arg_${i}`);
    if (a === undefined) throw new Error(`${name}.npz has no arg_${i}`);
    return a;
  });
  const run = (xs: readonly Literal[]): Literal => {
    const r = evaluate(entry, xs);
    return r.shape.kind === "tuple" ? r.elements[0]! : r;
  };
  return { run, args, arrays };
}
