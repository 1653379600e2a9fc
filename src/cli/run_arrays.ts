// Arrays in and out of `xlats run`: an --arg is an MLIR literal or a .npy file; --out
// writes the results to a .npz (arr_0, arr_1, ... as np.savez names positional arrays)
// or, for one result, a .npy; --print picks MLIR literals or numpy's repr. Files are
// read and written as bytes: large inputs never go through text.

import { parseMlirLiteral, printMlirLiteral } from "../text/mlir/index.js";
import { XlaError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { elementCount, type Shape, shapeToString } from "../types/shape.js";
import { writeNpz } from "../types/npz.js";
import { NpyError, numpyDtypeName } from "../types/npy.js";
import { numpyRepr } from "../types/numpy_repr.js";
import { convertLiteral } from "../types/convert.js";
import type { ElementType } from "../types/element_type.js";
import { CliError, type CliIo } from "./io.js";

export const PRINT_FORMATS = ["mlir", "numpy"] as const;
export type PrintFormat = (typeof PRINT_FORMATS)[number];

/** Whether an --arg names a file rather than spelling a literal. */
function isNpyPath(arg: string): boolean {
  return /\.npy$/i.test(arg) && !arg.trimStart().startsWith("dense");
}

/**
 * How messages name an --arg: by the parameter it feeds, numbered from 0 as XLA numbers
 * parameters (the n-th --arg feeds parameter n - 1), so one number means one thing.
 */
export function argumentLabel(parameter: number): string {
  return `--arg for parameter ${parameter}`;
}

/**
 * The literal of the --arg for `parameter`: an MLIR literal, or a .npy file read as the
 * parameter's element type where the file leaves it open (ml_dtypes' 'V1'). With `cast`
 * (--cast), an array of another element type is converted to the parameter's, as
 * ConvertElementType converts (floats round to nearest even; to integers they truncate
 * and saturate, NaN becoming 0).
 */
export function readRunArgument(arg: string, parameter: number, io: CliIo, shape: Shape | undefined, cast = false): Literal {
  const label = argumentLabel(parameter);
  const wanted = shape?.kind === "array" ? shape.elementType : undefined;
  try {
    const lit = isNpyPath(arg) ? readNpyArgument(arg, io, label, wanted, cast) : parseMlirLiteral(arg);
    return cast && wanted !== undefined && lit.shape.kind === "array" && lit.elementType !== wanted ? convertLiteral(lit, wanted) : lit;
  } catch (e) {
    if (e instanceof XlaError) {
      const where = e.message.startsWith("<literal>:") ? e.message.replace(/^<literal>:/, `${label}: `) : `${label}: ${e.message}`;
      // A .npy of another dtype (float64 from numpy's defaults, most often): say how to convert it.
      const hint = e instanceof NpyError && wanted !== undefined && isDtypeMismatch(e)
        ? ` (convert it first, e.g. with numpy: np.save(f, np.load(f).astype("${numpyDtypeName(wanted)}")), or pass --cast to convert it here)`
        : "";
      throw new CliError(`run: ${where}${hint}`);
    }
    throw e;
  }
}

const isDtypeMismatch = (e: NpyError): boolean => /, expected /.test(e.message);

/** A .npy --arg: as the parameter's element type (the only way to read a 'V1' file); with `cast`, any other as its own, converted by the caller. */
function readNpyArgument(path: string, io: CliIo, label: string, wanted: ElementType | undefined, cast: boolean): Literal {
  if (io.readBytes === undefined) throw new CliError(`run: ${label}: reading ${path} needs a file system`);
  const bytes = io.readBytes(path);
  try {
    return Literal.fromNpy(bytes, { name: path, ...(wanted !== undefined ? { elementType: wanted } : {}) });
  } catch (e) {
    if (!(cast && e instanceof NpyError && isDtypeMismatch(e))) throw e;
    return Literal.fromNpy(bytes, { name: path });
  }
}

/** Writes the results to `path`: a .npz of all of them, or a .npy of the only one. */
export function writeRunResults(path: string, results: readonly Literal[], io: CliIo): void {
  if (io.writeBytes === undefined) throw new CliError(`run: --out ${path} needs a file system`);
  const arrays = results.filter((r) => r.shape.kind === "array");
  if (arrays.length !== results.length) throw new CliError("run: --out writes arrays; a result is a token or a tuple");
  if (/\.npz$/i.test(path)) {
    io.writeBytes(path, writeNpz(arrays.map((r, i) => [`arr_${i}`, r] as const)));
  } else if (/\.npy$/i.test(path)) {
    if (arrays.length !== 1) throw new CliError(`run: --out ${path}: a .npy holds one array, the program has ${arrays.length} results (use .npz)`);
    io.writeBytes(path, arrays[0]!.toNpy());
  } else {
    throw new CliError(`run: --out must name a .npz or .npy file, got ${path}`, 2);
  }
}

export function parsePrintFormat(value: string | undefined): PrintFormat {
  if (value === undefined) return "mlir";
  if ((PRINT_FORMATS as readonly string[]).includes(value)) return value as PrintFormat;
  throw new CliError(`run: --print must be ${PRINT_FORMATS.join(" or ")}, got '${value}'`, 2);
}

/**
 * 1,048,576: results with more elements than this print summarised (numpy's repr, its
 * first and last items), whatever --print says. Every element of one is about 15 MB of
 * text; a 200 MB result would be gigabytes of strings, past what the process holds.
 */
export const RUN_PRINT_LIMIT = 1 << 20;

/** One result's text in the chosen format; `index` numbers it in the note of a summarised one. */
export function formatRunResult(result: Literal, format: PrintFormat, io?: CliIo, index = 0): string {
  const count = result.shape.kind === "array" ? elementCount(result.shape) : 0;
  if (count > RUN_PRINT_LIMIT) {
    io?.err(`run: result ${index} (${shapeToString(result.shape)}) has ${count} elements, more than ${RUN_PRINT_LIMIT}: printed summarised; --out FILE.npz writes every value`);
    return numpyRepr(result);
  }
  return format === "numpy" ? numpyRepr(result) : printMlirLiteral(result);
}
