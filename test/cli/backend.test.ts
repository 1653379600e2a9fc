// --backend for `xlats run` and `xlats test`, and `xlats compile`: through the built
// command (test/cli/helpers.ts: its server's worker has its own modules, where only the
// built-in backends exist), and through runCli in this
// process with backends registered at run time (async_backend.ts, and a test backend
// with a compileAndDump hook).

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { runCli, type CliIo } from "../../src/cli/cli.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { interpreterBackend, interpreterDeviceBackend } from "../../src/compiler/interpreter/backend.js";
import { defaultBackend, registerBackend } from "../../src/runtime/index.js";
import { parseMlirLiteral } from "../../src/text/mlir/index.js";
import { ASYNC_BACKEND, inProcess } from "../runtime/async_backend.js";
import { MEMORY_BACKEND } from "../runtime/device_memory_backend.js";
import { tempFiles, xlats } from "./helpers.js";

const NEGATE = `func.func @main(%arg0: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.negate %arg0 : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
`;

const CHECKS = `func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.multiply %a, %a : tensor<2xi32>
  check.expect_eq_const %b, dense<[1, 4]> : tensor<2xi32>
  func.return
}
`;

/** What the command knows: the built-in backends only. */
const BUILT_IN = Object.keys(BACKENDS).join(", ");

test("an unknown --backend is a usage error listing the known backends (run, test, compile)", () => {
  const dir = tempFiles({ "neg.mlir": NEGATE, "checks.mlir": CHECKS });
  for (const args of [["run", join(dir, "neg.mlir"), "--arg", "dense<[1, 2]> : tensor<2xi32>"], ["test", join(dir, "checks.mlir")], ["compile", join(dir, "neg.mlir")]]) {
    const r = xlats(...args, "--backend", "tpu");
    assert.equal(r.code, 2, args[0]);
    assert.equal(r.stderr, `error: ${args[0]}: unknown backend 'tpu' (known backends: ${BUILT_IN})\n`);
  }
});

test("--backend interpreter: run and test work as without it", () => {
  const dir = tempFiles({ "neg.mlir": NEGATE, "checks.mlir": CHECKS });
  const r = xlats("run", join(dir, "neg.mlir"), "--backend", "interpreter", "--arg", "dense<[1, -2]> : tensor<2xi32>");
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(parseMlirLiteral(r.stdout.trim()).values(), [-1, 2]);
  const t = xlats("test", join(dir, "checks.mlir"), "--backend=interpreter");
  assert.equal(t.code, 0, t.stdout);
  assert.match(t.stdout, /1 passed, 0 failed, 0 skipped/);
});

test("compile: the default backend compiles and dumps; a backend that does not compile is a clear error; --help lists the backends", () => {
  const dir = tempFiles({ "neg.mlir": NEGATE });
  const r = xlats("compile", join(dir, "neg.mlir"), "--dump");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /kind=kLoop/);
  // The default is native where a C compiler works (a C kernel), else wasm.
  assert.match(r.stdout, defaultBackend() === "native" ? /kernel fusion\.\S+ \(.*C xk_loop_[0-9a-f]+\)/ : /kernel fusion\.\S+ \(.*bytes of wasm\)/);
  const named = xlats("compile", join(dir, "neg.mlir"), "--backend", "interpreter");
  assert.equal(named.code, 2);
  assert.equal(named.stderr, "error: compile: backend 'interpreter' runs programs but does not compile them; --backend takes one that compiles: wasm, native, webgpu\n");
  const help = xlats("--help");
  assert.ok(help.stdout.includes(`--backend NAME picks the backend: one of ${BUILT_IN} (default: native where a C compiler works, else wasm)`), help.stdout);
  assert.match(help.stdout, /xlats compile FILE \[--dump\] \[--dump-after-each\]/);
});

/** runCli in this process on files in memory. */
async function cli(files: Record<string, string>, ...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    readFile: (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`no file ${path}`);
      return text;
    },
    isDirectory: () => false,
    listDirectory: () => [],
    joinPath: (dir, name) => `${dir}/${name}`,
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

test("run and test with a run-time registered backend whose evaluate is asynchronous", async () => {
  const before = inProcess.evaluations;
  const r = await cli({ "neg.mlir": NEGATE }, "run", "neg.mlir", "--backend", ASYNC_BACKEND, "--arg", "dense<[3, -4]> : tensor<2xi32>");
  assert.equal(r.code, 0, r.err.join("\n"));
  assert.deepEqual(parseMlirLiteral(r.out[0]!).values(), [-3, 4]);
  const t = await cli({ "checks.mlir": CHECKS }, "test", "checks.mlir", "--backend", ASYNC_BACKEND);
  assert.equal(t.code, 0, t.out.join("\n"));
  assert.deepEqual(t.out, ["PASS checks.mlir:main", "1 passed, 0 failed, 0 skipped"]);
  assert.equal(inProcess.evaluations, before + 2);
  // test passes the case's constants (the operand, the expected value) as arguments; --fold-constants keeps them.
  assert.equal(inProcess.last!.parameters.length, 2);
  const folded = await cli({ "checks.mlir": CHECKS }, "test", "checks.mlir", "--backend", ASYNC_BACKEND, "--fold-constants");
  assert.equal(folded.code, 0, folded.out.join("\n"));
  assert.equal(inProcess.last!.parameters.length, 0);
});

test("run with a backend that has no in-process evaluate goes through a one-device client", async () => {
  const r = await cli({ "neg.mlir": NEGATE }, "run", "neg.mlir", "--backend", MEMORY_BACKEND, "--arg", "dense<[5, -6]> : tensor<2xi32>");
  assert.equal(r.code, 0, r.err.join("\n"));
  assert.deepEqual(parseMlirLiteral(r.out[0]!).values(), [-5, 6]);
});

test("compile calls the backend's compileAndDump with the dump switches", async () => {
  const seen: string[] = [];
  registerBackend({
    host: { ...interpreterBackend, name: "dump-test" },
    device: { ...interpreterDeviceBackend, name: "dump-test" },
    compileAndDump: (module, options) => {
      seen.push(`${module.entry.name} dump=${options.dump} each=${options.dumpAfterEach}`);
      return options.dump || options.dumpAfterEach ? `compiled ${module.entry.name}\n` : "";
    },
  });
  const files = { "neg.mlir": NEGATE };
  // Without --backend: the default backend (wasm) compiles and prints a summary.
  const plain = await cli(files, "compile", "neg.mlir");
  assert.equal(plain.code, 0);
  assert.match(plain.out.join("\n"), /1 kernel\(s\), 0 interpreted step\(s\)/);
  const quiet = await cli(files, "compile", "neg.mlir", "--backend", "dump-test");
  assert.deepEqual([quiet.code, quiet.out], [0, []]);
  const dumped = await cli(files, "compile", "neg.mlir", "--dump-after-each", "--backend", "dump-test");
  assert.deepEqual([dumped.code, dumped.out], [0, ["compiled main"]]);
  assert.deepEqual(seen, ["main dump=false each=false", "main dump=false each=true"]);
  // Without --backend: the default backend if it compiles, else the first registered one that does.
  if (Object.values(BACKENDS).every((b) => b.compileAndDump === undefined)) {
    const chosen = await cli(files, "compile", "neg.mlir", "--dump");
    assert.deepEqual([chosen.code, chosen.out], [0, ["compiled main"]]);
    assert.equal(seen.at(-1), "main dump=true each=false");
  }
  const bad = await cli(files, "compile", "neg.mlir", "--dump=yes");
  assert.deepEqual([bad.code, bad.err], [2, ["error: compile: --dump takes no value"]]);
});
