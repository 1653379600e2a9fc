// StableHLO's interpreter tests (../shared/conformance/stablehlo/interpret) run through
// the check runner, multi-device cases (interpreter.run_parallel) on the runtime's
// worker threads. Prints the totals and every skip with its reason; fails on any failing
// case that is not in expected_failures.ts, and when docs/conformance.md states other totals.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createClient } from "../../src/runtime/client.js";
import { runCheckText, runCheckTextAsync, type CheckCaseResult } from "../../src/check/runner.js";
import { compileSync } from "../../src/compiler/index.js";
import { getBackend, registerBackend } from "../../src/runtime/backend_registry.js";
import { liftConstants } from "../support/backend.js";
import { documentation } from "../support/docs.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { EXPECTED_FAILURES } from "./expected_failures.js";

const ROOT = join(process.cwd(), "..", "shared", "conformance", "stablehlo", "interpret");

function mlirFiles(dir: string): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...mlirFiles(p));
    else if (f.endsWith(".mlir")) out.push(p);
  }
  return out;
}

const available = existsSync(ROOT);

// The suite runs on each backend: the interpreter (the specification) and the compiled
// WebAssembly backend (checked against the same expected values).
for (const backend of ["interpreter", "wasm"]) {
  test(`conformance (${backend}): every case passes or is an expected failure`, { skip: !available && "conformance data not found" }, async () => {
    const all: CheckCaseResult[] = [];
    // One client for the whole suite: run_parallel's processes run on its devices.
    const client = await createClient({ deviceCount: 8, backend });
    try {
      for (const file of mlirFiles(ROOT)) all.push(...await runCheckTextAsync(readFileSync(file, "utf8"), relative(ROOT, file), { client, backend }));
    } finally {
      await client.close();
    }
    const count = (pred: (r: CheckCaseResult) => boolean): number => all.filter(pred).length;
    const passed = count((r) => r.status === "pass");
    const skipped = count((r) => r.status === "skip");
    const failed = count((r) => r.status === "fail");
    const parseFailed = count((r) => r.phase === "parse");
    const totals = `conformance: ${passed} passed, ${failed} failed, ${skipped} skipped`;
    console.log(`${totals} (${backend})`);
    console.log(`conformance: ${all.length - skipped - parseFailed} of ${all.length - skipped} cases parsed and imported; ` +
      `${parseFailed} parse/import failures; ` +
      `${count((r) => r.phase === "evaluate")} evaluation errors; ${count((r) => r.phase === "check")} check failures`);
    for (const r of all.filter((r) => r.status === "skip")) console.log(`conformance: skipped ${r.name}: ${r.message}`);
    const unexpected = all.filter((r) => r.status === "fail" && !(r.name in EXPECTED_FAILURES));
    assert.deepEqual(unexpected.map((r) => `${r.name}: ${r.message}`), []);
    const fixed = Object.keys(EXPECTED_FAILURES).filter((n) => all.some((r) => r.name === n && r.status === "pass"));
    assert.deepEqual(fixed, [], "these cases pass now: remove them from expected_failures.ts");
    const readme = documentation();
    assert.ok(readme.includes(totals), `docs/conformance.md must state the conformance totals: "${totals}"`);
  });
}

// The suite's programs are constants only, which the compiler folds with the
// interpreter's kernels; with the constants made parameters (as the op tests do on wasm)
// its one-device cases run the generated kernels. Multi-device cases are covered above.
test("conformance (wasm, constants as parameters): every one-device case passes or is an expected failure", { skip: !available && "conformance data not found" }, () => {
  const wasm = getBackend("wasm");
  let kernels = 0;
  registerBackend({
    host: { ...wasm.host, name: "wasm-lifted" },
    device: { ...wasm.device, name: "wasm-lifted" },
    evaluate: (computation, args, options) => {
      const lifted = liftConstants(computation, args);
      const executable = compileSync(lifted.computation);
      kernels += executable.stats.kernels;
      try {
        return executable.run(lifted.args, options);
      } finally {
        executable.delete();
      }
    },
  });
  const all: CheckCaseResult[] = [];
  for (const file of mlirFiles(ROOT)) {
    const text = readFileSync(file, "utf8");
    if (!text.includes("run_parallel")) all.push(...runCheckText(text, relative(ROOT, file), { backend: "wasm-lifted" }));
  }
  const passed = all.filter((r) => r.status === "pass").length;
  console.log(`conformance (wasm, constants as parameters): ${passed} of ${all.length} one-device cases passed, ${kernels} kernels run`);
  const unexpected = all.filter((r) => r.status === "fail" && !(r.name in EXPECTED_FAILURES));
  assert.deepEqual(unexpected.map((r) => `${r.name}: ${r.message}`), []);
  assert.ok(passed > 400 && kernels > 200, `${passed} cases passed, ${kernels} kernels`);
});

test("conformance: every file parses and prints, and print(parse(print(x))) == print(x)", { skip: !available && "conformance data not found" }, () => {
  let chunks = 0;
  const problems: string[] = [];
  for (const file of mlirFiles(ROOT)) {
    const name = relative(ROOT, file);
    readFileSync(file, "utf8").split(/^\/\/ -----[ \t]*$/m).forEach((chunk, i) => {
      if (!/func\.func/.test(chunk)) return;
      chunks++;
      try {
        const first = printStableHlo(parseStableHlo(chunk, name));
        const second = printStableHlo(parseStableHlo(first, `${name} (printed)`));
        if (first !== second) problems.push(`${name}:${i}: print is not stable`);
      } catch (e) {
        if (!(`${name}:${i}` in EXPECTED_FAILURES)) {
          problems.push(`${name}:${i}: ${(e as Error).message.split("\n")[0]}`);
        }
      }
    });
  }
  assert.ok(chunks > 500, `expected the whole suite, found ${chunks} chunks`);
  assert.deepEqual(problems, []);
});
