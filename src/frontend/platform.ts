// Which backend the front end's programs compile for, chosen as JAX chooses its platform:
// `jit(f, { backend })` for one function, `config.update("jax_platforms", "native,wasm")`
// for the process (a comma-separated list, the first available name wins), and
// `defaultBackend()` says which one is in use.
//
// The front end's platforms are the CPU backends that keep arrays in the WebAssembly
// device's memory: "wasm" (everywhere) and "native" (C kernels built by the machine's C
// compiler; Node with gcc or clang). Both load their programs on the one shared device
// (compiler/backend.ts, defaultDevice), so an array made under one is an argument of the
// other's programs as it is, with no copy. "webgpu" keeps arrays in GPU memory and runs
// asynchronously; "interpreter" runs on host literals: neither is a front-end platform.
//
// Eager ops (np calls outside jit) always run on wasm, whatever the platform: a single op
// gains little from C (large matmuls about 2x, small ops nothing), while building each
// distinct op and shape with the C compiler costs 0.2-4 s the first time on a machine
// (figures in docs/frontend.md).

import { BACKENDS } from "../compiler/backends.js";
import { FrontendError } from "./errors.js";

/** The backends the front end's programs may compile for. */
const PLATFORMS = ["wasm", "native"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Why the other backends of the compiler's table are not front-end platforms. */
const NOT_PLATFORMS: Readonly<Record<string, string>> = {
  webgpu: "its arrays live in GPU memory and its programs run asynchronously, while the front end's arrays live in the CPU device's memory",
  interpreter: "it runs on host literals, not on the device memory the front end's arrays live in (the compiled backends are checked against it)",
};

const isPlatform = (name: string): name is Platform => (PLATFORMS as readonly string[]).includes(name);

/** Whether `name` can run here: true, or why not (the native backend needs a working C compiler). */
function availability(name: Platform): true | string {
  return BACKENDS[name].available();
}

/** The front-end platforms available in this process. */
function availablePlatforms(): Platform[] {
  return PLATFORMS.filter((p) => availability(p) === true);
}

const availableList = (): string => availablePlatforms().join(", ");

/** The FrontendError for a name that is not a front-end platform (why, for the compiler's other backends). */
function notAPlatform(name: unknown, where: string): never {
  const why = typeof name === "string" && Object.hasOwn(NOT_PLATFORMS, name) ? `: ${NOT_PLATFORMS[name]}` : "";
  throw new FrontendError(`${where}: "${String(name)}" is not a front-end backend${why} (the front end's backends: ${PLATFORMS.join(", ")}; available here: ${availableList()})`, where);
}

/** `name` as a platform that runs here, or a FrontendError saying why not and naming the available ones. */
export function checkPlatform(name: unknown, where: string): Platform {
  if (typeof name !== "string" || !isPlatform(name)) return notAPlatform(name, where);
  const ok = availability(name);
  if (ok !== true) throw new FrontendError(`${where}: the ${name} backend is not available here: ${ok} (available: ${availableList()})`, where);
  return name;
}

/** The process's platform list as given to config (undefined: the default, "wasm"). */
let platformList: string | undefined;
let platform: Platform = "wasm";

/** jax.default_backend(): the backend `jit` compiles for when its `backend` option is not given. */
export const defaultBackend = (): Platform => platform;

/** The first available platform of a comma-separated list (every name must be a platform; at least one must run here). */
function firstAvailable(list: string, where: string): Platform {
  const names = list.split(",").map((n) => n.trim()).filter((n) => n !== "");
  if (names.length === 0) throw new FrontendError(`${where}: an empty list of platforms (the front end's backends: ${PLATFORMS.join(", ")})`, where);
  const platforms = names.map((n) => (isPlatform(n) ? n : notAPlatform(n, where)));
  const reasons: string[] = [];
  for (const p of platforms) {
    const ok = availability(p);
    if (ok === true) return p;
    reasons.push(`${p}: ${ok}`);
  }
  throw new FrontendError(`${where}: none of "${list}" is available here (${reasons.join("; ")}; available: ${availableList()})`, where);
}

/** The options `config` knows, with their current values. */
interface ConfigValues {
  /** A comma-separated list of backends in order of preference (the first available is used); undefined: "wasm". */
  jax_platforms: string | undefined;
}

/**
 * jax.config: `config.update(name, value)` sets an option, `config.jax_platforms` reads
 * one. The only option is `jax_platforms` (undefined or null restores the default).
 */
export const config = {
  get jax_platforms(): string | undefined {
    return platformList;
  },

  update<K extends keyof ConfigValues>(name: K, value: ConfigValues[K] | null): void {
    const where = `config.update("${String(name)}")`;
    if (name !== "jax_platforms") throw new FrontendError(`config.update: unknown option "${String(name)}" (the options: jax_platforms)`, "config.update");
    if (value === undefined || value === null) {
      platformList = undefined;
      platform = "wasm";
      return;
    }
    if (typeof value !== "string") throw new FrontendError(`${where}: the value must be a comma-separated string of backends, got ${typeof value}`, where);
    platform = firstAvailable(value, where);
    platformList = value;
  },
};
