// Node's files behind the CliIo interface (cli.ts): the `xlats` command's (main.ts), and
// that of a process running many commands for other processes (tools/cli_server.ts,
// whose callers each have a working directory of their own).

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError, type CliIo } from "./io.js";

function describe(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === "ENOENT") return "no such file or directory";
  if (code === "EISDIR") return "is a directory";
  if (code === "EACCES") return "permission denied";
  return e instanceof Error ? e.message : String(e);
}

/** The file side of a CliIo: relative paths are taken from `cwd` when given (else from this process's); messages name a path as it was given. */
export type NodeFiles = Pick<CliIo, "readFile" | "isDirectory" | "listDirectory" | "joinPath"> & Required<Pick<CliIo, "readBytes" | "writeFile" | "writeBytes">>;

export function nodeFiles(cwd?: string): NodeFiles {
  const at = cwd === undefined ? (path: string): string => path : (path: string): string => resolve(cwd, path);
  return {
    readFile(path) {
      try {
        return readFileSync(at(path), "utf8");
      } catch (e) {
        throw new CliError(`cannot read ${path}: ${describe(e)}`);
      }
    },
    readBytes(path) {
      try {
        return readFileSync(at(path));
      } catch (e) {
        throw new CliError(`cannot read ${path}: ${describe(e)}`);
      }
    },
    isDirectory(path) {
      try {
        return statSync(at(path)).isDirectory();
      } catch {
        return false;
      }
    },
    listDirectory(path) {
      try {
        return readdirSync(at(path));
      } catch (e) {
        throw new CliError(`cannot list ${path}: ${describe(e)}`);
      }
    },
    joinPath: join,
    writeFile(path, text) {
      try {
        writeFileSync(at(path), text);
      } catch (e) {
        throw new CliError(`cannot write ${path}: ${describe(e)}`);
      }
    },
    writeBytes(path, bytes) {
      try {
        writeFileSync(at(path), bytes);
      } catch (e) {
        throw new CliError(`cannot write ${path}: ${describe(e)}`);
      }
    },
  };
}

/** The `xlats` command's CliIo: this process's files, stdout and stderr. */
export const nodeIo: CliIo = {
  ...nodeFiles(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  // https://no-color.org: any non-empty NO_COLOR turns colors off.
  colors: process.stdout.isTTY === true && (process.env["NO_COLOR"] ?? "") === "",
  errIsTerminal: process.stderr.isTTY === true,
};
