// The machine's C compiler, found and checked once per process: `$CC` (else `cc`) must
// build a Node-API module that this Node loads. What it builds is kept in a cache
// directory ($XLATS_NATIVE_CACHE, else $XDG_CACHE_HOME/xlats/native, else
// ~/.cache/xlats/native), so a program compiles once per machine. Two kinds of entries,
// each keyed by a hash of what it is made of:
//   - the glue (glue.ts: the guard, the pool, the call checker, the entry points), a
//     Node-API module built once per toolchain and Node version, linked against the C
//     library; a process loads it once (with the first program it loads), so it has one
//     signal handler and one thread pool however many programs it runs;
//   - a program's module: its own source (the prelude, its kernels and the glue's table
//     of them) compiled and linked into a shared object of its kernels alone, keyed by
//     that source, the flags, the compiler's version and the CPU's features, not by the
//     glue's fixed part. The glue loads it (glue.ts's load): its few C library calls
//     (fmod, ldexp, ...) bind to the process's C library then, so its link reads no
//     library but libgcc's archive (docs/backends.md, "Build time").
// So a change of the glue costs one build of the glue, and no program's. A program's
// module compiles and links in one child process (a shell running both), and the link
// calls the linker directly (directLink), not through the driver. A build writes to
// a temporary name and renames it into place, so processes building the same entry at
// once do not clash. What makes the cache safe to load from (a private directory,
// entries checked against their digest, a size cap, killed builds cleaned up) is
// cache.ts's. Node's modules come from node.ts (no static `node:` import: the
// compiler's module graph is also the browser's).

import { CompileError } from "../../types/errors.js";
import type { NativeCpu } from "./kernel.js";
import { GLUE_ABI, glueModuleSource, glueTableSource } from "./glue.js";
import { LIBRARY_FUNCTIONS, PRELUDE } from "./prelude.js";
import { cacheMaxBytes, checkCacheDir, entryProblem, findEntry, markInUse, storeEntry, sweepIfDue } from "./cache.js";
import { nodeBuiltins, type NodeBuiltins } from "./node.js";
import { detectCaches, type DetectedCaches } from "./cpu_caches.js";

export interface Toolchain {
  /** The compiler command (`$CC` or `cc`). */
  readonly cc: string;
  /** Its `--version` first line and target triple: part of every cache key. */
  readonly version: string;
  /** The CPU's features and cache sizes (detectCpu). */
  readonly cpu: NativeCpu;
  /** Where each of cpu.caches's sizes came from (cpu_caches.ts). */
  readonly cachesFrom: DetectedCaches["from"];
  /** Flags of every compilation (the code generators rely on them: no -ffast-math, so NaN and infinity semantics hold; no contraction into FMA, so each op rounds as the interpreter's; -fwrapv, so signed integers wrap). */
  readonly flags: readonly string[];
  /** Flags that link the glue (a shared object that Node loads). */
  readonly linkFlags: readonly string[];
  /** How a program's module is linked: flags before its object, libraries after (no C library: glue.ts's load binds its calls to the process's). */
  readonly programLink: { readonly flags: readonly string[]; readonly libraries: readonly string[] };
  readonly cacheDir: string;
  /** The cache's cap in bytes (cache.ts). */
  readonly cacheMaxBytes: number;
  readonly includeDir: string;
}

/** A loaded program module's kernels, as the glue runs them (glue.ts). */
export interface NativeModuleExports {
  /** Throws a RangeError for a bad call, an Error with code XLATS_NATIVE_FAULT when the kernel faulted. */
  run(kernel: number, memory: Uint8Array, pointers: Uint32Array, begin: number, end: number, threads: number, scratch: Uint32Array): void;
  /** Runs a call list (glue.ts's encodeCalls); errors as run's, calls[0] naming the kernel whose call failed. */
  runCalls(memory: Uint8Array, calls: Uint32Array, threads: number, scratch: Uint32Array, times: Float64Array | null): void;
  /** Advises the kernel to back the memory's pages with transparent huge pages (glue.ts); the bytes advised, 0 where it cannot. */
  adviseHugePages(memory: Uint8Array): number;
  readonly kernels: number;
}

/** What the glue module exports (glue.ts). */
interface GlueExports {
  /** Loads a program module (an Error when it does not load, or was built for another glue). */
  load(path: string): NativeModuleExports;
  /** Installs the process's signal handler: from then on kernels run inside the guard, and on the pool. */
  installGuard(): void;
  readonly abi: string;
}

