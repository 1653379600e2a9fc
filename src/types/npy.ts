// The NumPy `.npy` format (numpy/lib/format.py, "NPY format" spec): magic "\x93NUMPY",
// a version (1.0: 2-byte header length; 2.0 and 3.0: 4-byte), then a Python dict
// literal `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with
// spaces to a multiple of 64 bytes and ended by '\n', then the raw elements.
//
// Element types. numpy's own: b1 (bool), i1..i8, u1..u8, f2/f4/f8, c8/c16, in any byte
// order ('<', '>', '|'; '=' is not written by numpy into files). ml_dtypes' types
// (bfloat16, the float8 family, int4 ...) have no numpy type code: numpy writes their
// `dtype.str`, a void type of the item size, `'<V2'` for bfloat16 and `'<V1'` for the
// one-byte types (older ml_dtypes wrote `'<f1'` for float8_e5m2). So on reading,
//   - 'V2' is bf16 unless the caller names another two-byte type (the only 2-byte
//     ml_dtype is bfloat16; keras assumes the same),
//   - 'V1' needs the caller to name the type (`elementType`): the byte alone does not
//     say which of the eleven one-byte ml_dtypes it is,
//   - 'f1' is f8e5m2, and a descr that names an ml_dtype (`'bfloat16'`,
//     `'float8_e4m3fn'`, as `str(dtype)` gives and some writers put there) is that type.
// Writing produces exactly what numpy writes for the type, so `np.load` reads every file
// (an ml_dtypes array comes back as void, as numpy's own save/load round trip does; view
// it with `.view(ml_dtypes.bfloat16)`).
//
// This module only moves bytes: it yields little-endian, row-major element bytes in a
// fresh buffer; `Literal.fromNpy` / `toNpy` wrap them (literal.ts), npz.ts zips them.

import { ELEMENT_TYPES, type ElementType } from "./element_type.js";
import { ShapeError, XlaError } from "./errors.js";
import { checkBytes } from "./resource.js";
import { decodeUtf8 } from "./utf8.js";
import { elementCount } from "./shape.js";

/** A .npy or .npz file that is malformed, truncated, or holds something xlats cannot represent. */
export class NpyError extends XlaError {
  override name = "NpyError";
}

/** numpy's type codes (without byte order) for the element types numpy has natively. */
const NUMPY_CODES: Partial<Record<ElementType, string>> = {
  pred: "b1", s8: "i1", s16: "i2", s32: "i4", s64: "i8", u8: "u1", u16: "u2", u32: "u4", u64: "u8",
  f16: "f2", f32: "f4", f64: "f8", c64: "c8", c128: "c16",
  // numpy's intp; listed after s64, so an `<i8` file reads back as s64.
  index: "i8",
};

/** ml_dtypes' names (numpy `str(dtype)`), for the types numpy itself lacks. */
export const ML_DTYPES_NAMES: Partial<Record<ElementType, string>> = {
  bf16: "bfloat16", s2: "int2", s4: "int4", u2: "uint2", u4: "uint4",
  f8e4m3fn: "float8_e4m3fn", f8e5m2: "float8_e5m2", f8e4m3fnuz: "float8_e4m3fnuz", f8e5m2fnuz: "float8_e5m2fnuz",
  f8e4m3b11fnuz: "float8_e4m3b11fnuz", f8e3m4: "float8_e3m4", f8e4m3: "float8_e4m3", f8e8m0fnu: "float8_e8m0fnu",
  f6e2m3fn: "float6_e2m3fn", f6e3m2fn: "float6_e3m2fn", f4e2m1fn: "float4_e2m1fn",
};

/** numpy's dtype name of an element type (`float32`, `bool`, `bfloat16`), as its repr prints it. */
export function numpyDtypeName(t: ElementType): string {
  const ml = ML_DTYPES_NAMES[t];
  if (ml !== undefined) return ml;
  if (t === "pred") return "bool";
  const info = ELEMENT_TYPES[t];
  const family = info.kind === "signed" ? "int" : info.kind === "unsigned" ? "uint" : info.kind === "complex" ? "complex" : "float";
  return `${family}${info.bitWidth}`;
}

/**
 * The element type `name` names: an XLA name (`f32`, `s8`, `pred`) or numpy's dtype name
 * for it (`float32`, `int8`, `bool`, and ml_dtypes' `bfloat16`, `float8_e4m3fn`, ...).
 * Otherwise a ShapeError naming `what` (the argument it was given as).
 */
