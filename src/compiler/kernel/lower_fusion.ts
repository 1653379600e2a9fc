// lowerFusion: a fused computation → one scalar expression per output element, in
// terms of the loop variables. The walk starts at the root with the output's index
// variables and pushes index maps through the index ops (broadcast, reshape,
// transpose, slice, pad, concatenate, reverse, dynamic-slice), so a transpose of a
// broadcast of a slice becomes one load at a composed offset; nothing in between is
// materialized. Elementwise ops go through SCALAR_OPS.
//
// Loop fusions: the domain is the output shape; outputs are the root (or each element
// of a root tuple, all of one shape). Input fusions: the root is a reduce, a tuple of
// reduces over the same input shape and dimensions, or elementwise ops over such
// reduces' results. The domain is the reduce's input shape (variables 0..n-1); the
// outputs are expressions over output variables n..n+m-1 (output dimension j is
// domain dimension kept[j]) and `accum` nodes, the reductions' results. A root tuple
// element that reads no reduce and has the domain's shape is a full output: computed
// in the reduction loop, in domain context (multi-output fusion).

import { Computation, type Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { decodeFloatBits, encodeFloatBits } from "../../types/float_codec.js";
import type { Scalar } from "../../types/literal.js";
import { rowMajorStrides } from "../../types/index_util.js";
import type { ArrayShape } from "../../types/shape.js";
import type { Declined } from "./declined.js";
import { EXP_OF_NON_POSITIVE, KernelGraph } from "./graph.js";
import { legalIndex, legalize } from "./legalize.js";
import { signOf, type LoadIndex, type RowMaximum } from "./value_facts.js";
import { SCALAR_OPS, storedAsBits, type FusibleElementwiseOpcode } from "./scalar_ops.js";
import { COMPLEX_OPS, componentType, isComplexType, pick } from "./complex_ops.js";
import { appendAll } from "../../types/arrays.js";

export type ReducerKind = "add" | "mul" | "max" | "min" | "and" | "or";

/**
 * A reducer that is not one binary op (argmax, ...): its body inlined as scalar nodes
 * over `racc` (accumulator) and `rin` (element) parameter nodes. It runs in the
 * interpreter's order (accumulator first, elements in row-major order), so even float
 * results match exactly; it does not vectorize.
 */
export interface GenericReducer {
  /** Parameter nodes of the body: the N accumulators, then the N elements. */
  readonly params: readonly number[];
  /** The body's N results. */
  readonly results: readonly number[];
}

export interface KernelInput {
  readonly type: ElementType;
  readonly dims: readonly number[];
}

export interface KernelOutput {
  readonly type: ElementType;
  readonly dims: readonly number[];
  readonly value: number;
  /**
   * Input fusions only: an elementwise value over the whole domain (the reductions'
   * input shape, `value` in domain context), stored as the reduction loop computes
   * it, e.g. softmax's exp(x - max) stored while it is summed.
   */
  readonly full?: boolean;
}

export interface KernelReduction {
  /** A recognized reducer (vectorizable), or "generic" with the body in `generic`. */
  readonly kind: ReducerKind | "generic";
  /** For generic reducers: the body, shared by the N reductions of one variadic reduce (index k within it). */
  readonly generic?: { readonly body: GenericReducer; readonly k: number };
  readonly type: ElementType;
  /** Init value (output context). */
  readonly init: number;
  /** The value reduced (domain context). */
  readonly value: number;
}

export interface FusedKernelIR {
  readonly graph: KernelGraph;
  readonly inputs: readonly KernelInput[];
  /** Sizes of the loop domain; variable i of the graph is index i of the domain. */
  readonly domain: readonly number[];
  /** Present for input (reduction) fusions. */
  readonly reduce?: {
    /** Reduced domain dimensions, ascending; the others are kept, in order. */
    readonly dims: readonly number[];
    readonly reductions: readonly KernelReduction[];
  };
  readonly outputs: readonly KernelOutput[];
}

class Fail {
  constructor(readonly reason: string) {}
}

const fail = (reason: string): never => {
  throw new Fail(reason);
};

function arrayOf(inst: Instruction): ArrayShape {
  return inst.shape.kind === "array" ? inst.shape : fail(`${inst.name}: not an array`);
}

/** Largest array constant inlined into a kernel (as a chain of selects). */
const MAX_INLINE_CONSTANT = 16;

const FUSIBLE_ELEMENTWISE = new Set<string>(Object.keys(SCALAR_OPS));

const isComplexArray = (inst: Instruction): boolean => inst.shape.kind === "array" && isComplexType(inst.shape.elementType);

/** A kernel input or output of `shape`: a complex array as the real array of its components (complex_ops.ts). */
function realView(shape: ArrayShape): { type: ElementType; dims: readonly number[] } {
  return isComplexType(shape.elementType)
    ? { type: componentType(shape.elementType), dims: [...shape.dimensions, 2] }
    : { type: shape.elementType, dims: shape.dimensions };
}

class Lowering {
  private readonly memo = new Map<string, number>();
  /** When lowering a reducer body: the nodes its parameters stand for. */
  paramNodes: readonly number[] | undefined;
  /** Results of reductions, by reduce instruction (and tuple index). */
  readonly accums = new Map<Instruction, number[]>();
  /** Variables of the output context, when lowering an input fusion's epilogue. */
  outputVars: readonly number[] | undefined;
  /** The domain's variables at the kept dimensions: a reduce read at them is read along its own row. */
  rowVars: readonly number[] | undefined;
  /** Max reductions: accum node → the value it reduces (x - max(x) ≤ 0 along a row). */
  readonly maxAccums = new Map<number, number>();
  /** Output fusions: the dot or convolution whose result the epilogue reads, as kernel input `operand` (row-major). */
  core: { readonly inst: Instruction; readonly operand: number } | undefined;
  /** What each load node reads (for signOf). */
  readonly loads = new Map<number, LoadIndex>();
  /**
   * Rebuilding a producer's expression (rowMaxOf): the instructions of its computation that
   * this fusion reads as operands (by operand number); any other parameter fails.
   */
  substitutes: ReadonlyMap<Instruction, number> | undefined;

  /** `hasF64`: whether the target computes in f64 (complex_ops.ts's forms of the ops the interpreter computes in f64 differ without it). */
  constructor(readonly comp: Computation, readonly g: KernelGraph = new KernelGraph(), readonly maxima: readonly RowMaximum[] = [], readonly hasF64 = true) {}

  /** The node of `inst` at `idx` (a complex `inst`: its component idx[rank], complex_ops.ts). */
  at(inst: Instruction, idx: readonly number[]): number {
    const key = `${inst.id}:${idx.join(",")}`;
    let v = this.memo.get(key);
    if (v === undefined) {
      v = this.lower(inst, idx);
      this.memo.set(key, v);
    }
    return v;
  }

  /**
   * For signOf at domain index `idx`: each max accumulator → the value it reduces, and
   * the load of each row maximum of a producer's expression (RowMaximum's value) at
   * idx's row → that expression at idx, rebuilt in a copy of the graph (hash-consing
   * gives an existing node's id only when this fusion computes the same expression from
   * the same operands; a new id, which no node here has, otherwise).
   */
  private rowMaxOf(idx: readonly number[]): ReadonlyMap<number, number> {
    const pairs = new Map(this.maxAccums);
    for (const m of this.maxima) {
      if (m.value === undefined || arrayOf(m.value.inst).dimensions.length !== idx.length) continue;
      const scratch = this.g.clone();
      const maxShape = arrayOf(this.comp.parameters[m.max]!);
      const kept = idx.filter((_, d) => !m.dims.includes(d));
      if (kept.length !== maxShape.dimensions.length) continue;
      const maxLoad = scratch.load(m.max, maxShape.elementType, rowMajorOffset(scratch, kept, maxShape.dimensions));
      const rebuild = new Lowering(m.value.computation, scratch, [], this.hasF64);
      rebuild.substitutes = m.value.operands;
      let value: number;
      try {
        value = rebuild.at(m.value.inst, idx);
      } catch (e) {
        if (e instanceof Fail) continue;
        throw e;
      }
      if (maxLoad < this.g.nodes.length && value < this.g.nodes.length) pairs.set(maxLoad, value);
    }
    return pairs;
  }

  private lower(inst: Instruction, idx: readonly number[]): number {
    const g = this.g;
    const opcode: Opcode = inst.opcode;
    const complex = isComplexArray(inst);
    if (complex && (inst === this.core?.inst || this.substitutes !== undefined || this.paramNodes !== undefined)) {
      return fail(`${inst.name}: complex values fuse only as arrays of a fusion`);
    }
    if (inst === this.core?.inst) return g.load(this.core.operand, arrayOf(inst).elementType, rowMajorOffset(g, idx, arrayOf(inst).dimensions));
    if (this.substitutes !== undefined) {
      const operand = this.substitutes.get(inst);
      if (operand !== undefined) return g.load(operand, arrayOf(inst).elementType, rowMajorOffset(g, idx, arrayOf(inst).dimensions));
      if (opcode === "parameter") return fail(`${inst.name}: not read by the fusion`);
    }
    // A complex instruction is asked for one component k at a time: idx is its index, then k.
    const rank = inst.shape.kind === "array" ? inst.shape.dimensions.length : 0;
    const k = complex ? idx[rank]! : undefined;
    const base = complex ? idx.slice(0, rank) : idx;
    /** Operand o at index oi: component k of it, where it is complex. */
    const read = (o: Instruction, oi: readonly number[]): number => (isComplexArray(o) ? this.at(o, [...oi, k!]) : this.at(o, oi));
    if (FUSIBLE_ELEMENTWISE.has(opcode) && (complex || inst.operands.some(isComplexArray))) {
      const part = (i: number, c: number): number => {
        const o = inst.operands[i]!;
        const oi = arrayOf(o).dimensions.length === 0 ? [] : base; // a rank-0 operand stands for every element
        return isComplexArray(o) ? this.at(o, [...oi, c]) : this.at(o, oi);
      };
      const operands = { part };
      const r = COMPLEX_OPS[opcode as FusibleElementwiseOpcode](g, inst, operands, k, this.hasF64);
      return typeof r === "number" ? legalize(g, r) : fail(`${inst.name}: ${r.declined}`);
    }
    if (FUSIBLE_ELEMENTWISE.has(opcode)) {
      const args = inst.operands.map((o) => this.at(o, arrayOf(o).dimensions.length === 0 ? [] : idx));
      if (opcode === "exp" && signOf(g, args[0]!, this.loads, this.maxima, this.rowMaxOf(idx)) === "nonPositive") {
        return g.op("exp", arrayOf(inst).elementType, args, EXP_OF_NON_POSITIVE);
      }
      const r = SCALAR_OPS[opcode as FusibleElementwiseOpcode](g, inst, args);
      return typeof r === "number" ? legalize(g, r) : fail(`${inst.name}: ${r.declined}`);
    }
    if (opcode === "reduce" || opcode === "getTupleElement") {
      const reduce = opcode === "reduce" ? inst : inst.operands[0]!;
      const k = opcode === "reduce" ? 0 : (inst as Instruction<"getTupleElement">).attrs.index;
      const accs = this.accums.get(reduce);
      // Read in output context (the root's epilogue), or broadcast back over the domain
      // along its row (a later stage of a row pipeline: softmax's x - max, e / sum).
      // (A broadcast reads a dimension of size 1 at index 0, not at its variable.)
      const zero = (x: number, v: number): boolean => g.node(v).op === "var" && g.varSizes.get(g.node(v).attr as number) === 1 && g.node(x).op === "iconst" && g.node(x).attr === 0;
      const at = (vars: readonly number[] | undefined): boolean =>
        vars !== undefined && idx.length === vars.length && idx.every((x, i) => x === vars[i] || zero(x, vars[i]!));
      if (accs === undefined || !(at(this.outputVars) || at(this.rowVars))) {
        return fail(`${inst.name}: a reduce fuses only as the input of the fusion's root or of a later pass over its rows`);
      }
      return accs[k]!;
    }
    const shape = arrayOf(inst);
    // The type of the nodes of `inst`: a complex one's components.
    const t = componentType(shape.elementType);
    switch (opcode) {
      case "parameter": {
        if (this.paramNodes !== undefined) return this.paramNodes[(inst as Instruction<"parameter">).attrs.number]!;
        const operand = (inst as Instruction<"parameter">).attrs.number;
        const load = g.load(operand, t, rowMajorOffset(g, idx, realView(shape).dims));
        if (!complex && !this.loads.has(load)) this.loads.set(load, { operand, index: idx });
        return load;
      }
      case "constant": {
        const lit = (inst as Instruction<"constant">).attrs.literal;
        const values = lit.values();
        if (!complex) {
          // A node's value (a number) makes the positive quiet NaN: a float stored as bits
          // (f16, bf16, f8/f6/f4) whose NaN constant has a sign or another payload stays out.
          if (storedAsBits(t)) {
            const quiet = encodeFloatBits(t, NaN);
            if (Array.from(lit.data as Uint8Array | Uint16Array).some((b) => b !== quiet && Number.isNaN(decodeFloatBits(t, b)))) {
              return fail(`${inst.name}: a NaN constant of ${t} other than the positive quiet NaN`);
            }
          }
          return constantAt(g, inst.name, values, t, idx, shape.dimensions);
        }
        const part = (c: number): number =>
          constantAt(g, inst.name, values.map((v) => (typeof v === "object" ? (c === 0 ? v.re : v.im) : fail(`${inst.name}: unsupported constant`))), t, base, shape.dimensions);
        const kn = g.node(k!);
        return kn.op === "iconst" ? part(kn.attr as number) : pick(g, k!, part(0), part(1));
      }
      case "iota": {
        // A complex iota (the interpreter's): the index converted to the component type, a +0 imaginary part.
        const d = (inst as Instruction<"iota">).attrs.iotaDimension;
        const index = g.fromIdx(t, base[d]!);
        return complex ? pick(g, k!, index, g.constant(t, 0)) : index;
      }
      case "broadcastInDim": {
        const operand = inst.operands[0]!;
        const od = arrayOf(operand).dimensions;
        const bd = (inst as Instruction<"broadcastInDim">).attrs.broadcastDimensions;
        return read(operand, od.map((n, i) => (n === 1 ? g.iconst(0) : base[bd[i]!]!)));
      }
      case "reshape": {
        const operand = inst.operands[0]!;
        return read(operand, unlinearize(g, rowMajorOffset(g, base, shape.dimensions), arrayOf(operand).dimensions));
      }
      case "transpose": {
        const perm = (inst as Instruction<"transpose">).attrs.permutation;
        const operandIdx = new Array<number>(perm.length);
        perm.forEach((p, i) => { operandIdx[p] = base[i]!; });
        return read(inst.operands[0]!, operandIdx);
      }
      case "slice": {
        const { startIndices, strides } = (inst as Instruction<"slice">).attrs;
        return read(inst.operands[0]!, base.map((x, i) => g.addConst(g.mul(x, strides[i]!), startIndices[i]!)));
      }
      case "reverse": {
        const dims = (inst as Instruction<"reverse">).attrs.dimensions;
        return read(inst.operands[0]!, base.map((x, i) => (dims.includes(i) ? g.addConst(g.mul(x, -1), shape.dimensions[i]! - 1) : x)));
      }
      case "pad": {
        const { edgePaddingLow, interiorPadding } = (inst as Instruction<"pad">).attrs;
        const operand = inst.operands[0]!;
        const od = arrayOf(operand).dimensions;
        let valid = g.ctrue();
        const operandIdx = base.map((x, i) => {
          const s = interiorPadding[i]! + 1;
          const q = g.addConst(x, -edgePaddingLow[i]!);
          const hi = Math.max(0, (od[i]! - 1) * s);
          const qc = g.clamp(q, 0, hi);
          valid = g.cand(valid, g.eq(q, qc));
          if (s > 1) valid = g.cand(valid, g.eq(g.mod(qc, s), g.iconst(0)));
          return g.div(qc, s);
        });
        const padValue = read(inst.operands[1]!, []);
        if (od.some((n) => n === 0)) return padValue;
        const inside = read(operand, operandIdx);
        if (g.node(valid).op === "ctrue") return inside;
        return g.op("select", t, [g.condToPred(valid), inside, padValue]);
      }
      case "concatenate": {
        const d = (inst as Instruction<"concatenate">).attrs.dimension;
        const parts = inst.operands.filter((o) => arrayOf(o).dimensions[d] !== 0);
        const offsets: number[] = [];
        let total = 0;
        for (const p of inst.operands) {
          if (arrayOf(p).dimensions[d] !== 0) offsets.push(total);
          total += arrayOf(p).dimensions[d]!;
        }
        const partAt = (j: number): number => {
          const n = arrayOf(parts[j]!).dimensions[d]!;
          const local = g.clamp(g.addConst(base[d]!, -offsets[j]!), 0, n - 1);
          return read(parts[j]!, base.map((x, i) => (i === d ? local : x)));
        };
        let result = partAt(parts.length - 1);
        for (let j = parts.length - 2; j >= 0; j--) {
          const cond = g.lt(base[d]!, g.iconst(offsets[j + 1]!));
          result = g.node(cond).op === "ctrue" ? partAt(j) : g.op("select", t, [g.condToPred(cond), partAt(j), result]);
        }
        return result;
      }
      case "dynamicSlice": {
        const operand = inst.operands[0]!;
        const od = arrayOf(operand).dimensions;
        const sizes = (inst as Instruction<"dynamicSlice">).attrs.sliceSizes;
        return read(operand, base.map((x, i) => {
          const startInst = inst.operands[1 + i]!;
          const st = arrayOf(startInst).elementType;
          if (ELEMENT_TYPES[st].kind !== "signed" && ELEMENT_TYPES[st].kind !== "unsigned") fail(`${inst.name}: start index of type ${st}`);
          const start = g.clamp(legalIndex(g, read(startInst, [])), 0, od[i]! - sizes[i]!);
          return g.add(start, x);
        }));
      }
      default:
        return fail(`${inst.name}: ${opcode} is not fusible`);
    }
  }
}

/** Constant `values` (of an array of type t and dimensions dims, row-major) at `idx`: one node, or a small table of them. */
function constantAt(g: KernelGraph, name: string, values: readonly Scalar[], t: ElementType, idx: readonly number[], dims: readonly number[]): number {
  const first = values[0];
  if (first === undefined || typeof first === "object") return fail(`${name}: unsupported constant`);
  const asNode = (v: Scalar): number => g.constant(t, typeof v === "boolean" ? (v ? 1 : 0) : (v as number | bigint));
  const same = values.every((v) => v === first || (typeof v === "number" && Number.isNaN(v) && Number.isNaN(first as number)));
  if (same && !(typeof first === "number" && first === 0 && values.some((v) => !Object.is(v, first)))) return asNode(first);
  // A small table: a chain of selects on the linear index (larger constants
  // should stay operands of the fusion).
  if (values.length > MAX_INLINE_CONSTANT) return fail(`${name}: array constants of more than ${MAX_INLINE_CONSTANT} elements are not fused`);
  const linear = rowMajorOffset(g, idx, dims);
  let result = asNode(values[values.length - 1]!);
  for (let k = values.length - 2; k >= 0; k--) {
    result = g.op("select", t, [g.condToPred(g.eq(linear, g.iconst(k))), asNode(values[k]!), result]);
  }
  return result;
}

/** The row-major linear index of multi-index `idx` in `dims`. */
export function rowMajorOffset(g: KernelGraph, idx: readonly number[], dims: readonly number[]): number {
  const strides = rowMajorStrides(dims);
  let offset = g.iconst(0);
  idx.forEach((x, i) => { offset = g.add(offset, g.mul(x, strides[i]!)); });
  return offset;
}

/** The multi-index of `dims` whose row-major linear index is `linear`. */
export function unlinearize(g: KernelGraph, linear: number, dims: readonly number[]): number[] {
  const out = new Array<number>(dims.length);
  let r = linear;
  for (let i = dims.length - 1; i >= 0; i--) {
    if (i === 0) {
      out[i] = r;
      break;
    }
    out[i] = g.mod(r, dims[i]!);
    r = g.div(r, dims[i]!);
  }
  return out;
}

/** Recognizes a reducer whose body is one binary op of its two parameters. */
export function reducerKinds(toApply: Computation, types: readonly ElementType[]): ReducerKind[] | string {
  try {
    return recognizeReducer(toApply, types);
  } catch (e) {
    if (e instanceof Fail) return e.reason;
    throw e;
  }
}

/** The nodes of scalar computation `comp`'s results (a tuple root's elements), its body inlined over `params`, the nodes standing for its parameters. */
function inlineScalarBody(g: KernelGraph, comp: Computation, params: readonly number[]): number[] {
  const low = new Lowering(comp, g);
  low.paramNodes = params;
  const root = comp.root;
  return root.opcode === "tuple" ? root.operands.map((o) => low.at(o, [])) : [low.at(root, [])];
}

/** inlineScalarBody for a computation outside a fusion (a sort's comparator), or why it does not lower. */
export function lowerScalarBody(g: KernelGraph, comp: Computation, params: readonly number[]): number[] | Declined {
  try {
    return inlineScalarBody(g, comp, params);
  } catch (e) {
    if (e instanceof Fail) return { declined: e.reason };
    throw e;
  }
}

/** Inlines a reducer's body over fresh parameter nodes. */
function genericReducer(g: KernelGraph, toApply: Computation, types: readonly ElementType[], tag: number): GenericReducer {
  const n = types.length;
  const params = [...types, ...types].map((t, i) => g.op(i < n ? "racc" : "rin", t, [], `${tag}:${i}`));
  const results = inlineScalarBody(g, toApply, params);
  if (results.length !== n) fail(`${toApply.name}: reducer has ${results.length} results for ${n} inputs`);
  return { params, results };
}

function recognizeReducer(toApply: Computation, types: readonly ElementType[]): ReducerKind[] {
  const n = types.length;
  const root = toApply.root;
  const results = root.opcode === "tuple" ? root.operands : [root];
  if (results.length !== n) fail(`${toApply.name}: unexpected reducer shape`);
  return results.map((r, k) => {
    const [a, b] = r.operands;
    const params = [a, b].map((x) => (x?.opcode === "parameter" ? (x as Instruction<"parameter">).attrs.number : -1));
    const ok = r.operands.length === 2 && ((params[0] === k && params[1] === n + k) || (params[0] === n + k && params[1] === k));
    if (!ok) fail(`${toApply.name}: reducer output ${k} is not one binary op of its two parameters`);
    const t = types[k]!;
    const pred = t === "pred";
    switch (r.opcode) {
      case "add": return pred ? "or" : "add";
      case "multiply": return pred ? "and" : "mul";
      case "maximum": return pred ? "or" : "max";
      case "minimum": return pred ? "and" : "min";
      case "and": return ELEMENT_TYPES[t].kind === "float" ? fail("and on floats") : "and";
      case "or": return ELEMENT_TYPES[t].kind === "float" ? fail("or on floats") : "or";
      default: return fail(`${toApply.name}: reducer ${r.opcode} is not supported`);
    }
  });
}

/** The reduces `inst` reads, nested ones included (a row pipeline's later reduces read earlier ones). */
function collectReduces(inst: Instruction, out: Set<Instruction>, seen: Set<Instruction>): void {
  const stack = [inst];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    if (x.opcode === "reduce") out.add(x);
    appendAll(stack, x.operands);
  }
}

