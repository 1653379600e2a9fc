// `xlats opt`: mlir-opt's flags, pass options in MLIR's spellings, diagnostics as
// FILE:LINE:COL: error: MESSAGE at the op's position in the original file.

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { findPass, parsePassOptions, PassOptionError, registeredPasses, type PassRegistration } from "../../src/cli/pass_registry.js";
import { splitInputFile } from "../../src/cli/opt.js";
import { formatDiagnostic } from "../../src/cli/diagnostics.js";
import { loadSdyPasses, SDY_PASS_MODULES } from "../../src/cli/sdy_pass_modules.js";
import { SDY_PASSES } from "../../src/sdy/passes/index.js";
import { metadataLocation } from "../../src/ir/attributes.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { atLocation, DiagnosticList, VerifyError } from "../../src/types/errors.js";
import { tempFiles, xlats } from "./helpers.js";

const TWO_CHUNKS = `sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
// -----
func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
`;

/** A registration with one option of each type, to test option parsing apart from any real pass. */
const PROBE: PassRegistration = {
  name: "probe",
  description: "test pass",
  options: [
    { name: "flag", type: "bool", description: "", default: false },
    { name: "count", type: "int", description: "", default: 3 },
    { name: "mode", type: "string", description: "", default: "basic", values: ["basic", "aggressive"] },
    { name: "filter", type: "string", description: "", default: "" },
    { name: "ops", type: "list", description: "", default: [] },
  ],
  create: () => ({ name: "probe", run: (m) => m }),
};

const optionsOf = (text: string): Record<string, unknown> => Object.fromEntries(parsePassOptions(PROBE, text).entries());

test("pass options: MLIR's space-separated spelling, commas between options, defaults filled in", () => {
  assert.deepEqual(optionsOf(""), { flag: false, count: 3, mode: "basic", filter: "", ops: [] });
  assert.deepEqual(optionsOf("flag count=7"), { flag: true, count: 7, mode: "basic", filter: "", ops: [] });
  assert.deepEqual(optionsOf("flag=false,count=-2,mode=aggressive"), { flag: false, count: -2, mode: "aggressive", filter: "", ops: [] });
  // A list keeps its commas; a comma before another option's name separates options.
  assert.deepEqual(optionsOf("ops=add,mul,count=1"), { flag: false, count: 1, mode: "basic", filter: "", ops: ["add", "mul"] });
  // Quoted values keep blanks and commas (the RUN line `filter='selectLow=0, selectHigh=0'`).
  assert.equal(optionsOf("filter='selectLow=0, selectHigh=0' flag").filter, "selectLow=0, selectHigh=0");
  assert.equal(optionsOf('flag=1 filter="a b"').filter, "a b");
});

