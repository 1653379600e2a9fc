// Loop fusions as C: the schedule every backend renders (kernel/loop_schedule.ts: the
// output's trailing dimensions collapsed into one inner loop, work units that are (outer
// row, chunk of the inner loop) pairs, per-row and per-element nodes, the vector body and
// its streaming stores) written as a plain C loop the compiler vectorizes: the per-row
// nodes before it, each load affine in the inner loop through a restrict pointer to its
// row, the loop body straight-line code (`#pragma GCC ivdep`: outputs never overlap inputs
// except exactly, element for element, when written in place). Where the schedule has a
// vector body (AVX-512's sixteen f32 lanes: NATIVE_VECTOR_TARGET), the loop first runs it
// (emit_c_vector.ts: the same bits) under VECTOR_CONDITION, outputs it marks streaming
// written by streaming stores, and the scalar loop does the rest.

import type { ElementType } from "../../types/element_type.js";
import { ELEMENT_TYPES } from "../../types/element_type.js";
import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { reachable } from "../kernel/kernel_plan.js";
import { affineInLoop, scheduleLoop, type LaneAffine, type LoopSchedule, type VectorTarget } from "../kernel/loop_schedule.js";
import type { KernelGraph, Node } from "../kernel/graph.js";
import { VECTOR_CONDITION } from "./c_math.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CValues, cType } from "./c_values.js";
import { hasVectorForm, STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";
import { appendAll } from "../../types/arrays.js";


const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/**
 * Load bindings for loops over `innerVar`: a load affine in it reads `p<id>[i * stride]`
 * (i: `inner`, the C name of the loop's index, which the emitter may change between
 * loops) through a pointer set once per row (`pointers`, declared after the nodes of
 * `baseNodes`); any other load addresses its element directly.
 */
export class LoadPlan {
  private readonly affine: ReadonlyMap<number, LaneAffine>;
  /** The C names of computed nodes (the CValues' map, filled as it emits). */
  names: ReadonlyMap<number, string> = new Map();
  inner: string;

  /** `prefix`: of the pointers' names (loops whose pointers share a scope need different ones). */
  constructor(private readonly g: KernelGraph, nodes: readonly number[], innerVar: number, inner: string, private readonly prefix = "p") {
    this.inner = inner;
    this.affine = affineInLoop(g, nodes, innerVar, ["load"]);
  }

  /** Index nodes the per-row pointers need (new nodes of the graph: compute them before `pointers`). */
  get baseNodes(): number[] {
    return [...this.affine.values()].map((a) => a.base);
  }

  /** The pointers' declarations, given the names of the computed nodes. */
  pointers(known: ReadonlyMap<number, string>): string[] {
    return [...this.affine.entries()].map(([id, a]) => {
      const n = this.g.node(id);
      const t = cType(n.type);
      return `const ${t} *restrict ${this.prefix}${id} = ${bufferPointer(t, n.attr as number, known.get(a.base)!, storageBytes(n.type as ElementType), true)};`;
    });
  }

  /** Sixteen f32 lanes of load n from the loop's index on (emit_c_vector.ts), or undefined unless it reads contiguous f32. */
  readonly vectorLoad = (n: Node): string | undefined => {
    const a = this.affine.get(n.id);
    return a === undefined || a.stride !== 1 || n.type !== "f32" ? undefined : `xk_vload(${this.prefix}${n.id} + ${this.inner})`;
  };

  readonly load = (n: Node): string => {
    const a = this.affine.get(n.id);
    if (a !== undefined) return `${this.prefix}${n.id}[${a.stride === 1 ? this.inner : `${this.inner} * ${a.stride}`}]`;
    const offset = this.names.get(n.args[0]!);
    if (offset === undefined) throw new Error(`load ${n.id}: its offset was not computed before it`);
    return `${bufferPointer(cType(n.type), n.attr as number, offset, storageBytes(n.type as ElementType), true)}[0]`;
  };
}

/**
 * The vectors of the native loop kernels: AVX-512's sixteen f32 lanes, for the nodes
 * emit_c_vector.ts writes; no unrolling (the C compiler schedules the body); streaming
 * stores for large outputs; small kernels scalar only (VECTOR_MIN_ELEMENTS).
 */
export const NATIVE_VECTOR_TARGET: VectorTarget = {
  vectorBytes: 64,
  laneBytes: (t) => (t === "f64" || t === "s64" || t === "u64" ? 8 : 4),
  vectorizable: (_g, n) => hasVectorForm(n),
  storesVector: (t) => t === "f32",
  unroll: { copies: 1, maxBody: 0 },
  minVectorElements: VECTOR_MIN_ELEMENTS,
  streamMinBytes: STREAM_MIN_BYTES,
};

export function emitLoopKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  const sched = scheduleLoop(ir, NATIVE_VECTOR_TARGET);
  const { graph: g, outer, chunks, block: B, inner: F, body } = sched;
  const nIn = ir.inputs.length;
  const roots = sched.outputs.map((o) => o.root);

  const loads = new LoadPlan(g, reachable(g, roots), sched.innerVar, "i");
  const outerName = new Map(sched.outerVars.map((v, d) => [v, `o${d}`]));
  const values = new CValues(g, {
    load: loads.load,
    leaf: (n) => (n.id === sched.innerVar ? "i" : outerName.get(n.id) ?? `/* var ${n.attr} */0`),
  });
  loads.names = values.names;
  const lines: string[] = [];
  lines.push(`static void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {`);
  lines.push(`  for (int64_t u = begin; u < end; u++) {`);
  lines.push(`    const int64_t row = ${chunks === 1 ? "u" : `u / ${chunks}`};`);
  lines.push(`    int64_t rest = row;`);
  for (let d = outer.length - 1; d >= 0; d--) {
    lines.push(d === 0 ? `    const int64_t o${d} = rest;` : `    const int64_t o${d} = rest % ${outer[d]}; rest /= ${outer[d]};`);
  }
  lines.push(`    (void)rest;`);
  lines.push(`    const int64_t i0 = ${chunks === 1 ? "0" : `(u % ${chunks}) * ${B}`};`);
  lines.push(`    const int64_t i1 = i0 + ${B} < ${F} ? i0 + ${B} : ${F};`);
  values.emit(body.invariant, lines, "    ");
  appendAll(lines, loads.pointers(values.names).map((l) => `    ${l}`));
  sched.outputs.forEach((o, k) => {
    const t = cType(o.type);
    lines.push(`    ${t} *restrict out${k} = ${bufferPointer(t, nIn + k, `row * ${F}`, storageBytes(o.type), false)};`);
  });
  const vector = vectorLoop(g, sched, values.names, loads);
  if (vector === undefined) lines.push(`    int64_t i = i0;`);
  else appendAll(lines, [`#if ${VECTOR_CONDITION}`, ...vector.loop, `#else`, `    int64_t i = i0;`, `#endif`]);
  lines.push(`#pragma GCC ivdep`);
  lines.push(`    for (; i < i1; i++) {`);
  values.emit([sched.innerVar, ...body.scalarBody], lines, "      ");
  roots.forEach((r, k) => lines.push(`      out${k}[i] = ${values.names.get(r)};`));
  lines.push(`    }`);
  lines.push(`  }`);
  if (sched.outputs.some((o) => o.streaming)) lines.push(`#if ${VECTOR_CONDITION}`, `  xk_stream_fence();`, `#endif`);
  lines.push(`}`);
  const text = vector === undefined ? lines : [`#if ${VECTOR_CONDITION}`, ...vector.definitions, `#endif`, ...lines];
  return {
    name,
    c: symbolize("loop", text.join("\n")),
    operandCount: nIn,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: sched.parallelExtent,
    costPerUnit: sched.costPerUnit,
    rows: sched.access,
  };
}

