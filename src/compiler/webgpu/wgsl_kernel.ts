// A kernel of the shared kernel IR (kernel/kernel_ir.ts) printed as a WGSL compute
// shader, as wasm/emit_loop.ts prints it as WebAssembly and native/emit_c_loop.ts as C.
// The schedule was built for the GPU's target description (webgpu/targets.ts): no
// vector form, so every loop is a scalar loop, and work units independent of one
// another, so that each invocation runs one unit.
//
// Memory: the device's memory is one storage buffer (binding 0) of 32-bit words, which
// every buffer of a program lives in at a byte offset (BUFFER_ALIGNMENT-aligned); the
// kernel reads its buffers' byte offsets from binding 1 (one u32 each, operands then
// results; the word after them is zero, which float constants are XORed with: see
// wgsl_math.ts). Loads of 1- and 2-byte types extract their bytes from a word. A kernel that
// stores 1- or 2-byte elements declares the memory as atomic words and stores those with
// atomicAnd/atomicOr, since neighbouring invocations may own other bytes of the same
// word; its other accesses are atomic loads and stores too (WGSL does not let a buffer
// be bound twice for writing). Scratch (a row pipeline's rings of results, row buffers)
// is function-scope arrays where each invocation runs its own row, and workgroup arrays
// (var<workgroup>) where a workgroup runs a row together (its row buffers).

import { appendAll } from "../../types/arrays.js";
import { ELEMENT_TYPES, storageBytes, type ElementType } from "../../types/element_type.js";
import { decline } from "../kernel/declined.js";
import { statements, type Kernel, type Scratch, type Stmt } from "../kernel/kernel_ir.js";
import { KernelTextPrinter } from "../kernel/kernel_text.js";
import type { Node, NodeType } from "../kernel/graph.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { int64Words, isInt64 } from "./wgsl_int64.js";
import { WGSL_HELPERS, WgslValues, wgslConst, wgslMathSources, wgslType, wrap, type WgslMathName } from "./wgsl_values.js";

/** Invocations of a workgroup (loop and reduction kernels: one unit each). */
export const WORKGROUP_SIZE = 64;

/** A kernel as WGSL, with what dispatching it needs. */
export interface WgslKernel {
  readonly source: string;
  /** Buffers it binds offsets of (operands, then results). */
  readonly buffers: number;
  /** Work units: one invocation each, or one workgroup each (Kernel.workgroup). */
  readonly units: number;
  /** Invocations that run one unit together (1, or a workgroup's). */
  readonly invocationsPerUnit: number;
  /** Workgroups to dispatch, in x and y (x at most the adapter's limit). */
  readonly workgroups: readonly [number, number];
  /** What it computes, where the steps' names do not say (a GEMM's shape and tile), for dump(). */
  readonly what?: string;
  /** It uses subgroup operations (WGSL's `subgroups` feature; a row's workgroup combining its lanes' values). */
  readonly subgroups?: boolean;
  /** It reports a run-time error in the program's status word (GpuProgram.status), bound after its results: a ragged dot's negative group size (ragged_dot_wgsl.ts). */
  readonly status?: boolean;
}


/** The reducer kinds as the value renderer's binary ops. */
export const COMBINE_OP: Readonly<Record<ReducerKind, string>> = { add: "add", mul: "mul", max: "max", min: "min", and: "and", or: "or" };

/**
 * f32 max and min over a subgroup as XLA's (NaN wins, -0 below +0): WGSL's subgroupMax
 * and subgroupMin follow the platform (SwiftShader's drop NaNs), so they run on the
 * value's bits mapped to integers in the float order (wgsl_values.ts xk_order), NaN
 * decided apart by subgroupAny.
 */
const SUBGROUP_FLOAT_HELPERS = String.raw`fn xk_sg_maxf(x: f32) -> f32 {
  let nan = subgroupAny(xk_isnan(x));
  let m = bitcast<f32>(xk_order(subgroupMax(xk_order(bitcast<i32>(x)))));
  return select(m, xk_f(0x7fc00000u), nan);
}
fn xk_sg_minf(x: f32) -> f32 {
  let nan = subgroupAny(xk_isnan(x));
  let m = bitcast<f32>(xk_order(subgroupMin(xk_order(bitcast<i32>(x)))));
  return select(m, xk_f(0x7fc00000u), nan);
}`;

