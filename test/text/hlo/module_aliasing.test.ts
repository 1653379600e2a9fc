// The HloModule header's buffer donation attributes (input_output_alias, buffer_donor)
// as XLA writes them: parsed into the module config, printed back the same, and
// rejected with a position when they do not fit the entry computation.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { parseHlo, printHlo } from "../../../src/text/hlo/index.js";
import { ParseError } from "../../../src/index.js";

const header = (attrs: string): string => `HloModule m, entry_computation_layout={(f32[4]{0}, (f32[2]{0}, s32[3]{0}))->(f32[4]{0}, s32[3]{0})}${attrs}

ENTRY %main (a: f32[4], t: (f32[2], s32[3])) -> (f32[4], s32[3]) {
  %a = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(f32[4]{0} %a)
  %t = (f32[2]{0}, s32[3]{0}) parameter(1)
  %g = s32[3]{0} get-tuple-element((f32[2]{0}, s32[3]{0}) %t), index=1
  ROOT %r = (f32[4]{0}, s32[3]{0}) tuple(f32[4]{0} %n, s32[3]{0} %g)
}
`;

test("input_output_alias and buffer_donor parse into the module config and print back unchanged", () => {
  const text = header(", input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}, must-alias) }, buffer_donor={ (1, {0}) }");
  const m = parseHlo(text);
  assert.deepEqual(m.config.inputOutputAlias, [
    { output: [0], parameter: 0, parameterIndex: [], kind: "may-alias" },
    { output: [1], parameter: 1, parameterIndex: [1], kind: "must-alias" },
  ]);
  assert.deepEqual(m.config.bufferDonors, [{ parameter: 1, parameterIndex: [0] }]);
  assert.equal(printHlo(m), text);
  assert.equal(printHlo(parseHlo(printHlo(m))), text);
});

test("the alias kind defaults to may-alias, as in XLA's parser; spaces are free", () => {
  const m = parseHlo(header(", input_output_alias={{0}:(0,{})}"));
  assert.deepEqual(m.config.inputOutputAlias, [{ output: [0], parameter: 0, parameterIndex: [], kind: "may-alias" }]);
  assert.match(printHlo(m), /input_output_alias=\{ \{0\}: \(0, \{\}, may-alias\) \}/);
});

test("aliasing that does not fit the entry is a ParseError at the attribute", () => {
  const cases: [string, RegExp][] = [
    [", input_output_alias={ {0}: (2, {}) }", /parameter 2 does not exist/],
    [", input_output_alias={ {1}: (0, {}) }", /parameter is f32\[4\] and the result s32\[3\]/],
    [", input_output_alias={ {0}: (1, {5}) }", /shape index \{5\} does not exist/],
    [", input_output_alias={ {0}: (0, {}), {0}: (0, {}) }", /aliased twice/],
    [", input_output_alias={ {0}: (0, {}, maybe) }", /may-alias or must-alias/],
    [", buffer_donor={ (0, {0}) }", /shape index \{0\} does not exist/],
  ];
  for (const [attrs, reason] of cases) {
    assert.throws(() => parseHlo(header(attrs)), (e: unknown) => {
      assert.ok(e instanceof ParseError, String(e));
      assert.match(e.message, reason);
      assert.match(e.message, /:1:/);
      return true;
    });
  }
});
