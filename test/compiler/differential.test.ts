// Random programs (random_program.ts: elementwise chains, broadcasts, reductions, dots,
// slices, pads, concatenations over mixed types) compiled with compileSync and run, then
// compared with the interpreter, the specification. What may differ, and by how much,
// follows from the ops each output depends on (its cone):
//
// - Exact cones: integers, pred and floats bit-exact, NaN where the interpreter has NaN.
//   Float add/subtract/multiply/divide/sqrt, converts, compares, shape ops, max/min
//   reductions are exact on both backends: computing an f32 (f16, bf16) op in f32 gives
//   the same as computing it in double and rounding once (53 ≥ 2·24 + 2).
// - Rounded cones: the output depends on an op the compiled backend computes in the
//   value's own precision, as XLA's CPU backend does: f32 (f16, bf16) exp, expm1, log,
//   log1p, tanh, logistic, rsqrt (within 1 to 4 ulps, src/compiler/wasm/math.ts), float
//   add/multiply reductions and dots (reassociated, accumulated in the type) and batch
//   norm. What follows may magnify that (cancellation), so these floats must be within
//   ROUNDED_TOLERANCE · eps · (|expected| + the leaf's largest finite |expected|), eps
//   that of the coarsest type rounded in on the way, with NaN positions and infinities equal.
// - Unbounded elements: a discontinuous op (compare, float→integer convert, floor, ceil,
//   round, sign, is-finite, remainder) of a rounded value may legitimately flip: those
//   elements are not compared; the test asserts they stay a small fraction.
//
// A failing seed is replayed by its number (the message prints its HLO); each bug found
// this way has a minimized test in regressions.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../src/compiler/index.js";
import { GENERATOR_FAILED } from "../../src/compiler/routines.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { HloModule, subcomputationsOf, type Computation, type Instruction } from "../../src/ir/computation.js";
import type { Opcode } from "../../src/ir/opcodes.js";
import { printHlo } from "../../src/text/hlo/index.js";
import { ELEMENT_TYPES, type ElementType } from "../../src/types/element_type.js";
import type { Literal, Scalar } from "../../src/types/literal.js";
import { randomProgram, type RandomProgramOptions } from "./random_program.js";
import { testBackend } from "../support/backend.js";
import { isProgramNativeKernel } from "../../src/compiler/routines.js";

/** The compiled backend under test: XLATS_TEST_BACKEND=native runs the same programs on the native backend. */
const backend = testBackend === "interpreter" ? "wasm" : testBackend;

type ConeClass = "exact" | "rounded" | "unbounded";
const RANK: Record<ConeClass, number> = { exact: 0, rounded: 1, unbounded: 2 };

/** What an instruction's value may differ by: its class and, for rounded cones, the largest epsilon of the types rounded in. */
interface Cone { readonly cls: ConeClass; readonly eps: number }
const EXACT: Cone = { cls: "exact", eps: 0 };
const worst = (cs: readonly Cone[]): Cone =>
  cs.reduce<Cone>((a, c) => ({ cls: RANK[c.cls] > RANK[a.cls] ? c.cls : a.cls, eps: Math.max(a.eps, c.eps) }), EXACT);

/**
 * Multiples of the epsilon a rounded cone may differ by (relative to |expected| + the
 * leaf's scale). The seeds below need at most 5; over 8,000 seeds of these option sets
 * the most was 33 (a power of a power of a batch-norm result).
 */
const ROUNDED_TOLERANCE = 64;

const TRANSCENDENTAL: ReadonlySet<Opcode> = new Set<Opcode>(["exp", "expm1", "log", "log1p", "tanh", "logistic", "rsqrt"]);
const DISCONTINUOUS: ReadonlySet<Opcode> = new Set<Opcode>([
  "compare", "convert", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sign", "isFinite", "remainder",
]);

const isFloat = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "float";
const elementTypeOf = (inst: Instruction): ElementType | undefined => (inst.shape.kind === "array" ? inst.shape.elementType : undefined);

