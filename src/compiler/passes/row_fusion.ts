// Row fusion: a fusion that reads an input fusion's reductions back along their rows
// absorbs it, when the backends run the result as one row pipeline (see
// kernel/schedule_reduce.ts). Softmax leaves the fusion pass as three fusions (the row
// max; exp(x - max) stored and summed; the divide), each a pass over all of memory;
// merged, they become one fusion whose kernel makes the three passes row by row, with
// the row in cache and the passes of neighbouring rows overlapped.
//
// Producer F is merged into consumer C when C reads F (or F's tuple elements) and
// nothing else does, and when the merged fusion lowers to a row pipeline the backend
// accepts (its LoweringCapabilities canLowerRowPipeline, else the CPU backends' rule,
// rowPipelineDeclined). Repeated until nothing merges, so a chain of any length becomes
// one fusion.

import type { Computation, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { liveInstructions, rebuild, withInstructions } from "../../ir/rewrite.js";
import { lowerFusion } from "../kernel/lower_fusion.js";
import { isRowPipeline, rowPipelineDeclined } from "../kernel/schedule_reduce.js";
import type { PassContext } from "../../passes/pass.js";
import type { LoweringCapabilities } from "../kernel/capabilities.js";

/** The fusion an operand is, directly or as one of its tuple elements. */
function producerOf(operand: Instruction): Instruction<"fusion"> | undefined {
  const p = operand.opcode === "getTupleElement" ? operand.operands[0]! : operand;
  return p.opcode === "fusion" ? (p as Instruction<"fusion">) : undefined;
}

/**
 * C's fused computation with F's inlined in front of it: F's parameters and C's other
 * operands become the merged fusion's parameters (one per distinct outer value).
 */
function merge(consumer: Instruction<"fusion">, producer: Instruction<"fusion">, operands: readonly Instruction[]): {
  computation: Computation; outer: Instruction[];
} {
  const cc = consumer.attrs.calledComputation;
  const fc = producer.attrs.calledComputation;
  const f = new InstructionFactory(cc.name);
  const outer: Instruction[] = [];
  const paramFor = new Map<Instruction, Instruction>();
  const parameter = (value: Instruction): Instruction => {
    let p = paramFor.get(value);
    if (p === undefined) {
      p = f.parameter(outer.length, value.shape, `param_${outer.length}`);
      paramFor.set(value, p);
      outer.push(value);
    }
    return p;
  };
  const inside = new Map<Instruction, Instruction>();
  const copyBody = (c: Computation, paramValue: (p: Instruction<"parameter">) => Instruction): void => {
    for (const inst of c.instructions) {
      const made = inst.opcode === "parameter" ? paramValue(inst as Instruction<"parameter">) : f.withOperands(inst, inst.operands.map((o) => inside.get(o)!));
      inside.set(inst, made);
    }
  };
  copyBody(fc, (p) => parameter(producer.operands[p.attrs.number]!));
  const producerRoot = inside.get(fc.root)!;
  copyBody(cc, (p) => {
    const value = operands[p.attrs.number]!;
    if (value === producer) return producerRoot;
    if (value.opcode === "getTupleElement" && value.operands[0] === producer) {
      return producerRoot.operands[(value as Instruction<"getTupleElement">).attrs.index]!;
    }
    return parameter(value);
  });
  // The producer's root tuple is read through its elements only: dropped with anything else dead.
  const merged = f.finish(inside.get(cc.root)!);
  return { computation: withInstructions(merged, liveInstructions(merged.instructions, merged.root), merged.root), outer };
}

/** One sweep: each fusion absorbs at most one producer. */
function fuseOnce(c: Computation, ctx: PassContext, passName: string, capabilities: LoweringCapabilities | undefined): Computation {
  const users = new Map<Instruction, Set<Instruction>>();
  for (const inst of c.instructions) for (const o of inst.operands) {
    let u = users.get(o);
    if (u === undefined) users.set(o, (u = new Set()));
    u.add(inst);
  }
  /** Whether everything that reads `producer` (through its tuple elements) is `consumer`. */
  const onlyReadBy = (producer: Instruction, consumer: Instruction): boolean => [...(users.get(producer) ?? [])].every((u) =>
    u === consumer || (u.opcode === "getTupleElement" && [...(users.get(u) ?? [])].every((v) => v === consumer)));
  const absorbed = new Set<Instruction>();
  return rebuild(c, (inst, operands, factory, rebuilt) => {
    if (inst.opcode !== "fusion" || (inst as Instruction<"fusion">).attrs.kind === "output") return undefined;
    const consumer = inst as Instruction<"fusion">;
    for (const o of consumer.operands) {
      const producer = producerOf(o);
      // A producer rebuilt in this sweep (it absorbed one of its own) waits for the next.
      if (producer === undefined || producer.attrs.kind !== "input" || absorbed.has(producer) || rebuilt(producer) !== producer) continue;
      if (c.root === producer) continue;
      if (!onlyReadBy(producer, consumer) || (o !== producer && c.root === o)) continue;
      const { computation, outer } = merge(consumer, producer, consumer.operands);
      const ir = lowerFusion(computation);
      if ("declined" in ir || !isRowPipeline(ir)) continue;
      const taken = capabilities?.canLowerRowPipeline !== undefined ? capabilities.canLowerRowPipeline(computation, ir) === true : rowPipelineDeclined(ir) === undefined;
      if (!taken) continue;
      absorbed.add(producer);
      ctx.log(passName, `row fusion: ${producer.name} into ${consumer.name} (one kernel, row by row)`);
      factory.releaseName(consumer.name);
      return factory.add("fusion", outer.map(rebuilt), { kind: "input", calledComputation: computation }, { from: consumer });
    }
    return undefined;
  });
}

/** Merges row pipelines in `c` that the target (`capabilities`) runs as one kernel until none is left to merge. */
export function fuseRows(c: Computation, ctx: PassContext, passName: string, capabilities?: LoweringCapabilities): Computation {
  for (;;) {
    const next = fuseOnce(c, ctx, passName, capabilities);
    if (next === c) return c;
    c = next;
  }
}
