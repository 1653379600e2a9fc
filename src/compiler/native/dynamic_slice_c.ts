// Dynamic-slice and dynamic-update-slice as C: the schedule of kernel/dynamic_slice_plan.ts
// (a unit of work is a row of the result; start indices clamped as the interpreter
// does) rendered with memcpy. They take every element type (they copy bytes), so a
// decode step's KV-cache writes run in the native module with the kernels around them.
// Row coordinates are found once, at the first row, and then counted up, so rows cost no
// divisions.

import type { Instruction } from "../../ir/computation.js";
import { isDeclined, type Declined } from "../kernel/declined.js";
import { planDynamicSlice, planDynamicUpdateSlice, type DynamicSlicePlan } from "../kernel/dynamic_slice_plan.js";
import { isSignedInt } from "../../types/element_type.js";
import { SYM, symbolize } from "./c_source.js";
import { cType } from "./c_values.js";
import type { NativeKernel } from "./kernel.js";
import { elementCount } from "../../types/shape.js";
import { rowMajorStrides } from "../../types/index_util.js";

/** Declarations of `s<d>`: start index d (argument plan.firstStart + d) clamped to [0, startLimits[d]]. */
function clampedStarts(plan: DynamicSlicePlan): string[] {
  return plan.indexTypes.map((t, d) => {
    const hi = plan.startLimits[d]!;
    const ct = cType(t);
    const v = `v${d}`;
    // Compared in 64 bits before narrowing: a u64 above 2^63 or an s64 past 32 bits clamps exactly.
    const clamp = isSignedInt(t) ? `${v} < 0 ? 0 : ${v} > ${hi} ? ${hi} : (int64_t)${v}` : `${v} > ${hi}u ? ${hi} : (int64_t)${v}`;
    return `  int64_t s${d};\n  { ${ct} ${v}; memcpy(&${v}, mem + args[${plan.firstStart + d}], sizeof ${v}); s${d} = ${clamp}; }`;
  });
}

/**
 * `c<d>` for the outer dimensions: row `first`'s coordinates (a C expression), and the
 * statement that moves them to the next row (the last outer one counts up, carrying into
 * those before it).
 */
function rowCoordinates(rowDims: readonly number[], first: string): { declare: string; next: string } {
  const n = rowDims.length;
  if (n === 0) return { declare: "", next: "" };
  const inner = rowMajorStrides(rowDims);
  // No rows (a dimension of 0): the loop never runs, and no division by 0 is printed.
  const empty = rowDims.includes(0);
  const declare = rowDims.map((size, d) => `  int64_t c${d} = ${empty ? "0" : `${first} / ${inner[d]}${d > 0 ? ` % ${size}` : ""}`};`).join("\n");
  // The last outer coordinate counts up; each one that wraps carries into the one before it.
  const carries: string[] = [`c${n - 1}++;`];
  for (let d = n - 1; d > 0; d--) carries.push(`if (c${d} == ${rowDims[d]}) { c${d} = 0; c${d - 1}++; }`);
  return { declare, next: carries.join(" ") };
}

function kernelOf(plan: DynamicSlicePlan, kind: string, body: string): NativeKernel {
  const rank = plan.operandDims.length;
  const source = `void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {\n${body}\n}\n`;
  return {
    name: plan.name, c: symbolize(kind, source), operandCount: plan.firstStart + rank, resultCount: 1, scratchBytes: 0,
    parallelExtent: plan.parallelExtent, costPerUnit: plan.costPerUnit,
  };
}

export function emitDynamicSliceC(inst: Instruction<"dynamicSlice">): NativeKernel | Declined {
  const plan = planDynamicSlice(inst);
  if (isDeclined(plan)) return plan;
  const rank = plan.operandDims.length;
  const rowBytes = plan.windowRowBytes;
  const { declare, next } = rowCoordinates(plan.rowDims, "begin");
  // The operand's byte offset of the row at coordinates start + c (column start[last]).
  const src = plan.operandStrides.map((stride, d) => `(s${d}${d < rank - 1 ? ` + c${d}` : ""}) * ${stride}`).join(" + ") || "0";
  const body = [
    ...clampedStarts(plan),
    `  const uint8_t *op = mem + args[0];`,
    `  uint8_t *dst = mem + args[${1 + rank}] + begin * ${rowBytes};`,
    declare,
    `  for (int64_t r = begin; r < end; r++, dst += ${rowBytes}) {`,
    `    memcpy(dst, op + ${src}, ${rowBytes});`,
    `    ${next}`,
    `  }`,
  ];
  return kernelOf(plan, "dynamic_slice", body.filter((l) => l.trim() !== "").join("\n"));
}

export function emitDynamicUpdateSliceC(inst: Instruction<"dynamicUpdateSlice">): NativeKernel | Declined {
  const plan = planDynamicUpdateSlice(inst);
  if (isDeclined(plan)) return plan;
  const rank = plan.operandDims.length;
  const { operandRowBytes: rowBytes, windowRowBytes: updRowBytes, windowRowDims, operandRowStrides, elementBytes: es } = plan;
  const outer = windowRowDims.map((_, d) => d);
  // The update's rows, counted from 0 (rowCoordinates counts from `begin`).
  const { declare, next } = rowCoordinates(windowRowDims, "0");
  const row = outer.map((d) => `(s${d} + c${d}) * ${operandRowStrides[d]}`).join(" + ") || "0";
  const column = rank > 0 ? `s${rank - 1} * ${es}` : "0";
  const body = [
    ...clampedStarts(plan),
    `  const uint8_t *op = mem + args[0], *upd = mem + args[1];`,
    `  uint8_t *res = mem + args[${2 + rank}];`,
    `  if (op != res) memcpy(res + begin * ${rowBytes}, op + begin * ${rowBytes}, (size_t)(end - begin) * ${rowBytes});`,
    declare,
    `  for (int64_t u = 0; u < ${elementCount(plan.windowRowDims)}; u++) {`,
    `    const int64_t r = ${row};`,
    // memmove: an update that shares the result's buffer still copies exactly.
    `    if (r >= begin && r < end) memmove(res + r * ${rowBytes} + ${column}, upd + u * ${updRowBytes}, ${updRowBytes});`,
    `    ${next}`,
    `  }`,
  ];
  return kernelOf(plan, "dynamic_update_slice", body.filter((l) => l.trim() !== "").join("\n"));
}
