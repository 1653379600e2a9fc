// The bench's rounds (bench/harness/rounds.ts), which `npm run bench` and `npm run
// bench:browser` share: the flag's value, and the runners' order round by round.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseRounds, runRounds } from "../../bench/harness/rounds.js";
import type { CellResult } from "../../bench/harness/measure.js";
import type { RunnerConfig } from "../../bench/harness/plan.js";

test("parseRounds: 1 without the flag, the whole number given, an error for anything else", () => {
  assert.equal(parseRounds(["--only", "gpt2"]), 1);
  assert.equal(parseRounds(["--rounds", "3", "--threads", "1"]), 3);
  for (const bad of [["--rounds"], ["--rounds", "0"], ["--rounds", "2.5"], ["--rounds", "x"], ["--rounds", ""], ["--rounds", "-1"]]) {
    const r = parseRounds(bad);
    assert.ok(typeof r !== "number", bad.join(" "));
    assert.match(r.error, /--rounds takes a whole number of rounds, 1 or more/);
  }
});

test("runRounds: every runner once a round, the order reversed every other round, the cells kept round by round", async () => {
  const runners: RunnerConfig[] = [{ name: "xlats-wasm", threads: 1 }, { name: "ort-web", threads: 1 }, { name: "xlats-wasm", threads: 2 }];
  const calls: string[] = [];
  const rounds = await runRounds(runners, 3, async (config, prefix) => {
    calls.push(`${prefix}${config.name}:${config.threads}`);
    const cell: CellResult = { runner: config, kind: "add", label: prefix, outcome: { status: "na", reason: "made up" } };
    return [cell];
  });
  assert.deepEqual(calls, [
    "round 1/3  xlats-wasm:1", "round 1/3  ort-web:1", "round 1/3  xlats-wasm:2",
    "round 2/3  xlats-wasm:2", "round 2/3  ort-web:1", "round 2/3  xlats-wasm:1",
    "round 3/3  xlats-wasm:1", "round 3/3  ort-web:1", "round 3/3  xlats-wasm:2",
  ]);
  assert.deepEqual(rounds.map((cells) => cells.length), [3, 3, 3]);
  assert.ok(rounds[1]!.every((c) => c.label === "round 2/3  "));
  // One round: no prefix, the given order.
  const single: string[] = [];
  await runRounds(runners, 1, async (config, prefix) => { single.push(`${prefix}${config.name}`); return []; });
  assert.deepEqual(single, ["xlats-wasm", "ort-web", "xlats-wasm"]);
});
