// Seeds for the parser fuzzer: the StableHLO conformance files split into their
// `// -----` chunks, the HLO text our printer writes for each chunk that imports, and
// generated programs nested or chained to a chosen depth (regions, calls).

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { printHlo } from "../../src/text/hlo/index.js";
import type { MutationPool } from "./mutate.js";

export type InputKind = "mlir" | "hlo";

export interface Seed {
  readonly kind: InputKind;
  readonly name: string;
  readonly text: string;
}

export interface Corpus extends MutationPool {
  readonly seeds: readonly Seed[];
}

/** The conformance folder relative to a checkout (`../shared`, as the tests resolve it). */
export function conformanceDir(repoRoot: string): string {
  return path.resolve(repoRoot, "../shared/conformance/stablehlo/interpret");
}

export function loadCorpus(repoRoot: string): Corpus {
  const dir = conformanceDir(repoRoot);
  const seeds: Seed[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".mlir")).sort()) {
    const chunks = readFileSync(path.join(dir, file), "utf8").split(/^\/\/ -----[ \t]*$/m);
    chunks.forEach((chunk, i) => {
      if (!chunk.includes("func.func")) return;
      seeds.push({ kind: "mlir", name: `${file}#${i}`, text: chunk });
      try {
        seeds.push({ kind: "hlo", name: `${file}#${i}.hlo`, text: printHlo(parseStableHlo(chunk)) });
      } catch {
        // Chunks xlats does not import (or cannot print as HLO) seed only the MLIR side.
      }
    });
  }
  const texts = seeds.map((s) => s.text);
  const opNames = new Set<string>();
  const words = new Set<string>();
  for (const s of seeds) {
    for (const m of s.text.matchAll(/\b(?:stablehlo|chlo|func|check)\.[a-z_]+\b/g)) opNames.add(m[0]);
    if (s.kind === "hlo") for (const m of s.text.matchAll(/(?<=\s)[a-z][a-z-]*(?=\()/g)) opNames.add(m[0]);
    for (const m of s.text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) words.add(m[0]);
  }
  return { seeds, texts, opNames: [...opNames].sort(), words: [...words].sort() };
}

/** `depth` functions, each calling the next (a call chain deeper than any stack). */
export function mlirCallChain(depth: number): string {
  const lines = ["func.func @main() -> tensor<f32> {", "  %0 = stablehlo.constant dense<1.0> : tensor<f32>",
    "  %1 = func.call @f0(%0) : (tensor<f32>) -> tensor<f32>", "  func.return %1 : tensor<f32>", "}"];
  for (let i = 0; i < depth; i++) {
    const body = i + 1 < depth ? `func.call @f${i + 1}(%arg0) : (tensor<f32>) -> tensor<f32>` : "stablehlo.negate %arg0 : tensor<f32>";
    lines.push(`func.func private @f${i}(%arg0: tensor<f32>) -> tensor<f32> {`, `  %0 = ${body}`, "  func.return %0 : tensor<f32>", "}");
  }
  return lines.join("\n");
}

/** `depth` nested `stablehlo.if` regions. */
export function mlirNestedRegions(depth: number): string {
  const open = '%r = "stablehlo.if"(%p) ({';
  const close = "  stablehlo.return %r : tensor<f32>\n}, {\n  %c = stablehlo.constant dense<2.0> : tensor<f32>\n  stablehlo.return %c : tensor<f32>\n}) : (tensor<i1>) -> tensor<f32>";
  return [
    "func.func @main() -> tensor<f32> {",
    "  %p = stablehlo.constant dense<true> : tensor<i1>",
    ...Array<string>(depth).fill(open),
    "  %r = stablehlo.constant dense<1.0> : tensor<f32>",
    ...Array<string>(depth).fill(close),
    "  func.return %r : tensor<f32>",
    "}",
  ].join("\n");
}

/** `depth` HLO computations, each calling the next. */
export function hloCallChain(depth: number): string {
  const lines = ["HloModule chain", ""];
  for (let i = depth - 1; i >= 0; i--) {
    const root = i + 1 < depth ? `call(%p), to_apply=%c${i + 1}` : "negate(%p)";
    lines.push(`%c${i} (p: f32[]) -> f32[] {`, "  %p = f32[] parameter(0)", `  ROOT %r = f32[] ${root}`, "}", "");
  }
  lines.push("ENTRY %main () -> f32[] {", "  %k = f32[] constant(1)", "  ROOT %r = f32[] call(%k), to_apply=%c0", "}");
  return lines.join("\n");
}

/** Generated seeds at depths from shallow to far past any recursion limit. */
export function generatedSeeds(depth: number): Seed[] {
  return [
    { kind: "mlir", name: `call_chain_${depth}`, text: mlirCallChain(depth) },
    { kind: "mlir", name: `nested_regions_${depth}`, text: mlirNestedRegions(depth) },
    { kind: "hlo", name: `hlo_call_chain_${depth}`, text: hloCallChain(depth) },
  ];
}
