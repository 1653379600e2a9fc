// The expansions: one table, keyed by opcode, of the ops that are rewritten into other
// ops before they are compiled or printed (XLA's expander passes, tinygrad's rewrite
// rules as data). Each row says who runs it:
//  - "compile": the compiler's decompose pass (compiler/passes/decompose.ts), so later
//    stages (fusion, kernels) only see simpler ops: batch norm (batch_norm.ts), call,
//    composite and map inlined (calls.ts), select between tuples as its leaves'
//    selects (select.ts), topK and the ApproxTopK custom call as a stable sort and
//    slices (top_k.ts), scaled dot as scaled operands and a dot (scaled_dot.ts);
//  - "lowerChlo": `xlats print --lower-chlo`, CHLO's elementary functions as StableHLO
//    (chlo.ts) for tools that do not know CHLO. They compute in the element type where
//    the interpreter's kernels compute in double, so compile keeps the ops (a compiled
//    program gives the interpreter's results; the target lowers them or they run on the
//    interpreter's kernels).
// The table is partial on purpose: every other op is compiled, or interpreted, as it
// is. `EXPANDED` is its coverage list, by who runs it; a row may still leave one
// instance alone (a map whose body is not elementwise, a CHLO op of complex numbers).

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import type { Opcode } from "../../ir/opcodes.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import type { ElementType } from "../../types/element_type.js";
import { scalarShape } from "../../types/shape.js";
import { expandBatchNorm } from "./batch_norm.js";
import { expandChlo } from "./chlo.js";
import { inlineCall, inlineMap, onlyInlined, type Expand, type InlineStack } from "./calls.js";
import { expandTupleSelect } from "./select.js";
import { expandScaledDot } from "./scaled_dot.js";
import { expandApproxTopK, expandTopK, topKComparatorBody } from "./top_k.js";

/** Who runs an expansion (see above). */
export type ExpansionUse = "compile" | "lowerChlo";

/** What an expansion may use besides its instruction's new operands and the factory of the computation being rebuilt. */
export interface ExpansionContext {
  /** The add reducer of an element type (one per type and module, made on first use). */
  sumReducer(t: ElementType): Computation;
  /** The comparator of a topK's sort (one per element type, direction and index type and module, made on first use). */
  topKComparator(t: ElementType, largest: boolean, indexType: ElementType): Computation;
  /** The key types the target's sort kernel compares (kernel/capabilities.ts sortKeyTypes): the topKs expanded. */
  readonly sortKeyTypes: ReadonlySet<ElementType>;
  /** Expands an instruction inside a callee being inlined (the table applied again). */
  readonly expand: Expand;
  readonly inlining: InlineStack;
}

export interface Expansion {
  readonly use: ExpansionUse;
  /** The replacement of `inst`, built in `f` from its new operands; undefined leaves this instance as it is. */
  readonly expand: (inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, cx: ExpansionContext) => Instruction | undefined;
}

const batchNorm: Expansion = { use: "compile", expand: (inst, operands, f, cx) => expandBatchNorm(inst, operands, f, (t) => cx.sumReducer(t)) };
const call: Expansion = {
  use: "compile",
  expand: (inst, operands, f, cx) => inlineCall(inst as Instruction<"call"> | Instruction<"composite">, operands, f, cx.expand, cx.inlining),
};
const chlo: Expansion = { use: "lowerChlo", expand: (inst, operands, f) => expandChlo(inst, operands, f) };

