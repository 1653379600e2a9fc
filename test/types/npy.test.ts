// .npy / .npz: files written by numpy 2.4 (np.save / np.savez / np.savez_compressed;
// their exact bytes are pasted below as hex), headers worked out from the NPY format
// spec, and zlib (node:zlib, a second implementation) for the deflate decoder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { InflateError, Literal, NpyError, ZipError, readNpz, writeNpz, type ElementType } from "../../src/index.js";
import { crc32, inflateRaw } from "../../src/types/inflate.js";
import { readZip } from "../../src/types/zip.js";

const fromHex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

/** The header numpy writes: magic, v1.0, length 118, the dict, spaces to 127 bytes, '\n' (NPY spec, 64-byte alignment). */
function header(dict: string): string {
  const text = dict.padEnd(117, " ") + "\n";
  return "934e554d5059" + "0100" + "7600" + Buffer.from(text, "latin1").toString("hex");
}

// np.save outputs (numpy 2.4.6).
const NUMPY = {
  f4: "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0000803f0000004000004040000080400000a0400000c040",
  bei4: "934e554d5059010076007b276465736372273a20273e6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a00000001fffffffe00011170",
  bool: "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028342c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a01000101",
  c8: "934e554d5059010076007b276465736372273a20273c6338272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0000803f00000040000060c0000080be",
  f8F: "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a20547275652c20277368617065273a2028322c2033292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a00000000000000000000000000000840000000000000f03f000000000000104000000000000000400000000000001440",
  i8s: "934e554d5059010076007b276465736372273a20273c6938272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200afbffffffffffffff",
  u2e: "934e554d5059010076007b276465736372273a20273c7532272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028302c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a",
  f2: "934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a003e00c0",
  V2: "934e554d5059010076007b276465736372273a20277c5632272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a803f0040",
  bec16: "934e554d5059010076007b276465736372273a20273e633136272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028312c292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a3ff00000000000004000000000000000",
  // np.savez(f, a=int32 [1, 2], b=bool [[True]]): zip64 local headers (force_zip64).
  npz: "504b03042d0000000000000021000bf9aa2dffffffffffffffff05001400612e6e70790100100088000000000000008800000000000000934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0100000002000000504b03042d000000000000002100dbe00a03ffffffffffffffff05001400622e6e70790100100081000000000000008100000000000000934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028312c2031292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a01504b01022d032d0000000000000021000bf9aa2d8800000088000000050000000000000000000000800100000000612e6e7079504b01022d032d000000000000002100dbe00a0381000000810000000500000000000000000000008001bf000000622e6e7079504b0506000000000200020066000000770100000000",
  // np.savez_compressed(f, x=(arange(3000) % 7).astype(float32)): one deflated entry.
  npzc: "504b03042d00000008000000210094b2ba24ffffffffffffffff05001400782e6e707901001000602f0000000000009900000000000000edc9310ac2401085e1b5f514db8dc2160b5a8960aa748a8d85952c66838598b01b6c44c81d72018fe2d11c73040babff316f60e61b7687edfe383177f3902ae67392959575bd1467a56e5297c2edd4a42a7eff65b8e6a8ff7c096dd47bb6f0debbb9b34ffb6ba6664cbfd155e8687bed4bfb2e300cc3300cc3300cc3300cc3300cc3300cc3300cc3300cc3300cc3300cc3300cc330ec5ff601504b01022d032d00000008000000210094b2ba2499000000602f0000050000000000000000000000800100000000782e6e7079504b0506000000000100010033000000d00000000000",
};

