// Decomposition: rewrites ops into the simpler ops they are compiled as, so later
// stages (fusion, kernels) only see those:
//  - batch-norm-training / -inference / -grad into elementwise ops, reduce and
//    broadcast, as XLA's BatchNormExpander does (two-pass variance, as the interpreter);
//    results round in the element type at each step where the interpreter's kernel
//    works in double, so they match it within float tolerance, not bit for bit;
//  - call and composite: the callee is inlined (XLA's CallInliner); for a composite the
//    decomposition is what runs, so it is what is inlined. Exact;
//  - map of an elementwise scalar computation: its ops on the whole arrays. Exact.
// Left alone: rng (stateful), complex-number ops, and everything a kernel runs as is.
// A batch-norm's tuple result becomes a tuple of its parts; simplify's
// get-tuple-element rule forwards the parts to their users.

import { CompileError } from "../../types/errors.js";
import { Computation, subcomputationsOf, type HloModule, type Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import type { ElementType } from "../../types/element_type.js";
import { Literal } from "../../types/literal.js";
import { scalarShape, type ArrayShape } from "../../types/shape.js";
import type { Pass } from "../../passes/pass.js";

type Of<O extends Instruction["opcode"]> = Instruction<O>;

/** Builds the pieces of one decomposition in one computation. */
class Expander {
  constructor(private readonly f: InstructionFactory, private readonly from: Instruction, private readonly newReducer: (t: ElementType) => Computation) {}

  private add<O extends Instruction["opcode"]>(opcode: O, operands: readonly Instruction[], attrs: Instruction<O>["attrs"]): Instruction {
    return this.f.add(opcode, operands, attrs, { from: this.from });
  }
  bin(opcode: "add" | "subtract" | "multiply" | "divide", a: Instruction, b: Instruction): Instruction {
    return this.add(opcode, [a, b], {});
  }
  sqrt(a: Instruction): Instruction {
    return this.add("sqrt", [a], {});
  }
  scalar(t: ElementType, v: number): Instruction {
    return this.f.constant(Literal.scalar(t, v), { from: this.from });
  }
  /** A [features] vector broadcast along `fi` of `shape`. */
  spread(v: Instruction, shape: ArrayShape, fi: number): Instruction {
    return this.add("broadcastInDim", [v], { dimensions: [...shape.dimensions], broadcastDimensions: [fi] });
  }
  /** A scalar broadcast to `dims`. */
  splat(s: Instruction, dims: readonly number[]): Instruction {
    return dims.length === 0 ? s : this.add("broadcastInDim", [s], { dimensions: [...dims], broadcastDimensions: [] });
  }
  /** Sum over every dimension but `fi`: a [features] vector. */
  sumPerFeature(x: Instruction, shape: ArrayShape, fi: number): Instruction {
    const t = shape.elementType;
    const dims = shape.dimensions.map((_, d) => d).filter((d) => d !== fi);
    return this.add("reduce", [x, this.scalar(t, 0)], { dimensions: dims, toApply: this.newReducer(t) });
  }
  tuple(parts: readonly Instruction[]): Instruction {
    return this.add("tuple", parts, {});
  }
}

function arrayShapeOf(inst: Instruction): ArrayShape {
  if (inst.shape.kind !== "array") throw new CompileError(`decompose: ${inst.name}: expected an array operand`);
  return inst.shape;
}

function batchNorm(inst: Instruction, operands: readonly Instruction[], e: Expander): Instruction | undefined {
  if (inst.opcode !== "batchNormTraining" && inst.opcode !== "batchNormInference" && inst.opcode !== "batchNormGrad") return undefined;
  const { epsilon, featureIndex: fi } = (inst as Of<"batchNormTraining">).attrs;
  const x = operands[0]!;
  const xs = arrayShapeOf(x);
  const t = xs.elementType;
  const features = xs.dimensions[fi]!;
  const count = features === 0 ? 0 : xs.dimensions.reduce((a, n) => a * n, 1) / features;
  const perFeature = (v: Instruction): Instruction => e.spread(v, xs, fi);
  const vec = (s: Instruction): Instruction => e.splat(s, [features]);
  const n = (): Instruction => vec(e.scalar(t, count));
  const eps = (): Instruction => vec(e.scalar(t, epsilon));
  switch (inst.opcode) {
    case "batchNormTraining": {
      const [, scale, offset] = operands as [Instruction, Instruction, Instruction];
      const mean = e.bin("divide", e.sumPerFeature(x, xs, fi), n());
      const centered = e.bin("subtract", x, perFeature(mean));
      const variance = e.bin("divide", e.sumPerFeature(e.bin("multiply", centered, centered), xs, fi), n());
      const std = e.sqrt(e.bin("add", variance, eps()));
      const y = e.bin("add", e.bin("divide", e.bin("multiply", perFeature(scale), centered), perFeature(std)), perFeature(offset));
      return e.tuple([y, mean, variance]);
    }
    case "batchNormInference": {
      const [, scale, offset, mean, variance] = operands as [Instruction, Instruction, Instruction, Instruction, Instruction];
      const centered = e.bin("subtract", x, perFeature(mean));
      const std = e.sqrt(e.bin("add", variance, eps()));
      return e.bin("add", e.bin("divide", e.bin("multiply", perFeature(scale), centered), perFeature(std)), perFeature(offset));
    }
    case "batchNormGrad": {
      const [, scale, mean, variance, dy] = operands as [Instruction, Instruction, Instruction, Instruction, Instruction];
      const centered = e.bin("subtract", x, perFeature(mean));
      const varEps = e.bin("add", variance, eps());
      const std = e.sqrt(varEps);
      const sumDy = e.sumPerFeature(dy, xs, fi);
      const sumDyXc = e.sumPerFeature(e.bin("multiply", dy, centered), xs, fi);
      const meanDy = e.bin("divide", sumDy, n());
      const meanDyXc = e.bin("divide", sumDyXc, n());
      const inner = e.bin("subtract", e.bin("subtract", dy, perFeature(meanDy)),
        e.bin("divide", e.bin("multiply", centered, perFeature(meanDyXc)), perFeature(varEps)));
      const gradX = e.bin("multiply", perFeature(e.bin("divide", scale, std)), inner);
      const gradScale = e.bin("divide", sumDyXc, std);
      return e.tuple([gradX, gradScale, sumDy]);
    }
  }
}

/** Rewrites one instruction (given its new operands) into `f`, or undefined to copy it as it is. */
type Expand = (inst: Instruction, operands: readonly Instruction[], f: InstructionFactory) => Instruction | undefined;

/**
 * The callee's instructions copied into the caller, its parameters bound to `operands`,
 * each passed through `expand` first (so the calls inside are inlined in turn); the copy
 * of its root.
 */
export function inline(callee: Computation, operands: readonly Instruction[], f: InstructionFactory, expand: Expand = () => undefined): Instruction {
  const map = new Map<Instruction, Instruction>();
  for (const inst of callee.instructions) {
    if (inst.opcode === "parameter") {
      map.set(inst, operands[(inst as Of<"parameter">).attrs.number]!);
      continue;
    }
    // Names, metadata and sharding come from the callee's instructions.
    const mapped = inst.operands.map((o) => map.get(o)!);
    map.set(inst, expand(inst as Instruction, mapped, f) ?? f.withOperands(inst as Instruction, mapped));
  }
  return map.get(callee.root)!;
}

/** Deepest chain of calls inlined; beyond it, a typed error rather than a stack overflow (the interpreter's limit too). */
const MAX_INLINE_DEPTH = 1000;

/**
 * The computations only `call` and `composite` instructions refer to (and that are not
 * the entry): they are inlined where they are called, from their own instructions.
 * Rewriting them on their own as well would copy each level of a call chain into every
 * level above it, quadratic in its depth.
 */
function onlyInlined(module: HloModule): Set<Computation> {
  const referencedOtherwise = new Set<Computation>([module.entry]);
  const inlinedSomewhere = new Set<Computation>();
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      const inlined = inst.opcode === "call" ? (inst as Of<"call">).attrs.toApply
        : inst.opcode === "composite" ? (inst as Of<"composite">).attrs.decomposition : undefined;
      for (const callee of subcomputationsOf(inst)) (callee === inlined ? inlinedSomewhere : referencedOtherwise).add(callee);
    }
  }
  return new Set([...inlinedSomewhere].filter((c) => !referencedOtherwise.has(c)));
}

