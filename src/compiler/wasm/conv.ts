// 2-D f32 and f64 convolution kernels as im2col + GEMM: for each block of output pixels, the
// patches of the input they read are copied into scratch as the rows of a matrix
// (zeros where the window hangs over the padding), then the GEMM loop nest
// (gemm_rows.ts) multiplies that block by the kernel seen as a [KH*KW*C][O] matrix
// and writes the pixels' O output features.
//
// Handled: feature dimensions innermost (input [.., C], kernel [.., .., C, O] with the
// two spatial dimensions first in either order, output [.., O]; the batch and spatial
// dimensions of input and output in any order), any strides, padding and window
// dilation; base (lhs) dilation, window reversal and feature or batch groups are not.
//
// Accumulation: in the element type, over the kernel's memory order (spatial, then input
// feature), in blocks of the GEMM's kc as gemm.ts describes.
//
// In an output fusion (epilogue.ts) the GEMM finishes each tile of output pixels with
// the fusion's epilogue as gemm_rows.ts describes: the pixels are the rows of the
// product, the output features its columns.

import type { Instruction } from "../../ir/computation.js";
import type { ArrayShape } from "../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import { defaultGemmTiling } from "./gemm.js";
import type { GemmElement, GemmTiling } from "./gemm_microkernel.js";
import { emitGemmRows, productInScratch, type KernelEpilogue } from "./gemm_rows.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./kernel.js";
import { forRange, setMinU } from "./loops.js";

/** Output pixels per block (per im2col buffer fill); the unit of parallel work. */
const PIXEL_BLOCK = 64;

/** The geometry of a supported convolution, in elements. */
export interface ConvGeometry {
  readonly type: GemmElement;
  readonly c: number;
  readonly o: number;
  /** Input strides of the batch, spatial 0 and spatial 1 dimensions. */
  readonly inputStrides: readonly [number, number, number];
  readonly inputSizes: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly padLow: readonly [number, number];
  readonly dilation: readonly [number, number];
  /** The kernel's two leading (spatial) dimensions in memory order: sizes and which spatial dimension each is. */
  readonly kernelSizes: readonly [number, number];
  readonly kernelSpatial: readonly [number, number];
  /** The output's three leading dimensions in memory order: sizes and what each is (0 batch, 1 and 2 spatial). */
  readonly outputSizes: readonly [number, number, number];
  readonly outputRoles: readonly [number, number, number];
}

const rowMajorStrides = (dims: readonly number[]): number[] => {
  const s: number[] = new Array<number>(dims.length).fill(1);
  for (let i = dims.length - 2; i >= 0; i--) s[i] = s[i + 1]! * dims[i + 1]!;
  return s;
};

export function convGeometry(conv: Instruction<"convolution">): ConvGeometry | Unsupported {
  const [lhs, rhs] = conv.operands;
  if (lhs === undefined || rhs === undefined || lhs.shape.kind !== "array" || rhs.shape.kind !== "array" || conv.shape.kind !== "array") {
    return { unsupported: "convolution: operands and result must be arrays" };
  }
  const input = lhs.shape as ArrayShape, kernel = rhs.shape as ArrayShape, output = conv.shape as ArrayShape;
  const type = output.elementType;
  if ((type !== "f32" && type !== "f64") || input.elementType !== type || kernel.elementType !== type) {
    return { unsupported: "convolution: only f32 or f64 (input, kernel and output of one type)" };
  }
  const { featureGroupCount, batchGroupCount, window } = conv.attrs;
  if (featureGroupCount !== 1 || batchGroupCount !== 1) return { unsupported: "convolution: feature or batch groups" };
  const dn = conv.attrs.dimensionNumbers;
  if (input.dimensions.length !== 4 || window.length !== 2) return { unsupported: "convolution: only 2 spatial dimensions" };
  if (window.some((w) => w.baseDilation !== 1 || w.windowReversal)) return { unsupported: "convolution: base dilation or window reversal" };
  if (dn.inputFeatureDimension !== 3 || dn.kernelInputFeatureDimension !== 2 || dn.kernelOutputFeatureDimension !== 3 || dn.outputFeatureDimension !== 3) {
    return { unsupported: "convolution: feature dimensions must be innermost (NHWC / HWIO / NHWC)" };
  }
  const is = rowMajorStrides(input.dimensions);
  const [s0, s1] = dn.inputSpatialDimensions as [number, number];
  const [k0, k1] = dn.kernelSpatialDimensions as [number, number];
  const [o0, o1] = dn.outputSpatialDimensions as [number, number];
  const role = (d: number): number => (d === dn.outputBatchDimension ? 0 : d === o0 ? 1 : d === o1 ? 2 : -1);
  return {
    type,
    c: input.dimensions[3]!,
    o: kernel.dimensions[3]!,
    inputStrides: [is[dn.inputBatchDimension]!, is[s0]!, is[s1]!],
    inputSizes: [input.dimensions[s0]!, input.dimensions[s1]!],
    stride: [window[0]!.stride, window[1]!.stride],
    padLow: [window[0]!.paddingLow, window[1]!.paddingLow],
    dilation: [window[0]!.windowDilation, window[1]!.windowDilation],
    kernelSizes: [kernel.dimensions[0]!, kernel.dimensions[1]!],
    kernelSpatial: k0 === 0 && k1 === 1 ? [0, 1] : [1, 0],
    outputSizes: [output.dimensions[0]!, output.dimensions[1]!, output.dimensions[2]!],
    outputRoles: [role(0), role(1), role(2)],
  };
}

