// Compiled Fft: FFT and IFFT on c64 and c128, RFFT (f32/f64 → c64/c128) and IRFFT, over
// 1 to 3 innermost dimensions of any lengths, bit for bit the interpreter's kernel
// (src/interpreter/kernels/fft.ts): one axis at a time in doubles with the same plans
// (fft_plans.ts), the inverse dividing by n after each axis, every value rounded to the
// result type once. RFFT transforms the innermost axis first and keeps its n/2 + 1 bins;
// IRFFT transforms the innermost axis last, after rebuilding it from Hermitian symmetry
// (X[n-k] = conj(X[k])), and keeps the real parts.
//
// Lines go through the transforms two at a time, one per lane. A pass over one axis
// gathers a pair of lines from its source (the operand, or the work array of doubles in
// scratch) into a line buffer, transforms it and scatters it to its destination (the
// work array, or the result). With one transformed dimension the unit of work is a pair
// of lines (the lines of consecutive batch elements); with two or three it is one batch
// element, all of whose axes are transformed in its work array of doubles (in scratch,
// or the result itself when that is c128 of the same shape). The twiddle and chirp
// tables are constant data copied into scratch once per call.

import type { Instruction } from "../../../ir/computation.js";
import type { ElementType } from "../../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { forRange } from "../loops.js";

import { ELEMENT, FftPlanEmitter, FftTables, planNeeds, type FftLayout } from "./fft_plans.js";
import { maxOf } from "../../../types/arrays.js";
import { roundUp } from "../../../types/index_util.js";

/** Largest block of constant tables a kernel carries (bytes). */
const MAX_TABLES = 2 ** 26;
/** Largest scratch per thread (bytes): the executor reserves it once for every thread. */
const MAX_SCRATCH = 2 ** 27;

/** How an array stores one element: the real part (and the imaginary part, when complex) in es bytes each. */
interface Format {
  readonly complex: boolean;
  readonly es: 4 | 8;
}

const WORK: Format = { complex: true, es: 8 };
const bytesOf = (fmt: Format): number => fmt.es * (fmt.complex ? 2 : 1);

function formatOf(t: ElementType): Format | undefined {
  switch (t) {
    case "c64": return { complex: true, es: 4 };
    case "c128": return { complex: true, es: 8 };
    case "f32": return { complex: false, es: 4 };
    case "f64": return { complex: false, es: 8 };
    default: return undefined;
  }
}

/** One axis transformed over every line of an element (or, with one axis, of the array). */
interface Pass {
  /** Among the transformed dimensions. */
  readonly axis: number;
  readonly n: number;
  readonly inverse: boolean;
  readonly src: "operand" | "work";
  readonly dst: "result" | "work";
  /** The transformed dimensions of the source and of the destination. */
  readonly srcDims: readonly number[];
  readonly dstDims: readonly number[];
  /** The source line holds bins 0 .. n/2 only; the rest are their conjugates. */
  readonly hermitian: boolean;
}

function passesOf(fftType: Instruction<"fft">["attrs"]["fftType"], lengths: readonly number[]): Pass[] {
  const k = lengths.length;
  const last = k - 1;
  const half = [...lengths.slice(0, -1), Math.floor(lengths[last]! / 2) + 1];
  const axes = lengths.map((_, a) => a);
  const plan: { axis: number; srcDims: readonly number[]; dstDims: readonly number[]; hermitian: boolean }[] =
    fftType === "RFFT"
      ? [{ axis: last, srcDims: lengths, dstDims: half, hermitian: false }, ...axes.slice(0, -1).map((axis) => ({ axis, srcDims: half, dstDims: half, hermitian: false }))]
      : fftType === "IRFFT"
        ? [...axes.slice(0, -1).map((axis) => ({ axis, srcDims: half, dstDims: half, hermitian: false })), { axis: last, srcDims: half, dstDims: lengths, hermitian: true }]
        : axes.map((axis) => ({ axis, srcDims: lengths, dstDims: lengths, hermitian: false }));
  const inverse = fftType === "IFFT" || fftType === "IRFFT";
  return plan
    .map((p, i): Pass => ({ ...p, n: lengths[p.axis]!, inverse, src: i === 0 ? "operand" : "work", dst: i === k - 1 ? "result" : "work" }))
    // A length-1 axis changes nothing: the interpreter skips it, and so does a pass within the work array.
    .filter((p) => p.n > 1 || p.src !== "work" || p.dst !== "work");
}

