// Instructions, computations and modules: the IR every front end produces (XlaBuilder,
// StableHLO text, HLO text) and every back end consumes (the interpreter, the runtime,
// later the compiler and the Shardy partitioner).

import { shapeToString, type Shape } from "../types/shape.js";
import { XlaError } from "../types/errors.js";
import type { NamedMesh, OpShardingRule, PropagationEdges, TensorSharding, TensorShardingPerValue } from "../sharding/model.js";
import type { OpMetadata } from "./attributes.js";
import { OP_TABLE, type OpAttributes, type Opcode } from "./opcodes.js";

export interface Instruction<O extends Opcode = Opcode> {
  /** Unique within its computation; also the order instructions were created in. */
  readonly id: number;
  /** Name used by the text formats (`add.3`, `%2`). */
  readonly name: string;
  readonly opcode: O;
  readonly operands: readonly Instruction[];
  readonly shape: Shape;
  readonly attrs: OpAttributes[O];
  readonly metadata?: OpMetadata;
  /** Free-form string attributes (XLA frontend_attributes; sdy dictionary entries with no typed field, as MLIR text). */
  readonly frontendAttributes?: Readonly<Record<string, string>>;
  /**
   * Attributes of an MLIR op named without a dialect that neither the op nor the IR
   * interprets (`{foo}`, `random_attr = "value"`: MLIR's discardable attributes), as
   * MLIR text by name, so the op prints back with them.
   */
  readonly unknownAttributes?: Readonly<Record<string, string>>;
  /** XLA's HloSharding in its HLO text form (`{devices=[2,1]0,1}`, `{replicated}`), kept verbatim. */
  readonly sharding?: string;
  /** Shardy's `sdy.sharding`: one sharding per result of the instruction. */
  readonly sdySharding?: TensorShardingPerValue;
  /** Shardy's `sdy.sharding_rule`: how the op's dimensions map to factors (set by -sdy-populate-op-sharding-rules or a user). */
  readonly sdyShardingRule?: OpShardingRule;
  /** Shardy's `sdy.propagation_edges`: which axes propagation moved across this op, step by step (debug output). */
  readonly sdyPropagationEdges?: PropagationEdges;
}

/**
 * An instruction of any opcode as a discriminated union: `switch (inst.opcode)` narrows
 * `inst.attrs` to that opcode's attributes. `Instruction` (with the default type
 * argument) does not correlate the two; `narrow` turns one into the other.
 */
export type AnyInstruction = { [O in Opcode]: Instruction<O> }[Opcode];

/** The same instruction, typed so that a switch on its opcode narrows its attributes. */
export function narrow(inst: Instruction): AnyInstruction {
  return inst as AnyInstruction;
}

/** Narrows an instruction to one opcode, so its attrs get their precise type. */
export function isOp<O extends Opcode>(inst: Instruction, opcode: O): inst is Instruction<O> {
  return inst.opcode === opcode;
}

export interface ProgramShape {
  readonly parameters: readonly Shape[];
  readonly result: Shape;
}

export class Computation {
  constructor(
    readonly name: string,
    /** Parameter instructions, indexed by parameter number. */
    readonly parameters: readonly Instruction<"parameter">[],
    /** Every instruction, operands before users (a valid evaluation order). */
    readonly instructions: readonly Instruction[],
    readonly root: Instruction,
  ) {}

  /** Text-format attributes of each parameter that the IR has no field for (`mhlo.*`, ...), kept verbatim by the StableHLO importer. */
  argAttributes?: readonly Readonly<Record<string, string>>[];
  /** Text-format attributes of each result (the root, or each element of a root tuple). */
  resultAttributes?: readonly Readonly<Record<string, string>>[];
  /** Shardy sharding of each parameter (`sdy.sharding` argument attribute); undefined where there is none. */
  argShardings?: readonly (TensorSharding | undefined)[];
  /** Shardy sharding of each result (the root, or each element of a root tuple). */
  resultShardings?: readonly (TensorSharding | undefined)[];
  /** StableHLO symbol visibility of the function this computation came from (`public`, `private`). */
  visibility?: string;
  /** Other attributes of the func.func this computation came from (`sdy.original_func_name = "f"`), kept as text. */
  attributes?: Readonly<Record<string, string>>;
  /** Attributes of that function's return op (`return {sdy.sharding = ...} %0`), kept as text. */
  returnAttributes?: Readonly<Record<string, string>>;

