// Text speed for large constants and large modules: parsing a dense f32 constant in hex
// form (`dense<"0x...">`, how JAX embeds weights) and as decimals, printing it back, the
// same constant in HLO text (`constant({...})`), and printHlo of a module with 8,000
// computations. Node's own hex decoder (Buffer.from(s, "hex")) and JSON.parse of the
// same decimals run beside them as peers, so the ratios mean something on a busy machine.
//
//   npm run bench:parse [-- --quick]   (--quick: 1M elements instead of 4M)

import { parseHlo, parseStableHlo, printHlo, printStableHlo } from "../src/index.js";
import { probeArgs } from "./harness/probe_args.js";

const { "--quick": quick } = probeArgs("parse", { options: { "--quick": { kind: "flag", help: "1M elements instead of 4M" } } });
const N = quick ? 1 << 20 : 4 << 20;

function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

function row(name: string, bytes: number, ms: number, peer?: { name: string; ms: number }): void {
  const mbs = bytes / 1e6 / (ms / 1000);
  const vs = peer === undefined ? "" : `   (${peer.name}: ${(bytes / 1e6 / (peer.ms / 1000)).toFixed(0)} MB/s, ratio ${(peer.ms / ms).toFixed(2)})`;
  console.log(`${name.padEnd(34)} ${(bytes / 1e6).toFixed(1).padStart(7)} MB ${ms.toFixed(0).padStart(7)} ms ${mbs.toFixed(1).padStart(8)} MB/s${vs}`);
}

const values = new Float32Array(N);
for (let i = 0; i < N; i++) values[i] = Math.fround(Math.sin(i) * 100);
const hex = Buffer.from(values.buffer).toString("hex").toUpperCase();
const decimals = Array.from(values, (x) => x.toExponential(6));
const module = (body: string): string =>
  `func.func @main() -> tensor<${N}xf32> {\n  %0 = stablehlo.constant dense<${body}> : tensor<${N}xf32>\n  return %0 : tensor<${N}xf32>\n}\n`;

console.log(`${N} f32 elements${quick ? " (--quick)" : ""}`);
const hexText = module(`"0x${hex}"`);
const hexParse = timed(() => parseStableHlo(hexText));
const hexPeer = timed(() => Buffer.from(hex, "hex"));
row("StableHLO parse, hex constant", hexText.length, hexParse.ms, { name: "Buffer.from hex", ms: hexPeer.ms });

const decText = module(`[${decimals.join(", ")}]`);
const decParse = timed(() => parseStableHlo(decText));
const decPeer = timed(() => JSON.parse(`[${decimals.join(",")}]`) as number[]);
row("StableHLO parse, decimal constant", decText.length, decParse.ms, { name: "JSON.parse", ms: decPeer.ms });

const printed = timed(() => printStableHlo(decParse.value));
row("StableHLO print, constant", printed.value.length, printed.ms);

const hloText = `HloModule m\n\nENTRY %main () -> f32[${N}] {\n  ROOT %c = f32[${N}] constant({${decimals.join(", ")}})\n}\n`;
const hloParse = timed(() => parseHlo(hloText));
row("HLO parse, decimal constant", hloText.length, hloParse.ms);
const hloPrint = timed(() => printHlo(hloParse.value));
row("HLO print, constant", hloPrint.value.length, hloPrint.ms);

// 8,000 computations, each called once from the entry.
const COMPUTATIONS = 8000;
const comps = Array.from({ length: COMPUTATIONS }, (_, i) =>
  `%c${i} (p${i}: f32[]) -> f32[] {\n  %p${i} = f32[] parameter(0)\n  ROOT %r${i} = f32[] add(f32[] %p${i}, f32[] %p${i})\n}\n`).join("\n");
const calls = Array.from({ length: COMPUTATIONS }, (_, i) => `  %k${i} = f32[] call(f32[] %${i === 0 ? "x" : `k${i - 1}`}), to_apply=%c${i}`).join("\n");
const bigModule = parseHlo(`HloModule many\n\n${comps}\nENTRY %main (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n${calls}\n  ROOT %out = f32[] negate(f32[] %k${COMPUTATIONS - 1})\n}\n`);
const many = timed(() => printHlo(bigModule));
console.log(`${"printHlo, 8,000 computations".padEnd(34)} ${(many.value.length / 1e6).toFixed(1).padStart(7)} MB ${many.ms.toFixed(0).padStart(7)} ms`);
