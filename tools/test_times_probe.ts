// Preloaded into every process of `node dist/tools/run_tests.js --record` (NODE_OPTIONS
// --import): at exit it appends to $XLATS_TEST_TIMES_LOG a line with its main script, its
// wall seconds and its CPU seconds (its own, and its reaped children's: the C compiler,
// the commands a test starts). `node --test`'s reporters give no per-file duration in Node
// 20 (a file's tests are reported on their own), so the run's processes say it themselves.

import { appendFileSync, readFileSync } from "node:fs";

const log = process.env["XLATS_TEST_TIMES_LOG"];
if (log) {
  process.on("exit", () => {
    const usage = process.cpuUsage();
    // /proc/self/stat's cutime and cstime (fields 16 and 17), in clock ticks (100 a second on Linux).
    let children = 0;
    try {
      const stat = readFileSync("/proc/self/stat", "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      children = (Number(fields[13]) + Number(fields[14])) / 100;
    } catch { /* not Linux: no children's CPU */ }
    appendFileSync(log, JSON.stringify({
      script: process.argv[1] ?? "", wall: process.uptime(), cpu: (usage.user + usage.system) / 1e6 + children,
    }) + "\n");
  });
}
