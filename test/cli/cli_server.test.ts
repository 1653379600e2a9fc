// tools/cli_server.ts and its clients, tools/cli_client.ts (Node) and the C one of
// tools/cli_client_c.ts, which Shardy's lit tests use in the place of `xlats`: each client
// prints what the command printed and exits with its code, as `xlats` itself does
// (compared with a run of the command), its relative paths taken from its own working
// directory; a closed server is said, with exit code 2.

import { strict as assert } from "node:assert";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import "../../src/index.js"; // registers the backends the lender's clients run on
import { clientLender, startCliServer } from "../../tools/cli_server.js";
import { buildCClient } from "../../tools/cli_client_c.js";
import { tempFiles, xlatsProcess } from "./helpers.js";
import { RUN_PARALLEL_SUM } from "../support/check_programs.js";

// dist/test/cli/cli_server.test.js → dist/tools/cli_client.js
const CLIENT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tools", "cli_client.js");

const ADD = `func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
`;

/** The C client, built once for the file's tests (undefined without a C compiler). */
const cDir = mkdtempSync(join(tmpdir(), "xlats-cli-client-"));
process.on("exit", () => rmSync(cDir, { recursive: true, force: true }));
const cClient = buildCClient(cDir);

const CLIENTS: { name: string; command: string[] | undefined }[] = [
  { name: "the Node client", command: [process.execPath, CLIENT] },
  { name: "the C client", command: cClient === undefined ? undefined : [cClient] },
];

for (const { name, command } of CLIENTS) {
  test(`${name} answers as xlats does: output, errors and exit codes; relative paths from the client's directory`, { skip: command === undefined && "no C compiler built the C client" }, () => clientAnswers(command!));
}

test("a command's bytes come back whole: non-ASCII text and output past one read's size, from the C client as from Node's", { skip: cClient === undefined && "no C compiler built the C client" }, async () => {
  // A chain of adds whose printed module is past one read's 64 KiB.
  const adds = Array.from({ length: 3000 }, (_, i) => `  %${i + 1} = stablehlo.add %${i === 0 ? "arg0" : i}, %arg0 : tensor<2xf32>`);
  const long = `func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n${adds.join("\n")}\n  return %3000 : tensor<2xf32>\n}\n`;
  const dir = tempFiles({ "é ü.mlir": long });
  const socket = join(dir, "xlats.sock");
  const server = await startCliServer(socket);
  try {
    const both = (...args: string[]) => {
      const viaC = clientIn([cClient!], socket, dir, ...args);
      assert.deepEqual(viaC, clientIn([process.execPath, CLIENT], socket, dir, ...args));
      return viaC;
    };
    // A name with non-ASCII bytes and a space; a missing file's name with quotes, a backslash and a tab (JSON-escaped by the C client).
    const printed = both("print", "é ü.mlir");
    assert.equal(printed.code, 0);
    assert.ok(printed.stdout.length > 65536 && printed.stdout.includes("return %2999"), `${printed.stdout.length} characters`);
    const odd = both("print", "missing \"a\\b\tc\".mlir");
    assert.deepEqual(odd, { code: 1, stdout: "", stderr: "error: cannot read missing \"a\\b\tc\".mlir: no such file or directory\n" });
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});


test("xlats test on the server's lent devices: passes, a failure, passes again, and two commands at once", async () => {
  const dir = tempFiles({ "sum.mlir": RUN_PARALLEL_SUM, "wrong.mlir": RUN_PARALLEL_SUM.replace("dense<[11, 22]>", "dense<[11, 23]>") });
  const socket = join(dir, "xlats.sock");
  const server = await startCliServer(socket);
  const command = cClient === undefined ? [process.execPath, CLIENT] : [cClient];
  const run = (file: string) => clientIn(command, socket, dir, "test", file);
  const runAsync = (file: string) => new Promise<number>((resolve) => {
    execFile(command[0]!, [...command.slice(1), socket, "test", file], { cwd: dir }, (error) => resolve(error === null ? 0 : Number(error.code)));
  });
  try {
    assert.equal(run("sum.mlir").code, 0);
    assert.equal(run("sum.mlir").code, 0);
    const wrong = run("wrong.mlir");
    assert.equal(wrong.code, 1);
    assert.match(wrong.stdout, /0 passed, 1 failed/);
    assert.equal(run("sum.mlir").code, 0);
    assert.deepEqual(await Promise.all([runAsync("sum.mlir"), runAsync("sum.mlir"), runAsync("wrong.mlir")]), [0, 0, 1]);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the lender gives a client back out only after a clean command, never to two commands at once", async () => {
  const lender = clientLender();
  const first = await lender.borrow("interpreter", 2);
  const second = await lender.borrow("interpreter", 2);
  assert.notEqual(first, second);
  await lender.release(first, true);
  assert.equal(await lender.borrow("interpreter", 2), first);
  const other = await lender.borrow("interpreter", 4);
  assert.notEqual(other, first);
  await lender.release(first, false);
  await lender.release(second, false);
  await lender.release(other, true);
  const fresh = await lender.borrow("interpreter", 2);
  assert.ok(fresh !== first && fresh !== second);
  await lender.release(fresh, false);
  assert.equal(await lender.borrow("interpreter", 4), other);
  await other.close();
});

function clientIn(command: string[], socket: string, cwd: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(command[0]!, [...command.slice(1), socket, ...args], { cwd, encoding: "utf8", timeout: 30_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function clientAnswers(command: string[]): Promise<void> {
  const client = (socket: string, cwd: string, ...args: string[]) => clientIn(command, socket, cwd, ...args);
  const dir = tempFiles({ "sub/add.mlir": ADD });
  const socket = join(dir, "xlats.sock");
  const server = await startCliServer(socket);
  try {
    const sub = join(dir, "sub");
    const printed = client(socket, sub, "print", "add.mlir");
    assert.deepEqual(printed, xlatsProcess("print", join(sub, "add.mlir")));
    assert.equal(printed.code, 0);
    assert.match(printed.stdout, /stablehlo\.add/);
    // The server runs commands one after another and in turn: a run, then bad input (1) and bad usage (2).
    const ran = client(socket, sub, "run", "add.mlir", "--backend", "interpreter", "--arg", "dense<[1.5, -2.0]> : tensor<2xf32>");
    assert.deepEqual(ran, { code: 0, stdout: "dense<[3.000000e+00, -4.000000e+00]> : tensor<2xf32>\n", stderr: "" });
    const missing = client(socket, sub, "print", "missing.mlir");
    assert.deepEqual(missing, { code: 1, stdout: "", stderr: "error: cannot read missing.mlir: no such file or directory\n" });
    const unknown = client(socket, sub, "frobnicate");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: unknown command 'frobnicate'/);
  } finally {
    await server.close();
  }
  const closed = client(socket, dir, "print", "sub/add.mlir");
  assert.equal(closed.code, 2);
  assert.match(closed.stderr, /^cli_client: no answer from the xlats server at .*xlats\.sock/);
  rmSync(dir, { recursive: true, force: true });
}
