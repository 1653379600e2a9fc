// np.einsum: Einstein summation over any number of operands, as numpy's and JAX's.
//
// The subscripts are parsed into one label per axis: a letter, or for the axes an
// ellipsis ("...") covers, a label "…k" naming the k-th of the broadcast axes (aligned
// from the right, as numpy broadcasts them). Then, as JAX's einsum does with
// opt_einsum's path:
//   1. each operand takes the diagonal of a letter it repeats ("ii->i"), drops the axes of
//      size 1 that broadcast against a larger size elsewhere (it is constant along them),
//      and is summed over the labels no other operand and not the output names;
//   2. while more than one operand is left, the pair whose product is smallest (among
//      the pairs that share a label, if any do) is contracted by one dot_general: the
//      shared labels still needed elsewhere are its batch dimensions, the others are
//      contracted (opt_einsum's greedy path, measuring a pair by its intermediate's
//      size; ties go to the pair that shrinks the operands most, then to the first pair);
//   3. the last operand is transposed into the output's order.
// Everything is lax (dot_general, reduce, slice, reshape, transpose), so einsum is
// jittable, differentiable and batchable with no rule of its own.

import type { ArrayBase, ArrayLike } from "./core.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { promoteDtypes } from "./numpy.js";
import { diagonal } from "./numpy_arrays.js";
import { maxOf, range } from "../types/arrays.js";

const ELLIPSIS = "...";

/** One operand (or intermediate) with the label of each of its axes. */
interface Term {
  readonly array: ArrayBase;
  readonly labels: readonly string[];
}

const fail = (message: string, argument: "subscripts" | "operands"): never => {
  throw new FrontendError(`einsum: ${message}`, "einsum", argument);
};

/** An operand's or the output's subscripts split at its ellipsis: the letters before and after it. */
interface Subscript {
  readonly before: string;
  readonly after: string | undefined; // undefined: no ellipsis
}

function parseSubscript(text: string, what: string): Subscript {
  const parts = text.split(ELLIPSIS);
  if (parts.length > 2) fail(`${what} "${text}" has more than one ellipsis`, "subscripts");
  for (const part of parts) {
    const bad = [...part].find((c) => !/[a-zA-Z]/.test(c));
    if (bad !== undefined) fail(`${what} "${text}" has "${bad}"; subscripts are letters and at most one "..."`, "subscripts");
  }
  return { before: parts[0]!, after: parts[1] };
}

const letters = (s: Subscript): string => s.before + (s.after ?? "");

/** The label of each axis of an operand of rank `rank` (its ellipsis covering the axes its letters leave). */
function axisLabels(s: Subscript, rank: number, index: number, text: string): string[] {
  const named = letters(s).length;
  if (s.after === undefined) {
    if (rank !== named) fail(`operand ${index} has rank ${rank} but "${text}" names ${named} axes`, "operands");
    return [...s.before];
  }
  if (rank < named) fail(`operand ${index} has rank ${rank}, fewer than the ${named} axes "${text}" names`, "operands");
  return [...s.before, ...ellipsisLabels(rank - named), ...s.after];
}

/** The labels of `count` broadcast axes, right-aligned with every other ellipsis (so the last is always "…0"). */
const ellipsisLabels = (count: number): string[] => range(count).map((k) => `…${count - 1 - k}`);

/**
 * np.einsum(subscripts, ...operands): "ij,jk->ik", "bij,bjk->bik", "ij,jk,kl->il",
 * "ii->i" (diagonal), "ii" (trace), "...ij,...jk->...ik" (broadcast batch axes),
 * "i,i" (implicit output: the letters that appear once, in alphabetical order, after
 * the ellipsis's axes). Size-1 axes broadcast, as numpy's do.
 */
