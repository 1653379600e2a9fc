// Output fusions (XLA's kOutput): a dot or a convolution (the fusion's core) with an
// elementwise epilogue over its product. The GEMM and convolution kernels finish each
// tile of the product once its last block of k is done: a full tile in registers, by a
// microkernel that applies the epilogue's vector form before it stores
// (emitTileEpilogue), a tile on the right edge (or every tile, for an epilogue without
// a vector form) by epi right after the tile is written, while it is in L1. The result
// is written once, and no kernel reads the whole product back (gemm_rows.ts).
//
// The product is seen as a rows x cols matrix, row-major, as the kernels write it: a
// dot's [batch..., m, n] result as (batch·m) x n, a convolution's output as pixels x
// output features. The epilogue is the fused root lowered as a loop fusion (the loop
// fusions' value emitters, so any elementwise op they support works), with the core
// read as one more input; its domain index is unlinearized from row·cols + col. That
// input must be read exactly at the element being written (the fusion pass allows only
// elementwise ops and reshapes between the core and the root); anything else is refused.
//
// epi(operand0, ..., operandN-1, product, c, rowBegin, rowEnd, colBegin, colEnd)
// computes rows [rowBegin, rowEnd) x columns [colBegin, colEnd) of the result at c,
// reading the product at `product` (C itself, or the kernel's row-tile buffer placed
// so that it is addressed like C: then only the epilogue writes C, and it may write
// over an operand it reads element for element, see outputFusionCanKeepProduct).

import type { Computation, Instruction } from "../../ir/computation.js";
import { lowerEpilogue, unlinearize } from "../kernel/lower_fusion.js";
import { KernelGraph } from "../kernel/graph.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { elementInfo, type TileRegisters } from "./gemm_microkernel.js";
import { bindInnerLoop, EmitFail, needsTrigHelper, ValueEmitter } from "./emit_values.js";
import { addTrigReduction } from "./emit_trig.js";
import { emitRow, planBody } from "./emit_loop.js";
import { rebuild } from "../kernel/kernel_plan.js";
import { forRange } from "./loops.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./kernel.js";
import { storageBytes } from "./wasm_types.js";
import { convGeometry, convKBlocks, convProductInScratch, emitConvKernel, type ConvGeometry } from "./conv.js";
import { emitGemmKernel, gemmKBlocks, gemmProductInScratch, gemmSpecOfDot, streamsB, type GemmSpec } from "./gemm.js";
import type { KernelEpilogue } from "./gemm_rows.js";
import type { ElementType } from "../../types/element_type.js";

/** An output fusion's core and the matrix its kernel writes. */
export interface OutputCore {
  readonly core: Instruction<"dot"> | Instruction<"convolution">;
  /** The fused computation's parameter numbers of the core's two operands. */
  readonly lhs: number;
  readonly rhs: number;
  readonly rows: number;
  readonly cols: number;
}

/** The one dot or convolution of an output fusion, when its kernel can take an epilogue. */
export function outputCore(fused: Computation): OutputCore | Unsupported {
  const cores = fused.instructions.filter((i) => i.opcode === "dot" || i.opcode === "convolution");
  if (cores.length !== 1) return { unsupported: `output fusion ${fused.name}: ${cores.length} dots or convolutions (one expected)` };
  const core = cores[0] as Instruction<"dot"> | Instruction<"convolution">;
  const [a, b] = core.operands;
  if (a?.opcode !== "parameter" || b?.opcode !== "parameter") return { unsupported: `output fusion ${fused.name}: the operands of ${core.name} must be parameters of the fusion` };
  const lhs = (a as Instruction<"parameter">).attrs.number;
  const rhs = (b as Instruction<"parameter">).attrs.number;
  if (core.opcode === "dot") {
    const spec = gemmSpecOfDot(core as Instruction<"dot">);
    if ("unsupported" in spec) return spec;
    return { core, lhs, rhs, rows: spec.batch * spec.m, cols: spec.n };
  }
  const g = convGeometry(core as Instruction<"convolution">);
  if ("unsupported" in g) return g;
  return { core, lhs, rhs, rows: g.outputSizes[0] * g.outputSizes[1] * g.outputSizes[2], cols: g.o };
}

