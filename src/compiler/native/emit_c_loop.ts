// Loop fusions as C: the same plan as the WebAssembly loop kernel (wasm/emit_loop.ts) —
// the output's trailing dimensions collapsed into one inner loop wherever every load
// stays affine in it (kernel/kernel_plan.ts), work units that are (outer row, chunk of
// the inner loop) pairs — written as a plain C loop the compiler vectorizes: the nodes
// that do not vary along the inner loop are computed once per row, each load affine in
// it reads through a restrict pointer to its row, and the inner loop body is
// straight-line code (`#pragma GCC ivdep`: outputs never overlap inputs except exactly,
// element for element, when written in place). On AVX-512, where every value along the
// loop is f32 with a vector form (and the kernel has VECTOR_MIN_ELEMENTS or more), the
// loop first runs sixteen elements at a time (emit_c_vector.ts: the same bits), outputs
// of STREAM_MIN_BYTES or more written by streaming stores (they would otherwise be read
// in before being written, and evict the inputs), and the scalar loop does the rest.

import type { ElementType } from "../../types/element_type.js";
import { ELEMENT_TYPES } from "../../types/element_type.js";
import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { collapseDomain, dependsOn, loopChunks, reachable, splitAffine } from "../kernel/kernel_plan.js";
import { rowAccess } from "../kernel/row_access.js";
import type { KernelGraph, Node } from "../kernel/graph.js";
import { VECTOR_CONDITION } from "./c_math.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CFail, CValues, cType } from "./c_values.js";
import { STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";


const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/**
 * Load bindings for loops over `innerVar`: a load affine in it reads `p<id>[i * stride]`
 * (i: `inner`, the C name of the loop's index, which the emitter may change between
 * loops) through a pointer set once per row (`pointers`, declared after the nodes of
 * `baseNodes`); any other load addresses its element directly.
 */
export class LoadPlan {
  private readonly affine = new Map<number, { base: number; stride: number }>();
  /** The C names of computed nodes (the CValues' map, filled as it emits). */
  names: ReadonlyMap<number, string> = new Map();
  inner: string;

  /** `prefix`: of the pointers' names (loops whose pointers share a scope need different ones). */
  constructor(private readonly g: KernelGraph, nodes: readonly number[], innerVar: number, inner: string, private readonly prefix = "p") {
    this.inner = inner;
    const varying = dependsOn(g, nodes, innerVar);
    for (const id of nodes) {
      const n = g.node(id);
      if (n.op !== "load" || !varying.has(id)) continue;
      const s = splitAffine(g, n.args[0]!, innerVar);
      if (s !== undefined) this.affine.set(id, s);
    }
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

export function emitLoopKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  const c = collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value));
  const g = c.graph;
  const rows = c.outer.reduce((x, y) => x * y, 1);
  const F = c.inner;
  const { chunks, block: B } = loopChunks(rows, F);
  const nIn = ir.inputs.length;
  const outTypes = ir.outputs.map((o) => o.type);

  const nodes = reachable(g, c.roots);
  const loads = new LoadPlan(g, nodes, c.innerVar, "i");
  // The bases the pointers need are new nodes (splitAffine builds them): plan over all of them.
  const all = reachable(g, [...c.roots, ...loads.baseNodes]);
  const varying = dependsOn(g, all, c.innerVar);
  const outerName = new Map(c.outerVars.map((v, d) => [v, `o${d}`]));
  const values = new CValues(g, {
    load: loads.load,
    leaf: (n) => (n.id === c.innerVar ? "i" : outerName.get(n.id) ?? `/* var ${n.attr} */0`),
  });
  loads.names = values.names;
  const lines: string[] = [];
  lines.push(`static void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {`);
  lines.push(`  for (int64_t u = begin; u < end; u++) {`);
  lines.push(`    const int64_t row = ${chunks === 1 ? "u" : `u / ${chunks}`};`);
  lines.push(`    int64_t rest = row;`);
  for (let d = c.outer.length - 1; d >= 0; d--) {
    lines.push(d === 0 ? `    const int64_t o${d} = rest;` : `    const int64_t o${d} = rest % ${c.outer[d]}; rest /= ${c.outer[d]};`);
  }
  lines.push(`    (void)rest;`);
  lines.push(`    const int64_t i0 = ${chunks === 1 ? "0" : `(u % ${chunks}) * ${B}`};`);
  lines.push(`    const int64_t i1 = i0 + ${B} < ${F} ? i0 + ${B} : ${F};`);
  values.emit(all.filter((id) => !varying.has(id)), lines, "    ");
  lines.push(...loads.pointers(values.names).map((l) => `    ${l}`));
  ir.outputs.forEach((o, k) => {
    const t = cType(o.type);
    lines.push(`    ${t} *restrict out${k} = ${bufferPointer(t, nIn + k, `row * ${F}`, storageBytes(o.type), false)};`);
  });
  const vector = vectorLoop(g, nodes.filter((id) => varying.has(id)), c.roots, values.names, loads, outTypes, rows * F);
  if (vector === undefined) lines.push(`    int64_t i = i0;`);
  else lines.push(`#if ${VECTOR_CONDITION}`, ...vector.loop, `#else`, `    int64_t i = i0;`, `#endif`);
  lines.push(`#pragma GCC ivdep`);
  lines.push(`    for (; i < i1; i++) {`);
  values.emit(nodes.filter((id) => varying.has(id)), lines, "      ");
  c.roots.forEach((r, k) => lines.push(`      out${k}[i] = ${values.names.get(r)};`));
  lines.push(`    }`);
  lines.push(`  }`);
  if (vector?.streams === true) lines.push(`#if ${VECTOR_CONDITION}`, `  xk_stream_fence();`, `#endif`);
  lines.push(`}`);
  if (vector !== undefined) lines.unshift(`#if ${VECTOR_CONDITION}`, ...vector.definitions, `#endif`);
  const bytesPerElement = ir.inputs.reduce((s, x) => s + storageBytes(x.type), 0) + outTypes.reduce((s, t) => s + storageBytes(t), 0);
  return {
    name,
    c: symbolize("loop", lines.join("\n")),
    operandCount: nIn,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: rows * chunks,
    costPerUnit: B * (bytesPerElement + g.nodes.length),
    rows: chunks === 1 ? rowAccess(ir, c.outer.map((_, d) => d)) : undefined,
  };
}

