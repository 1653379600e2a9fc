// Shape refinement, as StableHLO's `stablehlo-refine-shapes` does it: given the shapes
// of the entry's arguments (by default the declared ones), propagate static shapes
// through the program. Every instruction's result type is inferred again from its
// refined operands (and must stay compatible with the declared one); shape
// computations on constants fold (get_dimension_size of a static dimension, then the
// integer arithmetic, reshapes and concatenations JAX builds shape vectors with); a
// shape-polymorphic op whose shape operands became constants turns into its static op;
// JAX's `shape_assertion` custom calls are checked and dropped; a while loop's regions
// are refined for its operands (loop-invariant carried constants known inside), and a
// carried shape that changes across iterations is a RefineError; a called function is
// refined for its call's operand shapes, with the arguments JAX marks
// `jax.global_constant` (dimension variables) replaced by their values. The result is a
// static program whenever the argument shapes determine every size.

import { createEvalContext } from "../interpreter/evaluate.js";
import { KERNELS } from "../interpreter/kernels/index.js";
import type { Kernel } from "../interpreter/context.js";
import { isInteger, isPred } from "../types/element_type.js";
import { ShapeError, XlaError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { elementCount, shapesCompatible, shapesEqual, shapeToString, tupleShape, UNBOUNDED_SIZE, type Shape } from "../types/shape.js";
import {
  calleesFirst, Computation, copyComputationSideData, copyModuleSideData, HloModule, subcomputationsOf, type Instruction,
} from "../ir/computation.js";
import {
  DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND, dynamicCustomCallStaticForm, isDynamicCustomCall, isDynamicOpcode, SHAPE_OPERANDS, shapeValuesToNumbers, staticForm,
} from "../ir/dynamic_ops.js";
import { InstructionFactory } from "../ir/factory.js";
import { sourceLocation } from "../ir/locations.js";
import { OP_TABLE, type Opcode } from "../ir/opcodes.js";
import { hasSideEffect, liveInstructions } from "../ir/rewrite.js";
import { makeWindow } from "../ir/shape/window.js";
import { appendAll } from "../types/arrays.js";

/** A program whose shapes contradict the arguments given, or a failed `shape_assertion`. */
export class RefineError extends XlaError {
  override name = "RefineError";
}

/** Shape computations fold only while small: a shape vector has one entry per dimension. */
const MAX_FOLDED_ELEMENTS = 64;

/** The argument attribute by which JAX marks a dimension variable passed as a value. */
const GLOBAL_CONSTANT = "jax.global_constant";

/**
 * The module refined for entry arguments of shapes `argumentShapes` (each compatible
 * with the declared parameter type; default: the declared types). `argumentValues`,
 * when the arguments themselves are known (a run), also specializes the program for
 * the small integer ones: older JAX exports pass dimension sizes as arguments.
 */
export function refineShapes(module: HloModule, argumentShapes?: readonly Shape[], argumentValues: readonly Literal[] = []): HloModule {
  const entry = module.entry;
  const shapes = argumentShapes ?? entry.parameters.map((p) => p.shape);
  if (shapes.length !== entry.parameters.length) {
    throw new RefineError(`refine-shapes: @${entry.name} takes ${entry.parameters.length} argument(s), got ${shapes.length} shape(s)`);
  }
  const refiner = new Refiner();
  const refinedEntry = refiner.computation(entry, shapes, shapes.map((_, i) => shapeValue(argumentValues[i], false)));
  // Each function as refined for its calls (the first specialization keeps its name).
  const renamed = new Map<Computation, Computation>();
  const extra: Computation[] = [];
  for (const [original, versions] of refiner.specializations) {
    renamed.set(original, versions[0]!);
    appendAll(extra, versions);
  }
  const out = new HloModule(module.name, refinedEntry, extra);
  if (module.functions !== undefined) {
    const functions: Computation[] = [];
    for (const f of module.functions) {
      if (f === entry) functions.push(refinedEntry);
      else appendAll(functions, (refiner.specializations.get(f) ?? (refiner.called.has(f) ? [] : [f])));
    }
    out.functions = functions;
  }
  copyModuleSideData(module, out);
  if (module.symbolOrder !== undefined) {
    const names = new Set(out.functions?.map((f) => f.name) ?? []);
    const meshes = new Set(module.meshes?.map((m) => m.name) ?? []);
    const kept = module.symbolOrder.filter((n) => names.has(n) || meshes.has(n));
    for (const f of out.functions ?? []) if (!kept.includes(f.name)) kept.push(f.name);
    out.symbolOrder = kept;
  }
  return out;
}

/** Whether shape `s` (or an element of a tuple) has a dynamic dimension. */
export function hasDynamicDimension(s: Shape): boolean {
  return s.kind === "array" ? s.dynamicDimensions.some((d) => d) : s.kind === "tuple" && s.elements.some(hasDynamicDimension);
}

/** Whether anything `entry` runs has a dynamic dimension or a shape-polymorphic op: what refinement is for. */
export function hasDynamicShapes(entry: Computation): boolean {
  return calleesFirst([entry]).some((c) => c.instructions.some((i) => hasDynamicDimension(i.shape) || isDynamicOpcode(i.opcode)));
}

/**
 * `entry` refined for arguments of these shapes (its callees specialized): what `xlats
 * run` and `xlats test` run, so every backend sees a static program. `entry` itself
 * when nothing in it is dynamic.
 */
export function refineEntry(entry: Computation, argumentShapes: readonly Shape[], argumentValues: readonly Literal[] = []): Computation {
  if (!hasDynamicShapes(entry)) return entry;
  return refineShapes(new HloModule(entry.name, entry), argumentShapes, argumentValues).entry;
}

/**
 * A value refinement may use: a small integer or boolean array (a dimension size or a
 * shape vector), or any value of an argument JAX marks as a dimension variable.
 */
function shapeValue(lit: Literal | undefined, isDimensionVariable: boolean): Literal | undefined {
  if (lit === undefined || lit.shape.kind !== "array") return undefined;
  const small = (isInteger(lit.elementType) || isPred(lit.elementType)) && elementCount(lit.arrayShape) <= MAX_FOLDED_ELEMENTS;
  return small || isDimensionVariable ? lit : undefined;
}

function where(inst: Instruction): string {
  const at = sourceLocation(inst);
  return at === undefined ? inst.name : `${OP_TABLE[inst.opcode].stablehlo ?? inst.opcode} at ${at.line}:${at.column}`;
}

function constantOf(inst: Instruction): Literal | undefined {
  return inst.opcode === "constant" ? (inst as Instruction<"constant">).attrs.literal : undefined;
}

/** A pure op with no regions whose small integer result can be folded (shape arithmetic). */
function foldsAsShapeComputation(inst: Instruction): boolean {
  const info = OP_TABLE[inst.opcode];
  if (inst.opcode === "constant" || inst.opcode === "parameter" || hasSideEffect(inst) || subcomputationsOf(inst).length > 0) return false;
  if (["random", "collective", "transfer", "sdy", "control"].includes(info.family)) return false;
  const s = inst.shape;
  return s.kind === "array" && (isInteger(s.elementType) || isPred(s.elementType)) && s.quantization === undefined &&
    !s.dimensions.includes(UNBOUNDED_SIZE) && !s.dynamicDimensions.some((d) => d) && elementCount(s) <= MAX_FOLDED_ELEMENTS &&
    inst.operands.every((o) => o.opcode === "constant");
}

/** `shape_assertion`'s message with `{i}` replaced by the value of operand i+1, as JAX formats it. */
function assertionMessage(inst: Instruction<"customCall">, operands: readonly Instruction[]): string {
  // The importer keeps the op's attributes as MLIR text: error_message is a quoted string.
  const quoted = inst.unknownAttributes?.["error_message"];
  const text = quoted === undefined ? "shape assertion failed" : quoted.replace(/^"|"$/g, "").replace(/\\"/g, "\"");
  return text.replace(/\{([0-9]+)\}/g, (whole, i: string) => {
    const lit = operands[Number(i) + 1] === undefined ? undefined : constantOf(operands[Number(i) + 1]!);
    return lit === undefined ? whole : String(lit.values()[0]);
  });
}

class Refiner {
  /** Each function refined for some call, by the original: one version per distinct signature. */
  readonly specializations = new Map<Computation, Computation[]>();
  /** Functions that calls reached (the originals, replaced by their specializations). */
  readonly called = new Set<Computation>();
  private readonly byKey = new Map<string, Computation>();
  private readonly active = new Set<Computation>();

  /** `c` for parameters of `shapes`; a parameter with a known value (`constants[i]`) is used as that constant. */
  computation(
    c: Computation, shapes: readonly Shape[], constants: readonly (Literal | undefined)[], name = c.name,
    elementConstants: readonly (Literal | undefined)[] = [],
  ): Computation {
    if (this.active.has(c)) throw new RefineError(`refine-shapes: @${c.name} calls itself`);
    this.active.add(c);
    try {
      return this.sweep(c, shapes, constants, name, elementConstants);
    } finally {
      this.active.delete(c);
    }
  }

  /** `elementConstants[i]`: the known value of element i of a tuple parameter 0 (a loop's invariant state). */
  private sweep(
    c: Computation, shapes: readonly Shape[], constants: readonly (Literal | undefined)[], name: string,
    elementConstants: readonly (Literal | undefined)[],
  ): Computation {
    const f = new InstructionFactory(name);
    const mapped = new Map<Instruction, Instruction>();
    const dropped = new Set<Instruction>();
    const params: Instruction<"parameter">[] = [];
    for (const inst of c.instructions) {
      if (inst.opcode === "parameter") {
        const p = inst as Instruction<"parameter">;
        const shape = shapes[p.attrs.number]!;
        if (!shapesCompatible(shape, p.shape)) {
          throw new RefineError(`refine-shapes: argument ${p.attrs.number} of @${c.name} has shape ${shapeToString(shape)}, not compatible with the declared ${shapeToString(p.shape)}`);
        }
        const param = f.add("parameter", [], { number: p.attrs.number, shape }, { from: p });
        params.push(param);
        const known = constants[p.attrs.number];
        mapped.set(inst, known === undefined ? param : f.constant(known, { name: `${p.name}.value` }));
        continue;
      }
      if (inst.opcode === "getTupleElement" && inst.operands[0]!.opcode === "parameter" &&
        (inst.operands[0] as Instruction<"parameter">).attrs.number === 0) {
        const value = elementConstants[(inst as Instruction<"getTupleElement">).attrs.index];
        if (value !== undefined) {
          mapped.set(inst, f.constant(value, { from: inst }));
          continue;
        }
      }
      const operands = inst.operands.map((o) => {
        const m = mapped.get(o);
        if (m === undefined) throw new RefineError(`refine-shapes: ${where(inst)} uses the result of a dropped shape assertion`);
        return m;
      });
      const out = this.refineInstruction(inst, operands, f);
      if (out === undefined) dropped.add(inst);
      else mapped.set(inst, out);
    }
    const root = mapped.get(c.root);
    if (root === undefined) throw new RefineError(`refine-shapes: the result of @${c.name} is a dropped shape assertion`);
    params.sort((a, b) => a.attrs.number - b.attrs.number);
    const out = new Computation(name, params, liveInstructions(f.created, root), root);
    copyComputationSideData(c, out);
    return out;
  }

  /** The refined instruction; undefined for a shape assertion that holds (it goes away). */
  private refineInstruction(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
    if (inst.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.target === "shape_assertion" && operands[0] !== undefined) {
      const holds = constantOf(operands[0]);
      if (holds !== undefined) {
        if (holds.values()[0] !== true) throw new RefineError(`refine-shapes: ${where(inst)}: ${assertionMessage(inst as Instruction<"customCall">, operands)}`);
        return undefined;
      }
    }
    let out: Instruction;
    try {
      out = this.rewrite(inst, operands, f);
    } catch (e) {
      if (e instanceof ShapeError) throw new RefineError(`refine-shapes: ${where(inst)}: ${e.message}`);
      throw e;
    }
    if (!shapesCompatible(out.shape, inst.shape)) {
      throw new RefineError(`refine-shapes: ${where(inst)}: the refined result ${shapeToString(out.shape)} contradicts the declared ${shapeToString(inst.shape)}`);
    }
    if (foldsAsShapeComputation(out)) {
      const values = out.operands.map((o) => constantOf(o)!);
      const folded = (KERNELS[out.opcode] as Kernel<Opcode>)(out, values, createEvalContext());
      return f.constant(folded, { from: inst });
    }
    return out;
  }

  private rewrite(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    if (isDynamicOpcode(inst.opcode)) {
      const shapeOperands = SHAPE_OPERANDS[inst.opcode].map((i) => constantOf(operands[i]!));
      if (shapeOperands.every((l) => l !== undefined)) {
        const name = OP_TABLE[inst.opcode].stablehlo!;
        const values = shapeOperands.map((l, k) => shapeValuesToNumbers(name, `shape operand ${k}`, l!.values() as (number | bigint)[]));
        const form = staticForm(inst, values);
        return f.add(form.opcode, form.operandIndices.map((i) => operands[i]!), form.attrs, { from: inst });
      }
    }
    switch (inst.opcode) {
      case "getDimensionSize": {
        const operand = operands[0]!.shape;
        const d = (inst as Instruction<"getDimensionSize">).attrs.dimension;
        if (operand.kind === "array" && operand.dimensions[d] !== UNBOUNDED_SIZE && !operand.dynamicDimensions[d]) {
          return f.constant(Literal.scalar("s32", operand.dimensions[d]!), { from: inst });
        }
        break;
      }
      case "dynamicReshape": {
        const sizes = operands.slice(1).map(constantOf);
        if (sizes.every((l) => l !== undefined)) {
          const dims = shapeValuesToNumbers("dynamic_reshape", "output_shape", sizes.map((l) => l!.values()[0] as number | bigint));
          return f.add("reshape", [operands[0]!], { dimensions: dims }, { from: inst });
        }
        break;
      }
      case "customCall": {
        if (isDynamicCustomCall(inst)) {
          const target = inst.attrs.target;
          const value = constantOf(operands[DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND[target]!]!);
          if (value !== undefined) {
            const form = dynamicCustomCallStaticForm(inst, shapeValuesToNumbers(target, "shape operand", value.values() as (number | bigint)[]));
            return f.add(form.opcode, form.operandIndices.map((i) => operands[i]!), form.attrs, { from: inst });
          }
          break;
        }
        const reduceWindow = this.dynamicReduceWindow(inst as Instruction<"customCall">, operands, f);
        if (reduceWindow !== undefined) return reduceWindow;
        break;
      }
      case "call": {
        const callee = this.specialize((inst as Instruction<"call">).attrs.toApply, operands);
        // A function that computes only shape values (JAX's divmod, clamps of dimension
        // variables) returns constants once its arguments are known: they replace the call.
        const root = callee.root;
        if (root.opcode === "constant") return f.constant(constantOf(root)!, { from: inst });
        if (root.opcode === "tuple" && root.operands.every((o) => o.opcode === "constant")) {
          return f.add("tuple", root.operands.map((o) => f.constant(constantOf(o)!)), {}, { from: inst });
        }
        return f.add("call", operands, { toApply: callee }, { from: inst });
      }
      case "while":
        return this.refineWhile(inst as Instruction<"while">, operands, f);
      case "getTupleElement": {
        const tuple = operands[0]!;
        if (tuple.opcode === "tuple") return tuple.operands[(inst as Instruction<"getTupleElement">).attrs.index]!;
        break;
      }
      default:
        break;
    }
    return f.withOperands(inst, operands);
  }

  /**
   * JAX's `stablehlo.dynamic_reduce_window` custom call (inputs, init values, then window
   * dimensions, strides, base and window dilations, and an [N, 2] padding as operands;
   * the reducer as its called computation) becomes reduce_window once those are constants.
   */
  private dynamicReduceWindow(inst: Instruction<"customCall">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
    if (inst.attrs.target !== "stablehlo.dynamic_reduce_window") return undefined;
    const reducer = inst.attrs.calledComputations[0];
    const windowOperands = operands.slice(-5).map(constantOf);
    const n = (operands.length - 5) / 2;
    if (reducer === undefined || !Number.isInteger(n) || n < 1 || windowOperands.some((l) => l === undefined)) return undefined;
    const [sizes, strides, baseDilations, windowDilations, padding] = windowOperands.map((l, k) =>
      shapeValuesToNumbers("stablehlo.dynamic_reduce_window", `operand ${2 * n + k}`, l!.values() as (number | bigint)[]));
    if (padding!.length !== 2 * sizes!.length) {
      throw new RefineError(`refine-shapes: ${where(inst)}: padding has ${padding!.length} entries, not 2 per window dimension (${sizes!.length})`);
    }
    const window = makeWindow({
      sizes: sizes!, strides: strides!, baseDilations: baseDilations!, windowDilations: windowDilations!,
      padding: sizes!.map((_, d) => [padding![2 * d]!, padding![2 * d + 1]!] as const),
    });
    return f.add("reduceWindow", operands.slice(0, 2 * n), { window, toApply: reducer }, { from: inst });
  }

  /**
   * A while loop refined for its operands' shapes, as stablehlo-refine-shapes does: the
   * condition's and body's block arguments take the operands' types. A carried value the
   * body returns unchanged (a captured dimension variable, a constant) keeps its value in
   * every iteration, so a constant operand is known inside both regions. The body must
   * then give back every carried value with the shape it came in with: a shape that
   * changes across iterations cannot be made static.
   */
  private refineWhile(inst: Instruction<"while">, operands: readonly Instruction[], f: InstructionFactory): Instruction {
    const { condition, body } = inst.attrs;
    // The loop state: one tuple operand (as HLO writes it, and the importer builds it) or the operands themselves.
    const single = operands.length === 1 && operands[0]!.shape.kind === "tuple";
    const state = single ? operands[0]!.shape : tupleShape(operands.map((o) => o.shape));
    const carried: readonly (Instruction | undefined)[] = single
      ? (operands[0]!.opcode === "tuple" ? operands[0]!.operands : (state.kind === "tuple" ? state.elements.map(() => undefined) : []))
      : operands;
    const entering = state.kind === "tuple" ? state.elements : [state];
    const root = body.root;
    const parameter = body.parameters[0];
    const invariant = (i: number): boolean => root.opcode === "tuple" && parameter !== undefined && body.parameters.length === 1 &&
      root.operands[i]?.opcode === "getTupleElement" && root.operands[i]!.operands[0] === parameter &&
      (root.operands[i] as Instruction<"getTupleElement">).attrs.index === i;
    const known = carried.map((o, i) => (invariant(i) && o !== undefined ? shapeValue(constantOf(o), false) : undefined));
    const refinedBody = this.region(body, state, known);
    const refinedCondition = this.region(condition, state, known);
    const after = refinedBody.root.shape;
    const afterElements = after.kind === "tuple" ? after.elements : [after];
    entering.forEach((shape, i) => {
      const out = afterElements[i];
      if (out === undefined || !shapesEqual(out, shape)) {
        throw new RefineError(`refine-shapes: ${where(inst)}: carried value ${i} enters the loop as ${shapeToString(shape)} but the body returns ` +
          `${out === undefined ? "nothing for it" : shapeToString(out)}: a shape that changes across iterations (or depends on them) cannot be refined`);
      }
    });
    return f.add("while", operands, { condition: refinedCondition, body: refinedBody }, { from: inst });
  }

  /** A region (one tuple parameter of the loop state) refined for `state`, with the carried values `known[i]` as constants. */
  private region(c: Computation, state: Shape, known: readonly (Literal | undefined)[]): Computation {
    if (c.parameters.length !== 1) return this.computation(c, state.kind === "tuple" ? state.elements : [state], known);
    return this.computation(c, [state], [], c.name, known);
  }

  /** `callee` refined for these operands: one version per distinct operand shapes and dimension-variable values. */
  private specialize(callee: Computation, operands: readonly Instruction[]): Computation {
    this.called.add(callee);
    // Dimension variables (jax.global_constant) and other small integer constants (shape
    // values JAX passes to helper functions) are known inside the callee.
    const constants = operands.map((o, i) => shapeValue(constantOf(o), callee.argAttributes?.[i]?.[GLOBAL_CONSTANT] !== undefined));
    const key = `${callee.name}(${operands.map((o, i) => `${shapeToString(o.shape)}${constants[i] === undefined ? "" : `=${constants[i]!.values().join(",")}`}`).join(";")})`;
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const versions = this.specializations.get(callee) ?? [];
    const name = versions.length === 0 ? callee.name : `${callee.name}_${versions.length}`;
    const refined = this.computation(callee, operands.map((o) => o.shape), constants, name);
    versions.push(refined);
    this.specializations.set(callee, versions);
    this.byKey.set(key, refined);
    return refined;
  }
}
