// Output fusions (XLA's kOutput), backend-neutral: a dot or a convolution (the fusion's
// core) with an elementwise epilogue over its product. The GEMM and convolution kernels
// of every backend finish each tile of the product with the epilogue once its last
// block of k is done, so the result is written once and no kernel reads the whole
// product back (wasm/epilogue.ts and native/epilogue_c.ts render it).
//
// The product is seen as a rows x cols matrix, row-major, as the kernels write it: a
// dot's [batch..., m, n] result as (batch·m) x n, a convolution's output as pixels x
// output features. The epilogue is the fused root lowered as a loop fusion, with the
// core read as one more input; its domain index is unlinearized from row·cols + col.
// That input must be read exactly at the element being written (the fusion pass allows
// only elementwise ops and reshapes between the core and the root); anything else is
// refused.

import type { Computation, Instruction } from "../../ir/computation.js";
import { storageBytes, type ElementType } from "../../types/element_type.js";
import { convDepth, convGeometry, convPixels, planConv, type ConvGeometry } from "./conv_plan.js";
import { orDeclined, type Declined } from "./declined.js";
import { gemmGeometryOfDot, gemmSpecOfDot, planGemm, stridedGemmOfDot, type GemmSpec, type GemmTarget } from "./gemm_plan.js";
import { KernelGraph } from "./graph.js";
import { rebuild } from "./kernel_plan.js";
import { lowerEpilogue, unlinearize } from "./lower_fusion.js";
import { elementCount } from "../../types/shape.js";

/** An output fusion's core and the rows x cols matrix its kernel writes (row-major: the core's result in memory order). */
export interface ProductMatrix {
  readonly core: Instruction<"dot"> | Instruction<"convolution">;
  /** The fused computation's parameter numbers of the core's two operands. */
  readonly lhs: number;
  readonly rhs: number;
  readonly rows: number;
  readonly cols: number;
}

/** An output fusion's core as the CPU backends' kernels take it: its matrix and its GEMM spec or convolution geometry. */
export interface OutputCore extends ProductMatrix {
  /** The core's GEMM spec, or its convolution's geometry. */
  readonly form: { readonly dot: GemmSpec } | { readonly convolution: ConvGeometry };
}

type Core = { readonly core: Instruction<"dot"> | Instruction<"convolution">; readonly lhs: number; readonly rhs: number };

/** The one dot or convolution of an output fusion, its operands parameters of the fusion, or why not. */
function findCore(fused: Computation): Core | Declined {
  const cores = fused.instructions.filter((i) => i.opcode === "dot" || i.opcode === "convolution");
  if (cores.length !== 1) return { declined: `output fusion ${fused.name}: ${cores.length} dots or convolutions (one expected)` };
  const core = cores[0] as Instruction<"dot"> | Instruction<"convolution">;
  const [a, b] = core.operands;
  if (a?.opcode !== "parameter" || b?.opcode !== "parameter") return { declined: `output fusion ${fused.name}: the operands of ${core.name} must be parameters of the fusion` };
  return { core, lhs: (a as Instruction<"parameter">).attrs.number, rhs: (b as Instruction<"parameter">).attrs.number };
}

/** The one dot or convolution of an output fusion, when the CPU backends' kernels can take it with an epilogue (f32 or f64 throughout). */
export function outputCore(fused: Computation): OutputCore | Declined {
  const c = findCore(fused);
  if ("declined" in c) return c;
  if (c.core.opcode === "dot") {
    const spec = gemmSpecOfDot(c.core as Instruction<"dot">);
    if ("declined" in spec) return spec;
    return { ...c, rows: spec.batch * spec.m, cols: spec.n, form: { dot: spec } };
  }
  const g = convGeometry(c.core as Instruction<"convolution">);
  if ("declined" in g) return g;
  return { ...c, rows: convPixels(g), cols: g.o, form: { convolution: g } };
}

