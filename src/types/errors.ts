// Typed errors. Every error a user can provoke is one of these, so callers can tell
// "your program is wrong" (ShapeError, VerifyError, ParseError) from "xlats hit a
// limit or a runtime fault" (ExecutionError).

/** A position in a source text: 1-based line and column. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export class XlaError extends Error {
  override name = "XlaError";
  /** Where in the source text the problem is, when known (`xlats opt` reports FILE:LINE:COL). */
  location?: SourceLocation;
}

/** Sets `error.location` when it is known; returns the error (`throw atLocation(new VerifyError(m), loc)`). */
export function atLocation<E extends XlaError>(error: E, location: SourceLocation | undefined): E {
  if (location !== undefined) error.location = location;
  return error;
}

/** An op's arguments violate one of its shape rules. `op` is the XLA op name. */
export class ShapeError extends XlaError {
  override name = "ShapeError";
  constructor(message: string, readonly op?: string, readonly argument?: string) {
    super(message);
  }
}

/** A computation or module is not well formed (the verifier's findings). */
export class VerifyError extends XlaError {
  override name = "VerifyError";
}

/** Failure while running a program (unknown custom-call target, empty infeed, ...). */
export class ExecutionError extends XlaError {
  override name = "ExecutionError";
}

/** A run stopped because it passed its deadline (`EvaluateOptions.deadline`, `xlats run --timeout`). */
export class DeadlineError extends ExecutionError {
  override name = "DeadlineError";
}

/**
 * A native kernel faulted (SIGSEGV, SIGBUS, SIGFPE, SIGILL: native/glue.ts catches the
 * signal): the process goes on, the executable does not (its buffers may hold a partial write).
 */
export class NativeFaultError extends ExecutionError {
  override name = "NativeFaultError";
  constructor(message: string, readonly program: string, readonly kernel: string) {
    super(message);
  }
}

/**
 * More than the process can hold or run: a value whose byte size overflows or exceeds
 * the memory budget, or more devices than the device limit (resource.ts). `instruction`
 * names the instruction, literal or thing (a mesh, a client) it is about; `bytes` is the
 * size asked for (NaN for a device count); `devices` the device count asked for.
 */
export class ResourceError extends XlaError {
  override name = "ResourceError";
  constructor(message: string, readonly instruction: string, readonly bytes: number, readonly devices?: number) {
    super(message);
  }
}

/** Text that does not parse: carries the position and a caret under the source line. */
export class ParseError extends XlaError {
  override name = "ParseError";
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    readonly sourceLine: string,
    readonly file = "<input>",
  ) {
    super(`${file}:${line}:${column}: ${reason}\n${sourceLine}\n${" ".repeat(Math.max(0, column - 1))}^`);
  }
}

/** The compiler failed on a program the verifier accepts (a pass broke the IR, a code generator hit a limit). */
export class CompileError extends XlaError {
  override name = "CompileError";
}

/**
 * Several diagnostics at once, in the order they arise (MLIR reports a bad attribute
 * with each enclosing parser's error; a verifier may find several problems). `xlats opt`
 * prints each on its own line.
 */
export class DiagnosticList extends XlaError {
  override name = "DiagnosticList";
  constructor(readonly diagnostics: readonly XlaError[]) {
    super(diagnostics.map((d) => d.message).join("\n"));
  }
}
