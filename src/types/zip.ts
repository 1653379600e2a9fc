// The zip container of .npz files (PKWARE APPNOTE): reading stored and deflated entries
// through the central directory (with the zip64 records numpy's `savez` asks for with
// `force_zip64`), and writing stored entries as `np.savez` does.

import { XlaError } from "./errors.js";
import { crc32, inflateRaw } from "./inflate.js";
import { checkBytes } from "./resource.js";
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

/**
 * The most bytes deflate can expand one compressed byte into: a 258-byte match coded in
 * two bits (one-bit length and distance codes) is 1032 bytes per input byte. An entry
 * claiming more is corrupt, and is refused before its output is allocated.
 */
const DEFLATE_MAX_RATIO = 1032;

/** Where one entry's bytes lie, read from the central directory before anything is inflated. */
interface EntryRecord {
  readonly name: string;
  readonly method: number;
  readonly crc: number;
  readonly size: number;
  readonly compressedSize: number;
  /** The local header's offset, then the span [localAt, dataEnd) the entry occupies. */
  readonly localAt: number;
  readonly dataAt: number;
  readonly dataEnd: number;
}

/**
 * Every file entry of a zip archive, decompressed and CRC-checked, in central-directory
 * order. Every field is checked against the file before it is used, entries may not
 * overlap (or lie in the central directory), and the inflated sizes together must fit
 * the memory budget (resource.ts): a malformed archive is a ZipError, one that would
 * inflate past the budget a ResourceError, both raised before anything is inflated.
 */