/** Copies (or zeroes, when src is undefined) `bytes` bytes at local dst + dstOffset. */
function emitCopy(f: FunctionBuilder, src: number | undefined, dst: number, dstOffset: number, bytes: number): void {
  if (bytes > 512) {
    f.localGet(dst).i32Const(dstOffset).i32Add();
    if (src === undefined) f.i32Const(0).i32Const(bytes).memoryFill();
    else f.localGet(src).i32Const(bytes).memoryCopy();
    return;
  }
  let at = 0;
  for (; at + 16 <= bytes; at += 16) {
    f.localGet(dst);
    if (src === undefined) f.i32x4Const(0, 0, 0, 0);
    else f.localGet(src).v128Load(at);
    f.v128Store(dstOffset + at);
  }
  for (; at < bytes; at += 4) {
    f.localGet(dst);
    if (src === undefined) f.i32Const(0);
    else f.localGet(src).i32Load(at);
    f.i32Store(dstOffset + at);
  }
}

/** The GEMM tiling of a convolution's kernel: the whole depth in one block while the kernel matrix fits L2 comfortably (no C reloads). */
function convTiling(g: ConvGeometry, target: WasmTarget): GemmTiling {
  const es = g.type === "f32" ? 4 : 8;
  const pixels = g.outputSizes[0] * g.outputSizes[1] * g.outputSizes[2];
  const kDepth = g.kernelSizes[0] * g.kernelSizes[1] * g.c;
  const base = defaultGemmTiling({ elementType: g.type, batch: 1, m: Math.min(pixels, PIXEL_BLOCK), n: g.o, k: kDepth }, target);
  return { ...base, kc: kDepth * g.o * es <= 512 * 1024 ? Math.max(kDepth, 1) : base.kc };
}

/** Blocks of k (kernel depth) the convolution kernel accumulates its output over. */
export function convKBlocks(g: ConvGeometry, target: WasmTarget): number {
  return Math.max(1, Math.ceil((g.kernelSizes[0] * g.kernelSizes[1] * g.c) / convTiling(g, target).kc));
}

/** Whether the convolution kernel keeps its product in scratch until an epilogue has read it (gemm_rows.ts). */
export function convProductInScratch(g: ConvGeometry, target: WasmTarget): boolean {
  return productInScratch(g.kernelSizes[0] * g.kernelSizes[1] * g.c, convTiling(g, target));
}

/**
 * The convolution kernel: run(input, kernel, output, scratch, begin, end) over blocks of
 * output pixels; with an epilogue, run(operand0, ..., operandN-1, output, scratch,
 * begin, end), input and kernel among the operands.
 */
