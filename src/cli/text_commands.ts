// `xlats convert` and `xlats print`: text in, text out, on the parsers and printers alone.

import { lowerChloModule } from "../compiler/expansions/index.js";
import { oneFile, single, type ParsedArgs } from "./args.js";
import { detectFormat, parseModule, printModule, type TextFormat } from "./formats.js";
import { CliError, type CliIo } from "./io.js";

export function convertCommand(args: ParsedArgs, io: CliIo): number {
  const file = oneFile(args, "convert");
  const to = single(args, "to", "convert");
  if (to !== "mlir" && to !== "hlo") throw new CliError(`convert: --to must be mlir or hlo${to === undefined ? "" : `, got '${to}'`}`, 2);
  const text = io.readFile(file);
  const module = parseModule(text, file);
  io.out(printModule(module, to).replace(/\n$/, ""));
  return 0;
}

export function printCommand(args: ParsedArgs, io: CliIo): number {
  const file = oneFile(args, "print");
  const text = io.readFile(file);
  const format: TextFormat = detectFormat(text, file);
  const module = parseModule(text, file, format);
  io.out(printModule(args.switches.has("lower-chlo") ? lowerChloModule(module) : module, format).replace(/\n$/, ""));
  return 0;
}
