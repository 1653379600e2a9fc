// A character cursor over MLIR text: skips whitespace and `//` comments, reads the
// lexical pieces of MLIR (identifiers, numbers, strings, `%values`, `@symbols`) and
// turns every failure into a ParseError with line, column, the source line and a caret.
// The parser is recursive descent over this cursor rather than over a token list,
// because MLIR switches lexical modes inside types (`tensor<2x3xf32>`).

import { decodeMlirStringBody, mlirStringEnd } from "../../types/mlir_string.js";
import { ParseError } from "../../types/errors.js";

/** Deepest nesting of regions, lists or attributes accepted before the parser gives up (no stack overflow). */
export const MAX_NESTING = 256;

/** Most results one op may declare (`%r:N = ...`): far beyond real programs, and each costs work before its types are read. */
export const MAX_RESULT_COUNT = 1 << 16;

/** A number as MLIR writes it, matched in place (sticky: no substring per number). */
const NUMBER = /[-+]?(0x[0-9a-fA-F]+|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)/y;

/** A letter or `_`: a keyword accepted there must not run on into a longer identifier. */
function isIdentifierStart(code: number): boolean {
  const lower = code | 0x20;
  return (lower >= 97 && lower <= 122) || code === 95;
}

export interface SourcePos {
  readonly line: number;
  readonly column: number;
}