/** The epilogue as a kernel graph over (row, col) of the product, ready to emit. */
export interface EpiloguePlan {
  readonly graph: KernelGraph;
  readonly root: number;
  readonly rowVar: number;
  readonly colVar: number;
  readonly type: ElementType;
  readonly cols: number;
  /** The fusion's operands (the core's product is input number operandCount). */
  readonly operandCount: number;
}

/** The epilogue of `fused` over its product's rows and columns, or why it cannot be one. */
export function planEpilogue(fused: Computation, oc: OutputCore): EpiloguePlan | Unsupported {
  const ir = lowerEpilogue(fused, oc.core);
  if ("unsupported" in ir) return ir;
  const out = ir.outputs[0]!;
  const coreType = ir.inputs[ir.inputs.length - 1]!.type;
  if (storageBytes(out.type) !== storageBytes(coreType)) {
    return { unsupported: `output fusion ${fused.name}: the result (${out.type}) is written over the product (${coreType}), so it needs elements of the same size` };
  }
  const g = new KernelGraph();
  const rowVar = g.variable(0, oc.rows);
  const colVar = g.variable(1, oc.cols);
  const linear = g.add(g.mul(rowVar, oc.cols), colVar);
  const idx = unlinearize(g, linear, ir.domain);
  const { map } = rebuild(ir.graph, [out.value], (dim) => idx[dim]!, g);
  const root = map(out.value);
  const operandCount = ir.inputs.length - 1;
  for (const n of g.nodes) {
    if (n.op === "load" && n.attr === operandCount && n.args[0] !== linear) {
      return { unsupported: `output fusion ${fused.name}: the epilogue reads the product of ${oc.core.name} away from the element it writes` };
    }
  }
  return { graph: g, root, rowVar, colVar, type: out.type, cols: oc.cols, operandCount };
}

/**
 * Adds epi(...) (see the top of this file) to `m`; returns its function index and the
 * trig helper it added (for tiles in registers). Throws EmitFail when an op has no code.
 */
export function addEpilogueFunction(m: ModuleBuilder, e: EpiloguePlan, target: WasmTarget): { fn: number; trigHelper: number | undefined } {
  const g = e.graph;
  const n = e.operandCount;
  const trigHelper = needsTrigHelper(g) ? addTrigReduction(m) : undefined;
  const fn = m.addFunction(undefined, new Array<"i32">(n + 6).fill("i32"), [], (f) => {
    // The product is input n (the core), read at param n; results go to c.
    const [c, rowBegin, rowEnd, colBegin, colEnd] = [n + 1, n + 2, n + 3, n + 4, n + 5];
    const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
    ve.trigHelper = trigHelper;
    ve.relaxedSimd = target.relaxedSimd;
    const plan = planBody(g, [e.root], e.colVar, target, ve);
    ve.vectorLanes = plan.lanes;
    const row = f.local("i32");
    const j = f.local("i32");
    const base = f.local("i32");
    const baseLocal = new Map<number, number>();
    bindInnerLoop(ve, f, g, plan.affine, baseLocal, j);
    ve.scalar.set(e.rowVar, row);
    ve.scalar.set(e.colVar, j);
    forRange(f, row, { local: rowBegin }, { local: rowEnd }, 1, () => {
      f.localGet(colBegin).localSet(j);
      f.localGet(c).localGet(row).i32Const(e.cols * storageBytes(e.type)).i32Mul().i32Add().localSet(base);
      emitRow(f, ve, g, plan, { i: j, stop: colEnd, innerVar: e.colVar }, baseLocal, [{ root: e.root, type: e.type, base }]);
    });
  });
  return { fn, trigHelper };
}

/** Whether the epilogue has a vector form of the product's lanes (then tiles are finished in registers). */
function vectorizes(e: EpiloguePlan, target: WasmTarget, lanes: number): boolean {
  const probe = new ValueEmitter(new FunctionBuilder(0, [], []), e.graph, { pushAddress: () => undefined });
  const plan = planBody(e.graph, [e.root], e.colVar, target, probe);
  return plan.vectorBody !== undefined && plan.lanes === lanes;
}

