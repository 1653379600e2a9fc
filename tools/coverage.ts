// The op coverage table of docs/ops.md, computed from the code: for every XlaBuilder op,
// the builder function that provides it, the IR opcodes it lowers to (each with a
// shape rule and a kernel), and the element types on which the op actually builds and
// runs: each op is probed with every element type through the builder (shape
// inference) and the interpreter, and the types that succeed are listed. The "wasm
// backend" column compiles each op (on f32 where it runs, else its first type) without
// the simplification passes (which would fold the probe's constants away) and says
// whether the compiled program runs it as generated code or hands it to the
// interpreter's kernel. docs/ops.md also lists every op function's declaration, with its
// doc comment, as the build's .d.ts files give them.
//
//   node dist/tools/coverage.js            prints the table
//   node dist/tools/coverage.js --write    writes the table and the declarations into docs/ops.md
//   test/readme_coverage.test.ts           checks docs/ops.md holds exactly these

import * as xla from "../src/index.js";
import {
  ELEMENT_TYPE_NAMES, KERNELS, Literal, SHAPE_RULES, XlaBuilder, arrayShape, evaluate, scalarShape,
  type Computation, type ElementType, type Opcode, type XlaOp,
} from "../src/index.js";
import { compileSync } from "../src/compiler/index.js";
import { stepFusion } from "../src/compiler/passes/step_fusion.js";
import { allSteps } from "../src/compiler/control_flow.js";
import { dotDecomposer } from "../src/compiler/passes/dot_decomposer.js";
import { convCanonicalization } from "../src/compiler/passes/conv_canonicalization.js";
import { decompose, layoutAssignment } from "../src/compiler/passes/index.js";
import { readFileSync } from "node:fs";

type Build = (b: XlaBuilder, t: ElementType) => XlaOp;

interface Probe {
  /** The XlaBuilder op, as seed 000 names it. */
  readonly op: string;
  /** The builder function (an export of "xlats"). */
  readonly fn: keyof typeof xla;
  /** The IR opcodes the op lowers to. */
  readonly opcodes: readonly Opcode[];
  /** Builds the op on element type `t`; absent when the op has no element type of its own. */
  readonly build: Build;
  /** False when the element type is not the op's to choose (tokens, ids, ...). */
  readonly typed?: boolean;
}

const ones = (b: XlaBuilder, t: ElementType, dims: readonly number[]): XlaOp => {
  const shape = arrayShape(t, dims);
  const n = dims.reduce((a, d) => a * d, 1);
  const one = t === "pred" ? true : t === "s64" || t === "u64" ? 1n : t === "f8e8m0fnu" ? 1 : 1;
  return xla.constantLiteral(b, Literal.fromValues(t, shape.dimensions, new Array(n).fill(one)));
};
const v = (b: XlaBuilder, t: ElementType): XlaOp => ones(b, t, [2]);
const s = (b: XlaBuilder, t: ElementType): XlaOp => ones(b, t, []);
const idx = (b: XlaBuilder): XlaOp => xla.constantR0(b, "s32", 0);

/** A scalar computation of `arity` parameters of type `t` returning fn(params). */
function scalarComputation(b: XlaBuilder, t: ElementType, arity: number, fn: (ps: XlaOp[]) => XlaOp): Computation {
  const sb = b.createSubBuilder("f");
  const ps = Array.from({ length: arity }, (_, i) => xla.parameter(sb, i, scalarShape(t)));
  return sb.build(fn(ps));
}
/** A reducer returning its first argument: runs on every type. */
const first = (b: XlaBuilder, t: ElementType): Computation => scalarComputation(b, t, 2, (ps) => ps[0]!);
/** The value a probe's host Recv gets (the probe only checks that the op runs). */
const recvValue = (t: ElementType): Literal => Literal.zeros(arrayShape(t, [2]));

/** A comparator that orders nothing (always false): runs on every type. */
const never = (b: XlaBuilder, t: ElementType): Computation =>
  scalarComputation(b, t, 2, (ps) => xla.constantR0(ps[0]!.builder, "pred", false));

