// The GEMM microkernel families of the native backend: one per kind of vector unit,
// chosen from the CPU the module is built on (NativeCpu), each an mr x nr tile of C
// held in vector registers (accumulators + B vectors + one broadcast of A fit the
// register file):
//
//   avx512    32 zmm: 14 x 2 vectors (f32 14 x 32, f64 14 x 16), intrinsics, FMA
//   avx2      16 ymm (with FMA): 6 x 2 vectors (f32 6 x 16, f64 6 x 8), intrinsics
//   neon      32 q registers: 8 x 3 vectors of 16 bytes (f32 8 x 12), GCC/Clang vector
//             extensions, which both compile to NEON fused multiply-adds on aarch64
//   portable  16 registers of 16 bytes (SSE2, or whatever the target has): 4 x 2 vectors,
//             vector extensions
//
// The x86 families are compiled through `__attribute__((target(...)))`, so each can be
// built (and tested) on any x86-64 machine that can run it, whatever -march says.

import type { GemmElement, GemmTarget } from "../kernel/gemm_plan.js";
import type { NativeCpu } from "./kernel.js";

export type GemmFamilyName = "avx512" | "avx2" | "neon" | "portable";

export interface GemmFamily {
  readonly name: GemmFamilyName;
  /** Its microkernel as the schedule sees it (kernel/gemm_plan.ts): vectors, tile, blocking. */
  readonly target: GemmTarget;
}

interface FamilyCode {
  readonly rows: number;
  readonly vectors: number;
  readonly vectorBytes: number;
  /** Text before the microkernel (includes, typedefs), given its prefix. */
  readonly head: (prefix: string, type: GemmElement) => string;
  readonly attribute: string;
  readonly vec: (prefix: string, type: GemmElement) => string;
  /** The C expressions, given the element type and the vector type's name. */
  readonly zero: (type: GemmElement, vt: string) => string;
  readonly load: (type: GemmElement, vt: string, ptr: string) => string;
  readonly store: (type: GemmElement, ptr: string, v: string) => string;
  readonly splat: (type: GemmElement, vt: string, x: string) => string;
  readonly fma: (type: GemmElement, a: string, b: string, c: string) => string;
  readonly add: (type: GemmElement, a: string, b: string) => string;
}

const x86 = (bits: 256 | 512, rows: number, attribute: string): FamilyCode => {
  const ps = (type: GemmElement): string => (type === "f32" ? "ps" : "pd");
  const mm = `_mm${bits === 512 ? "512" : "256"}`;
  return {
    rows,
    vectors: 2,
    vectorBytes: bits / 8,
    head: () => "#include <immintrin.h>\n",
    attribute: `__attribute__((target("${attribute}")))`,
    vec: (_p, type) => `__m${bits}${type === "f32" ? "" : "d"}`,
    zero: (type) => `${mm}_setzero_${ps(type)}()`,
    load: (type, _vt, ptr) => `${mm}_loadu_${ps(type)}(${ptr})`,
    store: (type, ptr, v) => `${mm}_storeu_${ps(type)}(${ptr}, ${v})`,
    splat: (type, _vt, x) => `${mm}_set1_${ps(type)}(${x})`,
    fma: (type, a, b, c) => `${mm}_fmadd_${ps(type)}(${a}, ${b}, ${c})`,
    add: (type, a, b) => `${mm}_add_${ps(type)}(${a}, ${b})`,
  };
};

const vectorExtensions = (rows: number, vectors: number): FamilyCode => {
  const t = (type: GemmElement): string => (type === "f32" ? "float" : "double");
  return {
    rows,
    vectors,
    vectorBytes: 16,
    head: (p, type) => `typedef ${t(type)} ${p}_v __attribute__((vector_size(16)));\n`,
    attribute: "",
    vec: (p) => `${p}_v`,
    zero: (_type, vt) => `(${vt}){0}`,
    // memcpy: unaligned, no aliasing questions; compilers turn it into one vector load/store.
    load: (_type, vt, ptr) => `({ ${vt} v_; __builtin_memcpy(&v_, ${ptr}, sizeof v_); v_; })`,
    store: (_type, ptr, v) => `__builtin_memcpy(${ptr}, &${v}, sizeof ${v})`,
    splat: (_type, vt, x) => `((${vt}){0} + (${x}))`,
    fma: (_type, a, b, c) => `${c} + ${a} * ${b}`,
    add: (_type, a, b) => `${a} + ${b}`,
  };
};

