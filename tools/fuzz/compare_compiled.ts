// How a compiled program's results may differ from the interpreter's (the
// specification), decided per output from the ops it depends on (its cone):
//
// - exact: integers, pred and floats bit-exact, NaN where the interpreter has NaN.
//   Float add/subtract/multiply/divide/sqrt, converts, compares, shape ops and max/min
//   reductions are exact on both backends: an f32 (f16, bf16) op computed in f32 gives
//   the same as one computed in double and rounded once (53 ≥ 2·24 + 2).
// - ulp: the value of a transcendental of exact operands, computed by the compiled
//   backends' polynomial approximations within the bounds src/compiler/wasm/math.ts
//   states (docs/numerics.md), possibly moved afterwards (reshape, slice, negate, max,
//   select...) without further rounding. f16 and bf16 are computed in f32 and rounded
//   once more: within 1 ulp of their own.
// - rounded: what follows a transcendental, a float sum or product reduction, a dot
//   (reassociated, accumulated in the type, as XLA's CPU backend does) or batch norm.
//   Later arithmetic may magnify the difference (cancellation), so these floats must be
//   within ROUNDED_TOLERANCE · eps · (|expected| + the output's largest finite
//   |expected|), eps that of the coarsest type rounded in, NaN and infinities equal.
// - unbounded: a discontinuous op (compare, float→integer convert, floor, sign,
//   remainder...) of a value that may be rounded differently may legitimately flip:
//   such elements are counted, not compared.

import type { Executable } from "../../src/compiler/index.js";
import { GENERATOR_FAILED, isProgramNativeKernel } from "../../src/compiler/routines.js";
import { subcomputationsOf, type Computation, type Instruction } from "../../src/ir/computation.js";
import type { Opcode } from "../../src/ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../src/types/element_type.js";
import type { Scalar } from "../../src/types/literal.js";
import { ulpDistance } from "../../test/support/ulp.js";

export type ConeClass = "exact" | "ulp" | "rounded" | "unbounded";
const RANK: Record<ConeClass, number> = { exact: 0, ulp: 1, rounded: 2, unbounded: 3 };

/** What an instruction's value may differ by: its class, the ulps of an ulp cone, and the largest epsilon of the types rounded in. */
export interface Cone { readonly cls: ConeClass; readonly ulps: number; readonly eps: number }
const EXACT: Cone = { cls: "exact", ulps: 0, eps: 0 };
const worst = (cs: readonly Cone[]): Cone =>
  cs.reduce<Cone>((a, c) => ({ cls: RANK[c.cls] > RANK[a.cls] ? c.cls : a.cls, ulps: Math.max(a.ulps, c.ulps), eps: Math.max(a.eps, c.eps) }), EXACT);

/**
 * Multiples of the epsilon a rounded cone may differ by (relative to |expected| + the
 * output's scale). The differential test's seeds need at most 5; over 8,000 seeds the
 * most was 33 (a power of a power of a batch-norm result).
 */
export const ROUNDED_TOLERANCE = 64;

/** The compiled backends' accuracy bounds in ulps of the result type (src/compiler/wasm/math.ts, emit_trig.ts, emit_pow.ts). */
export const ULP_BOUNDS: Partial<Record<Opcode, number>> = {
  exp: 3, expm1: 3, log: 2, log1p: 3, tanh: 4, logistic: 4, rsqrt: 1, cbrt: 2, erf: 4, sin: 1, cos: 1, tan: 1, atan2: 1, power: 1,
};

/** The WebGPU backend's: sin, cos and tan reduce their argument in f32 there (src/compiler/webgpu/wgsl_trig.ts, docs/numerics.md); atan2 and power keep 1 (double-f32: wgsl_binary_math.ts). */
export const WEBGPU_ULP_BOUNDS: Partial<Record<Opcode, number>> = { ...ULP_BOUNDS, sin: 2, cos: 2, tan: 3 };

/** Ops whose result is one of their operands' elements, or one negated: an ulp difference passes through unchanged. */
const MOVES: ReadonlySet<Opcode> = new Set<Opcode>([
  "reshape", "transpose", "broadcastInDim", "slice", "pad", "concatenate", "reverse", "tuple", "getTupleElement",
  "negate", "abs", "maximum", "minimum", "clamp", "select",
]);

const DISCONTINUOUS: ReadonlySet<Opcode> = new Set<Opcode>([
  "compare", "convert", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sign", "isFinite", "remainder",
]);

const isFloat = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "float";
export const elementTypeOf = (inst: Instruction): ElementType | undefined => (inst.shape.kind === "array" ? inst.shape.elementType : undefined);

/** 2^-(significand bits): the spacing of floats of type `t` just above 1. */
function eps(t: ElementType): number {
  return t === "f64" ? 2 ** -52 : t === "f32" ? 2 ** -23 : t === "f16" ? 2 ** -10 : t === "bf16" ? 2 ** -7 : 2 ** -2;
}

/** Whether `inst` itself may round differently on the compiled backend, beyond the ulp bound of a transcendental (calls: see cones). */
function roundsItself(inst: Instruction): boolean {
  const t = elementTypeOf(inst);
  if ((inst.opcode === "dot" || inst.opcode === "reduce") && t !== undefined && isFloat(t)) {
    // max/min reductions pick an element: exact. Sums and products reassociate.
    const reducer = inst.opcode === "reduce" ? subcomputationsOf(inst)[0]?.root.opcode : undefined;
    return reducer !== "maximum" && reducer !== "minimum";
  }
  return inst.opcode.startsWith("batchNorm");
}

