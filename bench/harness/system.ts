// What the table's header says about the machine: CPU model and the flags that matter,
// cores, Node version, and whether this Node validates relaxed SIMD.

import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";

/** A module with one function: `operands` v128 zero constants, then one SIMD instruction. */
function simdModule(operands: number, opcode: readonly number[]): Uint8Array {
  const v128Zero = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
  const body = [0x00, ...Array.from({ length: operands }, () => v128Zero).flat(), ...opcode, 0x0b];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type: [] -> [v128]
    0x03, 0x02, 0x01, 0x00, // one function of type 0
    0x0a, body.length + 2, 0x01, body.length, ...body,
  ]);
}

/** True when this engine validates relaxed SIMD (Node 20: --experimental-wasm-relaxed-simd). */
export function hasRelaxedSimd(): boolean {
  // f32x4.add validates on every SIMD engine: a check that the probe module itself is well formed.
  if (!WebAssembly.validate(simdModule(2, [0xfd, 0xe4, 0x01]))) return false;
  return WebAssembly.validate(simdModule(3, [0xfd, 0x85, 0x02]) /* f32x4.relaxed_madd */);
}

export interface SystemInfo {
  readonly cpu: string;
  readonly flags: string;
  readonly cores: number;
  readonly node: string;
  readonly relaxedSimd: boolean;
  /** 1-minute load average when the run started: other work on the machine disturbs the figures. */
  readonly load: number;
}

export function systemInfo(): SystemInfo {
  let model = cpus()[0]?.model ?? "unknown CPU";
  let flags: string[] = [];
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? model;
    const have = new Set((/^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? "").split(/\s+/));
    flags = ["avx2", "fma", "avx512f", "avx512vnni", "avx512_bf16", "amx_tile"].filter((f) => have.has(f));
  } catch {
    // not Linux: the model from os.cpus() is all there is
  }
  return {
    cpu: model.trim(),
    flags: flags.length > 0 ? flags.join(" ") : "(no AVX2)",
    cores: availableParallelism(),
    node: process.version,
    relaxedSimd: hasRelaxedSimd(),
    load: loadavg()[0] ?? 0,
  };
}
