// The machine's C compiler, found and checked once per process: `$CC` (else `cc`) must
// build a Node-API module that this Node loads. What it builds is kept in a cache
// directory ($XLATS_NATIVE_CACHE, else $XDG_CACHE_HOME/xlats/native, else
// ~/.cache/xlats/native), so a program compiles once per machine. A module is built in
// three cached steps, each entry keyed by a hash of what it is made of:
//   - the glue's fixed part (glue.ts: the guard, the pool, the entry point) compiled
//     into an object file, once per toolchain: its headers took more of each build than
//     the kernels did;
//   - the module's own source (the prelude, its kernels and the glue's table of them)
//     compiled into an object file, keyed by that source, the flags, the compiler's
//     version and the CPU's features, but not by the glue's fixed part;
//   - the loadable module, a link of the two objects, keyed by both objects' keys.
// So a change of the glue costs one compile of the glue and a link per module (a few
// hundredths of a second), not a compile of every module's kernels. A module whose
// kernels' object is missing compiles it and links in one child process (a shell
// running both), and the link calls the linker directly (directLink), not through the
// driver. A build writes to
// a temporary name and renames it into place, so processes building the same entry at
// once do not clash. What makes the cache safe to load from (a private directory,
// entries checked against their digest, a size cap, killed builds cleaned up) is
// cache.ts's. Node's modules come from node.ts (no static `node:` import: the
// compiler's module graph is also the browser's).

import { CompileError } from "../../types/errors.js";
import type { NativeCpu } from "./kernel.js";
import { GLUE_ABI, glueObjectSource, glueTableSource } from "./glue.js";
import { cacheMaxBytes, checkCacheDir, entryProblem, findEntry, markInUse, storeEntry, sweepIfDue } from "./cache.js";
import { nodeBuiltins, type NodeBuiltins } from "./node.js";

export interface Toolchain {
  /** The compiler command (`$CC` or `cc`). */
  readonly cc: string;
  /** Its `--version` first line and target triple: part of every cache key. */
  readonly version: string;
  readonly cpu: NativeCpu;
  /** Flags of every compilation (the code generators rely on them: no -ffast-math, so NaN and infinity semantics hold; no contraction into FMA, so each op rounds as the interpreter's; -fwrapv, so signed integers wrap). */
  readonly flags: readonly string[];
  /** Flags that link a module (a shared object that Node loads). */
  readonly linkFlags: readonly string[];
  readonly cacheDir: string;
  /** The cache's cap in bytes (cache.ts). */
  readonly cacheMaxBytes: number;
  readonly includeDir: string;
}

/** The process's services, its fault guard and thread pool (glue.ts): an opaque Node-API external. */
export type NativeGuard = object;

/** What a loaded module exports (glue.ts). */
export interface NativeModuleExports {
  /** Throws a RangeError for a bad call, an Error with code XLATS_NATIVE_FAULT when the kernel faulted. */
  run(kernel: number, memory: Uint8Array, pointers: Uint32Array, begin: number, end: number, threads: number, scratch: Uint32Array): void;
  /** Runs a call list (glue.ts's encodeCalls); errors as run's, calls[0] naming the kernel whose call failed. */
  runCalls(memory: Uint8Array, calls: Uint32Array, threads: number, scratch: Uint32Array, times: Float64Array | null): void;
  installGuard(): NativeGuard;
  useGuard(guard: NativeGuard): void;
  readonly kernels: number;
  readonly abi: string;
}

export interface BuiltModule {
  readonly path: string;
  /** Whether the module came from the cache (no compiler run). */
  readonly cached: boolean;
  /** Milliseconds the compiler took (0 when cached). */
  readonly compileMs: number;
}

/**
 * Counts of what this process did, for tests and `xlats` reports: modules built (linked,
 * their objects compiled or found) and found in the cache; and the compiler's runs by
 * kind: objects of the glue's fixed part, objects of modules' kernels, and links.
 */
export const nativeBuildStats = { compiled: 0, cacheHits: 0, glueObjects: 0, kernelObjects: 0, links: 0 };

let found: Toolchain | string | undefined;
/** The guard and pool every module loaded after the probe runs its kernels in (installed by the probe). */
let guard: NativeGuard | undefined;