const firstArrayType = (inst: Instruction): ElementType | undefined =>
  inst.shape.kind === "tuple" ? (inst.shape.elements[0]?.kind === "array" ? inst.shape.elements[0].elementType : undefined) : elementTypeOf(inst);

/** The cone of every instruction of `c`, its parameters' cones given, under a backend's ulp bounds. */
export function cones(c: Computation, parameters: readonly Cone[] = [], bounds: Partial<Record<Opcode, number>> = ULP_BOUNDS): Map<Instruction, Cone> {
  const out = new Map<Instruction, Cone>();
  for (const inst of c.instructions) {
    const operands = inst.operands.map((o) => out.get(o)!);
    const t = firstArrayType(inst);
    let cone = worst(operands);
    const bound = bounds[inst.opcode];
    if (inst.opcode === "parameter") cone = parameters[(inst as Instruction<"parameter">).attrs.number] ?? EXACT;
    else if (inst.opcode === "call") cone = worst([cone, cones(subcomputationsOf(inst)[0]!, operands, bounds).get(subcomputationsOf(inst)[0]!.root)!]);
    else if (bound !== undefined && t !== undefined && isFloat(t)) {
      cone = cone.cls === "exact" ? { cls: "ulp", ulps: t === "f16" || t === "bf16" ? 1 : bound, eps: eps(t) } : worst([cone, { cls: "rounded", ulps: 0, eps: eps(t) }]);
    } else if (roundsItself(inst) && t !== undefined) cone = worst([cone, { cls: "rounded", ulps: 0, eps: eps(t) }]);
    // Arithmetic on a value within some ulps leaves a value within a relative bound.
    if (cone.cls === "ulp" && bound === undefined && !MOVES.has(inst.opcode)) cone = { cls: "rounded", ulps: 0, eps: cone.eps };
    if ((cone.cls === "rounded" || cone.cls === "ulp") && DISCONTINUOUS.has(inst.opcode)) {
      // A float→float convert only rounds further: still continuous.
      if (!(inst.opcode === "convert" && t !== undefined && isFloat(t))) cone = { cls: "unbounded", ulps: 0, eps: cone.eps };
      else cone = { cls: "rounded", ulps: 0, eps: Math.max(cone.eps, eps(t)) };
    }
    out.set(inst, cone);
  }
  return out;
}

export interface CompareTally { compared: number; unbounded: number }

/** The first disagreement between expected and actual values of one output of type `t` under `cone`, or undefined. */
export function compareLeaf(t: ElementType, cone: Cone, want: readonly Scalar[], got: readonly Scalar[], tally: CompareTally): string | undefined {
  if (cone.cls === "unbounded") {
    tally.unbounded += want.length;
    return undefined;
  }
  tally.compared += want.length;
  let scale = 0;
  for (const w of want) {
    for (const x of typeof w === "object" ? [w.re, w.im] : [w]) if (typeof x === "number" && Number.isFinite(x)) scale = Math.max(scale, Math.abs(x));
  }
  // A complex value is compared part by part, each as a float of its part type.
  const part: ElementType = t === "c64" ? "f32" : t === "c128" ? "f64" : t;
  const close = (w: number, g: number): boolean => {
    if (Object.is(w, g) || (Number.isNaN(w) && Number.isNaN(g))) return true;
    if (!isFloat(part)) return false;
    if (cone.cls === "ulp") return ulpDistance(part, w, g) <= cone.ulps;
    return cone.cls === "rounded" && Number.isFinite(w) && Number.isFinite(g) &&
      Math.abs(g - w) <= ROUNDED_TOLERANCE * Math.max(eps(part), cone.eps) * (Math.abs(w) + scale);
  };
  const number = (x: number | bigint | boolean): string => (Object.is(x, -0) ? "-0" : String(x));
  const show = (v: Scalar): string => (typeof v === "object" ? `${number(v.re)}${v.im < 0 || Object.is(v.im, -0) ? "-" : "+"}${Math.abs(v.im)}i` : number(v));
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    const same = typeof w === "number" && typeof g === "number" ? close(w, g)
      : typeof w === "object" && typeof g === "object" ? close(w.re, g.re) && close(w.im, g.im)
      : w === g;
    if (same) continue;
    const within = cone.cls === "ulp" ? ` within ${cone.ulps} ulp` : cone.cls === "rounded" ? " within the rounding tolerance" : "";
    return `${t} (${cone.cls}) at ${i}: expected ${show(w)}${within}, got ${show(g)}`;
  }
  return undefined;
}

/**
 * The kernels whose code generator threw: compiling falls back silently to the
 * interpreter's kernel (or a C generator's to the WebAssembly kernel), which a user
 * never sees, so a fuzzer or test must look for it.
 */
export function generatorFailures(executable: Executable): string[] {
  const out: string[] = [];
  for (const s of executable.stats.interpreted) if (s.why.startsWith(GENERATOR_FAILED)) out.push(`${s.name}: ${s.why}`);
  for (const k of executable.program.kernels) {
    if (!isProgramNativeKernel(k) && k.nativeDeclined?.startsWith(GENERATOR_FAILED)) out.push(`${k.name}: ${k.nativeDeclined}`);
  }
  return out;
}