/** 2^-(significand bits): the spacing of floats of type `t` just above 1. */
function eps(t: ElementType): number {
  return t === "f64" ? 2 ** -52 : t === "f32" ? 2 ** -23 : t === "f16" ? 2 ** -10 : t === "bf16" ? 2 ** -7 : 2 ** -2;
}

/** Whether `inst` itself may round differently on the compiled backend (calls: see cones). */
function roundsItself(inst: Instruction): boolean {
  const t = elementTypeOf(inst);
  if (TRANSCENDENTAL.has(inst.opcode) && t !== undefined && t !== "f64") return true;
  if ((inst.opcode === "dot" || inst.opcode === "reduce") && t !== undefined && isFloat(t)) {
    // max/min reductions pick an element: exact. Sums and products reassociate.
    const reducer = inst.opcode === "reduce" ? subcomputationsOf(inst)[0]?.root.opcode : undefined;
    return reducer !== "maximum" && reducer !== "minimum";
  }
  return inst.opcode.startsWith("batchNorm");
}

/** The cone of every instruction of `c`, its parameters' cones given. */
function cones(c: Computation, parameters: readonly Cone[] = []): Map<Instruction, Cone> {
  const out = new Map<Instruction, Cone>();
  for (const inst of c.instructions) {
    const operands = inst.operands.map((o) => out.get(o)!);
    let cone = worst(operands);
    if (inst.opcode === "parameter") cone = parameters[(inst as Instruction<"parameter">).attrs.number] ?? EXACT;
    else if (inst.opcode === "call") cone = worst([cone, cones(subcomputationsOf(inst)[0]!, operands).get(subcomputationsOf(inst)[0]!.root)!]);
    else if (roundsItself(inst)) {
      const shape = inst.shape.kind === "tuple" ? inst.shape.elements[0]! : inst.shape;
      cone = worst([cone, { cls: "rounded", eps: shape.kind === "array" ? eps(shape.elementType) : 0 }]);
    }
    if (cone.cls === "rounded" && DISCONTINUOUS.has(inst.opcode)) {
      // A float→float convert only rounds further: still continuous.
      const t = elementTypeOf(inst);
      if (!(inst.opcode === "convert" && t !== undefined && isFloat(t))) cone = { cls: "unbounded", eps: cone.eps };
    }
    out.set(inst, cone);
  }
  return out;
}

interface Tally { compared: number; unbounded: number; kernels: number; interpreted: number }

/** The first disagreement between expected and actual leaf values under `cone`, or undefined. */
function compareLeaf(t: ElementType, cone: Cone, want: readonly Scalar[], got: readonly Scalar[], tally: Tally): string | undefined {
  if (cone.cls === "unbounded") {
    tally.unbounded += want.length;
    return undefined;
  }
  tally.compared += want.length;
  const scale = Math.max(0, ...want.map((w) => (typeof w === "number" && Number.isFinite(w) ? Math.abs(w) : 0)));
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (Object.is(w, g) || (typeof w === "number" && typeof g === "number" && Number.isNaN(w) && Number.isNaN(g))) continue;
    if (cone.cls === "rounded" && isFloat(t) && typeof w === "number" && typeof g === "number" && Number.isFinite(w) && Number.isFinite(g) &&
      Math.abs(g - w) <= ROUNDED_TOLERANCE * Math.max(eps(t), cone.eps) * (Math.abs(w) + scale)) continue;
    return `${t} (${cone.cls}) at ${i}: expected ${String(w)}, got ${String(g)}`;
  }
  return undefined;
}

