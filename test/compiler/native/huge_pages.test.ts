// The native backend's huge-page advice (NativeModule.adviseHugePages, glue.ts): the device
// memory a native program runs on is advised to transparent huge pages from its compile on,
// its growth included, before the new pages are first written. Read from the process's
// /proc/self/smaps (THPeligible: whether a mapping may have huge pages, which in the
// kernel's `madvise` mode only an advised one may), so Linux in that mode only.

import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compile, WasmDevice } from "../../../src/compiler/index.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { needsCompiler, REDUCERS } from "./native_support.js";

/**
 * Skips the test where the advice is turned off (XLATS_NATIVE_HUGE_PAGES=0) or the kernel's
 * transparent huge pages are not in `madvise` mode (there THPeligible says nothing of it).
 */
function needsAdvice(t: TestContext): boolean {
  if (process.env["XLATS_NATIVE_HUGE_PAGES"]?.trim() === "0") {
    t.skip("XLATS_NATIVE_HUGE_PAGES=0 turns the advice off");
    return false;
  }
  let mode = "";
  try {
    mode = readFileSync("/sys/kernel/mm/transparent_hugepage/enabled", "utf8");
  } catch {
    // Not Linux, or no transparent huge pages.
  }
  if (!mode.includes("[madvise]")) {
    t.skip(`transparent huge pages are not in madvise mode here (${mode.trim() || "no /sys/kernel/mm/transparent_hugepage"})`);
    return false;
  }
  if (!readFileSync("/proc/self/smaps", "utf8").includes("THPeligible:")) {
    t.skip("this kernel's /proc/self/smaps has no THPeligible lines (before Linux 5.0)");
    return false;
  }
  return true;
}

/** Bytes of this process's mappings that may have huge pages (/proc/self/smaps: Size of each mapping whose THPeligible is 1). */
function eligibleBytes(): number {
  let bytes = 0;
  let size = 0;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const s = /^Size:\s+(\d+) kB/.exec(line);
    if (s !== null) size = Number(s[1]) * 1024;
    if (/^THPeligible:\s+1/.test(line)) bytes += size;
  }
  return bytes;
}

const N = 1 << 22;
const SUM = `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${N}] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
`;

test("device memory that grows after a native compile is advised to huge pages before it is written, and the sum over it is right", async (t) => {
  if (!needsCompiler(t) || !needsAdvice(t)) return;
  const device = await WasmDevice.create({ threads: 1 });
  try {
    const before = eligibleBytes();
    const exe = await compile(parseHlo(SUM), { device, backend: "native", threads: 1 });
    // Placing the 16 MiB argument grows the device memory; nothing has run yet.
    const x = device.bufferFromLiteral(Literal.fromValues("f32", [N], Array.from({ length: N }, (_, i) => i % 8)));
    const advised = eligibleBytes() - before;
    assert.ok(advised >= 4 * N, `${advised} bytes of mappings became eligible for huge pages, fewer than the argument's ${4 * N}`);
    const [s] = exe.execute([x]);
    // 0 + 1 + ... + 7 in every eight elements: every partial sum an integer below 2^24, so exact in any order.
    assert.equal(s!.toLiteral().data[0], (N / 8) * 28);
    s!.delete();
    x.delete();
    exe.delete();
  } finally {
    await device.close();
  }
});
