// The C forms of a reduction's accumulators, printed by the kernel printer
// (emit_c_loop.ts: reductions and row pipelines); a step combines by the reducer's own
// value op (c_values.ts binaryExpr: its kind is the op of that name):
//  - lane arrays: `lanes` independent scalar accumulators side by side, each lane's step in
//    a loop without carried dependence, which the C compiler vectorizes without
//    reassociating anything itself;
//  - their AVX-512 form (emit_c_vector.ts): lane l is lane l % 16 of vector l / 16, the same
//    sums in the same order, so the same bits, spilled back into lane arrays to fold;
//  - float max and min accumulate by pmax/pmin (one vector instruction, where the
//    NaN-propagating max takes several), exact but for NaNs, which it skips, and ties of -0
//    and +0, where the first stays; so, as in the WebAssembly kernels, each lane also ors
//    the NaN masks of its elements and ands (max) or ors (min) their sign bits, and the fold
//    repairs the lane from them: a NaN lane becomes NaN, and a zero lane takes the sign bit
//    that the zeros it read agree on (a max of ±0 read only values ≤ 0).

import type { ElementType } from "../../types/element_type.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import { binaryExpr, cConst, cType } from "./c_values.js";
import { DeclinedError } from "../kernel/declined.js";

/** f32 lanes in one xk_vf. */
export const VECTOR_LANES = 16;

/**
 * A reduction's lane accumulators: the C names of its lane array and side arrays (`sides`:
 * a float max or min), and of its vectors and their side masks in the AVX-512 form.
 */
export interface Lanes {
  readonly kind: ReducerKind;
  readonly type: ElementType;
  readonly identity: number | bigint;
  readonly sides: boolean;
  readonly lane: string;
  readonly nan: string;
  readonly sgn: string;
  readonly vl: string;
  readonly vn: string;
  readonly vs: string;
}

const sideType = (t: ElementType): string => (t === "f64" ? "uint64_t" : "uint32_t");

/** The lane arrays of `a`, set to the identity unless `initialized` is false (the vector form fills them: spillVectorLanes). */
export function declareLanes(a: Lanes, lanes: number, initialized: boolean): string[] {
  const out = [`${cType(a.type)} ${a.lane}[${lanes}];`];
  const inits = [`${a.lane}[l] = ${cConst(a.type, a.identity)};`];
  if (a.sides) {
    const u = sideType(a.type);
    out.push(`${u} ${a.nan}[${lanes}], ${a.sgn}[${lanes}];`);
    inits.push(`${a.nan}[l] = 0;`, `${a.sgn}[l] = ${a.kind === "max" ? `~(${u})0` : "0"};`);
  }
  if (initialized) out.push(`for (int l = 0; l < ${lanes}; l++) { ${inits.join(" ")} }`);
  return out;
}

/** Lane l of `a` ⊕= element x (with the side accumulators of a float max or min). */
export function laneStep(a: Lanes, l: string, x: string): string[] {
  const acc = `${a.lane}[${l}]`;
  if (!a.sides) return [`${acc} = ${binaryExpr(a.kind, a.type, acc, x)};`];
  const u = sideType(a.type);
  return [
    a.kind === "max" ? `${acc} = ${acc} < ${x} ? ${x} : ${acc};` : `${acc} = ${x} < ${acc} ? ${x} : ${acc};`,
    `${a.nan}[${l}] |= (${u})0 - (${u})(${x} != ${x});`,
    `${a.sgn}[${l}] ${a.kind === "max" ? "&" : "|"}= ${a.type === "f64" ? "xk_f64_bits" : "xk_f32_bits"}(${x});`,
  ];
}

/** The lanes of `a` as `vectors` xk_vf (vector q holds lanes 16q to 16q + 15), with their side masks. */
export function declareVectorLanes(a: Lanes, vectors: number): string[] {
  const out = [`xk_vf ${a.vl}[${vectors}];`, `for (int q = 0; q < ${vectors}; q++) { ${a.vl}[q] = xk_vsplat(${cConst(a.type, a.identity)}); }`];
  // One NaN mask and one sign mask for all the vectors (fewer registers): a lane's repair
  // then also sees its group's other lanes, which changes no result (the fold takes the
  // NaN anyway, and a zero lane takes +0 only where a lane of the group read a value ≥ +0,
  // which the fold's max then returns; for min, -0 where one read a value ≤ -0).
  if (a.sides) out.push(`xk_vu ${a.vn} = xk_vsplatu(0), ${a.vs} = xk_vsplatu(${a.kind === "max" ? "~0u" : "0"});`);
  return out;
}

/** laneStep on sixteen lanes: element x (a vector expression) into vector `q` of `a`. */
export function vectorLaneStep(a: Lanes, q: string, x: string): string[] {
  const acc = `${a.vl}[${q}]`;
  switch (a.kind) {
    case "add": return [`${acc} = ${acc} + ${x};`];
    case "mul": return [`${acc} = ${acc} * ${x};`];
    case "max": case "min": return [
      a.kind === "max" ? `${acc} = xk_vpmax(${acc}, ${x});` : `${acc} = xk_vpmin(${acc}, ${x});`,
      `${a.vn} |= (xk_vu)(${x} != ${x});`,
      `${a.vs} ${a.kind === "max" ? "&" : "|"}= (xk_vu)${x};`,
    ];
    default: throw new DeclinedError(`a ${a.kind} reduction in vectors`);
  }
}

/** The vectors of `a` back into its lane arrays, which foldLanes folds. */
export function spillVectorLanes(a: Lanes, vectors: number): string[] {
  const stores = [`xk_vstore(&${a.lane}[${VECTOR_LANES} * q], ${a.vl}[q]);`];
  if (a.sides) stores.push(`xk_vstoreu(&${a.nan}[${VECTOR_LANES} * q], ${a.vn});`, `xk_vstoreu(&${a.sgn}[${VECTOR_LANES} * q], ${a.vs});`);
  return [`for (int q = 0; q < ${vectors}; q++) { ${stores.join(" ")} }`];
}

/**
 * The lanes of `a` repaired (float max, min), then folded, as the schedule says (by halves,
 * each a vector operation; or in order), into lane 0 or (inOrder) into `acc`, which `start`
 * declares or sets from lane 0.
 */
export function foldLanes(a: Lanes, lanes: number, order: "halving" | "inOrder", acc: string, start: (lane0: string) => string): string[] {
  const out: string[] = [];
  if (a.sides) {
    const repair = a.type === "f64" ? "xk_repair_f64" : "xk_repair_f32";
    out.push(`for (int l = 0; l < ${lanes}; l++) ${a.lane}[l] = ${repair}(${a.lane}[l], ${a.sgn}[l], ${a.nan}[l]);`);
  }
  if (order === "inOrder") {
    out.push(start(`${a.lane}[0]`));
    out.push(`for (int l = 1; l < ${lanes}; l++) ${acc} = ${binaryExpr(a.kind, a.type, acc, `${a.lane}[l]`)};`);
    return out;
  }
  for (let w = lanes / 2; w >= 1; w /= 2) {
    out.push(`for (int l = 0; l < ${w}; l++) ${a.lane}[l] = ${binaryExpr(a.kind, a.type, `${a.lane}[l]`, `${a.lane}[l + ${w}]`)};`);
  }
  out.push(start(`${a.lane}[0]`));
  return out;
}
