// The sizes of the CPU's caches that the native GEMM and convolution block for
// (kernel/gemm_plan.ts: kc from L1d, the blocks of packed A and B and the balanced
// split's cut from L2), found once per process with the CPU's features
// (toolchain.ts, detectCpu). Each size comes from the first source that gives a sane
// one:
//   1. $XLATS_NATIVE_CPU_CACHES (`l1d=48K,l2=1M`, either or both): tests and
//      experiments; a value that does not parse, or lies outside the ranges below, is an
//      error (the backend is then unavailable, saying why), not a silent fallback;
//   2. Linux's /sys/devices/system/cpu/cpu0/cache/index*/ (level, type, size);
//   3. what the C library reads from cpuid: `getconf -a` (glibc's LEVEL1_DCACHE_SIZE,
//      LEVEL2_CACHE_SIZE), or on macOS `sysctl hw.l1dcachesize hw.l2cachesize`;
//   4. MEASURED_CACHES, the machine the blocks were measured best on.
// A size outside the ranges (L1d 16 KiB-256 KiB, L2 128 KiB-16 MiB) is taken for a
// misreport and the next source is asked: virtual machines report what the hypervisor
// passes through (the Zen 5 VM has no sysfs cache entries, and its glibc reports a 508
// MiB L3). L3 is not read: no block is sized from it. The L2 is taken as reported,
// whether a core has it alone or shares it (a cluster's on some ARM cores).
// WebAssembly and browsers cannot ask: their kernels keep the fixed sizes.

import { MEASURED_CACHES, type CpuCaches } from "../kernel/gemm_plan.js";
import type { NodeBuiltins } from "./node.js";

/** The environment variable that sets the sizes (either or both), as `l1d=48K,l2=1M`. */
export const CPU_CACHES_VARIABLE = "XLATS_NATIVE_CPU_CACHES";

/** Sizes (bytes, inclusive) taken as real; outside them a source is taken to misreport. */
export const CACHE_RANGES: Readonly<Record<keyof CpuCaches, readonly [number, number]>> = {
  l1dBytes: [16 << 10, 256 << 10],
  l2Bytes: [128 << 10, 16 << 20],
};

/** Where each size came from. */
export type CacheSource = "override" | "sysfs" | "getconf" | "sysctl" | "measured";

/** The detected sizes and where each came from (reports, tests). */
export interface DetectedCaches {
  readonly caches: CpuCaches;
  readonly from: Readonly<Record<keyof CpuCaches, CacheSource>>;
}

type Found = Partial<Record<keyof CpuCaches, number>>;

const inRange = (key: keyof CpuCaches, bytes: number | undefined): bytes is number =>
  bytes !== undefined && Number.isInteger(bytes) && bytes >= CACHE_RANGES[key][0] && bytes <= CACHE_RANGES[key][1];

/** The sizes of `found` that lie in their ranges (the others dropped). */
export function saneSizes(found: Found): Found {
  const sane: Found = {};
  for (const key of ["l1dBytes", "l2Bytes"] as const) if (inRange(key, found[key])) sane[key] = found[key];
  return sane;
}