  get programShape(): ProgramShape {
    return { parameters: this.parameters.map((p) => p.shape), result: this.root.shape };
  }

  /** Computations this one calls directly (reducers, bodies, branches, ...), in first-use order. */
  calledComputations(): Computation[] {
    const seen = new Set<Computation>();
    for (const inst of this.instructions) for (const c of subcomputationsOf(inst)) seen.add(c);
    return [...seen];
  }

  toString(): string {
    const params = this.parameters.map((p) => shapeToString(p.shape)).join(", ");
    return `${this.name}(${params}) -> ${shapeToString(this.root.shape)}`;
  }
}

/**
 * `roots` and every computation they call, directly or not, each once, callees before
 * their callers (the one walk over the call graph; a recursive call, which the verifier
 * rejects, is cut rather than followed).
 */
export function calleesFirst(roots: readonly Computation[]): Computation[] {
  const ordered: Computation[] = [];
  const seen = new Set<Computation>();
  // Depth first with an explicit stack: call chains thousands deep must not overflow
  // the JavaScript stack.
  for (const root of roots) {
    if (seen.has(root)) continue;
    seen.add(root);
    const stack = [{ c: root, callees: root.calledComputations(), next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const callee = top.callees[top.next++];
      if (callee === undefined) {
        ordered.push(top.c);
        stack.pop();
      } else if (!seen.has(callee)) {
        seen.add(callee);
        stack.push({ c: callee, callees: callee.calledComputations(), next: 0 });
      }
    }
  }
  return ordered;
}

/**
 * The opcode of a reducer whose body is one commutative binary op of its two
 * parameters, in either order (`add(p0, p1)`, `maximum(p1, p0)`); undefined for any
 * other body. The one recognizer the fast paths share (collectives, compiled routines).
 */
export function binaryReducerOpcode(c: Computation): Opcode | undefined {
  const [p0, p1] = c.parameters;
  const root = c.root;
  if (c.parameters.length !== 2 || root.operands.length !== 2 || !OP_TABLE[root.opcode].commutative) return undefined;
  const [a, b] = root.operands;
  return (a === p0 && b === p1) || (a === p1 && b === p0) ? root.opcode : undefined;
}

/** Every computation an instruction refers to, read from its attributes. */
export function subcomputationsOf(inst: Instruction): Computation[] {
  const out: Computation[] = [];
  for (const value of Object.values(inst.attrs as Record<string, unknown>)) {
    if (value instanceof Computation) out.push(value);
    else if (Array.isArray(value)) for (const v of value) if (v instanceof Computation) out.push(v);
  }
  return out;
}

/**
 * What a module is compiled for (XLA's HloModuleConfig): the device grid and the
 * layouts the caller sees at the entry. The compiler reads it; passes carry it along.
 */
export interface ModuleConfig {
  readonly replicaCount: number;
  readonly partitionCount: number;
  /** Layout of each entry parameter as the caller passes it (default: the parameter shapes' own). */
  readonly entryParameterShapes?: readonly Shape[];
  /** Layout of the entry result as the caller receives it (default: the root shape's own). */
  readonly entryResultShape?: Shape;
  /**
   * XLA's input_output_alias: each entry puts the result's array at shape index `output`
   * in the buffer of parameter `parameter` at `parameterIndex` (same shape), which the
   * caller gives up (donates) to the execution.
   */
  readonly inputOutputAlias?: readonly InputOutputAlias[];
  /** XLA's buffer_donor: parameter buffers the caller gives up, for any result or temporary of the same size to reuse. */
  readonly bufferDonors?: readonly BufferDonor[];
}

export interface BufferDonor {
  readonly parameter: number;
  /** Shape index into the parameter (empty: all of it). */
  readonly parameterIndex: readonly number[];
}

export interface InputOutputAlias extends BufferDonor {
  /** Shape index into the result (empty: a non-tuple result). */
  readonly output: readonly number[];
  /** must-alias: compiling fails if the result cannot live there; may-alias: the compiler may decline. */
  readonly kind: "may-alias" | "must-alias";
}

export const DEFAULT_MODULE_CONFIG: ModuleConfig = { replicaCount: 1, partitionCount: 1 };

/** A module: an entry computation and every computation reachable from it. */
export class HloModule {
  /** All computations, callees before callers; the entry is last. */
  readonly computations: readonly Computation[];

  /** The module's functions in source order (StableHLO import); regions are not listed. */
  functions?: readonly Computation[];
  /** Shardy meshes (`sdy.mesh @name = <...>`), in source order. */
  meshes?: readonly NamedMesh[];
  /** Module-level attributes as text (`mhlo.num_partitions = 1 : i32`). */
  attributes?: Readonly<Record<string, string>>;
  /** Names of the meshes and functions in the order the text declared them (printing keeps it). */
  symbolOrder?: readonly string[];
  config: ModuleConfig = DEFAULT_MODULE_CONFIG;
  /** The text declared no function (a module of meshes only): the entry is an empty stand-in that printers leave out. */
  entryIsPlaceholder?: boolean;

  constructor(readonly name: string, readonly entry: Computation, extra: readonly Computation[] = []) {
    // Keep the entry last even if an extra computation calls it.
    this.computations = [...calleesFirst([...extra, entry]).filter((c) => c !== entry), entry];
  }

  getComputation(name: string): Computation | undefined {
    return this.computations.find((c) => c.name === name);
  }
}

/**
 * `program` as a module: a computation (what `XlaBuilder.build` returns) becomes a module
 * of it and its callees. Anything else is an XlaError naming `what` (JavaScript callers
 * have no type checker to stop them).
 */
export function asModule(program: HloModule | Computation, what: string): HloModule {
  if (program instanceof HloModule) return program;
  if (program instanceof Computation) return new HloModule(program.name, program);
  throw new XlaError(`${what}: expected an HloModule or a Computation (from XlaBuilder.build), got ${program === null ? "null" : typeof program}`);
}

/** Gives `to` the side data of `from` (everything but its computations): for passes that build a new module. */
export function copyModuleSideData(from: HloModule, to: HloModule): void {
  if (from.meshes !== undefined) to.meshes = from.meshes;
  if (from.attributes !== undefined) to.attributes = from.attributes;
  if (from.symbolOrder !== undefined) to.symbolOrder = from.symbolOrder;
  if (from.entryIsPlaceholder === true) to.entryIsPlaceholder = true;
  to.config = from.config;
}

/** Gives `to` the side data of `from` (its text attributes, shardings, visibility): for a rebuilt computation. */
export function copyComputationSideData(from: Computation, to: Computation): void {
  if (from.argAttributes !== undefined) to.argAttributes = from.argAttributes;
  if (from.resultAttributes !== undefined) to.resultAttributes = from.resultAttributes;
  if (from.argShardings !== undefined) to.argShardings = from.argShardings;
  if (from.resultShardings !== undefined) to.resultShardings = from.resultShardings;
  if (from.visibility !== undefined) to.visibility = from.visibility;
  if (from.attributes !== undefined) to.attributes = from.attributes;
  if (from.returnAttributes !== undefined) to.returnAttributes = from.returnAttributes;
}

export function opName(opcode: Opcode): string {
  return OP_TABLE[opcode].hlo;
}
