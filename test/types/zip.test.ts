// Hostile zip archives and .npy files: each is refused with a typed error before it can
// allocate more than the memory budget (the archives are built here, field by field,
// from PKWARE's APPNOTE layout; the deflated streams come from node's zlib).

import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { Literal, NpyError, ResourceError, ZipError, readNpz, writeNpz } from "../../src/index.js";
import { crc32 } from "../../src/types/inflate.js";
import { memoryBudget, setMemoryBudget } from "../../src/types/resource.js";
import { readZip } from "../../src/types/zip.js";

interface Central {
  readonly name: string;
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localAt: number;
  /** The extra field's bytes. */
  readonly extra?: Uint8Array;
  /** The extra field length written in the record, when it is to lie about the bytes. */
  readonly extraLen?: number;
}

function localHeader(name: string, method: number, crc: number, compressedSize: number, size: number): Uint8Array {
  const out = new Uint8Array(30 + name.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0x04034b50, true);
  v.setUint16(4, 20, true);
  v.setUint16(8, method, true);
  v.setUint32(14, crc, true);
  v.setUint32(18, compressedSize, true);
  v.setUint32(22, size, true);
  v.setUint16(26, name.length, true);
  out.set(Buffer.from(name, "latin1"), 30);
  return out;
}

/** `locals` (local headers and data), then one central record per entry, then the end record. */
function rawZip(locals: Uint8Array, central: readonly Central[]): Uint8Array {
  const records = central.map((c) => {
    const extra = c.extra ?? new Uint8Array(0);
    const out = new Uint8Array(46 + c.name.length + extra.length);
    const v = new DataView(out.buffer);
    v.setUint32(0, 0x02014b50, true);
    v.setUint16(4, 20, true);
    v.setUint16(6, 20, true);
    v.setUint16(10, c.method, true);
    v.setUint32(16, c.crc, true);
    v.setUint32(20, c.compressedSize, true);
    v.setUint32(24, c.size, true);
    v.setUint16(28, c.name.length, true);
    v.setUint16(30, c.extraLen ?? extra.length, true);
    v.setUint32(42, c.localAt, true);
    out.set(Buffer.from(c.name, "latin1"), 46);
    out.set(extra, 46 + c.name.length);
    return out;
  });
  const dirSize = records.reduce((n, r) => n + r.length, 0);
  const end = new Uint8Array(22);
  const v = new DataView(end.buffer);
  v.setUint32(0, 0x06054b50, true);
  v.setUint16(8, central.length, true);
  v.setUint16(10, central.length, true);
  v.setUint32(12, dirSize, true);
  v.setUint32(16, locals.length, true);
  return Buffer.concat([locals, ...records, end]);
}

/** A zip64 extra field (id 1) holding the given 8-byte values. */
function zip64Extra(...values: bigint[]): Uint8Array {
  const out = new Uint8Array(4 + 8 * values.length);
  const v = new DataView(out.buffer);
  v.setUint16(0, 1, true);
  v.setUint16(2, 8 * values.length, true);
  values.forEach((x, i) => v.setBigUint64(4 + 8 * i, x, true));
  return out;
}

const isZipError = (re: RegExp) => (e: unknown): boolean => e instanceof ZipError && re.test(e.message);

test("zip: a well-formed archive built here reads (the builder is right)", () => {
  const data = Literal.from("f32", [1, 2, 3]).toNpy();
  const packed = deflateRawSync(data);
  const zip = rawZip(Buffer.concat([localHeader("a.npy", 8, crc32(data), packed.length, data.length), packed]),
    [{ name: "a.npy", method: 8, crc: crc32(data), compressedSize: packed.length, size: data.length, localAt: 0 }]);
  assert.deepEqual(readNpz(zip).get("a")!.toNested(), [1, 2, 3]);
});

