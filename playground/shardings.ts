// Draws a program's shardings in the page with `xlats shardings`' own code (an in-memory
// CliIo). A module the page imports and the run worker does not: the worker has every
// Shardy pass already (in the package's entry), while the page loads the propagation
// passes only when they are asked for (shardingsCommand imports them then, through
// src/cli/sdy_pass_modules.ts), so that its first load leaves them out.

import { shardingsCommand } from "../dist/src/cli/shardings.js";
import { FILE } from "./check.js";

/**
 * `xlats shardings --html` on the text: a self-contained HTML page (none when no tensor has
 * a sharding), or the command's errors. What the command prints for a terminal ("wrote 2
 * figures to ...") is not for the page and is dropped.
 */
export async function drawShardings(text: string, propagate: boolean): Promise<{ readonly html?: string; readonly errors: string }> {
  let html: string | undefined;
  const errors: string[] = [];
  const status = await shardingsCommand({ file: FILE, propagate, html: "shardings.html" }, {
    readFile: () => text,
    isDirectory: () => false,
    listDirectory: () => [],
    joinPath: (dir, name) => `${dir}/${name}`,
    writeFile: (_path, contents) => { html = contents; },
    out: () => {},
    err: (line) => errors.push(line),
  });
  const drawn = status === 0 && html !== undefined && !html.includes("No tensor in this selection has a sharding.");
  return { ...(drawn ? { html } : {}), errors: errors.join("\n") };
}
