// Loop fusions as C: the schedule every backend renders (kernel/loop_schedule.ts: the
// output's trailing dimensions collapsed into one inner loop, work units that are (outer
// row, chunk of the inner loop) pairs, per-row and per-element nodes, the vector body and
// its streaming stores) written as a plain C loop the compiler vectorizes: the per-row
// nodes before it, each load affine in the inner loop through a restrict pointer to its
// row, the loop body straight-line code (`#pragma GCC ivdep`: outputs never overlap inputs
// except exactly, element for element, when written in place). Where the schedule has a
// vector body (sixteen f32 lanes: NATIVE_VECTOR_TARGET), the loop first runs it
// (emit_c_vector.ts: the same bits) under a preprocessor condition (c_math.ts: AVX-512,
// or for loop kernels AVX2 with FMA too), outputs it marks streaming written by
// streaming stores, and the scalar loop does the rest.

import { storageBytes, type ElementType } from "../../types/element_type.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import type { VectorTarget } from "../kernel/loop_schedule.js";
import { statements, type Kernel, type Scratch, type Stmt } from "../kernel/kernel_ir.js";
import { KernelTextPrinter } from "../kernel/kernel_text.js";
import type { Node, NodeType } from "../kernel/graph.js";
import { VECTOR_CONDITION } from "./c_math.js";
import type { ApproximationName } from "../kernel/approximations.js";
import { bufferPointer, SYM } from "./c_source.js";
import { binaryExpr, CValues, cConst, cType } from "./c_values.js";
import { declareLanes, declareVectorLanes, foldLanes, laneArray, laneStep, spillVectorLanes, VECTOR_LANES, vectorLaneStep, type Lanes } from "./c_accumulators.js";
import { hasVectorForm, STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS, VectorValues, vectorDefinitions } from "./emit_c_vector.js";


/**
 * The vectors of the native loop kernels: AVX-512's sixteen f32 lanes, for the nodes
 * emit_c_vector.ts writes; no unrolling (the C compiler schedules the body); streaming
 * stores for large outputs; small kernels scalar only (VECTOR_MIN_ELEMENTS).
 */
export const NATIVE_VECTOR_TARGET: VectorTarget = {
  vectorBytes: 64,
  laneBytes: (t) => (t === "f64" || t === "s64" || t === "u64" ? 8 : 4),
  vectorizable: (g, n) => hasVectorForm(g, n),
  storesVector: (t) => t === "f32",
  unroll: { copies: 1, maxBody: 0 },
  minVectorElements: VECTOR_MIN_ELEMENTS,
  streamMinBytes: STREAM_MIN_BYTES,
};

/** In a vector loop: its index, lanes and copies, and each copy's vector values once computed. */
type VectorLoop = { readonly index: string; readonly lanes: number; readonly copies: number; readonly values: VectorValues[] };

/**
 * The C kernel printer: kernel/kernel_text.ts's walk in C syntax, plus what C keeps of
 * its own: restrict pointers to rows, the `ivdep` element loops and lane loops, the
 * AVX-512 vector section with its lane accumulators (c_accumulators.ts), and scratch
 * in stack arrays `name[slot][element]`.
 */
class CKernelPrinter extends KernelTextPrinter {
  protected readonly values: CValues = new CValues(this.k.graph, {
    load: (n) => {
      const at = this.loadAt(n);
      return "pointer" in at ? `${at.pointer}[${at.index}]` : `${bufferPointer(cType(n.type), n.attr as number, at.offset, storageBytes(n.type as ElementType), true)}[0]`;
    },
    leaf: (n) => this.leaf(n),
  });
  protected readonly parenthesizeTop = false;
  protected readonly alwaysTrue = "1";
  readonly math = new Set<ApproximationName>();
  /** The lane and vector accumulators declared so far: their C lane accumulators, whether they are vectors. */
  private readonly laneAccumulators = new Map<string, Lanes>();
  /** Printing a vector section's statements (accumulators there are vectors). */
  private inVector = false;
  /** In a lane loop: the loop's index, the C name of its lane's element, and the lane arrays' index. */
  private laneLoop: { readonly index: string; readonly element: string; readonly lane: string } | undefined;
  /** In a vector loop (the statements directly in its body). */
  private vectors: VectorLoop | undefined;

