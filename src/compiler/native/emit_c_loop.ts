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
import type { VectorTarget } from "../kernel/loop_schedule.js";
import { loopKernel } from "../kernel/loop_kernel.js";
import { isColumnStmt, statements, type ColumnStmt, type IndexExpr, type Kernel, type Scratch, type Stmt } from "../kernel/kernel_ir.js";
import type { Node } from "../kernel/graph.js";
import { VECTOR_CONDITION } from "./c_math.js";
import type { ApproximationName } from "../kernel/approximations.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { binaryExpr, CValues, cConst, cType } from "./c_values.js";
import { declareLanes, declareVectorLanes, foldLanes, laneStep, spillVectorLanes, VECTOR_LANES, vectorLaneStep, type Lanes } from "./c_accumulators.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { hasVectorForm, STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";


const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

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
    default: return wrapped(`${indexExpr(e.a, names, false)} ${{ add: "+", sub: "-", mul: "*", div: "/", rem: "%" }[e.op]} ${indexExpr(e.b, names, false)}`);
  }
}

/** What printPipelineStmt needs of printKernelC: its lines, node names, scratch, and a block printer. */
interface PipelinePrinter {
  readonly lines: string[];
  readonly names: Map<number, string>;
  readonly scratch: ReadonlyMap<string, Scratch>;
  readonly nameOf: (id: number) => string;
  /** Names graph leaf `node` (in the leaves and the computed nodes). */
  readonly bindLeaf: (node: number, name: string) => void;
  readonly block: (body: readonly Stmt[], indent: string) => void;
}

/** The statements of row pipelines (kernel/row_pipeline_kernel.ts): conditions on rows, and scratch in stack arrays `name[slot][element]`. */
function printPipelineStmt(st: Stmt, indent: string, p: PipelinePrinter): void {
  const scratch = (name: string): Scratch => p.scratch.get(name) ?? (() => { throw new Error(`scratch ${name} is not declared`); })();
  switch (st.s) {
    case "scope": {
      p.lines.push(`${indent}{`);
      p.block(st.body, `${indent}  `);
      p.lines.push(`${indent}}`);
      return;
    }
    case "if": {
      p.lines.push(`${indent}if (${st.less.map((x) => `${indexExpr(x.a, p.names, false)} < ${indexExpr(x.b, p.names, false)}`).join(" && ")}) {`);
      p.block(st.then, `${indent}  `);
      if (st.otherwise.length > 0) {
        p.lines.push(`${indent}} else {`);
        p.block(st.otherwise, `${indent}  `);
      }
      p.lines.push(`${indent}}`);
      return;
    }
    case "slot": {
      const t = cType(scratch(st.scratch).type);
      p.lines.push(`${indent}${st.output ? "" : "const "}${t} *restrict ${st.name} = ${st.scratch}[${indexExpr(st.slot, p.names)}];`);
      return;
    }
    case "scratchStore": p.lines.push(`${indent}${st.scratch}[${indexExpr(st.slot, p.names)}][0] = ${p.nameOf(st.node)};`); return;
    case "scratchLoad": {
      const name = `${st.scratch}_${st.node}`;
      p.lines.push(`${indent}const ${cType(scratch(st.scratch).type)} ${name} = ${st.scratch}[${indexExpr(st.slot, p.names)}][0];`);
      p.bindLeaf(st.node, name);
      return;
    }
    default: throw new Error(`statement ${st.s} is not a row pipeline's`);
  }
}

/**
 * Prints a kernel (kernel/kernel_ir.ts) as `static void name(mem, args, <its index
 * parameters as int64_t>)`, the native calling convention (kernel.ts) when those are
 * (begin, end): index variables are int64_t, pointers restrict, the scalar element loop
 * carries `#pragma GCC ivdep` (outputs never overlap inputs except exactly, element for
 * element, when written in place), a vector section is guarded by VECTOR_CONDITION and
 * its helpers defined before the function, scratch (Kernel.scratch) is in arrays on the
 * stack.
 */