/**
 * Emits the epilogue over a tile of the product held in registers (gemm_microkernel.ts):
 * per row, the values that depend on the row alone and the bases of the loads; per
 * vector of the row, the vector body with the product's load replaced by the
 * accumulator, whose local then holds the result.
 */
function emitTileEpilogue(f: FunctionBuilder, e: EpiloguePlan, target: WasmTarget, trigHelper: number | undefined, tile: TileRegisters): void {
  const g = e.graph;
  const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
  ve.trigHelper = trigHelper;
  ve.relaxedSimd = target.relaxedSimd;
  const plan = planBody(g, [e.root], e.colVar, target, ve);
  ve.vectorLanes = plan.lanes;
  const body = plan.vectorBody!;
  const product = body.find((id) => g.node(id).op === "load" && g.node(id).attr === e.operandCount);
  const row = f.local("i32");
  const col = f.local("i32");
  const baseLocal = new Map<number, number>();
  bindInnerLoop(ve, f, g, plan.affine, baseLocal, col, tile.operand);
  ve.scalar.set(e.rowVar, row);
  ve.scalar.set(e.colVar, col);
  ve.hoistConstants(body);
  for (let r = 0; r < tile.rows; r++) {
    f.localGet(tile.row).i32Const(r).i32Add().localSet(row);
    for (const id of plan.invariant) if (g.node(id).op !== "var") ve.emitScalar(id);
    for (const [id, aff] of plan.affine) {
      const n = g.node(id);
      if (n.op !== "load" || id === product) continue;
      const size = storageBytes(n.type as ElementType);
      let l = baseLocal.get(id);
      if (l === undefined) baseLocal.set(id, l = f.local("i32"));
      f.localGet(tile.operand(n.attr as number)).localGet(ve.scalar.get(aff.base)!);
      if (size !== 1) f.i32Const(size).i32Mul();
      f.i32Add().localSet(l);
    }
    for (const id of plan.splats) ve.splat(id);
    for (let v = 0; v < tile.vectors; v++) {
      const acc = tile.acc[r * tile.vectors + v]!;
      f.localGet(tile.col).i32Const(v * plan.lanes).i32Add().localSet(col);
      if (product !== undefined) ve.vector.set(product, acc);
      for (const id of body) if (id !== product) ve.emitVector(id);
      f.localGet(ve.vector.get(e.root)!).localSet(acc);
    }
  }
}

/** The target the fusion pass checks epilogues against (the emitters' choices do not depend on the rest). */
const CHECK_TARGET: WasmTarget = { simd: true, relaxedSimd: false, sharedMemory: false };

/** Products up to this size stay in cache (L2) for a loop kernel to read back cheaply. */
const CACHED_PRODUCT_BYTES = 1 << 20;
/** A GEMM at most this deep is memory-bound: writing and reading back its product costs as much as computing it. */
const SHALLOW_K = 32;

/**
 * When an epilogue inside the kernel costs more than the loop kernel it saves, measured
 * on the benchmarks: a product computed over several blocks of k goes to memory and
 * back between them anyway; a deep product that fits in cache is read back from there
 * at a fraction of the GEMM's time, while the epilogue's work inside the GEMM's loop
 * nest costs more (the encoder's bias + relu and residual adds: 2-4% of their GEMMs,
 * against 1-3% for their loop kernels). Shallow products (the MLP's backward pass,
 * k = 10) and products past the cache (its 784 x 512 weight update) gain.
 */
function costProblem(oc: OutputCore): string | undefined {
  const shape = oc.core.shape;
  const bytes = shape.kind === "array" ? oc.rows * oc.cols * storageBytes(shape.elementType) : 0;
  let k: number, blocks: number, streams: boolean;
  if (oc.core.opcode === "dot") {
    const spec = gemmSpecOfDot(oc.core as Instruction<"dot">) as GemmSpec;
    [k, blocks, streams] = [spec.k, gemmKBlocks(spec, CHECK_TARGET), streamsB(spec)];
  } else {
    const g = convGeometry(oc.core as Instruction<"convolution">) as ConvGeometry;
    [k, blocks, streams] = [g.kernelSizes[0] * g.kernelSizes[1] * g.c, convKBlocks(g, CHECK_TARGET), false];
  }
  if (blocks > 1) return `the kernel of ${oc.core.name} accumulates its product over ${blocks} blocks of k, reading it back between them anyway`;
  if (!streams && k > SHALLOW_K && bytes <= CACHED_PRODUCT_BYTES) {
    return `the product of ${oc.core.name} (${Math.ceil(bytes / 1024)} KiB, k = ${k}) stays in cache for a loop kernel, cheaper than an epilogue in the GEMM`;
  }
  return undefined;
}

