// The native module cache as an attacker and a crash leave it (cache.ts): a directory
// others can write, planted and truncated modules, killed builds' temporaries, a cache
// past its cap; and C comments that a program's names cannot close. Each case runs
// cache_child.js (one native compile) in a fresh process with its own cache directory.

import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nativeModuleParts } from "../../../src/compiler/native/build.js";
import { cComment } from "../../../src/compiler/native/c_source.js";
import { glueModuleSource } from "../../../src/compiler/native/glue.js";
import { buildGlueModuleSync, buildModuleSync, loadModule, nativeBuildStats, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { needsCompiler } from "./native_support.js";

// This process's own builds (the injection test) go to a cache of their own too, not the user's.
const ownCache = mkdtempSync(join(tmpdir(), "xlats-cache-test-"));
process.env["XLATS_NATIVE_CACHE"] = ownCache;

const CHILD = fileURLToPath(new URL("./cache_child.js", import.meta.url));
/** Entries: the glue (`.node`, a Node-API module) and programs' modules (`.so`, which the glue loads). */
const ENTRY = /^[0-9a-f]{32}-([0-9a-f]{64})\.(node|so)$/;

interface ChildResult {
  readonly code: number | null;
  readonly stderr: string;
  readonly result?: { cached: boolean; compiled: number };
}

function child(cache: string, env: Record<string, string> = {}): ChildResult {
  const r = spawnSync(process.execPath, [CHILD], { env: { ...process.env, XLATS_NATIVE_CACHE: cache, ...env }, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stderr: r.stderr, ...(r.status === 0 ? { result: JSON.parse(r.stdout) } : {}) };
}

function freshCache(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "xlats-cache-"));
  chmodSync(dir, 0o700);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const entries = (dir: string): string[] => readdirSync(dir).filter((n) => ENTRY.test(n)).sort();
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** A shared object whose constructor writes "ran" to $XLATS_TEST_MARKER: what an attacker plants. */
function plantedModule(dir: string): Uint8Array {
  const c = join(dir, "planted.c");
  writeFileSync(c, `#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
  const char *p = getenv("XLATS_TEST_MARKER");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (f) { fputs("ran", f); fclose(f); }
}
`);
  execFileSync(process.env["CC"]?.trim() || "cc", ["-shared", "-fPIC", "-o", join(dir, "planted.so"), c]);
  return readFileSync(join(dir, "planted.so"));
}

test("cache: a first run stores entries named by their digest; a second loads them", (t) => {
  if (!needsCompiler(t)) return;
  const dir = freshCache(t);
  assert.deepEqual(child(dir).result, { cached: false, compiled: 2 });
  const names = entries(dir);
  assert.deepEqual(names.map((n) => ENTRY.exec(n)![2]).sort(), ["node", "so", "so"], `the glue, and the probe's and the program's modules: ${readdirSync(dir).join(" ")}`);
  for (const n of names) {
    assert.equal(sha256(readFileSync(join(dir, n))), ENTRY.exec(n)![1], "the name carries the sha256 of the bytes");
    assert.equal(statSync(join(dir, n)).mode & 0o077, 0, "private to the user");
  }
  assert.deepEqual(readdirSync(dir).sort(), names, "no .c, .o or .tmp left behind");
  assert.deepEqual(child(dir).result, { cached: true, compiled: 0 });
});

test("cache: a directory other users can write, or another user's, is refused with a clear message", (t) => {
  if (!needsCompiler(t)) return;
  const dir = freshCache(t);
  chmodSync(dir, 0o777);
  const open = child(dir);
  assert.notEqual(open.code, 0);
  assert.match(open.stderr, /native backend is not available.*native module cache .* is writable by other users \(mode 0777\).*XLATS_NATIVE_CACHE/);
  chmodSync(dir, 0o720); // group-writable is refused too
  assert.match(child(dir).stderr, /writable by other users \(mode 0720\)/);
  assert.deepEqual(readdirSync(dir), [], "nothing was written there");
  if (process.getuid?.() !== 0) return; // only root can give a directory away
  chmodSync(dir, 0o755);
  chownSync(dir, 65534, 65534);
  assert.match(child(dir).stderr, /native module cache .* belongs to user 65534, not to this user \(0\)/);
});

test("cache: a planted module is never loaded: wrong digest, writable by others, or another user's", (t) => {
  if (!needsCompiler(t)) return;
  const dir = freshCache(t);
  const work = freshCache(t);
  const planted = plantedModule(work);
  const marker = join(work, "marker");
  assert.deepEqual(child(dir).result, { cached: false, compiled: 2 });
  const names = entries(dir);
  const plant = (how: (path: string) => void): void => {
    for (const n of readdirSync(dir)) rmSync(join(dir, n));
    for (const n of names) how(join(dir, `${n.slice(0, 32)}-${sha256(planted)}.${ENTRY.exec(n)![2]}`));
    const r = child(dir, { XLATS_TEST_MARKER: marker });
    assert.deepEqual(r.result, { cached: false, compiled: 2 }, r.stderr);
    assert.equal(existsSync(marker), false, "the planted constructor did not run");
  };
  // Bytes that are not the ones the name's digest was taken of (a file swapped in place).
  for (const n of entries(dir)) writeFileSync(join(dir, n), planted);
  const swapped = child(dir, { XLATS_TEST_MARKER: marker });
  assert.deepEqual(swapped.result, { cached: false, compiled: 2 }, swapped.stderr);
  assert.equal(existsSync(marker), false, "the planted constructor did not run");
  // The right digest, but a file others may write.
  plant((path) => {
    writeFileSync(path, planted);
    chmodSync(path, 0o666); // past the umask
  });
  if (process.getuid?.() !== 0) return;
  // The right digest and private, but another user's.
  plant((path) => {
    writeFileSync(path, planted, { mode: 0o700 });
    chownSync(path, 65534, 65534);
  });
});

test("cache: a truncated entry (a crash, a full disk) is rebuilt, not loaded", (t) => {
  if (!needsCompiler(t)) return;
  const dir = freshCache(t);
  assert.deepEqual(child(dir).result, { cached: false, compiled: 2 });
  const built = entries(dir);
  for (const n of built) truncateSync(join(dir, n), Math.floor(statSync(join(dir, n)).size / 2));
  const r = child(dir);
  assert.deepEqual(r.result, { cached: false, compiled: 2 }, r.stderr);
  const rebuilt = entries(dir);
  assert.equal(rebuilt.length, built.length, "the truncated entries (the glue's too) were removed");
  const keys = (names: string[]): string[] => names.map((n) => n.slice(0, 32)).sort();
  assert.deepEqual(keys(rebuilt), keys(built), "and built again under their keys");
  for (const n of rebuilt) assert.equal(sha256(readFileSync(join(dir, n))), ENTRY.exec(n)![1], "whole: its bytes are its digest");
  assert.deepEqual(child(dir).result, { cached: true, compiled: 0 });
});

test("cache: killed builds' temporaries are removed once stale, live builds' are kept", (t) => {
  if (!needsCompiler(t)) return;
  const dir = freshCache(t);
  const key = "0123456789abcdef0123456789abcdef";
  // 4194399 is past Linux's largest pid_max (2^22): no such process.
  const dead = [`${key}.4194399-deadbeef.c`, `${key}.4194399-deadbeef.tmp`];
  const live = `${key}.${process.pid}-0badcafe.c`;
  const recent = `${key}.4194398-00000000.c`;
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const n of [...dead, live, recent]) writeFileSync(join(dir, n), "int x;\n");
  for (const n of [...dead, live]) utimesSync(join(dir, n), hourAgo, hourAgo);
  assert.deepEqual(child(dir).result, { cached: false, compiled: 2 });
  const left = readdirSync(dir);
  for (const n of dead) assert.ok(!left.includes(n), `${n} removed`);
  assert.ok(left.includes(live), "a build whose process runs is not touched");
  assert.ok(left.includes(recent), "a recent temporary may belong to a build on another machine sharing the cache");
});

