// The arrays surface: .npy and .npz files, valid ones of every element type with
// random element bytes, then mutated (header fields, dtypes and shapes at the edges,
// zip sizes, offsets and methods, flipped, cut and repeated bytes), read with
// Literal.fromNpy and readNpz. Every failure must be a typed error (NpyError, ZipError,
// InflateError, ResourceError: the memory budget), and every file that reads must
// write back and read again to the same bytes.

import { deflateRawSync } from "node:zlib";
import { crc32 } from "../../src/types/inflate.js";
import { ELEMENT_TYPES, type ElementType } from "../../src/types/element_type.js";
import { Literal } from "../../src/types/literal.js";
import { numpyDescr } from "../../src/types/npy.js";
import { readNpz, writeNpz } from "../../src/types/npz.js";
import { writeZip } from "../../src/types/zip.js";
import { arrayShape } from "../../src/types/shape.js";
import { failureOutcome, type Outcome, type SavedInput } from "./check_input.js";
import { Random } from "./mutate.js";
import { programRandom } from "./builder.js";

/** Every element type numpy or ml_dtypes can name. */
const NPY_TYPES: readonly ElementType[] = (Object.keys(ELEMENT_TYPES) as ElementType[]).filter((t) => {
  try {
    numpyDescr(t);
    return true;
  } catch {
    return false;
  }
});

const DESCRS = ["<f4", ">f8", "|b1", "<V2", "|V1", "<c16", ">c8", "<U4", "|O", "<f16", "<i16", "=f4", "<M8", "bfloat16", "float8_e4m3fn", "<f2", "|u1", "<i0", "<f99999999999999999999", "", "f4", ">V3"];
const SHAPES = ["(4294967296, 4294967296)", "(-1,)", "(1e3,)", "()", "(0,)", "(99999999999999999999,)", "(2,3,)", "(3)", "(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)", "(1L,)", "(0, 4294967296)", "(3,,)", "(,)"];
const ORDERS = ["True", "False", "1", "None", "true"];
const EDGE_U32 = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 65535, 65536];

/** A valid .npy file of a random shape and type, its element bytes random, and the array of zeros of that shape. */
function randomNpy(rng: Random): { file: Uint8Array; zeros: Literal } {
  const t = rng.pick(NPY_TYPES);
  const dims = Array.from({ length: rng.int(4) }, () => rng.int(5));
  const zeros = Literal.zeros(arrayShape(t, dims));
  const file = zeros.toNpy();
  const dataBytes = dims.reduce((a, c) => a * c, 1) * ELEMENT_TYPES[t].storageBytes;
  for (let i = file.length - dataBytes; i < file.length; i++) file[i] = rng.int(256);
  return { file, zeros };
}

/** `zip` (as writeZip writes it: stored entries) with every entry deflated, as np.savez_compressed writes. */
export function deflated(zip: Uint8Array): Uint8Array {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const entries: { name: Uint8Array; data: Uint8Array }[] = [];
  for (let at = 0; v.getUint32(at, true) === 0x04034b50;) {
    const nameLength = v.getUint16(at + 26, true);
    const size = v.getUint32(at + 18, true);
    const name = zip.slice(at + 30, at + 30 + nameLength);
    entries.push({ name, data: zip.slice(at + 30 + nameLength, at + 30 + nameLength + size) });
    at += 30 + nameLength + size;
  }
  const parts = entries.map((e) => ({ ...e, packed: new Uint8Array(deflateRawSync(e.data)) }));
  const local = parts.reduce((s, p) => s + 30 + p.name.length + p.packed.length, 0);
  const central = parts.reduce((s, p) => s + 46 + p.name.length, 0);
  const out = new Uint8Array(local + central + 22);
  const o = new DataView(out.buffer);
  const fields = (at: number, p: (typeof parts)[number]): void => {
    o.setUint16(at, 20, true);
    o.setUint16(at + 4, 8, true);
    o.setUint16(at + 8, 0x21, true);
    o.setUint32(at + 10, crc32(p.data), true);
    o.setUint32(at + 14, p.packed.length, true);
    o.setUint32(at + 18, p.data.length, true);
    o.setUint16(at + 22, p.name.length, true);
  };
  let at = 0;
  const offsets: number[] = [];
  for (const p of parts) {
    offsets.push(at);
    o.setUint32(at, 0x04034b50, true);
    fields(at + 4, p);
    out.set(p.name, at + 30);
    out.set(p.packed, at + 30 + p.name.length);
    at += 30 + p.name.length + p.packed.length;
  }
  parts.forEach((p, i) => {
    o.setUint32(at, 0x02014b50, true);
    o.setUint16(at + 4, 20, true);
    fields(at + 6, p);
    o.setUint32(at + 42, offsets[i]!, true);
    out.set(p.name, at + 46);
    at += 46 + p.name.length;
  });
  o.setUint32(at, 0x06054b50, true);
  o.setUint16(at + 8, parts.length, true);
  o.setUint16(at + 10, parts.length, true);
  o.setUint32(at + 12, central, true);
  o.setUint32(at + 16, local, true);
  return out;
}

const replaceBytes = (file: Uint8Array, start: number, end: number, piece: Uint8Array): Uint8Array => {
  const out = new Uint8Array(file.length - (end - start) + piece.length);
  out.set(file.subarray(0, start));
  out.set(piece, start);
  out.set(file.subarray(end), start + piece.length);
  return out;
};

