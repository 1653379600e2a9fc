// emitFusionKernel: one fused computation → one WebAssembly kernel (see kernel.ts for
// the calling convention).
//
// Loop fusions render their schedule (kernel/loop_schedule.ts: the collapsed loop nest,
// work units of (outer row, chunk of the inner loop), what is computed per row and per
// element, the vector body and its copies, the scalar tail) as WebAssembly: locals for
// the loop variables and the loads' row bases, v128 code for the vector body (4 lanes of
// 32 bits or 2 of 64), splats of the per-row values it reads. One-stage row reductions
// and row pipelines are printed the same way, from kernel/reduce_kernel.ts's and
// kernel/row_pipeline_kernel.ts's statements (emit_reduce.ts); a row pipeline's row
// buffers and rings of results are in the kernel's scratch.

import type { Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import type { RowMaximum } from "../kernel/value_facts.js";
import type { KernelGraph } from "../kernel/graph.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { emitBinaryScalar, needsTrigHelper, ValueEmitter, bindInnerLoop } from "./emit_values.js";
import { pushConst } from "./emit_ops.js";
import { addTrigReduction } from "./emit_trig.js";
import { VectorAccumulator, vectorCombiner, WASM_REDUCE_TARGET } from "./emit_reduce.js";
import { renderFusion, type FusionTarget } from "../kernel/fusion_kernel.js";
import type { VectorTarget } from "../kernel/loop_schedule.js";
import { binary, combinedKind, constant, Definitions, isColumnStmt, statements, type AccumulatorStmt, type ColumnStmt, type IndexExpr, type InlineKernel, type Kernel, type Scratch, type Stmt } from "../kernel/kernel_ir.js";
import { BUFFER_ALIGNMENT, type WasmKernel, type WasmTarget } from "./kernel.js";
import type { Declined } from "../kernel/declined.js";
import { computeType, lanesOf, loadScalar, storageBytes, storeScalar, storeVector, wrapI32 } from "./wasm_types.js";
import { maxOf } from "../../types/arrays.js";

/** Copies of a small vector body per loop iteration. */
const UNROLL = 4;
const SMALL_BODY = 24;


/** `maxima`: which operands are row maxima of others (value_facts.ts; from the fusion's producers). */
export function emitFusionKernel(fused: Computation, target: WasmTarget, name = fused.name, maxima: readonly RowMaximum[] = []): WasmKernel | Declined {
  return renderFusion(fused, maxima, wasmFusionTarget(target), ({ kernel, stages, units }, ir) => {
    const m = new ModuleBuilder().importMemory(target);
    const { scratchBytes } = addKernelFunction(m, kernel, target, "run");
    return {
      name: stages > 1 ? `${name}: row pipeline of ${stages} stages` : name,
      bytes: m.finish(), operandCount: ir.inputs.length, resultCount: ir.outputs.length, scratchBytes, ...units,
    };
  });
}

/**
 * WebAssembly's vectors for the loop schedules: 128 bits, 32-bit lanes for every type
 * computed in 32 bits (narrow ints and floats included), 64-bit for the others; which
 * nodes have SIMD code is `probe`'s to say. Small bodies run four copies per iteration.
 */
export function wasmVectorTarget(target: WasmTarget, probe?: ValueEmitter): VectorTarget {
  let last = probe;
  const probeFor = (g: KernelGraph): ValueEmitter => {
    if (last?.g !== g) last = new ValueEmitter(new FunctionBuilder(0, [], []), g, { pushAddress: () => undefined });
    return last;
  };
  return {
    vectorBytes: 16,
    laneBytes: (t) => 16 / lanesOf(t),
    vectorizable: (g, n, lanes) => {
      if (!target.simd) return false;
      const p = probeFor(g);
      p.vectorLanes = lanes as 2 | 4;
      return p.vectorizable(n);
    },
    storesVector: (t, lanes) => t !== "pred" || lanes === 4,
    unroll: { copies: UNROLL, maxBody: SMALL_BODY },
    minVectorElements: 0,
    streamMinBytes: Infinity,
  };
}

/** The fusion kernels' questions (kernel/fusion_kernel.ts) answered for WebAssembly. */
function wasmFusionTarget(target: WasmTarget): FusionTarget {
  const probe = new FunctionBuilder(0, [], []);
  return { vector: wasmVectorTarget(target), reduce: WASM_REDUCE_TARGET, vectorCombines: (kind, t) => vectorCombiner(probe, kind, t) !== undefined };
}

/**
 * Adds a kernel (kernel/kernel_ir.ts) to module `m` as a function (exported as `name`
 * when given), with the trig helper it needs; returns their indices and the bytes its
 * scratch (Kernel.scratch) takes in the kernel's scratch memory, one after the other,
 * each slot aligned to BUFFER_ALIGNMENT (an argument after the buffers when there is
 * any). Index variables and
 * pointers are i32 locals (the declared ones allocated first), values go through the
 * ValueEmitter, the vector transcendentals' constants are hoisted into locals after the
 * splats of a vector section, and an unrolled loop's copies address their elements from
 * locals set to index + copy · lanes. A scalar accumulator is a local; a vector one is
 * emit_reduce.ts's VectorAccumulator (its side accumulators included), whose lanes fold
 * in order.
 */
export function addKernelFunction(m: ModuleBuilder, k: Kernel, target: WasmTarget, name?: string): { fn: number; trigHelper: number | undefined; scratchBytes: number } {
  const scratch = scratchLayout(k.scratch ?? []);
  // Scratch is the kernel's argument after the buffers (kernel.ts).
  const scratchArgs = scratch.bytes > 0 ? 1 : 0;
  const params = new Array<"i32">(k.buffers + scratchArgs + k.params.length).fill("i32");
  const trigHelper = needsTrigHelper(k.graph) ? addTrigReduction(m) : undefined;
  const fn = m.addFunction(name, params, [], (f) => {
    printKernel(f, k, target, { trigHelper, scratch, buffer: (b) => b, params: k.params.map((_, j) => k.buffers + scratchArgs + j), registers: [] }, name);
  });
  return { fn, trigHelper, scratchBytes: scratch.bytes };
}

/**
 * Prints a kernel's statements once, inline in function `f` (a tile epilogue in a GEMM
 * microkernel, kernel/loop_kernel.ts tileEpilogueKernel): buffer b is in local
 * `buffer(b)`, index parameter j in `params[j]`, register n in `registers[n]`.
 */
export function printInlineKernel(
  f: FunctionBuilder, k: InlineKernel, target: WasmTarget, trigHelper: number | undefined,
  where: { readonly buffer: (b: number) => number; readonly params: readonly number[]; readonly registers: readonly number[] },
): void {
  printKernel(f, k, target, { trigHelper, scratch: scratchLayout([]), ...where });
}

/** Where a kernel printed into a function finds its inputs (see printInlineKernel), its scratch and trig helper. */
interface KernelFrame {
  readonly trigHelper: number | undefined;
  readonly scratch: ReturnType<typeof scratchLayout>;
  readonly buffer: (b: number) => number;
  readonly params: readonly number[];
  readonly registers: readonly number[];
}

/** A kernel's statements into `f`: the prologue, then the units in their loop (none for an inline kernel: its statements once). */
function printKernel(f: FunctionBuilder, k: Kernel | InlineKernel, target: WasmTarget, frame: KernelFrame, name?: string): void {
  const g = k.graph;
  const { scratch, trigHelper } = frame;
  const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
  ve.trigHelper = trigHelper;
  ve.relaxedSimd = target.relaxedSimd;
  ve.vectorLanes = k.lanes as 2 | 4;
  const locals = new Definitions<number>("index variable");
  k.params.forEach((x, j) => locals.define(x, frame.params[j]!));
  for (const x of k.declared) locals.define(x, f.local("i32"));
  const local = (x: string): number => locals.get(x);
  /** The local of index variable or pointer x, allocated at its first definition. */
  const defined = (x: string): number => locals.find(x) ?? locals.define(x, f.local("i32"));
  const register = (n: number): number => {
    const l = frame.registers[n];
    if (l === undefined) throw new Error(`kernel ${name ?? ""}: register ${n} is not the caller's`);
    return l;
  };
  const loadOf = new Map([...k.rowLoads].map(([id, r]) => [r.pointer, id]));
  const baseLocal = new Map<number, number>(); // load node -> local of its row's byte address
  bindInnerLoop(ve, f, g, k.affine, baseLocal, local(k.inner), frame.buffer);
  let copyIndex: number[] = [];
  /** An accumulator: a scalar's local, or a reduction's vector accumulator. */
  type Accumulator = { readonly st: AccumulatorStmt } & (
    | { readonly scalar: number; readonly vector?: undefined }
    | { readonly vector: VectorAccumulator }
  );
  const accumulators = new Definitions<Accumulator>("accumulator");
  const accumulator = (x: string): Accumulator => accumulators.get(x);
  const scalarOf = (a: Accumulator): number => {
    if (a.vector !== undefined) throw new Error(`kernel ${name ?? ""}: vector accumulator ${a.st.name} used as a scalar`);
    return a.scalar;
  };
  /** Copy `copy` of accumulator a ⊕= the value in local `value`. */
  const combine = (a: Accumulator, copy: number, value: number): void => {
    if (a.vector !== undefined) {
      a.vector.accumulate(copy, value);
      return;
    }
    emitBinaryScalar(f, combinedKind(a.st), a.st.type, a.scalar, value);
    f.localSet(a.scalar);
  };

  const expr = (e: IndexExpr): void => {
    switch (e.op) {
      case "const": f.i32Const(e.value); return;
      case "index": f.localGet(local(e.name)); return;
      case "node": f.localGet(ve.scalar.get(e.id)!); return;
      case "min": {
        const t = f.local("i32");
        expr(e.a);
        f.localTee(t);
        minOf(t, e.b);
        return;
      }
      default:
        expr(e.a);
        expr(e.b);
        ({ add: () => f.i32Add(), sub: () => f.i32Sub(), mul: () => f.i32Mul(), div: () => f.i32DivU(), rem: () => f.i32RemU() })[e.op]();
    }
  };
  /** min(t, b) with t's value on the stack and in local t. */
  const minOf = (t: number, b: IndexExpr): void => {
    expr(b);
    f.localGet(t);
    expr(b);
    f.i32LtU().select();
  };
  /** Byte offset of element `e` of a `bytes`-byte type (a constant factor folded in). */
  const scaled = (e: IndexExpr, bytes: number): void => {
    if (e.op === "mul" && e.b.op === "const") {
      expr(e.a);
      f.i32Const(e.b.value * bytes).i32Mul();
      return;
    }
    expr(e);
    if (bytes !== 1) f.i32Const(bytes).i32Mul();
  };
  const address = (pointer: string, type: ElementType, at: number): void => {
    f.localGet(local(pointer)).localGet(at);
    if (storageBytes(type) !== 1) f.i32Const(storageBytes(type)).i32Mul();
    f.i32Add();
  };

  // The vector nodes whose constants the splats hoist, and the copies' index locals, over
  // every vector section (a row reduction's splats stand in a section of their own).
  const vectorSection = [...statements(k.unit)];
  /** The vector nodes of `body`'s sections. */
  const vectorIds = (body: readonly Stmt[]): number[] => [...new Set([...statements(body)].flatMap((x) => (x.s === "vectorValues" ? x.ids : [])))];
  let ids = vectorIds(k.unit);
  const copies = maxOf(vectorSection.map((x) => (x.s === "loop" ? x.copies : 1)));
  const print = (body: readonly Stmt[], loop?: { index: number[]; copies: Map<number, number>[] }): void => {
    for (const st of body) {
      switch (st.s) {
        case "index": {
          const l = defined(st.name);
          if (st.value.op === "min") {
            // The definition's own local holds the first operand.
            expr(st.value.a);
            f.localTee(l);
            minOf(l, st.value.b);
          } else expr(st.value);
          f.localSet(l);
          break;
        }
        case "bind": ve.scalar.set(st.node, local(st.name)); break;
        case "values": for (const id of st.ids) ve.emitScalar(id); break;
        case "pointer": {
          const l = defined(st.name);
          const id = loadOf.get(st.name);
          if (id !== undefined) baseLocal.set(id, l);
          f.localGet(frame.buffer(st.buffer));
          scaled(st.offset, storageBytes(st.type));
          f.i32Add().localSet(l);
          break;
        }
        case "splat": {
          for (const id of st.ids) ve.splat(id);
          break;
        }
        // WebAssembly always has its vector form: `otherwise` never runs.
        case "vector": {
          for (const x of st.body) {
            print([x]);
            if (x.s !== "splat") continue;
            ve.hoistConstants(ids);
            copyIndex = Array.from({ length: copies - 1 }, () => f.local("i32"));
          }
          break;
        }
        // WebAssembly has no streaming stores: both branches store alike.
        case "ifAligned": print(st.otherwise); break;
        case "loop": {
          const i = local(st.index);
          const step = st.lanes * st.copies;
          f.block().loop();
          const pushStop = (): void => { if (typeof st.stop === "number") f.i32Const(st.stop); else f.localGet(local(st.stop)); };
          if (st.lanes === 1) { f.localGet(i); pushStop(); f.i32GeU().brIf(1); }
          else { f.localGet(i).i32Const(step).i32Add(); pushStop(); f.i32GtU().brIf(1); }
          const index = [i, ...copyIndex.slice(0, st.copies - 1)];
          index.forEach((l, copy) => { if (copy > 0) f.localGet(i).i32Const(st.lanes * copy).i32Add().localSet(l); });
          print(st.body, { index, copies: [] });
          f.localGet(i).i32Const(step).i32Add().localSet(i).br(0);
          f.end().end();
          break;
        }
        case "vectorValues": {
          const at = loop!.index;
          loop!.copies = ve.emitVectorCopies(st.ids, at.length, (copy) => bindInnerLoop(ve, f, g, k.affine, baseLocal, at[copy]!, frame.buffer));
          bindInnerLoop(ve, f, g, k.affine, baseLocal, at[0]!, frame.buffer);
          break;
        }
        case "store": case "combine": {
          if (loop === undefined || loop.copies.length === 0) {
            if (st.s === "combine") combine(accumulator(st.acc), 0, ve.scalar.get(st.node)!);
            else {
              address(st.pointer, st.type, loop!.index[0]!);
              f.localGet(ve.scalar.get(st.node)!);
              storeScalar(f, st.type);
            }
            break;
          }
          // A vector loop's stores and combines are printed together, copy by copy.
          const effects = body.filter((x) => x.s === "store" || x.s === "combine");
          if (effects[0] !== st) break;
          loop.copies.forEach((vals, copy) => {
            for (const x of effects) {
              if (x.s === "combine") {
                const a = accumulator(x.acc);
                combine(a, copy % a.st.copies, vals.get(x.node)!);
              } else if (x.s === "store") {
                address(x.pointer, x.type, loop.index[copy]!);
                f.localGet(vals.get(x.node)!);
                storeVector(f, x.type, ve.scratchV128());
              }
            }
          });
          break;
        }
        case "accumulator": {
          if (st.lanes > 1) {
            if (!("identity" in st.start)) throw new Error(`kernel ${name ?? ""}: vector accumulator ${st.name} starts from a node`);
            const vector = new VectorAccumulator(f, combinedKind(st), st.type, st.copies, st.sides);
            vector.init(st.start.identity, st.lanes);
            accumulators.define(st.name, { st, vector });
            break;
          }
          // Declared again (a column reduction's output after output), it keeps its local.
          const before = accumulators.find(st.name);
          const scalar = before?.vector === undefined && before?.st.type === st.type ? before.scalar : f.local(computeType(st.type));
          if ("node" in st.start) f.localGet(ve.scalar.get(st.start.node)!);
          else if ("identity" in st.start) pushConst(f, st.type, st.start.identity);
          else throw new Error(`kernel ${name ?? ""}: scalar accumulator ${st.name} starts assigned`);
          f.localSet(scalar);
          accumulators.define(st.name, { st, scalar });
          break;
        }
        case "fold": {
          // WASM_REDUCE_TARGET folds lanes in order: extracting them one by one is as fast as halving a 4-lane vector.
          if (st.order !== "inOrder") throw new Error(`kernel ${name ?? ""}: WebAssembly folds lanes in order`);
          for (const x of st.accs) vectorOf(x.acc).repair();
          for (const x of st.accs) vectorOf(x.acc).fold(scalarOf(accumulator(x.into)), Array.from({ length: accumulator(x.acc).st.lanes }, (_, lane) => lane));
          break;
        }
        case "update": {
          const accs = st.accs.map((x) => scalarOf(accumulator(x)));
          st.params.forEach((p, i) => ve.scalar.set(p, i < accs.length ? accs[i]! : ve.scalar.get(st.elements[i - accs.length]!)!));
          for (const id of st.ids) ve.emitScalar(id);
          st.results.forEach((res, i) => { f.localGet(ve.scalar.get(res)!).localSet(accs[i]!); });
          break;
        }
        case "result": {
          const a = accumulator(st.acc);
          if (st.init === undefined) f.localGet(scalarOf(a));
          else {
            emitBinaryScalar(f, combinedKind(a.st), a.st.type, ve.scalar.get(st.init)!, scalarOf(a));
            wrapI32(f, a.st.type);
          }
          const l = f.local(computeType(a.st.type));
          f.localSet(l);
          ve.scalar.set(st.node, l);
          break;
        }
        case "storeElement": {
          f.localGet(frame.buffer(st.buffer));
          scaled(st.index, storageBytes(st.type));
          f.i32Add().localGet(ve.scalar.get(st.node)!);
          storeScalar(f, st.type);
          break;
        }
        case "fromRegister": ve.vector.set(st.node, register(st.register)); break;
        case "toRegister": f.localGet((loop?.copies[0] ?? ve.vector).get(st.node)!).localSet(register(st.register)); break;
        default:
          if (isColumnStmt(st)) printColumn(st);
          else pipelineStmt(st);
      }
    }
  };

  /** The statements of column reductions (kernel_ir.ts ColumnStmt). */
  const printColumn = (st: ColumnStmt): void => {
    switch (st.s) {
      case "for": {
        const i = local(st.index);
        f.block().loop();
        f.localGet(i).i32Const(st.stop).i32GeU().brIf(1);
        print(st.body);
        f.localGet(i).i32Const(st.step).i32Add().localSet(i).br(0);
        f.end().end();
        return;
      }
      case "at": print(st.body, { index: [local(st.index)], copies: [] }); return;
      case "lanes": throw new Error(`kernel ${name ?? ""}: WebAssembly keeps no lane arrays`);
      case "assign": {
        f.localGet(ve.scalar.get(st.node)!).localSet(scalarOf(accumulator(st.acc)));
        return;
      }
      case "repair": for (const x of st.accs) vectorOf(x).repair(); return;
      case "extract": vectorOf(st.acc).fold(scalarOf(accumulator(st.into)), [st.lane]); return;
    }
  };
  const vectorOf = (x: string): VectorAccumulator => {
    const v = accumulator(x).vector;
    if (v === undefined) throw new Error(`kernel ${name ?? ""}: scalar accumulator ${x} read by lanes`);
    return v;
  };

  /** The statements of row pipelines (kernel/row_pipeline_kernel.ts): conditions on rows, and scratch in the kernel's scratch memory. */
  const pipelineStmt = (st: Stmt): void => {
    /** Pushes the address of slot `slot` of scratch `name`. */
    const slotAddress = (of: string, slot: IndexExpr): ScratchSlots => {
      const x = scratch.of.get(of);
      if (x === undefined) throw new Error(`kernel ${name ?? ""}: scratch ${of} is not declared`);
      f.localGet(k.buffers);
      if (x.offset !== 0) f.i32Const(x.offset).i32Add();
      scaled(binary("mul", slot, constant(x.slotBytes)), 1);
      f.i32Add();
      return x;
    };
    switch (st.s) {
      case "scope": {
        const outer = ids;
        ids = vectorIds(st.body);
        print(st.body);
        ids = outer;
        return;
      }
      case "if": {
        st.less.forEach((x, n) => {
          expr(x.a);
          expr(x.b);
          f.i32LtU();
          if (n > 0) f.i32And();
        });
        f.if();
        // A branch's vector sections hoist the constants of its own vector nodes.
        const outer = ids;
        ids = vectorIds(st.then);
        print(st.then);
        if (st.otherwise.length > 0) {
          f.else();
          ids = vectorIds(st.otherwise);
          print(st.otherwise);
        }
        ids = outer;
        f.end();
        return;
      }
      case "slot": {
        const l = defined(st.name);
        const id = loadOf.get(st.name);
        if (id !== undefined) baseLocal.set(id, l);
        slotAddress(st.scratch, st.slot);
        f.localSet(l);
        return;
      }
      case "scratchStore": {
        const x = slotAddress(st.scratch, st.slot);
        f.localGet(ve.scalar.get(st.node)!);
        storeScalar(f, x.type);
        return;
      }
      case "scratchLoad": {
        const x = slotAddress(st.scratch, st.slot);
        loadScalar(f, x.type);
        const l = f.local(computeType(x.type));
        f.localSet(l);
        ve.scalar.set(st.node, l);
        return;
      }
      default: throw new Error(`kernel ${name ?? ""}: statement ${st.s} is not a row pipeline's`);
    }
  };

  if (!("units" in k)) {
    print(k.unit);
    return;
  }
  print(k.prologue ?? []);
  const u = local(k.units.index);
  f.localGet(local(k.units.from)).localSet(u);
  f.block().loop();
  f.localGet(u).localGet(local(k.units.to)).i32GeU().brIf(1);
  print(k.unit);
  f.localGet(u).i32Const(1).i32Add().localSet(u).br(0);
  f.end().end();
}

/** A scratch's place in the kernel's scratch memory: its offset, and the bytes of a slot (aligned, so that vector loads of a row buffer stay aligned). */
interface ScratchSlots {
  readonly type: ElementType;
  readonly offset: number;
  readonly slotBytes: number;
}

/** The scratch of a kernel one after the other in its scratch memory, and the bytes they take. */
function scratchLayout(scratch: readonly Scratch[]): { readonly of: ReadonlyMap<string, ScratchSlots>; readonly bytes: number } {
  const of = new Map<string, ScratchSlots>();
  let bytes = 0;
  for (const x of scratch) {
    const slotBytes = Math.ceil((x.length * storageBytes(x.type)) / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
    of.set(x.name, { type: x.type, offset: bytes, slotBytes });
    bytes += x.slots * slotBytes;
  }
  return { of, bytes };
}