export interface BuiltModule {
  readonly path: string;
  /** The glue that loads it (a process loads the glue's path once: a device worker, the host's). */
  readonly glue: string;
  /** Whether the module came from the cache (no compiler run). */
  readonly cached: boolean;
  /** Milliseconds the compiler took (0 when cached). */
  readonly compileMs: number;
}

/**
 * Counts of what this process did, for tests and `xlats` reports: program modules
 * built and found in the cache, and glue modules built.
 */
export const nativeBuildStats = { compiled: 0, cacheHits: 0, glueModules: 0 };

let found: Toolchain | string | undefined;
/** The glue this thread builds programs for (its path), once the toolchain is found. */
let gluePath: string | undefined;

/**
 * The checked toolchain, or why there is none (no Node, no compiler, or a compiler
 * that cannot build a module this Node loads). Checked once per process: the glue is
 * built (or found in the cache) and loaded, then a probe program, which calls every C
 * library function the prelude declares, so that a process that cannot supply one
 * says so here rather than at some program's load.
 */
export function nativeToolchain(): Toolchain | string {
  if (found !== undefined) return found;
  const node = nodeBuiltins();
  if (typeof node === "string") return (found = node);
  try {
    const t = detect(node);
    if (typeof t === "string") return (found = t);
    gluePath = buildGlueModuleSync(t).path;
    const probe = loadModule(buildModuleSync(t, LIBRARY_PROBE, "probe"));
    if (probe.kernels !== 0) return (found = `the probe module of ${t.cc} did not load as expected`);
    found = t;
  } catch (e) {
    gluePath = undefined;
    found = `${e instanceof Error ? e.message.split("\n").slice(0, 4).join(" ") : String(e)}`;
  }
  return found;
}

/** The probe program: the prelude, and the address of every C library function it declares (each bound when the module loads). */
const LIBRARY_PROBE = `${PRELUDE}\nvoid *const xk_library[] = { ${LIBRARY_FUNCTIONS.map((f) => `(void *)${f}`).join(", ")} };\n`;

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
  const detected = detectCpu(node);
  if (typeof detected === "string") return detected;
  const { cpu, cachesFrom } = detected;
  const includeDir = headersDir(node);
  if (includeDir === undefined) return "the node-api-headers package is not installed";
  // -Werror=implicit-function-declaration: the prelude declares the C library functions
  // itself (prelude.ts), and a call of one it missed must stop the build, not return an int.
  const flags = ["-std=gnu11", "-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing", "-fPIC", "-pthread",
    "-Werror=implicit-function-declaration",
    ...(cpu.arch === "x86_64" ? ["-march=native"] : cpu.arch === "aarch64" ? ["-mcpu=native"] : [])];
  const darwin = process.platform === "darwin";
  const linkFlags = ["-shared", ...(darwin ? ["-undefined", "dynamic_lookup"] : [])];
  // A program's module: no start files, no C library (its calls bind at load), libgcc's
  // archive for the helpers GCC may call (128-bit division, ...). macOS's linker reads
  // its system library cheaply, and binds what is left at load (dynamic_lookup).
  const programLink = darwin ? { flags: linkFlags, libraries: [] } : { flags: ["-shared", "-nostdlib"], libraries: ["-lgcc"] };
  const dir = cacheDir(node);
  checkCacheDir(node, dir);
  return { cc, version, cpu, cachesFrom, flags, linkFlags, programLink, cacheDir: dir, cacheMaxBytes: cacheMaxBytes(process.env), includeDir };
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

/**
 * The CPU's features, from /proc/cpuinfo on Linux x86_64 (aarch64 always has NEON), and
 * its cache sizes (cpu_caches.ts), or why $XLATS_NATIVE_CPU_CACHES is wrong. The sizes
 * are not part of the cache keys: the blocks they give are numbers in a program's C
 * source, which keys its module.
 */
export function detectCpu(node: NodeBuiltins): { cpu: NativeCpu; cachesFrom: DetectedCaches["from"] } | string {
  const caches = detectCaches(node);
  if (typeof caches === "string") return caches;
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
  return {
    cpu: { arch, avx2: flags.has("avx2"), fma: flags.has("fma"), avx512f: flags.has("avx512f"), neon: arch === "aarch64", caches: caches.caches },
    cachesFrom: caches.from,
  };
}

