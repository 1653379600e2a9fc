// Input `index` of a text-surface run: a mutated conformance or HLO seed, or a deep
// generated program, made from (seed, index) alone so that any input is reproduced.

import { generatedSeeds, type Corpus, type InputKind, type Seed } from "./corpus.js";
import { mutate, Random } from "./mutate.js";

export interface FuzzInput {
  readonly kind: InputKind;
  readonly seedName: string;
  readonly text: string;
}

const GENERATED_DEPTHS = [20, 300, 1200, 3000];

/** Input `index` of the run with `seed`: a mutated conformance or HLO seed, or a deep generated program. */
export function fuzzInput(corpus: Corpus, seed: number, index: number): FuzzInput {
  const rng = new Random(Math.imul(seed, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b));
  let base: Seed;
  if (rng.next() < 0.02) {
    base = rng.pick(generatedSeeds(rng.pick(GENERATED_DEPTHS)));
    if (rng.next() < 0.5) return { kind: base.kind, seedName: base.name, text: base.text };
  } else {
    base = rng.pick(corpus.seeds);
  }
  return { kind: base.kind, seedName: base.name, text: mutate(base.text, rng, corpus) };
}
