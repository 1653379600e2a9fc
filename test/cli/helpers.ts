// The built CLI on files written to a fresh temporary directory: `xlats(...)` runs a
// command as `xlats` does, through tools/cli_server.ts (one server, a worker thread of the
// test's process, which loads the CLI's modules once; each call starts its client, the C
// one of tools/cli_client_c.ts or else tools/cli_client.ts, as Shardy's lit tests do), and `xlatsProcess(...)` spawns the command
// itself. A fresh `xlats` spends most of a small command's CPU loading its modules (0.6-1 s
// for a `run`), which the CLI tests paid at every call; the server answers with the same
// runCli and file access (tools/cli_server.ts), which test/cli/cli_server.test.ts compares
// with the spawned command. What only the process does (src/cli/main.ts: `run --timeout`'s
// supervision, $XLATS_MAX_DEVICES, a closed stdout pipe) is tested on the spawned command:
// `xlats` itself spawns it for a supervised run and for no arguments at all (the client's
// own usage line would answer that).

import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCliServerSync } from "../../tools/cli_server.js";
import { cliClientCommand } from "../../tools/cli_client_c.js";
import { runTimeout } from "../../src/cli/cli.js";

// dist/test/cli/helpers.js → dist/src/cli/main.js
export const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "cli", "main.js");

/**
 * How long one command may take before it is killed (and the result says so). Generous: the
 * tests' commands take well under a second alone, but CI's machines are shared, and at a load
 * of 15 two of them once took over 30 s; a hang still ends, with this named in stderr.
 */
const CALL_LIMIT_MS = 120_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The client's command line for the server started at the first call (which ends with this process). */
let client: string[] | undefined;

function clientCommand(): string[] {
  if (client === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "xlats-cli-server-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    startCliServerSync(join(dir, "xlats.sock"));
    client = cliClientCommand(dir, join(dir, "xlats.sock"));
  }
  return client;
}

/** `xlats ARGS...` as the command answers it: run by this process's server, or spawned where main.ts acts (above). */
export function xlats(...args: string[]): CliResult {
  if (args.length === 0 || runTimeout(args) !== undefined) return xlatsProcess(...args);
  const [program, ...words] = clientCommand();
  return answer(spawnSync(program!, [...words, ...args], { encoding: "utf8", timeout: CALL_LIMIT_MS }), args);
}

/** `xlats ARGS...` spawned: for what src/cli/main.ts does around the command. */
export function xlatsProcess(...args: string[]): CliResult {
  return answer(spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: CALL_LIMIT_MS }), args);
}

/** A finished call's result; one killed at CALL_LIMIT_MS says so in its stderr, so a failing test names the cause. */
function answer(r: SpawnSyncReturns<string>, args: readonly string[]): CliResult {
  const killed = r.error !== undefined || r.signal !== null;
  const why = killed ? `\n[test helper: \`xlats ${args.join(" ")}\` ${r.error?.message ?? `killed by ${r.signal}`} (limit ${CALL_LIMIT_MS / 1000} s)]` : "";
  return { code: r.status ?? -1, stdout: r.stdout ?? "", stderr: (r.stderr ?? "") + why };
}

export function tempFiles(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "xlats-cli-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}