function cpuKey(cpu: NativeCpu): string {
  return `${cpu.arch} avx2=${cpu.avx2} fma=${cpu.fma} avx512f=${cpu.avx512f} neon=${cpu.neon}`;
}

/** One command of a build, and the command to run where it fails (a direct link's: the compiler driver's). */
interface Step {
  readonly command: readonly string[];
  readonly fallback?: readonly string[];
}

/** A build whose output is a cache entry: the glue, or a program's module, from one C source. */
interface Job {
  /** The cache key: the entry is `<key>-<digest>.<extension>`. */
  readonly key: string;
  /** `node` for the glue (a Node-API module), `so` for a program's module (which the glue loads). */
  readonly extension: "node" | "so";
  readonly tmp: string;
  /** The C source (written to `cSource` first). */
  readonly source: string;
  readonly cSource: string;
  /** The object file a program's build compiles and then links (a temporary too). */
  readonly object: string;
  /** The commands, run in turn by one child process. */
  readonly steps: readonly Step[];
}

function cacheKey(text: string): string {
  const node = nodeBuiltins() as NodeBuiltins;
  return node.crypto.createHash("sha256").update(text).digest("hex").slice(0, 32);
}

function job(t: Toolchain, key: string, source: string, extension: Job["extension"], steps: (files: { tmp: string; cSource: string; object: string }) => Step[]): Job {
  const node = nodeBuiltins() as NodeBuiltins;
  // The pid in the temporaries' names tells a later sweep whether their build is still running.
  const stem = node.path.join(t.cacheDir, `${key}.${node.process.pid}-${node.crypto.randomBytes(4).toString("hex")}`);
  const files = { tmp: `${stem}.tmp`, cSource: `${stem}.c`, object: `${stem}.o` };
  return { key, extension, source, ...files, steps: steps(files) };
}

/** What every key starts with: the compiler, the flags of a compilation and the CPU (which -march=native reads). */
function toolchainKey(t: Toolchain): string {
  return `${t.version}\n${t.flags.join(" ")}\n${cpuKey(t.cpu)}`;
}

/** The job that builds the glue (glueModuleSource) in one run of the driver: it includes Node's headers, so Node's version is in its key. */
function glueJob(t: Toolchain, source: string): Job {
  const node = nodeBuiltins() as NodeBuiltins;
  const key = cacheKey(`glue module\n${toolchainKey(t)}\n${t.linkFlags.join(" ")}\n${node.process.versions.node}\n${source}`);
  return job(t, key, source, "node", ({ tmp, cSource }) => [{ command: [t.cc, ...t.flags, `-I${t.includeDir}`, ...t.linkFlags, "-o", tmp, cSource, "-lm"] }]);
}

/**
 * The job that builds a program's module from its own source (the prelude, the kernels
 * and the glue's table of them, whose types are the glue's SHARED_TYPES, GLUE_ABI among
 * them): compiled into an object file, then linked, the linker called directly where
 * directLink found how, else the driver. Its key is that source's and the toolchain's,
 * not the glue's fixed part's.
 */
function programJob(t: Toolchain, source: string): Job {
  const key = cacheKey(`program module\n${toolchainKey(t)}\n${t.programLink.flags.join(" ")} ${t.programLink.libraries.join(" ")}\n${source}`);
  const direct = directLink(t);
  return job(t, key, source, "so", ({ tmp, cSource, object }) => {
    const driver = [t.cc, ...t.flags, ...t.programLink.flags, "-o", tmp, object, ...t.programLink.libraries];
    const fill = (word: string): string => (word === LINK_OUTPUT ? tmp : word === LINK_INPUT ? object : word);
    return [{ command: [t.cc, ...t.flags, "-c", "-o", object, cSource] }, direct === undefined ? { command: driver } : { command: direct.map(fill), fallback: driver }];
  });
}

/** Stand-ins for a link's output and input in the driver's command line that directLink reads. */
const LINK_OUTPUT = "xk-link-output.so";
const LINK_INPUT = "xk-link-kernels.o";

/** Per toolchain (compiler, flags): the direct link's command with the stand-ins, or undefined (the driver links). */
const directLinks = new Map<string, readonly string[] | undefined>();

/**
 * The command that links a program's module without the compiler driver: the linker
 * the driver runs (GCC's collect2 stands for it), with the arguments it passes, but not
 * the link-time-optimization plugin, which objects compiled without -flto never need.
 * The driver and collect2 cost about 5 ms of a link (docs/backends.md, "Build time").
 * Found once per process and toolchain from the driver's `-###` output; undefined, so
 * that the driver links, where that output is not understood. A direct link that fails
 * runs the driver's (Step.fallback).
 */