/**
 * The checked toolchain, or why there is none (no Node, no compiler, or a compiler
 * that cannot build a module this Node loads). Checked once per process; the check's
 * module is cached on disk like any other, so later processes only load it.
 */
export function nativeToolchain(): Toolchain | string {
  if (found !== undefined) return found;
  const node = nodeBuiltins();
  if (typeof node === "string") return (found = node);
  try {
    const t = detect(node);
    if (typeof t === "string") return (found = t);
    // The probe: the glue with no kernels, built and loaded like a program's module.
    const probe = buildModuleSync(t, "", "probe");
    const m = loadModule(probe.path);
    if (m.abi !== GLUE_ABI || m.kernels !== 0) return (found = `the probe module of ${t.cc} did not load as expected`);
    guard = m.installGuard();
    found = t;
  } catch (e) {
    found = `${e instanceof Error ? e.message.split("\n").slice(0, 4).join(" ") : String(e)}`;
  }
  return found;
}

function detect(node: NodeBuiltins): Toolchain | string {
  const { childProcess, process } = node;
  const cc = process.env["CC"]?.trim() || "cc";
  let version: string;
  try {
    const v = childProcess.execFileSync(cc, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).split("\n")[0]!.trim();
    const machine = childProcess.execFileSync(cc, ["-dumpmachine"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    version = `${v} (${machine})`;
  } catch {
    return `no C compiler: \`${cc} --version\` failed (set $CC to a C compiler)`;
  }
  const cpu = detectCpu(node);
  const includeDir = headersDir(node);
  if (includeDir === undefined) return "the node-api-headers package is not installed";
  // -Werror=implicit-function-declaration: the prelude declares the C library functions
  // itself (prelude.ts), and a call of one it missed must stop the build, not return an int.
  const flags = ["-std=gnu11", "-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing", "-fPIC", "-pthread",
    "-Werror=implicit-function-declaration",
    ...(cpu.arch === "x86_64" ? ["-march=native"] : cpu.arch === "aarch64" ? ["-mcpu=native"] : [])];
  const linkFlags = ["-shared", ...(process.platform === "darwin" ? ["-undefined", "dynamic_lookup"] : [])];
  const dir = cacheDir(node);
  checkCacheDir(node, dir);
  return { cc, version, cpu, flags, linkFlags, cacheDir: dir, cacheMaxBytes: cacheMaxBytes(process.env), includeDir };
}

function headersDir(node: NodeBuiltins): string | undefined {
  const { fs, path, url } = node;
  // From this file (dist/src/compiler/native/) up to the nearest node_modules that holds the package.
  let dir = path.dirname(url.fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "node_modules", "node-api-headers", "include");
    if (fs.existsSync(path.join(candidate, "node_api.h"))) return candidate;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function cacheDir(node: NodeBuiltins): string {
  const { os, path, process } = node;
  const env = process.env;
  if (env["XLATS_NATIVE_CACHE"]) return env["XLATS_NATIVE_CACHE"];
  const base = env["XDG_CACHE_HOME"] || path.join(os.homedir(), ".cache");
  return path.join(base, "xlats", "native");
}

/** The CPU's features, from /proc/cpuinfo on Linux x86_64; aarch64 always has NEON. */
export function detectCpu(node: NodeBuiltins): NativeCpu {
  const arch = node.process.arch === "x64" ? "x86_64" : node.process.arch === "arm64" ? "aarch64" : node.process.arch;
  let flags = new Set<string>();
  if (arch === "x86_64" && node.process.platform === "linux") {
    try {
      const info = node.fs.readFileSync("/proc/cpuinfo", "utf8");
      const line = info.split("\n").find((l) => l.startsWith("flags"));
      flags = new Set((line?.split(":")[1] ?? "").trim().split(/\s+/));
    } catch {
      // No cpuinfo: the portable code only.
    }
  }
  return { arch, avx2: flags.has("avx2"), fma: flags.has("fma"), avx512f: flags.has("avx512f"), neon: arch === "aarch64" };
}

function cpuKey(cpu: NativeCpu): string {
  return `${cpu.arch} avx2=${cpu.avx2} fma=${cpu.fma} avx512f=${cpu.avx512f} neon=${cpu.neon}`;
}

/**
 * One run of the C compiler or linker whose output is a cache entry: an object file
 * (the glue's, or a module's kernels), or a module linked from two of them.
 */
interface Job {
  /** The cache key: the entry is `<key>-<digest>.<extension>`. */
  readonly key: string;
  readonly extension: "node" | "o";
  readonly tmp: string;
  /** The C source an object file compiles (written to `cSource` first); undefined for a link. */
  readonly source: string | undefined;
  readonly cSource: string;
  /** The program and its arguments. */
  readonly command: readonly string[];
  /** The command to run where `command` failed (a direct link's: the compiler driver's). */
  readonly fallback?: readonly string[];
  /** What the run counts in nativeBuildStats. */
  readonly counts: "glueObjects" | "kernelObjects" | "links";
}

function cacheKey(text: string): string {
  const node = nodeBuiltins() as NodeBuiltins;
  return node.crypto.createHash("sha256").update(text).digest("hex").slice(0, 32);
}

function job(t: Toolchain, key: string, source: string | undefined, counts: Job["counts"], args: (tmp: string, cSource: string) => string[],
  direct?: (tmp: string) => string[]): Job {
  const node = nodeBuiltins() as NodeBuiltins;
  // The pid in the temporaries' names tells a later sweep whether their build is still running.
  const unique = `${node.process.pid}-${node.crypto.randomBytes(4).toString("hex")}`;
  const tmp = node.path.join(t.cacheDir, `${key}.${unique}.tmp`);
  const cSource = node.path.join(t.cacheDir, `${key}.${unique}.c`);
  const command = [t.cc, ...args(tmp, cSource)];
  const extension = counts === "links" ? "node" : "o";
  return direct === undefined ? { key, extension, tmp, source, cSource, command, counts } : { key, extension, tmp, source, cSource, command: direct(tmp), fallback: command, counts };
}

/** What every key starts with: the compiler, the flags of a compilation and the CPU (which -march=native reads). */
function toolchainKey(t: Toolchain): string {
  return `${t.version}\n${t.flags.join(" ")}\n${cpuKey(t.cpu)}`;
}

/** The job that compiles the glue's fixed part (glueObjectSource) into an object file: it includes Node's headers, so Node's version is in its key. */
function glueObjectJob(t: Toolchain, source: string): Job {
  const node = nodeBuiltins() as NodeBuiltins;
  const key = cacheKey(`glue object\n${toolchainKey(t)}\n${node.process.versions.node}\n${source}`);
  return job(t, key, source, "glueObjects", (tmp, c) => [...t.flags, `-I${t.includeDir}`, "-c", "-o", tmp, c]);
}

/**
 * The job that compiles a module's own source (the prelude, the kernels and the glue's
 * table of them, whose types are the glue's SHARED_TYPES) into an object file. Its key
 * is that source's and the toolchain's, not the glue's: a change of the glue's fixed
 * part relinks the modules (linkJob) without compiling their kernels again.
 */
function kernelObjectJob(t: Toolchain, source: string): Job {
  return job(t, cacheKey(`kernel object\n${toolchainKey(t)}\n${source}`), source, "kernelObjects", (tmp, c) => [...t.flags, "-c", "-o", tmp, c]);
}

/** A loadable module's key: its two objects' keys (the sources they compile), so that it is found without looking at them. */
function moduleKey(t: Toolchain, kernelsKey: string, glueKey: string): string {
  return cacheKey(`module\n${toolchainKey(t)}\n${t.linkFlags.join(" ")}\n${kernelsKey}\n${glueKey}`);
}

/** The job that links the module of `key` from its kernels' object and the glue's: the linker called directly where directLink found how, else the driver. */
function linkJob(t: Toolchain, key: string, kernelsObject: string, glueObject: string): Job {
  const direct = directLink(t);
  const fill = (tmp: string) => (word: string): string => (word === LINK_OUTPUT ? tmp : word === LINK_INPUTS[0] ? kernelsObject : word === LINK_INPUTS[1] ? glueObject : word);
  return job(t, key, undefined, "links", (tmp) => [...t.flags, ...t.linkFlags, "-o", tmp, kernelsObject, glueObject, "-lm"],
    direct === undefined ? undefined : (tmp) => direct.map(fill(tmp)));
}

/** Stand-ins for a link's output and inputs in the driver's command line that directLink reads. */
const LINK_OUTPUT = "xk-link-output.node";
const LINK_INPUTS = ["xk-link-kernels.o", "xk-link-glue.o"] as const;

/** Per toolchain (compiler, flags): the direct link's command with the stand-ins, or undefined (the driver links). */
const directLinks = new Map<string, readonly string[] | undefined>();

/**
 * The command that links a module without the compiler driver: the linker the driver
 * runs (GCC's collect2 stands for it), with the arguments it passes (startup files,
 * library paths, -lm, libgcc, libc), but not the link-time-optimization plugin, which
 * objects compiled without -flto never need. The driver and collect2 cost about 5 ms of
 * a module's 30 ms link (docs/backends.md, "Build time"). Found once per process and
 * toolchain from the driver's `-###` output; undefined, so that the driver links, where
 * that output is not understood. A direct link that fails runs the driver's (Job.fallback).
 */
function directLink(t: Toolchain): readonly string[] | undefined {
  const id = `${t.cc}\n${t.flags.join(" ")}\n${t.linkFlags.join(" ")}`;
  if (directLinks.has(id)) return directLinks.get(id);
  const { childProcess } = nodeBuiltins() as NodeBuiltins;
  const output = (args: string[]): string => {
    const r = childProcess.spawnSync(t.cc, args, { encoding: "utf8" });
    return r.status === 0 ? `${r.stdout ?? ""}${r.stderr ?? ""}` : "";
  };
  const shown = output([...t.flags, ...t.linkFlags, "-###", "-o", LINK_OUTPUT, ...LINK_INPUTS, "-lm"]);
  const command = linkerCommand(shown, () => output(["-print-prog-name=ld"]).trim());
  directLinks.set(id, command);
  return command;
}

/**
 * The linker's command line in a compiler driver's `-###` output (the last command that
 * writes LINK_OUTPUT), the plugin's arguments dropped and collect2 replaced by the linker
 * `collect2Linker()` names; undefined when there is no such line, when the stand-ins are
 * not each there once, or when the program is neither collect2 nor a linker.
 */
export function linkerCommand(shown: string, collect2Linker: () => string): string[] | undefined {
  const line = shown.split("\n").filter((l) => l.startsWith(" ") && l.includes(LINK_OUTPUT)).pop();
  if (line === undefined) return undefined;
  // Words as the drivers print them: bare, or in double quotes with backslash escapes.
  const words = [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[2] ?? m[1]!.replace(/\\(.)/g, "$1"));
  const [program, ...args] = words;
  const name = program?.split("/").pop() ?? "";
  let linker: string;
  if (name === "collect2") linker = collect2Linker();
  else if (/^(ld|ld\.\w+|ld64(\.\w+)?)$/.test(name)) linker = program!;
  else return undefined;
  if (linker === "" || /\s/.test(linker)) return undefined;
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-plugin") i++;
    else if (!args[i]!.startsWith("-plugin-opt")) kept.push(args[i]!);
  }
  const once = (word: string): boolean => kept.filter((w) => w === word).length === 1;
  return once(LINK_OUTPUT) && LINK_INPUTS.every(once) ? [linker, ...kept] : undefined;
}

/** The compiler's first error lines, for a CompileError. */
function compilerError(name: string, t: Toolchain, output: string): CompileError {
  const lines = output.split("\n").filter((l) => /error|undefined/i.test(l)).slice(0, 5);
  const shown = (lines.length > 0 ? lines : output.split("\n").slice(0, 5)).join("\n  ");
  return new CompileError(`${name}: the native module did not compile (${t.cc}):\n  ${shown}`);
}

/** Stores the build's output in the cache (cache.ts), removes its C source and sweeps the cache when a sweep is due; returns the entry's path. */
function finish(t: Toolchain, j: Job): string {
  const node = nodeBuiltins() as NodeBuiltins;
  const path = storeEntry(node, t.cacheDir, j.key, j.tmp, j.extension);
  node.fs.rmSync(j.cSource, { force: true });
  sweepIfDue(node, t.cacheDir, t.cacheMaxBytes, path);
  return path;
}

function cleanUp(j: Job): void {
  const { fs } = nodeBuiltins() as NodeBuiltins;
  fs.rmSync(j.tmp, { force: true });
  fs.rmSync(j.cSource, { force: true });
}

/** Called once, as the first C compiler run of this thread starts (the CLI's notice: the first build costs a second or more). */
let beforeFirstBuild: (() => void) | undefined;

/** Sets what runs before this thread's first C build (once; undefined: nothing). */
export function setBeforeFirstNativeBuild(f: (() => void) | undefined): void {
  beforeFirstBuild = f;
}

function announceBuild(): void {
  const f = beforeFirstBuild;
  beforeFirstBuild = undefined;
  f?.();
}

/** What a job found or made: the entry's path, and the milliseconds its run took (undefined: found in the cache). */
interface Built {
  readonly path: string;
  readonly ms: number | undefined;
}

/** The cache's sound entry of `key`, or undefined; `reread`: cache.ts's findEntry's. */
function lookUp(t: Toolchain, key: string, reread = true): Built | undefined {
  const hit = findEntry(nodeBuiltins() as NodeBuiltins, t.cacheDir, key, reread);
  return hit === undefined ? undefined : { path: hit, ms: undefined };
}

/** Before a job runs: the cache directory checked again (it may have changed since the toolchain was found), the run counted. */
function starting(t: Toolchain, j: Job): void {
  checkCacheDir(nodeBuiltins() as NodeBuiltins, t.cacheDir);
  announceBuild();
  nativeBuildStats[j.counts]++;
}

/**
 * The command line of a chain of jobs run by one child process: the compiler itself for
 * one job; for more, a shell running each in turn while the last succeeded. Every spawn
 * copies the Node process's page tables (fork), about 8 ms of CPU for a test process of
 * 100 MB and more for larger ones, as much as a small module's link: a module whose
 * kernels are not cached compiles them and links in one child (docs/backends.md,
 * "Build time").
 */
function chainCommand(jobs: readonly Job[]): { file: string; args: readonly string[] } {
  const only = jobs[0]!;
  if (jobs.length === 1 && only.fallback === undefined) return { file: only.command[0]!, args: only.command.slice(1) };
  const quote = (words: readonly string[]): string => words.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ");
  const step = (j: Job): string => (j.fallback === undefined ? quote(j.command) : `{ ${quote(j.command)} || ${quote(j.fallback)}; }`);
  return { file: "/bin/sh", args: ["-c", jobs.map(step).join(" && ")] };
}

/** Stores the chain's entries in order, or (the child failed) removes its files and throws the compiler's error. */
function chainFinished(t: Toolchain, jobs: readonly Job[], name: string, failure: string | undefined, start: number): Built[] {
  if (failure !== undefined) {
    for (const j of jobs) cleanUp(j);
    throw compilerError(name, t, failure);
  }
  const ms = Date.now() - start;
  // The chain's time is its last job's (the module's): moduleBuilt sums them.
  return jobs.map((j, i) => ({ path: finish(t, j), ms: i === jobs.length - 1 ? ms : 0 }));
}

/** Runs a chain of jobs (each one's output may be a later one's input) in one child process and stores their entries. */
function runSync(t: Toolchain, jobs: readonly Job[], name: string): Built[] {
  const node = nodeBuiltins() as NodeBuiltins;
  for (const j of jobs) {
    starting(t, j);
    if (j.source !== undefined) node.fs.writeFileSync(j.cSource, j.source, { mode: 0o600 });
  }
  const start = Date.now();
  const { file, args } = chainCommand(jobs);
  const r = node.childProcess.spawnSync(file, args, { encoding: "utf8" });
  return chainFinished(t, jobs, name, r.status === 0 ? undefined : `${r.stderr ?? ""}${r.error?.message ?? ""}`, start);
}

async function run(t: Toolchain, jobs: readonly Job[], name: string): Promise<Built[]> {
  const node = nodeBuiltins() as NodeBuiltins;
  for (const j of jobs) {
    starting(t, j);
    if (j.source !== undefined) await node.fs.promises.writeFile(j.cSource, j.source, { mode: 0o600 });
  }
  const start = Date.now();
  const { file, args } = chainCommand(jobs);
  const failure = await new Promise<string | undefined>((resolve) => {
    node.childProcess.execFile(file, args, { encoding: "utf8", maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : `${stderr}${error.message}`);
    });
  });
  return chainFinished(t, jobs, name, failure, start);
}

/** The module's entry, counted in nativeBuildStats; compileMs sums the runs this build needed (its objects' and its link). */
function moduleBuilt(module: Built, ...objects: Built[]): BuiltModule {
  if (module.ms === undefined) {
    nativeBuildStats.cacheHits++;
    return { path: module.path, cached: true, compileMs: 0 };
  }
  nativeBuildStats.compiled++;
  return { path: module.path, cached: false, compileMs: objects.reduce((ms, o) => ms + (o.ms ?? 0), module.ms) };
}

/** A module's two objects' jobs, and its own key. */
function moduleJobs(t: Toolchain, kernelsSource: string, glueTable: string, glueSource: string): { kernels: Job; glue: Job; key: string } {
  const kernels = kernelObjectJob(t, `${kernelsSource}\n${glueTable}\n`);
  const glue = glueObjectJob(t, glueSource);
  return { kernels, glue, key: moduleKey(t, kernels.key, glue.key) };
}

/**
 * Builds (or finds in the cache) the module of `kernelsSource` (the prelude and every
 * kernel's definition) with `glueTable` (glueTableSource): the two compile into one
 * object file, which is linked with the glue's object (each built, or found in the
 * cache, first; a missing kernels' object compiles and links in one child process).
 * `name` names the program in errors. `glueSource` is the glue's fixed part (a test
 * passes a changed one, to see that a glue change only relinks).
 */
export function buildModuleSync(t: Toolchain, kernelsSource: string, name: string, glueTable = glueTableSource([]), glueSource = glueObjectSource()): BuiltModule {
  const jobs = moduleJobs(t, kernelsSource, glueTable, glueSource);
  const found = lookUp(t, jobs.key);
  if (found !== undefined) return moduleBuilt(found);
  // The module's miss listed the cache a moment ago: its objects are looked up in that listing.
  const glue = lookUp(t, jobs.glue.key, false) ?? runSync(t, [jobs.glue], "the native glue")[0]!;
  const kernels = lookUp(t, jobs.kernels.key, false);
  if (kernels !== undefined) return moduleBuilt(runSync(t, [linkJob(t, jobs.key, kernels.path, glue.path)], name)[0]!, kernels, glue);
  const [compiled, linked] = runSync(t, [jobs.kernels, linkJob(t, jobs.key, jobs.kernels.tmp, glue.path)], name);
  return moduleBuilt(linked!, compiled!, glue);
}

/** buildModuleSync without blocking the event loop while the compiler runs. */
export async function buildModule(t: Toolchain, kernelsSource: string, name: string, glueTable = glueTableSource([]), glueSource = glueObjectSource()): Promise<BuiltModule> {
  const jobs = moduleJobs(t, kernelsSource, glueTable, glueSource);
  const found = lookUp(t, jobs.key);
  if (found !== undefined) return moduleBuilt(found);
  const glue = lookUp(t, jobs.glue.key, false) ?? (await run(t, [jobs.glue], "the native glue"))[0]!;
  const kernels = lookUp(t, jobs.kernels.key, false);
  if (kernels !== undefined) return moduleBuilt((await run(t, [linkJob(t, jobs.key, kernels.path, glue.path)], name))[0]!, kernels, glue);
  const [compiled, linked] = await run(t, [jobs.kernels, linkJob(t, jobs.key, jobs.kernels.tmp, glue.path)], name);
  return moduleBuilt(linked!, compiled!, glue);
}

const loaded = new Map<string, NativeModuleExports>();

/**
 * Loads a built module (once per path and thread) after checking its entry (cache.ts:
 * this user's, not writable by others, the bytes its digest names); its kernels run
 * inside the process's fault guard (glue.ts).
 */
export function loadModule(path: string): NativeModuleExports {
  let m = loaded.get(path);
  if (m === undefined) {
    const node = nodeBuiltins() as NodeBuiltins;
    const problem = entryProblem(node, path);
    if (problem !== undefined) throw new CompileError(`the native module is not loaded: ${problem}`);
    markInUse(path);
    const holder = { exports: {} as NativeModuleExports };
    node.process.dlopen(holder, path);
    m = holder.exports;
    if (guard !== undefined) m.useGuard(guard);
    loaded.set(path, m);
  }
  return m;
}
