// The WebGPU backend's LAPACK kernels against the host step they replace (the
// interpreter's registry, which a host step runs), timed paired in one process: the
// executable's run (its transfers included) and the interpreter's evaluation of the same
// program alternate, round after round; wall and process CPU time (process.cpuUsage) a
// run. Calls: ?gtsv of 256 systems of order 64, ?gehrd and ?sytrd of 16 matrices of
// 64x64, ?gesdd (reduced) of 16 of 64x64, ?gees (Schur vectors) and ?geev (right
// vectors) of 16 of 32x32 and of 16 of 64x64; the complex (c64) ?getrf, ?geqrf then
// ?ungqr, ?trsm (64 right-hand sides), ?heevd, ?gesdd (reduced), ?gehrd and ?hetrd of 16
// of 64x64, ?gees (Schur vectors) and ?geev (right vectors) of 16 of 32x32, and ?gtsv of
// 256 systems of order 64. Run: node
// dist/bench/webgpu_linalg_probe.js [rounds] [only]

import { loadavg } from "node:os";
import { releaseGpu } from "../src/compiler/webgpu/adapter.js";
import { gpuBesideHost, median } from "./harness/gpu_beside_host.js";
import { parseStableHlo } from "../src/index.js";
import { Literal } from "../src/types/literal.js";
import { probeArgs } from "./harness/probe_args.js";
import { elementCount } from "../src/types/shape.js";

const t = (dims: readonly number[], e = "f32"): string => `tensor<${dims.join("x")}x${e}>`;
const m64 = t([16, 64, 64]);

/** ?gees with Schur vectors of 16 n×n matrices: (T, Z). */
const gees = (n: number): { text: string; operands: number[][] } => {
  const m = t([16, n, n]);
  return {
    text: `func.func @main(%a: ${m}) -> (${m}, ${m}) {
  %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (${m}) -> (${m}, ${m}, ${t([16, n])}, ${t([16, n])}, ${t([16], "i32")}, ${t([16], "i32")})
  return %0#0, %0#1 : ${m}, ${m}
}`,
    operands: [[16, n, n]],
  };
};

/** ?geev with right vectors of 16 n×n matrices: (wr, wi, vr). */
const geev = (n: number): { text: string; operands: number[][] } => {
  const m = t([16, n, n]), c = t([16, n, n], "complex<f32>");
  return {
    text: `func.func @main(%a: ${m}) -> (${t([16, n])}, ${t([16, n])}, ${c}) {
  %0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (${m}) -> (${t([16, n])}, ${t([16, n])}, ${c}, ${c}, ${t([16], "i32")})
  return %0#0, %0#1, %0#3 : ${t([16, n])}, ${t([16, n])}, ${c}
}`,
    operands: [[16, n, n]],
  };
};

const c64 = t([16, 64, 64], "complex<f32>");

/** c64 ?gees with Schur vectors of 16 n×n matrices: (T, Z). */
const complexGees = (n: number): { text: string; operands: number[][]; complex: true } => {
  const m = t([16, n, n], "complex<f32>");
  return {
    text: `func.func @main(%a: ${m}) -> (${m}, ${m}) {
  %0:5 = stablehlo.custom_call @lapack_cgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (${m}) -> (${m}, ${m}, ${t([16, n], "complex<f32>")}, ${t([16], "i32")}, ${t([16], "i32")})
  return %0#0, %0#1 : ${m}, ${m}
}`,
    operands: [[16, n, n]], complex: true,
  };
};

/** c64 ?geev with right vectors of 16 n×n matrices: (w, vr). */
const complexGeev = (n: number): { text: string; operands: number[][]; complex: true } => {
  const m = t([16, n, n], "complex<f32>");
  return {
    text: `func.func @main(%a: ${m}) -> (${t([16, n], "complex<f32>")}, ${m}) {
  %0:4 = stablehlo.custom_call @lapack_cgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (${m}) -> (${t([16, n], "complex<f32>")}, ${m}, ${m}, ${t([16], "i32")})
  return %0#0, %0#2 : ${t([16, n], "complex<f32>")}, ${m}
}`,
    operands: [[16, n, n]], complex: true,
  };
};

