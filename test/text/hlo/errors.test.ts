// Malformed HLO text: each case must give a ParseError at the right line and column.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { ParseError } from "../../../src/index.js";

interface Case {
  name: string;
  text: string;
  line: number;
  column: number;
  reason: RegExp;
}

const module = (body: string): string => `HloModule m\n\nENTRY %main {\n${body}\n}\n`;

const CASES: Case[] = [
  { name: "empty input", text: "", line: 1, column: 1, reason: /HloModule/ },
  { name: "no computations", text: "HloModule m\n", line: 2, column: 1, reason: /no computations/ },
  { name: "unknown element type", text: module("  ROOT %p = f33[2] parameter(0)"), line: 4, column: 13, reason: /unknown element type 'f33'/ },
  { name: "unknown opcode", text: module("  %p = f32[2] parameter(0)\n  ROOT %q = f32[2] frobnicate(%p)"), line: 5, column: 20, reason: /unknown opcode 'frobnicate'/ },
  { name: "undefined operand", text: module("  ROOT %q = f32[2] negate(%nope)"), line: 4, column: 27, reason: /unknown operand %nope/ },
  { name: "bad layout", text: module("  ROOT %p = f32[2,3]{0,0} parameter(0)"), line: 4, column: 13, reason: /not a permutation/ },
  { name: "layout of the wrong rank", text: module("  ROOT %p = f32[2,3]{0} parameter(0)"), line: 4, column: 21, reason: /1 entries for rank 2/ },
  { name: "constant too short", text: module("  ROOT %c = s32[3]{0} constant({1, 2})"), line: 4, column: 32, reason: /has 2 entries, expected 3/ },
  { name: "constant out of range", text: module("  ROOT %c = u8[] constant(256)"), line: 4, column: 27, reason: /256 does not fit in u8/ },
  { name: "pred constant", text: module("  ROOT %c = pred[] constant(2)"), line: 4, column: 29, reason: /pred value/ },
  { name: "unknown attribute", text: module("  ROOT %p = f32[] parameter(0), colour=red"), line: 4, column: 33, reason: /unknown attribute 'colour' for parameter/ },
  { name: "duplicate attribute", text: module("  ROOT %p = f32[] parameter(0), sharding={replicated}, sharding={replicated}"), line: 4, column: 56, reason: /given twice/ },
  { name: "duplicate name", text: module("  %p = f32[] parameter(0)\n  ROOT %p = f32[] parameter(1)"), line: 5, column: 8, reason: /used twice/ },
  { name: "missing parameter number", text: module("  %p = f32[] parameter(1)"), line: 3, column: 7, reason: /parameter numbers must be 0\.\.0; 0 is missing/ },
  { name: "unclosed computation", text: "HloModule m\nENTRY %main {\n  ROOT %p = f32[] parameter(0)\n", line: 4, column: 1, reason: /not closed/ },
  { name: "unterminated string", text: module('  ROOT %p = f32[] parameter(0), metadata={op_name="abc}'), line: 4, column: 51, reason: /unterminated string/ },
  { name: "unbalanced braces in an attribute", text: module("  ROOT %p = f32[] parameter(0), sharding={replicated"), line: 4, column: 42, reason: /unclosed '\{'/ },
  { name: "declared operand shape is wrong", text: module("  %p = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(s32[2] %p)"), line: 5, column: 27, reason: /operand %p has shape f32\[2\], not s32\[2\]/ },
  { name: "entry layout disagrees", text: "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\nENTRY %main {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n", line: 1, column: 14, reason: /parameter 0 f32\[3\]/ },
  { name: "signature disagrees", text: "HloModule m\nENTRY %main (p: f32[3]) -> f32[3] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n", line: 2, column: 14, reason: /signature of main/ },
  { name: "unknown module attribute", text: "HloModule m, frobnicate=2\nENTRY %main {\n  ROOT %p = f32[] parameter(0)\n}\n", line: 1, column: 14, reason: /module attribute .frobnicate./ },
  { name: "text after an instruction", text: module("  ROOT %p = f32[] parameter(0) junk"), line: 4, column: 32, reason: /expected ',' or the end of the line/ },
  { name: "unknown computation", text: module("  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), to_apply=%nowhere"), line: 5, column: 38, reason: /unknown computation %nowhere/ },
  { name: "two ROOTs", text: module("  ROOT %p = f32[] parameter(0)\n  ROOT %q = f32[] parameter(1)"), line: 5, column: 3, reason: /two ROOT/ },
  { name: "send without send-done", text: module("  %t = token[] parameter(0)\n  %d = f32[] parameter(1)\n  %s = (f32[], u32[], token[]) send(%d, %t), channel_id=1"), line: 6, column: 3, reason: /send %s has no send-done/ },
  { name: "deep nesting", text: module(`  ROOT %p = ${"(".repeat(5000)}f32[] parameter(0)`), line: 4, column: 214, reason: /nest too deeply/ },
  { name: "huge dimension", text: module("  ROOT %p = f32[99999999999999999999] parameter(0)"), line: 4, column: 17, reason: /too large/ },
];

for (const c of CASES) {
  test(`parse error: ${c.name}`, () => {
    assert.throws(() => parseHlo(c.text, "e.hlo"), (e: unknown) => {
      assert.ok(e instanceof ParseError, `expected ParseError, got ${String(e)}`);
      assert.match(e.reason, c.reason);
      assert.deepEqual([e.line, e.column], [c.line, c.column], e.message);
      assert.ok(e.message.includes("\n") && e.message.endsWith("^"), "message shows the line and a caret");
      return true;
    });
  });
}
