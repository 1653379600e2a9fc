// Walking the IR: one post-order walk, a users index, and a structural key that says
// when two instructions compute the same value (for common-subexpression elimination).

import type { Literal } from "../types/literal.js";
import { shapeToString } from "../types/shape.js";
import { Computation, type HloModule, type Instruction } from "./computation.js";

/** Every instruction `roots` depend on, operands before users, each once (iterative: deep chains do not overflow the stack). */
export function postOrder(roots: readonly Instruction[]): Instruction[] {
  const out: Instruction[] = [];
  const done = new Set<Instruction>();
  const stack: { inst: Instruction; next: number }[] = [];
  for (const root of roots) {
    if (done.has(root)) continue;
    stack.push({ inst: root, next: 0 });
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.inst.operands.length) {
        const operand = top.inst.operands[top.next++]!;
        if (!done.has(operand)) stack.push({ inst: operand, next: 0 });
        continue;
      }
      stack.pop();
      if (!done.has(top.inst)) {
        done.add(top.inst);
        out.push(top.inst);
      }
    }
  }
  return out;
}

/** For each instruction of `computation`, the instructions that use it (in instruction order, once per use). */
export function usersOf(computation: Computation): Map<Instruction, Instruction[]> {
  const users = new Map<Instruction, Instruction[]>();
  for (const inst of computation.instructions) users.set(inst, []);
  for (const inst of computation.instructions) for (const o of inst.operands) users.get(o)?.push(inst);
  return users;
}

/** Constants with more elements than this are never considered equal by structure (their key would be as big as they are). */
const MAX_KEYED_LITERAL_ELEMENTS = 1024;

const identities = new WeakMap<object, number>();
let nextIdentity = 1;
function identityOf(x: object): number {
  let id = identities.get(x);
  if (id === undefined) identities.set(x, (id = nextIdentity++));
  return id;
}

/** 64 bits of FNV-1a over the literal's storage bytes (two 32-bit lanes), with its shape. */
function literalHash(lit: Literal): string {
  const bytes = new Uint8Array(lit.data.buffer, lit.data.byteOffset, lit.data.byteLength);
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ bytes.length;
  for (let i = 0; i < bytes.length; i++) {
    h1 = Math.imul(h1 ^ bytes[i]!, 0x01000193);
    h2 = Math.imul(h2 ^ bytes[i]!, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return `${shapeToString(lit.shape, true)}#${(h1 >>> 0).toString(16)}${(h2 >>> 0).toString(16)}`;
}

function literalKey(lit: Literal, hashLarge = false): string {
  if (lit.shape.kind === "array") {
    if (lit.data.length > MAX_KEYED_LITERAL_ELEMENTS) return hashLarge ? literalHash(lit) : `literal#${identityOf(lit)}`;
    // The storage holds every value exactly (bit patterns for the narrow floats, -0 and NaN payloads as float bits).
    const bits = lit.data instanceof Float32Array ? new Uint32Array(lit.data.buffer, lit.data.byteOffset, lit.data.length)
      : lit.data instanceof Float64Array ? new BigUint64Array(lit.data.buffer, lit.data.byteOffset, lit.data.length)
      : lit.data;
    return `${shapeToString(lit.shape)}[${Array.from(bits as ArrayLike<number | bigint>).join(",")}]`;
  }
  return `(${lit.elements.map((e) => literalKey(e, hashLarge)).join(";")})`;
}

/** How a key names a sub-computation: by identity (within one computation), or by position in a module (across modules). */
type ComputationRef = (c: Computation) => string;
const byIdentity: ComputationRef = (c) => `@${identityOf(c)}`;

function valueKey(v: unknown, ref: ComputationRef = byIdentity, hashLarge = false): string {
  const key = (x: unknown): string => valueKey(x, ref, hashLarge);
  if (v === undefined) return "~";
  if (v === null || typeof v === "boolean" || typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof Computation) return ref(v);
  if (Array.isArray(v)) return `[${v.map(key).join(",")}]`;
  if (typeof v === "object" && "shape" in v && "data" in v && "elements" in v) return literalKey(v as Literal, hashLarge);
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, x]) => `${k}:${key(x)}`).join(",")}}`;
}

/**
 * A string equal for two modules that compute the same thing the same way: every
 * computation's instructions (opcode, shape with layout, operands by position,
 * attributes, sharding), sub-computations by position, large constants by a 64-bit
 * hash of their bytes. Names and metadata do not count. The compile cache's key.
 */
export function moduleFingerprint(module: HloModule): string {
  const index = new Map(module.computations.map((c, i) => [c, i]));
  const ref: ComputationRef = (c) => `@${index.get(c) ?? `?${identityOf(c)}`}`;
  return module.computations.map((c) => {
    const position = new Map(c.instructions.map((inst, i) => [inst, i]));
    const lines = c.instructions.map((inst) => [
      inst.opcode, shapeToString(inst.shape, true), inst.operands.map((o) => position.get(o)).join(","),
      valueKey(inst.attrs, ref, true), inst.sharding ?? "",
    ].join("|"));
    return `${c.parameters.map((p) => position.get(p)).join(",")}>${position.get(c.root)}{${lines.join(";")}}`;
  }).join("\n");
}

/**
 * A string that is equal for two instructions of one computation exactly when they
 * compute the same value from the same operands: opcode, result shape (with layout),
 * operands by id, attributes canonically (sub-computations by identity, constants by
 * content up to MAX_KEYED_LITERAL_ELEMENTS) and shardings (XLA's and Shardy's). Metadata and names do not
 * count. Side-effecting instructions are never equal to each other: callers check
 * OP_TABLE[op].sideEffect themselves.
 */
export function structuralKey(inst: Instruction): string {
  return [
    inst.opcode,
    shapeToString(inst.shape, true),
    inst.operands.map((o) => o.id).join(","),
    valueKey(inst.attrs),
    inst.sharding ?? "",
    inst.sdySharding === undefined ? "" : JSON.stringify(inst.sdySharding),
  ].join("|");
}