const unary = (op: string, fn: keyof typeof xla, opcode: Opcode): Probe =>
  ({ op, fn, opcodes: [opcode], build: (b, t) => (xla[fn] as (x: XlaOp) => XlaOp)(v(b, t)) });
const binary = (op: string, fn: keyof typeof xla, opcode: Opcode): Probe =>
  ({ op, fn, opcodes: [opcode], build: (b, t) => (xla[fn] as (x: XlaOp, y: XlaOp) => XlaOp)(v(b, t), v(b, t)) });
const compare = (op: string, fn: keyof typeof xla): Probe =>
  ({ op, fn, opcodes: ["compare"], build: (b, t) => (xla[fn] as (x: XlaOp, y: XlaOp) => XlaOp)(v(b, t), v(b, t)) });

const PROBES: readonly Probe[] = [
  unary("Abs", "abs", "abs"),
  binary("Add", "add", "add"),
  { op: "AddDependency", fn: "addDependency", opcodes: ["addDependency", "afterAll"], build: (b, t) => xla.addDependency(v(b, t), xla.createToken(b)) },
  { op: "AfterAll", fn: "afterAll", opcodes: ["afterAll"], typed: false, build: (b) => xla.afterAll(b, [xla.createToken(b)]) },
  { op: "AllGather", fn: "allGather", opcodes: ["allGather"], build: (b, t) => xla.allGather(v(b, t), 0, 1) },
  { op: "AllGather (async start/done)", fn: "allGatherStart", opcodes: ["allGatherStart", "allGatherDone"], build: (b, t) => xla.allGatherDone(xla.allGatherStart(v(b, t), 0, 1)) },
  { op: "AllReduce", fn: "allReduce", opcodes: ["allReduce"], build: (b, t) => xla.allReduce(v(b, t), first(b, t)) },
  { op: "AllReduce (async start/done)", fn: "allReduceStart", opcodes: ["allReduceStart", "allReduceDone"], build: (b, t) => xla.allReduceDone(xla.allReduceStart(v(b, t), first(b, t))) },
  { op: "AllToAll", fn: "allToAll", opcodes: ["allToAll"], build: (b, t) => xla.allToAll(v(b, t), 0, 0, 1) },
  { op: "RaggedAllToAll", fn: "raggedAllToAll", opcodes: ["raggedAllToAll"], build: (b, t) => {
    const zero = (): XlaOp => xla.constantR1(b, "s32", [0]);
    return xla.raggedAllToAll(v(b, t), zero(), xla.constantR1(b, "s32", [2]), v(b, t), zero(), xla.constantR1(b, "s32", [2]));
  } },
  binary("And", "and", "and"),
  binary("Atan2", "atan2", "atan2"),
  { op: "BatchNormGrad", fn: "batchNormGrad", opcodes: ["batchNormGrad"], build: (b, t) => xla.batchNormGrad(ones(b, t, [2, 2]), v(b, t), v(b, t), v(b, t), ones(b, t, [2, 2]), 0.001, 1) },
  { op: "BatchNormInference", fn: "batchNormInference", opcodes: ["batchNormInference"], build: (b, t) => xla.batchNormInference(ones(b, t, [2, 2]), v(b, t), v(b, t), v(b, t), v(b, t), 0.001, 1) },
  { op: "BatchNormTraining", fn: "batchNormTraining", opcodes: ["batchNormTraining"], build: (b, t) => xla.batchNormTraining(ones(b, t, [2, 2]), v(b, t), v(b, t), 0.001, 1) },
  { op: "BitcastConvertType", fn: "bitcastConvertType", opcodes: ["bitcastConvert"], build: (b, t) => xla.bitcastConvertType(v(b, t), t) },
  { op: "Broadcast", fn: "broadcast", opcodes: ["broadcastInDim"], build: (b, t) => xla.broadcast(v(b, t), [3]) },
  { op: "BroadcastInDim", fn: "broadcastInDim", opcodes: ["broadcastInDim"], build: (b, t) => xla.broadcastInDim(v(b, t), [2, 3], [0]) },
  { op: "Call", fn: "call", opcodes: ["call"], build: (b, t) => xla.call(b, first(b, t), [s(b, t), s(b, t)]) },
  { op: "CompositeCall", fn: "compositeCall", opcodes: ["composite"], build: (b, t) => xla.compositeCall(b, first(b, t), [s(b, t), s(b, t)], "xlats.first") },
  unary("Cbrt", "cbrt", "cbrt"),
  unary("Ceil", "ceil", "ceil"),
  { op: "Cholesky", fn: "cholesky", opcodes: ["cholesky"], build: (b, t) => xla.cholesky(ones(b, t, [1, 1]), true) },
  { op: "Clamp", fn: "clamp", opcodes: ["clamp"], build: (b, t) => xla.clamp(s(b, t), v(b, t), s(b, t)) },
  unary("Clz", "clz", "clz"),
  { op: "Collapse", fn: "collapse", opcodes: ["reshape"], build: (b, t) => xla.collapse(ones(b, t, [2, 3]), [0, 1]) },
  { op: "CollectiveBroadcast", fn: "collectiveBroadcast", opcodes: ["collectiveBroadcast"], build: (b, t) => xla.collectiveBroadcast(v(b, t), [[0]]) },
  { op: "CollectivePermute", fn: "collectivePermute", opcodes: ["collectivePermute"], build: (b, t) => xla.collectivePermute(v(b, t), [[0, 0]]) },
  { op: "CollectivePermute (async start/done)", fn: "collectivePermuteStart", opcodes: ["collectivePermuteStart", "collectivePermuteDone"], build: (b, t) => xla.collectivePermuteDone(xla.collectivePermuteStart(v(b, t), [[0, 0]])) },
  compare("Compare: Eq, Ne", "eq"),
  compare("Compare: Ge, Gt, Le, Lt", "lt"),
  compare("Compare: TotalOrder forms", "ltTotalOrder"),
  binary("Complex", "complex", "complex"),
  { op: "ConcatInDim", fn: "concatInDim", opcodes: ["concatenate"], build: (b, t) => xla.concatInDim(b, [v(b, t), v(b, t)], 0) },
  { op: "Conditional", fn: "conditional", opcodes: ["conditional"], build: (b, t) => {
    const branch = scalarComputation(b, t, 1, (ps) => ps[0]!);
    return xla.conditional(xla.constantR0(b, "pred", true), s(b, t), branch, s(b, t), branch);
  } },
  { op: "Conditional (branch index)", fn: "conditionalIndexed", opcodes: ["conditional"], build: (b, t) => {
    const branch = scalarComputation(b, t, 1, (ps) => ps[0]!);
    return xla.conditionalIndexed(idx(b), [branch, branch], [s(b, t), s(b, t)]);
  } },
  { op: "ConstantLiteral", fn: "constantLiteral", opcodes: ["constant"], build: (b, t) => v(b, t) },
  { op: "ConvertElementType", fn: "convertElementType", opcodes: ["convert"], build: (b, t) => xla.convertElementType(v(b, "f32"), t) },
  { op: "Conv", fn: "conv", opcodes: ["convolution"], build: (b, t) => xla.conv(ones(b, t, [1, 1, 2, 2]), ones(b, t, [1, 1, 1, 1]), [1, 1], "VALID") },
  { op: "ConvWithGeneralPadding", fn: "convWithGeneralPadding", opcodes: ["convolution"], build: (b, t) => xla.convWithGeneralPadding(ones(b, t, [1, 1, 2, 2]), ones(b, t, [1, 1, 1, 1]), [1, 1], [[1, 0], [0, 1]]) },
  { op: "ConvWithGeneralDimensions", fn: "convWithGeneralDimensions", opcodes: ["convolution"], build: (b, t) => xla.convWithGeneralDimensions(ones(b, t, [1, 1, 2, 2]), ones(b, t, [1, 1, 1, 1]), [1, 1], "SAME", xla.createDefaultConvDimensionNumbers(2)) },
  { op: "ConvGeneral", fn: "convGeneral", opcodes: ["convolution"], build: (b, t) => xla.convGeneral(ones(b, t, [1, 1, 2, 2]), ones(b, t, [1, 1, 1, 1]), [1, 1], [[0, 0], [0, 0]], xla.createDefaultConvDimensionNumbers(2)) },
  { op: "ConvGeneralDilated", fn: "convGeneralDilated", opcodes: ["convolution"], build: (b, t) =>
    xla.convGeneralDilated(ones(b, t, [1, 1, 2, 2]), ones(b, t, [1, 1, 1, 1]), [1, 1], [[0, 0], [0, 0]], [1, 1], [1, 1], xla.createDefaultConvDimensionNumbers(2)) },
  unary("Cos", "cos", "cos"),
  { op: "Cosh", fn: "cosh", opcodes: ["exp", "add", "negate", "log"], build: (b, t) => xla.cosh(v(b, t)) },
  { op: "CustomCall", fn: "customCall", opcodes: ["customCall"], typed: false, build: (b) => xla.customCall(b, "xlats.coverage", [], scalarShape("f32")) },
  { op: "CrossReplicaSum", fn: "crossReplicaSum", opcodes: ["allReduce", "add"], build: (b, t) => xla.crossReplicaSum(v(b, t)) },
  binary("Div", "div", "divide"),
  { op: "Dot", fn: "dot", opcodes: ["dot"], build: (b, t) => xla.dot(v(b, t), v(b, t)) },
  { op: "DotGeneral", fn: "dotGeneral", opcodes: ["dot"], build: (b, t) => xla.dotGeneral(ones(b, t, [2, 2]), ones(b, t, [2, 2]), { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }) },
  { op: "ScaledDot", fn: "scaledDot", opcodes: ["scaledDot"], build: (b, t) => xla.scaledDot(ones(b, t, [2, 2]), ones(b, t, [2, 2]), ones(b, t, [2, 2]), ones(b, t, [2, 2]), { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }) },
  { op: "RaggedDot", fn: "raggedDot", opcodes: ["raggedDot"], build: (b, t) =>
    xla.raggedDot(ones(b, t, [2, 2]), ones(b, t, [1, 2, 2]), xla.constantR1(b, "s32", [2]), {
      dotDimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [1] },
      lhsRaggedDimensions: [0], rhsGroupDimensions: [0],
    }) },
  { op: "DynamicReshape", fn: "dynamicReshape", opcodes: ["dynamicReshape"], build: (b, t) => xla.dynamicReshape(v(b, t), [xla.constantR0(b, "s32", 2)], [2], [true]) },
  { op: "DynamicSlice", fn: "dynamicSlice", opcodes: ["dynamicSlice"], build: (b, t) => xla.dynamicSlice(v(b, t), [idx(b)], [1]) },
  { op: "DynamicUpdateSlice", fn: "dynamicUpdateSlice", opcodes: ["dynamicUpdateSlice"], build: (b, t) => xla.dynamicUpdateSlice(v(b, t), ones(b, t, [1]), [idx(b)]) },
  unary("Erf", "erf", "erf"),
  unary("Exp", "exp", "exp"),
  unary("Expm1", "expm1", "expm1"),
  { op: "Fft", fn: "fft", opcodes: ["fft"], build: (b, t) => xla.fft(v(b, t), "FFT", [2]) },
  { op: "Fft (RFFT)", fn: "fft", opcodes: ["fft"], build: (b, t) => xla.fft(v(b, t), "RFFT", [2]) },
  unary("Floor", "floor", "floor"),
  { op: "Gather", fn: "gather", opcodes: ["gather"], build: (b, t) =>
    xla.gather(v(b, t), xla.constantR1(b, "s32", [0]), { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 0 }, [1]) },
  { op: "GetDimensionSize", fn: "getDimensionSize", opcodes: ["getDimensionSize"], build: (b, t) => xla.getDimensionSize(v(b, t), 0) },
  { op: "GetTupleElement", fn: "getTupleElement", opcodes: ["getTupleElement", "tuple"], build: (b, t) => xla.getTupleElement(xla.tuple(b, [v(b, t)]), 0) },
  unary("Imag", "imag", "imag"),
  { op: "Infeed", fn: "infeed", opcodes: ["infeed"], typed: false, build: (b) => xla.infeed(b, scalarShape("f32")) },
  { op: "Iota", fn: "iota", opcodes: ["iota"], build: (b, t) => xla.iota(b, t, 2) },
  unary("IsFinite", "isFinite", "isFinite"),
  unary("Log", "log", "log"),
  unary("Log1p", "log1p", "log1p"),
  unary("Logistic", "logistic", "logistic"),
  { op: "Map", fn: "map", opcodes: ["map"], build: (b, t) => xla.map(b, [v(b, t), v(b, t)], first(b, t), [0]) },
  binary("Max", "max", "maximum"),
  binary("Min", "min", "minimum"),
  binary("Mul", "mul", "multiply"),
  unary("Neg", "neg", "negate"),
  unary("Not", "not", "not"),
  { op: "OptimizationBarrier", fn: "optimizationBarrier", opcodes: ["optimizationBarrier"], build: (b, t) => xla.optimizationBarrier(v(b, t)) },
  binary("Or", "or", "or"),
  { op: "Outfeed", fn: "outfeed", opcodes: ["outfeed"], build: (b, t) => xla.outfeed(v(b, t), arrayShape(t, [2])) },
  { op: "PartitionId", fn: "partitionId", opcodes: ["partitionId"], typed: false, build: (b) => xla.partitionId(b) },
  { op: "Pad", fn: "pad", opcodes: ["pad"], build: (b, t) => xla.padInDim(v(b, t), s(b, t), 0, 1, -1) },
  { op: "Parameter", fn: "parameter", opcodes: ["parameter"], build: (b, t) => xla.parameter(b, 0, arrayShape(t, [2])) },
  unary("PopulationCount", "populationCount", "popcnt"),
  binary("Pow", "pow", "power"),
  unary("Real", "real", "real"),
  { op: "Recv (device to device)", fn: "recv", opcodes: ["send", "recv"], build: (b, t) => xla.recv(xla.send(v(b, t), xla.createToken(b), 2), arrayShape(t, [2]), 2) },
  { op: "Recv (from host)", fn: "recvFromHost", opcodes: ["recv"], build: (b, t) => xla.recvFromHost(xla.createToken(b), arrayShape(t, [2]), 1) },
  { op: "Reduce", fn: "reduce", opcodes: ["reduce"], build: (b, t) => xla.reduce(v(b, t), s(b, t), first(b, t), [0]) },
  { op: "ReducePrecision", fn: "reducePrecision", opcodes: ["reducePrecision"], build: (b, t) => xla.reducePrecision(v(b, t), 5, 2) },
  // StableHLO's quantization ops: `t` is the expressed type (storage i8, scale 0.5).
  { op: "UniformQuantize", fn: "uniformQuantize", opcodes: ["uniformQuantize"], build: (b, t) => xla.uniformQuantize(v(b, t), xla.perTensor("s8", t, 0.5, 0)) },
  { op: "UniformDequantize", fn: "uniformDequantize", opcodes: ["uniformDequantize"], build: (b, t) => xla.uniformDequantize(xla.uniformQuantize(v(b, t), xla.perTensor("s8", t, 0.5, 0))) },
  { op: "ReduceWindow", fn: "reduceWindow", opcodes: ["reduceWindow"], build: (b, t) => xla.reduceWindow(v(b, t), s(b, t), first(b, t), [2], [1], "SAME") },
  binary("Rem", "rem", "remainder"),
  { op: "ReduceScatter", fn: "reduceScatter", opcodes: ["reduceScatter"], build: (b, t) => xla.reduceScatter(v(b, t), first(b, t), 0, 1) },
  { op: "ReplicaId", fn: "replicaId", opcodes: ["replicaId"], typed: false, build: (b) => xla.replicaId(b) },
  { op: "Reshape", fn: "reshape", opcodes: ["reshape"], build: (b, t) => xla.reshape(v(b, t), [1, 2]) },
  { op: "Rev", fn: "rev", opcodes: ["reverse"], build: (b, t) => xla.rev(v(b, t), [0]) },
  { op: "RngBitGenerator", fn: "rngBitGenerator", opcodes: ["rngBitGenerator"], build: (b, t) =>
    xla.rngBitGenerator("PHILOX", xla.constantR1(b, "u64", [1n, 2n]), arrayShape(t, [2])) },
  { op: "RngNormal", fn: "rngNormal", opcodes: ["rng"], build: (b, t) => xla.rngNormal(s(b, t), s(b, t), arrayShape(t, [2])) },
  { op: "RngUniform", fn: "rngUniform", opcodes: ["rng"], build: (b, t) => xla.rngUniform(s(b, t), s(b, t), arrayShape(t, [2])) },
  { op: "RngBernoulli", fn: "rngBernoulli", opcodes: ["rng"], build: (b, t) => xla.rngBernoulli(s(b, t), [2]) },
  unary("Round", "round", "roundNearestAfz"),
  unary("RoundNearestAfz", "roundNearestAfz", "roundNearestAfz"),
  unary("RoundNearestEven", "roundNearestEven", "roundNearestEven"),
  unary("Rsqrt", "rsqrt", "rsqrt"),
  { op: "Scatter", fn: "scatter", opcodes: ["scatter"], build: (b, t) =>
    xla.scatter(v(b, t), xla.constantR1(b, "s32", [0]), ones(b, t, []), first(b, t),
      { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 0 }) },
  { op: "Select", fn: "select", opcodes: ["select"], build: (b, t) => xla.select(ones(b, "pred", [2]), v(b, t), v(b, t)) },
  { op: "SelectAndScatter", fn: "selectAndScatter", opcodes: ["selectAndScatter"], build: (b, t) =>
    xla.selectAndScatter(v(b, t), scalarComputation(b, t, 2, (ps) => xla.constantR0(ps[0]!.builder, "pred", true)), [2], [2], "VALID", ones(b, t, [1]), s(b, t), first(b, t)) },
  { op: "Send (to host)", fn: "sendToHost", opcodes: ["send"], build: (b, t) => xla.sendToHost(v(b, t), xla.createToken(b), 1) },
  { op: "SetDimensionSize", fn: "setDimensionSize", opcodes: ["setDimensionSize"], build: (b, t) => xla.setDimensionSize(v(b, t), xla.constantR0(b, "s32", 1), 0) },
  binary("ShiftLeft", "shiftLeft", "shiftLeft"),
  binary("ShiftRightArithmetic", "shiftRightArithmetic", "shiftRightArithmetic"),
  binary("ShiftRightLogical", "shiftRightLogical", "shiftRightLogical"),
  unary("Sign", "sign", "sign"),
  unary("Sin", "sin", "sin"),
  { op: "Slice", fn: "slice", opcodes: ["slice"], build: (b, t) => xla.slice(v(b, t), [1], [2], [1]) },
  { op: "Sort", fn: "sort", opcodes: ["sort"], build: (b, t) => xla.sort(v(b, t), never(b, t), 0, true) },
  unary("Sqrt", "sqrt", "sqrt"),
  binary("Sub", "sub", "subtract"),
  unary("Tan", "tan", "tan"),
  unary("Tanh", "tanh", "tanh"),
  { op: "TopK", fn: "topK", opcodes: ["topK"], build: (b, t) => xla.topK(v(b, t), 1) },
  { op: "Transpose", fn: "transpose", opcodes: ["transpose"], build: (b, t) => xla.transpose(ones(b, t, [2, 1]), [1, 0]) },
  { op: "TriangularSolve", fn: "triangularSolve", opcodes: ["triangularSolve"], build: (b, t) =>
    xla.triangularSolve(ones(b, t, [2, 2]), ones(b, t, [2, 2]), true, true, false, "NO_TRANSPOSE") },
  { op: "Tuple", fn: "tuple", opcodes: ["tuple"], build: (b, t) => xla.tuple(b, [v(b, t), s(b, t)]) },
  { op: "While", fn: "whileLoop", opcodes: ["while"], build: (b, t) => {
    const cond = scalarComputation(b, t, 1, (ps) => xla.constantR0(ps[0]!.builder, "pred", false));
    return xla.whileLoop(cond, scalarComputation(b, t, 1, (ps) => ps[0]!), s(b, t));
  } },
  binary("Xor", "xor", "xor"),
];

