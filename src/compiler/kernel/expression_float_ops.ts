// The stack machine behind the FloatOps (approximations.ts) of the renderers that print
// source text (C and WGSL): each "instruction" pops operand expressions and pushes one
// expression, locals become declared variables, and a value on the stack that reads a
// local about to be assigned is first saved in a temporary, so the printed statements
// compute what the stack order says. A renderer supplies only its syntax (types,
// declarations) and, in its subclass, the expression of each FloatOps instruction.

/** What a value on the stack holds: an f32, a 32-bit integer, or a mask (a compare's result). */
export type ValueKind = "float" | "int" | "mask";

export interface ExpressionValue {
  readonly expr: string;
  readonly kind: ValueKind;
}

/** How a renderer writes a function's variables. */
export interface ExpressionSyntax {
  readonly types: Readonly<Record<ValueKind, string>>;
  /** The declaration of a local, assigned later. */
  readonly declare: (type: string, name: string) => string;
  /** A temporary, assigned once where it is declared. */
  readonly temporary: (type: string, name: string, expr: string) => string;
}

/** One function's body: a stack of expressions, and the statements that set its locals. Local 0 is the argument x. */
export abstract class ExpressionFloatOps {
  private readonly stack: ExpressionValue[] = [];
  private readonly locals: ValueKind[] = ["float"];
  readonly statements: string[] = [];
  private temps = 0;

  constructor(private readonly syntax: ExpressionSyntax) {}

  name(l: number): string {
    return l === 0 ? "x" : `${this.locals[l]![0]}${l}`;
  }

  declarations(): string[] {
    return this.locals.flatMap((k, l) => (l === 0 ? [] : [this.syntax.declare(this.syntax.types[k], this.name(l))]));
  }

  /** The expression of the function's result, the one float left on the stack. */
  result(): string {
    if (this.stack.length !== 1 || this.stack[0]!.kind !== "float") throw new Error(`a transcendental left ${this.stack.length} values`);
    return this.stack.pop()!.expr;
  }

  protected push(expr: string, kind: ValueKind): void {
    this.stack.push({ expr, kind });
  }

  protected pop(): ExpressionValue {
    const v = this.stack.pop();
    if (v === undefined) throw new Error("expression stack underflow");
    return v;
  }

  protected pop2(): [ExpressionValue, ExpressionValue] {
    const b = this.pop();
    return [this.pop(), b];
  }

  /** (a, b) → f(a, b), of kind `kind`. */
  protected op2(kind: ValueKind, f: (a: string, b: string) => string): void {
    const [a, b] = this.pop2();
    this.push(f(a.expr, b.expr), kind);
  }

  /** a → f(a), of kind `kind`. */
  protected op1(kind: ValueKind, f: (a: string) => string): void {
    this.push(f(this.pop().expr), kind);
  }

  /** A simple expression as is; anything else saved in a temporary (for an operand written twice). */
  protected named(expr: string, kind: ValueKind = "float"): string {
    if (/^[\w.]+$/.test(expr)) return expr;
    const t = `t${this.temps++}`;
    this.statements.push(this.syntax.temporary(this.syntax.types[kind], t, expr));
    return t;
  }

  /** Before local l is assigned, the values on the stack that read it are saved in temporaries. */
  private detach(l: number): void {
    const pattern = new RegExp(`\\b${this.name(l)}\\b`);
    this.stack.forEach((v, i) => {
      if (!pattern.test(v.expr)) return;
      const t = `t${this.temps++}`;
      this.statements.push(this.syntax.temporary(this.syntax.types[v.kind], t, v.expr));
      this.stack[i] = { expr: t, kind: v.kind };
    });
  }

  local(kind: ValueKind): number {
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
