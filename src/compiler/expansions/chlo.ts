// CHLO's elementary functions that the IR keeps as opcodes (the interpreter runs them
// with its own kernels, src/interpreter/kernels/chlo/), rewritten into StableHLO ops
// computed in the element type, as XLA's chlo legalization does, so that the program
// runs where CHLO is unknown (`xlats print --lower-chlo`; the table in index.ts):
//   acos x  = 2 atan2(√(1-x²), 1+x)            (π at x = -1)
//   asin x  = 2 atan2(x, 1 + √(1-x²))
//   atan x  = atan2(x, 1)
//   acosh x = log(x + √((x+1)(x-1))), log x + log 2 where x² would overflow
//   asinh x = sign x · log1p(|x| + x²/(1 + √(1+x²))), log|x| + log 2 for huge |x|
//   atanh x = ½ (log1p x - log1p(-x))
//   cosh x  = ½e^x + ½e^-x; h·(½h), h = e^(|x|/2), where e^|x| is within a factor e of
//             overflowing (|x|/2 is exact, where x + log ½ rounds by up to half an ulp of x:
//             24 ulp of f32 at x = 33)
//   sinh x  = ½ (m + m/(m+1)), m = expm1 x, for |x| < 1; ½e^x - ½e^-x above; sign x·h·(½h) near overflow
//   erfc x  = 1 - erf x (relative accuracy lost where erfc is small: the kernel uses a
//             continued fraction there)
//   next_after by stepping the bit pattern (bitcast to an unsigned integer of the same width).
// Real element types only: complex operands, and the gamma family, erf_inv and bessel_i1e
// (series and iterations with no short StableHLO form), stay as chlo ops.

