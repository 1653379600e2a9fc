// The page side of the browser test (page.html, driven by browser.test.ts): xlats from its
// browser entry as ES modules, with no bundler. install() sets globalThis.xlatsTest; each
// check returns plain data and the driver compares it with known values. Node's test
// runner also imports this file (it runs every .js under dist/test/): importing it does
// nothing.

import { compile, evaluate, Literal, parseStableHlo, type XlaError } from "../../src/browser.js";

/** What a module printed with console.log, or how it failed. */
export interface ModuleRun {
  readonly lines: readonly string[];
  readonly error?: string;
}

export interface StableHloRun {
  readonly interpreted: readonly number[];
  readonly compiled: readonly number[];
  readonly kernels: number;
}

export interface ParseFailure {
  readonly name: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** How much of a screenshot is drawn on: pixels far from its most common color (the background). */
export interface Ink {
  readonly width: number;
  readonly height: number;
  readonly inkPixels: number;
  readonly background: string;
}

interface Canvas2D {
  drawImage(image: object, x: number, y: number): void;
  getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
}
interface DecodedImage { src: string; readonly width: number; readonly height: number; decode(): Promise<void> }

interface BrowserGlobals {
  readonly Image: new () => DecodedImage;
  readonly document: { createElement(tag: "canvas"): { width: number; height: number; getContext(kind: "2d"): Canvas2D | null } };
  readonly Blob: new (parts: string[], options: { type: string }) => object;
  readonly URL: { createObjectURL(blob: object): string; revokeObjectURL(url: string): void };
  readonly crossOriginIsolated?: boolean;
  xlatsTest?: unknown;
}

const page = globalThis as unknown as BrowserGlobals;

/**
 * Runs `code` as an ES module (a README block, "xlats" already replaced by the browser
 * entry's URL) and returns what it printed. Blocks run one at a time: console.log is
 * captured while one runs.
 */
async function runModule(code: string): Promise<ModuleRun> {
  const url = page.URL.createObjectURL(new page.Blob([code], { type: "text/javascript" }));
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => { lines.push(args.map(String).join(" ")); };
  try {
    await import(url);
    return { lines };
  } catch (e) {
    return { lines, error: `${(e as Error).name}: ${(e as Error).message}` };
  } finally {
    console.log = log;
    page.URL.revokeObjectURL(url);
  }
}

/** Σ_j (x[i,j] + 1)² per row, as jax.jit(...).lower(...).as_text() would print it. */
const PROGRAM = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<2x3xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}
`;

/** PROGRAM parsed, then run by the interpreter and compiled to WebAssembly, on x = [[0,1,2],[3,4,5]]. */
async function stableHlo(): Promise<StableHloRun> {
  const module = parseStableHlo(PROGRAM);
  const x = Literal.from("f32", [[0, 1, 2], [3, 4, 5]]);
  const interpreted = evaluate(module.entry, [x]).toNumbers();
  const executable = await compile(module);
  return { interpreted, compiled: executable.run([x]).toNumbers(), kernels: executable.stats.kernels };
}

/** A program with a misspelled op on line 3. */
function parseFailure(): ParseFailure | undefined {
  const text = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  %1 = stablehlo.mulitply %0, %0 : tensor<2xf32>\n  return %1 : tensor<2xf32>\n}\n";
  try {
    parseStableHlo(text);
    return undefined;
  } catch (e) {
    const err = e as XlaError & { line?: number; column?: number };
    return { name: err.name, line: err.line ?? -1, column: err.column ?? -1, message: err.message };
  }
}

/** Decodes a PNG screenshot (base64) with the browser's own decoder and measures its ink. */
async function inkOf(pngBase64: string): Promise<Ink> {
  const image = new page.Image();
  image.src = `data:image/png;base64,${pngBase64}`;
  await image.decode();
  const canvas = page.document.createElement("canvas");
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext("2d")!;
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  const counts = new Map<number, number>();
  for (let i = 0; i < data.length; i += 4) {
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
  }
  const background = [...counts.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const [br, bg, bb] = [(background >> 16) & 255, (background >> 8) & 255, background & 255];
  let inkPixels = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i]! - br) + Math.abs(data[i + 1]! - bg) + Math.abs(data[i + 2]! - bb) > 96) inkPixels++;
  }
  return { width: image.width, height: image.height, inkPixels, background: `#${background.toString(16).padStart(6, "0")}` };
}

export function install(): void {
  page.xlatsTest = { runModule, stableHlo, parseFailure, inkOf, crossOriginIsolated: () => page.crossOriginIsolated === true };
}