export function readZip(zip: Uint8Array, archiveName = "<zip>"): ZipEntry[] {
  const fail = (m: string): ZipError => new ZipError(`${archiveName}: ${m}`);
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // Every read is checked: a length or offset field pointing past the end is a truncated archive, not a RangeError.
  const inFile = (at: number, bytes: number, what: string): void => {
    if (!(at >= 0 && at + bytes <= zip.length)) throw fail(`truncated or corrupt: ${what} lies past the end of the file (offset ${at}, ${zip.length} bytes)`);
  };
  const u16 = (at: number, what: string): number => (inFile(at, 2, what), view.getUint16(at, true));
  const u32 = (at: number, what: string): number => (inFile(at, 4, what), view.getUint32(at, true));
  const u64 = (at: number, what: string): number => {
    inFile(at, 8, what);
    const v = view.getBigUint64(at, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw fail(`${what} (${v}) is too large`);
    return Number(v);
  };
  // The end record is the last 22 bytes unless a comment (up to 65535 bytes) follows it.
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === EOCD && at + 22 + view.getUint16(at + 20, true) === zip.length) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw fail(zip.length < 22 ? `truncated: ${zip.length} bytes is too short for a zip archive` : "not a zip archive, or truncated (no end-of-central-directory record)");
  let count = u16(eocd + 10, "the entry count");
  let dirSize = u32(eocd + 12, "the central directory's size");
  let dirStart = u32(eocd + 16, "the central directory's offset");
  if (count === 0xffff || dirSize === U32_MAX || dirStart === U32_MAX) {
    const locator = eocd - 20;
    if (locator < 0 || u32(locator, "the zip64 locator") !== ZIP64_LOCATOR) throw fail("the zip64 end-of-central-directory locator is missing");
    const rec = u64(locator + 8, "the zip64 end record's offset");
    if (rec + 56 > zip.length || u32(rec, "the zip64 end record") !== ZIP64_EOCD) throw fail("the zip64 end-of-central-directory record is missing");
    count = u64(rec + 32, "the zip64 entry count");
    dirSize = u64(rec + 40, "the zip64 central directory's size");
    dirStart = u64(rec + 48, "the zip64 central directory's offset");
  }
  const dirEnd = dirStart + dirSize;
  if (dirEnd > zip.length) throw fail("truncated: the central directory lies past the end of the file");
  const records: EntryRecord[] = [];
  let at = dirStart;
  for (let i = 0; i < count; i++) {
    if (at + 46 > dirEnd || view.getUint32(at, true) !== CENTRAL) throw fail(`central directory entry ${i} is corrupt or lies past the directory's end`);
    const flags = u16(at + 8, "flags");
    const method = u16(at + 10, "the method");
    const crc = u32(at + 16, "the CRC");
    let compressedSize = u32(at + 20, "the compressed size");
    let size = u32(at + 24, "the size");
    const nameLen = u16(at + 28, "the name length");
    const extraLen = u16(at + 30, "the extra field length");
    const commentLen = u16(at + 32, "the comment length");
    let localAt = u32(at + 42, "the local header offset");
    const extraStart = at + 46 + nameLen;
    const extraEnd = extraStart + extraLen;
    const next = extraEnd + commentLen;
    if (next > dirEnd) throw fail(`central directory entry ${i}: its name, extra field and comment (${nameLen + extraLen + commentLen} bytes) run past the directory's end`);
    const name = latin1OrUtf8(zip.subarray(at + 46, extraStart), (flags & 0x800) !== 0);
    // zip64: the fields that read 0xFFFFFFFF come, in this order, from extra field 0x0001.
    for (let extra = extraStart; extra < extraEnd;) {
      if (extra + 4 > extraEnd) throw fail(`${name}: a truncated extra field header`);
      const id = view.getUint16(extra, true);
      const len = view.getUint16(extra + 2, true);
      const fieldEnd = extra + 4 + len;
      if (fieldEnd > extraEnd) throw fail(`${name}: extra field 0x${id.toString(16).padStart(4, "0")} of ${len} bytes runs past the entry's extra data`);
      if (id === 0x0001) {
        let p = extra + 4;
        const field = (what: string): number => {
          if (p + 8 > fieldEnd) throw fail(`${name}: the zip64 extra field has no ${what}`);
          const v = u64(p, `${name}: the zip64 ${what}`);
          p += 8;
          return v;
        };
        if (size === U32_MAX) size = field("size");
        if (compressedSize === U32_MAX) compressedSize = field("compressed size");
        if (localAt === U32_MAX) localAt = field("local header offset");
      }
      extra = fieldEnd;
    }
    at = next;
    if (name.endsWith("/")) continue; // a directory
    if (flags & 1) throw fail(`${name} is encrypted`);
    if (u32(localAt, `${name}: the local header`) !== LOCAL) throw fail(`${name}: the local header is missing or corrupt`);
    const dataAt = localAt + 30 + u16(localAt + 26, `${name}: the local header`) + u16(localAt + 28, `${name}: the local header`);
    const dataEnd = dataAt + compressedSize;
    if (dataEnd > zip.length) throw fail(`truncated: ${name} runs past the end of the file`);
    if (method === 0 && compressedSize !== size) throw fail(`${name}: a stored entry's sizes disagree`);
    if (method === 8 && size > compressedSize * DEFLATE_MAX_RATIO + 1024) {
      throw fail(`${name}: claims ${size} bytes from ${compressedSize} compressed bytes, more than deflate can encode (at most ${DEFLATE_MAX_RATIO} to 1)`);
    }
    if (method !== 0 && method !== 8) throw fail(`${name} uses compression method ${method} (xlats reads stored and deflated entries)`);
    records.push({ name, method, crc, size, compressedSize, localAt, dataAt, dataEnd });
  }
  checkLayout(records, dirStart, dirEnd, fail);
  // The inflated sizes together: what reading the archive will hold at once.
  checkBytes(records.reduce((n, r) => n + r.size, 0), `${archiveName}: ${records.length} entries inflated`, archiveName);
  return records.map((r) => ({ name: r.name, data: entryData(zip.subarray(r.dataAt, r.dataEnd), r, fail) }));
}

/**
 * Entries may not share bytes (a "zip bomb" points many entries at one stream), and may
 * not lie inside the central directory; names must be distinct.
 */
function checkLayout(records: readonly EntryRecord[], dirStart: number, dirEnd: number, fail: (m: string) => ZipError): void {
  const names = new Set<string>();
  for (const r of records) {
    if (names.has(r.name)) throw fail(`two entries are named ${r.name}`);
    names.add(r.name);
    if (r.localAt < dirEnd && r.dataEnd > dirStart) throw fail(`${r.name} overlaps the central directory`);
  }
  const sorted = [...records].sort((a, b) => a.localAt - b.localAt);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.localAt < sorted[i - 1]!.dataEnd) throw fail(`${sorted[i]!.name} overlaps ${sorted[i - 1]!.name} (entries may not share bytes)`);
  }
}

function entryData(raw: Uint8Array, r: EntryRecord, fail: (m: string) => ZipError): Uint8Array {
  let data = raw;
  if (r.method === 8) {
    try {
      data = inflateRaw(raw, r.size);
    } catch (e) {
      if (e instanceof XlaError) throw fail(`${r.name}: ${e.message}`);
      throw e;
    }
  }
  if (crc32(data) !== r.crc) throw fail(`${r.name}: CRC-32 mismatch (the data is corrupt)`);
  return data;
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
