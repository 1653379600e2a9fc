// `node tools/transpile.mjs FILE...`: the library (src/) and the given files compiled to
// dist/ without type checking, each file on its own (Oxc's transform, through Vite), for
// commands that only need to run code: `npm run example`. A fresh clone builds in a
// second or two where `tsc` type-checks the whole tree for about 40 s of CPU; `npm run
// build` (and CI) still type-check everything. Only files newer than their output are
// compiled again. Plain JavaScript: it runs before anything is compiled.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { transformWithOxc } from "vite";

const root = new URL("..", import.meta.url).pathname;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const files = [...sources(join(root, "src")), ...process.argv.slice(2).map((f) => join(root, f))];
let compiled = 0;
for (const file of files) {
  const rel = relative(root, file);
  const out = join(root, "dist", rel.replace(/\.ts$/, ".js"));
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(file).mtimeMs) continue;
  let result;
  try {
    result = await transformWithOxc(readFileSync(file, "utf8"), file, { target: "es2022", sourcemap: true });
  } catch (e) {
    process.stderr.write(`${rel}: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${result.code}\n//# sourceMappingURL=${basename(out)}.map\n`);
  writeFileSync(`${out}.map`, JSON.stringify({ ...result.map, sources: [relative(dirname(out), file)] }));
  compiled++;
}
process.stdout.write(`transpiled ${compiled} of ${files.length} files into dist/ (no type check: npm run build does that)\n`);
