// Running `xlats opt` in a test as the command runs it (parse, verify, passes, print),
// and reading one line of what it prints.

import assert from "node:assert/strict";
import { optCommand } from "../../../src/cli/opt.js";
import { registeredPasses } from "../../../src/cli/pass_registry.js";

/** Runs `xlats opt` on `text` with `flags`; the printed module, or throws with the diagnostics. */
export function opt(text: string, ...flags: string[]): string {
  const out: string[] = [];
  const err: string[] = [];
  const rc = optCommand(["input.mlir", ...flags], {
    readFile: () => text, isDirectory: () => false, listDirectory: () => [], joinPath: (a, b) => `${a}/${b}`,
    out: (l) => out.push(l), err: (l) => err.push(l),
  }, registeredPasses());
  if (rc !== 0) throw new Error(err.join("\n"));
  return out.join("\n");
}

/** The printed line holding `needle`, trimmed. */
export function line(printed: string, needle: string): string {
  const l = printed.split("\n").find((x) => x.includes(needle));
  assert.ok(l !== undefined, `no line with ${needle} in\n${printed}`);
  return l.trim();
}
