// Shardy's lit tests (../shared/conformance/shardy) run through the shared harness
// (../shared/tools/sdy-harness.mjs: its own FileCheck, -split-input-file and
// -verify-diagnostics) with `xlats opt` standing in for sdy_opt and `xlats test` for
// `stablehlo-translate --interpret` (the executable folders: programs partitioned by
// the folder's passes, run on several devices, checked against the sequential ones).
// `xlats test` runs those with --accumulation stablehlo-reference: it stands in for
// StableHLO's reference interpreter, whose dot sums (product and sum rounded apart, no
// FMA) the exact checks of a sharded dot against the sequential one assume. Prints the totals per
// folder; fails when fewer cases pass than docs/conformance.md states, so progress can only be
// kept (the page's line is raised as passes land).
//
// The harness starts a command per case: a client (the C one of tools/cli_client_c.ts,
// else tools/cli_client.ts) which has the commands run by one server (tools/cli_server.ts,
// a worker thread of this process) instead of starting an `xlats` that loads its modules
// again each time (docs/conformance.md).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { documentation } from "../support/docs.js";
import { startCliServer } from "../../tools/cli_server.js";
import { cliClientCommand } from "../../tools/cli_client_c.js";

const SHARED = join(process.cwd(), "..", "shared");
const HARNESS = join(SHARED, "tools", "sdy-harness.mjs");
const CASES = join(SHARED, "conformance", "shardy");
const available = existsSync(HARNESS) && existsSync(CASES);

interface CaseResult {
  readonly file: string;
  readonly status: "pass" | "fail" | "skip";
}

test("Shardy lit tests through xlats opt: no fewer passes than docs/conformance.md states", { skip: !available && "Shardy conformance data not found", timeout: 20 * 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "xlats-shardy-"));
  const socket = join(dir, "xlats.sock");
  const server = await startCliServer(socket);
  try {
    const json = join(dir, "results.json");
    const xlats = cliClientCommand(dir, socket).map((word) => JSON.stringify(word)).join(" ");
    // The harness runs only when invoked by its real path (it compares the two). The
    // server is a worker thread: it serves while this thread waits for the harness.
    const run = spawnSync(process.execPath, [
      realpathSync(HARNESS), "--quiet", "--timeout", "180", "--json", json,
      "--tool", `${xlats} opt {file} {flags}`,
      "--interp", `${xlats} test {file} --accumulation stablehlo-reference`,
      CASES,
    ], { encoding: "utf8", maxBuffer: 64 << 20 });
    assert.ok(existsSync(json), `the harness wrote no results: ${run.stderr}`);
    const results = (JSON.parse(readFileSync(json, "utf8")) as { results: CaseResult[] }).results;
    const byFolder = new Map<string, { pass: number; fail: number; skip: number }>();
    for (const r of results) {
      const folder = r.file.split("/").slice(0, 4).join("/");
      const t = byFolder.get(folder) ?? { pass: 0, fail: 0, skip: 0 };
      t[r.status]++;
      byFolder.set(folder, t);
    }
    for (const [folder, t] of [...byFolder].sort()) console.log(`shardy: ${folder}: ${t.pass} passed, ${t.fail} failed, ${t.skip} skipped`);
    const count = (s: CaseResult["status"]): number => results.filter((r) => r.status === s).length;
    const totals = `shardy lit tests: ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped`;
    console.log(totals);
    const readme = documentation();
    const stated = /shardy lit tests: (\d+) passed, (\d+) failed, (\d+) skipped/.exec(readme);
    assert.ok(stated, `docs/conformance.md must state the Shardy totals, e.g. "${totals}"`);
    assert.ok(count("pass") >= Number(stated[1]), `${totals}: fewer than the ${stated[1]} docs/conformance.md states`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