const CLASSES: readonly (readonly [string, (t: ElementType) => boolean])[] = [
  ["pred", (t) => t === "pred"],
  ["s2–s64", (t) => t.startsWith("s")],
  ["u2–u64", (t) => t.startsWith("u")],
  ["all floats", (t) => xla.isFloat(t)],
  ["c64, c128", (t) => xla.isComplex(t)],
];

/** "s2–s64, all floats" style summary of a set of element types. */
export function describeTypes(types: ReadonlySet<ElementType>): string {
  if (types.size === ELEMENT_TYPE_NAMES.length) return "all";
  if (types.size === 0) return "none";
  const parts: string[] = [];
  for (const [name, inClass] of CLASSES) {
    const members = ELEMENT_TYPE_NAMES.filter(inClass);
    const present = members.filter((t) => types.has(t));
    if (present.length === members.length) parts.push(name);
    else parts.push(...present);
  }
  return parts.join(", ");
}

function runs(probe: Probe, t: ElementType): boolean {
  try {
    const b = new XlaBuilder(`probe_${probe.fn}_${t}`);
    const root = probe.build(b, t);
    const c = b.build(root);
    const host = new xla.HostQueues();
    host.infeed.push(Literal.scalar("f32", 0));
    host.fromHost.set(1, [recvValue(t)]);
    const customCalls = new Map([["xlats.coverage", () => Literal.scalar("f32", 0)]]);
    const args = c.parameters.map((p) => (p.shape.kind === "array" ? Literal.zeros(p.shape) : Literal.token()));
    evaluate(c, args, { host, customCalls });
    return true;
  } catch (e) {
    if (e instanceof xla.XlaError) return false;
    throw new Error(`${probe.op} on ${t} crashed: ${(e as Error).stack ?? String(e)}`);
  }
}