test("npy: the header numpy writes, worked out from the spec, is numpy's", () => {
  assert.equal(NUMPY.f4.slice(0, 256), header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  assert.equal(NUMPY.i8s.slice(0, 256), header("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"));
});

test("npy: toNpy writes numpy's bytes exactly", () => {
  assert.equal(toHex(Literal.from("f32", [[1, 2, 3], [4, 5, 6]]).toNpy()), NUMPY.f4);
  assert.equal(toHex(Literal.from("pred", [true, false, true, true]).toNpy()), NUMPY.bool);
  assert.equal(toHex(Literal.from("c64", [{ re: 1, im: 2 }, { re: -3.5, im: -0.25 }]).toNpy()), NUMPY.c8);
  assert.equal(toHex(Literal.scalar("s64", -5n).toNpy()), NUMPY.i8s);
  assert.equal(toHex(Literal.fromValues("u16", [0], []).toNpy()), NUMPY.u2e);
  assert.equal(toHex(Literal.from("f16", [1.5, -2]).toNpy()), NUMPY.f2);
  assert.equal(toHex(Literal.from("f64", [[0, 1, 2], [3, 4, 5]]).toNpy({ fortranOrder: true })), NUMPY.f8F);
});

test("npy: fromNpy reads numpy's files: byte orders, Fortran order, scalars, empties", () => {
  const f4 = Literal.fromNpy(fromHex(NUMPY.f4));
  assert.equal(f4.elementType, "f32");
  assert.deepEqual(f4.toNested(), [[1, 2, 3], [4, 5, 6]]);
  const be = Literal.fromNpy(fromHex(NUMPY.bei4));
  assert.equal(be.elementType, "s32");
  assert.deepEqual(be.toNested(), [1, -2, 70000]);
  assert.deepEqual(Literal.fromNpy(fromHex(NUMPY.bool)).toNested(), [true, false, true, true]);
  assert.deepEqual(Literal.fromNpy(fromHex(NUMPY.c8)).toNested(), [{ re: 1, im: 2 }, { re: -3.5, im: -0.25 }]);
  const c16 = Literal.fromNpy(fromHex(NUMPY.bec16));
  assert.equal(c16.elementType, "c128");
  assert.deepEqual(c16.toNested(), [{ re: 1, im: 2 }]);
  assert.deepEqual(Literal.fromNpy(fromHex(NUMPY.f8F)).toNested(), [[0, 1, 2], [3, 4, 5]]);
  const s = Literal.fromNpy(fromHex(NUMPY.i8s));
  assert.deepEqual([s.elementType, s.dimensions, s.toNested()], ["s64", [], -5n]);
  const e = Literal.fromNpy(fromHex(NUMPY.u2e));
  assert.deepEqual([e.elementType, e.dimensions], ["u16", [0]]);
  assert.deepEqual(Literal.fromNpy(fromHex(NUMPY.f2)).toNested(), [1.5, -2]);
});

test("npy: every numpy dtype in both byte orders (headers from the spec)", () => {
  // [descr code, type, value, its little-endian bytes]
  const cases: [string, ElementType, number | bigint | boolean, string][] = [
    ["b1", "pred", true, "01"], ["i1", "s8", -2, "fe"], ["u1", "u8", 200, "c8"],
    ["i2", "s16", -2, "feff"], ["u2", "u16", 0x1234, "3412"], ["i4", "s32", -2, "feffffff"], ["u4", "u32", 0x89abcdef, "efcdab89"],
    ["i8", "s64", -2n, "feffffffffffffff"], ["u8", "u64", 0x0102030405060708n, "0807060504030201"],
    ["f2", "f16", 1, "003c"], ["f4", "f32", 1, "0000803f"], ["f8", "f64", 1, "000000000000f03f"],
  ];
  for (const [code, t, v, le] of cases) {
    for (const order of code.endsWith("1") ? ["|", "<", ">"] : ["<", ">"]) {
      const bytes = order === ">" ? Buffer.from(le, "hex").reverse().toString("hex") : le;
      const file = fromHex(header(`{'descr': '${order}${code}', 'fortran_order': False, 'shape': (1,), }`) + bytes);
      const lit = Literal.fromNpy(file);
      assert.equal(lit.elementType, t, `${order}${code}`);
      assert.deepEqual(lit.toNested(), [v], `${order}${code}`);
    }
    const written = Literal.from(t, [v]).toNpy();
    assert.equal(toHex(written).slice(256), le, `${t} data`);
  }
});

test("npy: ml_dtypes types: '<V2' is bf16, 'V1' needs the type named, ml_dtypes names are read", () => {
  const bf = Literal.fromNpy(fromHex(NUMPY.V2));
  assert.equal(bf.elementType, "bf16");
  assert.deepEqual(bf.toNested(), [1, 2]);
  const v1 = (descr: string, data: string): Uint8Array => fromHex(header(`{'descr': '${descr}', 'fortran_order': False, 'shape': (2,), }`) + data);
  assert.throws(() => Literal.fromNpy(v1("<V1", "3840")), (e: unknown) => e instanceof NpyError && /say which 1-byte type/.test(e.message));
  // f8e4m3fn: 0x38 = 1, 0x40 = 2 (OCP FP8); f8e5m2: 0x3c = 1, 0x40 = 2.
  assert.deepEqual(Literal.fromNpy(v1("<V1", "3840"), { elementType: "f8e4m3fn" }).toNested(), [1, 2]);
  assert.deepEqual(Literal.fromNpy(v1("<f1", "3c40")).toNested(), [1, 2]);
  assert.deepEqual(Literal.fromNpy(v1("float8_e4m3fn", "3840")).toNested(), [1, 2]);
  assert.deepEqual(Literal.fromNpy(v1("bfloat16", "803f0040")).toNested(), [1, 2]);
  // int4 as ml_dtypes stores it: the low four bits of a byte (-1 is 0x0f).
  assert.deepEqual(Literal.fromNpy(v1("<V1", "0f07"), { elementType: "s4" }).toNested(), [-1, 7]);
  assert.equal(toHex(Literal.from("s4", [-1, 7]).toNpy()).slice(256), "0f07");
  assert.match(Buffer.from(Literal.from("bf16", [1]).toNpy()).toString("latin1"), /'descr': '<V2'/);
  assert.match(Buffer.from(Literal.from("f8e5m2", [1]).toNpy()).toString("latin1"), /'descr': '<V1'/);
  assert.throws(() => Literal.fromNpy(v1("<V1", "0102"), { elementType: "bf16" }), NpyError);
});

test("npy: every element type round-trips through toNpy/fromNpy", () => {
  const types: ElementType[] = ["pred", "s2", "s4", "s8", "s16", "s32", "s64", "u2", "u4", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
    "c64", "c128", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn"];
  for (const t of types) {
    const lit = Literal.fromValues(t, [2, 3], [1, 0, 1, 1, 0, 1].map((x, i) => (t === "pred" ? x === 1 : t.endsWith("64") && t[0] !== "f" && t[0] !== "c" ? BigInt(x) : x + (i % 2))));
    for (const fortranOrder of [false, true]) {
      const back = Literal.fromNpy(lit.toNpy({ fortranOrder }), { elementType: t });
      assert.deepEqual(back.toNested(), lit.toNested(), `${t} fortran=${fortranOrder}`);
    }
  }
});

test("npy: truncated and malformed files are NpyErrors", () => {
  const f4 = fromHex(NUMPY.f4);
  const bad = (bytes: Uint8Array, re: RegExp, options = {}): void => {
    assert.throws(() => Literal.fromNpy(bytes, options), (e: unknown) => e instanceof NpyError && re.test(e.message), re.source);
  };
  bad(f4.subarray(0, 4), /truncated/);
  bad(f4.subarray(0, 100), /truncated: the header needs 128 bytes/);
  bad(f4.subarray(0, f4.length - 1), /needs 24 data bytes, the file has 23/);
  bad(Uint8Array.from([...f4, 0]), /1 bytes after the array data/);
  bad(fromHex("00" + NUMPY.f4.slice(2)), /not a \.npy file/);
  bad(f4, /holds f32 .* expected f64/, { elementType: "f64" });
  const h = (dict: string): Uint8Array => fromHex(header(dict));
  bad(h("{'descr': '<U3', 'fortran_order': False, 'shape': (0,), }"), /unsupported dtype '<U3'/);
  bad(h("{'descr': '<f16', 'fortran_order': False, 'shape': (0,), }"), /long double/);
  bad(h("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (0,), }"), /malformed|structured/);
  bad(h("{'descr': '<f4', 'shape': (0,), }"), /exactly the keys/);
  bad(h("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }"), /malformed|bad dimension/);
  bad(h("{'descr': '<f4', 'fortran_order': 1, 'shape': (0,), }"), /malformed/);
  bad(Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 9, 0, 0, 0]), /version 9/);
});

