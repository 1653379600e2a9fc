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
// is function-scope arrays: each invocation runs its own row.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { DeclinedError } from "../kernel/declined.js";
import { isColumnStmt, type IndexExpr, type Kernel, type Scratch, type Stmt } from "../kernel/kernel_ir.js";
import type { Node } from "../kernel/graph.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { WGSL_HELPERS, WgslValues, wgslConst, wgslType, wrap } from "./wgsl_values.js";
import { wgslMathSource } from "./wgsl_math.js";

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
}

const fail = (why: string): never => {
  throw new DeclinedError(why);
};

const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/** The reducer kinds as the value renderer's binary ops. */
export const COMBINE_OP: Readonly<Record<ReducerKind, string>> = { add: "add", mul: "mul", max: "max", min: "min", and: "and", or: "or" };

/** An i32 WGSL expression of index expression e. */
function indexExpr(e: IndexExpr, names: ReadonlyMap<number, string>): string {
  switch (e.op) {
    case "const": return String(e.value);
    case "index": return `k_${e.name}`;
    case "node": return names.get(e.id) ?? (() => { throw new Error(`index node ${e.id} used before it was computed`); })();
    case "min": return `min(${indexExpr(e.a, names)}, ${indexExpr(e.b, names)})`;
    default: return `(${indexExpr(e.a, names)} ${{ add: "+", sub: "-", mul: "*", div: "/", rem: "%" }[e.op]} ${indexExpr(e.b, names)})`;
  }
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
  const held = wgslType(t) === "f32" || ELEMENT_TYPES[t].kind !== "float" ? wgslType(t) : "u32";
  const raw = bytes === 4 ? `xk_ld32(${a})` : bytes === 2 ? `xk_ld16(${a})` : `xk_ld8(${a})`;
  if (held === "f32") return `bitcast<f32>(${raw})`;
  if (held === "i32") return wrap(t, `bitcast<i32>(${raw})`);
  return raw;
}

/** The statement storing value v of type t at byte address a. */
export function storeAs(t: ElementType, a: string, v: string): string {
  const bytes = storageBytes(t);
  const word = wgslType(t) === "u32" || (ELEMENT_TYPES[t].kind === "float" && t !== "f32") ? v : `bitcast<u32>(${v})`;
  return `xk_st${bytes * 8}(${a}, ${word});`;
}

/** Whether the kernel stores elements narrower than a word (its memory is then atomic). */
function storesNarrow(k: Kernel): boolean {
  let narrow = false;
  const visit = (body: readonly Stmt[]): void => {
    for (const st of body) {
      if ((st.s === "pointer" && st.output) || st.s === "storeElement") narrow ||= storageBytes(st.type) < 4;
      if ("body" in st) visit(st.body);
      if ("then" in st) { visit(st.then); visit(st.otherwise); }
      if (st.s === "vector") visit(st.otherwise ?? []);
    }
  };
  visit(k.prologue ?? []);
  visit(k.unit);
  return narrow;
}

/**
 * Prints kernel k as a WGSL compute shader over `units` work units (its index
 * parameters: begin 0, end `units`); a statement it has no form for (a vector
 * accumulator's lanes, a skewed row pipeline's dependent steps) is a DeclinedError.
 */