/**
 * The WGSL of accumulator value x (type t, reducer `kind`) combined over the active
 * invocations of its subgroup, exactly as the value renderer's binary op would combine
 * them (for f32 sums and products: in the implementation's order); undefined for a type
 * without one here (floats other than f32, 64-bit integers).
 */
export function subgroupCombineExpr(kind: ReducerKind, t: ElementType, x: string): string | undefined {
  if (t === "f32") return { add: `subgroupAdd(${x})`, mul: `subgroupMul(${x})`, max: `xk_sg_maxf(${x})`, min: `xk_sg_minf(${x})`, and: undefined, or: undefined }[kind];
  const info = ELEMENT_TYPES[t];
  // pred is 0 or 1 in a u32: its sum and max are or, its product and min and.
  if (t === "pred") return kind === "add" || kind === "or" || kind === "max" ? `subgroupOr(${x})` : `subgroupAnd(${x})`;
  if ((info.kind !== "signed" && info.kind !== "unsigned") || info.storageBytes > 4) return undefined;
  // Narrow integers are held wrapped to their width: a 32-bit sum or product wrapped once is the same.
  return { add: wrap(t, `subgroupAdd(${x})`), mul: wrap(t, `subgroupMul(${x})`), max: `subgroupMax(${x})`, min: `subgroupMin(${x})`, and: `subgroupAnd(${x})`, or: `subgroupOr(${x})` }[kind];
}

/**
 * Statements every lane of a workgroup using subgroup operations runs first: its
 * subgroup's first lane (xk_sg_first), the subgroup's rank among the workgroup's
 * subgroups ordered by first lane (xk_sg_rank: its slot in subgroupCombine's arrays)
 * and their number (xk_sg_count), from one bit a subgroup in xk_sg_leaders. Nothing is
 * assumed of how the implementation groups lanes into subgroups (Vulkan does not tie
 * them to the local index), nor that subgroups are full.
 */
function subgroupPrologue(lane: string, size: number): string[] {
  return [
    // Cleared first: workgroup memory's zero-initialization is off where the backend sets up Dawn itself (node_gpu.ts).
    `  if (u32(${lane}) < ${size / 32}u) { atomicStore(&xk_sg_leaders[u32(${lane})], 0u); }`,
    `  workgroupBarrier();`,
    `  let xk_sg_first = subgroupBroadcastFirst(u32(${lane}));`,
    `  if (u32(${lane}) == xk_sg_first) { atomicOr(&xk_sg_leaders[xk_sg_first >> 5u], 1u << (xk_sg_first & 31u)); }`,
    `  workgroupBarrier();`,
    `  var xk_sg_rank = countOneBits(atomicLoad(&xk_sg_leaders[xk_sg_first >> 5u]) & ((1u << (xk_sg_first & 31u)) - 1u));`,
    `  var xk_sg_count = 0u;`,
    `  for (var j = 0u; j < ${size / 32}u; j = j + 1u) {`,
    `    let c = countOneBits(atomicLoad(&xk_sg_leaders[j]));`,
    `    xk_sg_count = xk_sg_count + c;`,
    `    if (j < (xk_sg_first >> 5u)) { xk_sg_rank = xk_sg_rank + c; }`,
    `  }`,
  ];
}

/** The WGSL of a word of memory at word index w, loaded, for a plain or an atomic memory. */
const wordLoad = (atomic: boolean): string => (atomic ? "atomicLoad(&mem[w])" : "mem[w]");