test("npz: numpy's savez and savez_compressed archives read", () => {
  const arrays = readNpz(fromHex(NUMPY.npz));
  assert.deepEqual([...arrays.keys()], ["a", "b"]);
  assert.deepEqual(arrays.get("a")!.toNested(), [1, 2]);
  assert.deepEqual(arrays.get("b")!.toNested(), [[true]]);
  const x = readNpz(fromHex(NUMPY.npzc)).get("x")!;
  assert.equal(x.elementType, "f32");
  assert.deepEqual(x.dimensions, [3000]);
  assert.ok(x.toNumbers().every((v, i) => v === i % 7));
});

test("npz: writeNpz round-trips, and zip readers agree (entry names, CRC)", () => {
  const a = Literal.from("f32", [[1, 2]]);
  const b = Literal.from("s8", [-1, 5, 7]);
  const zip = writeNpz([["arr_0", a], ["näme", b]]);
  const entries = readZip(zip);
  assert.deepEqual(entries.map((e) => e.name), ["arr_0.npy", "näme.npy"]);
  assert.equal(toHex(entries[0]!.data), toHex(a.toNpy()));
  const back = readNpz(zip);
  assert.deepEqual(back.get("näme")!.toNested(), [-1, 5, 7]);
  assert.throws(() => writeNpz([["x", a], ["x", b]]), NpyError);
});