function directLink(t: Toolchain): readonly string[] | undefined {
  const id = `${t.cc}\n${t.flags.join(" ")}\n${t.programLink.flags.join(" ")}\n${t.programLink.libraries.join(" ")}`;
  if (directLinks.has(id)) return directLinks.get(id);
  const { childProcess } = nodeBuiltins() as NodeBuiltins;
  const output = (args: string[]): string => {
    const r = childProcess.spawnSync(t.cc, args, { encoding: "utf8" });
    return r.status === 0 ? `${r.stdout ?? ""}${r.stderr ?? ""}` : "";
  };
  const shown = output([...t.flags, ...t.programLink.flags, "-###", "-o", LINK_OUTPUT, LINK_INPUT, ...t.programLink.libraries]);
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
  return once(LINK_OUTPUT) && once(LINK_INPUT) ? [linker, ...kept] : undefined;
}

/** The compiler's first error lines, for a CompileError. */
function compilerError(name: string, t: Toolchain, output: string): CompileError {
  const lines = output.split("\n").filter((l) => /error|undefined/i.test(l)).slice(0, 5);
  const shown = (lines.length > 0 ? lines : output.split("\n").slice(0, 5)).join("\n  ");
  return new CompileError(`${name}: the native module did not compile (${t.cc}):\n  ${shown}`);
}

/** Removes the job's temporaries (its output too, unless it was stored). */
function cleanUp(j: Job): void {
  const { fs } = nodeBuiltins() as NodeBuiltins;
  for (const file of [j.tmp, j.cSource, j.object]) fs.rmSync(file, { force: true });
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

/** The cache's sound entry of `key`, or undefined. */
function lookUp(t: Toolchain, key: string): string | undefined {
  return findEntry(nodeBuiltins() as NodeBuiltins, t.cacheDir, key);
}

/** Before a job runs: the cache directory checked again (it may have changed since the toolchain was found). */
function starting(t: Toolchain): void {
  checkCacheDir(nodeBuiltins() as NodeBuiltins, t.cacheDir);
  announceBuild();
}

/**
 * The command line of a job's steps, run by one child process: the compiler itself for
 * one step; for more, a shell running each in turn while the last succeeded. Every spawn
 * copies the Node process's page tables (fork), about 8 ms of CPU for a test process of
 * 100 MB and more for larger ones, as much as a small module's link: a program's module
 * compiles and links in one child (docs/backends.md, "Build time").
 */
function stepsCommand(steps: readonly Step[]): { file: string; args: readonly string[] } {
  const only = steps[0]!;
  if (steps.length === 1 && only.fallback === undefined) return { file: only.command[0]!, args: only.command.slice(1) };
  const quote = (words: readonly string[]): string => words.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ");
  const step = (s: Step): string => (s.fallback === undefined ? quote(s.command) : `{ ${quote(s.command)} || ${quote(s.fallback)}; }`);
  return { file: "/bin/sh", args: ["-c", steps.map(step).join(" && ")] };
}

/** Stores the job's entry (cache.ts), sweeping the cache when a sweep is due, and returns what was built; or (the child failed) throws the compiler's error. */
function jobFinished(t: Toolchain, j: Job, name: string, failure: string | undefined, start: number): BuiltModule {
  if (failure !== undefined) {
    cleanUp(j);
    throw compilerError(name, t, failure);
  }
  const node = nodeBuiltins() as NodeBuiltins;
  const path = storeEntry(node, t.cacheDir, j.key, j.tmp, j.extension);
  cleanUp(j);
  sweepIfDue(node, t.cacheDir, t.cacheMaxBytes, path);
  return { path, glue: j.extension === "node" ? path : programsGlue(), cached: false, compileMs: Date.now() - start };
}

function runSync(t: Toolchain, j: Job, name: string): BuiltModule {
  const node = nodeBuiltins() as NodeBuiltins;
  starting(t);
  node.fs.writeFileSync(j.cSource, j.source, { mode: 0o600 });
  const start = Date.now();
  const { file, args } = stepsCommand(j.steps);
  const r = node.childProcess.spawnSync(file, args, { encoding: "utf8" });
  return jobFinished(t, j, name, r.status === 0 ? undefined : `${r.stderr ?? ""}${r.error?.message ?? ""}`, start);
}

async function run(t: Toolchain, j: Job, name: string): Promise<BuiltModule> {
  const node = nodeBuiltins() as NodeBuiltins;
  starting(t);
  await node.fs.promises.writeFile(j.cSource, j.source, { mode: 0o600 });
  const start = Date.now();
  const { file, args } = stepsCommand(j.steps);
  const failure = await new Promise<string | undefined>((resolve) => {
    node.childProcess.execFile(file, args, { encoding: "utf8", maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : `${stderr}${error.message}`);
    });
  });
  return jobFinished(t, j, name, failure, start);
}

