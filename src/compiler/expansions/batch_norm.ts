// Batch norm (training, inference, grad) as elementwise ops, reduce and broadcast, as
// XLA's BatchNormExpander does (two-pass variance, as the interpreter). Results round in
// the element type at each step where the interpreter's kernel works in double, so they
// match it within float tolerance, not bit for bit. A tuple result becomes a tuple of
// its parts; simplify's get-tuple-element rule forwards the parts to their users.

import { CompileError } from "../../types/errors.js";
import type { Computation, Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import type { ElementType } from "../../types/element_type.js";
import { Literal } from "../../types/literal.js";
import type { ArrayShape } from "../../types/shape.js";
import { elementCount } from "../../types/shape.js";

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

/** The expansion of a batch-norm op, given its new operands; `sumReducer` gives the add reducer of an element type. */
export function expandBatchNorm(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, sumReducer: (t: ElementType) => Computation): Instruction | undefined {
  return batchNorm(inst, operands, new Expander(f, inst, sumReducer));
}

function batchNorm(inst: Instruction, operands: readonly Instruction[], e: Expander): Instruction | undefined {
  if (inst.opcode !== "batchNormTraining" && inst.opcode !== "batchNormInference" && inst.opcode !== "batchNormGrad") return undefined;
  const { epsilon, featureIndex: fi } = (inst as Of<"batchNormTraining">).attrs;
  const x = operands[0]!;
  const xs = arrayShapeOf(x);
  const t = xs.elementType;
  const features = xs.dimensions[fi]!;
  const count = features === 0 ? 0 : elementCount(xs.dimensions) / features;
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

