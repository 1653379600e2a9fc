// The limits of what one process holds and runs, each a typed ResourceError when passed
// (checked before anything is allocated for it), never a RangeError from a typed-array
// constructor, an out-of-memory kill or a hang.
//
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

/**
 * 134,217,725 (2^27 - 3): the most elements V8 lets one JS array hold. Kernels that hold
 * a value's elements as JS values (the interpreter's) check against it, since growing
 * an array past it is a RangeError at best and the end of the process at worst.
 */
export const MAX_JS_ARRAY_ELEMENTS = 2 ** 27 - 3;

/** The `instruction` of Literal.values's ResourceError, until the interpreter names the instruction whose kernel asked. */
export const LITERAL_VALUES = "a literal's values";

/** Bytes a JS array holds per element: one 8-byte slot (a number, or a pointer to a bigint, boolean or complex pair). */
const JS_SLOT_BYTES = 8;

/**
 * Throws a ResourceError unless `count` elements fit in a JS array: at most
 * MAX_JS_ARRAY_ELEMENTS, and 8 bytes a slot inside the memory budget.
 */
export function checkJsArray(count: number, description: string, instruction: string): void {
  if (count > MAX_JS_ARRAY_ELEMENTS) {
    throw new ResourceError(`${description} needs ${count} elements as JS values, more than the ${MAX_JS_ARRAY_ELEMENTS} a JS array holds`, instruction, count * JS_SLOT_BYTES);
  }
  checkBytes(count * JS_SLOT_BYTES, `${description} as JS values`, instruction);
}

/**
 * 256: the most devices a client or a partitioned run may have. Each device of a run is
 * a worker with its own isolate and memory (about 5 MB before any data), so 256 devices
 * stay near 1.3 GB, and a mesh of a thousand or a million devices (a file may declare
 * one) is refused before any worker or per-device program exists.
 */
export const DEFAULT_DEVICE_LIMIT = 256;

/**
 * 65536: the most devices xlats walks one by one outside a run (expanding an iota tile
 * assignment to convert it to a Shardy sharding). Parsing, verifying and propagating
 * shardings never list devices, and drawings summarise past 256, so larger meshes are
 * read and drawn; only an expansion this large is refused.
 */
export const MAX_LISTED_DEVICES = 2 ** 16;

/**
 * Deepest nesting of computation calls the interpreter runs (about 1,500 fit in Node's
 * default stack), and so the deepest call graph Shardy's passes accept. Here, not in the
 * interpreter, so that the passes (and `xlats opt`) check it without loading the interpreter.
 */
export const MAX_CALL_DEPTH = 1000;

let deviceLimitCount = DEFAULT_DEVICE_LIMIT;

/** The current device limit. */
export function deviceLimit(): number {
  return deviceLimitCount;
}

/** Sets the most devices one client or run may have (process-wide; `xlats` reads $XLATS_MAX_DEVICES); returns the previous limit. */
export function setDeviceLimit(devices: number): number {
  if (!Number.isSafeInteger(devices) || devices < 1) throw new RangeError(`a device limit is a positive whole number, got ${devices}`);
  const previous = deviceLimitCount;
  deviceLimitCount = devices;
  return previous;
}

function deviceError(devices: number, what: string, limit: string): ResourceError {
  const count = Number.isSafeInteger(devices) ? `${devices} devices` : "a device count beyond 2^53";
  return new ResourceError(`${what} needs ${count}, more than ${limit}`, what, NaN, devices);
}

/** Throws a ResourceError when a run needs more devices than the device limit; `what` names what needs them. */
export function checkDeviceCount(devices: number, what: string): void {
  if (devices <= deviceLimitCount) return;
  throw deviceError(devices, what, `the device limit of ${deviceLimitCount} (each device of a run is a worker with its own memory; ` +
    `raise the limit with setDeviceLimit or $XLATS_MAX_DEVICES where the machine can take it)`);
}

/** Throws a ResourceError when listing `devices` one by one would pass MAX_LISTED_DEVICES. */
export function checkListedDevices(devices: number, what: string): void {
  if (devices <= MAX_LISTED_DEVICES) return;
  throw deviceError(devices, what, `the ${MAX_LISTED_DEVICES} xlats lists one by one`);
}
