// The user documentation as the tests read it: README.md and every page of docs/ (not
// the generated API reference), and the fenced code blocks in them. How blocks are
// marked is described in docs/README.md ("Code blocks in these pages"):
//   ```ts            runs as an ES module against the built library
//   ```ts no-run     a fragment shown, not run
//   ```text output   the exact output of the ts block just before it
//   ```mlir / ```hlo parsed (StableHLO / HLO text); add no-check for a fragment
//   ```sh check      its `$ npx xlats ...` commands run and print the lines after them
//   ```sh / ```text  shell sessions and other text, not run
//   file=NAME        (any block) the block is file NAME in the directory where the
//                    page's ts blocks and checked sessions run
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** README.md and docs/*.md, as paths relative to the repository root. */
export function docFiles(): string[] {
  const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`);
  return ["README.md", ...pages];
}

export function readDoc(file: string): string {
  return readFileSync(join(ROOT, file), "utf8");
}

/** Every documentation file's text, one after another (for totals stated somewhere in them). */
export function documentation(): string {
  return docFiles().map(readDoc).join("\n");
}

export interface CodeBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's first word (`ts`, `sh`, ...). */
  readonly lang: string;
  /** The words after it (`no-run`, `output`, `no-check`). */
  readonly flags: readonly string[];
  readonly code: string;
  /** The ```text output block that follows this one, if any. */
  output?: string;
}

/** The fenced code blocks of one file, each ts block with the output block after it. */
export function codeBlocksOf(file: string): CodeBlock[] {
  const lines = readDoc(file).split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    const end = lines.findIndex((l, j) => j > i && l === "```");
    if (end < 0) throw new Error(`${file}:${i + 1}: a code fence is never closed`);
    const block: CodeBlock = {
      file, line: i + 1, lang: open[1]!, flags: open[2]!.split(/\s+/).filter((w) => w !== ""), code: `${lines.slice(i + 1, end).join("\n")}\n`,
    };
    const previous = blocks.at(-1);
    if (block.lang === "text" && block.flags.includes("output")) {
      if (previous?.lang !== "ts") throw new Error(`${file}:${i + 1}: an output block must follow a ts block`);
      previous.output = block.code;
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The code blocks of all the documentation. */
export function codeBlocks(): CodeBlock[] {
  return docFiles().flatMap(codeBlocksOf);
}

/** The runnable ts block containing `marker` (an error naming the marker if none does). */
export function tsBlock(marker: string): CodeBlock {
  const block = codeBlocks().find((b) => b.lang === "ts" && !b.flags.includes("no-run") && b.code.includes(marker));
  if (block === undefined) throw new Error(`no runnable ts block of the documentation contains ${JSON.stringify(marker)}`);
  return block;
}

/** The blocks of `file` marked file=NAME, by name: the files its examples run beside. */
export function filesOf(file: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const block of codeBlocksOf(file)) {
    for (const flag of block.flags) if (flag.startsWith("file=")) files[flag.slice("file=".length)] = block.code;
  }
  return files;
}
