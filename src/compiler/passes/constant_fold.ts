// Constant folding: an instruction whose operands are all constants becomes the constant
// the interpreter's kernel computes for it, so the folded program gives bit-identical
// results. Bounded so the program never grows: no result over MAX_FOLDED_ELEMENTS, no
// broadcast or iota (a splat or an iota is smaller than its literal), no tuples, and
// never anything whose value is not a function of its operands alone: side-effecting
// ops, rng, collectives, replica/partition ids, control flow (a while may not end).
// An elementwise op on splats (broadcasts of scalar constants) is folded on the scalars
// and broadcast again, whatever its size.

import { evaluate } from "../../interpreter/evaluate.js";
import { HostQueues, singleDeviceCollectives, type EvalContext, type Kernel } from "../../interpreter/context.js";
import { KERNELS } from "../../interpreter/kernels/index.js";
import { subcomputationsOf, type Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { hasSideEffect, mapComputations, rebuild } from "../../ir/rewrite.js";
import type { Literal } from "../../types/literal.js";
import { arrayShape, hasDefaultLayout, type ArrayShape } from "../../types/shape.js";
import type { Pass } from "../../passes/pass.js";

export const MAX_FOLDED_ELEMENTS = 1024;

const NEVER_FOLDED: ReadonlySet<Opcode> = new Set<Opcode>([
  "parameter", "constant", "iota", "broadcastInDim", "tuple", "rng", "rngBitGenerator", "while", "conditional", "call",
  "composite", "customCall", "fusion", "optimizationBarrier", "afterAll", "addDependency", "replicaId", "partitionId",
  "getDimensionSize", "setDimensionSize", "dynamicReshape",
]);

function pureOp(inst: Instruction): boolean {
  const info = OP_TABLE[inst.opcode];
  // sdy ops carry sharding decisions (and sdy.constant exists not to be folded): folding would drop them.
  return !NEVER_FOLDED.has(inst.opcode) && !hasSideEffect(inst) && info.family !== "collective" && info.family !== "transfer" &&
    info.family !== "random" && info.family !== "sdy";
}

/** Whether a computation (and what it calls) only computes: no state, no devices, no I/O. */
function pureComputation(c: Computation, seen = new Set<Computation>()): boolean {
  if (seen.has(c)) return true;
  seen.add(c);
  return c.instructions.every((i) => i.opcode === "parameter" || i.opcode === "constant" || i.opcode === "iota" ||
    i.opcode === "broadcastInDim" || i.opcode === "tuple" || pureOp(i)) &&
    c.calledComputations().every((callee) => pureComputation(callee, seen));
}

function foldable(inst: Instruction): boolean {
  return pureOp(inst) && subcomputationsOf(inst).every((c) => pureComputation(c));
}

function foldContext(): EvalContext {
  return {
    replicaId: 0, partitionId: 0, replicaCount: 1, partitionCount: 1, deviceId: 0,
    collectives: singleDeviceCollectives(0), host: new HostQueues(), customCalls: new Map(), rngSeed: 0n, accumulation: "xla-cpu",
    call: (c, args) => evaluate(c, args),
  };
}

/** The kernel's result for `inst` on these operand values, or undefined when the kernel refuses. */
function runKernel(inst: Instruction, values: readonly Literal[]): Literal | undefined {
  try {
    return (KERNELS[inst.opcode] as Kernel<Opcode>)(inst, values, foldContext());
  } catch {
    return undefined;
  }
}

const literalOf = (inst: Instruction): Literal | undefined =>
  inst.opcode === "constant" ? (inst as Instruction<"constant">).attrs.literal : undefined;

/** The scalar constant a splat broadcasts (or a scalar constant itself), or undefined. */
function splatScalar(inst: Instruction): Instruction<"constant"> | undefined {
  const c = inst.opcode === "broadcastInDim" ? inst.operands[0]! : inst;
  return c.opcode === "constant" && c.shape.kind === "array" && c.shape.dimensions.length === 0 ? c as Instruction<"constant"> : undefined;
}

function withLayoutOf(lit: Literal, shape: ArrayShape): Literal {
  return hasDefaultLayout(shape) ? lit.toDefaultLayout() : lit.relayout(shape.layout);
}

export const constantFold: Pass = {
  name: "constant-fold",
  run(module: HloModule, ctx) {
    let folded = 0;
    const out = mapComputations(module, (c) => rebuild(c, (inst, operands, f) => {
      if (!foldable(inst) || operands.length === 0 || inst.shape.kind !== "array") return undefined;
      const shape = inst.shape;
      const values = operands.map(literalOf);
      if (values.every((v): v is Literal => v !== undefined)) {
        if (shape.dimensions.reduce((a, n) => a * n, 1) > MAX_FOLDED_ELEMENTS) return undefined;
        const lit = runKernel({ ...inst, operands }, values);
        if (lit === undefined) return undefined;
        folded++;
        return f.constant(withLayoutOf(lit, shape), { from: inst });
      }
      // Elementwise on splats: fold the scalars, broadcast the result.
      if (!OP_TABLE[inst.opcode].elementwise || !operands.some((o) => o.opcode === "broadcastInDim")) return undefined;
      const scalars = operands.map(splatScalar);
      if (!scalars.every((s): s is Instruction<"constant"> => s !== undefined)) return undefined;
      const scalarInst = { ...inst, operands: scalars, shape: arrayShape(shape.elementType, []) } as Instruction;
      const lit = runKernel(scalarInst, scalars.map((s) => s.attrs.literal));
      if (lit === undefined) return undefined;
      folded++;
      const c0 = f.constant(lit, { from: inst });
      return f.add("broadcastInDim", [c0], { dimensions: [...shape.dimensions], broadcastDimensions: [] }, { from: inst });
    }));
    if (folded > 0) ctx.log("constant-fold", `folded ${folded} instruction(s)`);
    return out;
  },
};
