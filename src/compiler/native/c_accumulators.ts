// The C forms of a reduction's accumulators, printed by the kernel printer
// (emit_c_loop.ts: reductions and row pipelines); a step combines by the reducer's own
// value op (c_values.ts binaryExpr: its kind is the op of that name):
//  - lane arrays: `lanes` independent scalar accumulators side by side, each lane's step in
//    a loop without carried dependence, which the C compiler vectorizes without
//    reassociating anything itself;
//  - their AVX-512 form (emit_c_vector.ts): lane l is lane l % 16 of vector l / 16, the same
//    sums in the same order, so the same bits, spilled back into lane arrays to fold;
//  - float max and min accumulate by pmax/pmin, with a NaN word and a sign word beside
//    the lanes (scalars, or'd and and'd by every lane: the C compiler vectorizes such
//    integer reductions) that the fold repairs the result from
//    (kernel/schedule_reduce.ts ScheduledReduction.extremumSides).

import type { ElementType } from "../../types/element_type.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { binaryExpr, cConst, cType } from "./c_values.js";
import { DeclinedError } from "../kernel/declined.js";

/** f32 lanes in one xk_vf. */
export const VECTOR_LANES = 16;

/**
 * A reduction's lane accumulators, named after its accumulator `name`: the lane array
 * (`name`, or `name_l` beside the `vector`s of the AVX-512 form, `name`), the side words
 * of a float max or min (`sides`: `name_nan`, `name_sgn`, one each for all the lanes)
 * and the vector form's side masks (`name_vn`, `name_vs`).
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

/**
 * The lane array of `a`, set to the identity unless `initialized` is false (the vector
 * form fills it: spillVectorLanes), and its side words, from their identities. One NaN
 * word and one sign word serve all the lanes: a lane's repair then also sees the other
 * lanes' elements, which changes no result (see foldLanes).
 */
export function declareLanes(a: Lanes, lanes: number, initialized: boolean): string[] {
  const out = [`${cType(a.type)} ${laneArray(a)}[${lanes}];`];
  if (initialized) out.push(`for (int l = 0; l < ${lanes}; l++) ${laneArray(a)}[l] = ${cConst(a.type, a.identity)};`);
  if (a.sides) {
    const u = sideType(a.type);
    out.push(`${u} ${a.name}_nan = 0, ${a.name}_sgn = ${a.kind === "max" ? `~(${u})0` : "0"};`);
  }
  return out;
}

/** Lane l of `a` ⊕= element x (with the side accumulators of a float max or min). */
export function laneStep(a: Lanes, l: string, x: string): string[] {
  const acc = `${laneArray(a)}[${l}]`;
  if (!a.sides) return [`${acc} = ${binaryExpr(a.kind, a.type, acc, x)};`];
  const u = sideType(a.type);
  return [
    a.kind === "max" ? `${acc} = ${acc} < ${x} ? ${x} : ${acc};` : `${acc} = ${x} < ${acc} ? ${x} : ${acc};`,
    `${a.name}_nan |= (${u})0 - (${u})(${x} != ${x});`,
    `${a.name}_sgn ${a.kind === "max" ? "&" : "|"}= ${a.type === "f64" ? "xk_f64_bits" : "xk_f32_bits"}(${x});`,
  ];
}

/** The lanes of `a` as `vectors` xk_vf (vector q holds lanes 16q to 16q + 15), with their side masks. */
export function declareVectorLanes(a: Lanes, vectors: number): string[] {
  const out = [`xk_vf ${a.name}[${vectors}];`, `for (int q = 0; q < ${vectors}; q++) { ${a.name}[q] = xk_vsplat(${cConst(a.type, a.identity)}); }`];
  // One NaN mask and one sign mask for all the vectors (fewer registers), their lanes
  // folded into the side words at the spill (as declareLanes's words serve all lanes).
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

/** The vectors of `a` back into its lane array, and its side masks' lanes into its side words, which foldLanes folds. */
export function spillVectorLanes(a: Lanes, vectors: number): string[] {
  const out = [`for (int q = 0; q < ${vectors}; q++) xk_vstore(&${laneArray(a)}[${VECTOR_LANES} * q], ${a.name}[q]);`];
  if (a.sides) {
    out.push(`{ uint32_t vn[${VECTOR_LANES}], vs[${VECTOR_LANES}]; xk_vstoreu(vn, ${a.name}_vn); xk_vstoreu(vs, ${a.name}_vs);`,
      `  for (int l = 0; l < ${VECTOR_LANES}; l++) { ${a.name}_nan |= vn[l]; ${a.name}_sgn ${a.kind === "max" ? "&" : "|"}= vs[l]; } }`);
  }
  return out;
}

/**
 * The lanes of `a` folded as the schedule says (by halves, each a vector operation; or in
 * order), into lane 0 or (inOrder) into `acc`, which `start` declares or sets from lane 0.
 * A float max or min folded by halves folds its values by the same pmax or pmin as its
 * steps and repairs lane 0 alone from the side words: the result of repairing every lane
 * and folding by the exact max or min. A NaN anywhere gives the same all-ones NaN; a
 * result of ±0 means every element was <= 0 (max), so a clear sign bit in any element,
 * which the sign word's and keeps clear, was a +0 and the result is +0 (min: -0 where
 * any element had its sign bit set). Against a lane repair and 63 branchy exact maxes
 * a row, the masked softmax's rows of 128 on AVX2 took 10-15% less time, and another
 * 10-15% with side words instead of side arrays (2026-11-30). In order, each lane is
 * repaired before the exact fold.
 */
export function foldLanes(a: Lanes, lanes: number, order: "halving" | "inOrder", acc: string, start: (lane0: string) => string): string[] {
  const out: string[] = [];
  const v = laneArray(a);
  const repair = (l: string): string => `${v}[${l}] = ${a.type === "f64" ? "xk_repair_f64" : "xk_repair_f32"}(${v}[${l}], ${a.name}_sgn, ${a.name}_nan);`;
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
      : `${x} = ${a.kind === "max" ? `${x} < ${y}` : `${y} < ${x}`} ? ${y} : ${x};`;
    out.push(`for (int l = 0; l < ${w}; l++) ${step}`);
  }
  if (a.sides) out.push(repair("0"));
  out.push(start(`${v}[0]`));
  return out;
}
