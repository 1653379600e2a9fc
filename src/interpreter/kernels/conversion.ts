// Kernels of the conversion ops. The element rules live in src/types (convert.ts,
// bitcast_convert.ts, reduce_precision.ts), where literals and other kernels reuse them.

import { bitcastConvertLiteral } from "../../types/bitcast_convert.js";
import { convertLiteral } from "../../types/convert.js";
import { reducePrecisionLiteral } from "../../types/reduce_precision.js";
import type { KernelTable } from "../context.js";
import { resultArrayShape } from "./element_copy.js";

export const conversionKernels: KernelTable<"convert" | "bitcastConvert" | "reducePrecision"> = {
  convert: (inst, [operand]) => convertLiteral(operand!, inst.attrs.elementType),
  bitcastConvert: (inst, [operand]) => bitcastConvertLiteral(operand!, resultArrayShape(inst)),
  reducePrecision: (inst, [operand]) =>
    reducePrecisionLiteral(operand!, inst.attrs.exponentBits, inst.attrs.mantissaBits),
};
