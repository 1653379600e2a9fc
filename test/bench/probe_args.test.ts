// The probes' shared option parser (bench/harness/probe_args.ts): typed values and their
// defaults, and every refusal with its message, since a refused command line is what
// keeps a misspelled option from running a probe with its default.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseProbeArgs, probeUsage, type ProbeSpec } from "../../bench/harness/probe_args.js";

const spec = {
  options: {
    rounds: { kind: "number", default: 20, min: 1, integer: true, help: "rounds" },
    seconds: { kind: "number", default: 2.5, min: 0, help: "seconds a shape" },
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    base: { kind: "string", help: "another checkout's directory" },
    only: { kind: "list", default: ["gpt2", "mlp-infer"], help: "workloads" },
    threads: { kind: "list", of: "number", default: [1, 2], min: 1, help: "thread counts" },
    runners: { kind: "list", pattern: /^(xlats-wasm|ort-web)$/, help: "runners" },
    split: { kind: "number", default: 1, min: 1, max: 2, integer: true, help: "threads a call" },
    tiling: { kind: "repeated", help: "a tiling override (JSON)" },
    cold: { kind: "flag", help: "caches flushed" },
    "--quick": { kind: "flag", help: "small sizes" },
    "--wgsl": { kind: "string", help: "where to write the WGSL" },
  },
  words: [{ name: "kind", kind: "string", default: "softmax", help: "the workload" }, { name: "runs", kind: "number", default: 3, min: 1, help: "runs" }],
  rest: { name: "shapes", kind: "string", pattern: /^\d+x\d+x\d+$/, help: "MxKxN" },
} as const satisfies ProbeSpec;

const parse = (...argv: string[]) => parseProbeArgs("probe_x", spec, argv);
const values = (...argv: string[]) => {
  const r = parse(...argv);
  assert.ok("values" in r, JSON.stringify(r));
  return r.values;
};
const refusal = (...argv: string[]): string => {
  const r = parse(...argv);
  assert.ok("error" in r, `${argv.join(" ")} was not refused: ${JSON.stringify(r)}`);
  // Every refusal names the probe and lists what it takes.
  assert.match(r.error, /^probe_x: /);
  assert.ok(r.error.endsWith(probeUsage("probe_x", spec)), r.error);
  return r.error.split("\n")[0]!;
};

test("probe args: nothing given, every default (undefined where there is none)", () => {
  assert.deepEqual(values(), {
    rounds: 20, seconds: 2.5, backend: "native", base: undefined, only: ["gpt2", "mlp-infer"], threads: [1, 2], runners: undefined, split: 1,
    tiling: [], cold: false, "--quick": false, "--wgsl": undefined, kind: "softmax", runs: 3, shapes: [],
  });
});

test("probe args: each kind typed, in any order, positional words and the rest in theirs", () => {
  const v = values("cold", "rounds=3", "matmul", "seconds=0.5", "backend=wasm", "base=/tmp/main", "only=gpt2", "threads=2,1",
    "tiling={\"mc\":6,\"nc\":8}", "tiling={}", "--quick", "--wgsl", "/tmp/k.wgsl", "7", "64x64x64", "128x256x512");
  const rounds: number = v.rounds;
  const backend: "native" | "wasm" = v.backend;
  const base: string | undefined = v.base;
  const threads: number[] = v.threads;
  assert.equal(rounds, 3);
  assert.equal(v.seconds, 0.5);
  assert.equal(backend, "wasm");
  assert.equal(base, "/tmp/main");
  assert.deepEqual(v.only, ["gpt2"]);
  assert.deepEqual(threads, [2, 1]);
  assert.deepEqual(values("runners=ort-web,xlats-wasm").runners, ["ort-web", "xlats-wasm"]);
  assert.equal(values("split=2").split, 2);
  assert.deepEqual(v.tiling, ["{\"mc\":6,\"nc\":8}", "{}"]);
  assert.equal(v.cold, true);
  assert.equal(v["--quick"], true);
  assert.equal(v["--wgsl"], "/tmp/k.wgsl");
  assert.equal(v.kind, "matmul");
  assert.equal(v.runs, 7);
  assert.deepEqual(v.shapes, ["64x64x64", "128x256x512"]);
  // A list's default is a copy: a probe may change its own.
  const a = values(), b = values();
  a.only.push("x");
  assert.deepEqual(b.only, ["gpt2", "mlp-infer"]);
});

