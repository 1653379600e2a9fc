// The one way instructions are made: every producer of IR (XlaBuilder, both parsers,
// the runtime's deserializer, every compiler pass) creates instructions through an
// InstructionFactory, which gives each a fresh id and a name unique in its
// computation, runs the shared shape inference, and carries an instruction's metadata,
// frontend and unknown attributes and shardings (XLA's and Shardy's; a sharding rule only when the
// replacement is the same op on the same shapes) over to the instruction that replaces
// it, with its source location.

import { inferShape } from "./shape/index.js";
import { resolveDeclaredResult } from "./shape/quantized.js";
import { ShapeError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { shapesEqual, shapeToString, type Shape } from "../types/shape.js";
import type { OpMetadata } from "./attributes.js";
import { setSourceLocation, sourceLocation } from "./locations.js";
import { Computation, type Instruction } from "./computation.js";
import type { OpAttributes, Opcode } from "./opcodes.js";
import type { OpShardingRule, TensorShardingPerValue } from "../sharding/model.js";

export interface InstructionExtras {
  /** Base of the name (made unique with a `.N` suffix); default: `from`'s name, else `<opcode>.<id>`. */
  readonly name?: string;
  readonly metadata?: OpMetadata;
  readonly frontendAttributes?: Readonly<Record<string, string>>;
  readonly unknownAttributes?: Readonly<Record<string, string>>;
  readonly sharding?: string;
  /** Shardy's sharding of each result (`sdy.sharding`). */
  readonly sdySharding?: TensorShardingPerValue;
  /** Shardy's sharding rule of the op (`sdy.sharding_rule`). */
  readonly sdyShardingRule?: OpShardingRule;
  /** The instruction this one replaces or derives from: its name, metadata, attributes and shardings carry over unless given. */
  readonly from?: Instruction;
  /** The shape the source declares; it must equal the inferred one. */
  readonly declared?: Shape;
}

export interface FactoryOptions {
  /** Names already taken in the computation (instructions kept from an earlier version). */
  readonly reserveNames?: Iterable<string>;
  /** The first id to hand out (above every id already used in the computation). */
  readonly firstId?: number;
}

export class InstructionFactory {
  private nextId: number;
  private readonly names: Set<string>;
  /** Every instruction made here, in creation order (operands before users). */
  readonly created: Instruction[] = [];

  constructor(readonly computationName: string, options: FactoryOptions = {}) {
    this.nextId = options.firstId ?? 0;
    this.names = new Set(options.reserveNames ?? []);
  }

  /** A new instruction; its shape comes from shape inference. */
  add<O extends Opcode>(opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], extras: InstructionExtras = {}): Instruction<O> {
    const operandShapes = operands.map((o) => o.shape);
    let shape = inferShape(opcode, operandShapes, attrs);
    // A quantized result's parameters are the program's: the declared type's, or (a
    // rewrite of an instruction) the replaced instruction's, when the op lets them differ.
    const declaredOrKept = extras.declared ?? (extras.from?.opcode === opcode ? extras.from.shape : undefined);
    if (declaredOrKept !== undefined) shape = resolveDeclaredResult(opcode, operandShapes, attrs, shape, declaredOrKept);
    if (extras.declared !== undefined && !shapesEqual(shape, extras.declared)) {
      throw new ShapeError(`${opcode}: declared shape ${shapeToString(extras.declared)} does not match the inferred ${shapeToString(shape)}`);
    }
    return this.place(opcode, operands, attrs, shape, extras);
  }

  /** `inst` with other operands (and a re-inferred shape), keeping its name when it is free. */
  withOperands<O extends Opcode>(inst: Instruction<O>, operands: readonly Instruction[]): Instruction<O> {
    return this.add(inst.opcode, operands, inst.attrs, { from: inst });
  }

  /** `inst` with other attributes, keeping its operands. */
  withAttrs<O extends Opcode>(inst: Instruction<O>, operands: readonly Instruction[], attrs: OpAttributes[O]): Instruction<O> {
    return this.add(inst.opcode, operands, attrs, { from: inst });
  }

  parameter(number: number, shape: Shape, name?: string): Instruction<"parameter"> {
    return this.add("parameter", [], { number, shape }, name === undefined ? {} : { name });
  }

  constant(literal: Literal, extras: InstructionExtras = {}): Instruction<"constant"> {
    return this.add("constant", [], { literal }, extras);
  }

  /**
   * Records an instruction whose shape the caller vouches for, without shape inference:
   * for the few importers that accept ops before a shape rule exists, and for the
   * deserializer, whose input was inferred when it was first built.
   */
  placeUnchecked<O extends Opcode>(opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], shape: Shape, extras: InstructionExtras = {}): Instruction<O> {
    return this.place(opcode, operands, attrs, shape, extras);
  }

  /** A computation of every instruction made here, with the parameters made here (by number). */
  finish(root: Instruction, name = this.computationName): Computation {
    const params = this.created.filter((i): i is Instruction<"parameter"> => i.opcode === "parameter");
    params.sort((a, b) => a.attrs.number - b.attrs.number);
    return new Computation(name, params, [...this.created], root);
  }

  /** Takes the instructions made since the last call (for sweeps that interleave kept and new instructions). */
  drain(): Instruction[] {
    return this.created.splice(0, this.created.length);
  }

  private place<O extends Opcode>(opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], shape: Shape, extras: InstructionExtras): Instruction<O> {
    const from = extras.from;
    const id = this.nextId++;
    const metadata = extras.metadata ?? from?.metadata;
    const frontendAttributes = extras.frontendAttributes ?? from?.frontendAttributes;
    const unknownAttributes = extras.unknownAttributes ?? from?.unknownAttributes;
    const sharding = extras.sharding ?? from?.sharding;
    const sdySharding = extras.sdySharding ?? from?.sdySharding;
    // A rule maps the dimensions of one op's operands and results to factors: it carries
    // over only to the same op on operands and results of the same shapes.
    const sameSignature = from !== undefined && from.opcode === opcode && shapesEqual(from.shape, shape) &&
      from.operands.length === operands.length && from.operands.every((o, i) => shapesEqual(o.shape, operands[i]!.shape));
    const sdyShardingRule = extras.sdyShardingRule ?? (sameSignature ? from.sdyShardingRule : undefined);
    const inst: Instruction<O> = {
      id,
      name: this.uniqueName(extras.name ?? from?.name ?? `${opcode}.${id}`),
      opcode,
      operands: [...operands],
      shape,
      attrs,
      ...(metadata !== undefined ? { metadata } : {}),
      ...(frontendAttributes !== undefined ? { frontendAttributes } : {}),
      ...(unknownAttributes !== undefined ? { unknownAttributes } : {}),
      ...(sharding !== undefined ? { sharding } : {}),
      ...(sdySharding !== undefined ? { sdySharding } : {}),
      ...(sdyShardingRule !== undefined ? { sdyShardingRule } : {}),
    };
    const location = from === undefined ? undefined : sourceLocation(from);
    if (location !== undefined) setSourceLocation(inst, location);
    this.created.push(inst);
    return inst;
  }

  /** Reserves and returns `base`, or `base.N` for the first N that is free. */
  uniqueName(base: string): string {
    if (!this.names.has(base)) {
      this.names.add(base);
      return base;
    }
    // Start past the suffixes known taken: thousands of values of one name stay linear.
    let k = this.nextSuffix.get(base) ?? 1;
    while (this.names.has(`${base}.${k}`)) k++;
    this.nextSuffix.set(base, k + 1);
    const name = `${base}.${k}`;
    this.names.add(name);
    return name;
  }

  /** For each base name, a suffix below which every `base.N` is taken (forgotten when a name is given back). */
  private readonly nextSuffix = new Map<string, number>();

  /** Gives a name back (its instruction was replaced), so a copy may keep it. */
  releaseName(name: string): void {
    this.names.delete(name);
    this.nextSuffix.clear();
  }
}
