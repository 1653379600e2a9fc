// The 8-, 6- and 4-bit float types in compiled loop fusions, against the interpreter,
// bit for bit (the stored bytes, so NaN signs and payloads count): every bit pattern
// through every conversion, f32/f64/integer values chosen at and around each format's
// rounding boundaries into each format, and every op on every pattern (pairs of
// patterns for the binary ops), SIMD and scalar kernels alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  abs, add, atan2, bitcastConvertType, cbrt, ceil, clamp, convertElementType, cos, div, ELEMENT_TYPES, eq, eqTotalOrder, erf, evaluate, exp, expm1,
  floor, isFinite, Literal, log, log1p, logistic, lt, ltTotalOrder, max, min, mul, neg, parameter, arrayShape, pow, rev, roundNearestAfz,
  reduce, constantR0, imag, real, constantLiteral, broadcastInDim, scalarReducer, roundNearestEven, rsqrt, select, sign, sin, sqrt, sub, tan, tanh, tuple, XlaBuilder, type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { encodeFloatBits, decodeFloatBits } from "../../../src/types/float_codec.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import type { WasmTarget } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { rng } from "../../support/prng.js";
import { compileSync } from "../../../src/compiler/index.js";
import { runKernel, SCALAR_TARGET, TARGET } from "./harness.js";

const NARROW: readonly ElementType[] = [
  "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f8e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn",
];

const patterns = (t: ElementType): number => 2 ** ELEMENT_TYPES[t].bitWidth;

/** A literal of type t holding the given bit patterns. */
function patternLiteral(t: ElementType, bits: readonly number[]): Literal {
  const data = new Uint8Array(bits);
  return Literal.fromStorage(arrayShape(t, [bits.length]), data);
}

function bytesOf(l: Literal): Uint8Array {
  return new Uint8Array(l.data.buffer, l.data.byteOffset, l.data.byteLength);
}

/**
 * Compiles c, runs it whole and in two halves, and compares the stored bytes with the
 * interpreter's: the first difference, or undefined.
 */
function bitMismatch(c: Computation, args: readonly Literal[], target: WasmTarget): string | undefined {
  const kernel = emitFusionKernel(c, target);
  if (isDeclined(kernel)) return `${c.name}: unsupported: ${kernel.declined}`;
  const expected = evaluate(c, args);
  const exp = expected.shape.kind === "tuple" ? expected.elements : [expected];
  const half = Math.floor(kernel.parallelExtent / 2);
  for (const ranges of [undefined, [[0, half], [half, kernel.parallelExtent]] as [number, number][]]) {
    const got = runKernel(kernel, target, c, args, ranges);
    for (let k = 0; k < got.length; k++) {
      const e = exp[k]!;
      const a = bytesOf(got[k]!);
      const b = bytesOf(e);
      assert.equal(a.length, b.length);
      const width = ELEMENT_TYPES[e.elementType].storageBytes * (e.elementType === "c64" || e.elementType === "c128" ? 2 : 1);
      for (let i = 0; i < a.length; i++) {
        if (a[i] === b[i]) continue;
        const el = Math.floor(i / width);
        const hex = (x: Uint8Array): string => [...x.subarray(el * width, el * width + width)].reverse().map((v) => v.toString(16).padStart(2, "0")).join("");
        const ins = args.map((x) => String(x.values()[el % x.values().length])).join(", ");
        return `${c.name} (${target.simd ? "simd" : "scalar"}) output ${k} (${e.elementType}) element ${el} of inputs (${ins}): got 0x${hex(a)}, interpreter 0x${hex(b)}`;
      }
    }
  }
  return undefined;
}

function checkBitExact(c: Computation, args: readonly Literal[], target: WasmTarget): void {
  const why = bitMismatch(c, args, target);
  if (why !== undefined) assert.fail(why);
}

/** Runs every check and fails with all the mismatches. */
function checkAll(checks: (() => string | undefined)[]): void {
  const failures = checks.map((c) => c()).filter((x) => x !== undefined);
  assert.deepEqual(failures, []);
}

function build(name: string, params: [ElementType, number][], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): Computation {
  const b = new XlaBuilder(name);
  const ps = params.map(([t, n], i) => parameter(b, i, arrayShape(t, [n])));
  return b.build(body(b, ps));
}

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);
const fromF32Bits = (b: number): number => {
  F32_BITS[0] = b >>> 0;
  return F32[0]!;
};
const f32BitsOf = (x: number): number => {
  F32[0] = x;
  return F32_BITS[0]!;
};

