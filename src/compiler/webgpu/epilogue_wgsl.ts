// Output fusions on the GPU: the epilogue that kernel/epilogue_plan.ts plans (bias,
// activation, residual... over the product's rows and columns), rendered as the store
// of the WGSL GEMM and convolution kernels (gemm_wgsl.ts's GpuEpilogue), so that the
// fused result is written once and no loop kernel reads the product back. Its values
// are printed by the loop kernels' renderer (wgsl_values.ts: the same ops, polynomials
// and bit-level semantics); its other inputs are read from the device's memory at the
// offsets of the fusion's argument slot, as a loop kernel reads them.
//
// Argument slots of an output fusion's step: the fusion's operands in parameter order,
// then its result; the core's two operands are among them (ProductMatrix.lhs/rhs).

import type { Computation } from "../../ir/computation.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { planEpilogue, productMatrix, type EpiloguePlan, type ProductMatrix } from "../kernel/epilogue_plan.js";
import type { Node } from "../kernel/graph.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { EpilogueSite, GpuEpilogue } from "./gemm_wgsl.js";
import { loadAs, memoryHelpers, storeAs } from "./wgsl_kernel.js";
import { WGSL_HELPERS, WgslValues, wgslMathSources } from "./wgsl_values.js";

/** Where the kernel finds its buffers: argument slots of the device memory (gemm_tiles_wgsl.ts, KernelMemory "device"). */
export interface ArgumentSlots {
  readonly lhs: number;
  readonly rhs: number;
  readonly out: number;
}

/** An output fusion's core, its epilogue as WGSL, and the slots its kernel reads (or why it is not one). */
export interface WgslOutputFusion {
  readonly core: ProductMatrix;
  /** Absent where the fusion only reshapes its product (the product stored as it is, by the kernel's own stores: vec4s where they fit). */
  readonly epilogue?: GpuEpilogue;
  readonly slots: ArgumentSlots;
}

/** The nodes the epilogue's root depends on, operands first (node ids grow from operands to users). */
function nodesOf(plan: EpiloguePlan): number[] {
  const seen = new Set<number>();
  const visit = (id: number): void => {
    if (seen.has(id)) return;
    seen.add(id);
    for (const a of plan.graph.node(id).args) visit(a);
  };
  visit(plan.root);
  return [...seen].sort((a, b) => a - b);
}

/**
 * The epilogue's store for one element of the product: its value statements, each
 * element's own (a function of the element's row and column), then the result stored
 * at the product's element index in the result's slot.
 */
function renderEpilogue(plan: EpiloguePlan, slots: ArgumentSlots): GpuEpilogue {
  const address = (slot: number, index: string, t: ElementType): string => `(i32(args[${slot}u]) + (${index}) * ${ELEMENT_TYPES[t].storageBytes})`;
  // The store is rendered at each call site (a kernel has one or two); a render without a
  // site (placeholder expressions) learns the math functions its declarations must define.
  const render = (site: EpilogueSite | undefined): { lines: string[]; values: WgslValues } => {
    const values: WgslValues = new WgslValues(plan.graph, {
      load: (n: Node) => {
        const operand = n.attr as number;
        if (operand === plan.operandCount) return site?.value ?? "0.0";
        return loadAs(n.type as ElementType, address(operand, values.v(n.args[0]!), n.type as ElementType));
      },
      leaf: (n: Node) => {
        if (n.id === plan.rowVar) return `i32(${site?.row ?? "0u"})`;
        if (n.id === plan.colVar) return `i32(${site?.col ?? "0u"})`;
        throw new DeclinedError(`the epilogue has a leaf ${n.op} that is neither the product's row nor its column`);
      },
    });
    const lines: string[] = [];
    values.emit(nodesOf(plan), lines, "    ");
    lines.push(`    ${storeAs(plan.type, address(slots.out, `i32(${site?.index ?? "0u"})`, plan.type), values.v(plan.root))}`);
    return { lines, values };
  };
  const probe = render(undefined);
  // A result narrower than a word is stored a byte or two at a time: neighbouring invocations share its words, which are then atomic (wgsl_kernel.ts).
  const storesBytes = ELEMENT_TYPES[plan.type].storageBytes < 4;
  return {
    declarations: [WGSL_HELPERS, memoryHelpers(storesBytes), ...wgslMathSources(probe.values.math)].join("\n"),
    storesBytes,
    // xk_opaque (the zero that float constants go through, wgsl_values.ts) is read from the slot after the buffers, which the host leaves zero.
    store: (site) => ["{", `    xk_opaque = args[${slots.out + 1}u];`, ...render(site).lines, "  }"].join("\n"),
  };
}

/** The WGSL epilogue of output fusion `fused`, or why it has none (fusion then leaves the core and its epilogue as two kernels: program.ts). */
export function wgslOutputFusion(fused: Computation): WgslOutputFusion | Declined {
  // The GEMM and convolution kernels take halves, integers and f8 (gemm_tiles_wgsl.ts productStorage; they decline what they do not), so their epilogues are theirs too.
  const core = productMatrix(fused);
  if ("declined" in core) return core;
  const plan = planEpilogue(fused, core);
  if ("declined" in plan) return plan;
  const slots = { lhs: core.lhs, rhs: core.rhs, out: plan.operandCount };
  const root = plan.graph.node(plan.root);
  if (root.op === "load" && root.attr === plan.operandCount) return { core, slots };
  try {
    const epilogue = renderEpilogue(plan, slots);
    // Rendered once here, so that an op without a WGSL form declines now rather than inside the GEMM's generator.
    epilogue.store({ value: "0.0", row: "0u", col: "0u", index: "0u" });
    return { core, epilogue, slots };
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: `epilogue of ${fused.name}: ${e.message}` };
    throw e;
  }
}
