// Rows of the primitive table for complex numbers: complex(re, im), real, imag, conj
// (primitives.ts spreads them in).
//
// Derivatives follow JAX's convention: a VJP is the transpose of the JVP's linear map
// for the bilinear pairing <a, b> = Re(Σ a·b), with no conjugation. So the cotangent of a
// holomorphic op is the cotangent times its derivative (as for reals), and grad of a
// real-valued f of z = x + iy is ∂f/∂x - i ∂f/∂y (JAX's grad of |z|² at 3+4i is 6-8i).
// Under that pairing: real's transpose is ct ↦ complex(ct, 0), imag's ct ↦ complex(0, -ct),
// complex's ct ↦ (Re ct, -Im ct), and conj's is conj.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import { type XlaOp } from "../builder/xla_builder.js";
import type { ArrayBase } from "./core.js";
import * as lax from "./lax.js";
import { instantiate, matrixBatch, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";

type V = ArrayBase;
type ComplexPrimitive = "complex" | "real" | "imag" | "conj";

const COMPLEX_ARG = { shape: [2, 3], kind: "complex" } as const;
const zeros = (x: V): V => lax.full(x.shape, 0, x.dtype);

const realOp = (x: XlaOp): XlaOp => x.builder.addInstruction("real", [x], {});
const imagOp = (x: XlaOp): XlaOp => x.builder.addInstruction("imag", [x], {});
const complexOp = (re: XlaOp, im: XlaOp): XlaOp => re.builder.addInstruction("complex", [re, im], {});

export const COMPLEX_ROWS: { readonly [N in ComplexPrimitive]: PrimitiveRow<PrimitiveParams[N]> } = {
  complex: {
    lower: (_b, [re, im]) => [complexOp(re!, im!)],
    jvp: (t, parts) => {
      const [tr, ti] = instantiate(t, parts);
      return [lax.complex(tr!, ti!)];
    },
    vjp: ([ct]) => [lax.real(ct!), lax.neg(lax.imag(ct!))],
    batch: matrixBatch("complex"),
    example: { args: [{ shape: [2, 3] }, { shape: [2, 3] }], params: {} },
  },
  real: {
    lower: (_b, [x]) => [realOp(x!)],
    jvp: ([t]) => [lax.real(t!)],
    vjp: ([ct]) => [lax.complex(ct!, zeros(ct!))],
    batch: matrixBatch("real"),
    example: { args: [COMPLEX_ARG], params: {} },
  },
  imag: {
    lower: (_b, [x]) => [imagOp(x!)],
    jvp: ([t]) => [lax.imag(t!)],
    vjp: ([ct]) => [lax.complex(zeros(ct!), lax.neg(ct!))],
    batch: matrixBatch("imag"),
    example: { args: [COMPLEX_ARG], params: {} },
  },
  // StableHLO has no conjugate: JAX lowers it as complex(real(x), -imag(x)), and so does this.
  conj: {
    lower: (b, [x]) => [complexOp(realOp(x!), b.addInstruction("negate", [imagOp(x!)], {}))],
    jvp: ([t]) => [lax.conj(t!)],
    vjp: ([ct]) => [lax.conj(ct!)],
    batch: matrixBatch("conj"),
    example: { args: [COMPLEX_ARG], params: {} },
  },
};
