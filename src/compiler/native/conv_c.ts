// 2-D f32 and f64 convolution kernels as C: im2col + the GEMM microkernels of
// gemm_c_family.ts, for the convolutions kernel/conv_plan.ts takes (convGeometry: features
// innermost, NHWC / HWIO / NHWC up to the order of batch and spatial dimensions, any
// strides, padding and window dilation).
//
// The kernel is the B matrix ([KH*KW*C][O], row-major as stored), packed into nr-column
// panels once per call and block (kc x nc sized for L2), or read already packed where the
// filter is a constant or a weight parameter (packedFilterOf: the program's planner or
// the executable packs it once, as for a GEMM's B); the output pixels are the rows
// of A: for each block of pixels, their patches are copied into scratch as rows of
// KH*KW*C elements (zeros where the window hangs over the padding), and the microkernel
// reads mr of those rows in place (they stay in L1) against each panel of B.
//
// Accumulation: in the element type, over the kernel's memory order (spatial, then input
// feature), in blocks of kc as gemm_c.ts describes (one block while the kernel matrix
// fits in L2).
//
// Work split: parallelExtent counts blocks of output pixels.
//
// The pixel blocks, the padded patch rows and the GEMM blocking are the schedule's
// (kernel/conv_plan.ts, planConv with the family's GemmTarget); this file renders it.

import type { Instruction } from "../../ir/computation.js";
import { convGeometry, convProblem, convWindowPositions, planConv, type ConvGeometry, type ConvSchedule } from "../kernel/conv_plan.js";
import type { PackedB } from "../kernel/gemm_plan.js";
import type { Declined } from "../kernel/declined.js";
import { packBSource } from "./gemm_c.js";
import { SYM, symbolize } from "./c_source.js";
import { gemmFamily, microkernelSource, type GemmFamily } from "./gemm_c_family.js";
import type { NativeCpu, NativeKernel } from "./kernel.js";
import { roundUp } from "../../types/index_util.js";

/** A convolution routine's C definitions, and its work split and scratch size. */
export interface ConvRoutine {
  /**
   * Defines `static void <prefix>_conv(uint8_t *input, uint8_t *kernel, uint8_t *output,
   * uint8_t *scratch, int64_t begin, int64_t end[, uint8_t *mem, const uint32_t *args])`.
   */
  readonly source: string;
  readonly parallelExtent: number;
  readonly scratchBytes: number;
  readonly costPerUnit: number;
}

/**
 * The layout the routine reads its kernel matrix in when given it packed: blocks of nc
 * columns and kc steps of depth, as the routine's loops visit them (packB's layout, one
 * chunk per block of columns); undefined where the blocks of columns are not whole panels.
 */
export function packedFilterOf(schedule: ConvSchedule): PackedB | undefined {
  const { geometry: g, kDepth, nr } = schedule;
  const { kc, nc } = schedule.tiling;
  if (g.o > nc && nc % nr !== 0) return undefined;
  return { elementType: g.type, batch: 1, k: kDepth, n: g.o, nr, kc, chunk: nc, blockColumns: nc, bK: g.o, bLine: 1 };
}

/**
 * The convolution routine of a schedule planned for `family`. `finish`, a C statement,
 * runs on each block of output once final: pixels [fr0, fr1) x features [c0, c1),
 * int64_t in scope (bi = 0). `prepackedB`: the kernel matrix comes in packedFilterOf's layout.
 */
