// The IR kit: the instruction factory, the walks, `rebuild` / `mapComputations`, the
// fusion opcode in every form (IR, interpreter, HLO and StableHLO text) and the pass
// framework. Expected values are worked out by hand in each test.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, mul, neg, outfeedWithToken, parameter, createToken, reduce, scalarShape,
  parseHlo, printHlo, parseStableHlo, printStableHlo, verifyModule, HloModule, narrow, type Computation, type Instruction,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { InstructionFactory } from "../../src/ir/factory.js";
import { postOrder, structuralKey, usersOf } from "../../src/ir/traverse.js";
import { mapComputations, rebuild } from "../../src/ir/rewrite.js";
import { fixpoint, pipeline, runPasses, type Pass } from "../../src/passes/pass.js";
import { CompileError } from "../../src/types/errors.js";

const f32x3 = arrayShape("f32", [3]);

/** (x + 0) * y, with a dead neg(x). */
function sample(): Computation {
  const b = new XlaBuilder("sample");
  const x = parameter(b, 0, f32x3, "x");
  const y = parameter(b, 1, f32x3, "y");
  neg(x);
  return b.build(mul(add(x, constantR0(b, "f32", 0), [] as number[]), y));
}

test("the factory gives fresh ids and unique names, and carries metadata over", () => {
  const f = new InstructionFactory("c", { reserveNames: ["a"], firstId: 10 });
  const p = f.parameter(0, f32x3, "a");
  const q = f.add("negate", [p], {}, { metadata: { opName: "jax/neg" } });
  const r = f.add("abs", [q], {}, { from: q });
  assert.deepEqual([p.id, q.id, r.id], [10, 11, 12]);
  assert.equal(p.name, "a.1");
  assert.equal(r.name, `${q.name}.1`);
  assert.deepEqual(r.metadata, { opName: "jax/neg" });
  assert.throws(() => f.add("add", [p, f.constant(Literal.from("f32", [1, 2]))], {}), /add/);
});

test("postOrder, usersOf and structuralKey", () => {
  const c = sample();
  const order = postOrder([c.root]);
  assert.equal(order.at(-1), c.root);
  for (const [i, inst] of order.entries()) for (const o of inst.operands) assert.ok(order.indexOf(o) < i);
  const users = usersOf(c);
  const x = c.parameters[0]!;
  assert.deepEqual(users.get(x)!.map((u) => u.opcode).sort(), ["add", "negate"]);
  // Two adds of the same operands have the same key; a different attribute or operand order does not.
  const f = new InstructionFactory("k");
  const a = f.parameter(0, f32x3);
  const b = f.parameter(1, f32x3);
  assert.equal(structuralKey(f.add("add", [a, b], {})), structuralKey(f.add("add", [a, b], {})));
  assert.notEqual(structuralKey(f.add("add", [a, b], {})), structuralKey(f.add("add", [b, a], {})));
  const c1 = f.constant(Literal.from("f32", [0]));
  const c2 = f.constant(Literal.from("f32", [-0]));
  assert.notEqual(structuralKey(c1), structuralKey(c2), "0 and -0 are different constants");
  assert.equal(structuralKey(c1), structuralKey(f.constant(Literal.from("f32", [0]))));
});

test("rebuild: nothing to do returns the same computation", () => {
  const b = new XlaBuilder("live");
  const x = parameter(b, 0, f32x3, "x");
  const c = b.build(neg(x));
  assert.equal(rebuild(c, () => undefined), c);
});

test("rebuild replaces x + 0 by x, drops dead code, keeps side effects and side data", () => {
  const b = new XlaBuilder("fx");
  const x = parameter(b, 0, f32x3, "x");
  const y = parameter(b, 1, f32x3, "y");
  const token = outfeedWithToken(neg(y), createToken(b), f32x3, "");
  const sum = add(x, constantR0(b, "f32", 0), [] as number[]);
  const c = b.build(mul(sum, y));
  void token;
  c.argAttributes = [{ "jax.arg": "x" }, {}];
  const out = rebuild(c, (inst, operands) => {
    const i = narrow(inst);
    if (i.opcode === "add" && operands[1]!.opcode === "broadcastInDim") return operands[0];
    return undefined;
  });
  assert.notEqual(out, c);
  const ops = out.instructions.map((i) => i.opcode);
  assert.ok(!ops.includes("add"), "the add is gone");
  assert.ok(!ops.includes("constant"), "its now-dead constant operand is gone");
  assert.ok(ops.includes("outfeed"), "the outfeed stays although nothing uses it");
  assert.equal(out.root.opcode, "multiply");
  assert.equal(out.root.operands[0], out.parameters[0]);
  assert.equal(out.root.name, c.root.name, "a copy keeps the name of what it replaces");
  assert.deepEqual(out.argAttributes, c.argAttributes);
  verifyModule(new HloModule("m", out));
  const args = [Literal.from("f32", [1, 2, 3]), Literal.from("f32", [4, 5, 6])];
  assert.deepEqual(evaluate(out, args).toNumbers(), [4, 10, 18]);
});