/** A size as sysfs and the override write it: bytes, or a whole number of KiB or MiB (`48K`, `1M`, `1MiB`); undefined otherwise. */
export function parseCacheSize(text: string): number | undefined {
  const m = /^\s*(\d+)\s*(?:([KkMm])(?:i?B)?)?\s*$/.exec(text);
  if (m === null) return undefined;
  const n = Number(m[1]);
  const unit = m[2]?.toUpperCase();
  const bytes = unit === "K" ? n * 1024 : unit === "M" ? n * 1024 * 1024 : n;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** One of sysfs's cache entries (/sys/devices/system/cpu/cpu0/cache/indexN/): its files `level`, `type` and `size`, as read. */
export interface SysfsCacheEntry {
  readonly level: string;
  readonly type: string;
  readonly size: string;
}

/** The L1 data cache's and the L2's sizes among sysfs's entries (Data or Unified at level 1, Unified or Data at level 2), sane ones only. */
export function sysfsCaches(entries: readonly SysfsCacheEntry[]): Found {
  const size = (level: number, types: readonly string[]): number | undefined => {
    const e = entries.find((x) => Number(x.level.trim()) === level && types.includes(x.type.trim()));
    return e === undefined ? undefined : parseCacheSize(e.size);
  };
  return saneSizes({ l1dBytes: size(1, ["Data", "Unified"]), l2Bytes: size(2, ["Unified", "Data"]) });
}

/** The sizes in `getconf -a`'s output (glibc's LEVEL1_DCACHE_SIZE and LEVEL2_CACHE_SIZE, from cpuid), sane ones only (0 where it does not know). */
export function getconfCaches(output: string): Found {
  const value = (name: string): number | undefined => {
    const m = new RegExp(`^${name}[ \\t]+(\\d+)[ \\t]*$`, "m").exec(output);
    return m === null ? undefined : Number(m[1]);
  };
  return saneSizes({ l1dBytes: value("LEVEL1_DCACHE_SIZE"), l2Bytes: value("LEVEL2_CACHE_SIZE") });
}

/** The sizes in `sysctl hw.l1dcachesize hw.l2cachesize`'s output (macOS: `name: bytes` lines), sane ones only. */
export function sysctlCaches(output: string): Found {
  const value = (name: string): number | undefined => {
    const m = new RegExp(`^hw\\.${name}[ \\t]*[:=][ \\t]*(\\d+)[ \\t]*$`, "m").exec(output);
    return m === null ? undefined : Number(m[1]);
  };
  return saneSizes({ l1dBytes: value("l1dcachesize"), l2Bytes: value("l2cachesize") });
}

/**
 * The sizes $XLATS_NATIVE_CPU_CACHES sets (`l1d=48K,l2=1M`, either or both; empty:
 * none), or why it is wrong: an unknown name, a size that does not parse, or one
 * outside CACHE_RANGES.
 */
export function parseCachesOverride(text: string): Found | string {
  const found: Found = {};
  const names: Record<string, keyof CpuCaches> = { l1d: "l1dBytes", l2: "l2Bytes" };
  for (const item of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const [name, size, extra] = item.split("=");
    const key = names[name?.trim().toLowerCase() ?? ""];
    const bytes = size === undefined ? undefined : parseCacheSize(size);
    const problem = size === undefined || extra !== undefined || key === undefined ? `\`${item}\` is not l1d=SIZE or l2=SIZE`
      : bytes === undefined ? `\`${size}\` is not a size (bytes, or a whole number with K or M)`
      : !inRange(key, bytes) ? `${name}=${size} lies outside ${CACHE_RANGES[key].map(showBytes).join(" to ")}`
      : undefined;
    if (problem !== undefined) return `${CPU_CACHES_VARIABLE}: ${problem}`;
    found[key] = bytes;
  }
  return found;
}

/** Bytes as KiB or MiB where whole. */
export function showBytes(bytes: number): string {
  return bytes % (1 << 20) === 0 ? `${bytes >> 20} MiB` : bytes % 1024 === 0 ? `${bytes >> 10} KiB` : `${bytes} B`;
}

/** Each size from the first of `sources` that has it, else MEASURED_CACHES's. */
export function resolveCaches(sources: readonly (readonly [CacheSource, Found])[]): DetectedCaches {
  const pick = (key: keyof CpuCaches): [number, CacheSource] => {
    for (const [from, found] of sources) if (found[key] !== undefined) return [found[key], from];
    return [MEASURED_CACHES[key], "measured"];
  };
  const [l1dBytes, l1dFrom] = pick("l1dBytes");
  const [l2Bytes, l2From] = pick("l2Bytes");
  return { caches: { l1dBytes, l2Bytes }, from: { l1dBytes: l1dFrom, l2Bytes: l2From } };
}

const SYSFS_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache";

/** sysfs's cache entries of the first CPU (none where the directory is missing or unreadable). */
function readSysfs(node: NodeBuiltins): SysfsCacheEntry[] {
  const { fs, path } = node;
  try {
    return fs.readdirSync(SYSFS_CACHE_DIR).filter((d) => /^index\d+$/.test(d)).flatMap((d) => {
      const read = (file: string): string => fs.readFileSync(path.join(SYSFS_CACHE_DIR, d, file), "utf8");
      try {
        return [{ level: read("level"), type: read("type"), size: read("size") }];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** A command's output, or "" where it does not run (no such program, a failure). */
function output(node: NodeBuiltins, file: string, args: readonly string[]): string {
  try {
    return node.childProcess.execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 5000 });
  } catch {
    return "";
  }
}

/**
 * This machine's cache sizes (the sources in the order above; a program is run only
 * where the ones before leave a size unknown), or why $XLATS_NATIVE_CPU_CACHES is wrong.
 */
export function detectCaches(node: NodeBuiltins): DetectedCaches | string {
  const { process } = node;
  const override = parseCachesOverride(process.env[CPU_CACHES_VARIABLE] ?? "");
  if (typeof override === "string") return override;
  const sources: (readonly [CacheSource, Found])[] = [["override", override]];
  const known = (): boolean => (["l1dBytes", "l2Bytes"] as const).every((key) => sources.some(([, f]) => f[key] !== undefined));
  if (!known() && process.platform === "linux") sources.push(["sysfs", sysfsCaches(readSysfs(node))]);
  if (!known() && process.platform === "linux") sources.push(["getconf", getconfCaches(output(node, "getconf", ["-a"]))]);
  if (!known() && process.platform === "darwin") sources.push(["sysctl", sysctlCaches(output(node, "sysctl", ["hw.l1dcachesize", "hw.l2cachesize"]))]);
  return resolveCaches(sources);
}
