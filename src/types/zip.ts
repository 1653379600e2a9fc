// The zip container of .npz files (PKWARE APPNOTE): reading stored and deflated entries
// through the central directory (with the zip64 records numpy's `savez` asks for with
// `force_zip64`), and writing stored entries as `np.savez` does.

import { XlaError } from "./errors.js";
import { crc32, inflateRaw } from "./inflate.js";
import { decodeUtf8, encodeUtf8 } from "./utf8.js";

/** A zip archive that is malformed, truncated, or uses a feature xlats does not read. */
export class ZipError extends XlaError {
  override name = "ZipError";
}

const EOCD = 0x06054b50;
const ZIP64_EOCD = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const U32_MAX = 0xffffffff;

export interface ZipEntry {
  readonly name: string;
  readonly data: Uint8Array;
}

/** Every file entry of a zip archive, decompressed and CRC-checked, in central-directory order. */
export function readZip(zip: Uint8Array, archiveName = "<zip>"): ZipEntry[] {
  const fail = (m: string): ZipError => new ZipError(`${archiveName}: ${m}`);
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const u16 = (at: number): number => view.getUint16(at, true);
  const u32 = (at: number): number => view.getUint32(at, true);
  const u64 = (at: number): number => {
    const v = view.getBigUint64(at, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw fail("a zip64 size or offset is too large");
    return Number(v);
  };
  // The end record is the last 22 bytes unless a comment (up to 65535 bytes) follows it.
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (u32(at) === EOCD && at + 22 + u16(at + 20) === zip.length) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw fail(zip.length < 22 ? `truncated: ${zip.length} bytes is too short for a zip archive` : "not a zip archive, or truncated (no end-of-central-directory record)");
  let count = u16(eocd + 10);
  let dirSize = u32(eocd + 12);
  let dirStart = u32(eocd + 16);
  if (count === 0xffff || dirSize === U32_MAX || dirStart === U32_MAX) {
    const locator = eocd - 20;
    if (locator < 0 || u32(locator) !== ZIP64_LOCATOR) throw fail("the zip64 end-of-central-directory locator is missing");
    const rec = u64(locator + 8);
    if (rec + 56 > zip.length || u32(rec) !== ZIP64_EOCD) throw fail("the zip64 end-of-central-directory record is missing");
    count = u64(rec + 32);
    dirSize = u64(rec + 40);
    dirStart = u64(rec + 48);
  }
  if (dirStart + dirSize > zip.length) throw fail("truncated: the central directory lies past the end of the file");
  const entries: ZipEntry[] = [];
  let at = dirStart;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || u32(at) !== CENTRAL) throw fail(`central directory entry ${i} is corrupt`);
    const flags = u16(at + 8);
    const method = u16(at + 10);
    const crc = u32(at + 16);
    let compressedSize = u32(at + 20);
    let size = u32(at + 24);
    const nameLen = u16(at + 28);
    const extraLen = u16(at + 30);
    const commentLen = u16(at + 32);
    let localAt = u32(at + 42);
    const name = latin1OrUtf8(zip.subarray(at + 46, at + 46 + nameLen), (flags & 0x800) !== 0);
    // zip64: the fields that read 0xFFFFFFFF come, in this order, from extra field 0x0001.
    let extra = at + 46 + nameLen;
    const extraEnd = extra + extraLen;
    while (extra + 4 <= extraEnd) {
      const id = u16(extra);
      const len = u16(extra + 2);
      if (id === 0x0001) {
        let p = extra + 4;
        if (size === U32_MAX) {
          size = u64(p);
          p += 8;
        }
        if (compressedSize === U32_MAX) {
          compressedSize = u64(p);
          p += 8;
        }
        if (localAt === U32_MAX) localAt = u64(p);
      }
      extra += 4 + len;
    }
    at = extraEnd + commentLen;
    if (name.endsWith("/")) continue; // a directory
    if (flags & 1) throw fail(`${name} is encrypted`);
    if (localAt + 30 > zip.length || u32(localAt) !== LOCAL) throw fail(`${name}: the local header is missing or corrupt`);
    const dataAt = localAt + 30 + u16(localAt + 26) + u16(localAt + 28);
    if (dataAt + compressedSize > zip.length) throw fail(`truncated: ${name} runs past the end of the file`);
    const raw = zip.subarray(dataAt, dataAt + compressedSize);
    let data: Uint8Array;
    if (method === 0) {
      if (compressedSize !== size) throw fail(`${name}: a stored entry's sizes disagree`);
      data = raw;
    } else if (method === 8) {
      try {
        data = inflateRaw(raw, size);
      } catch (e) {
        if (e instanceof XlaError) throw fail(`${name}: ${e.message}`);
        throw e;
      }
    } else throw fail(`${name} uses compression method ${method} (xlats reads stored and deflated entries)`);
    if (crc32(data) !== crc) throw fail(`${name}: CRC-32 mismatch (the data is corrupt)`);
    entries.push({ name, data });
  }
  return entries;
}

