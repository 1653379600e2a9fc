// np.save / np.savez / np.load (.npy and .npz) and safetensors: round trips, and a
// safetensors file built here byte by byte from the format's definition.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, safetensors, FrontendError, type FrontendArray } from "../../src/index.js";

test("np.save and np.load: a .npy file round-trips dtype, shape and values; np.savez an .npz of named arrays", () => {
  const x = np.reshape(np.arange(6, { dtype: "float64" }), [2, 3]);
  const bytes = np.save(x);
  // The .npy magic and version 1.0.
  assert.deepEqual([...bytes.subarray(0, 8)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  const back = np.load(bytes) as FrontendArray;
  assert.equal(back.dtype, "float64");
  assert.deepEqual(back.tolist(), [[0, 1, 2], [3, 4, 5]]);
  const archive = np.savez({ w: np.ones([2], { dtype: "bfloat16" }), k: np.array([1n, -2n], { dtype: "int64" }) });
  const loaded = np.load(archive.buffer.slice(archive.byteOffset, archive.byteOffset + archive.byteLength) as ArrayBuffer) as Record<string, FrontendArray>;
  assert.deepEqual(Object.keys(loaded).sort(), ["k", "w"]);
  assert.equal(loaded.w!.dtype, "bfloat16");
  assert.deepEqual(loaded.k!.tolist(), [1n, -2n]);
  assert.throws(() => np.load("x.npy" as never), FrontendError);
});

/** A safetensors file by hand: length, JSON header, then the tensors' little-endian bytes. */
function handMade(header: object, data: Uint8Array, pad = 0): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header) + " ".repeat(pad));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

test("safetensors.load reads a file built from the format's definition (aligned and unaligned tensors)", () => {
  const data = new Uint8Array(4 * 4 + 2 * 2 + 1);
  const dv = new DataView(data.buffer);
  [1.5, -2, 3.25, 4].forEach((v, i) => dv.setFloat32(4 * i, v, true));
  [7, -9].forEach((v, i) => dv.setInt16(16 + 2 * i, v, true));
  data[20] = 1;
  const header = {
    __metadata__: { format: "pt" },
    w: { dtype: "F32", shape: [2, 2], data_offsets: [0, 16] },
    s: { dtype: "I16", shape: [2], data_offsets: [16, 20] },
    flag: { dtype: "BOOL", shape: [], data_offsets: [20, 21] },
  };
  // Header lengths that leave the data aligned and that do not (one space more).
  for (const pad of [0, 1]) {
    const t = safetensors.load(handMade(header, data, pad));
    assert.deepEqual(Object.keys(t).sort(), ["flag", "s", "w"]);
    assert.equal(t.w!.dtype, "float32");
    assert.deepEqual(t.w!.tolist(), [[1.5, -2], [3.25, 4]]);
    assert.deepEqual(t.s!.tolist(), [7, -9]);
    assert.equal(t.flag!.item(), true);
  }
  assert.throws(() => safetensors.load(handMade({ w: { dtype: "F32", shape: [3], data_offsets: [0, 8] } }, data)), FrontendError);
  assert.throws(() => safetensors.load(handMade({ w: { dtype: "F4", shape: [1], data_offsets: [0, 1] } }, data)), FrontendError);
  assert.throws(() => safetensors.load(new Uint8Array(4)), FrontendError);
});

test("safetensors.save writes what safetensors.load reads back, with an 8-byte-aligned header", () => {
  const arrays = { b: np.array([1, 2, 3], { dtype: "int32" }), a: np.array([[0.5, 1]], { dtype: "float16" }) };
  const file = safetensors.save(arrays, { note: "test" });
  const headerLength = Number(new DataView(file.buffer).getBigUint64(0, true));
  assert.equal(headerLength % 8, 0);
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + headerLength))) as Record<string, { dtype: string; data_offsets: number[] }>;
  assert.deepEqual(header.a!.dtype, "F16");
  assert.deepEqual(header.a!.data_offsets, [0, 4]);
  assert.deepEqual(header.b!.data_offsets, [4, 16]);
  const back = safetensors.load(file);
  assert.deepEqual(back.a!.tolist(), [[0.5, 1]]);
  assert.deepEqual(back.b!.tolist(), [1, 2, 3]);
});