test("pass options: unknown option, bad values and unterminated quotes name the pass and the option", () => {
  const fails = (text: string, re: RegExp): void => {
    assert.throws(() => parsePassOptions(PROBE, text), (e: unknown) => e instanceof PassOptionError && re.test(e.message));
  };
  fails("colour=red", /-probe: unknown option 'colour' \(its options: flag, count, mode, filter, ops\)/);
  fails("count=many", /-probe: option 'count' expects an integer, got 'many'/);
  fails("count", /option 'count' expects an integer/);
  fails("flag=maybe", /option 'flag' expects true or false, got 'maybe'/);
  fails("mode=fast", /option 'mode' expects one of basic, aggressive, got 'fast'/);
  fails("filter='open", /unterminated '/);
  // Reading an option as the wrong type, or one not declared, is a bug in the pass: said so.
  const o = parsePassOptions(PROBE, "");
  assert.throws(() => o.int("flag"), /option 'flag' is a bool option, read as int/);
  assert.throws(() => o.bool("nothing"), /does not declare/);
});

test("the registry: the compiler's passes by name, names unique", () => {
  const names = registeredPasses().map((p) => p.name);
  assert.equal(new Set(names).size, names.length);
  for (const n of ["cse", "dce", "constant-fold", "simplify", "simplification", "decompose", "fusion"]) {
    assert.ok(findPass(n) !== undefined, n);
  }
  assert.equal(findPass("simplification")!.create(parsePassOptions(findPass("simplification")!, "max-iterations=2")).name,
    "fixpoint(simplification)");
});

test("splitInputFile: chunks between '// -----' lines, each with the line it starts on", () => {
  assert.deepEqual(splitInputFile("a\n// -----\nb\nc\n// -----   \nd"), [
    { text: "a", lineOffset: 0 }, { text: "b\nc", lineOffset: 2 }, { text: "d", lineOffset: 5 },
  ]);
  // Only whole lines split: a comment that merely starts with the marker's dashes does not.
  assert.equal(splitInputFile("a\n// ------ x\nb").length, 1);
});

test("opt runs the passes in order and prints the module; -split-input-file joins chunks with // -----", () => {
  const dir = tempFiles({ "a.mlir": TWO_CHUNKS.split("// -----")[0]! });
  const plain = xlats("opt", join(dir, "a.mlir"));
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /stablehlo\.multiply/);
  const dce = xlats("opt", join(dir, "a.mlir"), "-dce");
  assert.equal(dce.code, 0, dce.stderr);
  assert.doesNotMatch(dce.stdout, /stablehlo\.multiply/);
  assert.match(dce.stdout, /stablehlo\.add %arg0, %arg0/);
  const both = tempFiles({ "b.mlir": TWO_CHUNKS.replace("%arg1", "%arg0") });
  const split = xlats("opt", join(both, "b.mlir"), "--split-input-file", "-cse");
  assert.equal(split.code, 0, split.stderr);
  const parts = split.stdout.split("\n// -----\n");
  assert.equal(parts.length, 2);
  assert.match(parts[0]!, /@f\(/);
  assert.match(parts[1]!, /@g\(/);
});

test("diagnostics: FILE:LINE:COL: error: at the original file's line; -verify-diagnostics exits 0", () => {
  const dir = tempFiles({ "a.mlir": TWO_CHUNKS });
  const file = join(dir, "a.mlir");
  const r = xlats("opt", file, "-split-input-file");
  assert.equal(r.code, 1);
  // `%arg1` is on line 9, column 29 of the file (line 2 of the second chunk).
  assert.equal(r.stderr.split("\n")[0], `${file}:9:29: error: use of undefined value %arg1`);
  // The first chunk still printed.
  assert.match(r.stdout, /@f\(/);
  const v = xlats("opt", file, "-split-input-file", "-verify-diagnostics");
  assert.equal(v.code, 0);
  assert.equal(v.stderr.split("\n")[0], `${file}:9:29: error: use of undefined value %arg1`);
});

test("bad flags: unknown pass lists the known ones, bad options name pass and option, exit 2", () => {
  const dir = tempFiles({ "a.mlir": TWO_CHUNKS.split("// -----")[0]! });
  const file = join(dir, "a.mlir");
  const unknown = xlats("opt", file, "-sdy-frobnicate");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown pass or flag '-sdy-frobnicate'; known passes:/);
  assert.match(unknown.stderr, /\n {2}-dce {2}dead code elimination/);
  const option = xlats("opt", file, "-dce=aggressive=true");
  assert.equal(option.code, 2);
  assert.match(option.stderr, /-dce: unknown option 'aggressive' \(it takes no options\)/);
  const value = xlats("opt", file, "-simplification=max-iterations=0");
  assert.equal(value.code, 2);
  assert.match(value.stderr, /-simplification: option 'max-iterations' must be at least 1, got 0/);
  assert.equal(xlats("opt").code, 2);
  assert.equal(xlats("opt", file, file).code, 2);
});

// runOpt loads the compiler's passes only when a flag names one (or no pass at all has its
// name): the Shardy-only path must still take options, report bad ones, and mix with them.
test("Shardy passes alone load no compiler pass; mixed with one, or misspelt, they still run and report", () => {
  const twoAdds = `func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
  %1 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
`;
  const file = join(tempFiles({ "a.mlir": twoAdds }), "a.mlir");
  const adds = (out: string): number => out.split("stablehlo.add").length - 1;
  const shardy = xlats("opt", file, "-sdy-basic-propagate=conservative-propagation=true");
  assert.equal(shardy.code, 0, shardy.stderr);
  assert.equal(adds(shardy.stdout), 2);
  const mixed = xlats("opt", file, "-sdy-basic-propagate", "-cse");
  assert.equal(mixed.code, 0, mixed.stderr);
  assert.equal(adds(mixed.stdout), 1, "cse merged the two adds");
  const twoModules = xlats("opt", file, "-sdy-basic-propagate", "-sdy-drop-sharding-and-mesh");
  assert.equal(twoModules.code, 0, twoModules.stderr);
  assert.equal(adds(twoModules.stdout), 2);
  const bad = xlats("opt", file, "-sdy-basic-propagate=no-such-option=1");
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /-sdy-basic-propagate: unknown option 'no-such-option'/);
});

// opt imports only the modules of the Shardy passes its flags name (sdy_pass_modules.ts):
// that index must list every pass of SDY_PASSES, in its order, with the module that
// registers it (the same registration objects).
test("the Shardy pass modules index SDY_PASSES: every pass, in order, each from its own module", async () => {
  assert.deepEqual(SDY_PASS_MODULES.flatMap((m) => m.names), SDY_PASSES.map((p) => p.name));
  for (const module of SDY_PASS_MODULES) {
    const loaded = await module.load();
    assert.deepEqual(loaded.map((p) => p.name), module.names);
    for (const registration of loaded) assert.ok(SDY_PASSES.includes(registration), `${registration.name} is SDY_PASSES's registration`);
  }
  // Several names: their modules' registrations, in SDY_PASSES's order, each module once.
  const some = await loadSdyPasses(["sdy-drop-sharding-and-mesh", "sdy-aggressive-propagate", "sdy-basic-propagate"]);
  assert.deepEqual(some?.map((p) => p.name), [
    "sdy-basic-propagate", "sdy-aggressive-propagate", "sdy-op-priority-propagate", "sdy-user-priority-propagate", "sdy-drop-sharding-and-mesh",
  ]);
  assert.deepEqual(await loadSdyPasses([]), []);
  // A compiler pass or an unknown name: undefined, and opt falls back on the whole registry.
  assert.equal(await loadSdyPasses(["sdy-basic-propagate", "cse"]), undefined);
  assert.equal(await loadSdyPasses(["sdy-frobnicate"]), undefined);
});

test("-allow-unregistered-dialect keeps ops of unknown dialects; without it they are errors at their position", () => {
  const text = `func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "foo.bar"(%arg0) {some_attr = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
`;
  const dir = tempFiles({ "u.mlir": text });
  const file = join(dir, "u.mlir");
  const refused = xlats("opt", file);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:2:3: error: .*foo\\.bar`));
  const kept = xlats("opt", file, "-allow-unregistered-dialect");
  assert.equal(kept.code, 0, kept.stderr);
  assert.match(kept.stdout, /"foo\.bar"\(%arg0\) \{some_attr = 1 : i64\} : \(tensor<8xf32>\) -> tensor<8xf32>/);
});

test("recorded locations: instructions carry their op's line and column; errors with a location print FILE:LINE:COL", () => {
  const m = parseStableHlo(TWO_CHUNKS.split("// -----")[0]!, "x.mlir", 0, { recordLocations: true });
  const multiply = m.entry.instructions.find((i) => i.opcode === "multiply")!;
  const at = metadataLocation(multiply.metadata);
  assert.deepEqual(at, { file: "x.mlir", line: 4, column: 3 });
  assert.equal(formatDiagnostic(atLocation(new VerifyError("bad operand"), at), "x.mlir"), "x.mlir:4:3: error: bad operand");
  assert.equal(formatDiagnostic(new VerifyError("no place"), "x.mlir"), "x.mlir: error: no place");
  // Several diagnostics at once: one line each, in order.
  const list = new DiagnosticList([atLocation(new VerifyError("first"), at), atLocation(new VerifyError("second"), { file: "x.mlir", line: 9, column: 1 })]);
  assert.equal(formatDiagnostic(list, "x.mlir"), "x.mlir:4:3: error: first\nx.mlir:9:1: error: second");
  // Off by default: HLO text printed from the module stays free of source metadata.
  const plain = parseStableHlo(TWO_CHUNKS.split("// -----")[0]!, "x.mlir");
  assert.ok(plain.entry.instructions.every((i) => i.metadata === undefined));
});