test("cache: past its cap the least recently used entries are evicted, never the ones in use", (t) => {
  if (!needsCompiler(t)) return;
  const measure = freshCache(t);
  assert.deepEqual(child(measure).result, { cached: false, compiled: 2 });
  const real = entries(measure).reduce((n, e) => n + statSync(join(measure, e)).size, 0);
  const seed = (dir: string): string[] => Array.from({ length: 3 }, (_, i) => {
    const bytes = new Uint8Array(400_000).fill(i + 1);
    const name = `${String(i).repeat(32)}-${sha256(bytes)}.node`;
    writeFileSync(join(dir, name), bytes, { mode: 0o700 });
    const used = new Date(Date.now() - (3 - i) * 3_600_000); // fake 0 is the least recently used
    utimesSync(join(dir, name), used, used);
    return name;
  });
  // Room for the real modules and about two of the three fakes: only the oldest goes.
  const dir = freshCache(t);
  const fakes = seed(dir);
  const r = child(dir, { XLATS_NATIVE_CACHE_MAX_MB: String((real + 900_000) / 2 ** 20) });
  assert.deepEqual(r.result, { cached: false, compiled: 2 }, r.stderr);
  assert.deepEqual(fakes.map((f) => existsSync(join(dir, f))), [false, true, true]);
  // A cap below what this run uses: every other entry goes, the run's own stay.
  const tight = freshCache(t);
  const all = seed(tight);
  assert.deepEqual(child(tight, { XLATS_NATIVE_CACHE_MAX_MB: "0.01" }).result, { cached: false, compiled: 2 });
  assert.deepEqual(all.map((f) => existsSync(join(tight, f))), [false, false, false]);
  assert.equal(entries(tight).length, 3, "the glue, the probe and the program stay");
  assert.match(child(tight, { XLATS_NATIVE_CACHE_MAX_MB: "lots" }).stderr, /XLATS_NATIVE_CACHE_MAX_MB must be a positive number of MiB, got 'lots'/);
});

