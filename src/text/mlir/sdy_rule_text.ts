// The MLIR text of an op sharding rule, `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k])
// {i=8, j=32, k=16} reduction={j}>`, parsed and printed as Shardy does. Factor k is
// written `i`..`z` for k = 0..17 and `z_<k-17>` beyond; a dimension mapped to several
// factors writes their symbols back to back, major to minor (`ij`, `z_8z_9`).
// Parsing checks only the syntax (factor sizes must be listed as `i`, `j`, ... in
// order); the rule's constraints are checked by verifyOpShardingRule (rule_verify.ts).

import { Cursor } from "./cursor.js";
import type { DimMapping, OpShardingRule, TensorMapping } from "../../sharding/model.js";

/** Index of the last factor written with one letter (`z`); later ones are `z_1`, `z_2`, ... */
const START_AT_Z = "z".charCodeAt(0) - "i".charCodeAt(0);

/** The symbol of factor `index`: `i`..`z`, then `z_1`, `z_2`, ... */
export function factorSymbol(index: number): string {
  return index <= START_AT_Z ? String.fromCharCode("i".charCodeAt(0) + index) : `z_${index - START_AT_Z}`;
}

const printDim = (dim: DimMapping): string => dim.map(factorSymbol).join("");
const printTensor = (t: TensorMapping): string => `[${t.map(printDim).join(", ")}]`;

/** `#sdy.op_sharding_rule<...>` exactly as Shardy prints it. */
export function printOpShardingRule(rule: OpShardingRule): string {
  let out = `#sdy.op_sharding_rule<(${rule.operandMappings.map(printTensor).join(", ")})->(${rule.resultMappings.map(printTensor).join(", ")})`;
  if (rule.factorSizes.length > 0) out += ` {${rule.factorSizes.map((size, i) => `${factorSymbol(i)}=${size}`).join(", ")}}`;
  const special: [string, readonly number[]][] = [
    ["reduction", rule.reductionFactors], ["need_replication", rule.needReplicationFactors],
    ["permutation", rule.permutationFactors], ["blocked_propagation", rule.blockedPropagationFactors],
  ];
  for (const [keyword, factors] of special) {
    if (factors.length > 0) out += ` ${keyword}={${factors.map(factorSymbol).join(", ")}}`;
  }
  if (rule.isCustomRule) out += ", custom";
  return `${out}>`;
}

/**
 * Parses `#sdy.op_sharding_rule<...>` (or the body `<...>` alone); a ParseError with
 * line and column for any mistake. `fileName` and `lineOffset` place the text in its file.
 */
export function parseOpShardingRule(text: string, fileName = "<sdy>", lineOffset = 0): OpShardingRule {
  const c = new Cursor(text, fileName, lineOffset);
  const rule = readOpShardingRule(c);
  if (!c.atEnd()) throw c.error(`unexpected ${c.describeNext()} after the sharding rule`);
  return rule;
}

/** Reads one rule at the cursor (the `#sdy.op_sharding_rule` prefix is optional). */
export function readOpShardingRule(c: Cursor): OpShardingRule {
  if (c.lookingAt("#sdy.op_sharding_rule")) c.pos += "#sdy.op_sharding_rule".length;
  c.expect("<");
  const operandMappings = tensorMappings(c);
  c.expect("->");
  const resultMappings = tensorMappings(c);
  const factorSizes = c.peek() === "{" ? factorSizeList(c) : [];
  const lists = {
    reduction: [] as number[], need_replication: [] as number[], permutation: [] as number[], blocked_propagation: [] as number[],
  };
  // Each list is optional, in this order (Shardy's assembly format).
  for (const keyword of ["reduction", "need_replication", "permutation", "blocked_propagation"] as const) {
    if (!c.accept(keyword)) continue;
    c.expect("=");
    lists[keyword] = factorList(c);
  }
  let isCustomRule = false;
  if (c.accept(",")) {
    c.expect("custom");
    isCustomRule = true;
  }
  c.expect(">");
  return {
    factorSizes, operandMappings, resultMappings, reductionFactors: lists.reduction,
    needReplicationFactors: lists.need_replication, permutationFactors: lists.permutation,
    blockedPropagationFactors: lists.blocked_propagation, isCustomRule,
  };
}