/** Loads and stores of each storage width, by byte address (i32). */
export function memoryHelpers(atomic: boolean): string {
  const lines = [
    `fn xk_ld32(a: i32) -> u32 { let w = u32(a) >> 2u; return ${wordLoad(atomic)}; }`,
    `fn xk_ld16(a: i32) -> u32 { return (xk_ld32(a & ~3) >> (u32(a & 2) * 8u)) & 0xffffu; }`,
    `fn xk_ld8(a: i32) -> u32 { return (xk_ld32(a & ~3) >> (u32(a & 3) * 8u)) & 0xffu; }`,
    atomic ? `fn xk_st32(a: i32, v: u32) { atomicStore(&mem[u32(a) >> 2u], v); }` : `fn xk_st32(a: i32, v: u32) { mem[u32(a) >> 2u] = v; }`,
  ];
  if (atomic) {
    for (const [bits, mask, align] of [[16, "0xffffu", 2], [8, "0xffu", 3]] as const) {
      lines.push(`fn xk_st${bits}(a: i32, v: u32) {
  let w = u32(a) >> 2u;
  let shift = u32(a & ${align}) * 8u;
  atomicAnd(&mem[w], ~(${mask} << shift));
  atomicOr(&mem[w], (v & ${mask}) << shift);
}`);
    }
  }
  return lines.join("\n");
}

/** The value of type t (held in its WGSL type) loaded from byte address a. */
export function loadAs(t: ElementType, a: string): string {
  const bytes = storageBytes(t);
  // s64 and u64: their two words, low first (wgsl_int64.ts).
  if (isInt64(t)) return int64Words(`xk_ld32(${a})`, `xk_ld32(${a} + 4)`);
  const held = wgslType(t) === "f32" || ELEMENT_TYPES[t].kind !== "float" ? wgslType(t) : "u32";
  const raw = bytes === 4 ? `xk_ld32(${a})` : bytes === 2 ? `xk_ld16(${a})` : `xk_ld8(${a})`;
  if (held === "f32") return `bitcast<f32>(${raw})`;
  if (held === "i32") return wrap(t, `bitcast<i32>(${raw})`);
  return raw;
}

/** The statement storing value v (a name: an s64 or u64 one is read twice) of type t at byte address a. */
export function storeAs(t: ElementType, a: string, v: string): string {
  const bytes = storageBytes(t);
  if (isInt64(t)) return `xk_st32(${a}, ${v}.x); xk_st32(${a} + 4, ${v}.y);`;
  const word = wgslType(t) === "u32" || (ELEMENT_TYPES[t].kind === "float" && t !== "f32") ? v : `bitcast<u32>(${v})`;
  return `xk_st${bytes * 8}(${a}, ${word});`;
}

/** Whether the kernel stores elements narrower than a word (its memory is then atomic). */
function storesNarrow(k: Kernel): boolean {
  return [...statements(k.prologue ?? []), ...statements(k.unit)]
    .some((st) => ((st.s === "pointer" && st.output) || st.s === "storeElement") && storageBytes(st.type) < 4);
}

/**
 * The WGSL kernel printer: kernel/kernel_text.ts's walk in WGSL syntax (kernel variables
 * `k_name`), plus what WGSL keeps of its own: byte addresses into the one memory,
 * scratch as function-scope arrays indexed by element, scalar loops only, and the
 * workgroup arrays and barriers.
 */
class WgslKernelPrinter extends KernelTextPrinter {
  /** Pointers into scratch: an element index into its array (others are byte addresses in memory). */
  private readonly slotPointers = new Map<string, Scratch>();
  protected readonly values: WgslValues = new WgslValues(this.k.graph, {
    load: (n: Node) => {
      const t = n.type as ElementType;
      const at = this.loadAt(n);
      if ("pointer" in at) {
        const slot = this.slotPointers.get(at.pointer);
        if (slot === undefined) return loadAs(t, address(`k_${at.pointer}`, at.index, t));
        const e = `k_${at.pointer} + ${at.index}`;
        return slot.packed === true ? `((${slot.name}[xk_pw(${e})] >> xk_ps(${e})) & 0xffffu)` : `${slot.name}[${e}]`;
      }
      if ((n.attr as number) >= this.k.buffers) throw new Error(`load ${n.id} of a row buffer without its slot's pointer`);
      return loadAs(t, address(`i32(args[${n.attr as number}])`, at.offset, t));
    },
    leaf: (n) => this.leaf(n),
  });
  protected readonly parenthesizeTop = true;
  protected readonly alwaysTrue = "true";

