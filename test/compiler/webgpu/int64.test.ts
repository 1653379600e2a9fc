// s64 and u64 on the WebGPU backend (webgpu/wgsl_int64.ts: each value a pair of 32-bit
// words) against the interpreter, bit for bit: every elementwise op of the integer
// families, compares, selects, clamp and the converts to and from the other types, over
// every pair of edge values (0, ±1, the types' bounds, 2^32 ± 1, low words that carry
// or borrow, shift counts about 32 and 64) and random pairs; iota, and the reductions
// (add, multiply, max, min) along rows. Each program is a few kernels, so that
// SwiftShader compiles few pipelines; each must run without a host step.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import {
  XlaBuilder, parameter, binaryOp, unaryOp, compare, select, convertElementType, reduce, constantR0, tuple, clamp, iota, add, mul,
} from "../../../src/index.js";
import type { XlaOp } from "../../../src/builder/xla_builder.js";
import type { Computation } from "../../../src/ir/computation.js";
import type { BinaryOpcode, UnaryOpcode } from "../../../src/ir/opcodes.js";
import type { ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { arrayShape } from "../../../src/types/shape.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const TWO_32 = 2n ** 32n;
const S64_MIN = -(2n ** 63n);
const S64_MAX = 2n ** 63n - 1n;

/** Edge values, as s64 (read as u64 where the type is: their 64-bit patterns). */
const EDGES: readonly bigint[] = [
  0n, 1n, -1n, 2n, -2n, 3n, 7n, S64_MIN, S64_MAX, S64_MIN + 1n, S64_MAX - 1n,
  TWO_32, TWO_32 - 1n, TWO_32 + 1n, -TWO_32, -TWO_32 - 1n, -TWO_32 + 1n, 2n ** 31n, -(2n ** 31n), 2n ** 31n - 1n,
  31n, 32n, 33n, 63n, 64n, 65n, 0x0123456789abcdefn, -0x0fedcba987654321n, 0x7fffffff80000000n, 1000000007n, -(2n ** 53n) - 1n,
];

const random64 = (next: () => number): bigint => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));

/** Every pair of edge values, then random pairs (half of them with a small second operand: shift counts, divisors and exponents that matter). */
function pairs(count: number): { xs: bigint[]; ys: bigint[] } {
  const xs: bigint[] = [];
  const ys: bigint[] = [];
  for (const x of EDGES) for (const y of EDGES) { xs.push(x); ys.push(y); }
  const next = rng(64);
  while (xs.length < count) {
    xs.push(BigInt.asIntN(64, random64(next)));
    ys.push(xs.length % 2 === 0 ? BigInt(Math.floor(next() * 80)) - 8n : BigInt.asIntN(64, random64(next)));
  }
  return { xs, ys };
}

const N = 1536;
const { xs: XS, ys: YS } = pairs(N);

/** A rank-1 literal of s64 or u64 from values taken as 64-bit patterns. */
function int64Literal(t: "s64" | "u64", values: readonly bigint[]): Literal {
  const data = t === "s64" ? BigInt64Array.from(values, (v) => BigInt.asIntN(64, v)) : BigUint64Array.from(values, (v) => BigInt.asUintN(64, v));
  return Literal.fromStorage(arrayShape(t, [values.length]), data);
}

/** The first element where two results differ (an f32 NaN equal to any NaN: the interpreter's carry no payload), or undefined. */
function difference(want: Literal, got: Literal, inputs: readonly Literal[]): string | undefined {
  const w = want.data;
  const g = got.data;
  if (w.length !== g.length) return `${w.length} elements expected, ${g.length} got`;
  for (let i = 0; i < w.length; i++) {
    if (typeof w[i] === "number" && Number.isNaN(w[i]) && Number.isNaN(g[i])) continue;
    if (!Object.is(w[i], g[i])) {
      const operands = inputs.map((x) => String(x.data[i % x.data.length])).join(", ");
      return `element ${i} (operands ${operands}): expected ${String(w[i])}, got ${String(g[i])}`;
    }
  }
  return undefined;
}

