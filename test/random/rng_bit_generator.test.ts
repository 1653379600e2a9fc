// RngBitGenerator: XLA's layout of counters and outputs around the Threefry and
// Philox ciphers. Expected values are built from Random123's known answers (the cipher
// outputs for a given key and counter) placed where XLA's expander puts them, and one
// published XLA run (r-xla/anvil's documentation: state [0, 0], THREE_FRY, u32[3,2]).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, arrayShape, parameter, rngBitGenerator, ShapeError, type RandomAlgorithm,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

function run(algorithm: RandomAlgorithm, state: readonly bigint[], type: Parameters<typeof arrayShape>[0], dims: number[]): [bigint[], Literal] {
  const b = new XlaBuilder("rbg");
  const s = parameter(b, 0, arrayShape("u64", [state.length]));
  const out = rngBitGenerator(algorithm, s, arrayShape(type, dims));
  const c = b.build(out);
  const result = evaluate(c, [Literal.fromValues("u64", [state.length], state)]);
  assert.deepEqual(result.shape, c.root.shape);
  return [result.elements[0]!.values() as bigint[], result.elements[1]!];
}

const join = (lo: number, hi: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);
// Random123 Threefry2x32-20 vector: counter (243f6a88, 85a308d3), key (13198a2e, 03707344).
const TF_KEY = join(0x13198a2e, 0x03707344);
const TF_CTR = join(0x243f6a88, 0x85a308d3);
const TF_OUT = [0xc4923a9c, 0x483df7a0];
// Random123 Philox4x32-10 vector: counter (243f6a88, 85a308d3, 13198a2e, 03707344), key (a4093822, 299f31d0).
const PH_KEY = join(0xa4093822, 0x299f31d0);
const PH_LOW = join(0x243f6a88, 0x85a308d3);
const PH_HIGH = join(0x13198a2e, 0x03707344);
const PH_OUT = [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1];

test("THREE_FRY u32[3,2] from state [0,0] matches XLA's published output", () => {
  const [state, bits] = run("THREE_FRY", [0n, 0n], "u32", [3, 2]);
  assert.deepEqual(state, [0n, 3n]);
  // Printed by XLA to 5 significant digits.
  const expected = [1.7973e9, 2.5791e9, 1.3515e9, 3.2358e9, 1.6886e9, 4.2293e9];
  bits.toNumbers().forEach((v, i) => assert.ok(Math.abs(v - expected[i]!) < 5e5, `element ${i}: ${v}`));
  // The first row is exactly the Threefry known answer for key 0, counter 0.
  assert.deepEqual(bits.toNumbers().slice(0, 2), [0x6b200159, 0x99ba4efe]);
});

test("THREE_FRY u64: element i encrypts counter + i, out0 | out1 << 32", () => {
  const [state, bits] = run("THREE_FRY", [TF_KEY, TF_CTR], "u64", [1]);
  assert.deepEqual(bits.values(), [join(TF_OUT[0]!, TF_OUT[1]!)]);
  assert.deepEqual(state, [TF_KEY, TF_CTR + 1n]);
});

test("THREE_FRY u32 scalar takes the first word; s32 reinterprets the bits", () => {
  const [state, bits] = run("THREE_FRY", [TF_KEY, TF_CTR], "u32", []);
  assert.deepEqual(bits.values(), [TF_OUT[0]]);
  assert.deepEqual(state, [TF_KEY, TF_CTR + 1n]);
  const [, signed] = run("THREE_FRY", [TF_KEY, TF_CTR], "s32", []);
  assert.deepEqual(signed.values(), [TF_OUT[0]! | 0]);
});

test("THREE_FRY u32[2] uses one block for both elements; u32[1,2] and u32[2,1] too", () => {
  for (const dims of [[2], [1, 2], [2, 1]]) {
    const [state, bits] = run("THREE_FRY", [TF_KEY, TF_CTR], "u32", dims);
    assert.deepEqual(bits.toNumbers(), TF_OUT, `dims ${dims}`);
    assert.deepEqual(state, [TF_KEY, TF_CTR + 1n]);
  }
});

test("THREE_FRY f32 and u16/u8 outputs are the same bits reinterpreted or truncated", () => {
  const [, f] = run("THREE_FRY", [TF_KEY, TF_CTR], "f32", [2]);
  const asF32 = new Float32Array(new Uint32Array(TF_OUT).buffer);
  assert.deepEqual(f.toNumbers(), [...asF32]);
  const [, u16] = run("THREE_FRY", [TF_KEY, TF_CTR], "u16", [2]);
  assert.deepEqual(u16.toNumbers(), TF_OUT.map((w) => w & 0xffff));
  const [, u8] = run("THREE_FRY", [TF_KEY, TF_CTR], "u8", [2]);
  assert.deepEqual(u8.toNumbers(), TF_OUT.map((w) => w & 0xff));
  const [, s4] = run("THREE_FRY", [TF_KEY, TF_CTR], "s4", [2]);
  assert.deepEqual(s4.toNumbers(), TF_OUT.map((w) => ((w & 0xf) ^ 8) - 8));
});

