// What each CHLO elementwise function computes on one element, per kind of element
// type (the shape rules in src/shape/elementwise.ts admit these kinds); merged into the
// elementwise definitions of ../elementwise_ops.ts.

import type { BinaryOpcode, UnaryOpcode } from "../../../ir/opcodes.js";
import type { ElementType } from "../../../types/element_type.js";
import type { Complex } from "../../../types/literal.js";
import { cAcos, cAcosh, cAsin, cAsinh, cAtan, cAtanh } from "./complex_inverse.js";
import { cCosh, cSinh } from "../complex_math.js";
import { besselI1e, erfc, erfInv, nextAfterOf } from "./erf_family.js";
import { digamma, lgamma, polygamma, zeta } from "./gamma.js";

export const CHLO_UNARY = {
  acos: { float: Math.acos, complex: cAcos },
  acosh: { float: Math.acosh, complex: cAcosh },
  asin: { float: Math.asin, complex: cAsin },
  asinh: { float: Math.asinh, complex: cAsinh },
  atan: { float: Math.atan, complex: cAtan },
  atanh: { float: Math.atanh, complex: cAtanh },
  cosh: { float: Math.cosh, complex: cCosh },
  sinh: { float: Math.sinh, complex: cSinh },
  lgamma: { float: lgamma },
  digamma: { float: digamma },
  erfInv: { float: erfInv },
  erfc: { float: erfc },
  besselI1e: { float: besselI1e },
} satisfies Partial<Record<UnaryOpcode, { float: (x: number) => number; complex?: (z: Complex) => Complex }>>;

export const CHLO_BINARY = {
  polygamma: { float: polygamma },
  zeta: { float: zeta },
  nextAfter: { floatOf: nextAfterOf },
} satisfies Partial<Record<BinaryOpcode, { float?: (a: number, b: number) => number; floatOf?: (t: ElementType) => (a: number, b: number) => number }>>;
