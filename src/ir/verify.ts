// The IR verifier: checks that a computation (and every computation it calls) is well
// formed, whoever built it (XlaBuilder, a parser, a rewrite pass):
//  - every operand is an instruction of the same computation, defined before its use;
//  - parameters are numbered 0..N-1, one instruction each, all in the instruction list;
//  - instruction ids and names are unique; the root is one of the instructions;
//  - each instruction has its opcode's operand count and the shape that shape inference
//    (the same `inferShape` the builder uses) gives for its operands and attributes;
//  - sub-computations have the signature their op needs (reducers take scalars and
//    return their accumulators, comparators return pred[], loop conditions return
//    pred[], bodies and branches take and return the right shapes), and no computation
//    calls itself, directly or not;
//  - (verifyMemoryBudget, for programs about to run) every value fits the memory budget.
// Findings are VerifyErrors naming the computation and the instruction.

import { inferShape } from "./shape/index.js";
import { resolveDeclaredResult } from "./shape/quantized.js";
import { quantizationsEqual } from "../types/quantization.js";
import {
  expectComparator, expectReducer, expectScalarFunction,
} from "./shape/signature.js";
import { ShapeError, VerifyError } from "../types/errors.js";
import { shapesCompatible, shapeToString, type ArrayShape, type Shape } from "../types/shape.js";
import { checkFitsBudget } from "../types/resource.js";
import { sourceLocation } from "./locations.js";
import { isOp, subcomputationsOf, type Computation, type HloModule, type Instruction } from "./computation.js";
import { isOpcode, OP_TABLE, type Opcode } from "./opcodes.js";

function fail(c: Computation, inst: Instruction | undefined, message: string): never {
  const where = inst === undefined ? `computation ${c.name}` : `computation ${c.name}, instruction ${inst.name}`;
  throw new VerifyError(`${where}: ${message}`);
}

/** The array itself: its element type, quantization included, is what a sub-computation's scalars must have. */
function elementTypeOf(s: Shape | undefined): ArrayShape | undefined {
  return s !== undefined && s.kind === "array" ? s : undefined;
}

function elementTypes(shapes: readonly Shape[]): ArrayShape[] | undefined {
  const types = shapes.map(elementTypeOf);
  return types.every((t): t is ArrayShape => t !== undefined) ? types : undefined;
}

/**
 * Signatures of the sub-computations of ops outside control flow (reductions,
 * sorting, scatter, collectives). Control-flow ops check theirs in their shape rules.
 */
function checkSubcomputationSignatures(inst: Instruction): void {
  const shapes = inst.operands.map((o) => o.shape);
  const half = (xs: readonly Shape[]): Shape[] => xs.slice(xs.length / 2);
  let types: ArrayShape[] | undefined;
  if (isOp(inst, "reduce") || isOp(inst, "reduceWindow")) {
    // Operands: N inputs, then N init values; the reducer's accumulators have the init types.
    if ((types = elementTypes(half(shapes))) !== undefined) expectReducer(inst.opcode, "to_apply", inst.attrs.toApply, types);
  } else if (isOp(inst, "scatter")) {
    // Operands: N inputs, indices, N updates; the combiner works on the inputs' types.
    if ((types = elementTypes(shapes.slice(0, (shapes.length - 1) / 2))) !== undefined) {
      expectReducer("scatter", "update_computation", inst.attrs.toApply, types);
    }
  } else if (isOp(inst, "selectAndScatter")) {
    const t = elementTypeOf(shapes[0]);
    const s = elementTypeOf(shapes[1]);
    if (t !== undefined) expectComparator("selectAndScatter", "select", inst.attrs.select, [t]);
    if (s !== undefined) expectReducer("selectAndScatter", "scatter", inst.attrs.scatter, [s]);
  } else if (isOp(inst, "map")) {
    if ((types = elementTypes(shapes)) !== undefined) expectScalarFunction("map", "computation", inst.attrs.toApply, types);
  } else if (isOp(inst, "sort")) {
    if ((types = elementTypes(shapes)) !== undefined) expectComparator("sort", "comparator", inst.attrs.comparator, types);
  } else if (isOp(inst, "allReduce") || isOp(inst, "reduceScatter") || isOp(inst, "allReduceStart")) {
    // One binary reducer is applied to every operand (XLA's variadic all-reduce), so
    // it is checked when the operands share an element type.
    types = elementTypes(shapes);
    if (types !== undefined && types.length > 0 && types.every((t) => t.elementType === types![0]!.elementType && quantizationsEqual(t.quantization, types![0]!.quantization))) {
      expectReducer(inst.opcode, "computation", inst.attrs.toApply, [types[0]!]);
    }
  }
}

