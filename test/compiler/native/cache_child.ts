// Run by native.test.ts in a fresh process (with XLATS_NATIVE_CACHE set): compiles one
// program on the native backend and prints whether its module came from the cache and
// how many modules this process built (the toolchain's probe included).

import { compileSync } from "../../../src/compiler/index.js";
import { nativeBuildStats } from "../../../src/compiler/native/toolchain.js";
import { parseHlo } from "../../../src/text/hlo/index.js";

const exe = compileSync(parseHlo(`HloModule cached
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  ROOT r = f32[64] add(a, b)
}
`), { backend: "native" });
process.stdout.write(JSON.stringify({ cached: exe.stats.native?.cached ?? false, compiled: nativeBuildStats.compiled }));
exe.delete();
