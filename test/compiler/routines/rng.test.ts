// Compiled rng-bit-generator against the interpreter, bit for bit: Philox (u64[2] and
// u64[3] states, counters that carry into the high word) and Threefry (the halved
// dimension, odd sizes, scalars), 8- to 64-bit outputs.
import { test } from "node:test";
import { XlaBuilder, arrayShape, parameter, rngBitGenerator, type ElementType } from "../../../src/index.js";
import type { RandomAlgorithm } from "../../../src/ir/attributes.js";
import { Literal as L } from "../../../src/types/literal.js";
import { checkCompiled, checkRoutine, rng } from "./harness.js";

test("rng-bit-generator: Philox and Threefry, random shapes and types, bit for bit", async () => {
  const next = rng(51);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const word = (): bigint => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
  for (let trial = 0; trial < 60; trial++) {
    const algorithm: RandomAlgorithm = (["PHILOX", "THREE_FRY", "DEFAULT"] as const)[trial % 3];
    const t: ElementType = (["u32", "f32", "u64", "s64", "u8", "s16", "f64", "s32"] as const)[trial % 8];
    const rank = trial % 4;
    const dims = Array.from({ length: rank }, () => int(1, 9));
    const words = algorithm === "THREE_FRY" || trial % 2 === 0 ? 2 : 3;
    const state = Array.from({ length: words }, word);
    // Counters near 2^64 so that the 128-bit increment carries.
    if (trial % 5 === 0) state[1] = (1n << 64n) - BigInt(int(1, 3));
    const b = new XlaBuilder("rbg");
    const s = parameter(b, 0, arrayShape("u64", [words]), "state");
    const c = b.build(rngBitGenerator(algorithm, s, arrayShape(t, dims)));
    checkRoutine(c, [L.fromValues("u64", [words], state)], `${algorithm} ${t}[${dims}] state ${words}`);
  }
});

test("rng-bit-generator compiles and matches end to end", async () => {
  const b = new XlaBuilder("rbg");
  const s = parameter(b, 0, arrayShape("u64", [2]), "state");
  const c = b.build(rngBitGenerator("THREE_FRY", s, arrayShape("u32", [6, 33])));
  await checkCompiled(c, [L.fromValues("u64", [2], [42n, 7n])], "threefry u32");
});
