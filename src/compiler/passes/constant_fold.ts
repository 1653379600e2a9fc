// Constant folding: an instruction whose operands are all constants becomes the constant
// the interpreter's kernel computes for it, so the folded program gives bit-identical
// results. Bounded so the program never grows: no result over MAX_FOLDED_ELEMENTS, no
// broadcast or iota (a splat or an iota is smaller than its literal), no tuples, and
// never anything whose value is not a function of its operands alone: side-effecting
// ops, rng, collectives, replica/partition ids, control flow (a while may not end).
// An elementwise op on splats (broadcasts of scalar constants) is folded on the scalars
// and broadcast again, whatever its size. And a constant whose elements are all the same
// bits becomes a broadcast of its scalar, as XLA's simplifier does: fusion then computes
// it in registers instead of reading it from memory (a traced program's learning rate
// arrives as a dense f32[784,512] of 0.1).

import { evaluate } from "../../interpreter/evaluate.js";
import { HostQueues, singleDeviceCollectives, type EvalContext, type Kernel } from "../../interpreter/context.js";
import { KERNELS } from "../../interpreter/kernels/index.js";
import { subcomputationsOf, type Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { hasSideEffect, mapComputations, rebuild } from "../../ir/rewrite.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, elementCount, hasDefaultLayout, type ArrayShape } from "../../types/shape.js";
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

/** A constant's literal; a small splat's too (a broadcast scalar constant), which is how splat constants are kept. */
function literalOf(inst: Instruction): Literal | undefined {
  if (inst.opcode === "constant") return (inst as Instruction<"constant">).attrs.literal;
  const scalar = inst.opcode === "broadcastInDim" ? splatScalar(inst) : undefined;
  if (scalar === undefined || elementCount(inst.shape as ArrayShape) > MAX_FOLDED_ELEMENTS) return undefined;
  return runKernel(inst, [scalar.attrs.literal]);
}

/** The scalar constant a splat broadcasts (or a scalar constant itself), or undefined. */
function splatScalar(inst: Instruction): Instruction<"constant"> | undefined {
  const c = inst.opcode === "broadcastInDim" ? inst.operands[0]! : inst;
  return c.opcode === "constant" && c.shape.kind === "array" && c.shape.dimensions.length === 0 ? c as Instruction<"constant"> : undefined;
}

/** The one element (as a scalar literal) of a constant whose elements all have the same bits, or undefined. */
function splatOf(lit: Literal): Literal | undefined {
  const shape = lit.shape;
  if (shape.kind !== "array" || shape.dimensions.length === 0 || shape.quantization !== undefined || !hasDefaultLayout(shape)) return undefined;
  const pending = lit.splatElement();
  if (pending !== undefined) return Literal.fromStorage(arrayShape(shape.elementType, []), pending);
  const data = lit.data;
  const per = data.length / elementCount(shape);
  if (!(per >= 1) || !Number.isInteger(per)) return undefined;
  const elementBytes = data.BYTES_PER_ELEMENT * per;
  // Compared as bits (so -0 is not 0, and NaN payloads count), a word at a time where elements are whole words.
  const wide = elementBytes % 4 === 0 && data.byteOffset % 4 === 0;
  const words = wide
    ? new Uint32Array(data.buffer, data.byteOffset, data.byteLength / 4)
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const period = wide ? elementBytes / 4 : elementBytes;
  for (let i = period; i < words.length; i++) if (words[i] !== words[i % period]) return undefined;
  return Literal.fromStorage(arrayShape(shape.elementType, []), data.slice(0, per));
}

function withLayoutOf(lit: Literal, shape: ArrayShape): Literal {
  return hasDefaultLayout(shape) ? lit.toDefaultLayout() : lit.relayout(shape.layout);
}

export const constantFold: Pass = {
  name: "constant-fold",
  run(module: HloModule, ctx) {
    let folded = 0;
    const out = mapComputations(module, (c) => rebuild(c, (inst, operands, f) => {
      if (inst.opcode === "constant") {
        const element = inst.shape.kind === "array" && elementCount(inst.shape) > 1 ? splatOf((inst as Instruction<"constant">).attrs.literal) : undefined;
        if (element === undefined) return undefined;
        folded++;
        return f.add("broadcastInDim", [f.constant(element, { from: inst })], { dimensions: [...(inst.shape as ArrayShape).dimensions], broadcastDimensions: [] }, { from: inst });
      }
      if (!foldable(inst) || operands.length === 0 || inst.shape.kind !== "array") return undefined;
      const shape = inst.shape;
      const values = operands.map(literalOf);
      if (values.every((v): v is Literal => v !== undefined)) {
        if (elementCount(shape.dimensions) > MAX_FOLDED_ELEMENTS) return undefined;
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