export function einsum(subscripts: string, ...operands: ArrayLike[]): ArrayBase {
  const spec = subscripts.replace(/\s+/g, "");
  const sides = spec.split("->");
  if (sides.length > 2) fail(`"${subscripts}" has more than one "->"`, "subscripts");
  const inputTexts = sides[0]!.split(",");
  if (inputTexts.length !== operands.length) fail(`"${subscripts}" names ${inputTexts.length} operand(s), ${operands.length} given`, "operands");
  const inputs = inputTexts.map((t, i) => parseSubscript(t, `operand ${i}'s subscripts`));
  const arrays = promoteDtypes("einsum", operands);
  const terms: Term[] = arrays.map((array, i) => ({ array, labels: axisLabels(inputs[i]!, array.ndim, i, inputTexts[i]!) }));

  // The ellipsis's broadcast axes: as many as the most any operand gives it.
  const ellipsisRank = maxOf([0, ...terms.map((t, i) => t.labels.length - letters(inputs[i]!).length)]);
  const counts = new Map<string, number>();
  for (const s of inputs) for (const c of letters(s)) counts.set(c, (counts.get(c) ?? 0) + 1);
  let outputLabels: string[];
  if (sides.length === 2) {
    const out = parseSubscript(sides[1]!, "the output");
    const outLetters = letters(out);
    for (const [k, c] of [...outLetters].entries()) {
      if (!counts.has(c)) fail(`the output letter "${c}" is not in any input of "${subscripts}"`, "subscripts");
      if (outLetters.indexOf(c) !== k) fail(`the output "${sides[1]}" repeats "${c}"`, "subscripts");
    }
    outputLabels = [...out.before, ...(out.after === undefined ? [] : [...ellipsisLabels(ellipsisRank), ...out.after])];
  } else {
    // numpy's implicit mode: the broadcast axes, then the letters that appear once, sorted.
    const once = [...counts.keys()].filter((c) => counts.get(c) === 1).sort();
    outputLabels = [...ellipsisLabels(ellipsisRank), ...once];
  }

  const withDiagonals = terms.map(diagonals);
  const sizes = labelSizes(withDiagonals);
  const out = new Set(outputLabels);
  const prepared = withDiagonals.map((t) => withoutBroadcastAxes(t, sizes));
  const result = contractAll(prepared.map((t, i) => sumUnneeded(t, neededOutside(prepared, [i], out))), sizes, out);
  // Every output label survives: an operand drops a label only where another has it larger.
  return lax.transpose(result.array, outputLabels.map((l) => result.labels.indexOf(l)));
}

/** Each label's size over all operands: equal, or 1 against a larger size (which broadcasts). */
function labelSizes(terms: readonly Term[]): Map<string, number> {
  const sizes = new Map<string, number>();
  terms.forEach((t, i) => t.labels.forEach((l, axis) => {
    const n = t.array.shape[axis]!;
    const seen = sizes.get(l);
    if (seen === undefined || seen === 1) sizes.set(l, n);
    else if (n !== seen && n !== 1) {
      const name = l.startsWith("…") ? "an axis under the ellipsis" : `the letter "${l}"`;
      fail(`${name} has size ${n} in operand ${i} but ${seen} elsewhere (sizes must match, or be 1 to broadcast)`, "operands");
    }
  }));
  return sizes;
}

/** The term with each repeated letter replaced by one axis: the diagonal of the axes it labels. */
function diagonals(t: Term): Term {
  let { array, labels } = t;
  for (let axis = 0; axis < labels.length; axis++) {
    const again = labels.indexOf(labels[axis]!, axis + 1);
    if (again < 0) continue;
    if (array.shape[axis] !== array.shape[again]) {
      fail(`the letter "${labels[axis]}" labels axes of sizes ${array.shape[axis]} and ${array.shape[again]} of one operand (a diagonal needs equal sizes)`, "operands");
    }
    // diagonal() puts the diagonal last; the label follows it there. Look at this axis again: the letter may repeat a third time.
    array = diagonal(array, { axis1: axis, axis2: again });
    labels = [...labels.filter((_, k) => k !== axis && k !== again), labels[axis]!];
    axis--;
  }
  return { array, labels };
}

