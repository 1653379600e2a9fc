// 2-D f32 and f64 convolution kernels as im2col + GEMM, rendering the schedule of
// kernel/conv_plan.ts (which convolutions, the pixel blocks, the GEMM tiling): for each
// block of output pixels, the patches of the input they read are copied into scratch
// as the rows of a matrix (zeros where the window hangs over the padding), then the
// GEMM loop nest (gemm_rows.ts) multiplies that block by the kernel seen as a
// [KH*KW*C][O] matrix and writes the pixels' O output features.
//
// In an output fusion (epilogue.ts) the GEMM finishes each tile of output pixels with
// the fusion's epilogue as gemm_rows.ts describes: the pixels are the rows of the
// product, the output features its columns.

import type { Instruction } from "../../ir/computation.js";
import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import { convGeometry, convProblem, convWindowPositions, planConv } from "../kernel/conv_plan.js";
import type { GemmTiling } from "../kernel/gemm_plan.js";
import { gemmFuses, WASM_GEMM_TARGET } from "./gemm_microkernel.js";
import { emitGemmRows, type KernelEpilogue } from "./gemm_rows.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import type { Declined } from "../kernel/declined.js";
import { forRange, setMinU } from "./loops.js";

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

/**
 * The convolution kernel: run(input, kernel, output, scratch, begin, end) over blocks of
 * output pixels; with an epilogue, run(operand0, ..., operandN-1, output, scratch,
 * begin, end), input and kernel among the operands.
 */
export function emitConvKernel(
  conv: Instruction<"convolution">, target: WasmTarget, tilingOverride?: Partial<GemmTiling>, epilogue?: KernelEpilogue,
): WasmKernel | Declined {
  const g = convGeometry(conv);
  if ("declined" in g) return g;
  if (!target.simd) return { declined: "convolution: needs SIMD128" };
  const problem = convProblem(g);
  if (problem !== undefined) return { declined: problem };
  const type = g.type;
  const es = type === "f32" ? 4 : 8;
  const schedule = planConv(g, WASM_GEMM_TARGET, tilingOverride);
  const { pixels, kDepth, pixelBlock, patchRow, tiling } = schedule;
  const o = g.o;
  const name = `conv ${conv.name} ${pixels}px ${kDepth}x${o}${type === "f64" ? " f64" : ""}${epilogue === undefined ? "" : " with epilogue"}`;
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const remainder = pixels % pixelBlock % tiling.mr;
  const { rows, scratchBytes: rowsScratch } = emitGemmRows(module, { type, n: o, k: kDepth, aRow: patchRow * es, aK: es, bK: o * es, bLine: es },
    tiling, gemmFuses(target, tiling), remainder === 0 ? [] : [remainder], epi === undefined ? undefined : { fn: epi, operands: nOps, keepProduct: epilogue!.keepProduct, inRegisters: epilogue!.inRegisters });
  const colBytes = Math.ceil((pixelBlock * patchRow * es) / 64) * 64;

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
      f.localGet(dst).localGet(q).i32Const(patchRow * es).i32Mul().i32Add().localSet(d);
      for (const { dy, dx, column } of convWindowPositions(g)) {
        f.localGet(y0).i32Const(dy).i32Add().localSet(y);
        f.localGet(x0).i32Const(dx).i32Add().localSet(x);
        // Unsigned comparisons also reject negative coordinates (the low padding).
        f.localGet(y).i32Const(g.inputSizes[0]).i32LtU().localGet(x).i32Const(g.inputSizes[1]).i32LtU().i32And().if();
        f.localGet(baseAt).localGet(y).i32Const(g.inputStrides[1] * es).i32Mul().i32Add().localGet(x).i32Const(g.inputStrides[2] * es).i32Mul().i32Add().localSet(src);
        emitCopy(f, src, d, column * es, g.c * es);
        f.else();
        emitCopy(f, undefined, d, column * es, g.c * es);
        f.end();
      }
    });
  });

  module.addFunction("run", new Array<"i32">(nOps + 4).fill("i32"), [], (f) => {
    const [input, kernel] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [output, scratch, begin, end] = [nOps, nOps + 1, nOps + 2, nOps + 3];
    const [blk, p0, count, rest] = [f.local("i32"), f.local("i32"), f.local("i32"), f.local("i32")];
    forRange(f, blk, { local: begin }, { local: end }, 1, () => {
      f.localGet(blk).i32Const(pixelBlock).i32Mul().localSet(p0);
      f.i32Const(pixels).localGet(p0).i32Sub().localSet(rest);
      setMinU(f, count, pixelBlock, { local: rest });
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
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
  };
}
