// The ragged dot's grouped GEMM as C (kernel/ragged_dot_plan.ts has the schedule and the
// forms taken): sym(mem, args = [lhs, rhs, group sizes, result, scratch], begin, end).
// Each group's part is computed by the packed GEMM routine of gemm_c.ts, built once
// for the whole rows and depth and called with the group's rows (or its depth) and its
// operands' first elements, so the microkernels, the packing and the blocking are the
// plain GEMM's. A call walks the group sizes once per slice of units it touches (a
// slice: an outer index and a chunk of columns), taking each group's range as the
// sizes so far cut at the ragged dimension's end; the sizes are non-negative, since the
// program's check step ran before.

import type { Declined } from "../kernel/declined.js";
import { planRaggedGemm, raggedGemmKernelName, type RaggedGemmSpec } from "../kernel/ragged_dot_plan.js";
import { symbolize, SYM } from "./c_source.js";
import { gemmRoutine } from "./gemm_c.js";
import { gemmFamily, type GemmFamily } from "./gemm_c_family.js";
import type { NativeCpu, NativeKernel } from "./kernel.js";

const C_SIZE_TYPES = { s32: "int32_t", s64: "int64_t", u32: "uint32_t", u64: "uint64_t" } as const;

/** The grouped GEMM kernel of a ragged dot's spec, as C. */
export function emitRaggedDotC(spec: RaggedGemmSpec, cpu: NativeCpu, family: GemmFamily = gemmFamily(cpu)): NativeKernel | Declined {
  const schedule = planRaggedGemm(spec, family.target);
  const { gemm, slots, outer, parallelExtent } = schedule;
  const { m, n, k, groups, perIndex, raggedSize, batch } = spec;
  const { mr } = gemm.tiling;
  const { mTiles, nChunks, chunk, bK } = gemm;
  const t = spec.elementType === "f32" ? "float" : "double";
  const p = `${SYM}_r`;
  const r = gemmRoutine(gemm, family, p, undefined, false, false, true);
  const gt = C_SIZE_TYPES[spec.groupSizeType];
  // The next group's range of the ragged dimension: [start, next), the sizes so far cut at its end (as unsigned: non-negative after the check).
  const advance = (g: string): string =>
    `{ start = next; uint64_t s = (uint64_t)gs[${g}]; next = s > (uint64_t)(${raggedSize} - start) ? ${raggedSize} : start + (int64_t)s; }`;
  // Rows [z0, z1) x columns [c0, c1) of c set to zero.
  const zeros = `for (int64_t i = z0; i < z1; i++) for (int64_t j = c0; j < c1; j++) c[i * ${n} + j] = 0;`;
  let body: string;
  switch (spec.mode) {
    case "nonContracting":
      body = `
    int64_t bi = o;
    const ${t} *a = (const ${t} *)a8 + bi * ${m * k};
    const ${t} *b = (const ${t} *)b8 + bi * ${spec.rhsBatchStride};
    ${t} *c = (${t} *)c8 + bi * ${m * n};
    /* Slots in group order, one a tile of the group's rows; then the tiles of zeros past the last group. */
    int64_t start = 0, next = 0, slot = 0;
    for (int64_t g = 0; g < ${groups} && slot < hi; g++) {
      ${advance("g")}
      int64_t rows = (next - start) * ${perIndex}, tiles = (rows + ${mr - 1}) / ${mr};
      int64_t tlo = lo - slot < 0 ? 0 : lo - slot, thi = hi - slot < tiles ? hi - slot : tiles;
      if (tlo < thi) ${p}_gemm((uint8_t *)(a + start * ${perIndex * k}), (uint8_t *)(b + g * ${spec.rhsGroupStride}), (uint8_t *)(c + start * ${perIndex * n}), scratch,
        ch * ${mTiles} + tlo, ch * ${mTiles} + thi, rows, ${k});
      slot += tiles;
    }
    if (slot < hi) {
      int64_t first = next * ${perIndex}, tlo = lo - slot < 0 ? 0 : lo - slot;
      int64_t z0 = first + tlo * ${mr}, z1 = first + (hi - slot) * ${mr} < ${m} ? first + (hi - slot) * ${mr} : ${m};
      ${zeros}
    }`;
      break;
    case "contracting":
      body = `
    int64_t g = o / ${batch}, bi = o % ${batch};
    int64_t start = 0, next = 0;
    for (int64_t q = 0; q <= g; q++) ${advance("q")}
    const ${t} *a = (const ${t} *)a8 + bi * ${m * k} + start;
    const ${t} *b = (const ${t} *)b8 + bi * ${k * n} + start * ${bK};
    ${t} *c = (${t} *)c8 + o * ${m * n};
    ${p}_gemm((uint8_t *)a, (uint8_t *)b, (uint8_t *)c, scratch, ch * ${mTiles} + lo, ch * ${mTiles} + hi, ${m}, next - start);`;
      break;
    case "batch":
      body = `
    int64_t bi = o, start = 0, next = 0;
    for (int64_t g = 0; g < ${groups}; g++) ${advance("g")}
    ${t} *c = (${t} *)c8 + bi * ${m * n};
    /* Batch bi is ragged index bi / ${perIndex}: in a group below the groups' end. */
    if (bi < next * ${perIndex}) {
      ${p}_gemm((uint8_t *)((const ${t} *)a8 + bi * ${m * k}), (uint8_t *)((const ${t} *)b8 + bi * ${k * n}), (uint8_t *)c, scratch,
        ch * ${mTiles} + lo, ch * ${mTiles} + hi, ${m}, ${k});
    } else {
      int64_t z0 = lo * ${mr}, z1 = hi * ${mr} < ${m} ? hi * ${mr} : ${m};
      ${zeros}
    }`;
      break;
  }
  const source = `${r.source}
void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {
  uint8_t *a8 = mem + args[0], *b8 = mem + args[1], *c8 = mem + args[3];
  const ${gt} *gs = (const ${gt} *)(mem + args[2]);
  uint8_t *scratch = ${r.scratchBytes > 0 ? "mem + args[4]" : "0"};
  /* Units (outer index, chunk of columns, slot): a slice is one outer index and chunk. */
  for (int64_t slice = begin / ${slots}; slice < ${outer * nChunks} && slice * ${slots} < end; slice++) {
    int64_t lo = begin - slice * ${slots}; if (lo < 0) lo = 0;
    int64_t hi = end - slice * ${slots}; if (hi > ${slots}) hi = ${slots};
    if (lo >= hi) continue;
    int64_t o = slice / ${nChunks}, ch = slice % ${nChunks};
    int64_t c0 = ch * ${chunk}, c1 = c0 + ${chunk} < ${n} ? c0 + ${chunk} : ${n};
    (void)c0; (void)c1;${body}
  }
}
`;
  return {
    name: `${raggedGemmKernelName(spec)} ${family.name}`,
    c: symbolize("ragged_gemm", source),
    operandCount: 3,
    resultCount: 1,
    scratchBytes: r.scratchBytes,
    parallelExtent,
    costPerUnit: schedule.costPerUnit,
    runtimeCheck: { operand: 2, check: "raggedDotGroupSizes" },
    // A piece keeps a slice's units together (each call packs the B blocks it reads).
    balance: { grain: slots, cutsGrain: false, alwaysSplits: false },
  };
}