/** The compiled backend's treatment of a probe's opcodes. */
function compiledAs(probe: Probe, t: ElementType): string {
  const b = new XlaBuilder(`compiled_${probe.fn}_${t}`);
  let exe: ReturnType<typeof compileSync>;
  try {
    exe = compileSync(b.build(probe.build(b, t)), { passes: [decompose, dotDecomposer, convCanonicalization, layoutAssignment, stepFusion] });
  } catch (e) {
    if (e instanceof xla.CompileError && /dynamic dimensions/.test(e.message)) return "refused (dynamic dimensions)";
    throw e;
  }
  try {
    const own = new Set<string>(probe.opcodes);
    const interpreted = allSteps(exe.program).some(({ step: s }) => s.kind === "interpret" && (own.has(s.opcode) ||
      (s.opcode === "fusion" && s.instruction.computations.some((c) => c.instructions.some((i) => own.has(i.opcode))))));
    return interpreted ? "interpreter kernel" : "compiled";
  } finally {
    exe.delete();
  }
}

export interface CoverageRow {
  readonly op: string;
  readonly fn: string;
  readonly opcodes: string;
  readonly shapeInference: boolean;
  readonly interpreter: boolean;
  readonly types: string;
  readonly wasm: string;
}

export function coverageRows(): CoverageRow[] {
  return PROBES.map((p) => {
    const typed = p.typed ?? true;
    const accepted = new Set(typed ? ELEMENT_TYPE_NAMES.filter((t) => runs(p, t)) : []);
    const untypedOk = typed || runs(p, "f32");
    return {
      op: p.op,
      fn: typeof xla[p.fn] === "function" ? `\`${p.fn}\`` : "missing",
      opcodes: p.opcodes.join(", "),
      shapeInference: p.opcodes.every((o) => SHAPE_RULES[o] !== undefined),
      interpreter: p.opcodes.every((o) => KERNELS[o] !== undefined) && (typed ? accepted.size > 0 : untypedOk),
      types: typed ? describeTypes(accepted) : untypedOk ? "n/a" : "none",
      wasm: (() => {
        const t: ElementType | undefined = !typed ? "f32" : accepted.has("f32") ? "f32" : [...accepted][0];
        return t === undefined ? "n/a" : compiledAs(p, t);
      })(),
    };
  });
}

