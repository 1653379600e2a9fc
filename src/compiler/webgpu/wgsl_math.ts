// The f32 transcendentals of the WebGPU backend: the shared approximations of
// kernel/approximations.ts (the same reductions, polynomials and constants, so the same stated ULP
// bounds as the wasm and C backends), written out as WGSL by running their emitters
// against a FloatOps whose "instructions" build WGSL expressions. WGSL's own exp, log,
// tanh... are loosely specified (their error bounds are relative to the argument, and
// differ between implementations), so they are not used.
//
// Values are held as the scalar WebAssembly code holds them: floats as f32, integers as
// u32 (wrapping; signed where an op says so), masks as u32 (0 or 1, or an integer's
// bits where the code selects on a sign mask: any nonzero value is true).
//
// Every float constant is written as its bit pattern through xk_f, which XORs it with a
// zero the kernel reads from memory at run time (wgsl_values.ts WGSL_HELPERS). WGSL
// constant expressions may hold no infinity or NaN; and shader compilers fold algebra
// on constants that IEEE arithmetic does not allow: SwiftShader turns exp's
// round-to-integer step, (x·log2e + 1.5·2^23) - 1.5·2^23, into x·log2e, which makes
// exp(-1) 0.5. Mesa's NIR (lavapipe, and the Linux drivers of AMD and Intel GPUs) folds
// the same algebra on values it cannot see too, so the approximations mark the roundings
// they rely on (FloatOps' keep: xk_keep, wgsl_values.ts).

import { APPROXIMATIONS, type ApproximationName, type FloatOps } from "../kernel/approximations.js";
import { ExpressionFloatOps, type ExpressionSyntax, type ValueKind } from "../kernel/expression_float_ops.js";

const TYPES: Readonly<Record<ValueKind, string>> = { float: "f32", int: "u32", mask: "u32" };

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/** A WGSL f32 holding exactly x rounded to f32, by its bit pattern. */
export function wgslFloat(x: number): string {
  F32[0] = x;
  return `xk_f(0x${F32_BITS[0]!.toString(16)}u)`;
}

const WGSL_SYNTAX: ExpressionSyntax = {
  types: TYPES,
  declare: (type, name) => `var ${name}: ${type};`,
  temporary: (type, name, expr) => `let ${name}: ${type} = ${expr};`,
};

/** One function's body as WGSL. */
class WgslFloatOps extends ExpressionFloatOps implements FloatOps {
  constructor() {
    super(WGSL_SYNTAX);
  }

  private compare(op: string): void {
    this.op2("mask", (a, b) => `select(0u, 1u, ${a} ${op} ${b})`);
  }

  fconst(x: number): void { this.push(wgslFloat(x), "float"); }
  iconst(x: number): void { this.push(`0x${(x >>> 0).toString(16)}u`, "int"); }
  add(): void { this.op2("float", (a, b) => `(${a} + ${b})`); }
  sub(): void { this.op2("float", (a, b) => `(${a} - ${b})`); }
  mul(): void { this.op2("float", (a, b) => `(${a} * ${b})`); }
  div(): void { this.op2("float", (a, b) => `(${a} / ${b})`); }
  // wasm's f32.min and max: NaN-propagating, -0 < +0.
  min(): void { this.op2("float", (a, b) => `xk_minf(${a}, ${b})`); }
  max(): void { this.op2("float", (a, b) => `xk_maxf(${a}, ${b})`); }
  abs(): void { this.op1("float", (a) => `bitcast<f32>(bitcast<u32>(${a}) & 0x7fffffffu)`); }
  neg(): void { this.op1("float", (a) => `bitcast<f32>(bitcast<u32>(${a}) ^ 0x80000000u)`); }
  // WGSL's round is to nearest, ties to even: f32.nearest.
  nearest(): void { this.op1("float", (a) => `round(${a})`); }
  sqrt(): void { this.op1("float", (a) => `sqrt(${a})`); }
  keep(): void { this.op1("float", (a) => `xk_keep(${a})`); }
  // b > a ? b : a and b < a ? b : a, the variable first: a NaN in it passes.
  pmax(): void { this.op2("float", (a, b) => { const x = this.named(a); return `select(${x}, ${b}, ${x} < ${b})`; }); }
  pmin(): void { this.op2("float", (a, b) => { const x = this.named(a); return `select(${x}, ${b}, ${b} < ${x})`; }); }
  lt(): void { this.compare("<"); }
  gt(): void { this.compare(">"); }
  eq(): void { this.compare("=="); }
  ne(): void { this.op2("mask", (a, b) => `select(1u, 0u, ${a} == ${b})`); }
  igt(): void { this.op2("mask", (a, b) => `select(0u, 1u, bitcast<i32>(${a}) > bitcast<i32>(${b}))`); }
  ieq(): void { this.compare("=="); }
  select(): void {
    const m = this.pop();
    const [a, b] = this.pop2();
    this.push(`select(${b.expr}, ${a.expr}, ${m.expr} != 0u)`, a.kind);
  }
  bits(): void { this.op1("int", (a) => `bitcast<u32>(${a})`); }
  fromBits(): void { this.op1("float", (a) => `bitcast<f32>(${a})`); }
  iadd(): void { this.op2("int", (a, b) => `(${a} + ${b})`); }
  isub(): void { this.op2("int", (a, b) => `(${a} - ${b})`); }
  iand(): void { this.op2("int", (a, b) => `(${a} & ${b})`); }
  ior(): void { this.op2("int", (a, b) => `(${a} | ${b})`); }
  ixor(): void { this.op2("int", (a, b) => `(${a} ^ ${b})`); }
  ishl(k: number): void { this.op1("int", (a) => `(${a} << ${k}u)`); }
  ishrS(k: number): void { this.op1("int", (a) => `bitcast<u32>(bitcast<i32>(${a}) >> ${k}u)`); }
  ishrU(k: number): void { this.op1("int", (a) => `(${a} >> ${k}u)`); }
  itof(): void { this.op1("float", (a) => `f32(bitcast<i32>(${a}))`); }
  // Saturating, as i32.trunc_sat_f32_s (the emitters only convert values in range).
  ftoi(): void { this.op1("int", (a) => `bitcast<u32>(xk_f2s32(${a}))`); }
  mor(): void { this.op2("mask", (a, b) => `(${a} | ${b})`); }
  mand(): void { this.op2("mask", (a, b) => `(${a} & ${b})`); }
  copysign(): void { this.op2("float", (a, b) => `bitcast<f32>((bitcast<u32>(${a}) & 0x7fffffffu) | (bitcast<u32>(${b}) & 0x80000000u))`); }
}

/** xk_pow2(n) = 2^n for n in [-126, 127], on bits (wgsl_trig.ts's reduction and wgsl_binary_math.ts's pow call it). */
export const WGSL_POW2 = "fn xk_pow2(n: i32) -> f32 { return bitcast<f32>(u32(127 + n) << 23u); }";

/** The WGSL function computing approximation `name` in f32. */
export const wgslMathFunction = (name: ApproximationName): string => `xk_${name}_f32`;

/** The WGSL source of the function wgslMathFunction(name) names. */
export function wgslMathSource(name: ApproximationName): string {
  const o = new WgslFloatOps();
  APPROXIMATIONS[name](o, 0);
  const result = o.result();
  const body = [...o.declarations(), ...o.statements, `return ${result};`];
  // WGSL parameters are immutable; the emitters may assign their argument's local.
  return `fn ${wgslMathFunction(name)}(x_in: f32) -> f32 {\n  var x = x_in;\n${body.map((s) => `  ${s}`).join("\n")}\n}`;
}