test("npz: truncated and corrupt archives are typed errors", () => {
  const zip = fromHex(NUMPY.npz);
  assert.throws(() => readNpz(zip.subarray(0, zip.length - 5)), ZipError);
  assert.throws(() => readNpz(zip.subarray(0, 10)), /truncated/);
  const corrupt = zip.slice();
  corrupt[185] = corrupt[185]! ^ 1; // inside a's data: the CRC no longer matches
  assert.throws(() => readNpz(corrupt), (e: unknown) => e instanceof ZipError && /CRC-32/.test(e.message));
  const deflated = fromHex(NUMPY.npzc);
  const cut = deflated.slice();
  cut.fill(0xff, 60, 80); // the compressed stream is garbage
  assert.throws(() => readNpz(cut), ZipError);
});

test("inflate: agrees with zlib on random, repetitive and mixed data at every level", () => {
  let seed = 12345;
  const rand = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const samples: Uint8Array[] = [
    new Uint8Array(0),
    Uint8Array.from({ length: 70000 }, rand), // incompressible: stored blocks
    Uint8Array.from({ length: 200000 }, (_, i) => (i * 7) % 251), // long matches
    Uint8Array.from({ length: 100000 }, (_, i) => (rand() < 40 ? rand() : i % 3)), // skewed literals: long codes
    Uint8Array.from(Buffer.from("abc".repeat(1000) + "xyz")),
  ];
  for (const data of samples) {
    for (const level of [0, 1, 6, 9]) {
      const z = deflateRawSync(data, { level });
      assert.equal(toHex(inflateRaw(Uint8Array.from(z), data.length)), toHex(data), `level ${level}, ${data.length} bytes`);
    }
  }
  const z = Uint8Array.from(deflateRawSync(samples[2]!));
  assert.throws(() => inflateRaw(z.subarray(0, z.length - 3), samples[2]!.length), InflateError);
  assert.throws(() => inflateRaw(z, samples[2]!.length - 1), InflateError);
  assert.throws(() => inflateRaw(z, samples[2]!.length + 1), InflateError);
  assert.throws(() => inflateRaw(Uint8Array.of(0x07), 0), InflateError); // block type 3
});

test("crc32: the check value of '123456789' is 0xCBF43926", () => {
  assert.equal(crc32(Uint8Array.from(Buffer.from("123456789"))), 0xcbf43926);
});
