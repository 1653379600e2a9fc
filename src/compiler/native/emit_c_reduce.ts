// Input (reduction) fusions as C, over the loop nest of kernel/reduce_loops.ts: rows
// (one work unit each), the reduced dimensions r, the kept dimensions after them j.
//
//  - Row reductions (J = 1) of floats, integers and pred with a recognized reducer run
//    LANES independent accumulators side by side (the inner `l` loop has no carried
//    dependence, so the compiler vectorizes it without reassociating anything itself),
//    combined at the end of the row, then a scalar tail: floats are reassociated, as
//    by the WebAssembly kernel and XLA's CPU backend; integer and min/max results are
//    exact in any order.
//  - Column reductions (J > 1): accumulators for a block of j, the j loop innermost
//    (contiguous, vectorized) inside the r loop.
//  - f16 and bf16 accumulators and generic reducers (argmax...) run in the
//    interpreter's order (init first, then the elements in row-major order), one
//    element at a time, so their results are exact.
//  - Row pipelines (softmax: a reduction reads an earlier one's result along the row)
//    run their stages one after the other over the row; each stage's loop computes
//    what it needs again (row mode only).

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { FusedKernelIR, ReducerKind } from "../kernel/lower_fusion.js";
import { dependsOn, reachable } from "../kernel/kernel_plan.js";
import { reduceLoops } from "../kernel/reduce_loops.js";
import { rowAccess } from "../kernel/row_access.js";
import { identity } from "../wasm/emit_reduce.js";
import { bufferPointer, symbolize, SYM } from "./c_source.js";
import { CFail, CValues, cConst, cType, isHalf, wrap } from "./c_values.js";
import { LoadPlan } from "./emit_c_loop.js";
import type { NativeKernel } from "./kernel.js";

/** Bytes of accumulators a row reduction keeps side by side (four 512-bit vectors). */
const LANE_BYTES = 256;
/** Outputs a column reduction accumulates at once. */
const COLUMN_BLOCK = 256;

const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/** acc ⊕ x in C for a recognized reducer. */
function combine(kind: ReducerKind, t: ElementType, a: string, b: string): string {
  const kindOf = ELEMENT_TYPES[t].kind;
  if (isHalf(t)) {
    const dec = t === "f16" ? "xk_dec_f16" : "xk_dec_bf16";
    const enc = t === "f16" ? "xk_enc_f16" : "xk_enc_bf16";
    const x = `${dec}(${a})`, y = `${dec}(${b})`;
    switch (kind) {
      case "add": return `${enc}(${x} + ${y}, 0)`;
      case "mul": return `${enc}(${x} * ${y}, 0)`;
      case "max": return `${enc}(xk_max(${x}, ${y}), 0)`;
      case "min": return `${enc}(xk_min(${x}, ${y}), 0)`;
      default: throw new CFail(`${kind} reduction of ${t}`);
    }
  }
  if (kindOf === "float") {
    const f32 = t === "f32";
    switch (kind) {
      case "add": return `(${a} + ${b})`;
      case "mul": return `(${a} * ${b})`;
      case "max": return f32 ? `xk_maxf(${a}, ${b})` : `xk_max(${a}, ${b})`;
      case "min": return f32 ? `xk_minf(${a}, ${b})` : `xk_min(${a}, ${b})`;
      default: throw new CFail(`${kind} reduction of ${t}`);
    }
  }
  const u = ELEMENT_TYPES[t].bitWidth === 64 ? "uint64_t" : "uint32_t";
  switch (kind) {
    case "add": return t === "pred" ? `((uint8_t)(${a} | ${b}))` : wrap(t, `((${u})${a} + (${u})${b})`);
    case "mul": return t === "pred" ? `((uint8_t)(${a} & ${b}))` : wrap(t, `((${u})${a} * (${u})${b})`);
    case "max": return `(${a} > ${b} ? ${a} : ${b})`;
    case "min": return `(${a} < ${b} ? ${a} : ${b})`;
    case "and": return wrap(t, `(${a} & ${b})`);
    case "or": return wrap(t, `(${a} | ${b})`);
  }
}

