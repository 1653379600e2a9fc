#!/usr/bin/env node
// Entry point of the `xlats` command: Node's files and streams behind the CliIo
// adapter (node_io.ts), then the exit code.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeIo } from "./node_io.js";
// cli.ts is light: it imports each command's module when that command runs.
import { runCli, runTimeout } from "./cli.js";
import { setDeviceLimit } from "../types/resource.js";

// A reader that stops early (`xlats test DIR | head`) closes the pipe: stop quietly, as
// Unix tools do, instead of dying on the failed write with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });
}

// $XLATS_MAX_DEVICES raises (or lowers) the device limit (types/resource.ts) on a machine that can take it.
const maxDevices = process.env["XLATS_MAX_DEVICES"]?.trim();
if (maxDevices !== undefined && maxDevices !== "") {
  const n = Number(maxDevices);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`xlats: XLATS_MAX_DEVICES must be a positive whole number, got '${maxDevices}'\n`);
    process.exit(2);
  }
  setDeviceLimit(n);
}

/** The environment variable that tells a supervised child run its deadline (Date.now() time). */
const DEADLINE_VARIABLE = "XLATS_RUN_DEADLINE";
/** How long past its deadline a supervised run may take to stop itself (a loop's DeadlineError) before it is killed. */
const GRACE_MS = 1000;

/**
 * `run --timeout`: the run goes on in a child process, and this one kills it if it is
 * still running GRACE_MS past the deadline. The run's own deadline checks stop loops and
 * calls with a DeadlineError, but nothing inside a process can stop one long kernel (a
 * worker thread in native code cannot even be terminated: the process waits for it to
 * return before it exits), while a killed process stops at once, whatever it runs.
 */
function supervise(argv: readonly string[], seconds: number): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...argv], {
    stdio: ["inherit", "inherit", "pipe"], env: { ...process.env, [DEADLINE_VARIABLE]: String(deadline) },
  });
  // The child's errors pass through; one it reported itself (its own deadline check
  // fired, and a loaded machine slowed its exit past the grace) is not said twice.
  let childReported = false;
  child.stderr?.on("data", (chunk: Buffer) => {
    if (/^error: /m.test(chunk.toString("utf8"))) childReported = true;
    process.stderr.write(chunk);
  });
  // Stopping the supervisor stops the run too.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      child.kill("SIGKILL");
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
  return new Promise((resolve) => {
    let stopped = false;
    const timer = setTimeout(() => {
      stopped = true;
      child.kill("SIGKILL");
      if (!childReported) process.stderr.write(`error: run: still running ${GRACE_MS / 1000} s past its --timeout of ${seconds} s: stopped\n`);
      resolve(1);
    }, deadline + GRACE_MS - Date.now());
    child.on("error", (e) => {
      clearTimeout(timer);
      process.stderr.write(`error: run: cannot start the supervised run: ${e.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal !== null && !stopped) process.stderr.write(`error: run: the run ended with signal ${signal}\n`);
      resolve(code ?? 1);
    });
  });
}

const argv = process.argv.slice(2);
const inheritedText = process.env[DEADLINE_VARIABLE]?.trim();
const inherited = inheritedText ? Number(inheritedText) : Number.NaN;
const timeout = runTimeout(argv);
process.exitCode = Number.isFinite(inherited)
  ? await runCli(argv, { ...nodeIo, deadline: inherited })
  : timeout !== undefined ? await supervise(argv, timeout) : await runCli(argv, nodeIo);
