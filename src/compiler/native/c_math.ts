// The f32 transcendentals of the native backend: the WebAssembly backend's own
// approximations (wasm/math.ts: the same reductions, polynomials, constants and so the
// same stated ULP bounds), written out as C by running their emitters against a FloatOps
// whose "instructions" build C expressions instead of WebAssembly bytes. Each becomes a
// `static inline float xk_<name>_f32(float x)` of straight-line code (no branch, no
// call), which the C compiler inlines into the kernels' loops and vectorizes. Values are
// held as the scalar WebAssembly code holds them: floats as float, integers as uint32_t
// (wrapping; signed where an op says so), masks as int (0 or 1, or an integer's bits
// where the code selects on a sign mask: any nonzero value is true, as for wasm's
// select). A multiply-add is XK_MADD: fused where the target has FMA, else a multiply
// and an add, which the emitters' bounds allow either way (math.ts).

import {
  emitCbrt, emitErf, emitExp, emitExpm1, emitExpNonPositive, emitLog, emitLog1p, emitLogistic, emitTanh, type FloatOps,
} from "../wasm/math.js";

type Kind = "float" | "int" | "mask";

interface Value {
  readonly expr: string;
  readonly kind: Kind;
}

const C_TYPE: Record<Kind, string> = { float: "float", int: "uint32_t", mask: "int" };

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/** A C float constant holding exactly x rounded to f32 (as f32.const does). */
export function cFloat(x: number): string {
  F32[0] = x;
  const v = F32[0]!;
  if (Number.isNaN(v)) return "xk_bits_f32(0x7fc00000u)";
  if (!Number.isFinite(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 24) return `${v}.0f`;
  return `xk_bits_f32(0x${F32_BITS[0]!.toString(16)}u) /* ${v} */`;
}

/** One function's body: a stack of C expressions, and the statements that set its locals. */
class CFloatOps implements FloatOps {
  private readonly stack: Value[] = [];
  private readonly locals: Kind[] = [];
  readonly statements: string[] = [];
  private temps = 0;

  /** Local 0 is the argument x. */
  constructor() {
    this.locals.push("float");
  }

  name(l: number): string {
    return l === 0 ? "x" : `${this.locals[l]![0]}${l}`;
  }

  declarations(): string[] {
    return this.locals.flatMap((k, l) => (l === 0 ? [] : [`${C_TYPE[k]} ${this.name(l)};`]));
  }

  result(): string {
    if (this.stack.length !== 1 || this.stack[0]!.kind !== "float") throw new Error(`a transcendental left ${this.stack.length} values`);
    return this.stack.pop()!.expr;
  }

  private push(expr: string, kind: Kind): void {
    this.stack.push({ expr, kind });
  }

  private pop(): Value {
    const v = this.stack.pop();
    if (v === undefined) throw new Error("C math: stack underflow");
    return v;
  }

  private pop2(): [Value, Value] {
    const b = this.pop();
    return [this.pop(), b];
  }

  private float(f: (a: string, b: string) => string): void {
    const [a, b] = this.pop2();
    this.push(f(a.expr, b.expr), "float");
  }

  private int(f: (a: string, b: string) => string): void {
    const [a, b] = this.pop2();
    this.push(f(a.expr, b.expr), "int");
  }

  private mask(f: (a: string, b: string) => string): void {
    const [a, b] = this.pop2();
    this.push(f(a.expr, b.expr), "mask");
  }

  private unaryFloat(f: (a: string) => string): void {
    this.push(f(this.pop().expr), "float");
  }

  /** Before local l is assigned, the values on the stack that read it are saved in temporaries. */
  private detach(l: number): void {
    const pattern = new RegExp(`\\b${this.name(l)}\\b`);
    this.stack.forEach((v, i) => {
      if (!pattern.test(v.expr)) return;
      const t = `t${this.temps++}`;
      this.statements.push(`const ${C_TYPE[v.kind]} ${t} = ${v.expr};`);
      this.stack[i] = { expr: t, kind: v.kind };
    });
  }

  /** A simple expression as is; anything else saved in a temporary (for an operand written twice). */
  private named(expr: string): string {
    if (/^[\w.]+$/.test(expr)) return expr;
    const t = `t${this.temps++}`;
    this.statements.push(`const float ${t} = ${expr};`);
    return t;
  }

  fconst(x: number): void { this.push(cFloat(x), "float"); }
  iconst(x: number): void { this.push(`0x${(x >>> 0).toString(16)}u`, "int"); }
  add(): void { this.float((a, b) => `(${a} + ${b})`); }
  sub(): void { this.float((a, b) => `(${a} - ${b})`); }
  mul(): void { this.float((a, b) => `(${a} * ${b})`); }
  div(): void { this.float((a, b) => `(${a} / ${b})`); }
  // wasm's f32.min and max: NaN-propagating, -0 < +0.
  min(): void { this.float((a, b) => `xk_minf(${a}, ${b})`); }
  max(): void { this.float((a, b) => `xk_maxf(${a}, ${b})`); }
  abs(): void { this.unaryFloat((a) => `fabsf(${a})`); }
  neg(): void { this.unaryFloat((a) => `(-${a})`); }
  nearest(): void { this.unaryFloat((a) => `rintf(${a})`); }
  sqrt(): void { this.unaryFloat((a) => `sqrtf(${a})`); }
  // pmax(a, b) = a < b ? b : a and pmin(a, b) = b < a ? b : a: one vector instruction each.
  pmax(): void { this.float((a, b) => { const n = this.named(a); return `(${n} < ${b} ? ${b} : ${n})`; }); }
  pmin(): void { this.float((a, b) => { const n = this.named(a); return `(${b} < ${n} ? ${b} : ${n})`; }); }
  lt(): void { this.mask((a, b) => `(${a} < ${b})`); }
  gt(): void { this.mask((a, b) => `(${a} > ${b})`); }
  eq(): void { this.mask((a, b) => `(${a} == ${b})`); }
  ne(): void { this.mask((a, b) => `(${a} != ${b})`); }
  igt(): void { this.mask((a, b) => `((int32_t)${a} > (int32_t)${b})`); }
  ieq(): void { this.mask((a, b) => `(${a} == ${b})`); }
  select(): void {
    const m = this.pop();
    const [a, b] = this.pop2();
    this.push(`(${m.expr} ? ${a.expr} : ${b.expr})`, a.kind);
  }
  bits(): void { this.push(`xk_f32_bits(${this.pop().expr})`, "int"); }
  fromBits(): void { this.push(`xk_bits_f32(${this.pop().expr})`, "float"); }
  iadd(): void { this.int((a, b) => `(${a} + ${b})`); }
  isub(): void { this.int((a, b) => `(${a} - ${b})`); }
  iand(): void { this.int((a, b) => `(${a} & ${b})`); }
  ior(): void { this.int((a, b) => `(${a} | ${b})`); }
  ixor(): void { this.int((a, b) => `(${a} ^ ${b})`); }
  ishl(k: number): void { this.push(`(${this.pop().expr} << ${k})`, "int"); }
  ishrS(k: number): void { this.push(`(uint32_t)((int32_t)${this.pop().expr} >> ${k})`, "int"); }
  ishrU(k: number): void { this.push(`(${this.pop().expr} >> ${k})`, "int"); }
  itof(): void { this.push(`(float)(int32_t)${this.pop().expr}`, "float"); }
  // Saturating, as i32.trunc_sat_f32_s (the emitters only convert values in range).
  ftoi(): void { this.push(`(uint32_t)XK_F2I(${this.pop().expr}, int32_t, -2147483648ll, 2147483647ll)`, "int"); }
  mor(): void { this.mask((a, b) => `(${a} | ${b})`); }
  mand(): void { this.mask((a, b) => `(${a} & ${b})`); }
  copysign(): void { this.float((a, b) => `copysignf(${a}, ${b})`); }
  readonly madd = (): void => {
    const c = this.pop();
    const [a, b] = this.pop2();
    this.push(`XK_MADD(${a.expr}, ${b.expr}, ${c.expr})`, "float");
  };
  local(kind: Kind): number {
    this.locals.push(kind);
    return this.locals.length - 1;
  }
  get(l: number): void { this.push(this.name(l), this.locals[l]!); }
  set(l: number): void {
    const v = this.pop();
    this.detach(l);
    this.statements.push(`${this.name(l)} = ${v.expr};`);
  }
  tee(l: number): void {
    this.set(l);
    this.get(l);
  }
}

/** The f32 transcendentals with C code here, by the kernel graph's op (exp of a non-positive argument: "expNonPositive"). */
const EMITTERS: Readonly<Record<string, (o: FloatOps, x: number) => void>> = {
  exp: emitExp, expNonPositive: emitExpNonPositive, log: emitLog, log1p: emitLog1p, expm1: emitExpm1,
  tanh: emitTanh, logistic: emitLogistic, cbrt: emitCbrt, erf: emitErf,
};

/** The C function computing op (a key of EMITTERS) in f32, or undefined when there is none. */
export function cMathFunction(op: string): string | undefined {
  return EMITTERS[op] === undefined ? undefined : `xk_${op}_f32`;
}

function functionSource(op: string, emit: (o: FloatOps, x: number) => void): string {
  const o = new CFloatOps();
  emit(o, 0);
  const result = o.result();
  const body = [...o.declarations(), ...o.statements, `return ${result};`];
  return `static inline float xk_${op}_f32(float x) {\n${body.map((s) => `  ${s}`).join("\n")}\n}`;
}

/** The prelude's part with every function of EMITTERS (in an order where each one's callees come first: none call each other). */
export function cMathSource(): string {
  return [
    "/* a·b + c: fused where the target has FMA (math.ts's bounds hold either way; XK_NO_FMA: never, for tests). */",
    "#if (defined(__FMA__) || defined(__aarch64__)) && !defined(XK_NO_FMA)",
    "#define XK_MADD(a, b, c) __builtin_fmaf((a), (b), (c))",
    "#else",
    "#define XK_MADD(a, b, c) ((a) * (b) + (c))",
    "#endif",
    ...Object.entries(EMITTERS).map(([op, emit]) => functionSource(op, emit)),
  ].join("\n");
}
