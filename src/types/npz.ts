// `.npz` files: a zip of `.npy` files, one per named array (`np.savez`). Reading takes
// stored and deflated entries (`np.savez_compressed`); writing stores, as `np.savez` does.

import type { ElementType } from "./element_type.js";
import { Literal } from "./literal.js";
import { NpyError } from "./npy.js";
import { readZip, writeZip } from "./zip.js";

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

/** An .npz archive of array literals; names as `np.savez` gives them are `arr_0`, `arr_1`, ... */
export function writeNpz(arrays: Iterable<readonly [string, Literal]>): Uint8Array {
  const entries = [...arrays].map(([name, lit]) => ({ name: `${name}.npy`, data: lit.toNpy() }));
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.name)) throw new NpyError(`writeNpz: two arrays are named ${e.name.slice(0, -4)}`);
    seen.add(e.name);
  }
  return writeZip(entries);
}