export const EXPANSIONS: Readonly<Partial<Record<Opcode, Expansion>>> = {
  batchNormTraining: batchNorm, batchNormInference: batchNorm, batchNormGrad: batchNorm,
  call, composite: call,
  map: { use: "compile", expand: (inst, operands, f) => inlineMap(inst as Instruction<"map">, operands, f) },
  scaledDot: { use: "compile", expand: (inst, operands, f) => expandScaledDot(inst as Instruction<"scaledDot">, operands, f) },
  topK: { use: "compile", expand: (inst, operands, f, cx) => expandTopK(inst as Instruction<"topK">, operands, f, (t, largest, i) => cx.topKComparator(t, largest, i), cx.sortKeyTypes) },
  // Only XLA's ApproxTopK among the custom calls.
  customCall: {
    use: "compile",
    expand: (inst, operands, f) => ((inst as Instruction<"customCall">).attrs.target === "ApproxTopK" ? expandApproxTopK(inst as Instruction<"customCall">, operands, f) : undefined),
  },
  // Array selects are left as they are (fusion's); only a select between tuples or tokens is expanded.
  select: { use: "compile", expand: (inst, operands, f) => expandTupleSelect(inst, operands, f) },
  acos: chlo, asin: chlo, atan: chlo, acosh: chlo, asinh: chlo, atanh: chlo, cosh: chlo, sinh: chlo, erfc: chlo, nextAfter: chlo,
};

const expandedBy = (use: ExpansionUse): readonly Opcode[] =>
  (Object.keys(EXPANSIONS) as Opcode[]).filter((o) => EXPANSIONS[o]!.use === use);

/**
 * Coverage: the opcodes the table expands, by who runs it. Left out on purpose: the
 * gamma family, erf_inv, bessel_i1e, polygamma and zeta (series and iterations with no
 * short StableHLO form), rng (stateful), complex-number ops, and every op a kernel or
 * the interpreter runs as it is.
 */
export const EXPANDED: Readonly<Record<ExpansionUse, readonly Opcode[]>> = { compile: expandedBy("compile"), lowerChlo: expandedBy("lowerChlo") };

/**
 * `module` with the expansions of `use` applied everywhere they apply, and how many
 * instructions were expanded; `sortKeyTypes`: the key types of the target's sort kernel
 * (a topK of another type is left as it is); `kept`: the instructions the target runs
 * as they are (its top-k kernel's: kernel/capabilities.ts topKKernel).
 */
export function expandModule(
  module: HloModule, use: ExpansionUse, sortKeyTypes: ReadonlySet<ElementType>, kept?: (inst: Instruction) => boolean,
): { module: HloModule; count: number } {
  const names = new Set(module.computations.map((c) => c.name));
  const made = new Map<string, Computation>();
  /** The computation named `base` (or base.k, a name the module does not use yet), built once per module. */
  const computation = (base: string, body: (f: InstructionFactory) => Instruction): Computation => {
    let c = made.get(base);
    if (c === undefined) {
      let name = base;
      for (let k = 1; names.has(name); k++) name = `${base}.${k}`;
      names.add(name);
      const f = new InstructionFactory(name);
      c = f.finish(body(f));
      made.set(base, c);
    }
    return c;
  };
  let count = 0;
  const cx: ExpansionContext = {
    sumReducer: (t) => computation(`sum_${t}`, (f) => f.add("add", [f.parameter(0, scalarShape(t)), f.parameter(1, scalarShape(t))], {})),
    topKComparator: (t, largest, indexType) =>
      computation(`top_k_${largest ? "greater" : "less"}_${t}_${indexType}`, (f) => topKComparatorBody(f, t, largest, indexType)),
    sortKeyTypes,
    expand: (inst, operands, f) => {
      const row = EXPANSIONS[inst.opcode];
      if (row === undefined || row.use !== use || kept?.(inst) === true) return undefined;
      const expanded = row.expand(inst, operands, f, cx);
      if (expanded !== undefined) count++;
      return expanded;
    },
    inlining: { depth: 0 },
  };
  // A computation that only the calls being inlined refer to is rewritten where it is inlined, not on its own as well.
  const inlinedOnly = EXPANSIONS.call?.use === use ? onlyInlined(module) : new Set<Computation>();
  const out = mapComputations(module, (c) => (inlinedOnly.has(c) ? c : rebuild(c, cx.expand)));
  return { module: out, count };
}

/** `xlats print --lower-chlo`: CHLO's elementary functions written as StableHLO. */
export function lowerChloModule(module: HloModule): HloModule {
  // Its expansions sort nothing.
  return expandModule(module, "lowerChlo", new Set()).module;
}