export function printKernelC(k: Kernel, name = SYM): string[] {
  const g = k.graph;
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
  const math = new Set<ApproximationName>();
  /** The accumulators declared so far: their statement, their C lane accumulators, whether they are vectors. */
  const accumulators = new Map<string, { readonly st: Extract<Stmt, { s: "accumulator" }>; readonly lanes: Lanes; readonly vector: boolean }>();
  const accumulator = (name: string): { readonly st: Extract<Stmt, { s: "accumulator" }>; readonly lanes: Lanes; readonly vector: boolean } =>
    accumulators.get(name) ?? (() => { throw new Error(`accumulator ${name} used before its declaration`); })();
  /** A recognized reducer's kind (a generic reducer's accumulators change by `update` only). */
  const kindOf = (st: Extract<Stmt, { s: "accumulator" }>): ReducerKind => {
    if (st.kind === "generic") throw new Error(`accumulator ${st.name} of a generic reducer combined`);
    return st.kind;
  };
  const nameOf = (id: number): string => values.names.get(id) ?? (() => { throw new Error(`node ${id} used before it was computed`); })();
  /**
   * The nodes computed in each enclosing C block, innermost last: a node computed in one
   * is not computed again inside it (C would reject the second declaration of its name).
   */
  const scopes: Set<number>[] = [new Set()];
  const inBlock = (f: () => void): void => {
    scopes.push(new Set());
    f();
    scopes.pop();
  };
  /** Printing a vector section's statements (accumulators there are vectors). */
  let inVector = false;
  /** In a lane loop: the loop's index, the C name of its lane's element, and the lane arrays' index. */
  let laneLoop: { readonly index: string; readonly element: string; readonly lane: string } | undefined;
  const lines: string[] = [`static void ${name}(uint8_t *mem, const uint32_t *args${k.params.map((p) => `, int64_t ${p}`).join("")}) {`];
  /** In a vector loop: its index, lanes and copies, and each copy's vector values once computed. */
  type VectorLoop = { readonly index: string; readonly lanes: number; readonly copies: number; readonly values: VectorValues[] };
  const print = (body: readonly Stmt[], indent: string, vectors?: VectorLoop): void => {
    for (const st of body) {
      switch (st.s) {
        case "index": lines.push(`${indent}${st.mutable ? "" : "const "}int64_t ${st.name} = ${indexExpr(st.value, values.names)};`); break;
        case "bind": {
          const name = laneLoop !== undefined && st.name === laneLoop.index ? laneLoop.element : st.name;
          leaves.set(st.node, name);
          values.names.set(st.node, name);
          break;
        }
        case "values": {
          const fresh = st.ids.filter((id) => !scopes.some((x) => x.has(id)));
          values.emit(fresh, lines, indent);
          for (const id of fresh) scopes[scopes.length - 1]!.add(id);
          break;
        }
        case "pointer": {
          const t = cType(st.type);
          const offset = indexExpr(st.offset, values.names);
          lines.push(`${indent}${st.output ? "" : "const "}${t} *restrict ${st.name} = ${bufferPointer(t, st.buffer, offset, storageBytes(st.type), !st.output)};`);
          break;
        }
        // The vector helpers splat a scalar where it is used; the C compiler hoists it.
        case "splat": break;
        case "vector": {
          const start = lines.length;
          lines.push(`#if ${VECTOR_CONDITION}`);
          inVector = true;
          print(st.body, indent);
          inVector = false;
          if (st.otherwise !== undefined) {
            lines.push(`#else`);
            print(st.otherwise, indent);
          }
          // A section that prints nothing in C (splats only) is left out.
          if (lines.length === start + 1) lines.length = start;
          else lines.push(`#endif`);
          break;
        }
        case "ifAligned": {
          const aligned = st.pointers.map((p) => `((uintptr_t)(${p} + ${st.index}) & ${st.bytes - 1}) == 0`).join(" && ");
          lines.push(`${indent}if (${aligned}) {`);
          inBlock(() => print(st.then, `${indent}  `));
          lines.push(`${indent}} else {`);
          inBlock(() => print(st.otherwise, `${indent}  `));
          lines.push(`${indent}}`);
          break;
        }
        case "loop": {
          const step = st.lanes * st.copies;
          if (st.lanes === 1) lines.push(`#pragma GCC ivdep`, `${indent}for (; ${st.index} < ${st.stop}; ${st.index}++) {`);
          else lines.push(`${indent}for (; ${st.index} + ${step} <= ${st.stop}; ${st.index} += ${step}) {`);
          if (st.lanes > 1 && !st.body.some((x) => x.s === "vectorValues")) {
            // A lane loop: one lane an iteration of a loop without carried dependence, which the C compiler vectorizes.
            if (st.copies !== 1) throw new Error(`a lane loop of ${st.copies} copies`);
            lines.push(`#pragma GCC ivdep`, `${indent}  for (int l = 0; l < ${st.lanes}; l++) {`, `${indent}    const int64_t rr = ${st.index} + l;`);
            laneLoop = { index: st.index, element: "rr", lane: "l" };
            at = "rr";
            inBlock(() => print(st.body, `${indent}    `));
            laneLoop = undefined;
            at = k.inner;
            lines.push(`${indent}  }`);
          } else inBlock(() => print(st.body, `${indent}  `, st.lanes === 1 ? undefined : { index: st.index, lanes: st.lanes, copies: st.copies, values: [] }));
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
            lines.push(`${indent}${st.pointer}[${at}] = ${nameOf(st.node)};`);
            break;
          }
          vectors.values.forEach((vv, c) => {
            const i = c === 0 ? vectors.index : `${vectors.index} + ${c * vectors.lanes}`;
            lines.push(`${indent}${st.streaming ? "xk_vstream" : "xk_vstore"}(${st.pointer} + ${i}, ${vv.operand(st.node)});`);
          });
          break;
        }
        case "accumulator": {
          const vector = inVector && st.lanes > 1;
          const lanes: Lanes = {
            kind: st.kind === "generic" ? "add" : st.kind, type: st.type, identity: "identity" in st.start ? st.start.identity : 0, sides: st.sides,
            lane: vector ? `${st.name}_l` : st.name, nan: `${st.name}_nan`, sgn: `${st.name}_sgn`, vl: st.name, vn: `${st.name}_vn`, vs: `${st.name}_vs`,
          };
          accumulators.set(st.name, { st, lanes, vector });
          if (st.lanes === 1 && st.copies === 1) {
            if ("assigned" in st.start) throw new Error(`scalar accumulator ${st.name} starts assigned`);
            const start = "identity" in st.start ? cConst(st.type, st.start.identity) : nameOf(st.start.node);
            lines.push(`${indent}${cType(st.type)} ${st.name} = ${start};`);
          } else if (vector) {
            // The vector form keeps vectors of VECTOR_LANES f32 (emit_c_vector.ts).
            if (st.lanes !== VECTOR_LANES || st.type !== "f32") throw new Error(`a vector accumulator of ${st.lanes} ${st.type}`);
            for (const l of declareVectorLanes(lanes, st.copies)) lines.push(`${indent}${l}`);
          } else {
            if (st.copies !== 1) throw new Error(`lane accumulator ${st.name} of ${st.copies} copies`);
            for (const l of declareLanes(lanes, st.lanes, !("assigned" in st.start))) lines.push(`${indent}${l}`);
          }
          break;
        }
        case "combine": {
          const a = accumulator(st.acc);
          const kind = kindOf(a.st);
          const out = vectors !== undefined
            ? vectors.values.flatMap((vv, c) => vectorLaneStep(a.lanes, String(c % a.st.copies), vv.operand(st.node)))
            : laneLoop !== undefined ? laneStep(a.lanes, laneLoop.lane, nameOf(st.node))
            : [`${st.acc} = ${binaryExpr(kind, a.st.type, st.acc, nameOf(st.node))};`];
          for (const l of out) lines.push(`${indent}${l}`);
          break;
        }
        case "update": {
          // The results into temporaries first: a result may be another accumulator's parameter.
          lines.push(`${indent}{`);
          st.params.forEach((p, i) => values.names.set(p, i < st.accs.length ? accExpr(st.accs[i]!) : nameOf(st.elements[i - st.accs.length]!)));
          inBlock(() => print([{ s: "values", ids: st.ids }], `${indent}  `));
          st.results.forEach((r, i) => lines.push(`${indent}  const ${cType(g.node(r).type)} next${i} = ${nameOf(r)};`));
          st.accs.forEach((x, i) => lines.push(`${indent}  ${accExpr(x)} = next${i};`));
          lines.push(`${indent}}`);
          break;
        }
        case "fold": {
          const pairs = st.accs.map((x) => ({ a: accumulator(x.acc), into: x.into }));
          // Vectors are spilled into lane arrays (lane l of copy c at c · lanes + l) and folded there.
          for (const { a } of pairs) {
            if (!a.vector) continue;
            for (const l of [...declareLanes(a.lanes, a.st.lanes * a.st.copies, false), ...spillVectorLanes(a.lanes, a.st.copies)]) lines.push(`${indent}${l}`);
          }
          for (const { a, into } of pairs) {
            const fold = foldLanes(a.lanes, a.st.lanes * a.st.copies, st.order, into, (lane0) => `${into} = ${binaryExpr(kindOf(a.st), a.st.type, into, lane0)};`);
            for (const l of fold) lines.push(`${indent}${l}`);
          }
          break;
        }
        case "result": {
          const a = accumulator(st.acc);
          let name = accExpr(st.acc);
          if (st.init !== undefined) {
            name = `res${st.node}`;
            lines.push(`${indent}const ${cType(a.st.type)} ${name} = ${binaryExpr(kindOf(a.st), a.st.type, nameOf(st.init), accExpr(st.acc))};`);
          }
          leaves.set(st.node, name);
          values.names.set(st.node, name);
          break;
        }
        case "storeElement": {
          const t = cType(st.type);
          lines.push(`${indent}${bufferPointer(t, st.buffer, indexExpr(st.index, values.names), storageBytes(st.type), false)}[0] = ${nameOf(st.node)};`);
          break;
        }
        default:
          if (isColumnStmt(st)) printColumn(st, indent);
          else {
            printPipelineStmt(st, indent, { lines, names: values.names, scratch: scratchOf, nameOf,
              bindLeaf: (node, name) => { leaves.set(node, name); values.names.set(node, name); }, block: (b, i) => inBlock(() => print(b, i)) });
          }
      }
    }
  };
  /** Accumulator x as a C lvalue: in a lane loop, a lane array's element there. */
  const accExpr = (x: string): string => {
    const a = accumulator(x);
    return laneLoop !== undefined && !a.vector && a.st.lanes > 1 ? `${a.lanes.lane}[${laneLoop.lane}]` : x;
  };
  /** The statements of column reductions (kernel_ir.ts ColumnStmt). */
  const printColumn = (st: ColumnStmt, indent: string): void => {
    switch (st.s) {
      case "for":
        lines.push(`${indent}for (; ${st.index} < ${st.stop}; ${st.step === 1 ? `${st.index}++` : `${st.index} += ${st.step}`}) {`);
        inBlock(() => print(st.body, `${indent}  `));
        lines.push(`${indent}}`);
        return;
      case "at": {
        if (st.lanes > 1) {
          print(st.body, indent, { index: st.index, lanes: st.lanes, copies: 1, values: [] });
          return;
        }
        const outer = at;
        at = st.index;
        print(st.body, indent);
        at = outer;
        return;
      }
      case "lanes": {
        // One lane an iteration, no carried dependence: the C compiler vectorizes it.
        lines.push(`#pragma GCC ivdep`, `${indent}for (int64_t ${st.index} = ${st.from}; ${st.index} < ${st.to}; ${st.index}++) {`);
        const outer = at;
        laneLoop = { index: st.index, element: st.index, lane: `${st.index} - ${st.from}` };
        at = st.index;
        inBlock(() => print(st.body, `${indent}  `));
        laneLoop = undefined;
        at = outer;
        lines.push(`${indent}}`);
        return;
      }
      case "assign": lines.push(`${indent}${accExpr(st.acc)} = ${nameOf(st.node)};`); return;
      // C folds vector accumulators by `fold` (spilled into lane arrays); its kernels read no single lanes.
      case "repair": case "extract": throw new Error(`a C kernel reads vector accumulators' lanes by ${st.s}`);
    }
  };
  // Scratch on the stack (row pipelines: at most C_REDUCE_TARGET's budget).
  const scratchOf = new Map((k.scratch ?? []).map((x) => [x.name, x]));
  for (const x of k.scratch ?? []) lines.push(`  ${cType(x.type)} ${x.name}[${x.slots}][${x.length}];`);
  print(k.prologue ?? [], "  ");
  lines.push(`  for (int64_t ${k.units.index} = ${k.units.from}; ${k.units.index} < ${k.units.to}; ${k.units.index}++) {`);
  inBlock(() => print(k.unit, "    "));
  lines.push(`  }`);
  if (k.fence) lines.push(`#if ${VECTOR_CONDITION}`, `  xk_stream_fence();`, `#endif`);
  lines.push(`}`);
  const vectorized = [...statements(k.unit)].some((st) => st.s === "vector");
  return vectorized ? [`#if ${VECTOR_CONDITION}`, ...vectorDefinitions(math), `#endif`, ...lines] : lines;
}