/**
 * The loop over [i0, i1) sixteen elements at a time, leaving i where the scalar loop takes
 * over, with what it needs defined before the kernel; undefined where a value along the
 * loop has no vector form. `elements`: each output's element count.
 */
function vectorLoop(
  g: KernelGraph, varyingNodes: readonly number[], roots: readonly number[], scalar: ReadonlyMap<number, string>,
  loads: LoadPlan, outTypes: readonly ElementType[], elements: number,
): { loop: string[]; definitions: string[]; streams: boolean } | undefined {
  if (elements < VECTOR_MIN_ELEMENTS || outTypes.some((t) => t !== "f32")) return undefined;
  const vv = new VectorValues(g, scalar, loads.vectorLoad, "w");
  const body: string[] = [];
  try {
    vv.emit(varyingNodes, body);
    roots.forEach((r) => vv.operand(r));
  } catch (e) {
    if (e instanceof CFail) return undefined;
    throw e;
  }
  const stores = (fn: string): string[] => roots.map((r, k) => `${fn}(out${k} + i, ${vv.operand(r)});`);
  const loop = (store: string): string[] => [`    for (; i + 16 <= i1; i += 16) {`, ...[...body, ...stores(store)].map((l) => `      ${l}`), `    }`];
  const streams = elements * 4 >= STREAM_MIN_BYTES;
  const lines = [`    int64_t i = i0;`];
  if (!streams) lines.push(...loop("xk_vstore"));
  else {
    // Streaming stores need 64-byte aligned addresses: every output's first vector on one (then all are).
    lines.push(`    if (${roots.map((_, k) => `((uintptr_t)(out${k} + i0) & 63) == 0`).join(" && ")}) {`);
    lines.push(...loop("xk_vstream").map((l) => `  ${l}`), `    } else {`, ...loop("xk_vstore").map((l) => `  ${l}`), `    }`);
  }
  return { loop: lines, definitions: vectorDefinitions(vv.math), streams };
}