/**
 * f32 values at and around every format's rounding boundaries: each finite value of
 * each format, the midpoints between neighbours and the f32 values one step either side,
 * the same past the largest finite value, subnormals, specials and random patterns.
 */
function f32Probes(): number[] {
  const out = new Set<number>();
  const addAround = (x: number): void => {
    const b = f32BitsOf(x);
    for (const d of [-1, 0, 1]) {
      const v = fromF32Bits(b + d);
      out.add(f32BitsOf(v));
      out.add(f32BitsOf(-v));
    }
  };
  for (const t of NARROW) {
    const values = [...new Set(Array.from({ length: patterns(t) }, (_, p) => decodeFloatBits(t, p)).filter((v) => Number.isFinite(v) && v >= 0))].sort((a, b) => a - b);
    for (let i = 0; i < values.length; i++) {
      addAround(values[i]!);
      const next = i + 1 < values.length ? values[i + 1]! : 2 * values[i]! - (values[i - 1] ?? 0);
      addAround((values[i]! + next) / 2);
    }
    addAround(values[0]! / 2);
  }
  for (const b of [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xffa00001, 0x7f7fffff, 0xff7fffff, 1, 0x80000001, 0x007fffff, 0x00800000, 0x00400000]) out.add(b);
  const r = rng(5);
  for (let i = 0; i < 20000; i++) out.add(Math.floor(r() * 2 ** 32));
  return [...out].map(fromF32Bits);
}

/** An f32 literal of the values (NaN bits kept as they are in the Float32Array). */
function f32Literal(values: readonly number[]): Literal {
  return Literal.fromStorage(arrayShape("f32", [values.length]), new Float32Array(values));
}

/** f64 values just off the f32 probes (what an f64 → f32 → narrow double rounding gets wrong), and the probes themselves. */
function f64Probes(f32s: readonly number[]): Float64Array {
  const out: number[] = [];
  for (const x of f32s) {
    if (!Number.isFinite(x)) {
      out.push(x);
      continue;
    }
    out.push(x, x * (1 + 2 ** -40), x * (1 - 2 ** -40));
  }
  out.push(1e300, -1e300, 1e-300, -1e-300, 2 ** -127 * (1 + 2 ** -30), 2 ** -127 * (1 - 2 ** -30), 2 ** 127 * 1.5, 2 ** 127 * (1.5 + 2 ** -40));
  return new Float64Array(out);
}