import type { Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import type { Opcode } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { maxFiniteValue } from "../../types/float_codec.js";
import { Literal } from "../../types/literal.js";

/** The StableHLO form of a CHLO elementary function of real floats; undefined for other element types. */
export function expandChlo(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  if (inst.shape.kind !== "array" || ELEMENT_TYPES[inst.shape.elementType].kind !== "float") return undefined;
  return decompose(inst.opcode, new Expr(f, inst.shape.elementType, inst.shape.dimensions), operands);
}

/** Builds elementwise expressions of one element type and shape. */
class Expr {
  constructor(readonly f: InstructionFactory, readonly t: ElementType, readonly dims: readonly number[]) {}
  k(v: number, t: ElementType = this.t): Instruction {
    const scalar = this.f.constant(Literal.scalar(t, ELEMENT_TYPES[t].kind === "float" ? v : BigInt(v)));
    return this.dims.length === 0 ? scalar : this.f.add("broadcastInDim", [scalar], { dimensions: [...this.dims], broadcastDimensions: [] });
  }
  op(opcode: "add" | "subtract" | "multiply" | "divide" | "atan2", a: Instruction, b: Instruction): Instruction {
    return this.f.add(opcode, [a, b], {});
  }
  un(opcode: "sqrt" | "log" | "log1p" | "exp" | "expm1" | "abs" | "sign" | "negate" | "erf", a: Instruction): Instruction {
    return this.f.add(opcode, [a], {});
  }
  cmp(direction: "EQ" | "NE" | "LT" | "LE" | "GT" | "GE", a: Instruction, b: Instruction): Instruction {
    return this.f.add("compare", [a, b], { direction });
  }
  select(p: Instruction, a: Instruction, b: Instruction): Instruction {
    return this.f.add("select", [p, a, b], {});
  }
}

function decompose(opcode: Opcode, e: Expr, [x, y]: readonly Instruction[]): Instruction {
  const one = (): Instruction => e.k(1);
  const oneMinusSquare = (): Instruction => e.op("multiply", e.op("subtract", one(), x!), e.op("add", one(), x!));
  switch (opcode) {
    case "acos": {
      const r = e.op("multiply", e.k(2), e.op("atan2", e.un("sqrt", oneMinusSquare()), e.op("add", one(), x!)));
      return e.select(e.cmp("EQ", x!, e.k(-1)), e.k(Math.PI), r);
    }
    case "asin":
      return e.op("multiply", e.k(2), e.op("atan2", x!, e.op("add", one(), e.un("sqrt", oneMinusSquare()))));
    case "atan": return e.op("atan2", x!, one());
    case "acosh": {
      const big = e.cmp("GE", x!, e.k(Math.sqrt(maxFiniteValue(e.t))));
      const direct = e.un("log", e.op("add", x!, e.un("sqrt", e.op("multiply", e.op("add", x!, one()), e.op("subtract", x!, one())))));
      return e.select(big, e.op("add", e.un("log", x!), e.k(Math.LN2)), direct);
    }
    case "asinh": {
      const a = e.un("abs", x!);
      const a2 = e.op("multiply", a, a);
      const small = e.un("log1p", e.op("add", a, e.op("divide", a2, e.op("add", one(), e.un("sqrt", e.op("add", one(), a2))))));
      const large = e.op("add", e.un("log", a), e.k(Math.LN2));
      const magnitude = e.select(e.cmp("GE", a, e.k(Math.sqrt(maxFiniteValue(e.t)))), large, small);
      return e.op("multiply", e.un("sign", x!), magnitude);
    }
    case "atanh":
      return e.op("multiply", e.k(0.5), e.op("subtract", e.un("log1p", x!), e.un("log1p", e.un("negate", x!))));
    case "cosh": case "sinh": {
      const half = (v: Instruction): Instruction => e.op("multiply", e.k(0.5), v);
      const up = half(e.un("exp", x!));
      const down = half(e.un("exp", e.un("negate", x!)));
      const a = e.un("abs", x!);
      const h = e.un("exp", half(a));
      const huge = e.op("multiply", h, half(h));
      const nearOverflow = e.cmp("GE", a, e.k(Math.log(maxFiniteValue(e.t)) - 1));
      if (opcode === "cosh") return e.select(nearOverflow, huge, e.op("add", up, down));
      const m = e.un("expm1", x!);
      const small = e.op("multiply", e.k(0.5), e.op("add", m, e.op("divide", m, e.op("add", m, one()))));
      const large = e.select(nearOverflow, e.op("multiply", e.un("sign", x!), huge), e.op("subtract", up, down));
      return e.select(e.cmp("LT", a, one()), small, large);
    }
    case "erfc": return e.op("subtract", one(), e.un("erf", x!));
    case "nextAfter": return nextAfter(e, x!, y!);
    default: throw new Error(`expandChlo: ${opcode} has no decomposition`);
  }
}

/**
 * next_after(x, y): NaN if either is; y if equal; the smallest subnormal with y's sign
 * if x is ±0; otherwise x's sign-magnitude bit pattern one up (away from zero) when y
 * lies beyond x on the far side from zero, else one down.
 */
function nextAfter(e: Expr, x: Instruction, y: Instruction): Instruction {
  const bits = ELEMENT_TYPES[e.t].bitWidth;
  const u: ElementType = bits === 64 ? "u64" : bits === 32 ? "u32" : bits === 16 ? "u16" : "u8";
  const f = e.f;
  const bx = f.add("bitcastConvert", [x], { elementType: u });
  const by = f.add("bitcastConvert", [y], { elementType: u });
  const signMask = e.k(2 ** (bits - 1), u);
  const signY = f.add("and", [by, signMask], {});
  const tiny = f.add("or", [signY, e.k(1, u)], {});
  const zero = e.k(0);
  // Away from zero when (y > x) == (x > 0).
  const away = e.cmp("EQ", e.f.add("convert", [e.cmp("GT", y, x)], { elementType: u }), e.f.add("convert", [e.cmp("GT", x, zero)], { elementType: u }));
  const step = e.select(away, f.add("add", [bx, e.k(1, u)], {}), f.add("subtract", [bx, e.k(1, u)], {}));
  let r: Instruction = f.add("bitcastConvert", [e.select(e.cmp("EQ", x, zero), tiny, step)], { elementType: e.t });
  r = e.select(e.cmp("EQ", x, y), y, r);
  const nan = f.add("or", [e.cmp("NE", x, x), e.cmp("NE", y, y)], {});
  return e.select(nan, e.k(NaN), r);
}
