// DEFLATE decompression (RFC 1951) and CRC-32, for the deflated entries of .npz files
// (`np.savez_compressed`). Written for the core, which has no zlib and must run the same
// in a browser, synchronously (DecompressionStream is asynchronous).
//
// Huffman codes decode through a table indexed by the next FAST_BITS input bits; codes
// longer than that (rare: at most 15 bits) fall back to a canonical walk one bit at a time.

import { XlaError } from "./errors.js";

/** Compressed data that is corrupt or ends early. */
export class InflateError extends XlaError {
  override name = "InflateError";
}

const FAST_BITS = 10;
const MAX_BITS = 15;

const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
  8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** The order in which a dynamic block lists the code-length code's lengths. */
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** A canonical Huffman code: the fast table (symbol << 4 | length, 0 = not a short code) and, for the slow walk, counts and sorted symbols. */
interface Huffman {
  readonly fast: Int32Array;
  readonly counts: Int32Array;
  readonly symbols: Int32Array;
}

function buildHuffman(lengths: ArrayLike<number>, what: string): Huffman {
  const counts = new Int32Array(MAX_BITS + 1);
  for (let i = 0; i < lengths.length; i++) counts[lengths[i]!]!++;
  counts[0] = 0;
  let left = 1;
  for (let len = 1; len <= MAX_BITS; len++) {
    left = (left << 1) - counts[len]!;
    if (left < 0) throw new InflateError(`corrupt deflate data: the ${what} code is over-subscribed`);
  }
  const offsets = new Int32Array(MAX_BITS + 2);
  for (let len = 1; len <= MAX_BITS; len++) offsets[len + 1] = offsets[len]! + counts[len]!;
  const symbols = new Int32Array(lengths.length);
  for (let s = 0; s < lengths.length; s++) if (lengths[s] !== 0) symbols[offsets[lengths[s]!]!++] = s;
  const fast = new Int32Array(1 << FAST_BITS);
  // Canonical codes in order of (length, symbol); each short code fills every table
  // slot whose low `len` bits are its bit-reversed code (deflate sends codes MSB first).
  let code = 0;
  let k = 0;
  for (let len = 1; len <= FAST_BITS; len++, code <<= 1) {
    for (let i = 0; i < counts[len]!; i++, code++, k++) {
      let rev = 0;
      for (let b = 0; b < len; b++) rev |= ((code >> b) & 1) << (len - 1 - b);
      for (let slot = rev; slot < fast.length; slot += 1 << len) fast[slot] = (symbols[k]! << 4) | len;
    }
  }
  return { fast, counts, symbols };
}

class BitReader {
  pos = 0;
  private buf = 0;
  private count = 0;
  /** Zero bytes supplied past the end (so a peek near the end works); consuming them is an error. */
  private overrun = 0;

  constructor(private readonly src: Uint8Array) {}

  private fill(n: number): void {
    while (this.count < n) {
      if (this.pos < this.src.length) this.buf |= this.src[this.pos++]! << this.count;
      else this.overrun++;
      this.count += 8;
    }
  }

  private consume(n: number): void {
    this.buf >>>= n;
    this.count -= n;
    if (this.overrun * 8 > this.count) throw new InflateError("deflate data ends early (truncated)");
  }

  bits(n: number): number {
    if (n === 0) return 0;
    this.fill(n);
    const v = this.buf & ((1 << n) - 1);
    this.consume(n);
    return v;
  }

  decode(h: Huffman): number {
    this.fill(FAST_BITS);
    const e = h.fast[this.buf & ((1 << FAST_BITS) - 1)]!;
    if (e !== 0) {
      this.consume(e & 15);
      return e >> 4;
    }
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len <= MAX_BITS; len++) {
      code |= this.bits(1);
      const count = h.counts[len]!;
      if (code - first < count) return h.symbols[index + code - first]!;
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new InflateError("corrupt deflate data: an invalid Huffman code");
  }

  /** Drops the bits left in the current byte (stored blocks start on a byte boundary). */
  alignToByte(): void {
    const drop = this.count & 7;
    this.consume(drop);
    // Whole bytes still buffered go back to the input.
    this.pos -= (this.count >> 3) - this.overrun;
    this.buf = 0;
    this.count = 0;
    this.overrun = 0;
  }
}

let fixedCodes: { lit: Huffman; dist: Huffman } | undefined;