  /** `vectorCondition`: the preprocessor condition under which the vector sections compile. */
  constructor(k: Kernel, readonly vectorCondition: string) {
    super(k);
  }

  protected declare(type: NodeType, name: string, value: string, mutable: boolean): string {
    return `${mutable ? "" : "const "}${cType(type)} ${name} = ${value};`;
  }
  protected variable(name: string): string { return name; }
  protected indexMin(a: string, b: string, top: boolean): string {
    const x = `${a} < ${b} ? ${a} : ${b}`;
    return top ? x : `(${x})`;
  }
  protected combineExpr(kind: ReducerKind, t: ElementType, x: string, y: string): string { return binaryExpr(kind, t, x, y); }
  protected constant(t: ElementType, value: number | bigint): string { return cConst(t, value); }
  protected scratchElement(x: Scratch, slot: string): string { return `${x.name}[${slot}][0]`; }
  protected storeElement(buffer: number, t: ElementType, index: string, value: string): string {
    return `${bufferPointer(cType(t), buffer, index, storageBytes(t), false)}[0] = ${value};`;
  }
  protected whileLoop(index: string, stop: string, step: number, indent: string): { open: string[]; close: string[] } {
    return { open: [`${indent}for (; ${index} < ${stop}; ${step === 1 ? `${index}++` : `${index} += ${step}`}) {`], close: [`${indent}}`] };
  }
  protected override boundName(name: string): string {
    return this.laneLoop !== undefined && name === this.laneLoop.index ? this.laneLoop.element : name;
  }
  /** Accumulator x as a C lvalue: in a lane loop, a lane array's element there. */
  protected override accumulatorRef(x: string): string {
    const a = this.laneAccumulators.get(x);
    return this.laneLoop !== undefined && a !== undefined && !a.vector ? `${laneArray(a)}[${this.laneLoop.lane}]` : x;
  }
  protected override print(body: readonly Stmt[], indent: string, vectors?: VectorLoop): void {
    const outer = this.vectors;
    this.vectors = vectors;
    super.print(body, indent);
    this.vectors = outer;
  }

  private laneAccumulator(name: string): Lanes {
    return this.laneAccumulators.get(name) ?? (() => { throw new Error(`accumulator ${name} is not a lane or vector accumulator`); })();
  }

  private vectorLoad(n: Node): string | undefined {
    const r = this.k.rowLoads.get(n.id);
    if (r === undefined || r.stride !== 1) return undefined;
    return n.type === "f32" ? `xk_vload(${r.pointer} + ${this.at})` : n.type === "pred" ? `xk_vloadpred(${r.pointer} + ${this.at})` : undefined;
  }

