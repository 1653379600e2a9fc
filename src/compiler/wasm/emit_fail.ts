/** Thrown by the emitters for an op or type without a code path; the kernel emitters turn it into Unsupported. */
export class EmitFail extends Error {}