test("zip: many directory entries pointing at one stream are refused before inflating", () => {
  // The bomb of the issue: 300 names, one 16 MB stream (here 1 MB of zeros: the layout is the point).
  const data = new Uint8Array(1 << 20);
  const packed = deflateRawSync(data);
  const crc = crc32(data);
  const locals = Buffer.concat([localHeader("x.npy", 8, crc, packed.length, data.length), packed]);
  const central = Array.from({ length: 300 }, (_, i) => ({ name: `x${i}.npy`, method: 8, crc, compressedSize: packed.length, size: data.length, localAt: 0 }));
  assert.throws(() => readZip(rawZip(locals, central)), isZipError(/x1\.npy overlaps x0\.npy/));
  // An entry whose data runs into the central directory.
  const tail = [{ name: "x.npy", method: 0, crc, compressedSize: data.length + 10, size: data.length + 10, localAt: 0 }];
  assert.throws(() => readZip(rawZip(Buffer.concat([localHeader("x.npy", 0, crc, data.length, data.length), data]), tail)), isZipError(/overlaps the central directory|past the end/));
});

test("zip: the inflated sizes together must fit the memory budget", () => {
  const data = new Uint8Array(1 << 16).fill(7);
  const packed = deflateRawSync(data);
  const crc = crc32(data);
  const one = Buffer.concat([localHeader("a.npy", 8, crc, packed.length, data.length), packed]);
  const zip = rawZip(Buffer.concat([one, localHeader("b.npy", 8, crc, packed.length, data.length), packed]), [
    { name: "a.npy", method: 8, crc, compressedSize: packed.length, size: data.length, localAt: 0 },
    { name: "b.npy", method: 8, crc, compressedSize: packed.length, size: data.length, localAt: one.length },
  ]);
  assert.equal(readZip(zip).length, 2);
  const previous = setMemoryBudget(100_000); // one entry fits, both do not
  try {
    assert.throws(() => readZip(zip, "two.npz"), (e: unknown) => e instanceof ResourceError && /two\.npz: 2 entries inflated needs 131072 bytes/.test(e.message));
  } finally {
    setMemoryBudget(previous);
  }
});

test("zip: sizes a deflate stream cannot reach are refused before allocating", () => {
  // 4 GiB (zip64) and 2^52 claimed from a few compressed bytes: deflate expands at most 1032 to 1.
  const data = new Uint8Array(100);
  const packed = deflateRawSync(data);
  const locals = Buffer.concat([localHeader("x.npy", 8, 0, packed.length, 0xffffffff), packed]);
  for (const size of [2n ** 32n, 2n ** 52n]) {
    const zip = rawZip(locals, [{ name: "x.npy", method: 8, crc: 0, compressedSize: packed.length, size: 0xffffffff, localAt: 0, extra: zip64Extra(size) }]);
    assert.throws(() => readZip(zip), isZipError(new RegExp(`claims ${size} bytes from ${packed.length} compressed bytes`)));
  }
  // Beyond the budget but plausible for its compressed size: the budget refuses it.
  const huge = new Uint8Array(4 << 20);
  const hugePacked = Buffer.alloc(4 << 20);
  const zip = rawZip(Buffer.concat([localHeader("y.npy", 8, 0, hugePacked.length, 0xffffffff), hugePacked]),
    [{ name: "y.npy", method: 8, crc: 0, compressedSize: hugePacked.length, size: 0xffffffff, localAt: 0, extra: zip64Extra(BigInt(huge.length) * 1000n) }]);
  assert.throws(() => readZip(zip), (e: unknown) => e instanceof ResourceError && e.bytes === huge.length * 1000 && e.bytes > memoryBudget());
});

