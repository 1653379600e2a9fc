// Compiled Fft against the interpreter's kernel, bit for bit: FFT and IFFT on c64 and
// c128, RFFT on f32 and f64, IRFFT, over 1 to 3 dimensions, with lengths that take every
// kind of pass (1, powers of two, radix 3 and 5, generic odd radices 7, 11, 13, 61, and
// Bluestein for primes above 64), batches of odd and even line counts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { XlaBuilder, arrayShape, fft, parameter, type ElementType, type Literal } from "../../../src/index.js";
import type { FftType } from "../../../src/ir/attributes.js";
import { Literal as L } from "../../../src/types/literal.js";
import { compile } from "../../../src/compiler/index.js";
import { compileRoutine } from "../../../src/compiler/routines.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkCompiled, checkRoutine, conformanceOnWasm, rng } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

function build(t: ElementType, dims: readonly number[], fftType: FftType, lengths: readonly number[]): ReturnType<XlaBuilder["build"]> {
  const b = new XlaBuilder("fft");
  return b.build(fft(parameter(b, 0, arrayShape(t, dims), "x"), fftType, lengths));
}

function random(next: () => number, t: ElementType, dims: readonly number[]): Literal {
  const count = elementCount(dims);
  const value = (): number => (next() * 2 - 1) * 4;
  const complex = t === "c64" || t === "c128";
  return L.fromValues(t, [...dims], Array.from({ length: count }, () => (complex ? { re: value(), im: value() } : value())));
}

/** The operand dimensions of an fft of `lengths` over `batch`. */
function operandDims(fftType: FftType, batch: readonly number[], lengths: readonly number[]): number[] {
  if (fftType !== "IRFFT") return [...batch, ...lengths];
  return [...batch, ...lengths.slice(0, -1), Math.floor(lengths[lengths.length - 1]! / 2) + 1];
}

function check(next: () => number, fftType: FftType, t: ElementType, batch: readonly number[], lengths: readonly number[]): void {
  const dims = operandDims(fftType, batch, lengths);
  checkRoutine(build(t, dims, fftType, lengths), [random(next, t, dims)], `${fftType} ${t} batch [${batch}] lengths [${lengths}]`);
}

const LENGTHS_1D = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16, 25, 30, 32, 61, 64, 67, 97, 120, 128, 143, 256, 300];

test("fft 1-D: FFT and IFFT on c64 and c128, every kind of pass, match the interpreter bit for bit", () => {
  const next = rng(91);
  LENGTHS_1D.forEach((n, i) => {
    for (const fftType of ["FFT", "IFFT"] as const) {
      for (const t of ["c64", "c128"] as const) check(next, fftType, t, [[], [1], [3], [2, 2]][i % 4]!, [n]);
    }
  });
});

test("fft 1-D: RFFT on f32 and f64 and IRFFT on c64 and c128", () => {
  const next = rng(92);
  LENGTHS_1D.forEach((n, i) => {
    const batch = [[3], [], [2, 1], [4]][i % 4]!;
    for (const t of ["f32", "f64"] as const) check(next, "RFFT", t, batch, [n]);
    for (const t of ["c64", "c128"] as const) check(next, "IRFFT", t, batch, [n]);
  });
});

test("fft 2-D and 3-D: every type, odd and even line counts, lengths 1, primes, Bluestein", () => {
  const next = rng(93);
  const shapes: number[][] = [[2, 2], [3, 5], [4, 7], [1, 8], [8, 1], [6, 67], [13, 4], [2, 3, 4], [3, 1, 5], [5, 4, 3], [2, 2, 2]];
  shapes.forEach((lengths, i) => {
    const batch = [[], [2], [3]][i % 3]!;
    for (const [fftType, types] of [["FFT", ["c64", "c128"]], ["IFFT", ["c64", "c128"]], ["RFFT", ["f32", "f64"]], ["IRFFT", ["c64", "c128"]]] as const) {
      for (const t of types) check(next, fftType, t, batch, lengths);
    }
  });
});

test("fft: the FFT over the innermost dimensions only, of a higher-rank operand", () => {
  const next = rng(94);
  check(next, "FFT", "c128", [2, 3, 2], [5, 4]);
  check(next, "IRFFT", "c64", [3, 2], [6]);
  check(next, "RFFT", "f32", [2, 2], [3, 7, 2]);
});

// NaN results may differ in sign from the interpreter's: the engines choose which
// operand's NaN an operation returns (JS and WebAssembly both leave it open).
test("fft: infinities, NaN and signed zeros go through the same arithmetic", () => {
  const next = rng(95);
  for (const [fftType, t] of [["FFT", "c128"], ["IFFT", "c64"], ["RFFT", "f64"], ["IRFFT", "c128"]] as const) {
    const lengths = [12];
    const dims = operandDims(fftType, [3], lengths);
    const x = random(next, t, dims);
    const special = [Infinity, -Infinity, NaN, -0, 0];
    const values = x.values().map((v, i) => {
      if (i % 4 !== 0) return v;
      const s = special[(i / 4) % special.length]!;
      return typeof v === "object" ? { re: s, im: -0 } : s;
    });
    checkRoutine(build(t, dims, fftType, lengths), [L.fromValues(t, dims, values)], `${fftType} ${t} special values`, { anyNaN: true });
  }
});

test("fft: compiled programs run it as a kernel", async () => {
  const next = rng(96);
  for (const [fftType, t, batch, lengths] of [["FFT", "c64", [64], [256]], ["IRFFT", "c128", [3], [16, 30]], ["RFFT", "f32", [], [67]]] as const) {
    const dims = operandDims(fftType, batch, lengths);
    const c = build(t, dims, fftType, lengths);
    await checkCompiled(c, [random(next, t, dims)], `${fftType} ${t}`);
    const exe = await compile(c);
    try {
      assert.match(exe.dump(), new RegExp(`fft ${fftType} ${t}\\[`));
      assert.equal(exe.stats.interpreted.length, 0);
    } finally {
      exe.delete();
    }
  }
});

test("fft: StableHLO's fft.mlir cases pass on the wasm backend with each fft a compiled kernel", () => {
  const { results, kernels, interpreted } = conformanceOnWasm("fft.mlir");
  assert.deepEqual(results.filter((r) => r.status !== "pass").map((r) => `${r.name}: ${r.message}`), []);
  assert.equal(results.length, 12);
  assert.equal(kernels.get("fft"), 12);
  assert.equal(interpreted.get("fft"), undefined);
});

test("fft: a 2-D transform whose work array would not fit the scratch limit is left to the interpreter, with the reason", () => {
  const big = compileRoutine(build("c64", [2048, 4096], "FFT", [2048, 4096]).root, { wasm: detectWasmTarget() });
  assert.ok(isDeclined(big) && /bytes of scratch per thread/.test(big.declined));
  // The same shape in c128 transforms in place in its result: no work array in scratch.
  assert.ok(!isDeclined(compileRoutine(build("c128", [2048, 4096], "FFT", [2048, 4096]).root, { wasm: detectWasmTarget() })));
});