  get math(): ReadonlySet<WgslMathName> { return this.values.math; }
  protected declare(type: NodeType, name: string, value: string, mutable: boolean): string {
    return `${mutable ? "var" : "let"} ${name}: ${wgslType(type)} = ${value};`;
  }
  protected variable(name: string): string { return `k_${name}`; }
  protected indexMin(a: string, b: string): string { return `min(${a}, ${b})`; }
  protected combineExpr(kind: ReducerKind, t: ElementType, x: string, y: string): string { return this.values.binary(COMBINE_OP[kind], t, x, y); }
  protected constant(t: ElementType, value: number | bigint): string { return wgslConst(t, value); }
  protected scratchElement(x: Scratch, slot: string): string { return `${x.name}[${slot} * ${x.length}]`; }
  protected storeElement(buffer: number, t: ElementType, index: string, value: string): string {
    return storeAs(t, address(`i32(args[${buffer}])`, index, t), value);
  }
  protected whileLoop(index: string, stop: string, step: number, indent: string): { open: string[]; close: string[] } {
    return { open: [`${indent}while (k_${index} < ${stop}) {`], close: [`${indent}  k_${index} = k_${index} + ${step};`, `${indent}}`] };
  }

  protected own(st: Stmt, indent: string): void {
    const lines = this.lines;
    switch (st.s) {
      case "pointer":
        lines.push(`${indent}let k_${st.name}: i32 = ${address(`i32(args[${st.buffer}])`, this.indexExpr(st.offset), st.type)};`);
        return;
      // No vector form on this target: what a target without one runs.
      case "vector": this.print(st.otherwise ?? [], indent); return;
      case "loop": {
        if (st.lanes !== 1 || st.copies !== 1) decline(`a loop of ${st.lanes} lanes × ${st.copies} copies has no WGSL form`);
        const { open, close } = this.whileLoop(st.index, typeof st.stop === "number" ? String(st.stop) : `k_${st.stop}`, 1, indent);
        appendAll(lines, open);
        this.block(st.body, `${indent}  `);
        appendAll(lines, close);
        return;
      }
      case "store": {
        const slot = this.slotPointers.get(st.pointer);
        // Into a row buffer (scratch holds values as WGSL holds them), or into memory.
        const v = this.nameOf(st.node);
        if (slot === undefined) lines.push(`${indent}${storeAs(st.type, address(`k_${st.pointer}`, this.at, st.type), v)}`);
        else if (slot.packed !== true) lines.push(`${indent}${slot.name}[k_${st.pointer} + ${this.at}] = ${v};`);
        else {
          // The lane's own word: no other lane writes its other half.
          const e = `k_${st.pointer} + ${this.at}`;
          lines.push(`${indent}${slot.name}[xk_pw(${e})] = (${slot.name}[xk_pw(${e})] & ~(0xffffu << xk_ps(${e}))) | ((${v} & 0xffffu) << xk_ps(${e}));`);
        }
        return;
      }
      case "accumulator": {
        if (st.lanes !== 1 || st.copies !== 1) decline(`accumulators of ${st.lanes} lanes × ${st.copies} copies have no WGSL form`);
        return decline(`accumulator ${st.name} starts assigned`);
      }
      case "slot": {
        const x = this.scratchOf(st.scratch);
        this.slotPointers.set(st.name, x);
        lines.push(`${indent}let k_${st.name}: i32 = ${this.indexExpr(st.slot)} * ${x.length};`);
        return;
      }
      case "sharedStore": lines.push(`${indent}${st.shared}[${this.indexExpr(st.index)}] = k_${st.acc};`); return;
      case "sharedLoad": {
        const name = `${st.shared}_${st.node}`;
        lines.push(`${indent}let ${name} = ${st.shared}[${this.indexExpr(st.index)}];`);
        this.bindLeaf(st.node, name);
        return;
      }
      case "barrier": lines.push(`${indent}workgroupBarrier();`); return;
      case "subgroupCombine": {
        const accs = st.accs.map(({ acc, shared }) => ({ v: `k_${acc}`, shared, kind: this.kindOf(acc), type: this.accumulator(acc).type }));
        for (const a of accs) {
          const combined = subgroupCombineExpr(a.kind, a.type, a.v) ?? decline(`a ${a.kind} reduction of ${a.type} has no subgroup form`);
          lines.push(`${indent}${a.v} = ${combined};`);
        }
        lines.push(`${indent}if (u32(k_${this.k.workgroup!.lane}) == xk_sg_first) {`);
        for (const a of accs) lines.push(`${indent}  ${a.shared}[xk_sg_rank] = ${a.v};`);
        lines.push(`${indent}}`, `${indent}workgroupBarrier();`);
        for (const a of accs) lines.push(`${indent}${a.v} = ${a.shared}[0];`);
        // The subgroups' totals in rank order (every lane the same order: each gets the same total).
        lines.push(`${indent}for (var j = 1u; j < xk_sg_count; j = j + 1u) {`);
        for (const a of accs) lines.push(`${indent}  ${a.v} = ${this.combineExpr(a.kind, a.type, a.v, `${a.shared}[j]`)};`);
        lines.push(`${indent}}`);
        return;
      }
      case "at": return decline(`an \`at\` of ${st.lanes} lanes has no WGSL form`);
      default: decline(`the kernel statement ${st.s} has no WGSL form (this target has no vectors)`);
    }
  }
}

