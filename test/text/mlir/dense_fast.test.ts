// The fast paths for large dense constants (hex blobs, lists of plain numbers) give
// exactly what the general parser gives: a `//` comment inside the list makes the fast
// scanner give up, so the same numbers parse both ways. Decimal f32 rounds once, from
// the decimal (the cases sit next to f32 midpoints, worked out by hand below).
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseMlirLiteral, ParseError, type Literal } from "../../../src/index.js";
import { decimalToF32 } from "../../../src/types/decimal_float.js";

const bitsOf = (lit: Literal): string => Buffer.from(lit.data.buffer, lit.data.byteOffset, lit.data.byteLength).toString("hex");

function bothWays(body: string, type: string): [Literal, Literal] {
  const fast = parseMlirLiteral(`dense<${body}> : ${type}`);
  const general = parseMlirLiteral(`dense<[ // general path\n${body.slice(1)}> : ${type}`);
  return [fast, general];
}

test("dense fast path: decimal lists parse exactly as the general path does", () => {
  let seed = 7;
  const rand = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const values = Array.from({ length: 3000 }, (_, i) => {
    const x = (rand() - 0.5) * 10 ** Math.floor(rand() * 80 - 40);
    const forms = [x.toExponential(6), String(x), x.toPrecision(9), x.toFixed(3), "-0.0", "1", "+2.5e3", "0.000001", "123456789012345678901234567890"];
    return forms[i % forms.length]!;
  });
  const rows = Array.from({ length: 30 }, (_, r) => `[${values.slice(r * 100, r * 100 + 100).join(", ")}]`).join(",\n ");
  for (const t of ["f32", "f64", "f16", "bf16", "f8E4M3FN"]) {
    const [fast, general] = bothWays(`[${rows}]`, `tensor<30x100x${t}>`);
    assert.equal(bitsOf(fast), bitsOf(general), t);
  }
  const ints = `[${Array.from({ length: 200 }, (_, i) => String((i * 7919) % 256 - 128)).join(", ")}]`;
  for (const t of ["i8", "i16", "i32", "i64", "ui64"]) {
    if (t.startsWith("ui")) continue;
    const [fast, general] = bothWays(ints, `tensor<200x${t}>`);
    assert.equal(bitsOf(fast), bitsOf(general), t);
  }
  const [a, b] = bothWays("[[], []]", "tensor<2x0xf32>");
  assert.deepEqual(a.dimensions, b.dimensions);
});

test("dense fast path: mistakes are reported by the general parser, with positions", () => {
  const err = (text: string, re: RegExp): void => assert.throws(() => parseMlirLiteral(text), (e: unknown) => e instanceof ParseError && re.test(e.message), text);
  err("dense<[1.0, 2.0, 3.0]> : tensor<2xf32>", /dimension 0 has 2 elements but the list has 3/);
  err("dense<[[1.0], [2.0, 3.0]]> : tensor<2x1xf32>", /dimension 1 has 1 elements but the list has 2/);
  err("dense<[1.5, 2]> : tensor<2xi32>", /1\.5 is not an integer/);
  err("dense<[1, 300]> : tensor<2xi8>", /300 is out of range for s8/);
  err("dense<[1.0 2.0]> : tensor<2xf32>", /expected/);
  err("dense<[1.0,]> : tensor<1xf32>", /expected a dense element/);
  err('dense<"0x0000803G"> : tensor<1xf32>', /hex blob/);
  err('dense<"0x0000803F00"> : tensor<1xf32>', /hex blob has 5 bytes/);
});

test("dense hex blobs: little-endian bytes, upper and lower case", () => {
  assert.deepEqual(parseMlirLiteral('dense<"0x0000803F000000c0"> : tensor<2xf32>').toNested(), [1, -2]);
  assert.deepEqual(parseMlirLiteral('dense<"0x0100FFFF"> : tensor<2xi16>').toNested(), [1, -1]);
  // Large blobs take Node's decoder: the same bytes, and a bad digit anywhere is still an error.
  const bytes = Uint8Array.from({ length: 8000 }, (_, i) => (i * 37) % 256);
  const blob = Buffer.from(bytes).toString("hex");
  const lit = parseMlirLiteral(`dense<"0x${blob}"> : tensor<8000xui8>`);
  assert.deepEqual(Array.from(lit.data as Uint8Array), Array.from(bytes));
  for (const at of [0, 7001, blob.length - 1]) {
    const bad = `${blob.slice(0, at)}g${blob.slice(at + 1)}`;
    assert.throws(() => parseMlirLiteral(`dense<"0x${bad}"> : tensor<8000xui8>`), ParseError, `bad digit at ${at}`);
  }
});

test("decimal f32 rounds once: decimals beside an f32 midpoint", () => {
  // 1 + 2^-24 = 1.000000059604644775390625 is halfway between the f32 values 1 and 1 + 2^-23.
  const mid = "1.000000059604644775390625";
  const up = 1 + 2 ** -23;
  assert.equal(decimalToF32(mid), 1); // a tie: to even
  assert.equal(decimalToF32(`${mid}0000000001`), up); // above the midpoint, although its nearest double is the midpoint
  assert.equal(Math.fround(Number(`${mid}0000000001`)), 1); // (what rounding twice gives)
  assert.equal(decimalToF32("1.0000000596046447753906249999"), 1); // below it
  assert.equal(decimalToF32(`-${mid}0000000001`), -up);
  // 2^-149 · 1.5 (the midpoint between the two smallest subnormals 2^-149 and 2^-148) and just above it.
  const subMid = "2.101947696487225606385594374934874196920392912814773657635602425834686624028790902229957282543182373046875e-45";
  assert.equal(decimalToF32(subMid), 2 ** -148); // tie to even: 2^-148 has the even pattern (2)
  assert.equal(decimalToF32(subMid.replace("e-45", "1e-45")), 2 ** -148);
  assert.equal(decimalToF32(subMid.replace("046875e-45", "046874e-45")), 2 ** -149);
  assert.equal(decimalToF32("0.1"), Math.fround(0.1));
  const lit = parseMlirLiteral(`dense<[${mid}0000000001, ${mid}]> : tensor<2xf32>`);
  assert.deepEqual(lit.toNested(), [up, 1]);
  const general = parseMlirLiteral(`dense<[ // general\n ${mid}0000000001, ${mid}]> : tensor<2xf32>`);
  assert.deepEqual(general.toNested(), [up, 1]);
});