export function elementTypeNamed(name: unknown, what: string): ElementType {
  if (typeof name === "string" && Object.hasOwn(ELEMENT_TYPES, name)) return name as ElementType;
  // MLIR's index is not a numpy type (numpy's int64 is s64).
  const types = (Object.keys(ELEMENT_TYPES) as ElementType[]).filter((t) => t !== "index");
  const fromNumpy = types.find((t) => numpyDtypeName(t) === name);
  if (fromNumpy !== undefined) return fromNumpy;
  throw new ShapeError(`${what}: unknown element type ${JSON.stringify(name)} (XLA's names, e.g. ${types.slice(0, 4).join(", ")}, or numpy's, e.g. float32, int32, bool)`, what, "elementType");
}

/** The `descr` numpy writes for an element type. */
export function numpyDescr(t: ElementType): string {
  const code = NUMPY_CODES[t];
  if (code === undefined) return `<V${ELEMENT_TYPES[t].storageBytes}`;
  return `${code === "b1" || code === "i1" || code === "u1" ? "|" : "<"}${code}`;
}

/** A decoded array: element type, dimensions, and little-endian row-major element bytes (own buffer). */
export interface NpyArray {
  readonly elementType: ElementType;
  readonly dimensions: readonly number[];
  readonly bytes: Uint8Array;
}

export interface NpyReadOptions {
  /**
   * The element type to read when the file cannot say it ('V1'/'V2', ml_dtypes' void
   * descr) and, when the file does say it, the type it must have (a mismatch is an NpyError).
   */
  readonly elementType?: ElementType;
  /** Names the file in error messages. */
  readonly name?: string;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

interface Descr {
  readonly elementType: ElementType | undefined;
  /** Bytes per element in the file. */
  readonly itemSize: number;
  readonly bigEndian: boolean;
}

/** Reads a descr string; `elementType` undefined means "a void type of itemSize bytes". */
function parseDescr(descr: string, fail: (m: string) => NpyError): Descr {
  for (const [t, name] of Object.entries(ML_DTYPES_NAMES) as [ElementType, string][]) {
    if (descr === name) return { elementType: t, itemSize: ELEMENT_TYPES[t].storageBytes, bigEndian: false };
  }
  const m = /^([<>|=]?)([a-zA-Z])(\d+)$/.exec(descr);
  if (m === null) throw fail(`unsupported dtype '${descr}' (xlats reads bool, integer, float and complex arrays)`);
  const order = m[1]!;
  const kind = m[2]!;
  const itemSize = Number(m[3]);
  if (order === "=") throw fail(`dtype '${descr}' has native byte order, which a file cannot have`);
  const bigEndian = order === ">";
  if (kind === "V") return { elementType: undefined, itemSize, bigEndian };
  if (kind === "f" && itemSize === 1) return { elementType: "f8e5m2", itemSize, bigEndian };
  const code = `${kind}${itemSize}`;
  for (const [t, c] of Object.entries(NUMPY_CODES) as [ElementType, string][]) {
    if (c === code) return { elementType: t, itemSize, bigEndian };
  }
  throw fail(`unsupported dtype '${descr}'${kind === "f" && itemSize > 8 ? " (long double has no xlats type)" : ""}`);
}

/** The header dict: only the three keys numpy writes, each value in the form numpy's repr gives it. */
function parseHeader(text: string, fail: (m: string) => NpyError): { descr: string; fortranOrder: boolean; shape: number[] } {
  const body = /^\s*\{(.*)\}\s*$/s.exec(text);
  if (body === null) throw fail(`header is not a dict: ${JSON.stringify(text.slice(0, 80))}`);
  const entry = /\s*'([a-z_]+)'\s*:\s*('[^']*'|True|False|\([^)]*\))\s*(,|$)/y;
  const fields = new Map<string, string>();
  const rest = body[1]!;
  entry.lastIndex = 0;
  while (entry.lastIndex < rest.length && rest.slice(entry.lastIndex).trim() !== "") {
    const at = entry.lastIndex;
    const m = entry.exec(rest);
    if (m === null) throw fail(`header dict is malformed near ${JSON.stringify(rest.slice(at, at + 30))}`);
    if (fields.has(m[1]!)) throw fail(`header repeats '${m[1]}'`);
    fields.set(m[1]!, m[2]!);
  }
  const keys = [...fields.keys()].sort().join(",");
  if (keys !== "descr,fortran_order,shape") throw fail(`header must have exactly the keys descr, fortran_order, shape; has ${keys || "none"}`);
  const descr = fields.get("descr")!;
  if (!descr.startsWith("'")) throw fail(`descr must be a string (structured dtypes are not supported), got ${descr}`);
  const order = fields.get("fortran_order")!;
  if (order !== "True" && order !== "False") throw fail(`fortran_order must be True or False, got ${order}`);
  const shapeText = fields.get("shape")!;
  const inner = shapeText.slice(1, -1).trim();
  const parts = inner === "" ? [] : inner.split(",").map((s) => s.trim());
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop(); // (3,)
  const shape = parts.map((p) => {
    if (!/^\d+L?$/.test(p)) throw fail(`shape ${shapeText} has a bad dimension '${p}'`);
    const d = Number(p.replace("L", ""));
    if (!Number.isSafeInteger(d)) throw fail(`shape ${shapeText} has a dimension too large`);
    return d;
  });
  if (parts.length === 1 && !/,\s*\)$/.test(shapeText) && inner !== "") throw fail(`shape ${shapeText} is not a tuple`);
  return { descr: descr.slice(1, -1), fortranOrder: order === "True", shape };
}