function fixed(): { lit: Huffman; dist: Huffman } {
  if (fixedCodes === undefined) {
    const lit = new Uint8Array(288);
    lit.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
    fixedCodes = { lit: buildHuffman(lit, "fixed literal/length"), dist: buildHuffman(new Uint8Array(30).fill(5), "fixed distance") };
  }
  return fixedCodes;
}

function dynamic(r: BitReader): { lit: Huffman; dist: Huffman } {
  const nlen = r.bits(5) + 257;
  const ndist = r.bits(5) + 1;
  const ncode = r.bits(4) + 4;
  if (nlen > 286 || ndist > 30) throw new InflateError("corrupt deflate data: too many length or distance codes");
  const clen = new Uint8Array(19);
  for (let i = 0; i < ncode; i++) clen[CLEN_ORDER[i]!] = r.bits(3);
  const clenCode = buildHuffman(clen, "code-length");
  const lengths = new Uint8Array(nlen + ndist);
  for (let i = 0; i < lengths.length;) {
    const sym = r.decode(clenCode);
    if (sym < 16) {
      lengths[i++] = sym;
      continue;
    }
    let value = 0;
    let repeat: number;
    if (sym === 16) {
      if (i === 0) throw new InflateError("corrupt deflate data: a repeat with no previous length");
      value = lengths[i - 1]!;
      repeat = 3 + r.bits(2);
    } else repeat = sym === 17 ? 3 + r.bits(3) : 11 + r.bits(7);
    if (i + repeat > lengths.length) throw new InflateError("corrupt deflate data: code lengths overrun");
    lengths.fill(value, i, i + repeat);
    i += repeat;
  }
  if (lengths[256] === 0) throw new InflateError("corrupt deflate data: no end-of-block code");
  return { lit: buildHuffman(lengths.subarray(0, nlen), "literal/length"), dist: buildHuffman(lengths.subarray(nlen), "distance") };
}

/** Inflates raw DEFLATE data that must produce exactly `size` bytes. */
export function inflateRaw(src: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const r = new BitReader(src);
  let n = 0;
  const overflow = (): InflateError => new InflateError(`deflate data inflates to more than the ${size} bytes expected`);
  for (let last = 0; last === 0;) {
    last = r.bits(1);
    const type = r.bits(2);
    if (type === 0) {
      r.alignToByte();
      if (r.pos + 4 > src.length) throw new InflateError("deflate data ends early (truncated)");
      const len = src[r.pos]! | (src[r.pos + 1]! << 8);
      const nlen = src[r.pos + 2]! | (src[r.pos + 3]! << 8);
      if ((len ^ 0xffff) !== nlen) throw new InflateError("corrupt deflate data: a stored block's length check fails");
      r.pos += 4;
      if (r.pos + len > src.length) throw new InflateError("deflate data ends early (truncated)");
      if (n + len > size) throw overflow();
      out.set(src.subarray(r.pos, r.pos + len), n);
      n += len;
      r.pos += len;
      continue;
    }
    if (type === 3) throw new InflateError("corrupt deflate data: block type 3");
    const { lit, dist } = type === 1 ? fixed() : dynamic(r);
    for (;;) {
      const sym = r.decode(lit);
      if (sym < 256) {
        if (n >= size) throw overflow();
        out[n++] = sym;
      } else if (sym === 256) break;
      else {
        const li = sym - 257;
        if (li >= 29) throw new InflateError("corrupt deflate data: a bad length code");
        const len = LENGTH_BASE[li]! + r.bits(LENGTH_EXTRA[li]!);
        const di = r.decode(dist);
        if (di >= 30) throw new InflateError("corrupt deflate data: a bad distance code");
        const d = DIST_BASE[di]! + r.bits(DIST_EXTRA[di]!);
        if (d > n) throw new InflateError("corrupt deflate data: a distance reaches before the start");
        if (n + len > size) throw overflow();
        if (d >= len) out.copyWithin(n, n - d, n - d + len);
        else for (let i = 0; i < len; i++) out[n + i] = out[n + i - d]!;
        n += len;
      }
    }
  }
  if (n !== size) throw new InflateError(`deflate data inflates to ${n} bytes, expected ${size}`);
  return out;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (the zip and gzip polynomial 0xEDB88320, reflected). */
export function crc32(bytes: Uint8Array): number {
  if (crcTable === undefined) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c >>> 0;
    }
  }
  const t = crcTable;
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
