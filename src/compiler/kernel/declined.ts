// How a code generator (of any backend) declines: it says why, and the program runs that
// step on the interpreter's kernel instead (the executor lists the reason in `dump`).

/** A code generator that cannot (or should not) compile something says why; the executor then runs the interpreter's kernel. */
export interface Unsupported {
  readonly unsupported: string;
}

export function isUnsupported<K extends object>(x: K | Unsupported): x is Unsupported {
  return (x as Unsupported).unsupported !== undefined;
}