/** The glue of `source` (glueModuleSource; a test passes a changed one), built or found in the cache. */
export function buildGlueModuleSync(t: Toolchain, source = glueModuleSource()): BuiltModule {
  const j = glueJob(t, source);
  const path = lookUp(t, j.key);
  if (path !== undefined) return { path, glue: path, cached: true, compileMs: 0 };
  nativeBuildStats.glueModules++;
  return runSync(t, j, "the native glue");
}

/** The glue that loads the programs this thread builds (nativeToolchain builds it before any program). */
function programsGlue(): string {
  if (gluePath === undefined) throw new CompileError("the native glue is not built: nativeToolchain() finds it before any program is built");
  return gluePath;
}

/** A program's module found in the cache, counted. */
function cachedProgram(path: string): BuiltModule {
  nativeBuildStats.cacheHits++;
  return { path, glue: programsGlue(), cached: true, compileMs: 0 };
}

/**
 * Builds (or finds in the cache) the program module of `kernelsSource` (the prelude and
 * every kernel's definition) with `glueTable` (glueTableSource), compiled and linked in
 * one child process; `name` names the program in errors.
 */
export function buildModuleSync(t: Toolchain, kernelsSource: string, name: string, glueTable = glueTableSource([])): BuiltModule {
  const j = programJob(t, `${kernelsSource}\n${glueTable}\n`);
  const path = lookUp(t, j.key);
  if (path !== undefined) return cachedProgram(path);
  nativeBuildStats.compiled++;
  return runSync(t, j, name);
}

/** buildModuleSync without blocking the event loop while the compiler runs. */
export async function buildModule(t: Toolchain, kernelsSource: string, name: string, glueTable = glueTableSource([])): Promise<BuiltModule> {
  const j = programJob(t, `${kernelsSource}\n${glueTable}\n`);
  const path = lookUp(t, j.key);
  if (path !== undefined) return cachedProgram(path);
  nativeBuildStats.compiled++;
  return run(t, j, name);
}

/** Checks a cache entry before it is loaded (cache.ts: this user's, not writable by others, the bytes its digest names). */
function checkedEntry(path: string): NodeBuiltins {
  const node = nodeBuiltins() as NodeBuiltins;
  const problem = entryProblem(node, path);
  if (problem !== undefined) throw new CompileError(`the native module is not loaded: ${problem}`);
  markInUse(path);
  return node;
}

/** The glues this thread loaded, by path. */
const glues = new Map<string, GlueExports>();

/** The glue at `path`, loaded into this thread (Node loads the library once per process) with the process's guard installed. */
function loadedGlue(path: string): GlueExports {
  let g = glues.get(path);
  if (g === undefined) {
    const node = checkedEntry(path);
    const holder = { exports: {} as GlueExports };
    node.process.dlopen(holder, path);
    g = holder.exports;
    if (g.abi !== GLUE_ABI) throw new CompileError(`the native glue ${path} is of version ${String(g.abi)}, not ${GLUE_ABI}`);
    g.installGuard();
    glues.set(path, g);
  }
  return g;
}

const loaded = new Map<string, NativeModuleExports>();

/**
 * Loads a built program module (once per path and thread) after checking its entry,
 * through its glue (loaded first, where this thread has not yet), which runs its
 * kernels inside the process's fault guard and on its pool (glue.ts). A module that
 * does not load (a C library function the process does not supply) is a CompileError.
 */
export function loadModule(built: BuiltModule): NativeModuleExports {
  let m = loaded.get(built.path);
  if (m === undefined) {
    const glue = loadedGlue(built.glue);
    checkedEntry(built.path);
    try {
      m = glue.load(built.path);
    } catch (e) {
      throw new CompileError(`the native module is not loaded: ${e instanceof Error ? e.message : String(e)}`);
    }
    loaded.set(built.path, m);
  }
  return m;
}