/** Decodes a .npy file. Errors (truncated, malformed, wrong type) are NpyErrors naming the file. */
export function decodeNpy(file: Uint8Array, options: NpyReadOptions = {}): NpyArray {
  const name = options.name ?? "<npy>";
  const fail = (m: string): NpyError => new NpyError(`${name}: ${m}`);
  if (file.length < 10 || MAGIC.some((b, i) => file[i] !== b)) {
    throw fail(file.length < 6 ? `truncated: ${file.length} bytes is shorter than the .npy magic` : "not a .npy file (no \\x93NUMPY magic)");
  }
  const major = file[6]!;
  if (major < 1 || major > 3) throw fail(`unsupported .npy version ${major}.${file[7]}`);
  const lenBytes = major === 1 ? 2 : 4;
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < 8 + lenBytes) throw fail("truncated in the header length");
  const headerLen = lenBytes === 2 ? view.getUint16(8, true) : view.getUint32(8, true);
  const dataStart = 8 + lenBytes + headerLen;
  if (file.length < dataStart) throw fail(`truncated: the header needs ${dataStart} bytes, the file has ${file.length}`);
  const headerBytes = file.subarray(8 + lenBytes, dataStart);
  // Versions 1 and 2 are latin-1, 3 is UTF-8; either way the dict numpy writes is ASCII.
  let headerText = "";
  if (major === 3) headerText = decodeUtf8(Array.from(headerBytes));
  else for (const b of headerBytes) headerText += String.fromCharCode(b);
  const header = parseHeader(headerText, fail);
  const descr = parseDescr(header.descr, fail);
  const wanted = options.elementType;
  let t = descr.elementType;
  if (t === undefined) {
    t = wanted ?? (descr.itemSize === 2 ? "bf16" : undefined);
    if (t === undefined) {
      throw fail(`dtype '${header.descr}' is an ml_dtypes type numpy saved without its name: say which ${descr.itemSize}-byte type it is`);
    }
    if (ELEMENT_TYPES[t].storageBytes !== descr.itemSize || ELEMENT_TYPES[t].kind === "complex") {
      throw fail(`dtype '${header.descr}' (${descr.itemSize}-byte void) cannot hold ${t}`);
    }
  } else if (wanted !== undefined && wanted !== t) {
    throw fail(`holds ${t} (dtype '${header.descr}'), expected ${wanted}`);
  }
  const count = elementCount(header.shape);
  const size = count * descr.itemSize;
  if (!Number.isSafeInteger(size)) throw fail(`shape (${header.shape.join(", ")}) is too large`);
  // The copy below holds the whole array: one more value, within the budget like any other.
  checkBytes(size, `${name}: shape (${header.shape.join(", ")}) of '${header.descr}'`, name);
  if (file.length - dataStart < size) {
    throw fail(`truncated: shape (${header.shape.join(", ")}) of '${header.descr}' needs ${size} data bytes, the file has ${file.length - dataStart}`);
  }
  if (file.length - dataStart > size) throw fail(`${file.length - dataStart - size} bytes after the array data`);
  let bytes: Uint8Array = file.slice(dataStart, dataStart + size);
  if (descr.bigEndian && descr.itemSize > 1) swapBytes(bytes, ELEMENT_TYPES[t].kind === "complex" ? descr.itemSize / 2 : descr.itemSize);
  if (header.fortranOrder && header.shape.length > 1) bytes = transposeBytes(bytes, header.shape, descr.itemSize, "fromFortran");
  normalizeNarrow(t, bytes);
  return { elementType: t, dimensions: header.shape, bytes };
}

