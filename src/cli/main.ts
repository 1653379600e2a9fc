#!/usr/bin/env node
// Entry point of the `xlats` command: Node's files and streams behind the CliIo
// adapter, then the exit code.

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CliError, runCli, type CliIo } from "./cli.js";
import { setDeviceLimit } from "../types/resource.js";

function describe(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === "ENOENT") return "no such file or directory";
  if (code === "EISDIR") return "is a directory";
  if (code === "EACCES") return "permission denied";
  return e instanceof Error ? e.message : String(e);
}

const nodeIo: CliIo = {
  readFile(path) {
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new CliError(`cannot read ${path}: ${describe(e)}`);
    }
  },
  readBytes(path) {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new CliError(`cannot read ${path}: ${describe(e)}`);
    }
  },
  isDirectory(path) {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  },
  listDirectory(path) {
    try {
      return readdirSync(path);
    } catch (e) {
      throw new CliError(`cannot list ${path}: ${describe(e)}`);
    }
  },
  joinPath: join,
  writeFile(path, text) {
    try {
      writeFileSync(path, text);
    } catch (e) {
      throw new CliError(`cannot write ${path}: ${describe(e)}`);
    }
  },
  writeBytes(path, bytes) {
    try {
      writeFileSync(path, bytes);
    } catch (e) {
      throw new CliError(`cannot write ${path}: ${describe(e)}`);
    }
  },
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  // https://no-color.org: any non-empty NO_COLOR turns colors off.
  colors: process.stdout.isTTY === true && (process.env["NO_COLOR"] ?? "") === "",
};

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

process.exitCode = await runCli(process.argv.slice(2), nodeIo);