export function printKernelWgsl(k: Kernel, units: number, maxWorkgroupsPerDimension: number): WgslKernel {
  const g = k.graph;
  const leaves = new Map<number, string>();
  const scratch = new Map((k.scratch ?? []).map((x) => [x.name, x]));
  /** Pointers: a byte address in memory, or an element index into a scratch array. */
  const slotPointers = new Map<string, Scratch>();
  let at = `k_${k.inner}`;
  const address = (base: string, index: string, t: ElementType): string => `(${base} + ${index} * ${storageBytes(t)})`;
  const values: WgslValues = new WgslValues(g, {
    load: (n: Node) => {
      const t = n.type as ElementType;
      const r = k.rowLoads.get(n.id);
      if (r !== undefined) {
        const i = r.stride === 1 ? at : `${at} * ${r.stride}`;
        const slot = slotPointers.get(r.pointer);
        return slot !== undefined ? `${slot.name}[k_${r.pointer} + ${i}]` : loadAs(t, address(`k_${r.pointer}`, i, t));
      }
      if ((n.attr as number) >= k.buffers) throw new Error(`load ${n.id} of a row buffer without its slot's pointer`);
      const offset = values.names.get(n.args[0]!);
      if (offset === undefined) throw new Error(`load ${n.id}: its offset was not computed before it`);
      return loadAs(t, address(`i32(args[${n.attr as number}])`, offset, t));
    },
    leaf: (n) => leaves.get(n.id) ?? (() => { throw new Error(`leaf node ${n.id} (${n.op}) is bound to no index variable`); })(),
  });
  const nameOf = (id: number): string => values.v(id);
  const accumulators = new Map<string, Extract<Stmt, { s: "accumulator" }>>();
  const accumulator = (name: string): Extract<Stmt, { s: "accumulator" }> =>
    accumulators.get(name) ?? (() => { throw new Error(`accumulator ${name} used before its declaration`); })();
  /** x ⊕ y by accumulator acc's reducer. */
  const combine = (acc: string, x: string, y: string): string => {
    const a = accumulator(acc);
    if (a.kind === "generic") throw new Error(`accumulator ${acc} of a generic reducer combined`);
    return values.binary(COMBINE_OP[a.kind], a.type, x, y);
  };
  const lines: string[] = [];
  const scopes: Set<number>[] = [new Set()];
  const inBlock = (f: () => void): void => {
    scopes.push(new Set());
    f();
    scopes.pop();
  };
  const block = (body: readonly Stmt[], indent: string): void => inBlock(() => print(body, indent));
  const bindLeaf = (node: number, name: string): void => {
    leaves.set(node, name);
    values.names.set(node, name);
  };
  const print = (body: readonly Stmt[], indent: string): void => {
    for (const st of body) {
      switch (st.s) {
        case "index": lines.push(`${indent}${st.mutable ? "var" : "let"} k_${st.name}: i32 = ${indexExpr(st.value, values.names)};`); break;
        case "bind": bindLeaf(st.node, `k_${st.name}`); break;
        case "values": {
          const fresh = st.ids.filter((id) => !scopes.some((x) => x.has(id)));
          values.emit(fresh, lines, indent);
          for (const id of fresh) scopes[scopes.length - 1]!.add(id);
          break;
        }
        case "pointer":
          lines.push(`${indent}let k_${st.name}: i32 = ${address(`i32(args[${st.buffer}])`, indexExpr(st.offset, values.names), st.type)};`);
          break;
        // No vector form on this target: what a target without one runs.
        case "vector": print(st.otherwise ?? [], indent); break;
        case "loop": {
          if (st.lanes !== 1 || st.copies !== 1) fail(`a loop of ${st.lanes} lanes × ${st.copies} copies has no WGSL form`);
          lines.push(`${indent}while (k_${st.index} < ${typeof st.stop === "number" ? st.stop : `k_${st.stop}`}) {`);
          block(st.body, `${indent}  `);
          lines.push(`${indent}  k_${st.index} = k_${st.index} + 1;`, `${indent}}`);
          break;
        }
        case "store": lines.push(`${indent}${storeAs(st.type, address(`k_${st.pointer}`, at, st.type), nameOf(st.node))}`); break;
        case "accumulator": {
          if (st.lanes !== 1 || st.copies !== 1) fail(`accumulators of ${st.lanes} lanes × ${st.copies} copies have no WGSL form`);
          const from = st.start;
          if ("assigned" in from) return fail(`accumulator ${st.name} starts assigned`);
          accumulators.set(st.name, st);
          const start = "identity" in from ? wgslConst(st.type, from.identity) : nameOf(from.node);
          lines.push(`${indent}var k_${st.name}: ${wgslType(st.type)} = ${start};`);
          break;
        }
        case "combine": lines.push(`${indent}k_${st.acc} = ${combine(st.acc, `k_${st.acc}`, nameOf(st.node))};`); break;
        case "update": {
          // The results into temporaries first: a result may be another accumulator's parameter.
          lines.push(`${indent}{`);
          st.params.forEach((p, i) => values.names.set(p, i < st.accs.length ? `k_${st.accs[i]!}` : nameOf(st.elements[i - st.accs.length]!)));
          block([{ s: "values", ids: st.ids }], `${indent}  `);
          st.results.forEach((r, i) => lines.push(`${indent}  let next${i}: ${wgslType(g.node(r).type)} = ${nameOf(r)};`));
          st.accs.forEach((x, i) => lines.push(`${indent}  k_${x} = next${i};`));
          lines.push(`${indent}}`);
          break;
        }
        case "result": {
          let name = `k_${st.acc}`;
          if (st.init !== undefined) {
            name = `res${st.node}`;
            lines.push(`${indent}let ${name}: ${wgslType(accumulator(st.acc).type)} = ${combine(st.acc, nameOf(st.init), `k_${st.acc}`)};`);
          }
          bindLeaf(st.node, name);
          break;
        }
        case "storeElement":
          lines.push(`${indent}${storeAs(st.type, address(`i32(args[${st.buffer}])`, indexExpr(st.index, values.names), st.type), nameOf(st.node))}`);
          break;
        case "scope": lines.push(`${indent}{`); block(st.body, `${indent}  `); lines.push(`${indent}}`); break;
        case "if": {
          lines.push(`${indent}if (${st.less.map((x) => `${indexExpr(x.a, values.names)} < ${indexExpr(x.b, values.names)}`).join(" && ") || "true"}) {`);
          block(st.then, `${indent}  `);
          if (st.otherwise.length > 0) {
            lines.push(`${indent}} else {`);
            block(st.otherwise, `${indent}  `);
          }
          lines.push(`${indent}}`);
          break;
        }
        case "slot": {
          const x = scratch.get(st.scratch) ?? (() => { throw new Error(`scratch ${st.scratch} is not declared`); })();
          slotPointers.set(st.name, x);
          lines.push(`${indent}let k_${st.name}: i32 = ${indexExpr(st.slot, values.names)} * ${x.length};`);
          break;
        }
        case "scratchStore": {
          const x = scratch.get(st.scratch)!;
          lines.push(`${indent}${x.name}[${indexExpr(st.slot, values.names)} * ${x.length}] = ${nameOf(st.node)};`);
          break;
        }
        case "scratchLoad": {
          const x = scratch.get(st.scratch)!;
          const name = `${st.scratch}_${st.node}`;
          lines.push(`${indent}let ${name}: ${wgslType(x.type)} = ${x.name}[${indexExpr(st.slot, values.names)} * ${x.length}];`);
          bindLeaf(st.node, name);
          break;
        }
        case "for": {
          lines.push(`${indent}while (k_${st.index} < ${st.stop}) {`);
          block(st.body, `${indent}  `);
          lines.push(`${indent}  k_${st.index} = k_${st.index} + ${st.step};`, `${indent}}`);
          break;
        }
        case "at": {
          if (st.lanes !== 1) fail(`an \`at\` of ${st.lanes} lanes has no WGSL form`);
          const outer = at;
          at = `k_${st.index}`;
          print(st.body, indent);
          at = outer;
          break;
        }
        case "sharedStore": lines.push(`${indent}${st.shared}[${indexExpr(st.index, values.names)}] = k_${st.acc};`); break;
        case "sharedLoad": {
          const name = `${st.shared}_${st.node}`;
          lines.push(`${indent}let ${name} = ${st.shared}[${indexExpr(st.index, values.names)}];`);
          bindLeaf(st.node, name);
          break;
        }
        case "barrier": lines.push(`${indent}workgroupBarrier();`); break;
        default:
          if (isColumnStmt(st) && st.s === "assign") {
            lines.push(`${indent}k_${st.acc} = ${nameOf(st.node)};`);
            break;
          }
          fail(`the kernel statement ${st.s} has no WGSL form (this target has no vectors)`);
      }
    }
  };

  const unknown = k.params.find((p) => p !== "begin" && p !== "end");
  if (unknown !== undefined) fail(`a kernel whose units depend on one another (parameter ${unknown}) cannot run one unit an invocation`);
  // A workgroup a unit (Kernel.workgroup: its invocations run the unit together), or an invocation a unit.
  const wg = k.workgroup;
  const size = wg?.size ?? WORKGROUP_SIZE;
  const groups = Math.max(1, wg === undefined ? Math.ceil(units / WORKGROUP_SIZE) : units);
  const groupsX = Math.min(groups, maxWorkgroupsPerDimension);
  const groupsY = Math.ceil(groups / groupsX);
  const body: string[] = [];
  lines.length = 0;
  print(k.prologue ?? [], "  ");
  if (wg === undefined) {
    lines.push(`  let k_${k.units.index}: i32 = k_begin + i32(gid.x + gid.y * ${groupsX * WORKGROUP_SIZE}u);`);
  } else {
    // From the workgroup's id only, so that the return below leaves the barriers in uniform control flow.
    lines.push(`  let k_${k.units.index}: i32 = k_begin + i32(wid.x + wid.y * ${groupsX}u);`, `  let k_${wg.lane}: i32 = i32(lid.x);`);
  }
  lines.push(`  if (k_${k.units.index} >= k_end) { return; }`);
  inBlock(() => print(k.unit, "  "));
  for (const l of lines) body.push(l);

  const atomic = storesNarrow(k);
  const declarations = [
    `@group(0) @binding(0) var<storage, read_write> mem: array<${atomic ? "atomic<u32>" : "u32"}>;`,
    `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
    WGSL_HELPERS,
    memoryHelpers(atomic),
    ...[...values.math].map(wgslMathSource),
    ...(wg?.shared ?? []).map((x) => `var<workgroup> ${x.name}: array<${wgslType(x.type)}, ${x.length}>;`),
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
    ...(k.scratch ?? []).map((x) => `  var ${x.name}: array<${wgslType(x.type)}, ${x.slots * x.length}>;`),
    ...body,
    `}`,
  ].join("\n");
  return { source, buffers: k.buffers, units, invocationsPerUnit: wg?.size ?? 1, workgroups: [groupsX, groupsY] };
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