/**
 * Lowers a fused computation; `maxima` says which operands are row maxima of others
 * (value_facts.ts); `hasF64`: whether the target computes in f64 (WGSL does not).
 */
export function lowerFusion(fused: Computation, maxima: readonly RowMaximum[] = [], hasF64 = true): FusedKernelIR | Declined {
  try {
    return lowerOrThrow(fused, maxima, hasF64);
  } catch (e) {
    if (e instanceof Fail) return { declined: e.reason };
    throw e;
  }
}

/**
 * The epilogue of an output fusion: its root as a loop over the root's shape, where the
 * dot or convolution `core` is not computed but read, as one more kernel input (number
 * fused.parameters.length, `core`'s shape, row-major): the value its kernel has just
 * written.
 */
export function lowerEpilogue(fused: Computation, core: Instruction): FusedKernelIR | Declined {
  try {
    const low = new Lowering(fused);
    low.core = { inst: core, operand: fused.parameters.length };
    const g = low.g;
    const out = arrayOf(fused.root);
    if (isComplexArray(fused.root) || isComplexArray(core)) fail("complex epilogues are not fused");
    const inputs = [...fused.parameters, core].map((p) => realView(arrayOf(p)));
    const vars = out.dimensions.map((n, i) => g.variable(i, n));
    return { graph: g, inputs, domain: out.dimensions, outputs: [{ type: out.elementType, dims: out.dimensions, value: low.at(fused.root, vars) }] };
  } catch (e) {
    if (e instanceof Fail) return { declined: e.reason };
    throw e;
  }
}