const address = (base: string, index: string, t: ElementType): string => `(${base} + ${index} * ${storageBytes(t)})`;

/**
 * Words of a row buffer of `rowElements` 2-byte values packed two to a word, for a
 * workgroup of `size` lanes (a power of two) striding the row: element e is the
 * lane's (e mod size) k-th (k = e div size), and a lane's elements k and k + 1 (k even)
 * share a word, its own, word (k div 2) · size + lane; consecutive lanes keep to
 * consecutive words.
 */
export const packedRowWords = (rowElements: number, size: number): number => Math.ceil(Math.ceil(rowElements / size) / 2) * size;

/** xk_pw(e): the word of packed element e (packedRowWords); xk_ps(e): the shift of its half in it. */
function packedRowHelpers(size: number): string {
  const p = Math.log2(size);
  return [
    `fn xk_pw(e: i32) -> i32 { return ((e >> ${p + 1}u) << ${p}u) | (e & ${size - 1}); }`,
    `fn xk_ps(e: i32) -> u32 { return (u32(e >> ${p}u) & 1u) * 16u; }`,
  ].join("\n");
}

/**
 * Prints kernel k as a WGSL compute shader over `units` work units (its index
 * parameters: begin 0, end `units`); a statement it has no form for (a vector
 * accumulator's lanes, a skewed row pipeline's dependent steps) is a DeclinedError.
 */
