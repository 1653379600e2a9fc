// A structured-clone-safe form of computations and literals, so a program can be sent
// to a device worker with postMessage (Node worker_threads or Web Workers). Instructions
// refer to their operands by index; attributes are walked generically, with literals
// and computations replaced by tagged records. Typed arrays, bigints and plain objects
// survive structured cloning as they are.

import { calleesFirst, Computation, type Instruction } from "../ir/computation.js";
import { InstructionFactory } from "../ir/factory.js";
import type { Opcode, OpAttributes } from "../ir/opcodes.js";
import type { OpMetadata } from "../ir/attributes.js";
import { ExecutionError } from "../types/errors.js";
import { Literal, type Storage } from "../types/literal.js";
import type { Shape } from "../types/shape.js";
import type { TensorShardingPerValue } from "../sharding/model.js";

export type SerializedLiteral =
  | { readonly kind: "array"; readonly shape: Shape; readonly data: Storage }
  | { readonly kind: "tuple"; readonly elements: readonly SerializedLiteral[] }
  | { readonly kind: "token" };

/** An attribute value: plain data, or a tagged literal / computation reference. */
export type SerializedValue =
  | null | boolean | number | string | bigint
  | readonly SerializedValue[]
  | { readonly $literal: SerializedLiteral }
  | { readonly $computation: number }
  | { readonly [field: string]: SerializedValue };

export interface SerializedInstruction {
  readonly name: string;
  readonly opcode: Opcode;
  /** Indices into the computation's instruction list. */
  readonly operands: readonly number[];
  readonly shape: Shape;
  readonly attrs: SerializedValue;
  readonly metadata?: OpMetadata;
  readonly frontendAttributes?: Readonly<Record<string, string>>;
  readonly sharding?: string;
  /** Shardy's sharding of each result: plain data, cloned as it is. */
  readonly sdySharding?: TensorShardingPerValue;
}

export interface SerializedComputation {
  readonly name: string;
  readonly instructions: readonly SerializedInstruction[];
  /** Index of the parameter instruction for each parameter number. */
  readonly parameters: readonly number[];
  readonly root: number;
}

/** Every computation a program uses, callees before callers; the entry is last. */
export interface SerializedProgram {
  readonly computations: readonly SerializedComputation[];
}

export function serializeLiteral(lit: Literal): SerializedLiteral {
  switch (lit.shape.kind) {
    case "array": return { kind: "array", shape: lit.shape, data: lit.data };
    case "tuple": return { kind: "tuple", elements: lit.elements.map(serializeLiteral) };
    case "token": return { kind: "token" };
  }
}

export function deserializeLiteral(s: SerializedLiteral): Literal {
  switch (s.kind) {
    case "array": return Literal.fromStorage(s.shape as Extract<Shape, { kind: "array" }>, s.data);
    case "tuple": return Literal.tuple(s.elements.map(deserializeLiteral));
    case "token": return Literal.token();
  }
}


export function serializeComputation(entry: Computation): SerializedProgram {
  const computations = calleesFirst([entry]);
  const index = new Map(computations.map((c, i) => [c, i]));
  const value = (v: unknown): SerializedValue => {
    if (v === null || v === undefined) return null;
    if (typeof v === "boolean" || typeof v === "number" || typeof v === "string" || typeof v === "bigint") return v;
    if (v instanceof Literal) return { $literal: serializeLiteral(v) };
    if (v instanceof Computation) return { $computation: index.get(v)! };
    if (Array.isArray(v)) return v.map(value);
    if (typeof v === "object") {
      const out: Record<string, SerializedValue> = {};
      for (const [k, field] of Object.entries(v)) if (field !== undefined) out[k] = value(field);
      return out;
    }
    throw new ExecutionError(`serialize: cannot send an attribute of type ${typeof v} to a device`);
  };
  return {
    computations: computations.map((c) => {
      const position = new Map(c.instructions.map((inst, i) => [inst, i]));
      return {
        name: c.name,
        parameters: c.parameters.map((p) => position.get(p)!),
        root: position.get(c.root)!,
        instructions: c.instructions.map((inst) => ({
          name: inst.name,
          opcode: inst.opcode,
          operands: inst.operands.map((o) => position.get(o)!),
          shape: inst.shape,
          attrs: value(inst.attrs),
          ...(inst.metadata ? { metadata: inst.metadata } : {}),
          ...(inst.frontendAttributes ? { frontendAttributes: inst.frontendAttributes } : {}),
          ...(inst.sharding !== undefined ? { sharding: inst.sharding } : {}),
          ...(inst.sdySharding !== undefined ? { sdySharding: inst.sdySharding } : {}),
        })),
      };
    }),
  };
}

function isRecord(v: SerializedValue): v is { readonly [field: string]: SerializedValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Rebuilds the entry computation (and its callees) of a serialized program. */
export function deserializeComputation(program: SerializedProgram): Computation {
  const built: Computation[] = [];
  const value = (v: SerializedValue): unknown => {
    if (Array.isArray(v)) return v.map(value);
    if (!isRecord(v)) return v;
    if ("$literal" in v) return deserializeLiteral((v as { $literal: SerializedLiteral }).$literal);
    if ("$computation" in v) {
      const c = built[(v as { $computation: number }).$computation];
      if (c === undefined) throw new ExecutionError("deserialize: a computation refers to one defined after it");
      return c;
    }
    const out: Record<string, unknown> = {};
    for (const [k, field] of Object.entries(v)) out[k] = value(field);
    return out;
  };
  for (const sc of program.computations) {
    // Shapes were inferred when the program was built; the worker takes them as they come.
    const factory = new InstructionFactory(sc.name);
    const instructions: Instruction[] = [];
    for (const si of sc.instructions) {
      instructions.push(factory.placeUnchecked(si.opcode, si.operands.map((k) => instructions[k]!), value(si.attrs) as OpAttributes[Opcode], si.shape, {
        name: si.name,
        ...(si.metadata ? { metadata: si.metadata } : {}),
        ...(si.frontendAttributes ? { frontendAttributes: si.frontendAttributes } : {}),
        ...(si.sharding !== undefined ? { sharding: si.sharding } : {}),
        ...(si.sdySharding !== undefined ? { sdySharding: si.sdySharding } : {}),
      }));
    }
    const parameters = sc.parameters.map((k) => instructions[k] as Instruction<"parameter">);
    built.push(new Computation(sc.name, parameters, instructions, instructions[sc.root]!));
  }
  const entry = built.at(-1);
  if (entry === undefined) throw new ExecutionError("deserialize: the program has no computations");
  return entry;
}

/**
 * One instruction as a program of its own: a computation whose parameters stand for its
 * operands (same shapes) and whose root is the instruction, with the computations it
 * calls. A compiled program's interpreted steps carry this instead of the live
 * instruction, so the program is plain data a device can load (the interpreter's
 * kernels read only the operands' shapes and values, never their producers).
 */
export function serializeInstruction(inst: Instruction): SerializedProgram {
  const factory = new InstructionFactory(inst.name);
  const parameters = inst.operands.map((o, i) => factory.parameter(i, o.shape));
  const alone = factory.placeUnchecked(inst.opcode, parameters, inst.attrs, inst.shape, { from: inst, name: inst.name });
  return serializeComputation(new Computation(inst.name, parameters, [...parameters, alone], alone));
}

/** The instruction serializeInstruction wrote (its operands are the parameters that stand for them). */
export function deserializeInstruction(program: SerializedProgram): Instruction {
  return deserializeComputation(program).root;
}
