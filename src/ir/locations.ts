// Where IR came from in its source text: the line and column of the op an instruction
// was imported from (MLIR's `loc`), of the function a computation was, of the mesh a
// module's named mesh was. Kept beside the IR rather than in it, so instructions stay
// plain data that passes build and compare; the factory carries an instruction's
// location to the instruction that replaces it. Diagnostics (the sdy verifier) use it
// to point at the text.

export interface SourceLocation {
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

const LOCATIONS = new WeakMap<object, SourceLocation>();

/** Records where `thing` (an instruction, computation or named mesh) was read from. */
export function setSourceLocation(thing: object, location: SourceLocation): void {
  LOCATIONS.set(thing, location);
}

/** Where `thing` was read from; undefined for IR built in memory. */
export function sourceLocation(thing: object): SourceLocation | undefined {
  return LOCATIONS.get(thing);
}

const RETURN_LOCATIONS = new WeakMap<object, SourceLocation>();

/** Records where a computation's return op (`return`, `sdy.return`) was read from: diagnostics about returned values point there. */
export function setReturnLocation(computation: object, location: SourceLocation): void {
  RETURN_LOCATIONS.set(computation, location);
}

/** Where a computation's return op was read from; undefined for IR built in memory. */
export function returnLocation(computation: object): SourceLocation | undefined {
  return RETURN_LOCATIONS.get(computation);
}