test("probe args: an unknown option is refused, not ignored", () => {
  assert.equal(refusal("round=3"), "probe_x: unknown option round=3");
  // A misspelled flag, once the positional words are taken (a free positional string takes any word).
  assert.equal(refusal("softmax", "4", "colde"), "probe_x: unknown option colde");
  assert.equal(refusal("--quik"), "probe_x: unknown option --quik");
  // A word past the positional ones that is not one of the rest's.
  assert.equal(refusal("matmul", "3", "64x64"), "probe_x: unknown option 64x64");
});

test("probe args: a bad number, a value out of its choices, a flag given a value, a missing value: each refused with what was expected", () => {
  assert.equal(refusal("rounds=x"), "probe_x: rounds=x: rounds takes a whole number, at least 1");
  assert.equal(refusal("rounds="), "probe_x: rounds=: rounds takes a whole number, at least 1");
  assert.equal(refusal("rounds=0"), "probe_x: rounds=0: rounds takes a whole number, at least 1");
  assert.equal(refusal("rounds=2.5"), "probe_x: rounds=2.5: rounds takes a whole number, at least 1");
  assert.equal(refusal("seconds=-1"), "probe_x: seconds=-1: seconds takes a number, at least 0");
  assert.equal(refusal("seconds=Infinity"), "probe_x: seconds=Infinity: seconds takes a number, at least 0");
  assert.equal(refusal("threads=1,,2"), "probe_x: threads=1,,2: threads takes comma-separated numbers (each at least 1)");
  assert.equal(refusal("threads=0"), "probe_x: threads=0: threads takes comma-separated numbers (each at least 1)");
  assert.equal(refusal("split=3"), "probe_x: split=3: split takes a whole number, at least 1 and at most 2");
  assert.equal(refusal("runners=xlats-wasm,ort-wb"), "probe_x: runners=xlats-wasm,ort-wb: runners takes comma-separated values (each matching ^(xlats-wasm|ort-web)$)");
  assert.equal(refusal("backend=nativ"), "probe_x: backend=nativ: backend takes one of native|wasm");
  assert.equal(refusal("cold=1"), "probe_x: cold=1: cold is a flag and takes no value");
  assert.equal(refusal("rounds"), "probe_x: rounds: rounds takes a value (rounds=...)");
  assert.equal(refusal("--wgsl"), "probe_x: --wgsl: --wgsl takes a value after it");
  assert.equal(refusal("rounds=2", "rounds=3"), "probe_x: rounds=3: rounds is given twice");
  assert.equal(refusal("matmul", "none"), "probe_x: none: runs takes a number, at least 1");
});

test("probe args: help (or --help) gives every option with its default, wherever it stands", () => {
  for (const argv of [["help"], ["rounds=3", "--help"]]) {
    const r = parse(...argv);
    assert.ok("help" in r);
    assert.equal(r.help, probeUsage("probe_x", spec));
  }
  const usage = probeUsage("probe_x", spec);
  assert.match(usage, /^probe_x takes:\n/);
  assert.match(usage, /\n {2}rounds=VALUE +rounds: a whole number, at least 1 \(default 20\)\n/);
  assert.match(usage, /\n {2}backend=VALUE +the backend: one of native\|wasm \(default native\)\n/);
  assert.match(usage, /\n {2}threads=VALUE +thread counts: comma-separated numbers \(each at least 1\) \(default 1,2\)\n/);
  assert.match(usage, /\n {2}cold +caches flushed\n/);
  assert.match(usage, /\n {2}--wgsl VALUE +where to write the WGSL\n/);
  assert.match(usage, /\n {2}\[kind\] +the workload \(default softmax\)\n/);
  assert.match(usage, /\n {2}\[shapes \.\.\.\] +MxKxN \(\^\\d\+x\\d\+x\\d\+\$\)\n/);
  assert.match(usage, /\n {2}help +these lines$/);
});