const CODE: Record<GemmFamilyName, FamilyCode> = {
  avx512: x86(512, 14, "avx512f"),
  avx2: x86(256, 6, "avx2,fma"),
  neon: vectorExtensions(8, 3),
  portable: vectorExtensions(4, 2),
};

export function familyByName(name: GemmFamilyName): GemmFamily {
  const code = CODE[name];
  return { name, target: { vectorBytes: code.vectorBytes, tileRows: code.rows, tileVectors: code.vectors, blocking: "l2-blocks" } };
}

/** The best family the CPU runs. */
export function gemmFamily(cpu: NativeCpu): GemmFamily {
  if (cpu.arch === "x86_64" && cpu.avx512f) return familyByName("avx512");
  if (cpu.arch === "x86_64" && cpu.avx2 && cpu.fma) return familyByName("avx2");
  if (cpu.neon) return familyByName("neon");
  return familyByName("portable");
}

/**
 * `static void <prefix>_micro(int64_t kl, const T *a, const T *b, T *c, int64_t ldc, int acc)`:
 * the mr x nr tile at c (row stride ldc elements) gets (acc ? itself : 0) + sum over kl
 * steps of A times a panel of B (nr per step). A is a packed panel (mr per step), or,
 * given `aRowStride`, mr rows read in place (row r at a + r * aRowStride, one element
 * per step: the convolution's patch rows, which stay in L1).
 */
export function microkernelSource(family: GemmFamily, type: GemmElement, prefix: string, aRowStride?: number): string {
  const code = CODE[family.name];
  const t = type === "f32" ? "float" : "double";
  const mr = code.rows;
  const nv = code.vectors;
  const lanes = code.vectorBytes / (type === "f32" ? 4 : 8);
  const nr = nv * lanes;
  const v = code.vec(prefix, type);
  const accs: string[] = [];
  for (let r = 0; r < mr; r++) for (let j = 0; j < nv; j++) accs.push(`c_${r}_${j}`);
  const lines: string[] = [];
  lines.push(code.head(prefix, type));
  lines.push(`static ${code.attribute} void ${prefix}_micro(int64_t kl, const ${t} *restrict a, const ${t} *restrict b, ${t} *restrict c, int64_t ldc, int acc) {`);
  lines.push(`  ${v} ${accs.map((x) => `${x} = ${code.zero(type, v)}`).join(", ")};`);
  lines.push(`  for (int64_t p = 0; p < kl; p++) {`);
  for (let j = 0; j < nv; j++) lines.push(`    ${v} b${j} = ${code.load(type, v, `b + ${j * lanes}`)};`);
  for (let r = 0; r < mr; r++) {
    lines.push(`    { ${v} ar = ${code.splat(type, v, `a[${aRowStride === undefined ? r : r * aRowStride}]`)};`);
    for (let j = 0; j < nv; j++) lines.push(`      c_${r}_${j} = ${code.fma(type, "ar", `b${j}`, `c_${r}_${j}`)};`);
    lines.push("    }");
  }
  lines.push(`    a += ${aRowStride === undefined ? mr : 1}; b += ${nr};`);
  lines.push("  }");
  lines.push("  if (acc) {");
  for (let r = 0; r < mr; r++) for (let j = 0; j < nv; j++) lines.push(`    c_${r}_${j} = ${code.add(type, `c_${r}_${j}`, code.load(type, v, `c + ${r} * ldc + ${j * lanes}`))};`);
  lines.push("  }");
  for (let r = 0; r < mr; r++) for (let j = 0; j < nv; j++) lines.push(`  ${code.store(type, `c + ${r} * ldc + ${j * lanes}`, `c_${r}_${j}`)};`);
  lines.push("}");
  return lines.join("\n");
}