/** The term without its size-1 axes whose label is larger elsewhere: it is constant along them. */
function withoutBroadcastAxes(t: Term, sizes: ReadonlyMap<string, number>): Term {
  const keep = range(t.labels.length).filter((k) => !(t.array.shape[k] === 1 && sizes.get(t.labels[k]!)! > 1));
  if (keep.length === t.labels.length) return t;
  return { array: lax.reshape(t.array, keep.map((k) => t.array.shape[k]!)), labels: keep.map((k) => t.labels[k]!) };
}

/** The labels the output or any term other than those at `exclude` has. */
function neededOutside(terms: readonly Term[], exclude: readonly number[], out: ReadonlySet<string>): Set<string> {
  const needed = new Set(out);
  terms.forEach((t, i) => {
    if (!exclude.includes(i)) for (const l of t.labels) needed.add(l);
  });
  return needed;
}

/** The term summed over its labels that are not in `needed`. */
function sumUnneeded(t: Term, needed: ReadonlySet<string>): Term {
  const drop = range(t.labels.length).filter((k) => !needed.has(t.labels[k]!));
  return { array: lax.reduceSum(t.array, drop), labels: t.labels.filter((l) => needed.has(l)) };
}

const product = (labels: Iterable<string>, sizes: ReadonlyMap<string, number>): number => {
  let n = 1;
  for (const l of labels) n *= sizes.get(l)!;
  return n;
};

/** The terms contracted pairwise down to one (each term's labels are all needed by another term or the output). */
function contractAll(terms: readonly Term[], sizes: ReadonlyMap<string, number>, out: ReadonlySet<string>): Term {
  let left = [...terms];
  while (left.length > 1) {
    const pairs = range(left.length).flatMap((i) => range(left.length - i - 1, i + 1).map((j) => [i, j] as const));
    const sharing = pairs.filter(([i, j]) => left[i]!.labels.some((l) => left[j]!.labels.includes(l)));
    let best: { i: number; j: number; kept: string[]; size: number; shrink: number } | undefined;
    for (const [i, j] of sharing.length > 0 ? sharing : pairs) {
      const needed = neededOutside(left, [i, j], out);
      const kept = [...new Set([...left[i]!.labels, ...left[j]!.labels])].filter((l) => needed.has(l));
      const size = product(kept, sizes);
      const shrink = size - product(left[i]!.labels, sizes) - product(left[j]!.labels, sizes);
      if (best === undefined || size < best.size || (size === best.size && shrink < best.shrink)) best = { i, j, kept, size, shrink };
    }
    const { i, j, kept } = best!;
    left = [...left.filter((_, k) => k !== i && k !== j), contractPair(left[i]!, left[j]!, new Set(kept))];
  }
  return left[0]!;
}

/** One dot_general of two terms: the shared labels in `kept` are batch dimensions, the other shared ones contracted. */
function contractPair(l: Term, r: Term, kept: ReadonlySet<string>): Term {
  const shared = l.labels.filter((c) => r.labels.includes(c));
  const batch = shared.filter((c) => kept.has(c));
  const contract = shared.filter((c) => !kept.has(c));
  const array = lax.dotGeneral(l.array, r.array, {
    lhsContractingDimensions: contract.map((c) => l.labels.indexOf(c)), rhsContractingDimensions: contract.map((c) => r.labels.indexOf(c)),
    lhsBatchDimensions: batch.map((c) => l.labels.indexOf(c)), rhsBatchDimensions: batch.map((c) => r.labels.indexOf(c)),
  });
  const free = (labels: readonly string[]): string[] => labels.filter((c) => !shared.includes(c));
  return { array, labels: [...batch, ...free(l.labels), ...free(r.labels)] };
}
