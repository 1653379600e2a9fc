// Loop planning shared by the loop and reduction emitters: collapsing loop dimensions
// that every load walks contiguously, and splitting a node set into what is invariant
// along the innermost loop (computed once per row) and what varies with it.

import { constantValue, KernelGraph, type Node } from "./graph.js";
import { unlinearize } from "./lower_fusion.js";
import { appendAll } from "../../types/arrays.js";
import { elementCount } from "../../types/shape.js";

/**
 * Rebuilds the nodes `roots` of `g` into a new graph through the smart constructors,
 * with each variable replaced as `vars` says (a node of the new graph), and any node
 * for which `substitute` gives one replaced by it.
 */
export function rebuild(
  g: KernelGraph, roots: readonly number[], vars: (dim: number, size: number, out: KernelGraph) => number, out = new KernelGraph(),
  substitute?: (id: number, out: KernelGraph) => number | undefined,
): { graph: KernelGraph; map: (id: number) => number } {
  const memo = new Map<number, number>();
  const visit = (id: number): number => {
    let r = memo.get(id);
    if (r !== undefined) return r;
    r = substitute?.(id, out);
    if (r !== undefined) {
      memo.set(id, r);
      return r;
    }
    const n = g.node(id);
    const a = n.args.map(visit);
    r = rebuildNode(out, n, a, vars, g);
    memo.set(id, r);
    return r;
  };
  for (const r of roots) visit(r);
  return { graph: out, map: visit };
}

function rebuildNode(
  o: KernelGraph, n: Node, a: readonly number[], vars: (dim: number, size: number, out: KernelGraph) => number, g: KernelGraph,
): number {
  switch (n.op) {
    case "var": return vars(n.attr as number, g.varSizes.get(n.attr as number)!, o);
    case "iconst": return o.iconst(n.attr as number);
    case "iadd": return o.add(a[0]!, a[1]!);
    case "imul": return o.mul(a[0]!, n.attr as number);
    case "idiv": return o.div(a[0]!, n.attr as number);
    case "imod": return o.mod(a[0]!, n.attr as number);
    case "imin": return o.min(a[0]!, a[1]!);
    case "imax": return o.max(a[0]!, a[1]!);
    case "iselect": return o.iselect(a[0]!, a[1]!, a[2]!);
    case "toIdx": return o.toIdx(a[0]!);
    case "ilt": return o.lt(a[0]!, a[1]!);
    case "ieq": return o.eq(a[0]!, a[1]!);
    case "cand": return o.cand(a[0]!, a[1]!);
    case "ctrue": return o.ctrue();
    case "load": return o.load(n.attr as number, n.type as never, a[0]!);
    case "const": return o.constant(n.type as never, constantValue(n));
    case "fromIdx": return o.fromIdx(n.type as never, a[0]!);
    case "condToPred": return o.condToPred(a[0]!);
    case "accum": return o.accum(n.attr as number, n.type as never);
    default: return o.op(n.op, n.type as never, a, n.attr as string | number | undefined);
  }
}

/** Nodes reachable from `roots`, ascending (operands before users). */
export function reachable(g: KernelGraph, roots: readonly number[]): number[] {
  const seen = new Set<number>();
  const stack = [...roots];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    appendAll(stack, g.node(id).args);
  }
  return [...seen].sort((x, y) => x - y);
}

/** Which nodes depend on variable node `v`. */
export function dependsOn(g: KernelGraph, nodes: readonly number[], v: number): Set<number> {
  const dep = new Set<number>();
  for (const id of nodes) {
    if (id === v || g.node(id).args.some((a) => dep.has(a))) dep.add(id);
  }
  return dep;
}

/** offset = base + stride · v with base independent of v, or undefined. */
export function splitAffine(g: KernelGraph, offset: number, v: number): { base: number; stride: number } | undefined {
  const aff = g.affine(offset);
  const stride = aff.terms.get(v) ?? 0;
  for (const atom of aff.terms.keys()) {
    if (atom !== v && dependsOn(g, reachable(g, [atom]), v).has(atom)) return undefined;
  }
  return { base: g.add(offset, g.mul(v, -stride)), stride };
}

export interface Collapsed {
  readonly graph: KernelGraph;
  /** Sizes of the loops kept outside, then the inner (collapsed) loop. */
  readonly outer: readonly number[];
  readonly inner: number;
  readonly outerVars: readonly number[];
  readonly innerVar: number;
  readonly roots: readonly number[];
  /** Whether the domain's last dimension was split into (outer, inner) loops (then the outer loops are no longer the domain's dimensions). */
  readonly split: boolean;
}