export function emitFftKernel(inst: Instruction<"fft">, target: WasmTarget): WasmKernel | Declined {
  const operandInst = inst.operands[0];
  if (operandInst?.shape.kind !== "array" || inst.shape.kind !== "array") return { declined: "fft: operands are not arrays" };
  const operand = operandInst.shape as ArrayShape;
  const result = inst.shape;
  const inFormat = formatOf(operand.elementType);
  const outFormat = formatOf(result.elementType);
  if (inFormat === undefined || outFormat === undefined) return { declined: `fft: ${operand.elementType} -> ${result.elementType}` };
  if (!target.simd) return { declined: "fft: needs SIMD128" };
  const { fftType, fftLength: lengths } = inst.attrs;
  const k = lengths.length;
  const rank = operand.dimensions.length;
  const batch = elementCount(operand.dimensions.slice(0, rank - k));
  const inDims = operand.dimensions.slice(rank - k);
  const outDims = result.dimensions.slice(rank - k);
  const empty = elementCount(operand.dimensions) === 0 || elementCount(result.dimensions) === 0;
  if (Math.max(elementCount(operand.dimensions) * bytesOf(inFormat), elementCount(result.dimensions) * bytesOf(outFormat)) >= 2 ** 31) {
    return { declined: "fft: too large for 32-bit offsets" };
  }
  const passes = empty ? [] : passesOf(fftType, lengths);
  const inBytes = elementCount(inDims) * bytesOf(inFormat);
  const outBytes = elementCount(outDims) * bytesOf(outFormat);

  // Scratch: line buffers, Bluestein's and the odd radix's buffers, the work array, then the tables.
  const needs = planNeeds(passes.map((p) => p.n));
  let size = 0;
  const take = (bytes: number): number => {
    const at = size;
    size += roundUp(bytes, 64);
    return at;
  };
  const maxN = Math.max(1, maxOf(passes.map((p) => p.n)));
  const lineA = take(maxN * ELEMENT);
  const lineB = take(maxN * ELEMENT);
  const bluestein: [number, number] = [take(needs.bluesteinLength * ELEMENT), take(needs.bluesteinLength * ELEMENT)];
  const oddX = take(needs.oddRadix * ELEMENT);
  const oddSums = take(((needs.oddRadix + 1) / 2) * ELEMENT);
  const oddDifferences = take(((needs.oddRadix + 1) / 2) * ELEMENT);
  const workDims = fftType === "FFT" || fftType === "IFFT" ? lengths : fftType === "RFFT" ? outDims : inDims;
  // A c128 result holds doubles in the work array's layout: then the passes work in place there.
  const workInResult = k > 1 && result.elementType === "c128" && fftType !== "IRFFT";
  const work = take(k > 1 && !workInResult ? elementCount(workDims) * bytesOf(WORK) : 0);
  const layout: FftLayout = { bluestein, oddX, oddSums, oddDifferences, tables: size };

  const module = new ModuleBuilder().importMemory(target);
  const tables = new FftTables();
  const plans = new FftPlanEmitter(module, tables, layout);
  const pairs = passes.map((p) => emitPair(module, p, p.n > 1 ? plans.plan(p.n, p.inverse) : undefined, inFormat, outFormat, lineA, lineB));
  if (tables.byteLength > MAX_TABLES) return { declined: `fft: lengths ${lengths.join("x")} need ${tables.byteLength} bytes of tables (more than ${MAX_TABLES})` };
  if (size + tables.byteLength > MAX_SCRATCH) return { declined: `fft: lengths ${lengths.join("x")} need ${size + tables.byteLength} bytes of scratch per thread (more than ${MAX_SCRATCH})` };
  const segment = tables.byteLength > 0 ? module.addPassiveData(tables.bytes()) : undefined;

  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [src, dst, scratch, begin, end] = [0, 1, 2, 3, 4];
    const [unit, l0, l1, srcE, dstE] = Array.from({ length: 5 }, () => f.local("i32"));
    if (segment !== undefined) f.localGet(scratch).i32Const(layout.tables).i32Add().i32Const(0).i32Const(tables.byteLength).memoryInit(segment);
    /** Calls the pass's pair function on lines l0 and l1 of the given source and destination. */
    const callPair = (p: Pass, i: number, srcBase: number, dstBase: number): void => {
      const after = elementCount(p.srcDims.slice(p.axis + 1));
      const line = (base: number, dims: readonly number[], fmt: Format, l: number): void => {
        // ((l / after) · dims[axis] · after + l % after) · element bytes
        f.localGet(base).localGet(l).i32Const(after).i32DivU().i32Const(dims[p.axis]! * after).i32Mul();
        f.localGet(l).i32Const(after).i32RemU().i32Add().i32Const(bytesOf(fmt)).i32Mul().i32Add();
      };
      const srcFmt = p.src === "operand" ? inFormat : WORK;
      const dstFmt = p.dst === "result" ? outFormat : WORK;
      line(srcBase, p.srcDims, srcFmt, l0);
      line(srcBase, p.srcDims, srcFmt, l1);
      line(dstBase, p.dstDims, dstFmt, l0);
      line(dstBase, p.dstDims, dstFmt, l1);
      f.localGet(scratch).call(pairs[i]!);
    };
    /** l1 = min(l0 + 1, lines - 1): an odd last line goes through both lanes. */
    const secondLine = (lines: number): void => {
      f.localGet(l0).i32Const(1).i32Add().localTee(l1).i32Const(lines - 1).localGet(l1).i32Const(lines - 1).i32LtU().select().localSet(l1);
    };
    if (k === 1) {
      forRange(f, unit, { local: begin }, { local: end }, 1, () => {
        f.localGet(unit).i32Const(2).i32Mul().localSet(l0);
        secondLine(batch);
        passes.forEach((p, i) => callPair(p, i, src, dst));
      });
    } else {
      const workAt = f.local("i32");
      const u = f.local("i32");
      if (!workInResult) f.localGet(scratch).i32Const(work).i32Add().localSet(workAt);
      forRange(f, unit, { local: begin }, { local: end }, 1, () => {
        f.localGet(src).localGet(unit).i32Const(inBytes).i32Mul().i32Add().localSet(srcE);
        f.localGet(dst).localGet(unit).i32Const(outBytes).i32Mul().i32Add().localSet(dstE);
        if (workInResult) f.localGet(dstE).localSet(workAt);
        passes.forEach((p, i) => {
          const lines = elementCount(p.srcDims) / p.srcDims[p.axis]!;
          forRange(f, u, 0, Math.ceil(lines / 2), 1, () => {
            f.localGet(u).i32Const(2).i32Mul().localSet(l0);
            secondLine(lines);
            callPair(p, i, p.src === "operand" ? srcE : workAt, p.dst === "result" ? dstE : workAt);
          });
        });
      });
    }
  });
  const lineCost = (n: number): number => (n > 1 ? n * (Math.log2(n) + 2) * 16 : 8);
  return {
    name: `fft ${fftType} ${operand.elementType}[${operand.dimensions.join(",")}] length ${lengths.join("x")}`,
    bytes: module.finish(),
    operandCount: 1,
    resultCount: 1,
    scratchBytes: Math.max(64, size + tables.byteLength),
    parallelExtent: empty ? 0 : k === 1 ? Math.ceil(batch / 2) : batch,
    costPerUnit: passes.reduce((c, p) => c + (k === 1 ? 1 : elementCount(p.srcDims) / p.srcDims[p.axis]! / 2) * lineCost(p.n), 0),
  };
}

