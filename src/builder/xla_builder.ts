// XlaBuilder: builds a computation op by op, running shape inference on every op as it
// is added, so a mistake is reported where it is made. Ops are free functions (as in
// XLA's C++ API: `add(x, y)`, `reduce(b, ...)`) grouped by family in this folder;
// sub-computations (reducers, comparators, loop bodies, branches) are built with
// `builder.createSubBuilder(name)` and passed to the op that calls them.

import type { Computation, Instruction } from "../ir/computation.js";
import { InstructionFactory } from "../ir/factory.js";
import type { OpMetadata } from "../ir/attributes.js";
import type { OpAttributes, Opcode } from "../ir/opcodes.js";
import { ShapeError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { shapeToString, type ArrayShape, type Shape } from "../types/shape.js";

export class XlaOp {
  constructor(readonly builder: XlaBuilder, readonly instruction: Instruction) {}

  get shape(): Shape {
    return this.instruction.shape;
  }

  /** The array shape of this op; a ShapeError for tuples and tokens. */
  get arrayShape(): ArrayShape {
    const s = this.instruction.shape;
    if (s.kind !== "array") throw new ShapeError(`${this.instruction.name}: expected an array, got ${shapeToString(s)}`);
    return s;
  }

  toString(): string {
    return `${this.instruction.name}: ${shapeToString(this.shape)}`;
  }
}

export interface AddOptions {
  name?: string;
  metadata?: OpMetadata;
  frontendAttributes?: Readonly<Record<string, string>>;
}

export class XlaBuilder {
  private readonly factory: InstructionFactory;
  private readonly params = new Map<number, Instruction<"parameter">>();
  private subBuilderCount = 0;
  private built = false;

  constructor(readonly name: string) {
    this.factory = new InstructionFactory(name);
  }

  /** Adds an instruction after checking its operands and attributes with shape inference. */
  addInstruction<O extends Opcode>(opcode: O, operands: readonly XlaOp[], attrs: OpAttributes[O], options: AddOptions = {}): XlaOp {
    if (this.built) throw new ShapeError(`${this.name}: cannot add ops after build()`);
    for (const [i, o] of operands.entries()) {
      if (o.builder !== this) {
        throw new ShapeError(`${opcode}: operand ${i} (${o.instruction.name}) belongs to builder "${o.builder.name}", not "${this.name}"`);
      }
    }
    if (opcode === "parameter") {
      const number = (attrs as OpAttributes["parameter"]).number;
      if (this.params.has(number)) throw new ShapeError(`parameter: parameter number ${number} is already used in "${this.name}"`);
    }
    const inst = this.factory.add(opcode, operands.map((o) => o.instruction), attrs, options);
    if (opcode === "parameter") this.params.set((attrs as OpAttributes["parameter"]).number, inst as Instruction<"parameter">);
    return new XlaOp(this, inst);
  }

  /** A builder for a sub-computation (its name is derived from this builder's). */
  createSubBuilder(name: string): XlaBuilder {
    return new XlaBuilder(`${this.name}.${name}.${++this.subBuilderCount}`);
  }

  /** Finishes the computation; the root is `root` or else the last op added. */
  build(root?: XlaOp): Computation {
    const instructions = this.factory.created;
    if (instructions.length === 0) throw new ShapeError(`${this.name}: cannot build an empty computation`);
    if (root !== undefined && root.builder !== this) {
      throw new ShapeError(`${this.name}: root ${root.instruction.name} belongs to builder "${root.builder.name}"`);
    }
    for (let i = 0; i < this.params.size; i++) {
      if (!this.params.has(i)) throw new ShapeError(`${this.name}: parameter numbers must be 0..${this.params.size - 1}; ${i} is missing`);
    }
    this.built = true;
    return this.factory.finish(root?.instruction ?? instructions.at(-1)!);
  }
}

/** Parameter `number` of the computation, with the given shape. */
export function parameter(builder: XlaBuilder, number: number, shape: Shape, name?: string): XlaOp {
  return builder.addInstruction("parameter", [], { number, shape }, name !== undefined ? { name } : {});
}

/** A constant holding `literal`. */
export function constantLiteral(builder: XlaBuilder, literal: Literal): XlaOp {
  return builder.addInstruction("constant", [], { literal });
}