/**
 * The schedule's vector loop over [i0, i1), sixteen elements at a time, leaving i where
 * the scalar loop takes over, with what it needs defined before the kernel; undefined
 * where the schedule keeps the loop scalar.
 */
function vectorLoop(
  g: KernelGraph, sched: LoopSchedule, scalar: ReadonlyMap<number, string>, loads: LoadPlan,
): { loop: string[]; definitions: string[] } | undefined {
  const ids = sched.body.vectorBody;
  if (ids === undefined) return undefined;
  const vv = new VectorValues(g, scalar, loads.vectorLoad, "w");
  const body: string[] = [];
  vv.emit(ids, body);
  const L = sched.body.lanes;
  const stores = (fn: string): string[] => sched.outputs.map((o, k) => `${fn}(out${k} + i, ${vv.operand(o.root)});`);
  const loop = (store: string): string[] => [`    for (; i + ${L} <= i1; i += ${L}) {`, ...[...body, ...stores(store)].map((l) => `      ${l}`), `    }`];
  const lines = [`    int64_t i = i0;`];
  const streaming = sched.outputs.filter((o) => o.streaming);
  if (streaming.length === 0) appendAll(lines, loop("xk_vstore"));
  else {
    // Streaming stores need 64-byte aligned addresses: every output's first vector on one (then all are).
    lines.push(`    if (${sched.outputs.map((_, k) => `((uintptr_t)(out${k} + i0) & 63) == 0`).join(" && ")}) {`);
    appendAll(lines, [...loop("xk_vstream").map((l) => `  ${l}`), `    } else {`, ...loop("xk_vstore").map((l) => `  ${l}`), `    }`]);
  }
  return { loop: lines, definitions: vectorDefinitions(vv.math) };
}
