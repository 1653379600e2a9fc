// Running `xlats opt` in a test as the command runs it (parse, verify, passes, print),
// and reading one line of what it prints.

import assert from "node:assert/strict";
import { optCommand } from "../../../src/cli/opt.js";
import { registeredPasses } from "../../../src/cli/pass_registry.js";

/** Runs `xlats opt` on `text` with `flags`: its exit code, what it printed and its diagnostics. */
export function runOpt(text: string, ...flags: string[]): { rc: number; out: string; err: string } {
  const out: string[] = [];
  const err: string[] = [];
  const rc = optCommand(["input.mlir", ...flags], {
    readFile: () => text, isDirectory: () => false, listDirectory: () => [], joinPath: (a, b) => `${a}/${b}`,
    out: (l) => out.push(l), err: (l) => err.push(l),
  }, registeredPasses());
  return { rc, out: out.join("\n"), err: err.join("\n") };
}

/** Runs `xlats opt` on `text` with `flags`; the printed module, or throws with the diagnostics. */
export function opt(text: string, ...flags: string[]): string {
  const { rc, out, err } = runOpt(text, ...flags);
  if (rc !== 0) throw new Error(err);
  return out;
}

/** The printed line holding `needle`, trimmed. */
export function line(printed: string, needle: string): string {
  const l = printed.split("\n").find((x) => x.includes(needle));
  assert.ok(l !== undefined, `no line with ${needle} in\n${printed}`);
  return l.trim();
}
