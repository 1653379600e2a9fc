// The text forms of Shardy's attributes (src/sdy/attr_text.ts): the examples of seed
// 002 and the forms Shardy prints (tensor_sharding_parse_print.mlir's CHECK lines) parse
// into the typed model and print back canonically, as Shardy does.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  parseAllToAllParams, parseAxesPerDim, parseMesh, parseSdyAttribute, parseTensorSharding, printAllToAllParams, printAxesPerDim,
  printMesh, printSdyAttribute, printTensorShardingBody,
} from "../../src/text/mlir/sdy_attr_text.js";
import { Cursor } from "../../src/text/mlir/cursor.js";
import { available, literalChecks, readLit } from "./lit.js";

const at = (text: string): Cursor => new Cursor(text, "attr");
const roundTrip = (text: string): string => printSdyAttribute(parseSdyAttribute(at(text)));

test("seed 002's meshes: named axes, explicit device order, the maximal and the empty mesh", () => {
  const mesh = parseMesh(at('<["a"=3, "b"=2], device_ids=[0, 2, 4, 1, 3, 5]>'));
  assert.deepEqual(mesh, { axes: [{ name: "a", size: 3 }, { name: "b", size: 2 }], deviceIds: [0, 2, 4, 1, 3, 5] });
  assert.equal(printMesh(mesh), '<["a"=3, "b"=2], device_ids=[0, 2, 4, 1, 3, 5]>');
  assert.deepEqual(parseMesh(at("<[], device_ids=[3]>")), { axes: [], deviceIds: [3] });
  assert.deepEqual(parseMesh(at("<[]>")), { axes: [] });
  // Device ids equal to iota(product(axes)) are dropped, as Shardy's builder does.
  assert.equal(printMesh(parseMesh(at('<["x"=2], device_ids=[0, 1]>'))), '<["x"=2]>');
});

test("seed 002's shardings: open dimensions, priorities, sub-axes, replicated and unreduced axes", () => {
  const s = parseTensorSharding(at('<@mesh, [{"a", ?}p0, {}, {"c":(1)2, "b"}p2], replicated={"d"}, unreduced=max{"e"}>'));
  assert.deepEqual(s, {
    meshOrRef: "mesh",
    dimShardings: [
      { axes: [{ name: "a" }], isClosed: false, priority: 0 },
      { axes: [], isClosed: true },
      { axes: [{ name: "c", subAxis: { preSize: 1, size: 2 } }, { name: "b" }], isClosed: true, priority: 2 },
    ],
    replicatedAxes: [{ name: "d" }], unreducedAxes: [{ name: "e" }], reductionOp: "max",
  });
  assert.equal(printTensorShardingBody(s), '<@mesh, [{"a", ?}p0, {}, {"c":(1)2, "b"}p2], replicated={"d"}, unreduced=max{"e"}>');
  // `{?}` never prints as `{, ?}`; sum (the default reduction) is not written.
  assert.equal(roundTrip('#sdy.sharding<@m, [{?}, {"x"}], unreduced=sum{"y"}>'), '#sdy.sharding<@m, [{?}, {"x"}], unreduced={"y"}>');
  assert.equal(roundTrip('#sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>'), '#sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>');
  // Per-value lists take their elements with or without the #sdy.sharding prefix (Shardy's export tests write both).
  assert.equal(roundTrip('#sdy.sharding_per_value<[#sdy.sharding<@m, []>, <@m, [{"x"}]>]>'), '#sdy.sharding_per_value<[<@m, []>, <@m, [{"x"}]>]>');
});

test("seed 002's collective operands: axes per dimension and all-to-all parameters", () => {
  const axes = parseAxesPerDim(at('[{"b", "c"}, {}, {"d"}]'));
  assert.deepEqual(axes, [[{ name: "b" }, { name: "c" }], [], [{ name: "d" }]]);
  assert.equal(printAxesPerDim(axes), '[{"b", "c"}, {}, {"d"}]');
  const params = parseAllToAllParams(at('[{"b"}: 0->2, {"c"}: 1->3]'));
  assert.deepEqual(params, [{ axes: [{ name: "b" }], srcDim: 0, tgtDim: 2 }, { axes: [{ name: "c" }], srcDim: 1, tgtDim: 3 }]);
  assert.equal(printAllToAllParams(params), '[{"b"}: 0->2, {"c"}: 1->3]');
});

test("manual axes, propagation edges and the generic #sdy<...> spelling", () => {
  assert.equal(roundTrip('#sdy<manual_axes{"a", "b"}>'), '#sdy<manual_axes{"a", "b"}>');
  assert.equal(roundTrip("#sdy<propagation_direction BACKWARD>"), "#sdy<propagation_direction BACKWARD>");
  // edge_sharding_parse_print.mlir: the input and Shardy's printed form.
  assert.equal(
    roundTrip('#sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0, result-0]}]}, {step-12345 = [{"x" = result-0 -> [operand-0]}]}]>'),
    '#sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0, result-0]}]}, {step-12345 = [{"x" = result-0 -> [operand-0]}]}]>');
  assert.throws(() => parseSdyAttribute(at('#sdy.propagation_edges<[{step-1 = [{"x" = operand-0 -> [operand-0]}]}]>')),
    /propagation edges have a source that is the same as a target/);
});

test("tensor_sharding_parse_print.mlir: every sharding Shardy prints is what xlats prints for the input", { skip: !available && "conformance data not found" }, () => {
  const text = readLit("tensor_sharding_parse_print.mlir");
  const printed = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trim().startsWith("//")) continue;
    for (let i = line.indexOf("#sdy."); i >= 0; i = line.indexOf("#sdy.", i + 1)) printed.add(roundTrip(line.slice(i)));
  }
  let compared = 0;
  for (const check of literalChecks(text)) {
    const m = /#sdy\.sharding(_per_value)?<.*>(?=\}?$)/.exec(check);
    if (m === null) continue;
    compared++;
    assert.ok(printed.has(m[0]), `Shardy prints ${m[0]}; xlats printed none such`);
  }
  assert.ok(compared >= 25, `only ${compared} shardings compared`);
});
