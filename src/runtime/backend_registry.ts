// Backends by name. The built-in ones come from one list, backends.ts, which both the
// host (client, CLI, check runner) and every device worker read, so a backend listed
// there is known on both sides. A backend registered at run time with registerBackend
// is known in the registering thread only; its Backend.deviceModule tells workers which
// module to import to register its device side there.
//
// Backend modules should import only types from this file: backends.ts imports them,
// and this file reads backends.ts lazily (on first use), so a cycle does no harm.

import type { Computation, HloModule } from "../ir/computation.js";
import type { EvaluateOptions } from "../interpreter/evaluate.js";
import { ExecutionError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import type { Backend, DeviceBackend } from "./backend.js";
import { BUILTIN_BACKENDS } from "./backends.js";

/** What `xlats compile --dump` asks the backend's compiler to print. */
export interface DumpOptions {
  /** The module after the whole pipeline (the default). */
  readonly dump?: boolean;
  /** The module after each pass, each under a header naming the pass. */
  readonly dumpAfterEach?: boolean;
}

export interface BackendEntry {
  readonly host: Backend;
  readonly device: DeviceBackend;
  /**
   * The in-process path for one-device runs (no workers): evaluates like the
   * interpreter's `evaluate`, with the same options (custom-call targets included).
   * Used by the check runner and `xlats run`; absent: one-device runs go through a client.
   */
  readonly evaluate?: (computation: Computation, args: readonly Literal[], options?: EvaluateOptions) => Literal | Promise<Literal>;
  /** Compiles `module` and returns the text `xlats compile` prints (the IR after passes, kernels...). */
  readonly compileAndDump?: (module: HloModule, options: DumpOptions) => string;
}

let entries: Map<string, BackendEntry> | undefined;

function registry(): Map<string, BackendEntry> {
  if (entries === undefined) {
    entries = new Map();
    for (const entry of BUILTIN_BACKENDS) add(entries, entry);
  }
  return entries;
}

function add(into: Map<string, BackendEntry>, entry: BackendEntry): void {
  const name = entry.host.name;
  if (entry.device.name !== name) {
    throw new ExecutionError(`registerBackend: the host side is named "${name}" but the device side "${entry.device.name}"`);
  }
  const existing = into.get(name);
  if (existing !== undefined && existing !== entry) throw new ExecutionError(`registerBackend: a backend named "${name}" is already registered`);
  into.set(name, entry);
}

/** Makes a backend known by its name (host.name, which must equal device.name). Registering the same entry twice is harmless. */
export function registerBackend(entry: BackendEntry): void {
  add(registry(), entry);
}

/** Names of the registered backends, in registration order. */
export function backendNames(): string[] {
  return [...registry().keys()];
}

/** The backend named `name`, or undefined. */
export function findBackend(name: string): BackendEntry | undefined {
  return registry().get(name);
}

/** The backend named `name`; an unknown name is an ExecutionError listing the known ones. */
export function getBackend(name: string): BackendEntry {
  const entry = findBackend(name);
  if (entry === undefined) {
    throw new ExecutionError(`unknown backend "${name}" (known backends: ${backendNames().join(", ")})`);
  }
  return entry;
}
