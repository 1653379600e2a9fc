// Dots whose product is only transposed after them, found once on a fused computation
// for every backend whose GEMM stores its result through strides (a StridedGemm's outRow
// and outCol, kernel/gemm_plan.ts stridedGemmOfDot with a result permutation): such a
// backend writes the product where the transpose would have put it, and the transpose's
// copy kernel is left out (attention's heads' outputs [h, s, d] back to [s, h, d]).
// Backend-neutral, as DESIGN.md's schedules are: it only reads the fused IR; which dots
// a backend then takes is its GEMM's own answer (WebGPU's wgslTransposedDotKernel, the
// CPU GEMMs' routines.ts compileTransposedDot, C or WebAssembly; a dot its GEMM declines,
// such as one of a few rows that a streaming kernel takes, keeps the transpose as a
// kernel of its own).

import type { Computation, Instruction } from "../../ir/computation.js";

/**
 * The transpose a loop fusion is, where it only permutes its one operand (a transpose,
 * maybe reshaped after: attention's heads' outputs [h, s, d] to [s, h·d]): its permutation.
 */
function transposeOnly(inst: Instruction): readonly number[] | undefined {
  if (inst.opcode !== "fusion" || (inst as Instruction<"fusion">).attrs.kind !== "loop" || inst.operands.length !== 1) return undefined;
  const fused = (inst as Instruction<"fusion">).attrs.calledComputation;
  let x = fused.root;
  let reshapes = 0;
  for (; x.opcode === "reshape"; reshapes++) x = x.operands[0]!;
  // Nothing else in the fusion: its parameter, the transpose and the reshapes after it.
  if (x.opcode !== "transpose" || x.operands[0]?.opcode !== "parameter" || fused.instructions.length !== reshapes + 2) return undefined;
  return (x as Instruction<"transpose">).attrs.permutation;
}

/** A dot's one user that only transposes it, and that transpose's permutation. */
export interface TransposedAfter {
  readonly user: Instruction;
  readonly permutation: readonly number[];
}

/**
 * Dots of `c` whose one use is a fusion that only transposes them, with it and its
 * permutation. (An epilogue over the product is fused with the transpose into one loop
 * fusion, not an output fusion then a transpose: such a product is left as it is.)
 */
export function dotsTransposedAfter(c: Computation): Map<Instruction, TransposedAfter> {
  const uses = new Map<Instruction, number>([[c.root, 1]]);
  for (const inst of c.instructions) for (const o of inst.operands) uses.set(o, (uses.get(o) ?? 0) + 1);
  const found = new Map<Instruction, TransposedAfter>();
  for (const inst of c.instructions) {
    const permutation = transposeOnly(inst);
    const dot = inst.operands[0];
    if (permutation !== undefined && dot?.opcode === "dot" && uses.get(dot) === 1) found.set(dot, { user: inst, permutation });
  }
  return found;
}
