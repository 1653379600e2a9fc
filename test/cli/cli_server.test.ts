// tools/cli_server.ts and its clients, tools/cli_client.ts (Node) and the C one of
// tools/cli_client_c.ts, which Shardy's lit tests use in the place of `xlats`: each client
// prints what the command printed and exits with its code, as `xlats` itself does
// (compared with a run of the command), its relative paths taken from its own working
// directory; a closed server is said, with exit code 2.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { startCliServer } from "../../tools/cli_server.js";
import { buildCClient } from "../../tools/cli_client_c.js";
import { tempFiles, xlatsProcess } from "./helpers.js";

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