/** `([i, j], [])`: one tensor mapping per operand or result. */
function tensorMappings(c: Cursor): TensorMapping[] {
  c.expect("(");
  const out: TensorMapping[] = [];
  if (c.accept(")")) return out;
  do out.push(tensorMapping(c)); while (c.accept(","));
  c.expect(")");
  return out;
}

/** `[i, jk]`; a dimension with no symbol (`[i, ]`) parses as an empty mapping, which verification rejects. */
function tensorMapping(c: Cursor): TensorMapping {
  c.expect("[");
  const dims: DimMapping[] = [];
  if (c.accept("]")) return dims;
  do dims.push(dimMapping(c)); while (c.accept(","));
  c.expect("]");
  return dims;
}

function dimMapping(c: Cursor): DimMapping {
  const at = c.pos;
  const word = keyword(c);
  if (word === undefined) return [];
  return symbolIndices(c, word, at);
}

/** A bare keyword (letters, digits, `_`), as MLIR's lexer reads it. */
function keyword(c: Cursor): string | undefined {
  c.skipWs();
  const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(c.text.slice(c.pos, c.pos + 4096));
  if (m === null) return undefined;
  c.pos += m[0].length;
  return m[0];
}

/** The factor indices a run of symbols names: `ij` -> [0, 1], `z_2z_1` -> [19, 18]. */
function symbolIndices(c: Cursor, word: string, at: number): number[] {
  const out: number[] = [];
  let rest = word;
  while (rest.length > 0) {
    if (rest.startsWith("z_")) {
      const m = /^z_([0-9]*)/.exec(rest)!;
      const digits = m[1]!;
      if (digits.length === 0) throw c.error(`expecting integer after 'z_'. Received: '${rest}'`, at);
      if (digits.startsWith("0")) throw c.error(`expecting positive integer without leading zeros. Received: '${digits}'`, at);
      const n = Number(digits);
      if (!Number.isSafeInteger(n)) throw c.error(`factor symbol index ${digits} is out of range`, at);
      out.push(n + START_AT_Z);
      rest = rest.slice(m[0].length);
      continue;
    }
    const ch = rest[0]!;
    if (ch < "i" || ch > "z") throw c.error(`expecting symbol from 'i' to 'z'. Received: '${ch}'`, at);
    out.push(ch.charCodeAt(0) - "i".charCodeAt(0));
    rest = rest.slice(1);
  }
  return out;
}

/** `{i=8, j=32}`: the symbols must be `i`, `j`, `k`, ... in order. */
function factorSizeList(c: Cursor): number[] {
  c.expect("{");
  const sizes: number[] = [];
  if (c.accept("}")) return sizes;
  do {
    const at = c.pos;
    const word = keyword(c);
    if (word === undefined) throw c.error(`expected a factor symbol, found ${c.describeNext()}`);
    const indices = symbolIndices(c, word, at);
    if (indices.length !== 1) throw c.error(`expecting single factor symbol: ${word.slice(factorSymbol(indices[0]!).length)}`, at);
    if (indices[0] !== sizes.length) {
      throw c.error("expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). " +
        `Expecting factor index symbol '${factorSymbol(sizes.length)}', received: '${factorSymbol(indices[0]!)}'`, at);
    }
    c.expect("=");
    sizes.push(c.integer("a factor size"));
  } while (c.accept(","));
  c.expect("}");
  return sizes;
}

/** `{j, k}`: a list of special factors. */
function factorList(c: Cursor): number[] {
  c.expect("{");
  const out: number[] = [];
  if (c.accept("}")) return out;
  do {
    const at = c.pos;
    const word = keyword(c);
    if (word === undefined) throw c.error(`expected a factor symbol, found ${c.describeNext()}`);
    const indices = symbolIndices(c, word, at);
    if (indices.length !== 1) throw c.error(`expecting single factor symbol: ${word}`, at);
    out.push(indices[0]!);
  } while (c.accept(","));
  c.expect("}");
  return out;
}
