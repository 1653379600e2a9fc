// The op sharding rule registry against Shardy's own lit tests (read from ../shared):
// every `// CHECK: ... sdy.sharding_rule = ...` line of op_sharding_rule_registry.mlir
// must match, in order, the rule our registry gives the ops of its function, as
// FileCheck would match the printed module; the failures file's expected warning must
// be the warning we give. The rule text round-trips on sharding_rule_parse_print.mlir.
// Conservative mode and the verifier's messages are checked on rules worked out by hand
// from Shardy's definitions.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import type { HloModule, Instruction } from "../../src/ir/computation.js";
import { populateOpShardingRules } from "../../src/sdy/passes/populate_op_sharding_rules.js";
import { parseOpShardingRule, printOpShardingRule } from "../../src/text/mlir/sdy_rule_text.js";
import { verifyOpShardingRule } from "../../src/sdy/rule_verify.js";
import { opValues } from "../../src/sdy/rules/registry.js";

const SDY = join(process.cwd(), "..", "shared", "conformance", "shardy", "dialect", "sdy");
const REGISTRY = join(SDY, "transforms", "propagation", "test", "op_sharding_rule_registry.mlir");
const FAILURES = join(SDY, "transforms", "propagation", "test", "op_sharding_rule_registry_failures.mlir");
const PARSE_PRINT = join(SDY, "ir", "test", "sharding_rule_parse_print.mlir");
const available = existsSync(REGISTRY);

/** One `func.func` of a lit file, with the CHECK patterns inside it and its first line. */
interface FuncCase {
  readonly name: string;
  readonly text: string;
  readonly firstLine: number;
  readonly lines: readonly string[];
}

function funcCases(file: string): FuncCase[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: FuncCase[] = [];
  for (let s = 0; s < lines.length; s++) {
    const m = /^func\.func @([A-Za-z0-9_]+)/.exec(lines[s]!);
    if (m === null) continue;
    let e = s;
    while (lines[e] !== "}") e++;
    out.push({ name: m[1]!, text: lines.slice(s, e + 1).join("\n"), firstLine: s, lines: lines.slice(s, e + 1) });
  }
  return out;
}

function importFunc(fc: FuncCase): HloModule {
  return parseStableHlo(fc.text, "registry.mlir", fc.firstLine);
}

/** How the ops of function @name that have a rule print their attribute dictionary (the rule sorts last among the ops' attributes here). */
function ruleLines(module: HloModule, name: string): { inst: Instruction; line: string }[] {
  return module.getComputation(name)!.instructions.filter((i) => i.sdyShardingRule !== undefined)
    .map((inst) => ({ inst, line: `{sdy.sharding_rule = ${printOpShardingRule(inst.sdyShardingRule!)}}` }));
}

test("registry: every CHECKed rule of op_sharding_rule_registry.mlir matches Shardy's", { skip: !available && "shardy conformance data not found" }, () => {
  let checks = 0;
  let matched = 0;
  const failures: string[] = [];
  for (const fc of funcCases(REGISTRY)) {
    const patterns = fc.lines.filter((l) => /\/\/ CHECK:.*sharding_rule/.test(l)).map((l) => l.replace(/^.*\/\/ CHECK:\s*/, ""));
    const { module, warnings } = populateOpShardingRules(importFunc(fc));
    // The file runs with -verify-diagnostics and expects no warning.
    assert.deepEqual(warnings.map((w) => w.message), [], fc.name);
    const printed = ruleLines(module, fc.name);
    // FileCheck: each pattern matches a later line than the previous one.
    let next = 0;
    for (const pattern of patterns) {
      checks++;
      const at = printed.findIndex((p, i) => i >= next && p.line.includes(pattern));
      if (at < 0) {
        failures.push(`${fc.name}: no op has ${pattern}\n  ops have: ${printed.slice(next).map((p) => p.line).join("\n            ")}`);
        continue;
      }
      matched++;
      next = at + 1;
    }
    // `CHECK-NOT: sdy.sharding_rule` after an op: that op has no rule.
    if (fc.lines.some((l) => l.includes("CHECK-NOT: sdy.sharding_rule"))) {
      checks++;
      if (printed.length === 0) matched++;
      else failures.push(`${fc.name}: expected no rule, got ${printed.map((p) => p.line).join(", ")}`);
    }
  }
  console.log(`op_sharding_rule_registry.mlir: ${matched} of ${checks} checks match`);
  assert.deepEqual(failures, []);
  assert.equal(checks, 123);
});

test("registry: an unknown custom call warns as Shardy does, once", { skip: !existsSync(FAILURES) && "shardy conformance data not found" }, () => {
  const [fc] = funcCases(FAILURES);
  const { module, warnings } = populateOpShardingRules(importFunc(fc!));
  const expected = /expected-warning@\+1 \{\{(.*)\}\}/.exec(fc!.text)![1];
  assert.deepEqual(warnings.map((w) => w.message), [expected]);
  assert.equal(warnings[0]!.inst.opcode, "customCall");
  assert.deepEqual(ruleLines(module, fc!.name), []);
});

test("rule text: sharding_rule_parse_print.mlir round-trips to its CHECK lines", { skip: !existsSync(PARSE_PRINT) && "shardy conformance data not found" }, () => {
  const lines = readFileSync(PARSE_PRINT, "utf8").split("\n");
  let cases = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = /sdy\.sharding_rule = (#sdy\.op_sharding_rule<.*>)\} :/.exec(lines[i]!);
    if (m === null || lines[i]!.includes("//")) continue;
    // The CHECK (and CHECK-SAME) lines just above this op, joined.
    let j = i - 1;
    while (/\/\/ CHECK-SAME:/.test(lines[j]!)) j--;
    const pieces = lines.slice(j, i).map((l) => l.replace(/^.*\/\/ CHECK(-SAME)?:\s*/, ""));
    // The op's attribute dictionary, then its type signature.
    const printed = `{sdy.sharding_rule = ${printOpShardingRule(parseOpShardingRule(m[1]!))}} : `;
    // FileCheck: CHECK-SAME pieces match further along the same line.
    let at = 0;
    for (const piece of pieces) {
      const found = printed.indexOf(piece, at);
      assert.ok(found >= 0, `line ${i + 1}:\n  printed  ${printed}\n  expected ${piece}`);
      at = found + piece.length;
    }
    cases++;
  }
  assert.equal(cases, 8);
  // Every rule there is valid on its op.
  let verified = 0;
  for (const c of parseStableHlo(lines.join("\n"), PARSE_PRINT).computations) {
    for (const inst of c.instructions) {
      if (inst.sdyShardingRule === undefined) continue;
      const { operands, results } = opValues(inst);
      assert.equal(verifyOpShardingRule(inst.sdyShardingRule, operands, results), undefined, inst.name);
      verified++;
    }
  }
  assert.equal(verified, 8);
});