/**
 * The one dot or convolution of an output fusion as a matrix, its element types left
 * to a backend whose kernels check them (WebGPU: webgpu/gemm_tiles_wgsl.ts
 * productStorage), or why not: a dot in GEMM form or read in place (stridedGemmOfDot:
 * its [batch..., m, n] product as (batch·m) x n), or a convolution of
 * any number of spatial dimensions whose output is laid out [batch, spatial... in the
 * dimension numbers' order, feature] (pixels x output features, as the WebGPU kernel
 * numbers its rows and columns).
 */
export function productMatrix(fused: Computation): ProductMatrix | Declined {
  const c = findCore(fused);
  if ("declined" in c) return c;
  if (c.core.opcode === "dot") {
    // A dot the WebGPU kernels read in place (not in GEMM form) writes the same [batch..., m, n] product.
    const geometry = gemmGeometryOfDot(c.core as Instruction<"dot">);
    const g = "declined" in geometry ? stridedGemmOfDot(c.core as Instruction<"dot">) : geometry;
    if ("declined" in g) return g;
    return { ...c, rows: g.batch * g.m, cols: g.n };
  }
  const conv = c.core as Instruction<"convolution">;
  if (conv.shape.kind !== "array") return { declined: `convolution ${conv.name}: not an array` };
  const dims = conv.shape.dimensions;
  const dn = conv.attrs.dimensionNumbers;
  const spatial = dn.outputSpatialDimensions;
  if (dn.outputBatchDimension !== 0 || spatial.some((d, i) => d !== i + 1) || dn.outputFeatureDimension !== dims.length - 1) {
    return { declined: `convolution ${conv.name}: its output is not laid out [batch, spatial..., feature] (the epilogue's rows and columns)` };
  }
  const features = dims[dims.length - 1]!;
  return { ...c, rows: features === 0 ? 0 : elementCount(dims) / features, cols: features };
}

/** The epilogue as a kernel graph over (row, col) of the product, ready to render. */
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
export function planEpilogue(fused: Computation, oc: ProductMatrix): EpiloguePlan | Declined {
  const ir = lowerEpilogue(fused, oc.core);
  if ("declined" in ir) return ir;
  const out = ir.outputs[0]!;
  const coreType = ir.inputs[ir.inputs.length - 1]!.type;
  if (storageBytes(out.type) !== storageBytes(coreType)) {
    return { declined: `output fusion ${fused.name}: the result (${out.type}) is written over the product (${coreType}), so it needs elements of the same size` };
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
      return { declined: `output fusion ${fused.name}: the epilogue reads the product of ${oc.core.name} away from the element it writes` };
    }
    // Every renderer binds the product's row and column only.
    if (n.op === "var" && n.id !== rowVar && n.id !== colVar) return { declined: `epilogue: an index variable other than the product's row and column (${n.attr})` };
  }
  return { graph: g, root, rowVar, colVar, type: out.type, cols: oc.cols, operandCount };
}

/** Products up to this size stay in cache (L2) for a loop kernel to read back cheaply. */
const CACHED_PRODUCT_BYTES = 1 << 20;
/** A GEMM at most this deep is memory-bound: writing and reading back its product costs as much as computing it. */
const SHALLOW_K = 32;

/**
 * When an epilogue inside the kernel costs more than the loop kernel it saves, measured
 * on the benchmarks on the WebAssembly kernels ("row-panels"): a product computed over
 * several blocks of k goes to memory and back between them anyway; a deep product that
 * fits in cache is read back from there at a fraction of the GEMM's time, while the
 * epilogue's work inside the GEMM's loop nest costs more (the encoder's bias + relu and
 * residual adds: 2-4% of their GEMMs, against 1-3% for their loop kernels). Shallow
 * products (the MLP's backward pass, k = 10) and products past the cache (its 784 x 512
 * weight update) gain. Over several blocks of k the epilogue runs on the last block
 * only; GPT-2's bias + GELU after 128x768 · 768x3072 (k in 3 blocks) measured within ±2%
 * fused or not (paired, CPU time, 2026-11-30, docs/benchmarks_history.md).
 *
 * The C kernels ("l2-blocks") take every epilogue: theirs runs on a block of mc rows x
 * the unit's columns just after its last block of k, while the block is in L2, on the
 * core that computed it. At two threads a split product writes half of each row of C on
 * each core, and a loop kernel after it reads half of every row from the other core's
 * cache: the MLP's bias + ReLU took 8 us at one thread and 11-14 at two. Fused, paired
 * with main in one process (medians of whole runs, 2026-12-01, Zen 5, docs/benchmarks_history.md
 * "Epilogues and consumers at two threads, session 45"): the encoder 3-5% faster at one
 * and two threads, the MLP -2 to +1%, GPT-2's prefill within 1% (its GELU is bound by
 * its arithmetic wherever it runs); nothing measured slower at either count, so the
 * rule does not depend on the thread count (which the plan does not know). A residual
 * add fused so no longer merges with the layer norm after it, which becomes one row
 * pipeline.
 */