/** Runs `seeds` random programs on both backends; returns the failures (seed, what, HLO). */
function differential(seeds: Iterable<number>, options: RandomProgramOptions, tally: Tally): string[] {
  const failures: string[] = [];
  for (const seed of seeds) {
    const { computation, args } = randomProgram(seed, options);
    const hlo = (): string => printHlo(new HloModule(`random_${seed}`, computation));
    const expected = evaluate(computation, args);
    let actual: Literal;
    try {
      const executable = compileSync(computation, { backend });
      tally.kernels += executable.stats.kernels;
      tally.interpreted += executable.stats.interpreted.length;
      // A code generator that throws falls back silently to the interpreter's kernel (or a C
      // generator's to the WebAssembly kernel): here it is a bug.
      const crashed = [
        ...executable.stats.interpreted.filter((s) => s.why.startsWith(GENERATOR_FAILED)).map((s) => `${s.name}: ${s.why}`),
        ...executable.program.kernels.flatMap((k) => (!isProgramNativeKernel(k) && k.nativeDeclined?.startsWith(GENERATOR_FAILED) ? [`${k.name}: ${k.nativeDeclined}`] : [])),
      ];
      if (crashed.length > 0) failures.push(`seed ${seed}: ${crashed.join("; ")}\n${hlo()}`);
      try {
        actual = executable.run(args);
      } finally {
        executable.delete();
      }
    } catch (e) {
      failures.push(`seed ${seed}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}\n${hlo()}`);
      continue;
    }
    const cone = cones(computation);
    const root = computation.root;
    const leaves = root.opcode === "tuple" ? root.operands : [root];
    const wants = root.opcode === "tuple" ? expected.elements : [expected];
    const gots = root.opcode === "tuple" ? actual.elements : [actual];
    for (let k = 0; k < leaves.length; k++) {
      const t = elementTypeOf(leaves[k]!);
      if (t === undefined) continue;
      const w = wants[k]!;
      const g = gots[k]!;
      if (g.shape.kind !== "array" || g.arrayShape.elementType !== t || g.dimensions.join() !== w.dimensions.join()) {
        failures.push(`seed ${seed}: output ${k} has shape ${JSON.stringify(g.shape)}\n${hlo()}`);
        break;
      }
      const diff = compareLeaf(t, cone.get(leaves[k]!)!, w.values(), g.values(), tally);
      if (diff !== undefined) {
        failures.push(`seed ${seed}: output ${k}: ${diff}\n${hlo()}`);
        break;
      }
    }
  }
  return failures;
}

const range = (first: number, count: number): number[] => Array.from({ length: count }, (_, i) => first + i);

function check(seeds: readonly number[], options: RandomProgramOptions): void {
  const tally: Tally = { compared: 0, unbounded: 0, kernels: 0, interpreted: 0 };
  const failures = differential(seeds, options, tally);
  assert.deepEqual(failures, [], `${failures.length} of ${seeds.length} programs differ:\n${failures.join("\n\n")}`);
  // The comparison is not vacuous: the programs run generated kernels (not only the
  // interpreter's kernels on device memory), and nearly every output element is checked.
  console.log(`differential: ${seeds.length} programs, ${tally.kernels} kernels, ${tally.interpreted} interpreted steps, ` +
    `${tally.compared} elements compared, ${tally.unbounded} not (discontinuous after rounding)`);
  assert.ok(tally.kernels > 2 * seeds.length, `only ${tally.kernels} kernels in ${seeds.length} programs`);
  assert.ok(tally.compared > 10 * seeds.length, `only ${tally.compared} elements compared`);
  assert.ok(tally.unbounded <= 0.1 * (tally.compared + tally.unbounded), `${tally.unbounded} of ${tally.compared + tally.unbounded} elements unchecked`);
}

test("compiled equals interpreted on 400 random programs (mixed types, every default family)", () => {
  check(range(1, 400), {});
});

test("compiled equals interpreted on 150 larger random programs with random parameter layouts", () => {
  check(range(10_001, 150), { size: 30, maxElements: 96, layoutProbability: 0.4 });
});

test("compiled equals interpreted on 150 random programs with calls and batch norm", () => {
  check(range(20_001, 150), { families: ["elementwise", "broadcast", "shape", "reduce", "dot", "call", "batchNorm", "convert", "compare"] });
});

test("compiled equals interpreted on 100 random programs over larger arrays (vectorized loops and reductions)", () => {
  check(range(30_001, 100), { maxRank: 5, maxElements: 1024, size: 16 });
});