test("THREE_FRY counter wraps around 2^64", () => {
  const max = (1n << 64n) - 1n;
  const [state] = run("THREE_FRY", [0n, max], "u64", [3]);
  assert.deepEqual(state, [0n, 2n]);
});

test("THREE_FRY odd shapes split the first largest dimension: u32[3] uses 2 blocks", () => {
  const [state, bits] = run("THREE_FRY", [0n, 0n], "u32", [3]);
  assert.deepEqual(state, [0n, 2n]);
  assert.deepEqual(bits.toNumbers().slice(0, 2), [0x6b200159, 0x99ba4efe]);
});

test("PHILOX u32[4] with a u64[3] state: counter (state[1], state[2]), key state[0]", () => {
  const [state, bits] = run("PHILOX", [PH_KEY, PH_LOW, PH_HIGH], "u32", [4]);
  assert.deepEqual(bits.toNumbers(), PH_OUT);
  assert.deepEqual(state, [PH_KEY, PH_LOW + 1n, PH_HIGH]);
});

test("PHILOX u32[2,3] takes 4 words per block, row-major, and advances by 2 blocks", () => {
  const [state, bits] = run("PHILOX", [PH_KEY, PH_LOW, PH_HIGH], "u32", [2, 3]);
  assert.deepEqual(bits.toNumbers().slice(0, 4), PH_OUT);
  assert.deepEqual(state, [PH_KEY, PH_LOW + 2n, PH_HIGH]);
});

test("PHILOX u64[2]: out0 | out1 << 32, then out2 | out3 << 32", () => {
  const [state, bits] = run("PHILOX", [PH_KEY, PH_LOW, PH_HIGH], "u64", [2]);
  assert.deepEqual(bits.values(), [join(PH_OUT[0]!, PH_OUT[1]!), join(PH_OUT[2]!, PH_OUT[3]!)]);
  assert.deepEqual(state, [PH_KEY, PH_LOW + 1n, PH_HIGH]);
});

test("PHILOX with a u64[2] state uses the key as the counter's high word; DEFAULT is PHILOX", () => {
  // Counter (low, high) = (state[1], state[0]); choose the key so that it equals PH_HIGH.
  const [state, bits] = run("PHILOX", [PH_HIGH, PH_LOW], "u32", [4]);
  const [, viaThree] = run("PHILOX", [PH_HIGH, PH_LOW, PH_HIGH], "u32", [4]);
  assert.deepEqual(bits.toNumbers(), viaThree.toNumbers());
  assert.deepEqual(state, [PH_HIGH, PH_LOW + 1n]);
  const [defaultState, viaDefault] = run("DEFAULT", [PH_HIGH, PH_LOW], "u32", [4]);
  assert.deepEqual(viaDefault.toNumbers(), bits.toNumbers());
  assert.deepEqual(defaultState, state);
});

test("PHILOX 128-bit counter carries into the high word", () => {
  const max = (1n << 64n) - 1n;
  const [state] = run("PHILOX", [1n, max, 5n], "u32", [8]);
  assert.deepEqual(state, [1n, 1n, 6n]);
});

test("empty outputs leave the counter alone", () => {
  assert.deepEqual(run("PHILOX", [1n, 2n, 3n], "u32", [0])[0], [1n, 2n, 3n]);
  assert.deepEqual(run("THREE_FRY", [1n, 2n], "u64", [0, 4])[0], [1n, 2n]);
});

test("shape rules: state sizes per algorithm and output types", () => {
  const b = new XlaBuilder("bad");
  const s3 = parameter(b, 0, arrayShape("u64", [3]));
  const s2f = parameter(b, 1, arrayShape("f32", [2]));
  assert.throws(() => rngBitGenerator("THREE_FRY", s3, arrayShape("u32", [2])), ShapeError);
  assert.throws(() => rngBitGenerator("PHILOX", s2f, arrayShape("u32", [2])), /u64 vector/);
  const s2 = parameter(b, 2, arrayShape("u64", [2]));
  assert.throws(() => rngBitGenerator("PHILOX", s2, arrayShape("pred", [2])), /not supported/);
  assert.throws(() => rngBitGenerator("PHILOX", s2, arrayShape("c64", [2])), /not supported/);
  assert.equal(rngBitGenerator("PHILOX", s3, arrayShape("bf16", [2])).shape.kind, "tuple");
});