function costProblem(oc: OutputCore, target: GemmTarget): string | undefined {
  if (target.blocking === "l2-blocks") return undefined;
  const shape = oc.core.shape;
  const bytes = shape.kind === "array" ? oc.rows * oc.cols * storageBytes(shape.elementType) : 0;
  let k: number, blocks: number, streams: boolean;
  if ("dot" in oc.form) {
    const schedule = planGemm(oc.form.dot, target);
    [k, blocks, streams] = [schedule.spec.k, schedule.kBlocks, schedule.kind !== "packed"];
  } else {
    const g = oc.form.convolution;
    [k, blocks, streams] = [convDepth(g), planConv(g, target).kBlocks, false];
  }
  if (blocks > 1) return `the kernel of ${oc.core.name} accumulates its product over ${blocks} blocks of k, reading it back between them anyway`;
  if (!streams && k > SHALLOW_K && bytes <= CACHED_PRODUCT_BYTES) {
    return `the product of ${oc.core.name} (${Math.ceil(bytes / 1024)} KiB, k = ${k}) stays in cache for a loop kernel, cheaper than an epilogue in the GEMM`;
  }
  return undefined;
}

/**
 * The core and the epilogue of an output fusion whose kernel, scheduled for `target`,
 * can take it and should (costProblem), or why not. What remains for a backend is
 * whether it can render the epilogue's ops.
 */
export function planOutputFusion(fused: Computation, target: GemmTarget): { readonly core: OutputCore; readonly epilogue: EpiloguePlan } | Declined {
  const oc = outputCore(fused);
  if ("declined" in oc) return oc;
  const cost = costProblem(oc, target);
  if (cost !== undefined) return { declined: cost };
  const epilogue = planEpilogue(fused, oc);
  if ("declined" in epilogue) return epilogue;
  return { core: oc, epilogue };
}

/**
 * Whether an output fusion's kernel, scheduled for `target`, can keep the product in
 * scratch until the epilogue has read it (k in one block, not the kernel that streams
 * B): then the result buffer holds nothing before the epilogue writes it, and the
 * result may be written over an operand the epilogue reads element for element (the
 * planner's in-place rule, program.ts, which then asks for that kernel).
 */
export function outputFusionCanKeepProduct(fused: Computation, target: GemmTarget): boolean {
  const oc = outputCore(fused);
  if ("declined" in oc) return false;
  return ("dot" in oc.form ? planGemm(oc.form.dot, target) : planConv(oc.form.convolution, target)).productInScratch;
}

/**
 * `render` of the kernel of output fusion `fused` (its core, `oc.form` the core's GEMM spec
 * or convolution geometry, and its epilogue's plan), or why not: where outputCore or
 * planEpilogue decline, or the renderer throws DeclinedError.
 */
export function renderOutputFusion<R>(fused: Computation, render: (oc: OutputCore, plan: EpiloguePlan) => R | Declined): R | Declined {
  const oc = outputCore(fused);
  if ("declined" in oc) return oc;
  const plan = planEpilogue(fused, oc);
  if ("declined" in plan) return plan;
  return orDeclined(() => render(oc, plan));
}