/**
 * pair(src0, src1, dst0, dst1, scratch): lines src0 and src1 (addresses of their first
 * elements) into lanes 0 and 1 of line buffer A, transformed, scaled by 1/n when
 * inverse, stored to dst0 and dst1 in the destination's format.
 */
function emitPair(
  module: ModuleBuilder, p: Pass, plan: number | undefined, inFormat: Format, outFormat: Format, lineA: number, lineB: number,
): number {
  const srcFmt = p.src === "operand" ? inFormat : WORK;
  const dstFmt = p.dst === "result" ? outFormat : WORK;
  const srcStride = elementCount(p.srcDims.slice(p.axis + 1)) * bytesOf(srcFmt);
  const dstStride = elementCount(p.dstDims.slice(p.axis + 1)) * bytesOf(dstFmt);
  const width = p.hermitian ? p.srcDims[p.axis]! : p.n;
  const outWidth = p.dstDims[p.axis]!;
  const scale = p.inverse && p.n > 1;
  return module.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [s0, s1, d0, d1, scratch] = [0, 1, 2, 3, 4];
    const [j, pa, ps0, ps1, res] = Array.from({ length: 5 }, () => f.local("i32"));
    const load = (fmt: Format, from: number, im: boolean): void => {
      if (im && !fmt.complex) {
        // A real operand's imaginary part: +0.
        f.f64Const(0);
        return;
      }
      f.localGet(from);
      const offset = im ? fmt.es : 0;
      if (fmt.es === 4) f.f32Load(offset).f64PromoteF32();
      else f.f64Load(offset);
    };
    /** Element j of both source lines (pointers ps0, ps1) into line buffer element pa, conjugated when asked. */
    const gather = (conjugate: boolean): void => {
      for (const [lane, from] of [[0, ps0], [1, ps1]] as const) {
        f.localGet(pa);
        load(srcFmt, from, false);
        f.f64Store(8 * lane);
        f.localGet(pa);
        load(srcFmt, from, true);
        if (conjugate) f.f64Neg();
        f.f64Store(16 + 8 * lane);
      }
    };
    f.localGet(scratch).i32Const(lineA).i32Add().localSet(pa);
    f.localGet(s0).localSet(ps0);
    f.localGet(s1).localSet(ps1);
    forRange(f, j, 0, width, 1, () => {
      gather(false);
      f.localGet(pa).i32Const(ELEMENT).i32Add().localSet(pa);
      f.localGet(ps0).i32Const(srcStride).i32Add().localSet(ps0);
      f.localGet(ps1).i32Const(srcStride).i32Add().localSet(ps1);
    });
    if (p.hermitian) {
      // Element j >= width is conj(element n - j), walking back from n - width.
      f.localGet(s0).i32Const((p.n - width) * srcStride).i32Add().localSet(ps0);
      f.localGet(s1).i32Const((p.n - width) * srcStride).i32Add().localSet(ps1);
      forRange(f, j, width, p.n, 1, () => {
        gather(true);
        f.localGet(pa).i32Const(ELEMENT).i32Add().localSet(pa);
        f.localGet(ps0).i32Const(-srcStride).i32Add().localSet(ps0);
        f.localGet(ps1).i32Const(-srcStride).i32Add().localSet(ps1);
      });
    }
    f.localGet(scratch).i32Const(lineA).i32Add();
    if (plan !== undefined) f.localGet(scratch).i32Const(lineB).i32Add().localGet(scratch).call(plan);
    f.localSet(res);
    // Scatter bins k < outWidth of both lanes.
    f.localGet(d0).localSet(ps0);
    f.localGet(d1).localSet(ps1);
    const store = (part: number, laneOffset: number, to: number): void => {
      f.localGet(to).localGet(res).f64Load(laneOffset);
      if (scale) f.f64Const(p.n).f64Div();
      if (dstFmt.es === 4) f.f32DemoteF64().f32Store(part * 4);
      else f.f64Store(part * 8);
    };
    forRange(f, j, 0, outWidth, 1, () => {
      for (const [lane, to] of [[0, ps0], [1, ps1]] as const) {
        store(0, 8 * lane, to);
        if (dstFmt.complex) store(1, 16 + 8 * lane, to);
      }
      f.localGet(res).i32Const(ELEMENT).i32Add().localSet(res);
      f.localGet(ps0).i32Const(dstStride).i32Add().localSet(ps0);
      f.localGet(ps1).i32Const(dstStride).i32Add().localSet(ps1);
    });
  });
}
