// XlaBuilder: builds a computation op by op, running shape inference on every op as it
// is added, so a mistake is reported where it is made. Ops are free functions (as in
// XLA's C++ API: `add(x, y)`, `reduce(b, ...)`) grouped by family in this folder;
// sub-computations (reducers, comparators, loop bodies, branches) are built with
// `builder.createSubBuilder(name)` and passed to the op that calls them.
//
// Shardy: `builder.mesh(name, axes)` declares a mesh (shared with the sub-builders),
// `parameter(b, n, shape, { sharding })` and `build(root, { resultShardings })` shard
// the arguments and results, src/builder/sdy.ts has the sdy ops, and `buildModule`
// gives the module (with its meshes) after the sdy verifier has passed it.

import { HloModule, type Computation, type Instruction } from "../ir/computation.js";
import { InstructionFactory } from "../ir/factory.js";
import type { OpMetadata } from "../ir/attributes.js";
import type { OpAttributes, Opcode } from "../ir/opcodes.js";
import { verifyModule } from "../ir/verify.js";
import { SdyVerifyError } from "../text/mlir/diagnostics.js";
import type { NamedMesh, TensorSharding } from "../sharding/model.js";
import type { BoundManualAxes } from "../sdy/verify_sharding.js";
import { verifySdy } from "../sdy/verify.js";
import { ShapeError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { shapeToString, withQuantization, type ArrayShape, type Shape } from "../types/shape.js";
import type { UniformQuantization } from "../types/quantization.js";
import { inferShape } from "../ir/shape/index.js";
import { checkSharding, namedMesh, type MeshAxesSpec, type ShardingSpec } from "./sharding_spec.js";

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
  /** StableHLO attributes no op of the IR interprets, as MLIR text by name (a custom call's `operand_layouts`, say): printed back verbatim. */
  unknownAttributes?: Readonly<Record<string, string>>;
  /**
   * The quantized type of the result, for ops that dequantize, compute and quantize
   * (add, dot, convolution, ...): its scales and zero points are the program's choice
   * (default: those of the first quantized operand). Checked against the spec's rules.
   */
  resultQuantization?: UniformQuantization;
}

export interface BuildOptions {
  /** Shardy sharding of each result (the root, or each element of a root tuple); undefined where there is none. */
  resultShardings?: readonly (ShardingSpec | undefined)[];
}

/** What a builder and its sub-builders share: the module's meshes. */
interface ModuleScope {
  readonly meshes: NamedMesh[];
}

export class XlaBuilder {
  private readonly factory: InstructionFactory;
  private readonly params = new Map<number, Instruction<"parameter">>();
  private readonly argShardings = new Map<number, TensorSharding>();
  private readonly scope: ModuleScope;
  /** Manual axes of the manual computations whose body this builder builds (each with its builder, for messages). */
  readonly boundManualAxes: BoundManualAxes;
  private subBuilderCount = 0;
  private built = false;

  constructor(readonly name: string, parent?: { scope: ModuleScope; boundManualAxes: BoundManualAxes }) {
    this.factory = new InstructionFactory(name);
    this.scope = parent?.scope ?? { meshes: [] };
    this.boundManualAxes = parent?.boundManualAxes ?? new Map();
  }

  /**
   * Declares the Shardy mesh `name` (`sdy.mesh @name = <["data"=2, "model"=2]>`) for
   * this builder, its sub-builders and the module; returns its name, for `sharding(...)`.
   */
  mesh(name: string, axes: MeshAxesSpec, deviceIds?: readonly number[]): string {
    if (this.scope.meshes.some((m) => m.name === name)) throw new ShapeError(`sdy.mesh @${name}: redefinition of symbol named '${name}'`, "sdy.mesh", name);
    this.scope.meshes.push(namedMesh(name, axes, deviceIds));
    return name;
  }

  /** The meshes declared so far, in order. */
  get meshes(): readonly NamedMesh[] {
    return this.scope.meshes;
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
    const { resultQuantization, ...extras } = options;
    let declared: Shape | undefined;
    if (resultQuantization !== undefined) {
      const inferred = inferShape(opcode, operands.map((o) => o.instruction.shape), attrs);
      if (inferred.kind !== "array") throw new ShapeError(`${opcode}: resultQuantization is given but the result ${shapeToString(inferred)} is not an array`);
      declared = withQuantization(inferred, resultQuantization);
    }
    const inst = this.factory.add(opcode, operands.map((o) => o.instruction), attrs, { ...extras, ...(declared !== undefined ? { declared } : {}) });
    if (opcode === "parameter") this.params.set((attrs as OpAttributes["parameter"]).number, inst as Instruction<"parameter">);
    return new XlaOp(this, inst);
  }

