// The cache sizes the native backend blocks for (native/cpu_caches.ts): each source's text
// parsed, absurd sizes rejected, the sources taken in order, the override's errors; the
// kernels, and so the module's cache key, changing with the blocks; and products equal
// to the interpreter's whatever the sizes (bit for bit between sizes that keep kc, the
// order of the sums).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  CACHE_RANGES, CPU_CACHES_VARIABLE, detectCaches, getconfCaches, parseCacheSize, parseCachesOverride, resolveCaches, sysctlCaches, sysfsCaches,
} from "../../../src/compiler/native/cpu_caches.js";
import { emitGemmC } from "../../../src/compiler/native/gemm_c.js";
import { MEASURED_CACHES, type CpuCaches, type GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import type { NativeCpu, NativeKernel } from "../../../src/compiler/native/kernel.js";
import type { NodeBuiltins } from "../../../src/compiler/native/node.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { gemmReference } from "../../support/kernel_cases.js";
import { rng } from "../../support/prng.js";
import { nativeCpu, nativeSkipReason, runNativeCases } from "./gemm_harness.js";

const KiB = 1024;
const MiB = 1024 * 1024;
const skip = nativeSkipReason();

/** The 2-core Zen 5 VM's `getconf -a` (its cache lines): a 508 MiB L3 from the hypervisor, empty values where glibc knows none. */
const ZEN5_GETCONF = `LEVEL1_ICACHE_SIZE                 32768
LEVEL1_ICACHE_ASSOC                
LEVEL1_ICACHE_LINESIZE             64
LEVEL1_DCACHE_SIZE                 49152
LEVEL1_DCACHE_ASSOC                12
LEVEL1_DCACHE_LINESIZE             64
LEVEL2_CACHE_SIZE                  1048576
LEVEL2_CACHE_ASSOC                 8
LEVEL2_CACHE_LINESIZE              64
LEVEL3_CACHE_SIZE                  532676608
LEVEL3_CACHE_ASSOC                 0
LEVEL4_CACHE_SIZE                  
`;

test("cpu caches: sizes as sysfs and the override write them", () => {
  assert.equal(parseCacheSize("48K\n"), 48 * KiB);
  assert.equal(parseCacheSize("1024K"), 1 * MiB);
  assert.equal(parseCacheSize("2M"), 2 * MiB);
  assert.equal(parseCacheSize("512KiB"), 512 * KiB);
  assert.equal(parseCacheSize("1MB"), 1 * MiB);
  assert.equal(parseCacheSize("49152"), 49152);
  for (const bad of ["", "K", "1.5M", "-48K", "48G", "48 K B", "0x10"]) assert.equal(parseCacheSize(bad), undefined, bad);
});

test("cpu caches: sysfs's entries give L1d and L2, instruction caches and L3 ignored, absurd sizes dropped", () => {
  const entries = [
    { level: "1\n", type: "Instruction\n", size: "32K\n" },
    { level: "1\n", type: "Data\n", size: "48K\n" },
    { level: "2\n", type: "Unified\n", size: "1024K\n" },
    { level: "3\n", type: "Unified\n", size: "32768K\n" },
  ];
  assert.deepEqual(sysfsCaches(entries), { l1dBytes: 48 * KiB, l2Bytes: 1 * MiB });
  // Order does not matter; a 2 MiB L2.
  assert.deepEqual(sysfsCaches([entries[3]!, { ...entries[2]!, size: "2048K" }, entries[1]!, entries[0]!]), { l1dBytes: 48 * KiB, l2Bytes: 2 * MiB });
  // A size out of range (a 64 MiB "L2", an 8 KiB L1d) or unreadable is dropped, the other kept.
  assert.deepEqual(sysfsCaches([entries[1]!, { ...entries[2]!, size: "65536K" }]), { l1dBytes: 48 * KiB });
  assert.deepEqual(sysfsCaches([{ ...entries[1]!, size: "8K" }, entries[2]!]), { l2Bytes: 1 * MiB });
  assert.deepEqual(sysfsCaches([{ ...entries[1]!, size: "lots" }]), {});
  assert.deepEqual(sysfsCaches([]), {});
});

test("cpu caches: getconf's and sysctl's output, the hypervisor's L3 ignored, zeros and blanks rejected", () => {
  assert.deepEqual(getconfCaches(ZEN5_GETCONF), { l1dBytes: 48 * KiB, l2Bytes: 1 * MiB });
  assert.deepEqual(getconfCaches("LEVEL1_DCACHE_SIZE 0\nLEVEL2_CACHE_SIZE 0\n"), {});
  assert.deepEqual(getconfCaches("LEVEL1_DCACHE_SIZE                 \nLEVEL2_CACHE_SIZE                  262144\n"), { l2Bytes: 256 * KiB });
  // An L2 past 16 MiB (a shared L3 reported as L2) and a 1 GiB L1d are misreports.
  assert.deepEqual(getconfCaches("LEVEL1_DCACHE_SIZE 1073741824\nLEVEL2_CACHE_SIZE 33554432\n"), {});
  assert.deepEqual(getconfCaches(""), {});
  assert.deepEqual(sysctlCaches("hw.l1dcachesize: 65536\nhw.l2cachesize: 4194304\n"), { l1dBytes: 64 * KiB, l2Bytes: 4 * MiB });
  assert.deepEqual(sysctlCaches("hw.l1dcachesize: 131072\nhw.l2cachesize: 16777216\n"), { l1dBytes: 128 * KiB, l2Bytes: 16 * MiB });
  assert.deepEqual(sysctlCaches("hw.l2cachesize: 0\n"), {});
});

test("cpu caches: the override's sizes, and its mistakes said plainly", () => {
  assert.deepEqual(parseCachesOverride(""), {});
  assert.deepEqual(parseCachesOverride("l1d=32K,l2=2M"), { l1dBytes: 32 * KiB, l2Bytes: 2 * MiB });
  assert.deepEqual(parseCachesOverride(" L2 = 512K "), { l2Bytes: 512 * KiB });
  assert.deepEqual(parseCachesOverride(`l1d=${16 * KiB},l2=${16 * MiB}`), { l1dBytes: CACHE_RANGES.l1dBytes[0], l2Bytes: CACHE_RANGES.l2Bytes[1] });
  const problems: [string, RegExp][] = [
    ["l3=32M", /`l3=32M` is not l1d=SIZE or l2=SIZE/],
    ["l2", /`l2` is not/],
    ["l2=1M=2M", /is not l1d=SIZE/],
    ["l2=big", /`big` is not a size/],
    ["l2=64K", /l2=64K lies outside 128 KiB to 16 MiB/],
    ["l1d=512K", /l1d=512K lies outside 16 KiB to 256 KiB/],
  ];
  for (const [text, message] of problems) {
    const r = parseCachesOverride(text);
    assert.equal(typeof r, "string", text);
    assert.match(r as string, message);
    assert.match(r as string, new RegExp(`^${CPU_CACHES_VARIABLE}: `));
  }
});

test("cpu caches: each size from the first source that has it, else the sizes measured on", () => {
  assert.deepEqual(resolveCaches([]), { caches: MEASURED_CACHES, from: { l1dBytes: "measured", l2Bytes: "measured" } });
  assert.deepEqual(resolveCaches([["override", { l2Bytes: 2 * MiB }], ["sysfs", { l1dBytes: 32 * KiB, l2Bytes: 512 * KiB }]]), {
    caches: { l1dBytes: 32 * KiB, l2Bytes: 2 * MiB }, from: { l1dBytes: "sysfs", l2Bytes: "override" },
  });
  assert.deepEqual(resolveCaches([["sysfs", {}], ["getconf", { l1dBytes: 64 * KiB }]]), {
    caches: { l1dBytes: 64 * KiB, l2Bytes: MEASURED_CACHES.l2Bytes }, from: { l1dBytes: "getconf", l2Bytes: "measured" },
  });
});

/** A stand-in for Node's modules: an environment, a platform, sysfs's files (or none) and getconf's output; counts the programs run. */
function fakeNode(env: Record<string, string>, sysfs: Record<string, string> | undefined, getconf: string, platform = "linux") {
  const runs: string[] = [];
  const node = {
    process: { env, platform },
    path: { join: (...parts: string[]) => parts.join("/") },
    fs: {
      readdirSync: (dir: string) => {
        if (sysfs === undefined) throw new Error(`ENOENT: ${dir}`);
        return [...new Set(Object.keys(sysfs).map((f) => f.split("/")[0]!))];
      },
      readFileSync: (file: string) => {
        const key = file.replace("/sys/devices/system/cpu/cpu0/cache/", "");
        if (sysfs?.[key] === undefined) throw new Error(`ENOENT: ${file}`);
        return sysfs[key];
      },
    },
    childProcess: {
      execFileSync: (file: string) => {
        runs.push(file);
        if (file !== "getconf") throw new Error(`no ${file}`);
        return getconf;
      },
    },
  };
  return { node: node as unknown as NodeBuiltins, runs };
}

test("cpu caches: detection takes the override, then sysfs, then getconf, running getconf only where sysfs leaves a size unknown", () => {
  const sysfs = {
    "index0/level": "1\n", "index0/type": "Data\n", "index0/size": "32K\n",
    "index2/level": "2\n", "index2/type": "Unified\n", "index2/size": "2048K\n",
  };
  const withSysfs = fakeNode({}, sysfs, ZEN5_GETCONF);
  assert.deepEqual(detectCaches(withSysfs.node), { caches: { l1dBytes: 32 * KiB, l2Bytes: 2 * MiB }, from: { l1dBytes: "sysfs", l2Bytes: "sysfs" } });
  assert.deepEqual(withSysfs.runs, []);
  // The Zen 5 VM: no sysfs entries; getconf's L1d and L2.
  const vm = fakeNode({}, undefined, ZEN5_GETCONF);
  assert.deepEqual(detectCaches(vm.node), { caches: { l1dBytes: 48 * KiB, l2Bytes: 1 * MiB }, from: { l1dBytes: "getconf", l2Bytes: "getconf" } });
  assert.deepEqual(vm.runs, ["getconf"]);
  // sysfs's L2 absurd: getconf's.
  const halfSysfs = fakeNode({}, { ...sysfs, "index2/size": "131072K\n" }, ZEN5_GETCONF);
  assert.deepEqual(detectCaches(halfSysfs.node), { caches: { l1dBytes: 32 * KiB, l2Bytes: 1 * MiB }, from: { l1dBytes: "sysfs", l2Bytes: "getconf" } });
  // Nothing sane anywhere: the sizes measured on.
  const nothing = fakeNode({}, undefined, "LEVEL1_DCACHE_SIZE 0\nLEVEL2_CACHE_SIZE 0\n");
  assert.deepEqual(detectCaches(nothing.node), { caches: MEASURED_CACHES, from: { l1dBytes: "measured", l2Bytes: "measured" } });
  // The override wins; both sizes set: nothing else is read.
  const both = fakeNode({ [CPU_CACHES_VARIABLE]: "l1d=64K,l2=512K" }, sysfs, ZEN5_GETCONF);
  assert.deepEqual(detectCaches(both.node), { caches: { l1dBytes: 64 * KiB, l2Bytes: 512 * KiB }, from: { l1dBytes: "override", l2Bytes: "override" } });
  assert.deepEqual(both.runs, []);
  const one = fakeNode({ [CPU_CACHES_VARIABLE]: "l2=256K" }, undefined, ZEN5_GETCONF);
  assert.deepEqual(detectCaches(one.node), { caches: { l1dBytes: 48 * KiB, l2Bytes: 256 * KiB }, from: { l1dBytes: "getconf", l2Bytes: "override" } });
  // A wrong override is an error, not a fallback.
  assert.match(detectCaches(fakeNode({ [CPU_CACHES_VARIABLE]: "l2=32M" }, sysfs, ZEN5_GETCONF).node) as string, /XLATS_NATIVE_CPU_CACHES: l2=32M lies outside/);
  // Elsewhere than Linux and macOS: the sizes measured on, no program run.
  const other = fakeNode({}, sysfs, ZEN5_GETCONF, "win32");
  assert.deepEqual(detectCaches(other.node), { caches: MEASURED_CACHES, from: { l1dBytes: "measured", l2Bytes: "measured" } });
  assert.deepEqual(other.runs, []);
});

test("cpu caches: the toolchain's CPU carries sane sizes, which its families block for", { skip }, () => {
  const t = nativeToolchain();
  if (typeof t === "string") return;
  const caches = t.cpu.caches!;
  assert.ok(caches.l1dBytes >= CACHE_RANGES.l1dBytes[0] && caches.l1dBytes <= CACHE_RANGES.l1dBytes[1], `L1d ${caches.l1dBytes}`);
  assert.ok(caches.l2Bytes >= CACHE_RANGES.l2Bytes[0] && caches.l2Bytes <= CACHE_RANGES.l2Bytes[1], `L2 ${caches.l2Bytes}`);
  assert.ok(["override", "sysfs", "getconf", "sysctl", "measured"].includes(t.cachesFrom.l2Bytes));
});

const withCaches = (cpu: NativeCpu, caches: Partial<CpuCaches>): NativeCpu => ({ ...cpu, caches: { ...(cpu.caches ?? MEASURED_CACHES), ...caches } });

test("cpu caches: a kernel's C source, which keys its module, changes with the blocks the sizes give, and only then", { skip }, () => {
  const cpu = nativeCpu();
  const source = (spec: GemmSpec, caches: Partial<CpuCaches>): string => {
    const k = emitGemmC(spec, withCaches(cpu, caches), "g");
    if ("declined" in k) assert.fail(k.declined);
    return k.c.source;
  };
  const gpt2: GemmSpec = { elementType: "f32", batch: 1, m: 128, n: 3072, k: 768 };
  const measured = source(gpt2, MEASURED_CACHES);
  assert.equal(source(gpt2, {}), measured);
  assert.notEqual(source(gpt2, { l2Bytes: 512 * KiB }), measured);
  assert.notEqual(source(gpt2, { l2Bytes: 2 * MiB }), measured);
  assert.notEqual(source(gpt2, { l1dBytes: 32 * KiB }), measured);
  // A product too small for any block to change: the same kernel, the same module.
  const small: GemmSpec = { elementType: "f32", batch: 1, m: 8, n: 8, k: 8 };
  assert.equal(source(small, { l1dBytes: 32 * KiB, l2Bytes: 256 * KiB }), source(small, MEASURED_CACHES));
});

test("cpu caches: products blocked for other sizes equal a double-precision reference, bit for bit the measured sizes' where kc is the same", { skip }, () => {
  const cpu = nativeCpu();
  const random = rng(24);
  const variants: Partial<CpuCaches>[] = [{}, { l2Bytes: 128 * KiB }, { l2Bytes: 512 * KiB }, { l2Bytes: 2 * MiB }, { l2Bytes: 16 * MiB }, { l1dBytes: 16 * KiB }, { l1dBytes: 32 * KiB, l2Bytes: 256 * KiB }];
  // Past one block of rows, of columns and of k at the small sizes; rows, columns and depth not whole tiles or blocks.
  const specs: GemmSpec[] = [
    { elementType: "f32", batch: 1, m: 197, n: 600, k: 700 },
    { elementType: "f64", batch: 2, m: 61, n: 333, k: 300, lhsTransposed: true },
    { elementType: "f32", batch: 1, m: 45, n: 1030, k: 530, rhsTransposed: true },
  ];
  const cases: { spec: GemmSpec; kernel: NativeKernel; a: Float32Array | Float64Array; b: Float32Array | Float64Array; want: Float64Array; variant: number; threads?: number }[] = [];
  for (const spec of specs) {
    const F = spec.elementType === "f32" ? Float32Array : Float64Array;
    const a = new F(spec.batch * spec.m * spec.k).map(() => random() * 2 - 1);
    const b = new F(spec.batch * spec.k * spec.n).map(() => random() * 2 - 1);
    const want = gemmReference(spec, a, b);
    variants.forEach((caches, variant) => {
      const kernel = emitGemmC(spec, withCaches(cpu, caches), `g${cases.length}`);
      if ("declined" in kernel) assert.fail(kernel.declined);
      cases.push({ spec, kernel, a, b, want, variant }, { spec, kernel, a, b, want, variant, threads: 2 });
    });
  }
  const results = runNativeCases(cases.map((c) => ({
    kernel: c.kernel, operands: [c.a, c.b], resultBytes: [c.spec.batch * c.spec.m * c.spec.n * c.a.BYTES_PER_ELEMENT], ...(c.threads === undefined ? {} : { threads: c.threads }),
  })), "native gemm cache sizes");
  const measuredResult = new Map<GemmSpec, Uint8Array>();
  cases.forEach((c, i) => {
    const bytes = results[i]![0]!;
    const F = c.spec.elementType === "f32" ? Float32Array : Float64Array;
    const got = new F(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength / F.BYTES_PER_ELEMENT);
    const { want } = c;
    const eps = c.spec.elementType === "f32" ? 2 ** -23 : 2 ** -52;
    const tol = 4 * eps * c.spec.k * Math.sqrt(c.spec.k);
    const what = `${c.kernel.name} ${JSON.stringify(variants[c.variant])}${c.threads === undefined ? "" : " 2 threads"}`;
    for (let j = 0; j < want.length; j++) if (!(Math.abs(got[j]! - want[j]!) <= tol)) assert.fail(`${what}: element ${j} is ${got[j]}, want ${want[j]}`);
    if (c.variant === 0 && c.threads === undefined) measuredResult.set(c.spec, bytes);
    const sameDepth = variants[c.variant]!.l1dBytes === undefined;
    const first = measuredResult.get(c.spec)!;
    const identical = first.length === bytes.length && first.every((x, j) => x === bytes[j]);
    if (sameDepth) assert.ok(identical, `${what}: differs from the measured sizes' product`);
  });
});

const CHILD = fileURLToPath(new URL("./cpu_caches_child.js", import.meta.url));

interface ChildResult {
  readonly unavailable?: string;
  readonly caches?: CpuCaches;
  readonly from?: Record<string, string>;
  readonly products?: readonly { type: string; error: number; sha: string }[];
}

function child(value: string | undefined): ChildResult {
  const env = { ...process.env };
  delete env[CPU_CACHES_VARIABLE];
  if (value !== undefined) env[CPU_CACHES_VARIABLE] = value;
  const r = spawnSync(process.execPath, [CHILD], { env, encoding: "utf8", timeout: 240_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as ChildResult;
}

test("cpu caches: programs under $XLATS_NATIVE_CPU_CACHES equal the interpreter's, and a wrong value makes the backend unavailable saying why", { skip }, () => {
  const base = child(undefined);
  const l2 = child("l2=256K");
  const both = child("l1d=32K,l2=4M");
  assert.deepEqual(l2.caches, { l1dBytes: base.caches!.l1dBytes, l2Bytes: 256 * KiB });
  assert.equal(l2.from!["l2Bytes"], "override");
  assert.deepEqual(both.caches, { l1dBytes: 32 * KiB, l2Bytes: 4 * MiB });
  for (const r of [base, l2, both]) {
    for (const p of r.products!) {
      // Sums of 600 products of terms in [-1, 1], each rounded in the element type: at most k·eps.
      const bound = p.type === "f32" ? 600 * 2 ** -23 : 600 * 2 ** -52;
      assert.ok(p.error <= bound, `${JSON.stringify(r.caches)} ${p.type}: error ${p.error} against the interpreter`);
    }
  }
  // Only L2 differs: the same sums in the same order.
  assert.deepEqual(l2.products!.map((p) => p.sha), base.products!.map((p) => p.sha));
  const wrong = child("l2=1G");
  assert.match(wrong.unavailable ?? "", /XLATS_NATIVE_CPU_CACHES: `1G` is not a size/);
});
