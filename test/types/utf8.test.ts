// The core's UTF-8 codec against Node's TextEncoder/TextDecoder (the WHATWG codec),
// on random text and on random byte strings rich in malformed sequences.

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeUtf8, encodeUtf8 } from "../../src/types/utf8.js";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

test("encodeUtf8 equals TextEncoder, surrogates and astral characters included", () => {
  const r = rng(7);
  const te = new TextEncoder();
  for (let t = 0; t < 5000; t++) {
    let s = "";
    for (let i = 0, n = Math.floor(r() * 6); i < n; i++) {
      const k = r();
      s += k < 0.8 ? String.fromCharCode(Math.floor(r() * (k < 0.3 ? 0x80 : k < 0.5 ? 0x800 : 0x10000)))
        : k < 0.9 ? String.fromCodePoint(0x10000 + Math.floor(r() * 0xfffff)) : String.fromCharCode(0xd800 + Math.floor(r() * 0x800));
    }
    assert.deepEqual(encodeUtf8(s), [...te.encode(s)], JSON.stringify(s));
  }
});

test("decodeUtf8 equals TextDecoder on valid and malformed bytes", () => {
  const r = rng(11);
  const td = new TextDecoder();
  for (let t = 0; t < 5000; t++) {
    const bytes = Array.from({ length: Math.floor(r() * 9) }, () => (r() < 0.6 ? 0x80 + Math.floor(r() * 128) : Math.floor(r() * 256)));
    assert.equal(decodeUtf8(bytes), td.decode(new Uint8Array(bytes)), JSON.stringify(bytes));
  }
  assert.equal(decodeUtf8([0xf0, 0x9f, 0x98, 0x80]), "\u{1f600}");
  assert.equal(decodeUtf8([0xed, 0xa0, 0x80]), "\ufffd\ufffd\ufffd");
});
