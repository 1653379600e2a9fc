// What `xlats --help` and `xlats COMMAND --help` print: every command's usage, in a
// module of its own so that printing it, and parsing a command line (args.ts), load no
// command's implementation (main.ts imports a command's module when it runs).

import { BACKEND_MODULES } from "../compiler/backend_modules.js";

export const OPT_USAGE = `xlats opt FILE [FLAGS...]
      Parse StableHLO text, run the passes the flags name (in order), print the
      module as MLIR prints it. Flags, spelled as mlir-opt spells them:
        -split-input-file             each '// -----' chunk is a module of its own
        -verify-diagnostics           report diagnostics and exit 0 (a harness checks them)
        -allow-unregistered-dialect   keep ops of unknown dialects (printed generically)
        --explain                     after each module, as '//' comments: for every value
                                      sharding propagation sharded, where each axis came
                                      from (a user sharding) and through which ops; for
                                      every conflict, the candidates and why they lost
        -PASS or -PASS=opt1=val1 opt2=val2 (also opt1=val1,opt2=val2): run PASS`;

export const PARTITION_USAGE = `xlats partition FILE [--entry NAME] [--report]
      Partition FILE (StableHLO with a mesh and sdy shardings) into the program each
      device runs: propagation, explicit reshards, collectives, padding, global to
      local. Prints that program; --report prints instead the collectives it runs, the
      bytes each device sends and each device's peak memory (beside the unsharded one).`;

export const SHARDINGS_USAGE = `xlats shardings FILE [--func NAME] [--values A,B,...] [--propagate] [--reshards] [--html OUT.html]
      Draw how each sharded tensor of FILE (StableHLO with sdy shardings, or HLO with
      sharding=) lies on its mesh's devices: a grid of its blocks (element ranges per
      dimension) labelled with the devices holding them, and the mesh's devices.
        --func NAME        only the function NAME (default: every function)
        --values A,B       only these values: %arg0, %0, %r#1 (the % may be left
                           out), result#0 for a function's first result
        --propagate        run -sdy-propagation-pipeline first
        --reshards         propagate, insert the explicit reshards the partitioner
                           inserts, and draw each reshard (the value before, the
                           value after, marked) unless --values picks others
        --html OUT.html    write one self-contained HTML page (inline SVG) instead
      Colors on a terminal unless NO_COLOR is set.`;

export const USAGE = `xlats: XLA for TypeScript

Usage:
  xlats run FILE [--entry NAME] [--arg LITERAL|FILE.npy]... [--cast]
              [--out FILE.npz|FILE.npy] [--print mlir|numpy] [--backend NAME]
              [--timeout SECONDS] [--probe-output-dir DIR]
      Run the entry computation of FILE (HLO or StableHLO text) on one device;
      --timeout stops a run still going after SECONDS (an endless loop, a long
      kernel; sharded runs too) with an error and exit code 1.
      Each --arg is an MLIR literal, e.g. --arg 'dense<[1.0, 2.0]> : tensor<2xf32>',
      or a .npy file; --cast converts an argument of another element type to its
      parameter's (as stablehlo.convert does). Prints each result on its own line
      as an MLIR literal, or as numpy's repr with --print numpy (over 2^20
      elements: summarised); --out also writes them to a .npz (arr_0, arr_1, ...)
      or, for one result, a .npy. A program with a mesh and sdy shardings
      is partitioned and runs on one device per mesh device (see partition); so does
      a JAX shard_map export (mhlo.sharding strings), read as Shardy shardings first.
      interpreter.probe values are serialized as in test (in memory, and to DIR with
      --probe-output-dir); a failing check.expect_serialized_eq makes the exit code 1.
  xlats test FILE|DIR... [--backend NAME] [--probe-output-dir DIR]
              [--accumulation xla-cpu|stablehlo-reference] [--fold-constants]
      Run check-style test files (directories are searched for *.mlir). Prints
      PASS/FAIL/SKIP per case and a summary; exits with 1 if any case fails.
      RUN lines of stablehlo-translate --interpret are honoured (--args, FileCheck
      lines matched by value); a lit file whose RUN lines run another tool
      (sdy_opt ... | FileCheck: an \`xlats opt\` test) is one SKIP saying what runs
      it. Without RUN lines a case passes only if a check op ran.
      On a compiling backend each case's constants are passed as arguments, so
      that the backend's kernels compute what is checked; --fold-constants leaves
      them in the program, where the compiler folds them with the interpreter's
      kernels (the cases' programs are mostly constants).
      interpreter.probe values are serialized as .npy (with an index.csv) in memory,
      and also written to DIR with --probe-output-dir. --accumulation
      stablehlo-reference makes dot and convolution sum as StableHLO's reference
      interpreter does (in the result type, product and sum rounded separately, no
      FMA; on the interpreter backend), for files whose exact checks assume it (the
      Shardy executable tests); the default, xla-cpu, sums as XLA's CPU backend.
  xlats compile FILE [--dump] [--dump-after-each] [--backend NAME]
      Compile FILE with a compiling backend: --dump prints the compiled program,
      --dump-after-each the module after every pass; neither: only check it compiles.
  xlats convert FILE --to mlir|hlo
      Convert between HLO text and StableHLO text.
  xlats print FILE [--lower-chlo]
      Parse and check FILE, then print it canonically in its own format. CHLO's
      broadcasting and constant ops always import as StableHLO; --lower-chlo also
      rewrites acos, asin, atan, acosh, asinh, atanh, cosh, sinh, erfc and next_after
      on real types into StableHLO ops (the gamma family, erf_inv, bessel_i1e and
      complex operands stay chlo ops, computed by the interpreter's kernels).
  ${OPT_USAGE}
  ${PARTITION_USAGE}
  ${SHARDINGS_USAGE}
  xlats --help
      Show this help.

--backend NAME picks the backend: one of ${Object.keys(BACKEND_MODULES).join(", ")} (default: native where a C compiler works, else wasm).
The native backend's first build of a program is said on stderr when it is a terminal, or with --verbose (run, test, compile).

Exit codes: 0 success, 1 bad input or failing tests, 2 bad usage.`;

export const COMMANDS = ["run", "test", "compile", "convert", "print", "opt", "partition", "shardings"];

/** One command's part of USAGE (`xlats run --help`), with the notes on backends and exit codes. */
export function commandUsage(command: string): string {
  const start = USAGE.indexOf(`\n  xlats ${command} `);
  if (!COMMANDS.includes(command) || start < 0) return USAGE;
  const end = USAGE.indexOf("\n  xlats ", start + 1);
  const section = USAGE.slice(start + 1, end).split("\n").map((l) => l.slice(2)).join("\n");
  const notes = USAGE.slice(USAGE.indexOf("\n\n--backend NAME"));
  return `Usage:\n  ${section.split("\n").join("\n  ")}${section.includes("--backend") ? notes : notes.slice(notes.indexOf("\n\nExit codes"))}`;
}
