// Mutations for the parser fuzzer: each takes a seed text and a random source and
// returns a nearby text that is likely to reach an unusual path of a parser, the
// importer, the verifier or the interpreter. Deterministic for a given random source,
// so an input is reproduced from (seed, index) alone.

/** A small, fast, seedable generator (mulberry32): fuzz runs must be reproducible. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** A uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** What mutations draw from besides the text itself: other seeds and their tokens. */
export interface MutationPool {
  /** Every seed text (MLIR chunks and HLO modules), for splicing. */
  readonly texts: readonly string[];
  /** Op names seen in the seeds (`stablehlo.add`, `add`, ...), for swaps. */
  readonly opNames: readonly string[];
  /** Words seen in the seeds (types, attribute names, keywords). */
  readonly words: readonly string[];
}

/** Mutations stop growing a text past this: the point is odd structure, not memory exhaustion of the fuzzer itself. */
const MAX_INPUT_CHARS = 4_000_000;

/** Numbers at the edges of every integer and float format, and far past them. */
const EDGE_NUMBERS = [
  "0", "-1", "1", "2147483647", "2147483648", "4294967295", "4294967296", "9007199254740993",
  "18446744073709551616", "99999999999999999999999", "1e308", "1e400", "-0", "65536", "1000000000",
];

/** Ways to open a nesting level in either syntax, with the text that closes it. */
const NESTERS: readonly (readonly [string, string])[] = [
  ["[", "]"], ["(", ")"], ["{", "}"], ["<", ">"], ["tensor<", ">"], ["tuple<", ">"], ["dense<[", "]>"],
  ["(f32[], ", ")"], ["{ ", " }"], ["[[", "]]"], ["\"", "\""],
];

type Mutation = (text: string, rng: Random, pool: MutationPool) => string;

function replaceAt(text: string, start: number, end: number, replacement: string): string {
  return text.slice(0, start) + replacement + text.slice(end);
}

/** The positions of every match of `re` (global) in `text`. */
function matchesOf(text: string, re: RegExp): RegExpExecArray[] {
  return [...text.matchAll(re)];
}

function replaceRandomMatch(text: string, rng: Random, re: RegExp, make: (m: RegExpExecArray) => string): string {
  const ms = matchesOf(text, re);
  if (ms.length === 0) return text;
  const m = rng.pick(ms);
  return replaceAt(text, m.index, m.index + m[0].length, make(m));
}

const swapOpName: Mutation = (text, rng, pool) =>
  replaceRandomMatch(text, rng, /\b(?:stablehlo|chlo|func|check|sdy)\.[a-z_]+\b|(?<=\s)[a-z][a-z-]*(?=\()/g, () => rng.pick(pool.opNames));

const swapWord: Mutation = (text, rng, pool) =>
  replaceRandomMatch(text, rng, /[A-Za-z_][A-Za-z0-9_]*/g, () => rng.pick(pool.words));

const edgeNumber: Mutation = (text, rng) =>
  replaceRandomMatch(text, rng, /\d+(?:\.\d+)?(?:e[+-]?\d+)?/g, () => rng.pick(EDGE_NUMBERS));

/** A huge or odd dimension: `tensor<4xf32>` -> `tensor<4294967296xf32>`, `f32[4]` -> `f32[99999999999]`. */
const hugeDimension: Mutation = (text, rng) =>
  replaceRandomMatch(text, rng, /(?<=[<x[,])\d+(?=[x,\]])/g, () => rng.pick(EDGE_NUMBERS.filter((n) => !n.includes("e"))));

/** A result count: `%0 = ` -> `%0:4294967296 = `. */
const resultCount: Mutation = (text, rng) =>
  replaceRandomMatch(text, rng, /%[A-Za-z0-9_]+(?::\d+)? = /g, (m) => `${m[0].split(/[: ]/)[0]}:${rng.pick(EDGE_NUMBERS.slice(0, 9))} = `);

const deleteChars: Mutation = (text, rng) => {
  const at = rng.int(text.length + 1);
  return replaceAt(text, at, at + 1 + rng.int(8), "");
};

const duplicateChars: Mutation = (text, rng) => {
  const at = rng.int(text.length + 1);
  const piece = text.slice(at, at + 1 + rng.int(40));
  return replaceAt(text, at, at, piece.repeat(1 + rng.int(4)));
};

const flipChar: Mutation = (text, rng) => {
  if (text.length === 0) return text;
  const at = rng.int(text.length);
  const chars = "()[]{}<>,:=%@\"x0123456789-.e\n ";
  const c = rng.next() < 0.5 ? rng.pick([...chars]) : String.fromCharCode(text.charCodeAt(at) ^ (1 << rng.int(7)));
  return replaceAt(text, at, at + 1, c);
};

/** Opens `depth` nesting levels at a random place, closed or left open. */
const deepNesting: Mutation = (text, rng) => {
  const [open, close] = rng.pick(NESTERS);
  const depth = rng.pick([20, 200, 2000, 20000, 100000]);
  const at = rng.int(text.length + 1);
  const closes = rng.next() < 0.7 ? close.repeat(depth) : "";
  return replaceAt(text, at, at, open.repeat(depth) + closes);
};

const truncate: Mutation = (text, rng) => text.slice(0, rng.int(text.length + 1));

/** Lines of another seed spliced into this one. */
const splice: Mutation = (text, rng, pool) => {
  const lines = text.split("\n");
  const other = rng.pick(pool.texts).split("\n");
  const from = rng.int(other.length);
  const piece = other.slice(from, from + 1 + rng.int(6));
  const at = rng.int(lines.length + 1);
  lines.splice(at, rng.int(3), ...piece);
  return lines.join("\n");
};

/** One line repeated many times (long blocks, many results or functions). */
const repeatLine: Mutation = (text, rng) => {
  const lines = text.split("\n");
  const at = rng.int(lines.length);
  const copies = Math.min(rng.pick([10, 1000, 5000]), Math.floor(MAX_INPUT_CHARS / (lines[at]!.length + 1)));
  lines.splice(at, 0, ...Array<string>(copies).fill(lines[at]!));
  return lines.join("\n");
};

const MUTATIONS: readonly Mutation[] = [
  swapOpName, swapOpName, swapWord, edgeNumber, hugeDimension, hugeDimension, resultCount, deleteChars,
  duplicateChars, flipChar, flipChar, deepNesting, truncate, splice, splice, repeatLine,
];

/** One to three mutations of `text`. */
export function mutate(text: string, rng: Random, pool: MutationPool): string {
  let out = text;
  const count = 1 + rng.int(3);
  for (let i = 0; i < count && out.length < MAX_INPUT_CHARS; i++) out = rng.pick(MUTATIONS)(out, rng, pool);
  return out;
}
