// Input (reduction) fusions as C. One-stage row reductions (J = 1) and row pipelines
// (softmax, layer norm) are kernels of statements (kernel/reduce_kernel.ts,
// kernel/row_pipeline_kernel.ts) printed by printKernelC (emit_c_loop.ts): lane arrays
// of C_REDUCE_TARGET's 64 scalars the compiler vectorizes, their AVX-512 form in 16-lane
// vectors, the halving fold (c_accumulators.ts), row buffers and rings of results on the
// stack. This file renders the column reductions (J > 1) from their schedule
// (kernel/schedule_reduce.ts) over the loop nest of kernel/reduce_loops.ts (rows, one
// work unit each; the reduced dimensions r; the kept dimensions after them j):
// accumulators for a block of j, the j loop innermost (contiguous, vectorized) inside
// the r loop; f16 and bf16 accumulators and generic reducers (argmax...) in the
// interpreter's order (init first, then the elements in row-major order), so their
// results are exact.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { FusedKernelIR, ReducerKind } from "../kernel/lower_fusion.js";
import { reachable } from "../kernel/kernel_plan.js";
import { scheduleReduce, type ReduceSchedule, type ReduceTarget } from "../kernel/schedule_reduce.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CValues, cConst, cType } from "./c_values.js";
import { DeclinedError } from "../kernel/declined.js";
import { cCombine, VECTOR_LANES } from "./c_accumulators.js";
import { rowReduceKernel, type ReduceKernelTarget } from "../kernel/reduce_kernel.js";
import { rowPipelineKernel } from "../kernel/row_pipeline_kernel.js";
import { LoadPlan, NATIVE_VECTOR_TARGET, printKernelC } from "./emit_c_loop.js";
import { STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";
import { appendAll } from "../../types/arrays.js";

/**
 * The machine the reduction schedule is made for: lane accumulators of four 512-bit
 * vectors a reduction (256 bytes, which the C compiler vectorizes), folded by halving;
 * halves and generic reducers in the interpreter's order; row buffers on the stack, at
 * most 128 KiB; column reductions 256 outputs at a time; on AVX-512 a form in vectors of
 * sixteen f32 (emit_c_vector.ts) for kernels of VECTOR_MIN_ELEMENTS or more.
 */
export const C_REDUCE_TARGET: ReduceTarget = {
  vectorBytes: 64, accumulatorVectors: 4, foldByHalving: true, sequentialHalves: true, anyRowPipeline: true,
  rowBufferValues: "costlyOp", rowBufferBudget: 128 * 1024, columnBlock: 256, laneArrays: true,
  vectorForm: { lanes: VECTOR_LANES, minElements: VECTOR_MIN_ELEMENTS, streamMinBytes: STREAM_MIN_BYTES },
};

const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/** The reduction kernels' questions (kernel/reduce_kernel.ts) answered for C: the loop kernels' vectors, which combine f32 add, mul, max and min. */
export const C_REDUCE_KERNEL_TARGET: ReduceKernelTarget = {
  vector: NATIVE_VECTOR_TARGET,
  vectorCombines: (kind, t) => t === "f32" && (kind === "add" || kind === "mul" || kind === "max" || kind === "min"),
};

export function emitReduceKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  const red = ir.reduce!;
  const scheduled = scheduleReduce(ir, C_REDUCE_TARGET);
  if ("declined" in scheduled) throw new DeclinedError(scheduled.declined);
  const schedule: ReduceSchedule = scheduled;
  const kernelOf = (c: string): NativeKernel => ({
    name,
    c: symbolize("reduce", c),
    operandCount: ir.inputs.length,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
    rows: schedule.rows,
  });
  // One-stage row reductions and row pipelines are kernels of statements (kernel/reduce_kernel.ts, kernel/row_pipeline_kernel.ts).
  const kernel = rowReduceKernel(ir, schedule, C_REDUCE_KERNEL_TARGET) ?? rowPipelineKernel(ir, schedule, C_REDUCE_KERNEL_TARGET);
  if (kernel !== undefined) return kernelOf(printKernelC(kernel).join("\n"));
  const sched = schedule.reductions;
  const L = schedule.loops;
  const { graph: g, rowVar, rVar, jVar, Rn, J, values, inits, outputs } = L;
  const nIn = ir.inputs.length;
  const fullOut = schedule.fullOutputs;
  const reducedOut = schedule.rowOutputs;
  /** Generic reducers: for reduction k, its group's first reduction and parameter and result nodes. */
  const generic = sched.map((r) => r.group);

  const lines: string[] = [`static void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {`];
  const accName = (k: number): string => `acc${k}`;
  /** Names of leaves in the current context: loop variables, reduction results, reducer parameters. */
  let leafNames = new Map<number, string>();
  const leaf = (id: number): string => leafNames.get(id) ?? (() => { throw new Error(`leaf node ${id} (${g.node(id).op}) has no name here`); })();
  /** CValues for code outside the element loops (inits, epilogues): loads address their element directly. */
  const scalarValues = (prefix: string): CValues => {
    const v: CValues = new CValues(g, {
      load: (n) => `${bufferPointer(cType(n.type), n.attr as number, v.names.get(n.args[0]!)!, storageBytes(n.type as ElementType), true)}[0]`,
      leaf: (n) => leaf(n.id),
    }, prefix);
    return v;
  };
  const accumNode = new Map<number, number>();
  for (const n of g.nodes) if (n.op === "accum") accumNode.set(n.id, n.attr as number);
  /** Leaves shared by every loop of a context: the row, j, and the reductions' results (`result(k)`). */
  const contextLeaves = (row: string, j: string, result: (k: number) => string): Map<number, string> => new Map<number, string>([
    [rowVar, row], [jVar, j], ...[...accumNode.entries()].map(([id, k]) => [id, result(k)] as [number, string]),
  ]);
  const outPointer = (k: number, row: string): string => {
    const o = ir.outputs[k]!;
    const t = cType(o.type);
    const perRow = o.full === true ? Rn * J : J;
    return `${t} *restrict out${k} = ${bufferPointer(t, nIn + k, `${row} * ${perRow}`, storageBytes(o.type), false)};`;
  };

  /** How a pass's statements read a node's value. */
  type ValueOf = (id: number) => string;
  /**
   * One pass over the elements, in the loop over `innerVar` (named `inner`): `pre`, what
   * goes before the loop (the nodes that do not vary along it, the loads' row pointers),
   * and `body`, each element's statements (the nodes of `roots`, then `step`'s).
   */
  const elementParts = (
    roots: readonly number[], innerVar: number, inner: string, leaves: Map<number, string>,
    step: (value: ValueOf, out: string[]) => void, prefix: string,
  ): { pre: string[]; body: string[] } => {
    const loads = new LoadPlan(g, reachable(g, roots), innerVar, inner, `${prefix}p`);
    const all = reachable(g, [...roots, ...loads.baseNodes]);
    const varying = new Set<number>();
    for (const id of all) if (id === innerVar || g.node(id).args.some((a) => varying.has(a))) varying.add(id);
    leafNames = new Map([...leaves, [innerVar, inner]]);
    const v = new CValues(g, { load: loads.load, leaf: (n) => leaf(n.id) }, prefix);
    loads.names = v.names;
    const pre: string[] = [];
    const body: string[] = [];
    v.emit(all.filter((id) => !varying.has(id)), pre, "");
    appendAll(pre, loads.pointers(v.names));
    v.emit(all.filter((id) => varying.has(id)), body, "");
    step((id) => v.names.get(id)!, body);
    return { pre, body };
  };
  const put = (indent: string, xs: readonly string[]): void => { for (const x of xs) lines.push(`${indent}${x}`); };
  /** A loop: `{ pre; header { body } }`, each part at its indent. */
  const loop = (indent: string, header: string, parts: readonly { pre: string[]; body: string[] }[]): void => {
    lines.push(`${indent}{`);
    for (const p of parts) put(`${indent}  `, p.pre);
    for (const h of header.split("\n")) lines.push(`${indent}  ${h}`);
    for (const p of parts) put(`${indent}    `, p.body);
    lines.push(`${indent}  }`);
    lines.push(`${indent}}`);
  };

  const fullStores = (ks: readonly number[], rIndex: string, jIndex: string) => (value: ValueOf, out: string[]): void => {
    for (const k of ks) out.push(`out${k}[${rIndex} * ${J} + ${jIndex}] = ${value(outputs[k]!)};`);
  };
  /** The body statements of generic reducers: their results from the accumulators and elements, then assigned. */
  const genericStep = (ks: readonly number[], acc: (k: number) => string) => (value: ValueOf, out: string[]): void => {
    const firsts = [...new Set(ks.flatMap((k) => (generic[k] === undefined ? [] : [generic[k]!.first])))];
    for (const first of firsts) {
      const gen = generic[first]!;
      const names = new Map(leafNames);
      gen.params.forEach((p, i) => names.set(p, i < gen.n ? acc(first + i) : value(values[first + i - gen.n]!)));
      const saved = leafNames;
      leafNames = names;
      const body = new CValues(g, { load: () => { throw new DeclinedError("a reducer body reads memory"); }, leaf: (n) => leaf(n.id) }, `b${first}_`);
      out.push(`{`);
      body.emit(reachable(g, gen.results), out, "  ");
      gen.results.forEach((r, i) => out.push(`  ${cType(g.node(r).type)} next${i} = ${body.names.get(r)};`));
      gen.results.forEach((_, i) => out.push(`  ${acc(first + i)} = next${i};`));
      out.push(`}`);
      leafNames = saved;
    }
  };
  /** A reduction that runs in the interpreter's order: generic, or of a half type. */
  const sequential = (k: number): boolean => sched[k]!.sequential;
  const recognizedStep = (ks: readonly number[], acc: (k: number) => string) => (value: ValueOf, out: string[]): void => {
    for (const k of ks) {
      const r = red.reductions[k]!;
      if (r.kind === "generic") continue;
      out.push(`${acc(k)} = ${cCombine(r.kind, r.type, acc(k), value(values[k]!))};`);
    }
  };
  /** Statements computing the inits of `ks` (output context) into init<k>. */
  const initValues = (ks: readonly number[], indent: string, leaves: Map<number, string>, prefix: string): void => {
    leafNames = leaves;
    const v = scalarValues(prefix);
    v.emit(reachable(g, ks.map((k) => inits[k]!)), lines, indent);
    for (const k of ks) lines.push(`${indent}const ${cType(red.reductions[k]!.type)} init${k} = ${v.names.get(inits[k]!)};`);
  };
  const B = schedule.columnBlock!;
  lines.push(`  for (int64_t row = begin; row < end; row++) {`);
  ir.outputs.forEach((_, k) => lines.push(`    ${outPointer(k, "row")}`));
  lines.push(`    for (int64_t j0 = 0; j0 < ${J}; j0 += ${B}) {`);
  lines.push(`      const int64_t j1 = j0 + ${B} < ${J} ? j0 + ${B} : ${J};`);
  const ks = red.reductions.map((_, k) => k);
  for (const k of ks) lines.push(`      ${cType(red.reductions[k]!.type)} ${accName(k)}[${B}], res${k}[${B}];`);
  const leaves = (): Map<number, string> => contextLeaves("row", "j", (k) => `res${k}[j - j0]`);
  // Inits are in output context (row, j): per j.
  lines.push(`      for (int64_t j = j0; j < j1; j++) {`);
  initValues(ks, "        ", leaves(), "i_");
  for (const k of ks) {
    const r = red.reductions[k]!;
    lines.push(`        ${accName(k)}[j - j0] = ${sequential(k) ? `init${k}` : cConst(r.type, sched[k]!.identity!)};`);
  }
  lines.push(`      }`);
  const roots = [...values, ...fullOut.map((k) => outputs[k]!)];
  lines.push(`      for (int64_t r = 0; r < ${Rn}; r++) {`);
  loop("        ", `#pragma GCC ivdep\nfor (int64_t j = j0; j < j1; j++) {`, [elementParts(roots, jVar, "j", new Map([...leaves(), [rVar, "r"]]), (value, out) => {
    recognizedStep(ks.filter((k) => generic[k] === undefined), (k) => `${accName(k)}[j - j0]`)(value, out);
    genericStep(ks.filter((k) => generic[k] !== undefined), (k) => `${accName(k)}[j - j0]`)(value, out);
    fullStores(fullOut, "r", "j")(value, out);
  }, "c_")]);
  lines.push(`      }`);
  lines.push(`      for (int64_t j = j0; j < j1; j++) {`);
  initValues(ks.filter((k) => !sequential(k)), "        ", leaves(), "f_");
  for (const k of ks) {
    const r = red.reductions[k]!;
    lines.push(`        res${k}[j - j0] = ${sequential(k) ? `${accName(k)}[j - j0]` : cCombine(r.kind as ReducerKind, r.type, `init${k}`, `${accName(k)}[j - j0]`)};`);
  }
  leafNames = leaves();
  const v = scalarValues("e");
  const reducedRoots = reducedOut.map((k) => outputs[k]!);
  v.emit(reachable(g, reducedRoots), lines, "        ");
  for (const k of reducedOut) lines.push(`        out${k}[j] = ${v.names.get(outputs[k]!)};`);
  lines.push(`      }`);
  lines.push(`    }`);
  lines.push(`  }`);
  lines.push(`}`);
  return kernelOf(lines.join("\n"));
}
