// Removes compiled files in dist/ whose TypeScript source is gone, so an incremental build
// (tsc keeps dist/ between runs) never leaves a deleted test or module behind to be run or
// imported. Plain JavaScript: it runs before anything is compiled.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const COMPILED = /\.(js|js\.map|d\.ts|d\.ts\.map)$/;

function prune(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const match = COMPILED.exec(name);
    if (!match) continue;
    const stem = join(root, relative(dist, dir), name.slice(0, -match[0].length));
    if (!existsSync(`${stem}.ts`) && !existsSync(`${stem}.d.ts`)) rmSync(path);
  }
}

for (const top of ["src", "test", "examples", "bench", "tools"]) {
  const dir = join(dist, top);
  if (existsSync(dir)) prune(dir);
}
