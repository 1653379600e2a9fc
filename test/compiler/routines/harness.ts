// Test support for the compiled routines: a computation whose root is the op under
// test with parameters as operands runs (1) as one kernel straight from the routine
// table, whole and split into uneven ranges of its parallel extent, and (2) through
// compile(); both are compared bit for bit with the reference interpreter.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { evaluate, Literal, XlaBuilder, parameter, scalarShape, type Computation, type ElementType, type XlaOp } from "../../../src/index.js";
import { compile, compileSync } from "../../../src/compiler/index.js";
import { runCheckText, type CheckCaseResult } from "../../../src/check/runner.js";
import { getBackend, registerBackend, type BackendEntry } from "../../../src/runtime/backend_registry.js";
import { compileRoutine } from "../../../src/compiler/routines.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES, type WasmKernel } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import type { ArrayShape } from "../../../src/types/shape.js";
import { elementCount } from "../../../src/types/shape.js";

const TARGET = detectWasmTarget();
const alignUp = (x: number): number => Math.ceil(x / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;

/**
 * Runs a kernel as the executor does: operands, results (poisoned first, so an
 * element left unwritten shows) and one scratch region per call in a fresh memory,
 * over the given ranges of its work in order; returns the results.
 */
function runKernel(kernel: WasmKernel, c: Computation, args: readonly Literal[], ranges: readonly [number, number][] = [[0, kernel.parallelExtent]]): Literal[] {
  const shapes = (c.root.shape.kind === "tuple" ? c.root.shape.elements : [c.root.shape]) as ArrayShape[];
  const results = shapes.map((s) => Literal.zeros(s));
  let offset = BUFFER_ALIGNMENT;
  const place = (bytes: number): number => { const at = offset; offset = alignUp(offset + Math.max(bytes, 1)); return at; };
  const argAt = args.map((a) => place(a.data.byteLength));
  const resultAt = results.map((r) => place(r.data.byteLength));
  const scratchAt = ranges.map(() => place(kernel.scratchBytes));
  const memory = new WebAssembly.Memory({ initial: Math.ceil(offset / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: TARGET.sharedMemory });
  const bytes = new Uint8Array(memory.buffer);
  bytes.fill(0xa5);
  args.forEach((a, i) => bytes.set(new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength), argAt[i]!));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernel.bytes), { env: { memory } });
  const run = instance.exports["run"] as (...xs: number[]) => void;
  ranges.forEach(([b, e], s) => run(...argAt, ...resultAt, ...(kernel.scratchBytes > 0 ? [scratchAt[s]!] : []), b, e));
  results.forEach((r, i) => new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength).set(bytes.subarray(resultAt[i]!, resultAt[i]! + r.data.byteLength)));
  return results;
}

export { rng } from "../../support/prng.js";

