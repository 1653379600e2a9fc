// `.npz` files: a zip of `.npy` files, one per named array (`np.savez`). Reading takes
// stored and deflated entries (`np.savez_compressed`); writing stores, as `np.savez` does.

import type { ElementType } from "./element_type.js";
import { Literal } from "./literal.js";
import { NpyError } from "./npy.js";
import { readZip, writeZip } from "./zip.js";
import { encodeUtf8 } from "./utf8.js";

export interface NpzReadOptions {
  /** The element type of each array whose file cannot say it (ml_dtypes' 'V1'), by name (without `.npy`). */
  readonly elementTypes?: Readonly<Record<string, ElementType>>;
  /** Names the archive in error messages. */
  readonly name?: string;
}

/** The arrays of an .npz archive, by name (`x` for the entry `x.npy`), in archive order. */
export function readNpz(archive: Uint8Array, options: NpzReadOptions = {}): Map<string, Literal> {
  const archiveName = options.name ?? "<npz>";
  const out = new Map<string, Literal>();
  for (const entry of readZip(archive, archiveName)) {
    if (!entry.name.endsWith(".npy")) throw new NpyError(`${archiveName}: ${entry.name} is not a .npy entry`);
    const name = entry.name.slice(0, -4);
    const elementType = options.elementTypes?.[name];
    out.set(name, Literal.fromNpy(entry.data, { name: `${archiveName}:${entry.name}`, ...(elementType !== undefined ? { elementType } : {}) }));
  }
  return out;
}

/** What a misused argument was, for messages. */
const describe = (x: unknown): string =>
  x === null ? "null" : Array.isArray(x) ? `an array of ${x.length}` : x instanceof Literal ? `a ${x.shape.kind} literal` : typeof x;

/**
 * A checked entry name: the name of a file in the archive, so not empty, "." or "..",
 * without path separators or control characters, and short enough for a zip header.
 */
function entryName(name: unknown, i: number): string {
  if (typeof name !== "string") throw new NpyError(`writeNpz: the name of array ${i} must be a string, got ${describe(name)}`);
  const bad = name === "" || name === "." || name === ".." ? "is not a file name" : /[/\\]/.test(name) ? "contains a path separator"
    : /[\u0000-\u001f\u007f]/.test(name) ? "contains a control character" : encodeUtf8(name).length > 0xffff - 4 ? "is longer than a zip entry name may be" : undefined;
  if (bad !== undefined) throw new NpyError(`writeNpz: the name of array ${i} ${JSON.stringify(name)} ${bad}`);
  return name;
}

/**
 * An .npz archive of array literals, given as [name, Literal] pairs (an array of pairs,
 * a Map) or as an object of literals by name (np.savez's keywords). Names as `np.savez`
 * gives unnamed arrays are `arr_0`, `arr_1`, ...; a misused argument, a bad or repeated
 * name or a literal that is not an array is an NpyError naming it.
 */
export function writeNpz(arrays: Iterable<readonly [string, Literal]> | Readonly<Record<string, Literal>>): Uint8Array {
  const given: unknown = arrays;
  if (given === null || typeof given !== "object") {
    throw new NpyError(`writeNpz: arrays must be [name, Literal] pairs (an array of pairs, a Map) or an object of Literals by name, got ${describe(given)}`);
  }
  const items: unknown[] = Symbol.iterator in given ? [...(given as Iterable<unknown>)] : Object.entries(given);
  const seen = new Set<string>();
  const entries = items.map((item, i) => {
    if (!Array.isArray(item) || item.length !== 2) throw new NpyError(`writeNpz: array ${i} must be a [name, Literal] pair, got ${describe(item)}`);
    const name = entryName(item[0], i);
    const lit: unknown = item[1];
    if (!(lit instanceof Literal) || lit.shape.kind !== "array") throw new NpyError(`writeNpz: ${name} must be an array Literal, got ${describe(lit)}`);
    if (seen.has(name)) throw new NpyError(`writeNpz: two arrays are named ${name}`);
    seen.add(name);
    return { name: `${name}.npy`, data: lit.toNpy() };
  });
  return writeZip(entries);
}