  /** A builder for a sub-computation (its name is derived from this builder's). */
  createSubBuilder(name: string, manualAxes: readonly string[] = []): XlaBuilder {
    const bound = new Map(this.boundManualAxes);
    for (const a of manualAxes) bound.set(a, this);
    return new XlaBuilder(`${this.name}.${name}.${++this.subBuilderCount}`, { scope: this.scope, boundManualAxes: bound });
  }

  /** Records the (checked) sharding of parameter `number`: its `sdy.sharding` argument attribute. */
  recordArgSharding(number: number, sharding: TensorSharding): void {
    this.argShardings.set(number, sharding);
  }

  /** Finishes the computation; the root is `root` or else the last op added. */
  build(root?: XlaOp, options: BuildOptions = {}): Computation {
    const instructions = this.factory.created;
    if (instructions.length === 0) throw new ShapeError(`${this.name}: cannot build an empty computation`);
    if (root !== undefined && root.builder !== this) {
      throw new ShapeError(`${this.name}: root ${root.instruction.name} belongs to builder "${root.builder.name}"`);
    }
    for (let i = 0; i < this.params.size; i++) {
      if (!this.params.has(i)) throw new ShapeError(`${this.name}: parameter numbers must be 0..${this.params.size - 1}; ${i} is missing`);
    }
    const rootInst = root?.instruction ?? instructions.at(-1)!;
    const resultShardings = options.resultShardings === undefined ? undefined : this.resultShardings(rootInst, options.resultShardings);
    this.built = true;
    const computation = this.factory.finish(rootInst);
    if (this.argShardings.size > 0) computation.argShardings = computation.parameters.map((p) => this.argShardings.get(p.attrs.number));
    if (resultShardings !== undefined) computation.resultShardings = resultShardings;
    return computation;
  }

  /**
   * Finishes the entry computation (see `build`) and makes it the module, with the
   * meshes declared on this builder; verifies it (the IR verifier, then Shardy's: a
   * SdyVerifyError in Shardy's words, as for a module parsed from text).
   */
  buildModule(root?: XlaOp, options: BuildOptions = {}): HloModule {
    const module = new HloModule(this.name, this.build(root, options));
    if (this.meshes.length > 0) module.meshes = [...this.meshes];
    verifyModule(module);
    const problems = verifySdy(module);
    if (problems.length > 0) throw new SdyVerifyError(problems);
    return module;
  }

  /** The results' shardings, each checked against its result. */
  private resultShardings(root: Instruction, specs: readonly (ShardingSpec | undefined)[]): (TensorSharding | undefined)[] {
    const results = root.opcode === "tuple" ? root.operands.map((o) => o.shape) : [root.shape];
    if (specs.length !== results.length) {
      throw new ShapeError(`${this.name}: resultShardings: ${specs.length} sharding(s) for ${results.length} result(s)`, "return", "resultShardings");
    }
    return specs.map((spec, i) => spec === undefined ? undefined
      : checkSharding(spec, results[i]!, this.meshes, this.boundManualAxes, { op: "return", argument: `result ${i} sharding` }).sharding);
  }
}

export interface ParameterOptions {
  name?: string;
  /** Its Shardy sharding (the argument's `sdy.sharding`). */
  sharding?: ShardingSpec;
}

/** Parameter `number` of the computation, with the given shape (and name, or options with a name and a sharding). */
export function parameter(builder: XlaBuilder, number: number, shape: Shape, nameOrOptions?: string | ParameterOptions): XlaOp {
  const options: ParameterOptions = typeof nameOrOptions === "string" ? { name: nameOrOptions } : nameOrOptions ?? {};
  const checked = options.sharding === undefined ? undefined
    : checkSharding(options.sharding, shape, builder.meshes, builder.boundManualAxes, { op: "parameter", argument: `sharding of parameter ${number}` });
  const op = builder.addInstruction("parameter", [], { number, shape }, options.name !== undefined ? { name: options.name } : {});
  if (checked !== undefined) builder.recordArgSharding(number, checked.sharding);
  return op;
}

/** A constant holding `literal`. */
export function constantLiteral(builder: XlaBuilder, literal: Literal): XlaOp {
  return builder.addInstruction("constant", [], { literal });
}