export function binaryComputation(b: XlaBuilder, name: string, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sb = b.createSubBuilder(name);
  return sb.build(op(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

export function randomLiteral(next: () => number, t: ElementType, dims: readonly number[], range = 100): Literal {
  const n = elementCount(dims);
  const flat = Array.from({ length: n }, () => {
    if (t === "f32" || t === "f64") return (next() * 2 - 1) * range;
    const v = Math.floor((next() * 2 - 1) * range);
    return t === "s64" || t === "u64" ? BigInt(t === "u64" ? Math.abs(v) : v) : t.startsWith("u") ? Math.abs(v) : v;
  });
  return Literal.fromValues(t, [...dims], flat);
}

/** What the comparison forgives: anyNaN, the sign and payload of NaN results (which neither JS nor WebAssembly fixes). */
export interface CompareOptions {
  readonly anyNaN?: boolean;
}

/** A copy of a float literal's bytes with every NaN made the one quiet NaN. */
function canonicalNaNs(lit: Literal): Uint8Array {
  const d = lit.data;
  if (d instanceof Float32Array) return new Uint8Array(Float32Array.from(d, (x) => (Number.isNaN(x) ? NaN : x)).buffer);
  if (d instanceof Float64Array) return new Uint8Array(Float64Array.from(d, (x) => (Number.isNaN(x) ? NaN : x)).buffer);
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

function sameBits(actual: Literal, expected: Literal, what: string, options: CompareOptions = {}): void {
  assert.deepEqual(actual.dimensions, expected.dimensions, `${what}: dimensions`);
  const bytes = (l: Literal): Uint8Array => (options.anyNaN === true ? canonicalNaNs(l) : new Uint8Array(l.data.buffer, l.data.byteOffset, l.data.byteLength));
  const a = bytes(actual);
  const e = bytes(expected);
  if (Buffer.compare(Buffer.from(a), Buffer.from(e)) !== 0) {
    assert.deepEqual(actual.toNumbers(), expected.toNumbers(), `${what}: values`);
    assert.fail(`${what}: same values, different bits`);
  }
}

/** Splits [0, n) into 3 uneven ranges (some possibly empty). */
function ranges(n: number): [number, number][] {
  const a = Math.floor(n / 3);
  const b = Math.floor((2 * n) / 3) + (n > 2 ? 1 : 0);
  return [[0, a], [a, Math.min(b, n)], [Math.min(b, n), n]];
}

/**
 * Checks the routine for `c`'s root (all operands parameters) against `expected` (by
 * default the interpreter's result): kernel whole and split. Returns the kernel's
 * parallel extent.
 */
export function checkRoutine(
  c: Computation, args: readonly Literal[], what: string, options: CompareOptions = {}, expected: Literal = evaluate(c, args),
): number {
  const kernel = compileRoutine(c.root, { wasm: TARGET });
  if (isDeclined(kernel)) assert.fail(`${what}: unsupported: ${kernel.declined}`);
  const parts = expected.shape.kind === "tuple" ? expected.elements : [expected];
  runKernel(kernel, c, args).forEach((r, i) => sameBits(r, parts[i]!, `${what} (kernel, result ${i})`, options));
  runKernel(kernel, c, args, ranges(kernel.parallelExtent)).forEach((r, i) => sameBits(r, parts[i]!, `${what} (kernel in 3 ranges, result ${i})`, options));
  return kernel.parallelExtent;
}

/** compile() runs `c` with `opcodeName` compiled (no interpreted step) and matches the interpreter bit for bit. */
export async function checkCompiled(c: Computation, args: readonly Literal[], what: string, expected: Literal = evaluate(c, args)): Promise<void> {
  const exe = await compile(c);
  try {
    assert.deepEqual(exe.stats.interpreted, [], `${what}: interpreted steps`);
    const actual = exe.run(args);
    if (expected.shape.kind === "tuple") expected.elements.forEach((e, i) => sameBits(actual.elements[i]!, e, `${what} (compiled program, result ${i})`));
    else sameBits(actual, expected, `${what} (compiled program)`);
  } finally {
    exe.delete();
  }
}

/** The StableHLO interpreter tests, read where they are (never copied into the project). */
export const CONFORMANCE = join(process.cwd(), "..", "shared", "conformance", "stablehlo", "interpret");

/** What the compiled programs of the cases run through `conformanceOnWasm` did, by opcode. */
interface StepCounts {
  readonly kernels: Map<string, number>;
  readonly interpreted: Map<string, number>;
}

const counts: StepCounts = { kernels: new Map(), interpreted: new Map() };
let liftedBackend: BackendEntry | undefined;

/**
 * Runs one conformance file's cases on the wasm backend with their constants made
 * parameters (so that the compiler does not fold them away and the generated kernels
 * run), checked against the file's expected values. Returns the case results and how
 * many steps of each opcode ran as kernels and on the interpreter.
 */
export function conformanceOnWasm(file: string): { results: CheckCaseResult[]; kernels: Map<string, number>; interpreted: Map<string, number> } {
  if (liftedBackend === undefined) {
    const wasm = getBackend("wasm");
    liftedBackend = {
      host: { ...wasm.host, name: "wasm-routines-lifted" },
      device: { ...wasm.device, name: "wasm-routines-lifted" },
      // The check runner passes the case's constants as arguments (lift_constants.ts).
      evaluate: (computation, args, options) => {
        const executable = compileSync(computation);
        try {
          const p = executable.program;
          const bump = (m: Map<string, number>, key: string): void => { m.set(key, (m.get(key) ?? 0) + 1); };
          for (const step of p.steps) {
            if (step.kind === "kernel") bump(counts.kernels, p.kernels[step.kernel]!.name.split(" ")[0]!);
            else if (step.kind === "interpret") bump(counts.interpreted, step.opcode);
          }
          return executable.run(args, options);
        } finally {
          executable.delete();
        }
      },
    };
    registerBackend(liftedBackend);
  }
  counts.kernels.clear();
  counts.interpreted.clear();
  const path = join(CONFORMANCE, file);
  assert.ok(existsSync(path), `${path}: conformance data not found`);
  const results = runCheckText(readFileSync(path, "utf8"), file, { backend: liftedBackend.host.name });
  return { results, kernels: new Map(counts.kernels), interpreted: new Map(counts.interpreted) };
}
