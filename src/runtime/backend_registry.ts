// Backends by name. The runtime knows no backend of its own: the package's entry points
// (src/index.ts, the CLI, the browser's device worker src/web_device_worker.ts) import
// compiler/backends.ts, whose one table registers every built-in backend here; the Node
// device worker registers the one its host names (compiler/backend_modules.ts). A backend registered at run time with registerBackend is known in the
// registering thread only; its Backend.deviceModule tells workers which module to
// import to register its device side there.

import type { Computation, HloModule } from "../ir/computation.js";
import type { EvaluateOptions } from "../interpreter/evaluate.js";
import { ExecutionError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import type { Backend, DeviceBackend } from "./backend.js";

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
  /** true where the backend can run here; else why not (absent: always). */
  readonly available?: () => true | string;
  /** Rank among the backends picked when none is named: the available one of highest rank wins (absent: never the default). */
  readonly defaultRank?: number;
}

const entries = new Map<string, BackendEntry>();

function registry(): Map<string, BackendEntry> {
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

/** Registers each of `list` (registerBackend). */
export function registerBackends(list: Iterable<BackendEntry>): void {
  for (const entry of list) registerBackend(entry);
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
    throw new ExecutionError(`unknown backend "${name}" (known backends: ${backendNames().join(", ") || "none: import the package's entry point, which registers them"})`);
  }
  return entry;
}

let chosen: string | undefined;

/**
 * The backend clients, `xlats run`, `xlats test` and the check runner use when none is
 * named: the available registered backend of highest defaultRank (checked once per
 * process), with one line on stderr, in Node, naming each higher-ranked backend passed
 * over and why.
 */
export function defaultBackend(): string {
  if (chosen !== undefined) return chosen;
  const ranked = [...registry().values()].filter((e) => e.defaultRank !== undefined).sort((a, b) => b.defaultRank! - a.defaultRank!);
  const skipped: string[] = [];
  for (const e of ranked) {
    const why = e.available?.() ?? true;
    if (why !== true) {
      skipped.push(`the ${e.host.name} backend is not available (${why})`);
      continue;
    }
    const proc = (globalThis as { process?: { versions?: { node?: string }; stderr?: { write(s: string): void } } }).process;
    if (skipped.length > 0 && proc?.versions?.node !== undefined) proc.stderr?.write(`xlats: using the ${e.host.name} backend: ${skipped.join("; ")}\n`);
    return (chosen = e.host.name);
  }
  throw new ExecutionError(`no backend is available to pick by default (registered: ${backendNames().join(", ") || "none"}${skipped.length > 0 ? `; ${skipped.join("; ")}` : ""})`);
}