/** An .npy header's field replaced (descr, shape or fortran_order), when the file has one. */
function headerEdit(file: Uint8Array, rng: Random): Uint8Array {
  const text = new TextDecoder("latin1").decode(file.subarray(0, Math.min(file.length, 4096)));
  const which = rng.pick([
    [/'descr': '[^']*'/, () => `'descr': '${rng.pick(DESCRS)}'`],
    [/'shape': \([^)]*\)/, () => `'shape': ${rng.pick(SHAPES)}`],
    [/'fortran_order': \w+/, () => `'fortran_order': ${rng.pick(ORDERS)}`],
  ] as const);
  const m = which[0].exec(text);
  if (m === null) return file;
  return replaceBytes(file, m.index, m.index + m[0].length, new TextEncoder().encode(which[1]()));
}

/** A 16- or 32-bit field at a random place set to an edge value (zip sizes, offsets, counts; the .npy header length). */
function edgeField(file: Uint8Array, rng: Random): Uint8Array {
  if (file.length < 4) return file;
  const out = file.slice();
  const v = new DataView(out.buffer);
  const at = rng.int(out.length - 3);
  if (rng.next() < 0.5) v.setUint16(at, rng.pick(EDGE_U32) & 0xffff, true);
  else v.setUint32(at, rng.pick([...EDGE_U32, file.length, file.length + 1]) >>> 0, true);
  return out;
}

const MUTATIONS: readonly ((file: Uint8Array, rng: Random) => Uint8Array)[] = [
  headerEdit, headerEdit, edgeField, edgeField,
  (file, rng) => {
    const out = file.slice();
    if (out.length > 0) out[rng.int(out.length)] = rng.next() < 0.5 ? rng.pick([0, 0xff, 0x7f, 0x80]) : rng.int(256);
    return out;
  },
  (file, rng) => file.slice(0, rng.int(file.length + 1)),
  (file, rng) => {
    const at = rng.int(file.length + 1);
    const piece = file.slice(at, at + 1 + rng.int(64));
    return replaceBytes(file, at, at, Uint8Array.from({ length: piece.length * (1 + rng.int(3)) }, (_, i) => piece[i % piece.length]!));
  },
  (file, rng) => {
    const at = rng.int(file.length + 1);
    return replaceBytes(file, at, Math.min(file.length, at + rng.int(16)), Uint8Array.from({ length: rng.int(16) }, () => rng.int(256)));
  },
];

export interface ArraysInput {
  readonly kind: "npy" | "npz";
  readonly bytes: Uint8Array;
}

/** Mutated .npy bytes: one to three mutations. */
function mutated(file: Uint8Array, rng: Random): Uint8Array {
  let out = file;
  for (let n = 1 + rng.int(3); n > 0; n--) out = rng.pick(MUTATIONS)(out, rng);
  return out;
}

/**
 * Input `index` of the run with `seed`: an .npy file, mutated nine times in ten; or an
 * .npz archive (stored or deflated) of a few such files, each mutated half the time,
 * the archive's own bytes mutated too four times in ten.
 */
export function arraysInputOf(seed: number, index: number): ArraysInput {
  const rng = programRandom(seed, index);
  if (rng.next() < 0.5) {
    const file = randomNpy(rng).file;
    return { kind: "npy", bytes: rng.next() < 0.9 ? mutated(file, rng) : file };
  }
  const entries = Array.from({ length: rng.int(4) }, (_, i) => {
    const file = randomNpy(rng).file;
    return { name: rng.next() < 0.05 ? rng.pick(["", "../x.npy", "a.txt", `a${i}`, "a0.npy"]) : `a${i}.npy`, data: rng.next() < 0.5 ? mutated(file, rng) : file };
  });
  let zip = writeZip(entries);
  if (rng.next() < 0.4) zip = deflated(zip);
  return { kind: "npz", bytes: rng.next() < 0.4 ? rng.pick(MUTATIONS)(zip, rng) : zip };
}

export function arraysInput(seed: number, index: number): SavedInput {
  const input = arraysInputOf(seed, index);
  return { name: `input-${index}`, files: [[input.kind, input.bytes]] };
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Reads input `index`; what reads must write back and read again to the same arrays, byte for byte. */
export function arraysOutcome(seed: number, index: number): Outcome {
  let phase = "make";
  try {
    const input = arraysInputOf(seed, index);
    phase = "read";
    if (input.kind === "npy") {
      const once = Literal.fromNpy(input.bytes, { name: "fuzz.npy" }).toNpy();
      phase = "write back";
      const again = Literal.fromNpy(once, { name: "rewritten.npy" }).toNpy();
      if (!sameBytes(once, again)) return { status: "mismatch", phase, message: "the .npy written from a read file reads back differently", input: arraysInput(seed, index) };
    } else {
      const arrays = readNpz(input.bytes, { name: "fuzz.npz" });
      phase = "write back";
      const back = readNpz(writeNpz(arrays), { name: "rewritten.npz" });
      const names = [...arrays.keys()];
      if (names.join("\n") !== [...back.keys()].join("\n") || names.some((n) => !sameBytes(arrays.get(n)!.toNpy(), back.get(n)!.toNpy()))) {
        return { status: "mismatch", phase, message: "writeNpz of a read archive reads back to other arrays", input: arraysInput(seed, index) };
      }
    }
    return { status: "ok" };
  } catch (e) {
    return failureOutcome(e, phase);
  }
}