function verifyInstruction(c: Computation, inst: Instruction, defined: ReadonlySet<Instruction>): void {
  if (!isOpcode(inst.opcode)) fail(c, inst, `unknown opcode "${String(inst.opcode)}"`);
  inst.operands.forEach((o, i) => {
    if (!defined.has(o)) {
      fail(c, inst, c.instructions.includes(o)
        ? `operand ${i} (${o.name}) is used before it is defined`
        : `operand ${i} (${o.name}) does not belong to this computation`);
    }
  });
  const arity = OP_TABLE[inst.opcode as Opcode].arity;
  if (arity !== "variadic" && inst.operands.length !== arity) {
    fail(c, inst, `${OP_TABLE[inst.opcode].hlo} takes ${arity} operand(s), got ${inst.operands.length}`);
  }
  let inferred: Shape;
  try {
    inferred = inferShape(inst.opcode, inst.operands.map((o) => o.shape), inst.attrs);
    inferred = resolveDeclaredResult(inst.opcode, inst.operands.map((o) => o.shape), inst.attrs, inferred, inst.shape);
    checkSubcomputationSignatures(inst);
  } catch (e) {
    if (e instanceof ShapeError) fail(c, inst, e.message);
    throw e;
  }
  // A declared `?` dimension (MLIR text) may stand for a size inference knows, and the reverse.
  if (!shapesCompatible(inferred, inst.shape)) {
    fail(c, inst, `has shape ${shapeToString(inst.shape)}, but its operands and attributes give ${shapeToString(inferred)}`);
  }
}

function verifyOne(c: Computation): void {
  const params = c.parameters;
  params.forEach((p, i) => {
    if (p.opcode !== "parameter") fail(c, p, `parameter slot ${i} holds a ${p.opcode}, not a parameter`);
    if (p.attrs.number !== i) fail(c, p, `parameter in slot ${i} has number ${p.attrs.number}`);
    if (!c.instructions.includes(p)) fail(c, p, "parameter is missing from the instruction list");
  });
  const defined = new Set<Instruction>();
  const ids = new Set<number>();
  const names = new Set<string>();
  for (const inst of c.instructions) {
    if (defined.has(inst)) fail(c, inst, "appears twice in the instruction list");
    if (ids.has(inst.id)) fail(c, inst, `id ${inst.id} is used by another instruction`);
    if (names.has(inst.name)) fail(c, inst, "the name is used by another instruction");
    if (inst.opcode === "parameter" && !params.includes(inst as Instruction<"parameter">)) {
      fail(c, inst, `parameter ${(inst as Instruction<"parameter">).attrs.number} is not among the computation's parameters`);
    }
    verifyInstruction(c, inst, defined);
    defined.add(inst);
    ids.add(inst.id);
    names.add(inst.name);
  }
  if (!defined.has(c.root)) fail(c, undefined, `root ${c.root.name} is not one of its instructions`);
}

/** Verifies computations and their callees, each once, callees first. */
class Verifier {
  private readonly done = new Set<Computation>();
  private readonly active: Computation[] = [];

  visit(c: Computation): void {
    if (this.done.has(c)) return;
    if (this.active.includes(c)) {
      const cycle = [...this.active.slice(this.active.indexOf(c)), c].map((x) => x.name).join(" -> ");
      throw new VerifyError(`computation ${c.name} calls itself (${cycle}); recursion is not allowed`);
    }
    this.active.push(c);
    for (const inst of c.instructions) for (const callee of subcomputationsOf(inst)) this.visit(callee);
    this.active.pop();
    verifyOne(c);
    this.done.add(c);
  }
}

/** Verifies `computation` and every computation it calls; throws a VerifyError at the first problem. */
export function verifyComputation(computation: Computation): void {
  new Verifier().visit(computation);
}

/** Verifies every computation of a module (and that their names are unique). */
export function verifyModule(module: HloModule): void {
  const names = new Set<string>();
  for (const c of module.computations) {
    if (names.has(c.name)) throw new VerifyError(`module ${module.name}: two computations are named ${c.name}`);
    names.add(c.name);
  }
  const verifier = new Verifier();
  for (const c of module.computations) verifier.visit(c);
}

/**
 * Every value an instruction of the module produces fits the memory budget
 * (src/types/resource.ts), else a ResourceError naming it and its size. Separate from
 * verifyModule: a program that is only transformed (`xlats opt`) may name any size.
 */
export function verifyMemoryBudget(module: HloModule): void {
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      // Parameters come from the caller's literals, allocated (and checked) already.
      if (inst.opcode === "parameter") continue;
      const at = sourceLocation(inst);
      checkFitsBudget(inst.shape, inst.name, `computation ${c.name}, instruction ${inst.name}${at !== undefined ? ` (line ${at.line}, column ${at.column})` : ""}`);
    }
  }
}