function lowerOrThrow(fused: Computation, maxima: readonly RowMaximum[], hasF64: boolean): FusedKernelIR {
  const low = new Lowering(fused, new KernelGraph(), maxima, hasF64);
  const g = low.g;
  const root = fused.root;
  const roots = root.opcode === "tuple" ? root.operands : [root];
  const inputs: KernelInput[] = fused.parameters.map((p) => realView(arrayOf(p)));
  const reduces = new Set<Instruction>();
  const seen = new Set<Instruction>();
  for (const r of roots) collectReduces(r, reduces, seen);
  const rootShapes = roots.flatMap((r) => (r.shape.kind === "tuple" && r.opcode === "reduce" ? r.shape.elements : [r.shape]));
  const sameDims = (s: ArrayShape["dimensions"], d: readonly number[]): boolean => s.length === d.length && s.every((n, i) => n === d[i]);
  const checkShapes = (shapes: readonly (typeof rootShapes)[number][], dims: readonly number[]): void => {
    for (const s of shapes) {
      if (s.kind !== "array") fail("fusion outputs must be arrays");
      else if (!sameDims(realView(s).dims, dims)) fail("outputs of a multi-output fusion must have one shape");
    }
  };
  if (reduces.size === 0) {
    // Complex outputs: the domain is their real view's, the trailing dimension of 2 each
    // element's component (complex_ops.ts), so every output must be complex.
    if (roots.some(isComplexArray) && !roots.every(isComplexArray)) fail("a fusion's outputs are all complex or all real");
    const domain = rootShapes[0]?.kind === "array" ? realView(rootShapes[0]).dims : fail("fusion root is not an array");
    checkShapes(rootShapes, domain);
    const vars = domain.map((n, i) => g.variable(i, n));
    const outputs = roots.map((r) => ({ ...realView(arrayOf(r)), value: low.at(r, vars) }));
    return { graph: g, inputs, domain, outputs };
  }
  // An input fusion: every reduce reads one input shape and reduces the same dimensions;
  // in instruction order, so a reduce that reads another's result comes after it.
  // Complex sums reduce the real view of their operands (complex_ops.ts): the trailing
  // dimension of 2 is kept, and each part is summed as the interpreter's complex add
  // sums it, part by part. Then every reduce and every output of the fusion is complex.
  const complex = [...reduces].some((r) => r.operands.some(isComplexArray));
  if (complex !== roots.some(isComplexArray) || (complex && ![...reduces, ...roots].every((r) => r.operands.every(isComplexArray) && isComplexArray(r)))) {
    fail("a fusion's reductions and outputs are all complex or all real");
  }
  const order = new Map(fused.instructions.map((inst, i) => [inst, i]));
  const list = [...reduces].sort((a, b) => order.get(a)! - order.get(b)!);
  const first = list[0] as Instruction<"reduce">;
  const domain = realView(arrayOf(first.operands[0]!)).dims;
  const dims = [...first.attrs.dimensions].sort((a, b) => a - b);
  const kept = domain.map((_, i) => i).filter((i) => !dims.includes(i));
  const domainVars = domain.map((n, i) => g.variable(i, n));
  const outVars = kept.map((d, j) => g.variable(domain.length + j, domain[d]!));
  low.outputVars = outVars;
  low.rowVars = kept.map((d) => domainVars[d]!);
  const reductions: KernelReduction[] = [];
  for (const inst of list) {
    const r = inst as Instruction<"reduce">;
    const rd = [...r.attrs.dimensions].sort((a, b) => a - b);
    const n = r.operands.length / 2;
    const inDims = realView(arrayOf(r.operands[0]!)).dims;
    if (inDims.length !== domain.length || inDims.some((x, i) => x !== domain[i]) || rd.join() !== dims.join()) {
      fail("the reduces of one fusion must share their input shape and dimensions");
    }
    const types = r.operands.slice(0, n).map((o) => componentType(arrayOf(o).elementType));
    const kinds = reducerKinds(r.attrs.toApply, types);
    if (complex && (typeof kinds === "string" || kinds.some((kind) => kind !== "add"))) fail(`${r.name}: complex reductions other than sums are not fused`);
    const body = typeof kinds === "string" ? genericReducer(g, r.attrs.toApply, types, reductions.length) : undefined;
    const accs: number[] = [];
    for (let k = 0; k < n; k++) {
      // A complex init value is read at the output's part (its trailing variable).
      const init = low.at(r.operands[n + k]!, complex ? [outVars[outVars.length - 1]!] : []);
      const value = low.at(r.operands[k]!, domainVars);
      accs.push(g.accum(reductions.length, types[k]!));
      if (body === undefined && (kinds as ReducerKind[])[k] === "max") low.maxAccums.set(accs[k]!, value);
      if (body !== undefined) reductions.push({ kind: "generic", generic: { body, k }, type: types[k]!, init, value });
      else reductions.push({ kind: (kinds as ReducerKind[])[k]!, type: types[k]!, init, value });
    }
    low.accums.set(r, accs);
  }
  const outShape = kept.map((d) => domain[d]!);
  const outputs: KernelOutput[] = [];
  for (const r of roots) {
    // A full-shape root: stored from the reduction's loop, or, when it reads reductions
    // along its rows (softmax's e / sum), from a later pass over the row (row pipeline).
    if (r.opcode !== "reduce" && r.shape.kind === "array" && sameDims(realView(r.shape).dims, domain) && outShape.length !== domain.length) {
      outputs.push({ type: componentType(r.shape.elementType), dims: domain, value: low.at(r, domainVars), full: true });
      continue;
    }
    checkShapes(r.opcode === "reduce" && r.shape.kind === "tuple" ? r.shape.elements : [r.shape], outShape);
    if (r.opcode === "reduce" && r.shape.kind === "tuple") {
      for (const value of low.accums.get(r)!) outputs.push({ type: g.node(value).type as ElementType, dims: outShape, value });
    } else {
      outputs.push({ type: componentType(arrayOf(r).elementType), dims: outShape, value: low.at(r, outVars) });
    }
  }
  return { graph: g, inputs, domain, reduce: { dims, reductions }, outputs };
}
