// The C forms of a reduction's accumulators, printed by the kernel printer
// (emit_c_loop.ts: reductions and row pipelines); a step combines by the reducer's own
// value op (c_values.ts binaryExpr: its kind is the op of that name):
//  - lane arrays: `lanes` independent scalar accumulators side by side, each lane's step in
//    a loop without carried dependence, which the C compiler vectorizes without
//    reassociating anything itself;
//  - their AVX-512 form (emit_c_vector.ts): lane l is lane l % 16 of vector l / 16, the same
//    sums in the same order, so the same bits, spilled back into lane arrays to fold;
//  - float max and min accumulate by pmax/pmin, with the NaN and sign-bit side arrays the
//    fold repairs the result from (kernel/schedule_reduce.ts ScheduledReduction.extremumSides).

import type { ElementType } from "../../types/element_type.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { binaryExpr, cConst, cType } from "./c_values.js";
import { DeclinedError } from "../kernel/declined.js";

/** f32 lanes in one xk_vf. */
export const VECTOR_LANES = 16;

/**
 * A reduction's lane accumulators, named after its accumulator `name`: the lane array
 * (`name`, or `name_l` beside the `vector`s of the AVX-512 form, `name`), the side arrays
 * of a float max or min (`sides`: `name_nan`, `name_sgn`) and the vector form's side
 * masks (`name_vn`, `name_vs`).
 */
export interface Lanes {
  readonly kind: ReducerKind;
  readonly type: ElementType;
  readonly identity: number | bigint;
  readonly sides: boolean;
  readonly name: string;
  readonly vector: boolean;
}

/** The C name of a's lane array. */
export const laneArray = (a: Lanes): string => (a.vector ? `${a.name}_l` : a.name);

const sideType = (t: ElementType): string => (t === "f64" ? "uint64_t" : "uint32_t");

/** The lane arrays of `a`, set to the identity unless `initialized` is false (the vector form fills them: spillVectorLanes). */
export function declareLanes(a: Lanes, lanes: number, initialized: boolean): string[] {
  const out = [`${cType(a.type)} ${laneArray(a)}[${lanes}];`];
  const inits = [`${laneArray(a)}[l] = ${cConst(a.type, a.identity)};`];
  if (a.sides) {
    const u = sideType(a.type);
    out.push(`${u} ${a.name}_nan[${lanes}], ${a.name}_sgn[${lanes}];`);
    inits.push(`${a.name}_nan[l] = 0;`, `${a.name}_sgn[l] = ${a.kind === "max" ? `~(${u})0` : "0"};`);
  }
  if (initialized) out.push(`for (int l = 0; l < ${lanes}; l++) { ${inits.join(" ")} }`);
  return out;
}

/** Lane l of `a` ⊕= element x (with the side accumulators of a float max or min). */
export function laneStep(a: Lanes, l: string, x: string): string[] {
  const acc = `${laneArray(a)}[${l}]`;
  if (!a.sides) return [`${acc} = ${binaryExpr(a.kind, a.type, acc, x)};`];
  const u = sideType(a.type);
  return [
    a.kind === "max" ? `${acc} = ${acc} < ${x} ? ${x} : ${acc};` : `${acc} = ${x} < ${acc} ? ${x} : ${acc};`,
    `${a.name}_nan[${l}] |= (${u})0 - (${u})(${x} != ${x});`,
    `${a.name}_sgn[${l}] ${a.kind === "max" ? "&" : "|"}= ${a.type === "f64" ? "xk_f64_bits" : "xk_f32_bits"}(${x});`,
  ];
}

/** The lanes of `a` as `vectors` xk_vf (vector q holds lanes 16q to 16q + 15), with their side masks. */
export function declareVectorLanes(a: Lanes, vectors: number): string[] {
  const out = [`xk_vf ${a.name}[${vectors}];`, `for (int q = 0; q < ${vectors}; q++) { ${a.name}[q] = xk_vsplat(${cConst(a.type, a.identity)}); }`];
  // One NaN mask and one sign mask for all the vectors (fewer registers): a lane's repair
  // then also sees its group's other lanes, which changes no result (the fold takes the
  // NaN anyway, and a zero lane takes +0 only where a lane of the group read a value ≥ +0,
  // which the fold's max then returns; for min, -0 where one read a value ≤ -0).
  if (a.sides) out.push(`xk_vu ${a.name}_vn = xk_vsplatu(0), ${a.name}_vs = xk_vsplatu(${a.kind === "max" ? "~0u" : "0"});`);
  return out;
}