function latin1OrUtf8(bytes: Uint8Array, utf8: boolean): string {
  if (utf8) return decodeUtf8(Array.from(bytes));
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

function nameBytes(name: string): { bytes: Uint8Array; utf8: boolean } {
  const bytes = Uint8Array.from(encodeUtf8(name));
  return { bytes, utf8: bytes.length !== name.length || /[^\x20-\x7e]/.test(name) };
}

/** A zip archive of stored (uncompressed) entries, the layout `np.savez` writes. */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  if (entries.length > 0xffff) throw new ZipError(`${entries.length} entries: more than 65535 are not written`);
  const parts: { name: Uint8Array; utf8: boolean; data: Uint8Array; crc: number; offset: number }[] = [];
  let offset = 0;
  for (const e of entries) {
    const { bytes, utf8 } = nameBytes(e.name);
    if (e.data.length >= U32_MAX || offset >= U32_MAX) throw new ZipError(`${e.name}: entries of 4 GiB and more are not written`);
    parts.push({ name: bytes, utf8, data: e.data, crc: crc32(e.data), offset });
    offset += 30 + bytes.length + e.data.length;
  }
  const dirSize = parts.reduce((s, p) => s + 46 + p.name.length, 0);
  const out = new Uint8Array(offset + dirSize + 22);
  const v = new DataView(out.buffer);
  // Version 2.0, no flags but UTF-8 names, method 0, time 00:00 and date 1980-01-01 (a fixed stamp: same arrays, same bytes).
  const common = (at: number, p: (typeof parts)[number]): void => {
    v.setUint16(at, 20, true);
    v.setUint16(at + 2, p.utf8 ? 0x800 : 0, true);
    v.setUint16(at + 4, 0, true);
    v.setUint16(at + 6, 0, true);
    v.setUint16(at + 8, 0x21, true);
    v.setUint32(at + 10, p.crc, true);
    v.setUint32(at + 14, p.data.length, true);
    v.setUint32(at + 18, p.data.length, true);
    v.setUint16(at + 22, p.name.length, true);
    v.setUint16(at + 24, 0, true);
  };
  for (const p of parts) {
    v.setUint32(p.offset, LOCAL, true);
    common(p.offset + 4, p);
    out.set(p.name, p.offset + 30);
    out.set(p.data, p.offset + 30 + p.name.length);
  }
  let at = offset;
  for (const p of parts) {
    v.setUint32(at, CENTRAL, true);
    v.setUint16(at + 4, 20, true); // made by: version 2.0, MS-DOS attributes
    common(at + 6, p);
    // comment length, disk, internal and external attributes: 0
    v.setUint32(at + 42, p.offset, true);
    out.set(p.name, at + 46);
    at += 46 + p.name.length;
  }
  v.setUint32(at, EOCD, true);
  v.setUint16(at + 8, parts.length, true);
  v.setUint16(at + 10, parts.length, true);
  v.setUint32(at + 12, dirSize, true);
  v.setUint32(at + 16, offset, true);
  return out;
}
