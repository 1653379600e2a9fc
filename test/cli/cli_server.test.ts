// tools/cli_server.ts and tools/cli_client.ts, which Shardy's lit tests use in the place
// of `xlats`: the client prints what the command printed and exits with its code, as
// `xlats` itself does (compared with a run of the command), its relative paths taken
// from its own working directory; a closed server is said, with exit code 2.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { startCliServer } from "../../tools/cli_server.js";
import { tempFiles, xlatsProcess } from "./helpers.js";

// dist/test/cli/cli_server.test.js → dist/tools/cli_client.js
const CLIENT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tools", "cli_client.js");

const ADD = `func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
`;

function client(socket: string, cwd: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLIENT, socket, ...args], { cwd, encoding: "utf8", timeout: 30_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test("the client answers as xlats does: output, errors and exit codes; relative paths from the client's directory", async () => {
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
});
