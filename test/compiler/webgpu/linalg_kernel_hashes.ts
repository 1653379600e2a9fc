// Fingerprints of the WebGPU backend's LAPACK kernels (kernel_hashes.ts covers none of
// them), to show that a change to their generators leaves the kernels it does not mean to
// change byte for byte as they were. Not a test: run it before and after and compare.
//
//   node dist/test/compiler/webgpu/linalg_kernel_hashes.js > before.txt
//   ... change, rebuild ...
//   node dist/test/compiler/webgpu/linalg_kernel_hashes.js > after.txt && diff before.txt after.txt
//
// Each line names a call (its target, element type and shape) and the SHA-256 of its
// kernels' WGSL, or "host" with the reason where the plan leaves it on the host. The
// calls: every routine of the custom-call table on f32 and c64, in the forms whose
// kernels differ (triangles, vectors or not, batch counts).

import { createHash } from "node:crypto";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { parseStableHlo } from "../../../src/index.js";
import { tensorType } from "./linalg_support.js";

const sha = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 16);

/** A call: its target, attributes, operand shapes and result shapes (element types as StableHLO spells them). */
type Call = readonly [string, string, readonly string[], readonly string[]];

function calls(t: "f32" | "complex<f32>", batch: readonly number[], n: number): Call[] {
  const complex = t !== "f32";
  const a = tensorType([...batch, n, n], t), v = tensorType([...batch, n], t), r = tensorType([...batch, n], "f32"), m = tensorType([...batch, n - 1], t), mr = tensorType([...batch, n - 1], "f32");
  const s = tensorType(batch, "i32"), cv = tensorType([...batch, n, n], "complex<f32>"), cw = tensorType([...batch, n], "complex<f32>");
  const letter = complex ? "c" : "s";
  return [
    [`lapack_${letter}gehrd_ffi`, `{high = ${n} : i32, low = 1 : i32}`, [a], [a, m, s]],
    [complex ? "lapack_chetrd_ffi" : "lapack_ssytrd_ffi", "{uplo = 76 : ui8}", [a], [a, r, mr, m, s]],
    ["cusolver_sytrd_ffi", "{lower = false}", [a], [a, r, mr, m, s]],
    [`lapack_${letter}gees_ffi`, "{mode = 86 : ui8, sort = 78 : ui8}", [a], complex ? [a, a, v, s, s] : [a, a, v, v, s, s]],
    [`lapack_${letter}gees_ffi`, "{mode = 78 : ui8, sort = 78 : ui8}", [a], complex ? [a, a, v, s, s] : [a, a, v, v, s, s]],
    [`lapack_${letter}geev_ffi`, "{compute_left = 86 : ui8, compute_right = 86 : ui8}", [a], complex ? [v, a, a, s] : [v, v, cv, cv, s]],
    [`lapack_${letter}geev_ffi`, "{compute_left = 78 : ui8, compute_right = 86 : ui8}", [a], complex ? [v, a, a, s] : [v, v, cv, cv, s]],
    ["cusolver_geev_ffi", "{left = true, right = true}", [a], [a, cw, a, a, s]],
    [complex ? "cuhybrid_eig_comp" : "cuhybrid_eig_real", "{left = true, magma = \"auto\", right = true}", [a], complex ? [v, a, a, s] : [v, v, cv, cv, s]],
    [`lapack_${letter}getrf_ffi`, "", [a], [a, tensorType([...batch, n], "i32"), s]],
    [`lapack_${letter}geqrf_ffi`, "", [a], [a, v]],
    [`lapack_${letter}potrf_ffi`, "{uplo = 76 : ui8}", [a], [a, s]],
    [`lapack_${letter}${complex ? "heevd" : "syevd"}_ffi`, "{mode = 86 : ui8, uplo = 76 : ui8}", [a], [a, r, s]],
    [`lapack_${letter}gesdd_ffi`, "{mode = 83 : ui8}", [a], [a, r, a, a, s]],
  ];
}

const lines: string[] = [];
for (const t of ["f32", "complex<f32>"] as const) {
  for (const [batch, n] of [[[3], 6], [[], 40]] as const) {
    for (const [target, attrs, operands, results] of calls(t, batch, n)) {
      const text = `func.func @main(${operands.map((o, k) => `%a${k}: ${o}`).join(", ")}) -> (${results.join(", ")}) {
  %0:${results.length} = stablehlo.custom_call @${target}(${operands.map((_, k) => `%a${k}`).join(", ")}) {mhlo.backend_config = ${attrs === "" ? "{}" : attrs}} : (${operands.join(", ")}) -> (${results.join(", ")})
  return ${results.map((_, k) => `%0#${k}`).join(", ")} : ${results.join(", ")}
}`;
      const name = `${target} ${attrs} ${operands.join(", ")}`;
      try {
        const plan = planGpuProgram(parseStableHlo(text), {});
        const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
        lines.push(`${name} | ${plan.kernels.map((k) => sha(k.source)).join(" ")}${hosts.length === 0 ? "" : ` | host: ${hosts.join("; ")}`}`);
      } catch (e) {
        lines.push(`${name} | error: ${(e as Error).message.split("\n")[0]}`);
      }
    }
  }
}
console.log(lines.join("\n"));