export function coverageTable(): string {
  const mark = (ok: boolean): string => (ok ? "yes" : "**no**");
  const lines = [
    "| op | builder | IR opcodes | shape inference | interpreter | element types it runs on | wasm backend |",
    "|---|---|---|---|---|---|---|",
    ...coverageRows().map((r) => `| ${r.op} | ${r.fn} | ${r.opcodes} | ${mark(r.shapeInference)} | ${mark(r.interpreter)} | ${r.types} | ${r.wasm} |`),
  ];
  return lines.join("\n");
}

export const COVERAGE_BEGIN = "<!-- coverage:begin (generated by `npm run coverage`; do not edit by hand) -->";
export const COVERAGE_END = "<!-- coverage:end -->";
export const SIGNATURES_BEGIN = "<!-- signatures:begin (generated by `npm run coverage`; do not edit by hand) -->";
export const SIGNATURES_END = "<!-- signatures:end -->";

/** The builder's modules that src/index.ts re-exports whole, in the order the page lists them. */
const BUILDER_MODULES = [
  "xla_builder", "elementwise", "conversion", "data_movement", "reduction", "linalg", "control", "random", "transfer", "collective", "sdy",
];

/** The exported function declarations of a builder module's .d.ts, each with its doc comment, in file order. */
function declarationsOf(name: string): { readonly name: string; readonly lines: readonly string[] }[] {
  const lines = readFileSync(new URL(`../src/builder/${name}.d.ts`, import.meta.url), "utf8").split("\n");
  const found: { readonly name: string; readonly lines: readonly string[] }[] = [];
  let comment: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("/**")) {
      comment = [line];
      while (!lines[i]!.endsWith("*/") && i + 1 < lines.length) comment.push(lines[++i]!);
      continue;
    }
    const reexport = /^export \{ ([^}]*) \} from "\.\/(\w+)\.js";$/.exec(line);
    if (reexport !== null) {
      const names = new Set(reexport[1]!.split(", "));
      found.push(...declarationsOf(reexport[2]!).filter((d) => names.has(d.name)));
    } else if (line.startsWith("export declare function ")) {
      // A declaration ends at the first line that closes its brackets with a semicolon.
      const declaration = [line];
      let depth = 0;
      for (let j = i; ; j++) {
        const l = lines[j]!;
        if (j > i) declaration.push(l);
        depth += (l.match(/[{(<]/g) ?? []).length - (l.match(/[})>]/g) ?? []).length + (l.match(/=>/g) ?? []).length;
        if (depth <= 0 && l.endsWith(";")) {
          i = j;
          break;
        }
      }
      found.push({ name: /^export declare function (\w+)/.exec(line)![1]!, lines: [...comment, ...declaration] });
    }
    comment = [];
  }
  return found;
}

