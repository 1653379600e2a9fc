// Helpers every C generator shares: a kernel's symbol from its source (so the same
// program gives the same module text, hence the same cache entry, in every process, and
// identical kernels share one definition), and the pointer to a buffer's row with the
// contract's 32-bit offset arithmetic (kernel.ts).

import type { CKernelSource } from "./kernel.js";

/**
 * `text` (a name from the program: an instruction, a fusion, a location) as the body of
 * a C comment: only letters, digits, spaces and `_.,:;=+-#%()[]<>` are kept, anything
 * else becomes `_`. No `*`, `/` or backslash survives, so neither `*` `/` nor a
 * backslash-newline splice (C joins `*\` and a newline and `/` into `*` `/`) can end
 * the comment and put the program's text into the module as code.
 */
export function cComment(text: string): string {
  return `/* ${text.replace(/[^A-Za-z0-9 _.,:;=+\-#%()[\]<>]/g, "_")} */`;
}

/** A C identifier: the only form a kernel's symbol may take (it is also written into the glue's table). */
export const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Stands for the kernel's symbol in a generator's source until symbolize() names it. */
export const SYM = "@SYM@";

/** FNV-1a, 64 bits: a stable name from the text (collisions only merge identical-text kernels' names). */
function fnv64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

/** The kernel's source with SYM replaced by `xk_<kind>_<hash of the source>`. */
export function symbolize(kind: string, source: string): CKernelSource {
  const symbol = `xk_${kind}_${fnv64(source)}`;
  return { symbol, source: source.split(SYM).join(symbol) };
}

/**
 * A `T *` to the element at `elementOffset` (a C int64 expression) of the buffer in
 * argument `arg`, computed as the contract says: offsets add modulo 2^32.
 */
export function bufferPointer(type: string, arg: number, elementOffset: string, elementBytes: number, isConst: boolean): string {
  const scaled = elementBytes === 1 ? elementOffset : `(${elementOffset}) * ${elementBytes}`;
  return `((${isConst ? "const " : ""}${type} *)(mem + (uint32_t)(args[${arg}] + (uint32_t)(${scaled}))))`;
}