/**
 * map(operands, f) where f is made of elementwise ops and scalar constants: the same ops
 * on the whole arrays (XLA's MapInliner), constants broadcast. Undefined when f holds
 * anything else.
 */
export function inlineMap(inst: Instruction<"map">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const callee = inst.attrs.toApply;
  if (inst.shape.kind !== "array") return undefined;
  const dims = [...inst.shape.dimensions];
  const ok = callee.instructions.every((i) => i.opcode === "parameter" || i.opcode === "constant" || OP_TABLE[i.opcode].elementwise);
  if (!ok) return undefined;
  const map = new Map<Instruction, Instruction>();
  for (const i of callee.instructions) {
    if (i.opcode === "parameter") map.set(i, operands[(i as Of<"parameter">).attrs.number]!);
    else if (i.opcode === "constant") {
      const c = f.constant((i as Of<"constant">).attrs.literal, { from: i });
      map.set(i, f.add("broadcastInDim", [c], { dimensions: dims, broadcastDimensions: [] }, { from: inst }));
    } else map.set(i, f.withOperands(i as Instruction, i.operands.map((o) => map.get(o)!)));
  }
  return map.get(callee.root)!;
}

export const decompose: Pass = {
  name: "decompose",
  run(module: HloModule, ctx) {
    const names = new Set(module.computations.map((c) => c.name));
    const reducers = new Map<ElementType, Computation>();
    const newReducer = (t: ElementType): Computation => {
      let r = reducers.get(t);
      if (r === undefined) {
        let name = `sum_${t}`;
        for (let k = 1; names.has(name); k++) name = `sum_${t}.${k}`;
        names.add(name);
        const f = new InstructionFactory(name);
        const a = f.parameter(0, scalarShape(t));
        const b = f.parameter(1, scalarShape(t));
        r = f.finish(f.add("add", [a, b], {}));
        reducers.set(t, r);
      }
      return r;
    };
    let count = 0;
    let depth = 0;
    const expand: Expand = (inst, operands, f) => {
      if (inst.opcode === "call" || inst.opcode === "composite") {
        count++;
        const callee = inst.opcode === "call" ? (inst as Of<"call">).attrs.toApply : (inst as Of<"composite">).attrs.decomposition;
        if (depth >= MAX_INLINE_DEPTH) throw new CompileError(`decompose: calls nest more than ${MAX_INLINE_DEPTH} deep (at ${inst.name}, calling ${callee.name})`);
        depth++;
        try {
          return inline(callee, operands, f, expand);
        } finally {
          depth--;
        }
      }
      if (inst.opcode === "map") {
        const inlined = inlineMap(inst as Of<"map">, operands, f);
        if (inlined !== undefined) count++;
        return inlined;
      }
      const made = batchNorm(inst, operands, new Expander(f, inst, newReducer));
      if (made !== undefined) count++;
      return made;
    };
    const inlinedOnly = onlyInlined(module);
    const out = mapComputations(module, (c) => (inlinedOnly.has(c) ? c : rebuild(c, expand)));
    if (count > 0) ctx.log("decompose", `decomposed ${count} instruction(s)`);
    return out;
  },
};
