// What every `xlats` command works on: an injected CliIo (files and output, so the
// logic is independent of Node) and CliError for bad calls and bad input.

import { XlaError } from "../types/errors.js";
import type { Client } from "../runtime/client.js";

export interface CliIo {
  /** The file's text; throws CliError when it cannot be read. */
  readFile(path: string): string;
  /** The file's bytes (.npy inputs); absent where the caller gives no file system. */
  readBytes?(path: string): Uint8Array;
  isDirectory(path: string): boolean;
  /** Entries (names, not paths) of a directory. */
  listDirectory(path: string): string[];
  joinPath(dir: string, name: string): string;
  /** Writes (replaces) a file; throws CliError when it cannot. Absent where the caller gives no file system to write to. */
  writeFile?(path: string, text: string): void;
  /** Writes (replaces) a file with bytes (.npz outputs); throws CliError when it cannot. */
  writeBytes?(path: string, bytes: Uint8Array): void;
  out(line: string): void;
  err(line: string): void;
  /** Whether `out` goes to a terminal that wants colors (a TTY, NO_COLOR unset); absent: no colors. */
  readonly colors?: boolean;
  /** Whether `err` goes to a terminal: progress notes (the native backend's first build) are written there, or with --verbose. */
  readonly errIsTerminal?: boolean;
  /**
   * The time (as Date.now()) at which a supervising process stops this one: `run
   * --timeout` then takes it as its deadline instead of starting its own clock, so the
   * run's own DeadlineError comes before the supervisor has to stop it.
   */
  readonly deadline?: number;
  /**
   * Device clients lent by a process that runs many commands (tools/cli_server.ts):
   * `xlats test` runs its parallel programs on a client from here instead of starting
   * one (16 device workers, each loading the library: most of a small sharded case's
   * CPU) and closing it. Absent: the command starts and closes its own.
   */
  readonly clients?: ClientLender;
}

/** Lends device clients: `borrow` gives one of `deviceCount` devices on `backend`; the borrower gives it back with `release`, saying whether it may serve another command. */
export interface ClientLender {
  borrow(backend: string, deviceCount: number): Promise<Client>;
  release(client: Client, reusable: boolean): Promise<void>;
}

/** Reports a command's error on `io.err` and gives its exit code: a CliError's own, 1 for an XlaError (bad input) or anything else (an internal error). */
export function reportError(e: unknown, io: CliIo): number {
  if (e instanceof CliError) {
    io.err(`error: ${e.message}`);
    return e.exitCode;
  }
  if (e instanceof XlaError) {
    io.err(`error: ${e.message}`);
    return 1;
  }
  io.err(`error: internal error: ${e instanceof Error ? e.message : String(e)}`);
  return 1;
}

/** A problem with how the command was called (exit code 2) or with its input (exit code 1). */
export class CliError extends Error {
  override name = "CliError";
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