/**
 * Values numpy stores in a whole byte that xlats keeps canonical: bool as 0/1, and the
 * sub-byte integers (ml_dtypes int4/int2: one value per byte) wrapped into range.
 */
function normalizeNarrow(t: ElementType, bytes: Uint8Array): void {
  if (t === "pred") {
    for (let i = 0; i < bytes.length; i++) bytes[i] = bytes[i] !== 0 ? 1 : 0;
    return;
  }
  const info = ELEMENT_TYPES[t];
  if ((info.kind === "signed" || info.kind === "unsigned") && info.bitWidth < 8) {
    const shift = 32 - info.bitWidth;
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = info.kind === "signed" ? ((bytes[i]! << shift) >> shift) & 0xff : (bytes[i]! << shift) >>> shift;
    }
  }
}

/** Reverses the bytes of each `width`-byte word in place (big <-> little endian). */
function swapBytes(bytes: Uint8Array, width: number): void {
  for (let i = 0; i < bytes.length; i += width) {
    for (let a = i, b = i + width - 1; a < b; a++, b--) {
      const x = bytes[a]!;
      bytes[a] = bytes[b]!;
      bytes[b] = x;
    }
  }
}

/**
 * Row-major <-> column-major copy of `dims`-shaped elements of `itemSize` bytes.
 * "fromFortran": the input is column-major, the output row-major; "toFortran" the reverse.
 */
function transposeBytes(src: Uint8Array, dims: readonly number[], itemSize: number, direction: "fromFortran" | "toFortran"): Uint8Array {
  const out = new Uint8Array(src.length);
  const rank = dims.length;
  const count = src.length / itemSize;
  if (count === 0) return out;
  // Column-major strides (in elements) of each dimension; the row-major walk below
  // visits elements in row-major order, keeping the column-major offset alongside.
  const fStride: number[] = [];
  let s = 1;
  for (let d = 0; d < rank; d++) {
    fStride.push(s);
    s *= dims[d]!;
  }
  const idx = new Array<number>(rank).fill(0);
  let f = 0;
  for (let c = 0; c < count; c++) {
    const [from, to] = direction === "fromFortran" ? [f, c] : [c, f];
    out.set(src.subarray(from * itemSize, from * itemSize + itemSize), to * itemSize);
    for (let d = rank - 1; d >= 0; d--) {
      idx[d]!++;
      f += fStride[d]!;
      if (idx[d]! < dims[d]!) break;
      f -= fStride[d]! * dims[d]!;
      idx[d] = 0;
    }
  }
  return out;
}

export interface NpyWriteOptions {
  /** Write the data column-major with `fortran_order: True` (numpy reads it back as the same array). */
  readonly fortranOrder?: boolean;
}

/**
 * Encodes row-major little-endian element bytes as a .npy file, byte for byte as
 * numpy's `np.save` writes it (version 1.0 unless the header needs 2.0; the dict with
 * keys sorted, room for the first dimension to grow, padded to 64 bytes).
 */
export function encodeNpy(array: NpyArray, options: NpyWriteOptions = {}): Uint8Array {
  const { elementType: t, dimensions: dims } = array;
  const fortran = options.fortranOrder === true && dims.length > 1;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
  let header = `{'descr': '${numpyDescr(t)}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': ${shape}, }`;
  // numpy leaves room for the growing axis (the first, or the last in Fortran order)
  // to reach 21 digits, so a file being appended to can be rewritten in place.
  if (dims.length > 0) header += " ".repeat(21 - String(dims[fortran ? dims.length - 1 : 0]).length);
  let version = 1;
  let prefix = 10;
  if (header.length + 1 + prefix > 0xffff) {
    version = 2;
    prefix = 12;
  }
  const total = Math.ceil((prefix + header.length + 1) / 64) * 64;
  header = header.padEnd(total - prefix - 1, " ") + "\n";
  const out = new Uint8Array(total + array.bytes.length);
  out.set(MAGIC);
  out[6] = version;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, header.length, true);
  else view.setUint32(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[prefix + i] = header.charCodeAt(i);
  let data = array.bytes;
  // ml_dtypes keeps int4/int2 values in the low bits of their byte (xlats sign-extends them).
  const info = ELEMENT_TYPES[t];
  if (info.kind === "signed" && info.bitWidth < 8) data = data.map((b) => b & ((1 << info.bitWidth) - 1));
  out.set(fortran ? transposeBytes(data, dims, info.storageBytes, "toFortran") : data, total);
  return out;
}