/**
 * Why the backend cannot (or, by costProblem, should not) compile `fused` as an output
 * fusion, or undefined when it can.
 */
export function outputFusionProblem(fused: Computation): string | undefined {
  const oc = outputCore(fused);
  if ("unsupported" in oc) return oc.unsupported;
  const cost = costProblem(oc);
  if (cost !== undefined) return cost;
  const plan = planEpilogue(fused, oc);
  if ("unsupported" in plan) return plan.unsupported;
  try {
    addEpilogueFunction(new ModuleBuilder(), plan, CHECK_TARGET);
    return undefined;
  } catch (e) {
    if (e instanceof EmitFail) return e.message;
    throw e;
  }
}

/**
 * The kernel of an output fusion: the GEMM or convolution kernel of its core, finishing
 * each block with the epilogue. `keepProduct`: the result is written over an operand
 * the epilogue reads (the planner decided so, given outputFusionCanKeepProduct), so the
 * product must stay in scratch until the epilogue has read it; otherwise it goes to the
 * result directly, which measured a few percent faster on results past the caches.
 */
export function emitOutputFusionKernel(fused: Computation, target: WasmTarget, name: string, keepProduct = false): WasmKernel | Unsupported {
  const oc = outputCore(fused);
  if ("unsupported" in oc) return oc;
  const plan = planEpilogue(fused, oc);
  if ("unsupported" in plan) return plan;
  let trigHelper: number | undefined;
  const lanes = elementInfo(oc.core.shape.kind === "array" && oc.core.shape.elementType === "f64" ? "f64" : "f32").lanes;
  const epilogue: KernelEpilogue = {
    operandCount: plan.operandCount, lhs: oc.lhs, rhs: oc.rhs, keepProduct,
    add: (m) => {
      const added = addEpilogueFunction(m, plan, target);
      trigHelper = added.trigHelper;
      return added.fn;
    },
    ...(target.simd && vectorizes(plan, target, lanes) ? { inRegisters: (f: FunctionBuilder, tile: TileRegisters) => emitTileEpilogue(f, plan, target, trigHelper, tile) } : {}),
  };
  let kernel: WasmKernel | Unsupported;
  try {
    if (oc.core.opcode === "dot") {
      const spec = gemmSpecOfDot(oc.core as Instruction<"dot">);
      kernel = "unsupported" in spec ? spec : emitGemmKernel(spec, target, undefined, epilogue);
    } else {
      kernel = emitConvKernel(oc.core as Instruction<"convolution">, target, undefined, epilogue);
    }
  } catch (e) {
    if (e instanceof EmitFail) return { unsupported: e.message };
    throw e;
  }
  return "unsupported" in kernel ? kernel : { ...kernel, name: `${name}: ${kernel.name}` };
}

/**
 * Whether an output fusion's kernel can keep the product in scratch until the epilogue
 * has read it (k in one block, not the kernel that streams B): then the result buffer
 * holds nothing before the epilogue writes it, and the result may be written over an
 * operand the epilogue reads element for element (the planner's in-place rule,
 * program.ts, which then asks emitOutputFusionKernel for that kernel).
 */
export function outputFusionCanKeepProduct(fused: Computation, target: WasmTarget): boolean {
  const oc = outputCore(fused);
  if ("unsupported" in oc) return false;
  if (oc.core.opcode === "dot") {
    const spec = gemmSpecOfDot(oc.core as Instruction<"dot">);
    return !("unsupported" in spec) && gemmProductInScratch(spec, target);
  }
  const g = convGeometry(oc.core as Instruction<"convolution">);
  return !("unsupported" in g) && convProductInScratch(g, target);
}
