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
import { affineInLoop, type LaneAffine, type VectorTarget } from "../kernel/loop_schedule.js";
import { loopKernel } from "../kernel/loop_kernel.js";
import { statements, type IndexExpr, type Kernel, type Stmt } from "../kernel/kernel_ir.js";
import type { KernelGraph, Node } from "../kernel/graph.js";
import { VECTOR_CONDITION } from "./c_math.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CValues, cType } from "./c_values.js";
import { hasVectorForm, STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";


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
  const { kernel, schedule } = loopKernel(ir, NATIVE_VECTOR_TARGET);
  return {
    name,
    c: symbolize("loop", printKernelC(kernel).join("\n")),
    operandCount: ir.inputs.length,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
    rows: schedule.access,
  };
}

/** A C expression of index expression e (parenthesized unless `top`). */
function indexExpr(e: IndexExpr, names: ReadonlyMap<number, string>, top = true): string {
  const wrapped = (x: string): string => (top ? x : `(${x})`);
  switch (e.op) {
    case "const": return String(e.value);
    case "index": return e.name;
    case "node": return names.get(e.id) ?? (() => { throw new Error(`index node ${e.id} used before it was computed`); })();
    case "min": {
      const [a, b] = [indexExpr(e.a, names, false), indexExpr(e.b, names, false)];
      return wrapped(`${a} < ${b} ? ${a} : ${b}`);
    }
    default: return wrapped(`${indexExpr(e.a, names, false)} ${{ add: "+", mul: "*", div: "/", rem: "%" }[e.op]} ${indexExpr(e.b, names, false)}`);
  }
}

/**
 * Prints a kernel (kernel/kernel_ir.ts) as a C function of the native calling
 * convention (mem, args, begin, end): index variables are int64_t, pointers restrict,
 * the scalar element loop carries `#pragma GCC ivdep` (outputs never overlap inputs
 * except exactly, element for element, when written in place), a vector section is
 * guarded by VECTOR_CONDITION and its helpers defined before the function.
 */
function printKernelC(k: Kernel): string[] {
  const g = k.graph;
  if (k.params.join() !== "begin,end" || k.units.from !== "begin" || k.units.to !== "end") {
    throw new Error(`a C kernel's parameters are (begin, end) of its units, not (${k.params.join(", ")})`);
  }
  const leaves = new Map<number, string>();
  let at = k.inner;
  const values: CValues = new CValues(g, {
    load: (n) => {
      const r = k.rowLoads.get(n.id);
      if (r !== undefined) return `${r.pointer}[${r.stride === 1 ? at : `${at} * ${r.stride}`}]`;
      const offset = values.names.get(n.args[0]!);
      if (offset === undefined) throw new Error(`load ${n.id}: its offset was not computed before it`);
      return `${bufferPointer(cType(n.type), n.attr as number, offset, storageBytes(n.type as ElementType), true)}[0]`;
    },
    leaf: (n) => leaves.get(n.id) ?? (() => { throw new Error(`leaf node ${n.id} (${n.op}) is bound to no index variable`); })(),
  });
  const vectorLoad = (n: Node): string | undefined => {
    const r = k.rowLoads.get(n.id);
    return r === undefined || r.stride !== 1 || n.type !== "f32" ? undefined : `xk_vload(${r.pointer} + ${at})`;
  };
  const math = new Set<string>();
  const lines: string[] = [`static void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {`];
  /** In a vector loop: its index, lanes and copies, and each copy's vector values once computed. */
  type VectorLoop = { readonly index: string; readonly lanes: number; readonly copies: number; readonly values: VectorValues[] };
  const print = (body: readonly Stmt[], indent: string, vectors?: VectorLoop): void => {
    for (const st of body) {
      switch (st.s) {
        case "index": lines.push(`${indent}${st.mutable ? "" : "const "}int64_t ${st.name} = ${indexExpr(st.value, values.names)};`); break;
        case "bind": leaves.set(st.node, st.name); values.names.set(st.node, st.name); break;
        case "values": values.emit(st.ids, lines, indent); break;
        case "pointer": {
          const t = cType(st.type);
          const offset = indexExpr(st.offset, values.names);
          lines.push(`${indent}${st.output ? "" : "const "}${t} *restrict ${st.name} = ${bufferPointer(t, st.buffer, offset, storageBytes(st.type), !st.output)};`);
          break;
        }
        // The vector helpers splat a scalar where it is used; the C compiler hoists it.
        case "splat": break;
        case "vector": lines.push(`#if ${VECTOR_CONDITION}`); print(st.body, indent); lines.push(`#endif`); break;
        case "ifAligned": {
          const aligned = st.pointers.map((p) => `((uintptr_t)(${p} + ${st.index}) & ${st.bytes - 1}) == 0`).join(" && ");
          lines.push(`${indent}if (${aligned}) {`);
          print(st.then, `${indent}  `);
          lines.push(`${indent}} else {`);
          print(st.otherwise, `${indent}  `);
          lines.push(`${indent}}`);
          break;
        }
        case "loop": {
          const step = st.lanes * st.copies;
          if (st.lanes === 1) lines.push(`#pragma GCC ivdep`, `${indent}for (; ${st.index} < ${st.stop}; ${st.index}++) {`);
          else lines.push(`${indent}for (; ${st.index} + ${step} <= ${st.stop}; ${st.index} += ${step}) {`);
          print(st.body, `${indent}  `, st.lanes === 1 ? undefined : { index: st.index, lanes: st.lanes, copies: st.copies, values: [] });
          lines.push(`${indent}}`);
          break;
        }
        case "vectorValues": {
          // Copy c of an unrolled loop reads its elements from index + c · lanes.
          const loop = vectors!;
          for (let c = 0; c < loop.copies; c++) {
            at = c === 0 ? loop.index : `(${loop.index} + ${c * loop.lanes})`;
            const vv = new VectorValues(g, values.names, vectorLoad, loop.copies === 1 ? "w" : `w${c}_`);
            const out: string[] = [];
            vv.emit(st.ids, out);
            for (const l of out) lines.push(`${indent}${l}`);
            for (const op of vv.math) math.add(op);
            loop.values.push(vv);
          }
          at = k.inner;
          break;
        }
        case "store": {
          if (vectors === undefined) {
            lines.push(`${indent}${st.pointer}[${k.inner}] = ${values.names.get(st.node)!};`);
            break;
          }
          vectors.values.forEach((vv, c) => {
            const i = c === 0 ? vectors.index : `${vectors.index} + ${c * vectors.lanes}`;
            lines.push(`${indent}${st.streaming ? "xk_vstream" : "xk_vstore"}(${st.pointer} + ${i}, ${vv.operand(st.node)});`);
          });
          break;
        }
        // The reduction statements (kernel/reduce_kernel.ts): C reductions are still rendered by emit_c_reduce.ts.
        default: throw new Error(`the C printer was given a ${st.s} statement`);
      }
    }
  };
  print(k.prologue ?? [], "  ");
  lines.push(`  for (int64_t ${k.units.index} = begin; ${k.units.index} < end; ${k.units.index}++) {`);
  print(k.unit, "    ");
  lines.push(`  }`);
  if (k.fence) lines.push(`#if ${VECTOR_CONDITION}`, `  xk_stream_fence();`, `#endif`);
  lines.push(`}`);
  const vectorized = [...statements(k.unit)].some((st) => st.s === "vector");
  return vectorized ? [`#if ${VECTOR_CONDITION}`, ...vectorDefinitions(math), `#endif`, ...lines] : lines;
}