test("cache: a change of the glue's fixed part builds the glue again, and no program's module", (t) => {
  if (!needsCompiler(t)) return;
  const toolchain = nativeToolchain();
  assert.ok(typeof toolchain !== "string", String(toolchain));
  const symbol = "xk_test_glue_change";
  // Writes its begin unit's index plus 42 into its one result.
  const kernel = {
    name: "glue change",
    c: { symbol, source: `void ${symbol}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) { (void)end; int32_t v = (int32_t)begin + 42; memcpy(mem + args[0], &v, 4); }` },
    operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 4, costPerUnit: 1,
  };
  const parts = nativeModuleParts([{ kernel: kernel as never, bufferBytes: [4] }]);
  const runs = (): number[] => [nativeBuildStats.compiled, nativeBuildStats.cacheHits, nativeBuildStats.glueModules];
  const since = (before: number[]): number[] => runs().map((n, i) => n - before[i]!);
  let before = runs();
  const first = buildModuleSync(toolchain, parts.kernels, "glue change", parts.glue);
  // [program modules built, found, glue modules built]: the glue is this process's already.
  assert.deepEqual(since(before), [1, 0, 0]);
  const memory = new Uint8Array(64);
  loadModule(first).run(0, memory, Uint32Array.of(8), 1, 2, 1, new Uint32Array(0));
  assert.equal(new DataView(memory.buffer).getInt32(8, true), 43);
  before = runs();
  const changed = buildGlueModuleSync(toolchain, `${glueModuleSource()}\n/* the glue's fixed part, one comment longer */\n`);
  assert.equal(changed.cached, false);
  assert.equal(buildModuleSync(toolchain, parts.kernels, "glue change", parts.glue).path, first.path);
  assert.deepEqual(since(before), [0, 1, 1], "the changed glue built once; the program's module found in the cache, as it was");
});

test("cache: one child compiles a module's kernels and links them, in a directory whose name needs quoting; a failed build leaves nothing", (t) => {
  if (!needsCompiler(t)) return;
  const toolchain = nativeToolchain();
  assert.ok(typeof toolchain !== "string", String(toolchain));
  const dir = join(freshCache(t), "a cache: it's $HOME `x` \\ \"q\"");
  const t2 = { ...toolchain, cacheDir: dir };
  const symbol = "xk_test_quoted";
  const kernel = (body: string): unknown => ({
    name: "quoted", operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 1, costPerUnit: 1,
    c: { symbol, source: `void ${symbol}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) { (void)begin; (void)end; ${body} }` },
  });
  const good = nativeModuleParts([{ kernel: kernel("int32_t v = 7; memcpy(mem + args[0], &v, 4);") as never, bufferBytes: [4] }]);
  const before = { ...nativeBuildStats };
  const built = buildModuleSync(t2, good.kernels, "quoted", good.glue);
  assert.equal(nativeBuildStats.compiled - before.compiled, 1);
  const memory = new Uint8Array(16);
  loadModule(built).run(0, memory, Uint32Array.of(4), 0, 1, 1, new Uint32Array(0));
  assert.equal(new DataView(memory.buffer).getInt32(4, true), 7);
  assert.deepEqual(readdirSync(dir), [basename(built.path)], "the module, one entry; its object file a temporary, removed");
  const bad = nativeModuleParts([{ kernel: kernel("this is not C;") as never, bufferBytes: [4] }]);
  assert.throws(() => buildModuleSync(t2, bad.kernels, "broken", bad.glue), /broken: the native module did not compile/);
  assert.deepEqual(readdirSync(dir).filter((n) => !ENTRY.test(n)), [], "no .c, .o or .tmp left behind");
});

test("native C: a kernel name cannot close its comment and inject code (backslash-newline splice, */)", (t) => {
  if (!needsCompiler(t)) return;
  t.after(() => rmSync(ownCache, { recursive: true, force: true }));
  const evil = "fusion *\\\n/\n#error injected\nint injected = 1; /* */ */";
  assert.equal(cComment(evil), "/* fusion _____#error injected_int injected = 1; __ __ __ */");
  const symbol = "xk_test_evil";
  const kernel = {
    name: evil,
    c: { symbol, source: `void ${symbol}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) { (void)mem; (void)args; (void)begin; (void)end; }` },
    operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 1, costPerUnit: 1,
  };
  const parts = nativeModuleParts([{ kernel: kernel as never, bufferBytes: [4] }]);
  assert.ok(!parts.kernels.includes("\n#error injected"), "the name's text is not a line of the module");
  const toolchain = nativeToolchain();
  assert.ok(typeof toolchain !== "string", String(toolchain));
  // Before, the splice closed the comment and the compiler stopped at `#error injected`.
  assert.doesNotThrow(() => buildModuleSync(toolchain, parts.kernels, "evil", parts.glue));
  const badSymbol = { ...kernel, c: { ...kernel.c, symbol: "x(); int y" } };
  assert.throws(() => nativeModuleParts([{ kernel: badSymbol as never, bufferBytes: [4] }]), /is not a C identifier/);
});