test("mapComputations re-points callers at rebuilt callees", () => {
  const b = new XlaBuilder("outer");
  const x = parameter(b, 0, f32x3, "x");
  const sb = b.createSubBuilder("sum");
  const sum = sb.build(add(parameter(sb, 0, scalarShape("f32")), parameter(sb, 1, scalarShape("f32"))));
  const entry = b.build(reduce(x, constantR0(b, "f32", 0), sum, [0]));
  const module = new HloModule("m", entry);
  // Turn the reducer's add into a maximum: the reduce must then compute a max.
  const out = mapComputations(module, (c) => c !== sum ? c : rebuild(c, (inst, operands, f) =>
    inst.opcode === "add" ? f.add("maximum", operands, {}, { from: inst }) : undefined));
  assert.notEqual(out, module);
  verifyModule(out);
  assert.equal(out.computations.length, 2);
  const r = evaluate(out.entry, [Literal.from("f32", [1, 7, 3])]);
  assert.equal(r.readLinear(0), 7);
  assert.equal(evaluate(module.entry, [Literal.from("f32", [1, 7, 3])]).readLinear(0), 11, "the input module is unchanged");
  assert.equal(mapComputations(module, (c) => c), module);
});

/** A module whose entry calls a loop fusion computing (x * y) + x. */
function fusionModule(): HloModule {
  const fb = new XlaBuilder("fused_computation");
  const p0 = parameter(fb, 0, f32x3, "p0");
  const p1 = parameter(fb, 1, f32x3, "p1");
  const fused = fb.build(add(mul(p0, p1), p0));
  const f = new InstructionFactory("main");
  const x = f.parameter(0, f32x3, "x");
  const y = f.parameter(1, f32x3, "y");
  const root = f.add("fusion", [x, y], { kind: "loop", calledComputation: fused }, { name: "fusion" });
  return new HloModule("fusion_module", f.finish(root));
}

test("fusion: verifies, runs on the interpreter, and round-trips through HLO and StableHLO text", () => {
  const module = fusionModule();
  verifyModule(module);
  const args = [Literal.from("f32", [1, 2, 3]), Literal.from("f32", [10, 20, 30])];
  const expected = [11, 42, 93];
  assert.deepEqual(evaluate(module.entry, args).toNumbers(), expected);
  const hlo = printHlo(module);
  assert.match(hlo, /fusion\(.*\), kind=kLoop, calls=%?fused_computation/);
  const back = parseHlo(hlo);
  verifyModule(back);
  assert.equal(back.entry.root.opcode, "fusion");
  assert.equal((back.entry.root as Instruction<"fusion">).attrs.kind, "loop");
  assert.deepEqual(evaluate(back.entry, args).toNumbers(), expected);
  const mlir = printStableHlo(module);
  assert.match(mlir, /mhlo\.fusion/);
  const fromMlir = parseStableHlo(mlir);
  verifyModule(fromMlir);
  assert.deepEqual(evaluate(fromMlir.entry, args).toNumbers(), expected);
  assert.throws(() => parseHlo(hlo.replace("kLoop", "kSideways")), /fusion kind/);
});

test("StableHLO import: a while body that ignores a loop value and captures an outer one verifies (fresh ids after pruning)", () => {
  const text = `
func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<f32>
    cond {
      %lim = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      %y = stablehlo.add %b, %b : tensor<f32>
      stablehlo.return %n, %y : tensor<i32>, tensor<f32>
    }
  return %r#1 : tensor<f32>
}`;
  const module = parseStableHlo(text);
  verifyModule(module);
  // Three iterations, each setting x to b + b.
  assert.equal(evaluate(module.entry, [Literal.scalar("f32", 1), Literal.scalar("f32", 2)]).readLinear(0), 4);
});

test("passes: pipeline, fixpoint, verification and dumps", () => {
  const module = new HloModule("m", sample());
  let negations = 0;
  // Drops one dead negate per run, so the fixpoint needs two runs to see no change.
  const dropDead: Pass = {
    name: "drop-dead",
    run: (m, ctx) => mapComputations(m, (c) => {
      const out = rebuild(c, () => undefined);
      if (out !== c) ctx.log("drop-dead", `removed ${c.instructions.length - out.instructions.length}`);
      return out;
    }),
  };
  const count: Pass = { name: "count", run: (m) => { negations += m.entry.instructions.filter((i) => i.opcode === "negate").length; return m; } };
  const dumps: string[] = [];
  const { module: out, log } = runPasses(module, [pipeline("p", [fixpoint(dropDead), count])], {
    verify: true, dump: (name) => dumps.push(name),
  });
  assert.equal(negations, 0);
  assert.deepEqual(dumps, ["drop-dead", "fixpoint(drop-dead)", "p"]);
  assert.deepEqual(log, [{ pass: "drop-dead", message: "removed 1" }]);
  assert.equal(out.entry.instructions.length, module.entry.instructions.length - 1);
  const broken: Pass = {
    name: "broken",
    run: (m) => mapComputations(m, (c) => rebuild(c, (inst, operands, f) =>
      inst.opcode === "multiply" ? { ...f.add("multiply", operands, {}), shape: arrayShape("f32", [4]) } : undefined)),
  };
  assert.throws(() => runPasses(module, [broken], { verify: true }), (e) => e instanceof CompileError && /pass broken produced an invalid module/.test(e.message));
});

test("the module config: HLO's replica_count/num_partitions and StableHLO's mhlo.num_replicas/num_partitions", () => {
  const hlo = `HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, replica_count=2, num_partitions=4

ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %n = f32[2]{0} negate(f32[2]{0} %x)
}
`;
  const m = parseHlo(hlo);
  assert.deepEqual(m.config, { replicaCount: 2, partitionCount: 4 });
  assert.deepEqual(parseHlo(printHlo(m)).config, m.config);
  assert.throws(() => parseHlo(hlo.replace("replica_count=2", "replica_count=0")), /replica_count must be at least 1/);
  const mlir = parseStableHlo(`module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 3 : i32} {
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
}`);
  assert.deepEqual(mlir.config, { replicaCount: 3, partitionCount: 2 });
  assert.deepEqual(fusionModule().config, { replicaCount: 1, partitionCount: 1 });
});