/** name -> (program text, operand shapes, their element type: f32 unless c64). */
const CALLS: Record<string, { text: string; operands: number[][]; complex?: true }> = {
  gtsv: {
    text: `func.func @main(%dl: ${t([256, 64])}, %d: ${t([256, 64])}, %du: ${t([256, 64])}, %b: ${t([256, 64, 1])}) -> ${t([256, 64, 1])} {
  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %d, %du, %b) : (${t([256, 64])}, ${t([256, 64])}, ${t([256, 64])}, ${t([256, 64, 1])}) -> (${t([256, 64])}, ${t([256, 64])}, ${t([256, 64])}, ${t([256, 64, 1])}, ${t([256], "i32")})
  return %0#3 : ${t([256, 64, 1])}
}`,
    operands: [[256, 64], [256, 64], [256, 64], [256, 64, 1]],
  },
  gehrd: {
    text: `func.func @main(%a: ${m64}) -> ${m64} {
  %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 64 : i32, low = 1 : i32}} : (${m64}) -> (${m64}, ${t([16, 63])}, ${t([16], "i32")})
  return %0#0 : ${m64}
}`,
    operands: [[16, 64, 64]],
  },
  sytrd: {
    text: `func.func @main(%a: ${m64}) -> ${m64} {
  %0:5 = stablehlo.custom_call @lapack_ssytrd_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (${m64}) -> (${m64}, ${t([16, 64])}, ${t([16, 63])}, ${t([16, 63])}, ${t([16], "i32")})
  return %0#0 : ${m64}
}`,
    operands: [[16, 64, 64]],
  },
  gesdd: {
    text: `func.func @main(%a: ${m64}) -> ${t([16, 64])} {
  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (${m64}) -> (${m64}, ${t([16, 64])}, ${m64}, ${m64}, ${t([16], "i32")})
  return %0#1 : ${t([16, 64])}
}`,
    operands: [[16, 64, 64]],
  },
  gees32: gees(32),
  geev32: geev(32),
  gees64: gees(64),
  geev64: geev(64),
  cgetrf: {
    text: `func.func @main(%a: ${c64}) -> (${c64}, ${t([16, 64], "i32")}) {
  %0:3 = stablehlo.custom_call @lapack_cgetrf_ffi(%a) : (${c64}) -> (${c64}, ${t([16, 64], "i32")}, ${t([16], "i32")})
  return %0#0, %0#1 : ${c64}, ${t([16, 64], "i32")}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
  cgeqrf_ungqr: {
    text: `func.func @main(%a: ${c64}) -> ${c64} {
  %0:2 = stablehlo.custom_call @lapack_cgeqrf_ffi(%a) : (${c64}) -> (${c64}, ${t([16, 64], "complex<f32>")})
  %1 = stablehlo.custom_call @lapack_cungqr_ffi(%0#0, %0#1) : (${c64}, ${t([16, 64], "complex<f32>")}) -> ${c64}
  return %1 : ${c64}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
  ctrsm: {
    text: `func.func @main(%a: ${c64}, %b: ${c64}) -> ${c64} {
  %0 = stablehlo.custom_call @lapack_ctrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}} : (${c64}, ${c64}) -> ${c64}
  return %0 : ${c64}
}`,
    operands: [[16, 64, 64], [16, 64, 64]], complex: true,
  },
  cgesdd: {
    text: `func.func @main(%a: ${c64}) -> (${t([16, 64])}, ${c64}, ${c64}) {
  %0:5 = stablehlo.custom_call @lapack_cgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (${c64}) -> (${c64}, ${t([16, 64])}, ${c64}, ${c64}, ${t([16], "i32")})
  return %0#1, %0#2, %0#3 : ${t([16, 64])}, ${c64}, ${c64}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
  cgehrd: {
    text: `func.func @main(%a: ${c64}) -> ${c64} {
  %0:3 = stablehlo.custom_call @lapack_cgehrd_ffi(%a) {mhlo.backend_config = {high = 64 : i32, low = 1 : i32}} : (${c64}) -> (${c64}, ${t([16, 63], "complex<f32>")}, ${t([16], "i32")})
  return %0#0 : ${c64}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
  cgtsv: {
    text: `func.func @main(%dl: ${t([256, 64], "complex<f32>")}, %d: ${t([256, 64], "complex<f32>")}, %du: ${t([256, 64], "complex<f32>")}, %b: ${t([256, 64, 1], "complex<f32>")}) -> ${t([256, 64, 1], "complex<f32>")} {
  %0:5 = stablehlo.custom_call @lapack_cgtsv_ffi(%dl, %d, %du, %b) : (${t([256, 64], "complex<f32>")}, ${t([256, 64], "complex<f32>")}, ${t([256, 64], "complex<f32>")}, ${t([256, 64, 1], "complex<f32>")}) -> (${t([256, 64], "complex<f32>")}, ${t([256, 64], "complex<f32>")}, ${t([256, 64], "complex<f32>")}, ${t([256, 64, 1], "complex<f32>")}, ${t([256], "i32")})
  return %0#3 : ${t([256, 64, 1], "complex<f32>")}
}`,
    operands: [[256, 64], [256, 64], [256, 64], [256, 64, 1]], complex: true,
  },
  chetrd: {
    text: `func.func @main(%a: ${c64}) -> (${c64}, ${t([16, 64])}) {
  %0:5 = stablehlo.custom_call @lapack_chetrd_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (${c64}) -> (${c64}, ${t([16, 64])}, ${t([16, 63])}, ${t([16, 63], "complex<f32>")}, ${t([16], "i32")})
  return %0#0, %0#1 : ${c64}, ${t([16, 64])}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
  cgees32: complexGees(32),
  cgeev32: complexGeev(32),
  cheevd: {
    text: `func.func @main(%a: ${c64}) -> (${c64}, ${t([16, 64])}) {
  %0:3 = stablehlo.custom_call @lapack_cheevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (${c64}) -> (${c64}, ${t([16, 64])}, ${t([16], "i32")})
  return %0#0, %0#1 : ${c64}, ${t([16, 64])}
}`,
    operands: [[16, 64, 64]], complex: true,
  },
};

const { rounds, only } = probeArgs("webgpu_linalg_probe", {
  words: [
    { name: "rounds", kind: "number", default: 8, min: 1, integer: true, help: "rounds, the two alternating" },
    { name: "only", kind: "string", choices: Object.keys(CALLS), help: "only the call of this name" },
  ],
});

let seed = 12345;
const random = (): number => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 31 - 1;
};

for (const [name, { text, operands, complex }] of Object.entries(CALLS)) {
  if (only !== undefined && name !== only) continue;
  const program = parseStableHlo(text).entry;
  // A complex operand's diagonal is raised by 8 (ctrsm's triangle well conditioned; the others do not mind).
  const value = (e: number, n: number): number | { re: number; im: number } => (complex ? { re: Math.fround(random() + (Math.floor(e / n) % n === e % n ? 8 : 0)), im: Math.fround(random()) } : Math.fround(random()));
  const args = operands.map((dims) => Literal.fromValues(complex ? "c64" : "f32", dims, Array.from({ length: elementCount(dims) }, (_, e) => value(e, dims.at(-1)!)) as never));
  const { compileMs, ...times } = await gpuBesideHost(name, program, args, rounds);
  const f = (xs: readonly number[]): string => `best ${Math.min(...xs).toFixed(0)} / median ${median(xs).toFixed(0)} ms`;
  console.log(`${name}: kernel ${f(times.gpu)} (CPU median ${median(times.gpuCpu).toFixed(0)} ms); interpreter ${f(times.host)} (CPU median ${median(times.hostCpu).toFixed(0)} ms); pipeline ${compileMs.toFixed(0)} ms; load ${loadavg()[0]!.toFixed(1)}`);
}
releaseGpu();
