// A sitting's rounds (--rounds R), as the Node bench (run.ts) and the browser's
// (browser/run.ts) both run them: the whole sequence of runners R times, in reverse every
// other round so that no runner is always first or last. On a shared machine the runners of
// one round see minutes of the same load; table.ts takes each ratio within a round.

import type { CellResult } from "./measure.js";
import type { RunnerConfig } from "./plan.js";
import type { Rounds } from "./table.js";

/**
 * --rounds' value: 1 without the flag; an error message for anything but a whole number of
 * rounds, 1 or more.
 */
export function parseRounds(argv: readonly string[]): number | { readonly error: string } {
  const i = argv.indexOf("--rounds");
  if (i < 0) return 1;
  const given = argv[i + 1];
  const rounds = Number(given);
  return Number.isInteger(rounds) && rounds >= 1 && given !== undefined && given.trim() !== "" ? rounds
    : { error: `--rounds takes a whole number of rounds, 1 or more (got ${given ?? "nothing"})` };
}

/** The log prefix of a round's cells ("" for a single round). */
export function roundPrefix(round: number, rounds: number): string {
  return rounds > 1 ? `round ${round + 1}/${rounds}  ` : "";
}

/**
 * Runs every runner once per round, one after the other (`runOne` gets the runner and the
 * round's log prefix), the order reversed in every second round; the cells round by round.
 */
export async function runRounds(runners: readonly RunnerConfig[], rounds: number,
  runOne: (config: RunnerConfig, prefix: string) => Promise<CellResult[]>): Promise<Rounds> {
  const out: CellResult[][] = [];
  for (let r = 0; r < rounds; r++) {
    const cells: CellResult[] = [];
    for (const config of r % 2 === 0 ? runners : [...runners].reverse()) cells.push(...(await runOne(config, roundPrefix(r, rounds))));
    out.push(cells);
  }
  return out;
}

/** The header's words on the rounds (empty for one). */
export function roundsSummary(rounds: number): string {
  return rounds > 1 ? `${rounds} rounds of every runner, the order reversed every other round` : "";
}