export function emitReduceKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  const red = ir.reduce!;
  const L = reduceLoops(ir);
  const { graph: g, rowVar, rVar, jVar, rows, Rn, J, values, inits, outputs } = L;
  const K = red.reductions.length;
  const nIn = ir.inputs.length;
  const columnMode = J > 1;
  const fullOut = ir.outputs.flatMap((o, k) => (o.full === true ? [k] : []));
  const reducedOut = ir.outputs.flatMap((o, k) => (o.full === true ? [] : [k]));
  if (fullOut.length > 0 && L.reduced.some((d, k) => k > 0 && d !== L.reduced[k - 1]! + 1)) {
    throw new CFail("full-shape outputs of a reduction over non-adjacent dimensions");
  }
  const accumsOf = (roots: readonly number[]): number[] =>
    reachable(g, roots).flatMap((id) => (g.node(id).op === "accum" ? [g.node(id).attr as number] : []));
  // Stages: a reduction (or full output) runs after the reductions whose results it reads.
  const stage: number[] = [];
  red.reductions.forEach((_, k) => { stage[k] = Math.max(0, ...accumsOf([values[k]!]).map((a) => stage[a]! + 1)); });
  const fullStage = new Map(fullOut.map((k) => [k, Math.max(0, ...accumsOf([outputs[k]!]).map((a) => stage[a]! + 1))]));
  const S = 1 + Math.max(0, ...stage, ...fullStage.values());
  if (S > 1 && columnMode) throw new CFail("a row pipeline needs the reduced dimensions last");
  /** Generic reducers: for reduction k, its group's first reduction and parameter and result nodes. */
  const generic = red.reductions.map((r, k) => (r.generic === undefined ? undefined : {
    first: k - r.generic.k, n: r.generic.body.results.length,
    params: r.generic.body.params.map(L.map), results: r.generic.body.results.map(L.map),
  }));

  const lines: string[] = [];
  const accName = (k: number): string => `acc${k}`;
  const resName = (k: number): string => `res${k}`;
  /** Names of leaves in the current context: loop variables, reduction results, reducer parameters. */
  let leafNames = new Map<number, string>();
  const leaf = (id: number): string => leafNames.get(id) ?? (() => { throw new Error(`leaf node ${id} (${g.node(id).op}) has no name here`); })();
  const accumNode = new Map<number, number>();
  for (const n of g.nodes) if (n.op === "accum") accumNode.set(n.id, n.attr as number);

  lines.push(`static void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {`);
  lines.push(`  for (int64_t row = begin; row < end; row++) {`);
  const outPtr = (k: number, indent: string): void => {
    const o = ir.outputs[k]!;
    const t = cType(o.type);
    const perRow = o.full === true ? Rn * J : J;
    lines.push(`${indent}${t} *restrict out${k} = ${bufferPointer(t, nIn + k, `row * ${perRow}`, storageBytes(o.type), false)};`);
  };
  ir.outputs.forEach((_, k) => outPtr(k, "    "));
  const sharedLeaves = (): Map<number, string> => new Map<number, string>([
    [rowVar, "row"],
    ...[...accumNode.entries()].map(([id, k]) => [id, columnMode ? `${resName(k)}[j - j0]` : resName(k)] as [number, string]),
  ]);

  /**
   * One pass over the elements: the loop over `innerVar` (named `inner`) from `from`
   * to `to` with the nodes of `roots` computed per element, after the per-iteration
   * ones. `step` adds the statements that use the element's values (names by node).
   */
  const elementLoop = (
    roots: readonly number[], innerVar: number, indent: string, header: string, inner: string,
    leaves: Map<number, string>, step: (v: CValues, indent: string) => void, prefix: string,
  ): void => {
    const nodes = reachable(g, roots);
    const loads = new LoadPlan(g, nodes, innerVar, inner);
    const all = reachable(g, [...roots, ...loads.baseNodes]);
    const varying = dependsOn(g, all, innerVar);
    leafNames = new Map([...leaves, [innerVar, inner]]);
    const v = new CValues(g, { load: loads.load, leaf: (n) => leaf(n.id) }, prefix);
    loads.names = v.names;
    lines.push(`${indent}{`);
    v.emit(all.filter((id) => !varying.has(id)), lines, `${indent}  `);
    lines.push(...loads.pointers(v.names).map((l) => `${indent}  ${l}`));
    lines.push(`${indent}${header}`);
    v.emit(all.filter((id) => varying.has(id)), lines, `${indent}    `);
    step(v, `${indent}    `);
    lines.push(`${indent}  }`);
    lines.push(`${indent}}`);
  };

  const fullStores = (ks: readonly number[], rIndex: string, jIndex: string) => (v: CValues, indent: string): void => {
    for (const k of ks) lines.push(`${indent}out${k}[${rIndex} * ${J} + ${jIndex}] = ${v.names.get(outputs[k]!)};`);
  };
  /** The body statements of generic reducers: their results from the accumulators and elements, then assigned. */
  const genericStep = (ks: readonly number[], acc: (k: number) => string) => (v: CValues, indent: string): void => {
    const firsts = [...new Set(ks.flatMap((k) => (generic[k] === undefined ? [] : [generic[k]!.first])))];
    for (const first of firsts) {
      const gen = generic[first]!;
      const names = new Map(leafNames);
      gen.params.forEach((p, i) => names.set(p, i < gen.n ? acc(first + i) : v.names.get(values[first + i - gen.n]!)!));
      const saved = leafNames;
      leafNames = names;
      const body = new CValues(g, { load: () => { throw new CFail("a reducer body reads memory"); }, leaf: (n) => leaf(n.id) }, `b${first}_`);
      lines.push(`${indent}{`);
      body.emit(reachable(g, gen.results), lines, `${indent}  `);
      gen.results.forEach((r, i) => lines.push(`${indent}  ${cType(g.node(r).type)} next${i} = ${body.names.get(r)};`));
      gen.results.forEach((_, i) => lines.push(`${indent}  ${acc(first + i)} = next${i};`));
      lines.push(`${indent}}`);
      leafNames = saved;
    }
  };
  /** A reduction that runs in the interpreter's order: generic, or of a half type. */
  const sequential = (k: number): boolean => generic[k] !== undefined || isHalf(red.reductions[k]!.type);
  const recognizedStep = (ks: readonly number[], acc: (k: number) => string) => (v: CValues, indent: string): void => {
    for (const k of ks) {
      const r = red.reductions[k]!;
      if (r.kind === "generic") continue;
      lines.push(`${indent}${acc(k)} = ${combine(r.kind, r.type, acc(k), v.names.get(values[k]!)!)};`);
    }
  };
  /** Statements computing the inits of `ks` (output context) into init<k>. */
  const initValues = (ks: readonly number[], indent: string, leaves: Map<number, string>, prefix: string): void => {
    leafNames = leaves;
    const v = new CValues(g, { load: () => { throw new CFail("a reduction's init reads memory"); }, leaf: (n) => leaf(n.id) }, prefix);
    v.emit(reachable(g, ks.map((k) => inits[k]!)), lines, indent);
    for (const k of ks) lines.push(`${indent}const ${cType(red.reductions[k]!.type)} init${k} = ${v.names.get(inits[k]!)};`);
  };

  if (!columnMode) {
    lines.push(`    const int64_t j = 0; (void)j;`);
    for (let s = 0; s < S; s++) {
      const ks = red.reductions.flatMap((_, k) => (stage[k] === s ? [k] : []));
      const fulls = fullOut.filter((k) => fullStage.get(k) === s);
      const roots = [...ks.map((k) => values[k]!), ...fulls.map((k) => outputs[k]!)];
      for (const k of ks) lines.push(`    ${cType(red.reductions[k]!.type)} ${resName(k)};`);
      lines.push(`    {`);
      const base = new Map([...sharedLeaves(), [jVar, "j"] as [number, string]]);
      initValues(ks, "      ", base, `i${s}_`);
      const lanesOk = ks.every((k) => !sequential(k)) && Rn >= 2;
      if (lanesOk) {
        const width = Math.max(1, ...ks.map((k) => storageBytes(red.reductions[k]!.type)));
        const lanes = Math.max(4, Math.floor(LANE_BYTES / width));
        for (const k of ks) {
          const r = red.reductions[k]!;
          const id = cConst(r.type, identity(r.kind as ReducerKind, r.type));
          lines.push(`      ${cType(r.type)} lane${k}[${lanes}];`);
          lines.push(`      for (int l = 0; l < ${lanes}; l++) lane${k}[l] = ${id};`);
        }
        lines.push(`      int64_t r = 0;`);
        lines.push(`      for (; r + ${lanes} <= ${Rn}; r += ${lanes}) {`);
        elementLoop(roots, rVar, "        ", `#pragma GCC ivdep\n          for (int l = 0; l < ${lanes}; l++) {\n            const int64_t rr = r + l;`, "rr", base,
          (v, indent) => { recognizedStep(ks, (k) => `lane${k}[l]`)(v, indent); fullStores(fulls, "rr", "j")(v, indent); }, `a${s}_`);
        lines.push(`      }`);
        for (const k of ks) {
          const r = red.reductions[k]!;
          lines.push(`      ${cType(r.type)} ${accName(k)} = lane${k}[0];`);
          lines.push(`      for (int l = 1; l < ${lanes}; l++) ${accName(k)} = ${combine(r.kind as ReducerKind, r.type, accName(k), `lane${k}[l]`)};`);
        }
        elementLoop(roots, rVar, "      ", `  for (; r < ${Rn}; r++) {`, "r", base,
          (v, indent) => { recognizedStep(ks, accName)(v, indent); fullStores(fulls, "r", "j")(v, indent); }, `t${s}_`);
        for (const k of ks) {
          const r = red.reductions[k]!;
          lines.push(`      ${resName(k)} = ${combine(r.kind as ReducerKind, r.type, `init${k}`, accName(k))};`);
        }
      } else {
        for (const k of ks) lines.push(`      ${cType(red.reductions[k]!.type)} ${accName(k)} = init${k};`);
        elementLoop(roots, rVar, "      ", `  for (int64_t r = 0; r < ${Rn}; r++) {`, "r", base, (v, indent) => {
          recognizedStep(ks.filter((k) => generic[k] === undefined), accName)(v, indent);
          genericStep(ks.filter((k) => generic[k] !== undefined), accName)(v, indent);
          fullStores(fulls, "r", "j")(v, indent);
        }, `s${s}_`);
        for (const k of ks) lines.push(`      ${resName(k)} = ${accName(k)};`);
      }
      lines.push(`    }`);
    }
    // The per-row outputs.
    leafNames = new Map([...sharedLeaves(), [jVar, "j"]]);
    const v = new CValues(g, { load: () => { throw new CFail("an epilogue reads memory"); }, leaf: (n) => leaf(n.id) }, "e");
    v.emit(reachable(g, reducedOut.map((k) => outputs[k]!)), lines, "    ");
    for (const k of reducedOut) lines.push(`    out${k}[0] = ${v.names.get(outputs[k]!)};`);
  } else {
    const B = Math.min(COLUMN_BLOCK, J);
    lines.push(`    for (int64_t j0 = 0; j0 < ${J}; j0 += ${B}) {`);
    lines.push(`      const int64_t j1 = j0 + ${B} < ${J} ? j0 + ${B} : ${J};`);
    const ks = red.reductions.map((_, k) => k);
    for (const k of ks) lines.push(`      ${cType(red.reductions[k]!.type)} ${accName(k)}[${B}], ${resName(k)}[${B}];`);
    // Inits are in output context (row, j): per j.
    lines.push(`      for (int64_t j = j0; j < j1; j++) {`);
    initValues(ks, "        ", new Map([...sharedLeaves(), [jVar, "j"]]), "i_");
    for (const k of ks) {
      const r = red.reductions[k]!;
      lines.push(`        ${accName(k)}[j - j0] = ${sequential(k) ? `init${k}` : cConst(r.type, identity(r.kind as ReducerKind, r.type))};`);
    }
    lines.push(`      }`);
    const roots = [...values, ...fullOut.map((k) => outputs[k]!)];
    lines.push(`      for (int64_t r = 0; r < ${Rn}; r++) {`);
    elementLoop(roots, jVar, "        ", `#pragma GCC ivdep\n          for (int64_t j = j0; j < j1; j++) {`, "j", new Map([...sharedLeaves(), [rVar, "r"]]), (v, indent) => {
      recognizedStep(ks.filter((k) => generic[k] === undefined), (k) => `${accName(k)}[j - j0]`)(v, indent);
      genericStep(ks.filter((k) => generic[k] !== undefined), (k) => `${accName(k)}[j - j0]`)(v, indent);
      fullStores(fullOut, "r", "j")(v, indent);
    }, "c_");
    lines.push(`      }`);
    lines.push(`      for (int64_t j = j0; j < j1; j++) {`);
    initValues(ks.filter((k) => !sequential(k)), "        ", new Map([...sharedLeaves(), [jVar, "j"]]), "f_");
    for (const k of ks) {
      const r = red.reductions[k]!;
      lines.push(`        ${resName(k)}[j - j0] = ${sequential(k) ? `${accName(k)}[j - j0]` : combine(r.kind as ReducerKind, r.type, `init${k}`, `${accName(k)}[j - j0]`)};`);
    }
    leafNames = new Map([...sharedLeaves(), [jVar, "j"]]);
    const v = new CValues(g, { load: () => { throw new CFail("an epilogue reads memory"); }, leaf: (n) => leaf(n.id) }, "e");
    v.emit(reachable(g, reducedOut.map((k) => outputs[k]!)), lines, "        ");
    for (const k of reducedOut) lines.push(`        out${k}[j] = ${v.names.get(outputs[k]!)};`);
    lines.push(`      }`);
    lines.push(`    }`);
  }
  lines.push(`  }`);
  lines.push(`}`);
  void K;
  const bytesIn = ir.inputs.reduce((s, x) => s + storageBytes(x.type) * x.dims.reduce((a, b) => a * b, 1), 0);
  return {
    name,
    c: symbolize("reduce", lines.join("\n")),
    operandCount: nIn,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: rows,
    costPerUnit: Math.ceil(bytesIn / Math.max(1, rows)) + Rn * J * S,
    rows: rowAccess(ir, L.outerKept),
  };
}