export function convRoutine(schedule: ConvSchedule, family: GemmFamily, prefix: string, finish?: string, prepackedB = false): ConvRoutine {
  const { geometry: g, pixels, kDepth, nr, pixelBlock: block, patchRow: ld } = schedule;
  const { mr, kc, nc } = schedule.tiling;
  const type = g.type;
  const t = type === "f32" ? "float" : "double";
  const es = type === "f32" ? 4 : 8;
  const o = g.o;
  const bBytes = prepackedB ? 0 : roundUp(kc * nc * es, 64);
  const patchBytes = roundUp(block * ld * es, 64);
  const tileBytes = roundUp(mr * nr * es, 64);
  const [d1, d2] = [g.outputSizes[1], g.outputSizes[2]];
  const inner = [d1 * d2, d2, 1];
  const coord = (j: number): string => `(p / ${inner[j]})${j > 0 ? ` % ${g.outputSizes[j]}` : ""}`;
  const coordOf = (role: number): string => coord(g.outputRoles.indexOf(role));
  const windows = convWindowPositions(g).map(({ dy, dx, column }) => `      { int64_t y = y0 + ${dy}, x = x0 + ${dx};
        if ((uint64_t)y < ${g.inputSizes[0]} && (uint64_t)x < ${g.inputSizes[1]}) { const ${t} *src = base + y * ${g.inputStrides[1]} + x * ${g.inputStrides[2]}; for (int64_t e = 0; e < ${g.c}; e++) row[${column} + e] = src[e]; }
        else for (int64_t e = 0; e < ${g.c}; e++) row[${column} + e] = 0; }`);
  const p = prefix;
  const source = `
${microkernelSource(family, type, p, ld)}
${prepackedB ? "" : packBSource(t, p, nr, o, 1)}
/* Rows q < ${block} of the patch matrix for pixels p0 + q (zero rows past count). */
static void ${p}_im2col(const ${t} *restrict input, ${t} *restrict patches, int64_t p0, int64_t count) {
  for (int64_t q = 0; q < ${block}; q++) {
    ${t} *restrict row = patches + q * ${ld};
    if (q >= count) { for (int64_t e = 0; e < ${kDepth}; e++) row[e] = 0; continue; }
    int64_t p = p0 + q;
    const ${t} *base = input + ${coordOf(0)} * ${g.inputStrides[0]};
    int64_t y0 = ${coordOf(1)} * ${g.stride[0]} - ${g.padLow[0]};
    int64_t x0 = ${coordOf(2)} * ${g.stride[1]} - ${g.padLow[1]};
${windows.join("\n")}
  }
}
static void ${p}_conv(uint8_t *in8, uint8_t *k8, uint8_t *out8, uint8_t *scratch, int64_t begin, int64_t end${finish === undefined ? "" : ", uint8_t *mem, const uint32_t *args"}) {
  const ${t} *input = (const ${t} *)in8;
  const ${t} *kernel = (const ${t} *)k8;
  ${t} *out = (${t} *)out8;
  ${prepackedB ? `const ${t} *bp;` : `${t} *bp = (${t} *)scratch;`}
  ${t} *patches = (${t} *)(scratch + ${bBytes});
  ${t} *tile = (${t} *)(scratch + ${bBytes + patchBytes});
  const int64_t bi = 0; (void)bi;
  for (int64_t c0 = 0; c0 < ${o}; c0 += ${nc}) {
    int64_t c1 = c0 + ${nc} < ${o} ? c0 + ${nc} : ${o};
    for (int64_t k0 = 0; k0 < ${kDepth}; k0 += ${kc}) {
      int64_t kl = ${kDepth} - k0 < ${kc} ? ${kDepth} - k0 : ${kc};
      int acc = k0 > 0;
      ${prepackedB ? `bp = kernel + c0 * ${kDepth} + k0 * ((c1 - c0 + ${nr - 1}) / ${nr} * ${nr});` : `${p}_pack_b(kernel, bp, k0, kl, c0, c1 - c0);`}
      for (int64_t blk = begin; blk < end; blk++) {
        int64_t px0 = blk * ${block};
        int64_t count = ${pixels} - px0 < ${block} ? ${pixels} - px0 : ${block};
        ${p}_im2col(input, patches, px0, count);
        for (int64_t i = 0; i < count; i += ${mr}) {
          int64_t rows = count - i < ${mr} ? count - i : ${mr};
          for (int64_t j = c0; j < c1; j += ${nr}) {
            int64_t cols = c1 - j < ${nr} ? c1 - j : ${nr};
            const ${t} *a = patches + i * ${ld} + k0;
            const ${t} *bpanel = bp + (j - c0) * kl;
            ${t} *c = out + (px0 + i) * ${o} + j;
            if (rows == ${mr} && cols == ${nr}) {
              ${p}_micro(kl, a, bpanel, c, ${o}, acc);
            } else {
              ${p}_micro(kl, a, bpanel, tile, ${nr}, 0);
              for (int64_t r = 0; r < rows; r++) {
                if (acc) for (int64_t q = 0; q < cols; q++) c[r * ${o} + q] += tile[r * ${nr} + q];
                else for (int64_t q = 0; q < cols; q++) c[r * ${o} + q] = tile[r * ${nr} + q];
              }
            }
          }
        }${finish === undefined ? "" : `
        if (k0 + kl == ${kDepth}) { int64_t fr0 = px0, fr1 = px0 + count; ${finish} }`}
      }
    }
  }
}
`;
  return {
    source,
    parallelExtent: schedule.parallelExtent,
    scratchBytes: bBytes + patchBytes + tileBytes,
    costPerUnit: schedule.costPerUnit,
  };
}

/** Why the C convolution kernels (alone or with an epilogue) do not take a geometry: convProblem's reasons, and no output features. */
export function nativeConvProblem(g: ConvGeometry): string | undefined {
  return convProblem(g) ?? (g.o === 0 ? "convolution: no output features" : undefined);
}

/**
 * The convolution kernel as C: sym(mem, args = [input, kernel, output, scratch], begin, end);
 * `symbol` and `family` as emitGemmC's. `packableFilter`: the kernel operand is a constant
 * or a weight, which the kernel reads packed (its packedOperand says how).
 */
export function emitConvC(
  conv: Instruction<"convolution">, cpu: NativeCpu, symbol?: string, family: GemmFamily = gemmFamily(cpu), packableFilter = false,
): NativeKernel | Declined {
  const g = convGeometry(conv);
  if ("declined" in g) return g;
  const problem = nativeConvProblem(g);
  if (problem !== undefined) return { declined: problem };
  const schedule = planConv(g, family.target);
  const packed = packableFilter ? packedFilterOf(schedule) : undefined;
  const name = `conv ${conv.name} ${schedule.pixels}px ${schedule.kDepth}x${g.o}${g.type === "f64" ? " f64" : ""} ${family.name}${packed !== undefined ? " (B pre-packed)" : ""}`;
  const sym = symbol ?? SYM;
  const r = convRoutine(schedule, family, sym, undefined, packed !== undefined);
  const source = `${r.source}
void ${sym}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {
  ${sym}_conv(mem + args[0], mem + args[1], mem + args[2], mem + args[3], begin, end);
}
`;
  return {
    name,
    c: symbol === undefined ? symbolize("conv", source) : { symbol, source },
    operandCount: 2,
    resultCount: 1,
    scratchBytes: r.scratchBytes,
    parallelExtent: r.parallelExtent,
    costPerUnit: r.costPerUnit,
    ...(packed !== undefined ? { packedOperand: { operand: 1, layout: packed } } : {}),
  };
}