export function emitConvKernel(
  conv: Instruction<"convolution">, target: WasmTarget, tilingOverride?: Partial<GemmTiling>, epilogue?: KernelEpilogue,
): WasmKernel | Unsupported {
  const g = convGeometry(conv);
  if ("unsupported" in g) return g;
  if (!target.simd) return { unsupported: "convolution: needs SIMD128" };
  if (g.c === 0 || g.kernelSizes[0] * g.kernelSizes[1] === 0) return { unsupported: "convolution: empty kernel window" };
  const type = g.type;
  const es = type === "f32" ? 4 : 8;
  const pixels = g.outputSizes[0] * g.outputSizes[1] * g.outputSizes[2];
  const kDepth = g.kernelSizes[0] * g.kernelSizes[1] * g.c;
  const o = g.o;
  const name = `conv ${conv.name} ${pixels}px ${kDepth}x${o}${type === "f64" ? " f64" : ""}${epilogue === undefined ? "" : " with epilogue"}`;
  const tiling: GemmTiling = { ...convTiling(g, target), ...tilingOverride };
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const remainder = pixels % PIXEL_BLOCK % tiling.mr;
  const { rows, scratchBytes: rowsScratch } = emitGemmRows(module, { type, n: o, k: kDepth, aRow: kDepth * es, aK: es, bK: o * es, bLine: es },
    tiling, target.relaxedSimd && tiling.fma === true, remainder === 0 ? [] : [remainder], epi === undefined ? undefined : { fn: epi, operands: nOps, keepProduct: epilogue!.keepProduct, inRegisters: epilogue!.inRegisters });
  const colBytes = Math.ceil((PIXEL_BLOCK * kDepth * es) / 64) * 64;

  // im2col(input, p0, count, dst): rows q < count of the patch matrix for pixels p0 + q.
  const im2col = module.addFunction(undefined, ["i32", "i32", "i32", "i32"], [], (f) => {
    const [input, p0, count, dst] = [0, 1, 2, 3];
    const [q, p, d, baseAt, y0, x0, src, y, x] = Array.from({ length: 9 }, () => f.local("i32"));
    const coord = [f.local("i32"), f.local("i32"), f.local("i32")]; // batch, spatial 0, spatial 1
    const [d1Size, d2Size] = [g.outputSizes[1], g.outputSizes[2]];
    forRange(f, q, 0, { local: count }, 1, () => {
      f.localGet(p0).localGet(q).i32Add().localSet(p);
      // The output coordinates of pixel p (its leading dimensions in memory order).
      const inner = [d1Size * d2Size, d2Size, 1];
      for (let j = 0; j < 3; j++) {
        f.localGet(p);
        if (inner[j] !== 1) f.i32Const(inner[j]!).i32DivU();
        if (j > 0) f.i32Const(g.outputSizes[j]!).i32RemU();
        f.localSet(coord[g.outputRoles[j]!]!);
      }
      f.localGet(input).localGet(coord[0]!).i32Const(g.inputStrides[0] * es).i32Mul().i32Add().localSet(baseAt);
      f.localGet(coord[1]!).i32Const(g.stride[0]).i32Mul().i32Const(g.padLow[0]).i32Sub().localSet(y0);
      f.localGet(coord[2]!).i32Const(g.stride[1]).i32Mul().i32Const(g.padLow[1]).i32Sub().localSet(x0);
      f.localGet(dst).localGet(q).i32Const(kDepth * es).i32Mul().i32Add().localSet(d);
      for (let a = 0; a < g.kernelSizes[0]; a++) {
        for (let b = 0; b < g.kernelSizes[1]; b++) {
          const offsets = [0, 0];
          offsets[g.kernelSpatial[0]] = a;
          offsets[g.kernelSpatial[1]] = b;
          const at = (a * g.kernelSizes[1] + b) * g.c * es;
          f.localGet(y0).i32Const(offsets[0]! * g.dilation[0]).i32Add().localSet(y);
          f.localGet(x0).i32Const(offsets[1]! * g.dilation[1]).i32Add().localSet(x);
          // Unsigned comparisons also reject negative coordinates (the low padding).
          f.localGet(y).i32Const(g.inputSizes[0]).i32LtU().localGet(x).i32Const(g.inputSizes[1]).i32LtU().i32And().if();
          f.localGet(baseAt).localGet(y).i32Const(g.inputStrides[1] * es).i32Mul().i32Add().localGet(x).i32Const(g.inputStrides[2] * es).i32Mul().i32Add().localSet(src);
          emitCopy(f, src, d, at, g.c * es);
          f.else();
          emitCopy(f, undefined, d, at, g.c * es);
          f.end();
        }
      }
    });
  });

  module.addFunction("run", new Array<"i32">(nOps + 4).fill("i32"), [], (f) => {
    const [input, kernel] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [output, scratch, begin, end] = [nOps, nOps + 1, nOps + 2, nOps + 3];
    const [blk, p0, count, rest] = [f.local("i32"), f.local("i32"), f.local("i32"), f.local("i32")];
    forRange(f, blk, { local: begin }, { local: end }, 1, () => {
      f.localGet(blk).i32Const(PIXEL_BLOCK).i32Mul().localSet(p0);
      f.i32Const(pixels).localGet(p0).i32Sub().localSet(rest);
      setMinU(f, count, PIXEL_BLOCK, { local: rest });
      f.localGet(input).localGet(p0).localGet(count).localGet(scratch).call(im2col);
      f.localGet(scratch).localGet(kernel).localGet(output).localGet(p0).i32Const(o * es).i32Mul().i32Add();
      f.localGet(scratch).i32Const(colBytes).i32Add().i32Const(0).localGet(count).i32Const(0).i32Const(o);
      if (epi !== undefined) {
        // The block's rows are pixels p0.. of the whole output.
        f.localGet(p0);
        for (let x = 0; x <= nOps; x++) f.localGet(x);
      }
      f.call(rows);
    });
  });

  return {
    name,
    bytes: module.finish(),
    operandCount: nOps,
    resultCount: 1,
    scratchBytes: colBytes + rowsScratch,
    parallelExtent: Math.ceil(pixels / PIXEL_BLOCK),
    costPerUnit: 2 * PIXEL_BLOCK * kDepth * o,
  };
}