for (const target of [TARGET, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";

  test(`${mode}: every bit pattern of every narrow float through every conversion`, () => {
    for (const t of NARROW) {
      const n = patterns(t);
      const bits = Array.from({ length: n }, (_, i) => i);
      const ints: ElementType[] = ELEMENT_TYPES[t].bitWidth === 8 ? ["u8", "s8"] : ELEMENT_TYPES[t].bitWidth === 4 ? ["u4", "s4"] : [];
      const c = build(`patterns_${t}`, [[t, n]], (b, [x]) => tuple(b, [
        convertElementType(x!, "f32"), convertElementType(x!, "f64"), convertElementType(x!, "f16"), convertElementType(x!, "bf16"),
        convertElementType(x!, "s32"), convertElementType(x!, "u8"), convertElementType(x!, "s64"), convertElementType(x!, "pred"),
        rev(x!, [0]), convertElementType(convertElementType(x!, "f32"), t), convertElementType(x!, t),
        ...NARROW.filter((u) => u !== t).map((u) => convertElementType(x!, u)),
        ...ints.map((u) => bitcastConvertType(x!, u)),
        ...ints.map((u) => bitcastConvertType(bitcastConvertType(x!, u), t)),
      ]));
      checkBitExact(c, [patternLiteral(t, bits)], target);
    }
  });

  test(`${mode}: f32 and f64 values around every rounding boundary into every narrow float`, () => {
    const f32s = f32Probes();
    const f64s = f64Probes(f32s);
    for (const t of NARROW) {
      const c = build(`from_f32_${t}`, [["f32", f32s.length]], (_b, [x]) => convertElementType(x!, t));
      checkBitExact(c, [f32Literal(f32s)], target);
      const d = build(`from_f64_${t}`, [["f64", f64s.length]], (_b, [x]) => convertElementType(x!, t));
      checkBitExact(d, [Literal.fromStorage(arrayShape("f64", [f64s.length]), f64s)], target);
    }
  });

  test(`${mode}: integers into every narrow float`, () => {
    const r = rng(9);
    const small = Array.from({ length: 600 }, (_, i) => i - 300);
    const big: number[] = [];
    for (let e = 0; e < 31; e++) for (const d of [-1, 0, 1, 2 ** Math.max(0, e - 4), 3 * 2 ** Math.max(0, e - 5)]) big.push(2 ** e + d, -(2 ** e) - d);
    for (let i = 0; i < 2000; i++) big.push(Math.floor((r() - 0.5) * 2 ** 32));
    const s32 = [...small, ...big].map((x) => Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, x)));
    const s64 = [...s32.map(BigInt), 2n ** 63n - 1n, -(2n ** 63n), 2n ** 40n + 1n, -(2n ** 40n) - 1n, 2n ** 24n + 1n, -(2n ** 24n) - 1n];
    for (const t of NARROW) {
      const inputs: [ElementType, Literal][] = [
        ["s32", Literal.fromValues("s32", [s32.length], s32)], ["u32", Literal.fromValues("u32", [s32.length], s32.map((x) => x >>> 0))],
        ["s8", Literal.fromValues("s8", [256], Array.from({ length: 256 }, (_, i) => i - 128))],
        ["u16", Literal.fromValues("u16", [600], small.map((x) => x + 300))], ["pred", Literal.fromValues("pred", [2], [false, true])],
      ];
      // 64-bit integers → e8m0 stay in the interpreter (no exact route through f32).
      if (ELEMENT_TYPES[t].float?.encoding !== "e8m0") {
        inputs.push(["s64", Literal.fromValues("s64", [s64.length], s64)], ["u64", Literal.fromValues("u64", [s64.length], s64.map((x) => BigInt.asUintN(64, x)))]);
      }
      for (const [from, lit] of inputs) {
        checkBitExact(build(`from_${from}_${t}`, [[from, lit.dimensions[0]!]], (_b, [x]) => convertElementType(x!, t)), [lit], target);
      }
    }
  });

  test(`${mode}: every unary op on every pattern of every narrow float`, () => {
    const ops: [string, (x: XlaOp) => XlaOp][] = [
      ["abs", abs], ["neg", neg], ["sqrt", sqrt], ["rsqrt", rsqrt], ["exp", exp], ["expm1", expm1], ["log", log], ["log1p", log1p],
      ["tanh", tanh], ["logistic", logistic], ["sin", sin], ["cos", cos], ["tan", tan], ["cbrt", cbrt], ["erf", erf], ["floor", floor],
      ["ceil", ceil], ["roundAfz", roundNearestAfz], ["roundEven", roundNearestEven], ["sign", sign], ["isFinite", isFinite],
      ["imag", imag], ["real", real], ["negZero", (x) => mul(x, neg(x))],
    ];
    checkAll(NARROW.flatMap((t) => {
      const n = patterns(t);
      const arg = patternLiteral(t, Array.from({ length: n }, (_, i) => i));
      return ops.map(([name, op]) => () => bitMismatch(build(`${name}_${t}`, [[t, n]], (_b, [x]) => op(x!)), [arg], target));
    }));
  });

  test(`${mode}: every binary op on every pair of patterns of every narrow float`, () => {
    const ops: [string, (x: XlaOp, y: XlaOp) => XlaOp][] = [
      ["add", add], ["sub", sub], ["mul", mul], ["div", div], ["max", max], ["min", min], ["pow", pow], ["atan2", atan2],
      ["lt", lt], ["eq", eq], ["ltTotal", ltTotalOrder], ["eqTotal", eqTotalOrder], ["select", (x, y) => select(lt(x, y), x, y)],
      ["clamp", (x, y) => clamp(x, y, max(x, y))],
    ];
    checkAll(NARROW.flatMap((t) => {
      const n = patterns(t);
      const xs: number[] = [];
      const ys: number[] = [];
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) { xs.push(i); ys.push(j); }
      const args = [patternLiteral(t, xs), patternLiteral(t, ys)];
      return ops.map(([name, op]) => () => bitMismatch(build(`${name}_${t}`, [[t, n * n], [t, n * n]], (_b, [x, y]) => op(x!, y!)), args, target));
    }));
  });

  test(`${mode}: elementwise chains on every narrow float`, () => {
    for (const t of NARROW) {
      const r = rng(t.length);
      const n = 517;
      const pick = (finite: boolean): number => {
        for (;;) {
          const p = Math.floor(r() * patterns(t));
          if (!finite || Number.isFinite(decodeFloatBits(t, p))) return p;
        }
      };
      const lit = (finite = false): Literal => patternLiteral(t, Array.from({ length: n }, () => pick(finite)));
      const c = build(`chain_${t}`, [[t, n], [t, n], [t, n]], (b, [x, y, z]) => tuple(b, [
        add(mul(x!, y!), z!), tanh(exp(sub(x!, y!))), select(lt(x!, z!), div(y!, x!), abs(z!)),
        max(neg(x!), min(y!, z!)), sqrt(pow(abs(x!), y!)),
      ]));
      checkBitExact(c, [lit(), lit(), lit()], target);
      // Through f32 arithmetic: finite inputs, since the sign of a NaN out of f32 + f32
      // is the host's choice in both the interpreter (V8's doubles) and wasm.
      const d = build(`via_f32_${t}`, [[t, n], [t, n]], (_b, [x, y]) =>
        convertElementType(mul(add(convertElementType(x!, "f32"), convertElementType(y!, "f32")), convertElementType(x!, "f32")), t));
      checkBitExact(d, [lit(true), lit(true)], target);
    }
  });
}