/** laneStep on sixteen lanes: element x (a vector expression) into vector `q` of `a`. */
export function vectorLaneStep(a: Lanes, q: string, x: string): string[] {
  const acc = `${a.name}[${q}]`;
  switch (a.kind) {
    case "add": return [`${acc} = ${acc} + ${x};`];
    case "mul": return [`${acc} = ${acc} * ${x};`];
    case "max": case "min": return [
      a.kind === "max" ? `${acc} = xk_vpmax(${acc}, ${x});` : `${acc} = xk_vpmin(${acc}, ${x});`,
      `${a.name}_vn |= (xk_vu)(${x} != ${x});`,
      `${a.name}_vs ${a.kind === "max" ? "&" : "|"}= (xk_vu)${x};`,
    ];
    default: throw new DeclinedError(`a ${a.kind} reduction in vectors`);
  }
}

/** The vectors of `a` back into its lane arrays, which foldLanes folds. */
export function spillVectorLanes(a: Lanes, vectors: number): string[] {
  const stores = [`xk_vstore(&${laneArray(a)}[${VECTOR_LANES} * q], ${a.name}[q]);`];
  if (a.sides) stores.push(`xk_vstoreu(&${a.name}_nan[${VECTOR_LANES} * q], ${a.name}_vn);`, `xk_vstoreu(&${a.name}_sgn[${VECTOR_LANES} * q], ${a.name}_vs);`);
  return [`for (int q = 0; q < ${vectors}; q++) { ${stores.join(" ")} }`];
}

/**
 * The lanes of `a` folded as the schedule says (by halves, each a vector operation; or in
 * order), into lane 0 or (inOrder) into `acc`, which `start` declares or sets from lane 0.
 * A float max or min folded by halves folds its side arrays with its lanes (NaN flags
 * or'd, sign words and'd for max, or'd for min, values by the same pmax or pmin as the
 * steps), and repairs lane 0 alone: the same result as repairing every lane and folding
 * by the exact max or min (a NaN flag anywhere gives the same all-ones NaN; a zero result
 * takes +0 for max where any lane read a value ≥ +0, -0 for min where any read one ≤ -0),
 * without 63 branchy exact maxes a row (the masked softmax's rows of 128 on AVX2: 10-15%
 * less time, 2026-11-30). In order, each lane is repaired before the exact fold.
 */
export function foldLanes(a: Lanes, lanes: number, order: "halving" | "inOrder", acc: string, start: (lane0: string) => string): string[] {
  const out: string[] = [];
  const v = laneArray(a);
  const repair = (l: string): string => `${v}[${l}] = ${a.type === "f64" ? "xk_repair_f64" : "xk_repair_f32"}(${v}[${l}], ${a.name}_sgn[${l}], ${a.name}_nan[${l}]);`;
  if (order === "inOrder") {
    if (a.sides) out.push(`for (int l = 0; l < ${lanes}; l++) ${repair("l")}`);
    out.push(start(`${v}[0]`));
    out.push(`for (int l = 1; l < ${lanes}; l++) ${acc} = ${binaryExpr(a.kind, a.type, acc, `${v}[l]`)};`);
    return out;
  }
  for (let w = lanes / 2; w >= 1; w /= 2) {
    const [x, y] = [`${v}[l]`, `${v}[l + ${w}]`];
    const step = !a.sides
      ? `${x} = ${binaryExpr(a.kind, a.type, x, y)};`
      : `{ ${x} = ${a.kind === "max" ? `${x} < ${y}` : `${y} < ${x}`} ? ${y} : ${x}; ${a.name}_nan[l] |= ${a.name}_nan[l + ${w}]; ${a.name}_sgn[l] ${a.kind === "max" ? "&" : "|"}= ${a.name}_sgn[l + ${w}]; }`;
    out.push(`for (int l = 0; l < ${w}; l++) ${step}`);
  }
  if (a.sides) out.push(repair("0"));
  out.push(start(`${v}[0]`));
  return out;
}