/**
 * Every function the builder's modules export, with its doc comment, as the build's
 * declaration files (dist/src/builder/*.d.ts) write them: one ts block per module.
 */
export function opSignatures(): string {
  return BUILDER_MODULES.map((name) => {
    const declarations = declarationsOf(name).flatMap((d) => d.lines);
    return `### \`src/builder/${name}.ts\`\n\n\`\`\`ts no-run\n${declarations.join("\n")}\n\`\`\``;
  }).join("\n\n");
}

/** `text` with the section between `begin` and `end` replaced by `body`. */
function replaceSection(text: string, begin: string, end: string, body: string): string {
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/ops.md has no ${begin} ... ${end} markers`);
  return `${text.slice(0, from + begin.length)}\n${body}\n${text.slice(to)}`;
}

/** docs/ops.md with its coverage table and its list of declarations as computed now. */
export function opsPageWithCoverage(page: string): string {
  const withTable = replaceSection(page, COVERAGE_BEGIN, COVERAGE_END, coverageTable());
  return replaceSection(withTable, SIGNATURES_BEGIN, SIGNATURES_END, opSignatures());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { writeFileSync } = await import("node:fs");
  if (process.argv.includes("--write")) {
    writeFileSync("docs/ops.md", opsPageWithCoverage(readFileSync("docs/ops.md", "utf8")));
  } else {
    console.log(coverageTable());
  }
}