  protected own(st: Stmt, indent: string): void {
    const lines = this.lines;
    const g = this.k.graph;
    switch (st.s) {
      case "pointer": {
        const t = cType(st.type);
        lines.push(`${indent}${st.output ? "" : "const "}${t} *restrict ${st.name} = ${bufferPointer(t, st.buffer, this.indexExpr(st.offset), storageBytes(st.type), !st.output)};`);
        return;
      }
      case "slot": {
        const t = cType(this.scratchOf(st.scratch).type);
        lines.push(`${indent}${st.output ? "" : "const "}${t} *restrict ${st.name} = ${st.scratch}[${this.indexExpr(st.slot)}];`);
        return;
      }
      // The vector helpers splat a scalar where it is used; the C compiler hoists it.
      case "splat": return;
      case "vector": {
        const start = lines.length;
        lines.push(`#if ${this.vectorCondition}`);
        this.inVector = true;
        this.print(st.body, indent);
        this.inVector = false;
        if (st.otherwise !== undefined) {
          lines.push(`#else`);
          this.print(st.otherwise, indent);
        }
        // A section that prints nothing in C (splats only) is left out.
        if (lines.length === start + 1) lines.length = start;
        else lines.push(`#endif`);
        return;
      }
      case "ifAligned": {
        const aligned = st.pointers.map((p) => `((uintptr_t)(${p} + ${st.index}) & ${st.bytes - 1}) == 0`).join(" && ");
        lines.push(`${indent}if (${aligned}) {`);
        this.block(st.then, `${indent}  `);
        lines.push(`${indent}} else {`);
        this.block(st.otherwise, `${indent}  `);
        lines.push(`${indent}}`);
        return;
      }
      case "loop": {
        const step = st.lanes * st.copies;
        if (st.lanes === 1) lines.push(`#pragma GCC ivdep`, `${indent}for (; ${st.index} < ${st.stop}; ${st.index}++) {`);
        else lines.push(`${indent}for (; ${st.index} + ${step} <= ${st.stop}; ${st.index} += ${step}) {`);
        if (st.lanes > 1 && !st.body.some((x) => x.s === "vectorValues")) {
          // A lane loop: one lane an iteration of a loop without carried dependence, which the C compiler vectorizes.
          if (st.copies !== 1) throw new Error(`a lane loop of ${st.copies} copies`);
          lines.push(`#pragma GCC ivdep`, `${indent}  for (int l = 0; l < ${st.lanes}; l++) {`, `${indent}    const int64_t rr = ${st.index} + l;`);
          this.inLaneLoop({ index: st.index, element: "rr", lane: "l" }, st.body, `${indent}    `);
          lines.push(`${indent}  }`);
        } else if (st.lanes === 1) this.block(st.body, `${indent}  `);
        else this.inBlock(() => this.print(st.body, `${indent}  `, { index: st.index, lanes: st.lanes, copies: st.copies, values: [] }));
        lines.push(`${indent}}`);
        return;
      }
      case "vectorValues": {
        // Copy c of an unrolled loop reads its elements from index + c · lanes.
        const loop = this.vectors!;
        const inner = this.at;
        for (let c = 0; c < loop.copies; c++) {
          this.at = c === 0 ? loop.index : `(${loop.index} + ${c * loop.lanes})`;
          const vv = new VectorValues(g, this.values.names, (n) => this.vectorLoad(n), loop.copies === 1 ? "w" : `w${c}_`);
          const out: string[] = [];
          vv.emit(st.ids, out);
          for (const l of out) lines.push(`${indent}${l}`);
          for (const op of vv.math) this.math.add(op);
          loop.values.push(vv);
        }
        this.at = inner;
        return;
      }
      case "store": {
        const vectors = this.vectors;
        if (vectors === undefined) {
          lines.push(`${indent}${st.pointer}[${this.at}] = ${this.nameOf(st.node)};`);
          return;
        }
        vectors.values.forEach((vv, c) => {
          const i = c === 0 ? vectors.index : `${vectors.index} + ${c * vectors.lanes}`;
          lines.push(`${indent}${st.streaming ? "xk_vstream" : "xk_vstore"}(${st.pointer} + ${i}, ${vv.operand(st.node)});`);
        });
        return;
      }
      case "accumulator": {
        if ("assigned" in st.start && st.lanes === 1 && st.copies === 1) throw new Error(`scalar accumulator ${st.name} starts assigned`);
        const vector = this.inVector && st.lanes > 1;
        const lanes: Lanes = {
          kind: st.kind === "generic" ? "add" : st.kind, type: st.type, identity: "identity" in st.start ? st.start.identity : 0, sides: st.sides, name: st.name, vector,
        };
        this.declareAccumulator(st);
        this.laneAccumulators.set(st.name, lanes);
        if (vector) {
          // The vector form keeps vectors of VECTOR_LANES f32 (emit_c_vector.ts).
          if (st.lanes !== VECTOR_LANES || st.type !== "f32") throw new Error(`a vector accumulator of ${st.lanes} ${st.type}`);
          for (const l of declareVectorLanes(lanes, st.copies)) lines.push(`${indent}${l}`);
        } else {
          if (st.copies !== 1) throw new Error(`lane accumulator ${st.name} of ${st.copies} copies`);
          for (const l of declareLanes(lanes, st.lanes, !("assigned" in st.start))) lines.push(`${indent}${l}`);
        }
        return;
      }
      case "combine": {
        // Of a lane or vector accumulator (a scalar one's is the walk's).
        const a = this.accumulator(st.acc);
        const vectors = this.vectors;
        const out = vectors !== undefined
          ? vectors.values.flatMap((vv, c) => vectorLaneStep(this.laneAccumulator(st.acc), String(c % a.copies), vv.operand(st.node)))
          : this.laneLoop !== undefined ? laneStep(this.laneAccumulator(st.acc), this.laneLoop.lane, this.nameOf(st.node))
          : (() => { throw new Error(`lane accumulator ${st.acc} combined outside a lane loop`); })();
        for (const l of out) lines.push(`${indent}${l}`);
        return;
      }
      case "fold": {
        const pairs = st.accs.map((x) => ({ a: this.accumulator(x.acc), c: this.laneAccumulator(x.acc), into: x.into }));
        // Vectors are spilled into lane arrays (lane l of copy c at c · lanes + l) and folded there.
        for (const { a, c } of pairs) {
          if (!c.vector) continue;
          for (const l of [...declareLanes(c, a.lanes * a.copies, false), ...spillVectorLanes(c, a.copies)]) lines.push(`${indent}${l}`);
        }
        for (const { a, c, into } of pairs) {
          const kind = this.kindOf(a.name);
          const fold = foldLanes(c, a.lanes * a.copies, st.order, into, (lane0) => `${into} = ${binaryExpr(kind, a.type, into, lane0)};`);
          for (const l of fold) lines.push(`${indent}${l}`);
        }
        return;
      }
      // (`at` of one lane is the walk's.)
      case "at": this.print(st.body, indent, { index: st.index, lanes: st.lanes, copies: 1, values: [] }); return;
      case "lanes": {
        // One lane an iteration, no carried dependence: the C compiler vectorizes it.
        lines.push(`#pragma GCC ivdep`, `${indent}for (int64_t ${st.index} = ${st.from}; ${st.index} < ${st.to}; ${st.index}++) {`);
        this.inLaneLoop({ index: st.index, element: st.index, lane: `${st.index} - ${st.from}` }, st.body, `${indent}  `);
        lines.push(`${indent}}`);
        return;
      }
      // C folds vector accumulators by `fold` (spilled into lane arrays); its kernels read no single lanes.
      case "repair": case "extract": throw new Error(`a C kernel reads vector accumulators' lanes by ${st.s}`);
      default: throw new Error(`statement ${st.s} has no C form`);
    }
  }

