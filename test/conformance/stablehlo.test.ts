// StableHLO's interpreter tests on the interpreter (the specification) and the wasm
// backend (suite.ts; native and webgpu: stablehlo_native.test.ts,
// stablehlo_webgpu.test.ts), and every file's text through the parser and printer.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { EXPECTED_FAILURES } from "./expected_failures.js";
import { available, conformanceTest, mlirFiles, ROOT } from "./suite.js";

conformanceTest("interpreter");
conformanceTest("wasm");

test("conformance: every file parses and prints, and print(parse(print(x))) == print(x)", { skip: !available && "conformance data not found" }, () => {
  let chunks = 0;
  const problems: string[] = [];
  for (const file of mlirFiles(ROOT)) {
    const name = relative(ROOT, file);
    readFileSync(file, "utf8").split(/^\/\/ -----[ \t]*$/m).forEach((chunk, i) => {
      if (!/func\.func/.test(chunk)) return;
      chunks++;
      try {
        const first = printStableHlo(parseStableHlo(chunk, name));
        const second = printStableHlo(parseStableHlo(first, `${name} (printed)`));
        if (first !== second) problems.push(`${name}:${i}: print is not stable`);
      } catch (e) {
        if (!(`${name}:${i}` in EXPECTED_FAILURES)) {
          problems.push(`${name}:${i}: ${(e as Error).message.split("\n")[0]}`);
        }
      }
    });
  }
  assert.ok(chunks > 500, `expected the whole suite, found ${chunks} chunks`);
  assert.deepEqual(problems, []);
});