test("the f32 probes reach at least half of every format's patterns", () => {
  // A guard on the test's own inputs: for each format some probe rounds down and its
  // neighbour one f32 step up rounds up, so a wrong tie rule could not pass unseen.
  const f32s = f32Probes();
  for (const t of NARROW) {
    const seen = new Set(f32s.map((x) => encodeFloatBits(t, x)));
    assert.ok(seen.size >= patterns(t) / 2, `${t}: probes reach ${seen.size} patterns`);
  }
});

// f16 and bf16 (held as f32 too, rounded by wasm_types.ts / emit_ops.ts): every pattern
// through the conversions and the exactly rounded unary ops, and random pairs through the
// binary ops. Their transcendentals (exp, log, tanh, ... computed in f32 to a few ulps,
// then rounded) are not bit-exact: a result within those ulps of a midpoint can round the
// other way (exp(0.0072975) in f16); test/compiler/fused/loop.test.ts bounds them in ulps.
const HALF: readonly ElementType[] = ["f16", "bf16"];

function halfLiteral(t: ElementType, bits: readonly number[]): Literal {
  return Literal.fromStorage(arrayShape(t, [bits.length]), new Uint16Array(bits));
}

for (const target of [TARGET, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";
  test(`${mode}: f16 and bf16 bit for bit`, () => {
    const unary: [string, (x: XlaOp) => XlaOp][] = [
      ["abs", abs], ["neg", neg], ["sqrt", sqrt], ["rsqrt", rsqrt], ["floor", floor], ["ceil", ceil], ["sign", sign], ["roundEven", roundNearestEven],
    ];
    const binary = (t: ElementType): [string, (x: XlaOp, y: XlaOp) => XlaOp][] => [
      ["add", add], ["sub", sub], ["mul", mul], ["div", div], ["max", max], ["min", min], ["select", (x, y) => select(lt(x, y), x, y)],
      ["ltTotal", ltTotalOrder], ["bitcast", (x) => bitcastConvertType(bitcastConvertType(x, "u16"), t)],
    ];
    const f32s = f32Probes();
    // Half-way points of f16 and bf16 and one f64 step either side of them; integers around them.
    const halfMidpoints = HALF.flatMap((t) => Array.from({ length: 65535 }, (_, i) => (decodeFloatBits(t, i) + decodeFloatBits(t, i + 1)) / 2)).filter(Number.isFinite);
    const f64s = f64Probes([...f32s, ...halfMidpoints]);
    const s32s = [...new Set(halfMidpoints.filter((v) => Math.abs(v) >= 1 && Math.abs(v) < 2 ** 31).flatMap((v) => [Math.trunc(v), Math.trunc(v) + 1, Math.trunc(v) - 1]))];
    const r = rng(3);
    checkAll(HALF.flatMap((t) => {
      const all = halfLiteral(t, Array.from({ length: 65536 }, (_, i) => i));
      const xs = halfLiteral(t, Array.from({ length: 65536 }, () => Math.floor(r() * 65536)));
      const ys = halfLiteral(t, Array.from({ length: 65536 }, () => Math.floor(r() * 65536)));
      return [
        () => bitMismatch(build(`to_f32_${t}`, [[t, 65536]], (_b, [x]) => convertElementType(x!, "f32")), [all], target),
        () => bitMismatch(build(`to_f64_${t}`, [[t, 65536]], (_b, [x]) => convertElementType(x!, "f64")), [all], target),
        () => bitMismatch(build(`copy_${t}`, [[t, 65536]], (_b, [x]) => rev(x!, [0])), [all], target),
        () => bitMismatch(build(`same_${t}`, [[t, 65536]], (_b, [x]) => convertElementType(x!, t)), [all], target),
        () => bitMismatch(build(`real_${t}`, [[t, 65536]], (_b, [x]) => real(x!)), [all], target),
        () => bitMismatch(build(`to_other_${t}`, [[t, 65536]], (_b, [x]) => convertElementType(x!, t === "f16" ? "bf16" : "f16")), [all], target),
        () => bitMismatch(build(`to_e4m3fn_${t}`, [[t, 65536]], (_b, [x]) => convertElementType(x!, "f8e4m3fn")), [all], target),
        () => bitMismatch(build(`from_f32_${t}`, [["f32", f32s.length]], (_b, [x]) => convertElementType(x!, t)), [f32Literal(f32s)], target),
        () => bitMismatch(build(`from_f64_${t}`, [["f64", f64s.length]], (_b, [x]) => convertElementType(x!, t)), [Literal.fromStorage(arrayShape("f64", [f64s.length]), f64s)], target),
        () => bitMismatch(build(`from_s32_${t}`, [["s32", s32s.length]], (_b, [x]) => convertElementType(x!, t)), [Literal.fromValues("s32", [s32s.length], s32s)], target),
        () => bitMismatch(build(`from_u32_${t}`, [["u32", s32s.length]], (_b, [x]) => convertElementType(x!, t)), [Literal.fromValues("u32", [s32s.length], s32s.map((v) => v >>> 0))], target),
        ...(t === "f16" ? [() => bitMismatch(build(`from_s64_${t}`, [["s64", s32s.length]], (_b, [x]) => convertElementType(x!, t)), [Literal.fromValues("s64", [s32s.length], s32s.map((v) => BigInt(v) * 3n ** 15n))], target)] : []),
        ...unary.map(([name, op]) => () => bitMismatch(build(`${name}_${t}`, [[t, 65536]], (_b, [x]) => op(x!)), [all], target)),
        ...binary(t).map(([name, op]) => () => bitMismatch(build(`${name}_${t}`, [[t, 65536], [t, 65536]], (_b, [x, y]) => op(x!, y!)), [xs, ys], target)),
      ];
    }));
  });
}

test("whole programs on narrow floats: elementwise fusions compile, reductions run in the interpreter, results equal", () => {
  for (const t of NARROW) {
    const n = 300;
    const r = rng(t.length + 1);
    const x = patternLiteral(t, Array.from({ length: n }, () => Math.floor(r() * patterns(t))));
    const y = patternLiteral(t, Array.from({ length: n }, () => Math.floor(r() * patterns(t))));
    const b = new XlaBuilder(`program_${t}`);
    const [p, q] = [parameter(b, 0, arrayShape(t, [n])), parameter(b, 1, arrayShape(t, [n]))];
    const c = b.build(tuple(b, [
      tanh(add(mul(p, q), p)),
      reduce(b, [max(p, q)], [constantR0(b, t, 1)], scalarReducer(b, "add", t), [0]),
    ]));
    const executable = compileSync(c);
    try {
      assert.ok(executable.stats.kernels >= 1, `${t}: the elementwise part compiles`);
      assert.ok(executable.stats.interpreted.some((s) => /reduc/.test(s.why)), `${t}: the reduction stays in the interpreter: ${JSON.stringify(executable.stats.interpreted)}`);
      const got = executable.run([x, y]);
      const expected = evaluate(c, [x, y]);
      got.elements.forEach((g, k) => assert.deepEqual(bytesOf(g), bytesOf(expected.elements[k]!), `${t} output ${k}`));
    } finally {
      executable.delete();
    }
  }
});

test("NaN constants: the positive quiet NaN fuses, a signed NaN stays out (a node's value cannot hold its sign)", () => {
  for (const t of ["f8e4m3fn", "f16", "bf16"] as const) {
    for (const negative of [false, true]) {
      const b = new XlaBuilder(`nan_${t}_${negative}`);
      const p = parameter(b, 0, arrayShape(t, [8]));
      const nan = Literal.fromStorage(arrayShape(t, []), t === "f8e4m3fn" ? new Uint8Array([encodeFloatBits(t, NaN, negative)]) : new Uint16Array([encodeFloatBits(t, NaN, negative)]));
      const c = b.build(select(lt(p, p), p, broadcastInDim(constantLiteral(b, nan), [8], [])));
      const kernel = emitFusionKernel(c, TARGET);
      assert.equal(isDeclined(kernel), negative, `${t} ${negative ? "-" : "+"}NaN`);
      if (!negative) checkBitExact(c, [patternLiteral8or16(t, 8)], TARGET);
    }
  }
});

function patternLiteral8or16(t: ElementType, n: number): Literal {
  const bits = Array.from({ length: n }, (_, i) => i * 37);
  return t === "f8e4m3fn" ? patternLiteral(t, bits) : halfLiteral(t, bits);
}