export class Cursor {
  pos = 0;
  private depth = 0;
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string, readonly fileName = "<input>", readonly lineOffset = 0) {
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) this.lineStarts.push(i + 1);
  }

  /** Line (1-based, shifted by lineOffset) and column (1-based) of an offset. */
  location(offset = this.pos): SourcePos {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1 + this.lineOffset, column: offset - this.lineStarts[lo]! + 1 };
  }

  error(reason: string, offset = this.pos): ParseError {
    const { line, column } = this.location(offset);
    const localLine = line - this.lineOffset - 1;
    const start = this.lineStarts[localLine] ?? 0;
    let end = this.text.indexOf("\n", start);
    if (end < 0) end = this.text.length;
    return new ParseError(reason, line, column, this.text.slice(start, end), this.fileName);
  }

  /**
   * The first error about something MLIR parses but xlats cannot represent (an
   * unranked function signature type): reported once the whole text is parsed, so a
   * mistake MLIR itself would report while parsing comes first, as it does there.
   */
  deferred: ParseError | undefined;

  defer(error: ParseError): void {
    this.deferred ??= error;
  }

  /** Runs `fn` one nesting level deeper; too deep is a ParseError, never a stack overflow. */
  nested<T>(fn: () => T): T {
    if (++this.depth > MAX_NESTING) throw this.error(`nesting deeper than ${MAX_NESTING} levels`);
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  skipWs(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.pos++;
      else if (c === 47 && t.charCodeAt(this.pos + 1) === 47) {
        const nl = t.indexOf("\n", this.pos);
        this.pos = nl < 0 ? t.length : nl + 1;
      } else return;
    }
  }

  atEnd(): boolean {
    this.skipWs();
    return this.pos >= this.text.length;
  }

  /** The next non-blank character ("" at the end). */
  peek(): string {
    this.skipWs();
    return this.text[this.pos] ?? "";
  }

  /** Whether the text continues with `s` (after blanks). */
  lookingAt(s: string): boolean {
    this.skipWs();
    return this.text.startsWith(s, this.pos);
  }

  /** Consumes `s` if it comes next. A word is only matched whole (`cond` does not match `condition`). */
  accept(s: string): boolean {
    if (!this.lookingAt(s)) return false;
    if (isIdentifierStart(s.charCodeAt(0)) && /[A-Za-z0-9_.$]/.test(this.text[this.pos + s.length] ?? "")) return false;
    this.pos += s.length;
    return true;
  }

  expect(s: string, what?: string): void {
    if (!this.accept(s)) throw this.error(`expected '${s}'${what ? ` ${what}` : ""}, found ${this.describeNext()}`);
  }

  describeNext(): string {
    this.skipWs();
    if (this.pos >= this.text.length) return "end of input";
    const m = /^\S{1,20}/.exec(this.text.slice(this.pos));
    return `'${m ? m[0] : this.text[this.pos]}'`;
  }

  /** A bare identifier: letters, digits, `_`, `$`, `.` (MLIR's bare-id, which covers `stablehlo.add`). */
  identifier(): string | undefined {
    this.skipWs();
    const m = /^[A-Za-z_][A-Za-z0-9_$.]*/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }

  expectIdentifier(what: string): string {
    const id = this.identifier();
    if (id === undefined) throw this.error(`expected ${what}, found ${this.describeNext()}`);
    return id;
  }

  /** A string literal with MLIR's escapes (`\"`, `\\`, `\n`, `\t`, two hex digits for one byte of UTF-8). */
  stringLiteral(): string | undefined {
    if (this.peek() !== '"') return undefined;
    const start = this.pos;
    // Plain ASCII with no escape (a weights blob "0x..." runs to megabytes): one slice,
    // found and checked by native scans.
    const end = this.text.indexOf('"', start + 1);
    if (end > start) {
      const body = this.text.slice(start + 1, end);
      if (!/[\\\n\u0080-\uffff]/.test(body)) {
        this.pos = end + 1;
        return body;
      }
    }
    const close = mlirStringEnd(this.text, start);
    if (close < 0) throw this.error("unterminated string", start);
    const value = decodeMlirStringBody(this.text.slice(start + 1, close));
    if (typeof value !== "string") throw this.error(`bad escape '${this.text.slice(start + 1 + value.badEscapeAt, start + 3 + value.badEscapeAt)}' in string`, start + 1 + value.badEscapeAt);
    this.pos = close + 1;
    return value;
  }

  /** A number token as text: `-12`, `0x7F80`, `1.5e-3`, `inf`/`nan` are not numbers here. */
  numberText(): string | undefined {
    this.skipWs();
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }

  integer(what = "an integer"): number {
    const at = this.pos;
    const t = this.numberText();
    if (t === undefined || !/^[-+]?(0x[0-9a-fA-F]+|[0-9]+)$/.test(t)) throw this.error(`expected ${what}`, at);
    const v = t.includes("0x") ? (t.startsWith("-") ? -1 : 1) * parseInt(t.replace(/^[-+]?0x/, ""), 16) : Number(t);
    if (!Number.isSafeInteger(v)) throw this.error(`${what} ${t} is out of range`, at);
    return v;
  }

  /** `%name` or `%name#3`: the SSA value name (without `%`) and result index. */
  valueRef(): { name: string; index: number; offset: number } | undefined {
    this.skipWs();
    const m = /^%([A-Za-z0-9_$.-]+)(#([0-9]+))?/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!m) return undefined;
    const offset = this.pos;
    this.pos += m[0].length;
    return { name: m[1]!, index: m[3] === undefined ? 0 : Number(m[3]), offset };
  }

  /** `@name` or `@"quoted name"`. */
  symbol(): string | undefined {
    if (this.peek() !== "@") return undefined;
    this.pos++;
    if (this.text[this.pos] === '"') return this.stringLiteral();
    const m = /^[A-Za-z0-9_$.-]+/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!m) throw this.error("expected a symbol name after '@'");
    this.pos += m[0].length;
    return m[0];
  }

  /** The raw text of a `<...>` group (angle brackets balanced, strings respected), without the outer brackets. */
  balancedAngle(): string {
    this.expect("<");
    const start = this.pos;
    let depth = 1;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos]!;
      if (c === '"') {
        this.stringLiteral();
        continue;
      }
      if (c === "<") depth++;
      else if (c === ">" && this.text[this.pos - 1] !== "-") depth--;
      if (depth === 0) {
        const body = this.text.slice(start, this.pos);
        this.pos++;
        return body;
      }
      this.pos++;
    }
    throw this.error("unbalanced '<'", start - 1);
  }
}
