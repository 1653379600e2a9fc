// Arrays in and out: numpy's .npy and .npz files (np.save, np.savez, np.load, through the
// readers and writers of src/types) and safetensors, the format model weights are
// published in. Everything works on bytes (a Uint8Array or an ArrayBuffer), so the same
// calls serve Node (`fs.readFileSync`) and the browser (`await (await fetch(url)).arrayBuffer()`).
//
// safetensors (huggingface/safetensors): an 8-byte little-endian header length N, N bytes
// of JSON ({ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__": {...} }),
// then the tensors' bytes, row-major and little-endian, offsets relative to the end of
// the header.

import { readNpz, writeNpz } from "../types/npz.js";
import { Literal, storagePerElement, storageView } from "../types/literal.js";
import { ELEMENT_TYPES, type ElementType } from "../types/element_type.js";
import { arrayShape, elementCount } from "../types/shape.js";
import { Array as ConcreteArray, arrayFromLiteral, asArrayValue, type ArrayLike } from "./core.js";
import { DTYPES } from "./dtypes.js";
import { FrontendError } from "./errors.js";

type Bytes = Uint8Array | ArrayBuffer;
const asBytes = (b: Bytes, where: string): Uint8Array => {
  if (b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  throw new FrontendError(`${where}: needs the file's bytes (a Uint8Array or an ArrayBuffer)`, where, "file");
};

/** The host literal of an array (a concrete one: saving reads values). */
function literalOf(x: ArrayLike, where: string): Literal {
  const a = asArrayValue(x, undefined, where);
  if (!(a instanceof ConcreteArray)) throw new FrontendError(`${where}: the array is traced; save concrete arrays`, where, "arr");
  return a.toLiteral();
}

/** np.save: the bytes of a .npy file holding `arr`. */
export function save(arr: ArrayLike): Uint8Array {
  return literalOf(arr, "save").toNpy();
}

/** np.savez: the bytes of an .npz archive of the arrays, by name (`{ w, b }`). */
export function savez(arrays: Readonly<Record<string, ArrayLike>>): Uint8Array {
  return writeNpz(Object.entries(arrays).map(([name, a]) => [name, literalOf(a, "savez")] as const));
}

/** np.load: the array of a .npy file, or the arrays of an .npz archive as an object by name. */
export function load(file: Bytes): ConcreteArray | Record<string, ConcreteArray> {
  const bytes = asBytes(file, "load");
  // A zip archive starts with "PK\x03\x04" (an empty one with "PK\x05\x06").
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) {
    const out: Record<string, ConcreteArray> = {};
    for (const [name, lit] of readNpz(bytes)) out[name] = arrayFromLiteral(lit);
    return out;
  }
  return arrayFromLiteral(Literal.fromNpy(bytes));
}

/** safetensors' dtype names (F8 and the other exotic ones are left out: the front end has no dtype for them). */
const SAFETENSORS_TYPES: Readonly<Record<string, ElementType>> = {
  BOOL: DTYPES.bool, U8: DTYPES.uint8, I8: DTYPES.int8, U16: DTYPES.uint16, I16: DTYPES.int16, U32: DTYPES.uint32, I32: DTYPES.int32,
  U64: DTYPES.uint64, I64: DTYPES.int64, F16: DTYPES.float16, BF16: DTYPES.bfloat16, F32: DTYPES.float32, F64: DTYPES.float64,
  C64: DTYPES.complex64,
};
const SAFETENSORS_NAME = new Map(Object.entries(SAFETENSORS_TYPES).map(([name, t]) => [t, name]));
const elementBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;
/** The alignment a typed-array view of `t` needs (a complex element is two of its component). */
const alignment = (t: ElementType): number => elementBytes(t) / storagePerElement(t);
// Typed arrays read the host's byte order; safetensors is little-endian, as every host JS runs on in practice.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

interface TensorEntry {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data_offsets: readonly [number, number];
}

/**
 * The tensors of a safetensors file, as an object of arrays by name (the header's
 * "__metadata__" is left out). Each tensor's bytes are read in place where they are
 * aligned for their type and copied once otherwise, then copied to the device.
 */
export function loadSafetensors(file: Bytes): Record<string, ConcreteArray> {
  const bytes = asBytes(file, "safetensors");
  const fail = (why: string): never => { throw new FrontendError(`safetensors: ${why}`, "safetensors", "file"); };
  if (bytes.length < 8) fail(`the file has ${bytes.length} bytes, fewer than the 8 of its header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > bytes.length - 8) fail(`the header length ${headerLength} runs past the end of the file (${bytes.length} bytes)`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  } catch (e) {
    return fail(`the header is not JSON (${(e as Error).message})`);
  }
  if (!LITTLE_ENDIAN) fail("this host is big-endian; the tensors are little-endian");
  const dataStart = 8 + headerLength;
  const out: Record<string, ConcreteArray> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const entry = value as TensorEntry;
    const type = SAFETENSORS_TYPES[entry?.dtype];
    if (type === undefined) fail(`tensor ${name}: dtype ${String(entry?.dtype)} is not supported (known: ${Object.keys(SAFETENSORS_TYPES).join(", ")})`);
    const shape = entry.shape;
    if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) fail(`tensor ${name}: bad shape ${JSON.stringify(shape)}`);
    const count = elementCount(shape);
    const [begin, end] = entry.data_offsets ?? [];
    const size = count * elementBytes(type!);
    if (!Number.isInteger(begin) || end! - begin! !== size || dataStart + end! > bytes.length) {
      fail(`tensor ${name}: data_offsets ${JSON.stringify(entry.data_offsets)} do not hold ${count} ${entry.dtype} elements within the file`);
    }
    const at = bytes.byteOffset + dataStart + begin!;
    // A view where the bytes are aligned for the typed array; otherwise one copy into a fresh buffer.
    const aligned = at % alignment(type!) === 0;
    const source = aligned ? bytes.buffer : bytes.slice(dataStart + begin!, dataStart + end!).buffer;
    out[name] = arrayFromLiteral(Literal.fromStorage(arrayShape(type!, shape), storageView(type!, source, aligned ? at : 0, count)));
  }
  return out;
}

/** A safetensors file of the arrays, by name (tensors in name order, packed; `metadata` strings in "__metadata__"). */
export function saveSafetensors(arrays: Readonly<Record<string, ArrayLike>>, metadata?: Readonly<Record<string, string>>): Uint8Array {
  const names = Object.keys(arrays).sort();
  const literals = names.map((n) => literalOf(arrays[n]!, "safetensors"));
  const header: Record<string, unknown> = metadata === undefined ? {} : { __metadata__: metadata };
  let offset = 0;
  const parts = literals.map((lit, i) => {
    const shape = lit.arrayShape;
    const dtype = SAFETENSORS_NAME.get(shape.elementType);
    if (dtype === undefined) throw new FrontendError(`safetensors: ${names[i]} has element type ${shape.elementType}, which safetensors has no name for`, "safetensors", "arrays");
    const data = lit.data;
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    header[names[i]!] = { dtype, shape: [...shape.dimensions], data_offsets: [offset, offset + raw.length] };
    offset += raw.length;
    return raw;
  });
  // The header is padded with spaces to a multiple of 8 bytes, as the reference writer does, so the tensors stay aligned.
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) json = new TextEncoder().encode(JSON.stringify(header) + " ".repeat(padded - json.length));
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const raw of parts) {
    out.set(raw, at);
    at += raw.length;
  }
  return out;
}