/** Inner loops shorter than this collapse over an iota's dimension rather than keep it out (a loop over a few elements costs more than the iota's division). */
const MIN_IOTA_RUN = 16;

/** Runs shorter than this stay a gather: a loop over a few elements costs more than it saves. */
const MIN_SPLIT_RUN = 8;

/**
 * Collapses domain dimensions [k, n) of a loop nest into one inner loop, for the
 * smallest k that keeps every load's offset and every iota's index affine in the inner
 * variable with an inner loop of MIN_IOTA_RUN or more, else for the smallest that keeps
 * every load's offset affine.
 * `roots` are the nodes to keep; `extraVars` maps other variables (reduction output
 * variables) unchanged. Where even the last dimension alone reads some operand out of
 * order, it is split at the longest run (a divisor of it, at least MIN_SPLIT_RUN) that
 * every load reads in order: a transpose back from heads, [12,128,64] to [128,768],
 * reads runs of 64, which vector loads then copy instead of one element at a time.
 */
export function collapseDomain(g: KernelGraph, domain: readonly number[], roots: readonly number[]): Collapsed {
  const r = domain.length;
  const affineIn = (c: Collapsed, ops: readonly string[]): boolean => reachable(c.graph, c.roots).every((id) => {
    const n = c.graph.node(id);
    return !ops.includes(n.op) || splitAffine(c.graph, n.args[0]!, c.innerVar) !== undefined;
  });
  const affine = (c: Collapsed): boolean => affineIn(c, ["load"]);
  // Iotas too, where the inner loop stays at least MIN_IOTA_RUN long: an iota of a
  // collapsed dimension is a division and a remainder of the inner index per element,
  // which no vector form takes (GPT-2's causal mask over [12,128,128] as a loop kernel of
  // its own, collapsed whole: 25 us of CPU; in rows of 128 that compare a lane iota with
  // the row's index: 8, 2026-12-01).
  let loadsAffine: Collapsed | undefined;
  for (let k = 0; k < Math.max(1, r) - 1; k++) {
    const c = collapseAt(g, domain, roots, k);
    if (!affine(c)) continue;
    loadsAffine ??= c;
    if (c.inner < MIN_IOTA_RUN) break;
    if (affineIn(c, ["fromIdx"])) return c;
  }
  const last = collapseAt(g, domain, roots, Math.max(1, r) - 1);
  if (loadsAffine !== undefined && !(last.inner >= MIN_IOTA_RUN && affineIn(last, ["load", "fromIdx"]))) return loadsAffine;
  if (r === 0 || affine(last)) return last;
  const d = domain[r - 1]!;
  for (let run = Math.floor(d / 2); run >= MIN_SPLIT_RUN; run--) {
    if (d % run !== 0) continue;
    const c = collapseAt(g, domain, roots, r - 1, run);
    if (affine(c)) return c;
  }
  return last;
}

/** `run`: the last dimension split into d / run outer steps of `run` inner ones (k is then r - 1). */
function collapseAt(g: KernelGraph, domain: readonly number[], roots: readonly number[], k: number, run?: number): Collapsed {
  const out = new KernelGraph();
  const last = domain.length - 1;
  const outer = run === undefined ? domain.slice(0, k) : [...domain.slice(0, last), domain[last]! / run];
  const innerDims = run === undefined ? domain.slice(k) : [run];
  const inner = elementCount(innerDims);
  const outerVars = outer.map((n, i) => out.variable(i, n));
  const innerVar = out.variable(outer.length, inner);
  const innerIdx = unlinearize(out, innerVar, innerDims);
  const dimVar = (dim: number): number => (run !== undefined && dim === last ? out.add(out.mul(outerVars[last]!, run), innerVar)
    : dim < k ? outerVars[dim]! : innerIdx[dim - k]!);
  const { map } = rebuild(g, roots, (dim, size, o) => (dim < domain.length ? dimVar(dim) : o.variable(dim, size)), out);
  return { graph: out, outer, inner, outerVars, innerVar, roots: roots.map(map), split: run !== undefined };
}

/** Inner-loop elements per work unit when a row is split into chunks. */
const CHUNK = 16384;

/**
 * How a loop kernel's work splits into units: whole rows, or (few, long rows) chunks of
 * `block` elements of each row, so that threads have work to share.
 */
export function loopChunks(rows: number, inner: number): { chunks: number; block: number } {
  const chunks = inner <= CHUNK || rows >= 64 ? 1 : Math.ceil(inner / CHUNK);
  return { chunks, block: chunks === 1 ? inner : CHUNK };
}
