// The kernel table: one reference kernel per opcode, assembled from one file per op
// family and typed as total over `Opcode`; quantized operands are handled around the
// kernels (quantized.ts).

import type { Opcode } from "../../ir/opcodes.js";
import type { KernelTable } from "../context.js";
import { conversionKernels } from "./conversion.js";
import { elementwiseKernels } from "./elementwise.js";
import { dataMovementKernels } from "./data_movement.js";
import { reductionKernels } from "./reduction.js";
import { linalgKernels } from "./linalg.js";
import { controlKernels } from "./control.js";
import { randomKernels } from "./random.js";
import { transferKernels } from "./transfer.js";
import { collectiveKernels } from "./collective.js";
import { leafKernels } from "./leaf.js";
import { sdyKernels } from "./sdy.js";
import { dynamicKernels } from "./dynamic.js";
import { quantizedKernels, withQuantizedTypes } from "./quantized.js";

export const KERNELS: KernelTable<Opcode> = withQuantizedTypes({
  ...leafKernels,
  ...conversionKernels,
  ...elementwiseKernels,
  ...dataMovementKernels,
  ...reductionKernels,
  ...linalgKernels,
  ...controlKernels,
  ...randomKernels,
  ...transferKernels,
  ...collectiveKernels,
  ...sdyKernels,
  ...dynamicKernels,
  ...quantizedKernels,
});
