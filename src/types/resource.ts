// The memory budget: the most bytes one array value may take. The verifier checks every
// statically shaped value against it, and storage allocation checks again at run time,
// so a shape too large to hold is a ResourceError naming the value and its size, not a
// RangeError from a typed-array constructor or an out-of-memory kill.

import { ELEMENT_TYPES } from "./element_type.js";
import { ResourceError } from "./errors.js";
import { arrayLeaves, shapeToString, storageElementCount, type Shape } from "./shape.js";

/** 2 GiB: larger than any single value the interpreter handles in reasonable time, and within every typed-array limit. */
export const DEFAULT_MEMORY_BUDGET_BYTES = 2 ** 31;

let budgetBytes = DEFAULT_MEMORY_BUDGET_BYTES;

/** The current budget in bytes. */
export function memoryBudget(): number {
  return budgetBytes;
}

/** Sets the most bytes one array value may take (process-wide); returns the previous budget. */
export function setMemoryBudget(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`a memory budget is a whole number of bytes, got ${bytes}`);
  const previous = budgetBytes;
  budgetBytes = bytes;
  return previous;
}

/**
 * Throws a ResourceError when an array of `shape` (or one of its tuple leaves) takes
 * more than the budget; `instruction` names the value, `where` prefixes the message.
 */
export function checkFitsBudget(shape: Shape, instruction: string, where = instruction, budget = budgetBytes): void {
  for (const leaf of arrayLeaves(shape)) {
    const bytes = storageElementCount(leaf) * ELEMENT_TYPES[leaf.elementType].storageBytes;
    checkBytes(bytes, `${where}: ${shapeToString(leaf)}`, instruction, budget);
  }
}

/** Throws a ResourceError when `bytes` (which may have lost precision or overflowed) exceed the budget. */
export function checkBytes(bytes: number, description: string, instruction: string, budget = budgetBytes): void {
  if (bytes <= budget) return;
  const size = Number.isSafeInteger(bytes) ? `${bytes} bytes` : "a byte size beyond 2^53 (it overflows)";
  throw new ResourceError(`${description} needs ${size}, more than the memory budget of ${budget} bytes`, instruction, bytes);
}