  /** `body` as a lane loop's (its loads and stores at `loop.element`). */
  private inLaneLoop(loop: NonNullable<CKernelPrinter["laneLoop"]>, body: readonly Stmt[], indent: string): void {
    const outer = this.at;
    this.laneLoop = loop;
    this.at = loop.element;
    this.block(body, indent);
    this.laneLoop = undefined;
    this.at = outer;
  }
}

/**
 * Prints a kernel (kernel/kernel_ir.ts) as `static void name(mem, args, <its index
 * parameters as int64_t>)`, the native calling convention (kernel.ts) when those are
 * (begin, end): index variables are int64_t, pointers restrict, the scalar element loop
 * carries `#pragma GCC ivdep` (outputs never overlap inputs except exactly, element for
 * element, when written in place), a vector section is guarded by `vectorCondition`
 * (c_math.ts: VECTOR_CONDITION, or LOOP_VECTOR_CONDITION for kernels without
 * accumulators) and its helpers defined before the function, scratch (Kernel.scratch) is
 * in arrays on the stack.
 */
export function printKernelC(k: Kernel, name = SYM, vectorCondition = VECTOR_CONDITION): string[] {
  const p = new CKernelPrinter(k, vectorCondition);
  const lines = p.lines;
  lines.push(`static void ${name}(uint8_t *mem, const uint32_t *args${k.params.map((x) => `, int64_t ${x}`).join("")}) {`);
  // Scratch on the stack (row pipelines: at most C_REDUCE_TARGET's budget).
  for (const x of k.scratch ?? []) lines.push(`  ${cType(x.type)} ${x.name}[${x.slots}][${x.length}];`);
  const u = k.units;
  p.printKernelBody("    ", { open: [`  for (int64_t ${u.index} = ${u.from}; ${u.index} < ${u.to}; ${u.index}++) {`], close: [`  }`] });
  if (k.fence) lines.push(`#if ${vectorCondition}`, `  xk_stream_fence();`, `#endif`);
  lines.push(`}`);
  const vectorized = [...statements(k.unit)].some((st) => st.s === "vector");
  return vectorized ? [`#if ${vectorCondition}`, ...vectorDefinitions(p.math), `#endif`, ...lines] : lines;
}
