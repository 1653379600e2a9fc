// StableHLO's interpreter tests on the webgpu backend, with each case's constants passed as
// arguments so that its kernels compute them (suite.ts).

import { conformanceTest } from "./suite.js";

conformanceTest("webgpu");