const BINARY: readonly BinaryOpcode[] = [
  "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "and", "or", "xor", "shiftLeft", "shiftRightArithmetic", "shiftRightLogical",
];
const UNARY: readonly UnaryOpcode[] = ["negate", "abs", "sign", "not", "clz", "popcnt"];
/** LE and GT are GE and LT with the operands swapped (wgsl_int64.ts int64Compare): not compiled again. */
const COMPARES = ["EQ", "NE", "LT", "GE"] as const;
/**
 * The ops of u64 whose WGSL differs from s64's (wgsl_int64.ts: the others are one code
 * for both types, the same pair of words), so that u64's test compiles fewer kernels.
 */
const UNSIGNED_FORMS: ReadonlySet<string> = new Set(["divide", "remainder", "power", "maximum", "minimum", "shiftRightArithmetic", "LT", "GE", "clamp"]);

/** Runs `ops` (named) of program `b` on args, on the GPU and the interpreter; every op is a kernel's (no host step), every result the interpreter's bits. */
async function check(b: XlaBuilder, entries: readonly [string, XlaOp][], args: readonly Literal[], what: string): Promise<void> {
  const { want, got, exe } = await both(b.build(tuple(b, entries.map((e) => e[1]))), args);
  assert.deepEqual(exe.stats.interpreted, [], `${what}: everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  assert.match(exe.dump(), / 0 host step\(s\)/);
  entries.forEach(([name, _], k) => assert.equal(difference(want.elements[k]!, got.elements[k]!, args), undefined, `${what} ${name}`));
}

for (const t of ["s64", "u64"] as const) {
  const what = t === "s64" ? "every integer op, compares, select and clamp" : "the ops whose WGSL is not s64's (division, power, max, min, arithmetic shift, order compares) and clamp";
  test(`${t}: ${what} over edge and random pairs, bit for bit`, { skip }, async () => {
    const b = new XlaBuilder(`${t}_ops`);
    const x = parameter(b, 0, arrayShape(t, [N]), "x");
    const y = parameter(b, 1, arrayShape(t, [N]), "y");
    const all: [string, () => XlaOp][] = [
      ...BINARY.map((op): [string, () => XlaOp] => [op, () => binaryOp(op, x, y)]),
      ...UNARY.map((op): [string, () => XlaOp] => [op, () => unaryOp(op, x)]),
      ...COMPARES.map((d): [string, () => XlaOp] => [d, () => compare(x, y, d)]),
      ["select", () => select(compare(x, y, "LT"), y, x)],
      ["clamp", () => clamp(y, x, binaryOp("add", y, constantR0(b, t, 1000n)))],
    ];
    const entries = all.filter(([name]) => t === "s64" || UNSIGNED_FORMS.has(name)).map(([name, build]): [string, XlaOp] => [name, build()]);
    await check(b, entries, [int64Literal(t, XS), int64Literal(t, YS)], t);
  });
}

/** The types each of s64 and u64 converts to (every float and pred; 32-bit and narrower integers, signed and not, split between them: one low-word code for both). */
const CONVERTS_TO: Readonly<Record<"s64" | "u64", readonly ElementType[]>> = { s64: ["f32", "f16", "bf16", "s32", "u8", "pred"], u64: ["f32", "f16", "bf16", "u32", "s16", "pred"] };

test("s64 and u64: converts to and from f32, f16, bf16, the narrower integers and pred, each other, and iota, bit for bit", { skip }, async () => {
  const b = new XlaBuilder("int64_converts");
  const s = parameter(b, 0, arrayShape("s64", [N]), "s");
  const u = parameter(b, 1, arrayShape("u64", [N]), "u");
  const f = parameter(b, 2, arrayShape("f32", [N]), "f");
  const i = parameter(b, 3, arrayShape("s32", [N]), "i");
  const entries: [string, XlaOp][] = [
    ...CONVERTS_TO.s64.map((to): [string, XlaOp] => [`s64 -> ${to}`, convertElementType(s, to)]),
    ...CONVERTS_TO.u64.map((to): [string, XlaOp] => [`u64 -> ${to}`, convertElementType(u, to)]),
    ["s64 -> u64", convertElementType(s, "u64")],
    ["u64 -> s64", convertElementType(u, "s64")],
    // From f32 (its saturation and NaN rules are per type) and iota to both; from the halves and the narrower integers (sign- or zero-extended) to one each.
    ...(["s64", "u64"] as const).flatMap((to): [string, XlaOp][] => [[`f32 -> ${to}`, convertElementType(f, to)], [`s32 -> ${to}`, convertElementType(i, to)], [`iota ${to}`, iota(b, to, N)]]),
    ["f16 -> s64", convertElementType(convertElementType(f, "f16"), "s64")],
    ["bf16 -> u64", convertElementType(convertElementType(f, "bf16"), "u64")],
    ["u32 -> s64", convertElementType(convertElementType(i, "u32"), "s64")],
    ["s8 -> u64", convertElementType(convertElementType(i, "s8"), "u64")],
    ["pred -> s64", convertElementType(compare(i, constantR0(b, "s32", 0), "GT"), "s64")],
  ];
  // Floats about the types' bounds (2^63, 2^64 and their neighbours, -2^63, past them, infinities, NaN), fractions, and random magnitudes up to 2^70 either sign.
  const next = rng(6464);
  const specials = [2 ** 63, -(2 ** 63), 2 ** 64, -(2 ** 64), 2 ** 63 * (1 - 2 ** -24), 2 ** 64 * (1 - 2 ** -24), 2 ** 62, 2 ** 32, 2 ** 32 - 256, -(2 ** 32), 2 ** 24 + 2, -0.75, 0.999, -1, 1.5, -0, 1e-40, Infinity, -Infinity, NaN, 2 ** 70, -(2 ** 70)];
  const floats = Float32Array.from({ length: N }, (_, k) => (k < specials.length ? specials[k]! : (next() < 0.5 ? -1 : 1) * 2 ** (next() * 70 - 2)));
  const ints = Int32Array.from({ length: N }, (_, k) => (k < EDGES.length ? Number(BigInt.asIntN(32, EDGES[k]!)) : Math.floor((next() - 0.5) * 2 ** 32)));
  // Rounding to f32, f16 and bf16 decided by bits far below the kept ones (sticky), ties to even both ways, and carries into the exponent.
  const rounding = [(1n << 40n) + (1n << 16n), (1n << 40n) + (1n << 16n) + 1n, (1n << 40n) + (3n << 16n), (1n << 63n) - 1n, (1n << 54n) - 1n, (1n << 35n) + (1n << 11n) + 1n];
  const wide = [...EDGES, ...rounding, ...XS].slice(0, N);
  await check(b, entries, [int64Literal("s64", wide), int64Literal("u64", wide), Literal.fromStorage(arrayShape("f32", [N]), floats), Literal.fromStorage(arrayShape("s32", [N]), ints)], "convert");
});

test("s64 and u64: row reductions (add of a fused product, multiply, max, min), bit for bit", { skip }, async () => {
  const b = new XlaBuilder("int64_reduce");
  const rows = 48;
  const cols = N / rows;
  const operands = { s64: parameter(b, 0, arrayShape("s64", [rows, cols]), "s"), u64: parameter(b, 1, arrayShape("u64", [rows, cols]), "u") };
  const reducer = (t: "s64" | "u64", op: BinaryOpcode): Computation => {
    const r = b.createSubBuilder(`${op}_${t}`);
    return r.build(binaryOp(op, parameter(r, 0, arrayShape(t, []), "p"), parameter(r, 1, arrayShape(t, []), "q")));
  };
  // Each reducer's code once (wgsl_int64.ts: max and min have a signed and an unsigned
  // form, the others one for both; and, or are the words' own ops), its identity as the
  // init value; each pipeline SwiftShader compiles grows with its reductions.
  const table: readonly ["s64" | "u64", BinaryOpcode, bigint][] = [["u64", "multiply", 1n], ["s64", "maximum", S64_MIN], ["u64", "minimum", 2n ** 64n - 1n]];
  const entries = table.map(([t, op, init]): [string, XlaOp] => [`${t} ${op}`, reduce(operands[t], constantR0(b, t, init), reducer(t, op), [1])]);
  // A sum (add's tree) of a fused product: the reduction's input computed in the kernel.
  const x = operands.s64;
  entries.push(["s64 add of a product", reduce(mul(x, add(x, constantR0(b, "s64", 3n))), constantR0(b, "s64", 0n), reducer("s64", "add"), [1])]);
  const values = [...EDGES, ...XS].slice(0, N);
  const literal = (t: "s64" | "u64"): Literal => Literal.fromStorage(arrayShape(t, [rows, cols]), int64Literal(t, values).data);
  await check(b, entries, [literal("s64"), literal("u64")], "reduce");
});