test("zip: every malformed field is a ZipError, never a RangeError", () => {
  const good = writeNpz([["a", Literal.from("s32", [1, 2])]]);
  const dirStart = new DataView(good.buffer).getUint32(good.length - 6, true);
  const patch = (at: number, bytes: number, value: number): Uint8Array => {
    const z = good.slice();
    const v = new DataView(z.buffer);
    if (bytes === 2) v.setUint16(at, value, true);
    else v.setUint32(at, value, true);
    return z;
  };
  // An extra-field length past the end of the file.
  assert.throws(() => readZip(patch(dirStart + 30, 2, 0xffff)), isZipError(/run past the directory's end/));
  // A name longer than the directory.
  assert.throws(() => readZip(patch(dirStart + 28, 2, 0x4000)), isZipError(/run past the directory's end/));
  // A local header offset past the end.
  assert.throws(() => readZip(patch(dirStart + 42, 4, 0x7fffffff)), isZipError(/local header.*past the end/));
  // The local header's name length runs the data past the end.
  assert.throws(() => readZip(patch(26, 2, 0xffff)), isZipError(/past the end/));
  // A central directory offset and an entry count that lie.
  assert.throws(() => readZip(patch(good.length - 6, 4, good.length - 30)), ZipError);
  assert.throws(() => readZip(patch(good.length - 12, 2, 5)), isZipError(/entry 1 is corrupt/));
  // An extra field whose own length runs past the entry's extra data, and a zip64 field too short for its size.
  const data = Literal.from("s32", [3]).toNpy();
  const locals = Buffer.concat([localHeader("b.npy", 0, crc32(data), data.length, data.length), data]);
  const lying = zip64Extra(BigInt(data.length));
  new DataView(lying.buffer).setUint16(2, 200, true);
  const entry = { name: "b.npy", method: 0, crc: crc32(data), compressedSize: data.length, size: data.length, localAt: 0 };
  assert.throws(() => readZip(rawZip(locals, [{ ...entry, extra: lying }])), isZipError(/extra field 0x0001 of 200 bytes runs past/));
  assert.throws(() => readZip(rawZip(locals, [{ ...entry, size: 0xffffffff, extra: zip64Extra() }])), isZipError(/zip64 extra field has no size/));
  assert.deepEqual(readNpz(rawZip(locals, [entry])).get("b")!.toNested(), [3]);
  // Two entries of one name.
  const two = Buffer.concat([locals, localHeader("b.npy", 0, crc32(data), data.length, data.length), data]);
  assert.throws(() => readZip(rawZip(two, [entry, { ...entry, localAt: locals.length }])), isZipError(/two entries are named b\.npy/));
});

test("zip: every truncation of a valid archive is a typed error", () => {
  const good = writeNpz([["a", Literal.from("s32", [1, 2])], ["b", Literal.from("f32", [[1]])]]);
  for (let n = 0; n < good.length; n++) {
    assert.throws(() => readNpz(good.subarray(0, n)), (e: unknown) => e instanceof ZipError, `cut at ${n}`);
  }
});

test("npy: an array beyond the memory budget is a ResourceError; bad shapes are NpyErrors", () => {
  const f4 = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]).toNpy();
  const previous = setMemoryBudget(16);
  try {
    assert.throws(() => Literal.fromNpy(f4, { name: "x.npy" }), (e: unknown) => e instanceof ResourceError && e.bytes === 24 && /x\.npy: shape \(2, 3\)/.test(e.message));
  } finally {
    setMemoryBudget(previous);
  }
  const withShape = (shape: string): Uint8Array => {
    const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`.padEnd(117, " ") + "\n";
    return Buffer.concat([Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 118, 0]), Buffer.from(dict, "latin1")]);
  };
  for (const [shape, re] of [["(-1,)", /bad dimension/], ["(2, 3", /malformed/], ["(99999999999999999999,)", /too large/],
    ["(4294967296, 4294967296)", /too large/], ["(1000000, 1000000)", /memory budget/], ["(3,)", /truncated/]] as const) {
    assert.throws(() => Literal.fromNpy(withShape(shape)), (e: unknown) => (e instanceof NpyError || e instanceof ResourceError) && re.test(e.message), shape);
  }
});
