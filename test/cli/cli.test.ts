// The built `xlats` command (test/cli/helpers.ts) on small files: exit codes and output. These
// cases need only the HLO text module (parameters and constants).

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { tempFiles, xlats } from "./helpers.js";

const CANONICAL = `HloModule consts, entry_computation_layout={(f32[2]{0})->s32[2]{0}}

ENTRY %main (p: f32[2]) -> s32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %c = s32[2]{0} constant({1, 2})
}
`;

test("--help prints the usage and exits 0", () => {
  for (const args of [["--help"], ["-h"], ["help"]]) {
    const r = xlats(...args);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage:/);
    assert.match(r.stdout, /xlats run FILE/);
    assert.match(r.stdout, /xlats convert FILE --to mlir\|hlo/);
  }
});

test("each command has its own help: `xlats run --help`, `xlats help convert`, and after an unknown option", () => {
  const run = xlats("run", "--help");
  assert.equal(run.code, 0);
  assert.match(run.stdout, /^Usage:\n  xlats run FILE \[--entry NAME\]/);
  assert.match(run.stdout, /--timeout stops a run/);
  assert.match(run.stdout, /--backend NAME picks the backend/);
  assert.doesNotMatch(run.stdout, /xlats (convert|test|opt|partition|shardings) /);
  assert.ok(run.stdout.split("\n").length < 25, run.stdout);
  const convert = xlats("help", "convert");
  assert.equal(convert.stdout, "Usage:\n  xlats convert FILE --to mlir|hlo\n      Convert between HLO text and StableHLO text.\n\nExit codes: 0 success, 1 bad input or failing tests, 2 bad usage.\n");
  const dir = tempFiles({ "a.hlo": CANONICAL });
  const flag = xlats("print", join(dir, "a.hlo"), "--colour", "red");
  assert.match(flag.stderr, /unknown option --colour\n\nUsage:\n  xlats print FILE \[--lower-chlo\]/);
  assert.doesNotMatch(flag.stderr, /xlats run FILE/);
});

test("help for a command that does not exist is the unknown-command error, exit 2", () => {
  for (const args of [["runn", "--help"], ["help", "runn"], ["-h", "runn"]]) {
    const r = xlats(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /^error: unknown command 'runn'\n\n/, args.join(" "));
  }
});

test("--timeout that is not a positive number is a usage error (exit 2), before the program is read", () => {
  for (const value of ["-1", "0", "soon", "Infinity"]) {
    const r = xlats("run", "/nonexistent/x.mlir", "--timeout", value);
    assert.equal(r.code, 2, `${value}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`--timeout takes a positive number of seconds, got '${value}'`));
  }
});

test("opt on HLO text says that opt takes StableHLO and how to convert it", () => {
  const dir = tempFiles({ "a.hlo": CANONICAL });
  const r = xlats("opt", join(dir, "a.hlo"), "-canonicalize");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /a\.hlo is HLO text; opt takes StableHLO: convert it first with 'xlats convert .*a\.hlo --to mlir > FILE\.mlir'/);
  // The conversion it names works, and opt takes its output.
  const converted = xlats("convert", join(dir, "a.hlo"), "--to", "mlir");
  assert.equal(converted.code, 0, converted.stderr);
  const mlirDir = tempFiles({ "a.mlir": converted.stdout });
  assert.equal(xlats("opt", join(mlirDir, "a.mlir"), "-canonicalize").code, 0);
});

test("no command, an unknown command, an unknown flag: usage error, exit 2", () => {
  assert.equal(xlats().code, 2);
  const unknown = xlats("frobnicate");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const dir = tempFiles({ "a.hlo": CANONICAL });
  const flag = xlats("print", join(dir, "a.hlo"), "--colour", "red");
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /unknown option --colour/);
  const twoFiles = xlats("print", join(dir, "a.hlo"), join(dir, "a.hlo"));
  assert.equal(twoFiles.code, 2);
  const badTo = xlats("convert", join(dir, "a.hlo"), "--to", "onnx");
  assert.equal(badTo.code, 2);
  assert.match(badTo.stderr, /--to must be mlir or hlo, got 'onnx'/);
});

test("a missing file: clear message, exit 1", () => {
  for (const cmd of ["run", "print", "test"]) {
    const r = xlats(cmd, "/nonexistent/dir/x.hlo");
    assert.equal(r.code, 1, cmd);
    assert.match(r.stderr, /cannot read \/nonexistent\/dir\/x\.hlo: no such file or directory/);
  }
});

test("print: canonical HLO back, from lenient input", () => {
  const dir = tempFiles({
    "a.hlo": CANONICAL,
    "b.hlo": "HloModule consts\nENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = s32[2] constant({1,2})\n}\n",
  });
  const a = xlats("print", join(dir, "a.hlo"));
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stdout, CANONICAL);
  const b = xlats("print", join(dir, "b.hlo"));
  assert.equal(b.stdout, CANONICAL);
  assert.equal(xlats("convert", join(dir, "b.hlo"), "--to", "hlo").stdout, CANONICAL);
});

test("a parse error shows file, line, column and a caret; exit 1", () => {
  const dir = tempFiles({ "bad.hlo": "HloModule m\nENTRY %main {\n  ROOT %c = u8[] constant(300)\n}\n" });
  const file = join(dir, "bad.hlo");
  const r = xlats("print", file);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `error: ${file}:3:27: 300 does not fit in u8 (range 0..255)\n  ROOT %c = u8[] constant(300)\n                          ^\n`);
  assert.equal(r.stdout, "");
});

test("text that is neither HLO nor StableHLO is rejected", () => {
  const dir = tempFiles({ "x.txt": "hello world\n" });
  const r = xlats("print", join(dir, "x.txt"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot tell the format/);
});

test("the format error points at the first line that is not a comment; an empty file says so", () => {
  // A license header and blank lines before the stray text: the position is where that
  // text is, not 1:1 under a line that is not the one shown.
  const dir = tempFiles({ "x.mlir": "// header\n/* two\nlines */\n\n  oops here\n", "empty.mlir": "", "notes.mlir": "// only a comment\n\n" });
  const x = join(dir, "x.mlir");
  const r = xlats("run", x);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `error: ${x}:5:3: cannot tell the format: expected HLO text (an 'HloModule' header) or StableHLO text ('module' or 'func.func')\n  oops here\n  ^\n`);
  for (const name of ["empty.mlir", "notes.mlir"]) {
    const e = xlats("run", join(dir, name));
    assert.equal(e.code, 1, name);
    const expected = `error: ${join(dir, name)}:1:1: the file holds no program (it is empty, or only comments and blank lines)\n`;
    assert.ok(e.stderr.startsWith(expected), e.stderr);
  }
});

test("a reader that closes the pipe early (xlats test DIR | head -1): quiet exit 0, no EPIPE trace", async () => {
  const { spawn } = await import("node:child_process");
  const { CLI } = await import("./helpers.js");
  // Many small files, so output is still coming when the reader goes away.
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) files[`t${i}.mlir`] = `func.func @main() {\n  %0 = stablehlo.constant dense<${i}> : tensor<i32>\n  check.expect_eq_const %0, dense<${i}> : tensor<i32>\n  func.return\n}\n`;
  const dir = tempFiles(files);
  const child = spawn(process.execPath, [CLI, "test", dir], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => { stderr += s; });
  await new Promise<void>((resolve) => child.stdout.once("data", () => { child.stdout.destroy(); resolve(); }));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  assert.equal(code, 0);
  assert.doesNotMatch(stderr, /EPIPE|at .*\(/);
});