export function printKernelWgsl(k: Kernel, units: number, maxWorkgroupsPerDimension: number): WgslKernel {
  const p = new WgslKernelPrinter(k);
  const unknown = k.params.find((p) => p !== "begin" && p !== "end");
  if (unknown !== undefined) decline(`a kernel whose units depend on one another (parameter ${unknown}) cannot run one unit an invocation`);
  // A workgroup a unit (Kernel.workgroup: its invocations run the unit together), or an invocation a unit.
  const wg = k.workgroup;
  const size = wg?.size ?? WORKGROUP_SIZE;
  const groups = Math.max(1, wg === undefined ? Math.ceil(units / WORKGROUP_SIZE) : units);
  const groupsX = Math.min(groups, maxWorkgroupsPerDimension);
  const groupsY = Math.ceil(groups / groupsX);
  // From the workgroup's id only, so that the return below leaves the barriers in uniform control flow.
  const unitIndex = wg === undefined ? [`  let k_${k.units.index}: i32 = k_begin + i32(gid.x + gid.y * ${groupsX * WORKGROUP_SIZE}u);`]
    : [`  let k_${k.units.index}: i32 = k_begin + i32(wid.x + wid.y * ${groupsX}u);`, `  let k_${wg.lane}: i32 = i32(lid.x);`];
  // A workgroup combining its lanes' values through subgroup operations.
  const sg = wg?.subgroups === true ? wg : undefined;
  const subgroups = sg !== undefined;
  p.printKernelBody("  ", { open: [...unitIndex, `  if (k_${k.units.index} >= k_end) { return; }`, ...(sg !== undefined ? subgroupPrologue(`k_${sg.lane}`, sg.size) : [])], close: [] });

  const atomic = storesNarrow(k);
  const declarations = [
    ...(subgroups ? ["enable subgroups;"] : []),
    `@group(0) @binding(0) var<storage, read_write> mem: array<${atomic ? "atomic<u32>" : "u32"}>;`,
    `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
    WGSL_HELPERS,
    memoryHelpers(atomic),
    ...wgslMathSources(p.math),
    ...(wg?.shared ?? []).map((x) => `var<workgroup> ${x.name}: array<${wgslType(x.type)}, ${x.length}>;`),
    // A workgroup's scratch (its row's buffers) is the workgroup's: its lanes run the row together.
    ...(wg === undefined ? [] : (k.scratch ?? []).map((x) => x.packed === true
      ? `var<workgroup> ${x.name}: array<u32, ${x.slots * packedRowWords(x.length, wg.size)}>;`
      : `var<workgroup> ${x.name}: array<${wgslType(x.type)}, ${x.slots * x.length}>;`)),
    ...(wg !== undefined && (k.scratch ?? []).some((x) => x.packed === true) ? [packedRowHelpers(wg.size)] : []),
    ...(sg !== undefined ? [SUBGROUP_FLOAT_HELPERS, `var<workgroup> xk_sg_leaders: array<atomic<u32>, ${sg.size / 32}>;`] : []),
  ];
  const source = [
    ...declarations,
    `@compute @workgroup_size(${size})`,
    wg === undefined ? `fn main(@builtin(global_invocation_id) gid: vec3<u32>) {`
      : `fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {`,
    `  let k_begin: i32 = 0;`,
    `  let k_end: i32 = ${units};`,
    // A zero the compiler cannot see (the host leaves the argument slot's rest zero): float constants go through it.
    `  xk_opaque = args[${k.buffers}];`,
    ...(wg !== undefined ? [] : (k.scratch ?? []).map((x) => `  var ${x.name}: array<${wgslType(x.type)}, ${x.slots * x.length}>;`)),
    ...p.lines,
    `}`,
  ].join("\n");
  // For dump(): the row's values a workgroup keeps in its memory (a row pipeline's row buffers).
  const rowBuffers = wg === undefined ? [] : (k.scratch ?? []).map((x) => `${x.name} ${x.type}[${x.slots * x.length}]${x.packed === true ? " packed" : ""}`);
  return {
    source, buffers: k.buffers, units, invocationsPerUnit: wg?.size ?? 1, workgroups: [groupsX, groupsY], ...(subgroups ? { subgroups } : {}),
    ...(rowBuffers.length > 0 ? { what: `row buffers in workgroup memory: ${rowBuffers.join(", ")}` } : {}),
  };
}

/**
 * A kernel copying `bytes` (a multiple of 4) from its buffer 0 to its buffer 1, a word
 * an invocation: WebGPU copies no buffer onto itself, and every array of a device lives
 * in one (a result that is a parameter, a constant or another result's value).
 */
export function copyKernelWgsl(bytes: number, maxWorkgroupsPerDimension: number): WgslKernel {
  const words = Math.ceil(bytes / 4);
  const groups = Math.max(1, Math.ceil(words / WORKGROUP_SIZE));
  const groupsX = Math.min(groups, maxWorkgroupsPerDimension);
  const source = [
    `@group(0) @binding(0) var<storage, read_write> mem: array<u32>;`,
    `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
    `@compute @workgroup_size(${WORKGROUP_SIZE})`,
    `fn main(@builtin(global_invocation_id) gid: vec3<u32>) {`,
    `  let i = gid.x + gid.y * ${groupsX * WORKGROUP_SIZE}u;`,
    `  if (i >= ${words}u) { return; }`,
    `  mem[args[1] / 4u + i] = mem[args[0] / 4u + i];`,
    `}`,
  ].join("\n");
  return { source, buffers: 2, units: words, invocationsPerUnit: 1, workgroups: [groupsX, Math.ceil(groups / groupsX)] };
}
