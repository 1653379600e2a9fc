// Input (reduction) fusions as C. One-stage row reductions (J = 1) are kernels of
// statements (kernel/reduce_kernel.ts) printed by printKernelC (emit_c_loop.ts): lane
// arrays of C_REDUCE_TARGET's 64 scalars the compiler vectorizes, their AVX-512 form in
// 16-lane vectors, the halving fold (c_accumulators.ts). So are column reductions (J > 1,
// kernel/column_reduce_kernel.ts): blocks of C_REDUCE_TARGET's 256 outputs in lane arrays,
// the loop over the block's j innermost (contiguous, vectorized) inside the r loop. This
// file renders the rest of kernel/schedule_reduce.ts's schedules, the row pipelines
// (stages, skew, ring slots, row buffers, lanes and their fold, side accumulators,
// sequential reductions) over the loop nest
// of kernel/reduce_loops.ts: rows (one work unit each), the reduced dimensions r, the kept
// dimensions after them j.
//
//  - Row pipelines (softmax, layer norm: a reduction or output reads an earlier
//    reduction's result along the row) run as the WebAssembly backend's do
//    (wasm/emit_row_pipeline.ts): stage s of the pipeline on row t - s at step t, the
//    stages' element loops fused into one, so the row is read from memory once, by
//    stage 0, and the later stages find it in L1. A costly value a later stage reads
//    again (softmax's exp(x - max), summed by stage 1 and divided by stage 2) is stored
//    by the first stage into a row buffer on the stack and loaded by the later ones.
//    Recognized reducers (add, mul, max, min, and, or of f32, f64, integers and pred)
//    run in lane arrays (c_accumulators.ts), folded at the end of the row, then a scalar
//    tail: floats are reassociated, as by the WebAssembly kernel and XLA's CPU backend;
//    integer and min/max results are exact in any order.
//  - On AVX-512, pipelines (of VECTOR_MIN_ELEMENTS or more) whose reductions are f32
//    add, mul, max or min are also written in 16-lane vectors (emit_c_vector.ts), the
//    same lanes in the same order, so the same bits; the preprocessor picks that form
//    where the target has it. Their full-shape outputs of STREAM_MIN_BYTES or more are
//    written by streaming stores, which keep the output from evicting the input from
//    the caches.
//  - f16 and bf16 accumulators and generic reducers (argmax...) run in the
//    interpreter's order (init first, then the elements in row-major order), one
//    element at a time, the stages one after the other, so their results are exact.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { FusedKernelIR, ReducerKind } from "../kernel/lower_fusion.js";
import type { KernelGraph } from "../kernel/graph.js";
import { reachable } from "../kernel/kernel_plan.js";
import { scheduleReduce, type ReduceSchedule, type ReduceTarget } from "../kernel/schedule_reduce.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CValues, cConst, cType } from "./c_values.js";
import { DeclinedError } from "../kernel/declined.js";
import { cCombine, declareLanes, declareVectorLanes, foldLanes, laneStep, spillVectorLanes, VECTOR_LANES, vectorLaneStep, type Lanes } from "./c_accumulators.js";
import { rowReduceKernel, type ReduceKernelTarget } from "../kernel/reduce_kernel.js";
import { columnReduceKernel } from "../kernel/column_reduce_kernel.js";
import { LoadPlan, NATIVE_VECTOR_TARGET, printKernelC } from "./emit_c_loop.js";
import { VECTOR_CONDITION } from "./c_math.js";
import { STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";
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

/** Nodes reachable from `roots` without passing through `stop` (ascending). */
function reachableStopping(g: KernelGraph, roots: readonly number[], stop: ReadonlySet<number>): number[] {
  const seen = new Set<number>();
  const todo = [...roots];
  while (todo.length > 0) {
    const id = todo.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    if (!stop.has(id)) appendAll(todo, g.node(id).args);
  }
  return [...seen].sort((x, y) => x - y);
}

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
  // One-stage row reductions and column reductions are kernels of statements
  // (kernel/reduce_kernel.ts, kernel/column_reduce_kernel.ts).
  const kernel = rowReduceKernel(ir, schedule, C_REDUCE_KERNEL_TARGET) ?? columnReduceKernel(ir, schedule, C_REDUCE_KERNEL_TARGET);
  if (kernel !== undefined) return kernelOf(printKernelC(kernel).join("\n"));
  const sched = schedule.reductions;
  const L = schedule.loops;
  const { graph: g, rowVar, rVar, jVar, Rn, J, values, inits, outputs } = L;
  const nIn = ir.inputs.length;
  const fullOut = schedule.fullOutputs;
  const reducedOut = schedule.rowOutputs;
  const stage = sched.map((r) => r.stage);
  const { fullStage, stages: S } = schedule;
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

  /** Row buffers of a pass: the values it stores, and those it reads (stored by an earlier pass), at `at(id)[inner]`. */
  interface RowBuffers { readonly given: readonly number[]; readonly stored: readonly number[]; readonly at: (id: number) => string }
  const NO_BUFFERS: RowBuffers = { given: [], stored: [], at: (id) => `m${id}` };
  /** How a pass's statements read a node's value (a scalar or a vector expression). */
  type ValueOf = (id: number) => string;
  /**
   * One pass over the elements, in the loop over `innerVar` (named `inner`): `pre`, what
   * goes before the loop (the nodes that do not vary along it, the loads' row pointers),
   * and `body`, each element's statements (the nodes of `roots`, then `step`'s). With
   * `vector`, the body computes sixteen consecutive elements from `inner` on
   * (emit_c_vector.ts; DeclinedError where it has no vector form).
   */
  const elementParts = (
    roots: readonly number[], innerVar: number, inner: string, leaves: Map<number, string>,
    step: (value: ValueOf, out: string[]) => void, prefix: string, rowBuffers: RowBuffers = NO_BUFFERS, vector = false,
  ): { pre: string[]; body: string[] } => {
    const given = new Set(rowBuffers.given);
    const nodes = reachableStopping(g, [...roots, ...rowBuffers.stored], given);
    const loads = new LoadPlan(g, nodes, innerVar, inner, `${prefix}p`);
    const all = reachableStopping(g, [...roots, ...rowBuffers.stored, ...loads.baseNodes], given).filter((id) => !given.has(id));
    // A row buffer's element varies along the row, like what it was computed from.
    const varying = new Set<number>();
    for (const id of all) if (id === innerVar || g.node(id).args.some((a) => varying.has(a) || given.has(a))) varying.add(id);
    leafNames = new Map([...leaves, [innerVar, inner]]);
    const v = new CValues(g, { load: loads.load, leaf: (n) => leaf(n.id) }, prefix);
    loads.names = v.names;
    const pre: string[] = [];
    const body: string[] = [];
    v.emit(all.filter((id) => !varying.has(id)), pre, "");
    appendAll(pre, loads.pointers(v.names));
    if (!vector) {
      for (const id of given) v.names.set(id, `${rowBuffers.at(id)}[${inner}]`);
      v.emit(all.filter((id) => varying.has(id)), body, "");
      for (const id of rowBuffers.stored) body.push(`${rowBuffers.at(id)}[${inner}] = ${v.names.get(id)};`);
      step((id) => v.names.get(id)!, body);
      return { pre, body };
    }
    const vv = new VectorValues(g, v.names, loads.vectorLoad, `${prefix}v`);
    for (const id of [...given, ...rowBuffers.stored]) if (g.node(id).type !== "f32") throw new DeclinedError(`a row buffer of ${g.node(id).type}`);
    for (const id of given) vv.names.set(id, `xk_vload(${rowBuffers.at(id)} + ${inner})`);
    vv.emit(all.filter((id) => varying.has(id)), body);
    for (const id of rowBuffers.stored) body.push(`xk_vstore(${rowBuffers.at(id)} + ${inner}, ${vv.operand(id)});`);
    step((id) => vv.operand(id), body);
    for (const op of vv.math) vectorMath.add(op);
    return { pre, body };
  };
  /** The vector transcendentals the kernel's vector form calls, whether it streams an output (then it fences before returning), and its body. */
  const vectorMath = new Set<string>();
  let streams = false;
  let vectorBody: string[] | undefined;
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
  /** The per-row (reduced) outputs of `row`, the reductions' results named by `result`. */
  const reducedOutputs = (indent: string, row: string, result: (k: number) => string): void => {
    if (reducedOut.length === 0) return;
    for (const k of reducedOut) lines.push(`${indent}${outPointer(k, row)}`);
    leafNames = contextLeaves(row, "j", result);
    const v = scalarValues("e");
    v.emit(reachable(g, reducedOut.map((k) => outputs[k]!)), lines, indent);
    for (const k of reducedOut) lines.push(`${indent}out${k}[0] = ${v.names.get(outputs[k]!)};`);
  };

  {
    const stageRoots = Array.from({ length: S }, (_, s) => [
      ...red.reductions.flatMap((_, k) => (stage[k] === s ? [values[k]!] : [])),
      ...fullOut.flatMap((k) => (fullStage.get(k) === s ? [outputs[k]!] : [])),
    ]);
    const stageReductions = (s: number): number[] => red.reductions.flatMap((_, k) => (stage[k] === s ? [k] : []));
    const stageFulls = (s: number): number[] => fullOut.filter((k) => fullStage.get(k) === s);
    const pipelined = schedule.skewed;
    const reach = stageRoots.map((roots) => new Set(reachable(g, roots)));
    // The row buffers: each stored by the first stage that computes it.
    const firstStage = new Map(schedule.rowBuffers.map((b) => [b.node, b.stage]));
    const rowBuffersOf = (s: number, at: (id: number) => string): RowBuffers => ({
      stored: [...firstStage.entries()].flatMap(([id, f]) => (f === s ? [id] : [])),
      given: [...firstStage.entries()].flatMap(([id, f]) => (f < s && reach[s]!.has(id) ? [id] : [])),
      at,
    });

    if (pipelined) {
      // Also in vectors, for the targets of VECTOR_CONDITION, where every reduction is an
      // f32 add, mul, max or min and the element loops have a vector form (emit_c_vector.ts).
      if (schedule.vectorForm) {
        const start = lines.length;
        try {
          emitPipeline(true);
          if (streams) lines.push(`  xk_stream_fence();`);
          vectorBody = lines.splice(start);
        } catch (e) {
          if (!(e instanceof DeclinedError)) throw e;
          lines.length = start;
          vectorMath.clear();
        }
      }
      emitPipeline(false);
    } else {
      // In the interpreter's order, one row at a time, the stages one after the other.
      lines.push(`  const int64_t j = 0; (void)j;`);
      lines.push(`  for (int64_t row = begin; row < end; row++) {`);
      for (const k of fullOut) lines.push(`    ${outPointer(k, "row")}`);
      for (const id of firstStage.keys()) lines.push(`    ${cType(g.node(id).type)} m${id}[${Rn}];`);
      const base = contextLeaves("row", "j", (k) => `res${k}`);
      for (let s = 0; s < S; s++) {
        const ks = stageReductions(s);
        for (const k of ks) lines.push(`    ${cType(red.reductions[k]!.type)} res${k};`);
        lines.push(`    {`);
        initValues(ks, "      ", base, `i${s}_`);
        for (const k of ks) lines.push(`      ${cType(red.reductions[k]!.type)} ${accName(k)} = init${k};`);
        const parts = elementParts(stageRoots[s]!, rVar, "r", base, (value, out) => {
          recognizedStep(ks.filter((k) => generic[k] === undefined), accName)(value, out);
          genericStep(ks.filter((k) => generic[k] !== undefined), accName)(value, out);
          fullStores(stageFulls(s), "r", "j")(value, out);
        }, `s${s}_`, rowBuffersOf(s, (id) => `m${id}`));
        loop("      ", `${ks.length === 0 ? "#pragma GCC ivdep\n" : ""}for (int64_t r = 0; r < ${Rn}; r++) {`, [parts]);
        for (const k of ks) lines.push(`      res${k} = ${accName(k)};`);
        lines.push(`    }`);
      }
      reducedOutputs("    ", "row", (k) => `res${k}`);
      lines.push(`  }`);
    }

    /**
     * Recognized reducers: the stages skewed (step t runs stage s on row t - s, all in one
     * loop over the row's elements, so the CPU overlaps one stage's memory reads with
     * another's arithmetic, as wasm/emit_row_pipeline.ts does), each reduction over LANES
     * independent accumulators. Results and row buffers are kept for S rows (ring slot
     * row % S) until the later stages have read them.
     */
    function emitPipeline(vector: boolean): void {
      const { lanes, useLanes } = schedule;
      // Streaming stores write whole 64-byte lines: each row's vectors start on one where its first does.
      const streamed = new Set(vector ? schedule.streamedOutputs : []);
      lines.push(`  const int64_t j = 0; (void)j;`);
      red.reductions.forEach((r, k) => lines.push(`  ${cType(r.type)} h${k}[${S}];`));
      for (const id of firstStage.keys()) lines.push(`  ${cType(g.node(id).type)} m${id}[${S}][${Rn}];`);
      // S > 1 here: one-stage row reductions are kernels of statements (emitReduceKernelC).
      lines.push(`  for (int64_t t = begin; t < end + ${S - 1}; t++) {`);
      for (let s = 0; s < S; s++) lines.push(`    const int64_t row${s} = t${s > 0 ? ` - ${s}` : ""};`);
      const stages = Array.from({ length: S }, (_, s) => s);
      lines.push(`    if (row${S - 1} >= begin && row0 < end) {`);
      step(stages, "      ");
      lines.push(`    } else {`);
      for (const s of stages) {
        lines.push(`      if (row${s} >= begin && row${s} < end) {`);
        step([s], "        ");
        lines.push(`      }`);
      }
      lines.push(`    }`);
      if (reducedOut.length > 0) {
        const last = `row${S - 1}`;
        lines.push(`    if (${last} >= begin) {`);
        reducedOutputs("      ", last, (k) => `h${k}[${last} % ${S}]`);
        lines.push(`    }`);
      }
      lines.push(`  }`);

      /** One step's work for `ss` (the stages that have a row): their element loops fused. */
      function step(ss: readonly number[], inner: string): void {
        const leavesOf = (s: number): Map<number, string> => contextLeaves(`row${s}`, "j", (k) => `res${k}_${s}`);
        for (const s of ss) {
          for (const k of fullOut.filter((k) => fullStage.get(k) === s)) {
            lines.push(`${inner}${outPointer(k, `row${s}`)}`);
            if (streamed.has(k)) lines.push(`${inner}const int stream${k} = ((uintptr_t)out${k} & 63) == 0;`);
          }
          for (const id of reach[s]!) {
            const k = accumNode.get(id);
            if (k !== undefined) lines.push(`${inner}const ${cType(red.reductions[k]!.type)} res${k}_${s} = h${k}[row${s} % ${S}];`);
          }
          for (const [id, f] of firstStage) {
            if (f === s || (f < s && reach[s]!.has(id))) {
              lines.push(`${inner}${f === s ? "" : "const "}${cType(g.node(id).type)} *restrict m${id}_${s} = m${id}[row${s} % ${S}];`);
            }
          }
          initValues(stageReductions(s), inner, leavesOf(s), `i${s}_`);
        }
        const ks = ss.flatMap(stageReductions);
        const buffers = (s: number): RowBuffers => rowBuffersOf(s, (id) => `m${id}_${s}`);
        if (useLanes) {
          for (const k of ks) put(inner, declareLanes(lanesOf(k), lanes, !vector));
          if (vector) for (const k of ks) put(inner, declareVectorLanes(lanesOf(k), lanes / VECTOR_LANES));
          lines.push(`${inner}int64_t r = 0;`);
          lines.push(`${inner}for (; r + ${lanes} <= ${Rn}; r += ${lanes}) {`);
          if (vector) {
            // Lane l of the scalar form is lane l % 16 of vector l / 16 here: the same sums in the same order.
            const vectorLoop = (indent: string, stream: boolean): void =>
              loop(indent, `for (int q = 0; q < ${lanes / VECTOR_LANES}; q++) {\n  const int64_t rr = r + ${VECTOR_LANES} * q;`,
                ss.map((s) => elementParts(stageRoots[s]!, rVar, "rr", leavesOf(s), (value, out) => {
                  for (const k of stageReductions(s)) appendAll(out, vectorLaneStep(lanesOf(k), "q", value(values[k]!)));
                  for (const k of stageFulls(s)) {
                    if (ir.outputs[k]!.type !== "f32") throw new DeclinedError(`an output of ${ir.outputs[k]!.type}`);
                    out.push(`${stream && streamed.has(k) ? "xk_vstream" : "xk_vstore"}(out${k} + rr, ${value(outputs[k]!)});`);
                  }
                }, `a${s}_`, buffers(s), true)));
            // Streaming stores where the rows' outputs are aligned (always, on device memory): a branch per 64 elements, not per store.
            const streamedHere = ss.flatMap((s) => stageFulls(s).filter((k) => streamed.has(k)));
            if (streamedHere.length === 0) vectorLoop(`${inner}  `, false);
            else {
              lines.push(`${inner}  if (${streamedHere.map((k) => `stream${k}`).join(" && ")}) {`);
              vectorLoop(`${inner}    `, true);
              lines.push(`${inner}  } else {`);
              vectorLoop(`${inner}    `, false);
              lines.push(`${inner}  }`);
            }
          } else {
            loop(`${inner}  `, `#pragma GCC ivdep\nfor (int l = 0; l < ${lanes}; l++) {\n  const int64_t rr = r + l;`,
              ss.map((s) => elementParts(stageRoots[s]!, rVar, "rr", leavesOf(s), (value, out) => {
                for (const k of stageReductions(s)) appendAll(out, laneStep(lanesOf(k), "l", value(values[k]!)));
                fullStores(stageFulls(s), "rr", "j")(value, out);
              }, `a${s}_`, buffers(s))));
          }
          lines.push(`${inner}}`);
          if (vector) for (const k of ks) put(inner, spillVectorLanes(lanesOf(k), lanes / VECTOR_LANES));
          if (ss.some((s) => stageFulls(s).some((k) => streamed.has(k)))) streams = true;
          for (const k of ks) {
            put(inner, foldLanes(lanesOf(k), lanes, sched[k]!.fold, accName(k), (lane0) => `${cType(red.reductions[k]!.type)} ${accName(k)} = ${lane0};`));
          }
        } else {
          for (const k of ks) {
            const r = red.reductions[k]!;
            lines.push(`${inner}${cType(r.type)} ${accName(k)} = ${cConst(r.type, sched[k]!.identity!)};`);
          }
          lines.push(`${inner}int64_t r = 0;`);
        }
        loop(inner, `${ks.length === 0 ? "#pragma GCC ivdep\n" : ""}for (; r < ${Rn}; r++) {`,
          ss.map((s) => elementParts(stageRoots[s]!, rVar, "r", leavesOf(s), (value, out) => {
            recognizedStep(stageReductions(s), accName)(value, out);
            fullStores(stageFulls(s), "r", "j")(value, out);
          }, `t${s}_`, buffers(s))));
        for (const s of ss) {
          for (const k of stageReductions(s)) {
            const r = red.reductions[k]!;
            lines.push(`${inner}h${k}[row${s} % ${S}] = ${cCombine(r.kind as ReducerKind, r.type, `init${k}`, accName(k))};`);
          }
        }
      }
    }
  }

  /** Reduction k's lane accumulators (c_accumulators.ts). */
  function lanesOf(k: number): Lanes {
    const r = red.reductions[k]!;
    return {
      kind: r.kind as ReducerKind, type: r.type, identity: sched[k]!.identity!, sides: sched[k]!.extremumSides,
      lane: `lane${k}`, nan: `nan${k}`, sgn: `sgn${k}`, vl: `vl${k}`, vn: `vn${k}`, vs: `vs${k}`,
    };
  }

  lines.push(`}`);
  // Both forms, the preprocessor choosing: the vector one where the target has the helpers.
  const text = vectorBody === undefined ? lines
    : [`#if ${VECTOR_CONDITION}`, ...vectorDefinitions(vectorMath), lines[0]!, ...vectorBody, `}`, `#else`, ...lines, `#endif`];
  return kernelOf(text.join("\n"));
}
