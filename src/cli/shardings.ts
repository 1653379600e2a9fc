// `xlats shardings FILE`: draws how each sharded tensor of a program is laid out over
// its mesh's devices (src/sdy/visualize/), as text grids on stdout or as one HTML page.
// The program is StableHLO text with Shardy shardings (optionally propagated first with
// -sdy-propagation-pipeline), or HLO text whose `sharding=` attributes Shardy can say.
// With --reshards, the program is propagated and given its explicit reshards
// (-sdy-insert-explicit-reshards), and each reshard is drawn as the value before it and
// the value it makes, marked with what moves where.
// Problems with the input are reported as `FILE:LINE:COL: error: MESSAGE`, as `xlats
// opt` reports them.
//
// The two Shardy passes are imported when a flag asks for them (sdy_pass_modules.ts), not
// with the pass registry: drawing alone needs none of the 60-odd modules of the passes,
// and the playground, which draws in its page, loads them only when propagation is asked
// for.

import { runPass, type PassContext } from "../passes/pass.js";
import { passFromFlagIn, passNameOfFlag } from "../passes/pass_options.js";
import { loadSdyPasses } from "./sdy_pass_modules.js";
import { isOp, type Computation, type HloModule } from "../ir/computation.js";
import { OP_TABLE, type Opcode } from "../ir/opcodes.js";
import { sourceLocation, type SourceLocation } from "../ir/locations.js";
import { verifyModule } from "../ir/verify.js";
import { printMesh, printTensorSharding } from "../text/mlir/sdy_attr_text.js";
import { axisListToString, ShardingError } from "../sharding/axis.js";
import { SdyVerifyError } from "../text/mlir/diagnostics.js";
import { meshOf, meshTable } from "../sharding/mesh.js";
import type { Mesh } from "../sharding/model.js";
import { verifySdy } from "../sdy/verify.js";
import { renderShardingsHtml, type ShardingFigure } from "../sdy/visualize/html.js";
import { shardingLayout, type ShardingLayout } from "../sdy/visualize/layout.js";
import { describeLayout, renderLayoutGrid, renderMeshLegend } from "../sdy/visualize/text.js";
import { findValue, functionValues, type FunctionValue } from "../sdy/visualize/values.js";
import { parseHlo } from "../text/hlo/index.js";
import { parseStableHlo, shapeToMlir } from "../text/mlir/index.js";
import { XlaError } from "../types/errors.js";
import { detectFormat } from "./formats.js";
import { CliError, type CliIo } from "./io.js";
import { formatDiagnostic, formatWarning } from "./diagnostics.js";
import { appendAll } from "../types/arrays.js";

export interface ShardingsOptions {
  readonly file: string;
  readonly func?: string;
  readonly values?: readonly string[];
  readonly propagate: boolean;
  /** Propagate, insert explicit reshards, and draw (and mark) each reshard. */
  readonly reshards?: boolean;
  readonly html?: string;
}

/** Bad input to `xlats shardings`, at the place in the file it is about when there is one. */
export class ShardingsInputError extends XlaError {
  override name = "ShardingsInputError";
}

function errorAt(message: string, file: string, at: SourceLocation | undefined): ShardingsInputError {
  const e = new ShardingsInputError(message);
  if (at !== undefined) e.location = { file, line: at.line, column: at.column };
  return e;
}

/** One tensor to draw. */
interface Selected {
  readonly func: Computation;
  readonly value: FunctionValue;
}

/** The pass flags --propagate and --reshards run, in order. */
function shardyPassFlags(options: ShardingsOptions): readonly string[] {
  if (options.reshards === true) return ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"];
  return options.propagate ? ["-sdy-propagation-pipeline"] : [];
}

async function loadModule(options: ShardingsOptions, text: string, io: CliIo): Promise<HloModule> {
  const { file } = options;
  if (detectFormat(text, file) === "hlo") {
    if (options.propagate || options.reshards === true) {
      throw new CliError("shardings: --propagate and --reshards run Shardy's pipeline, which needs StableHLO text with sdy shardings; this is HLO text", 2);
    }
    return parseHlo(text, file);
  }
  let module = parseStableHlo(text, file, 0, { recordLocations: true });
  verifyModule(module);
  const problems = verifySdy(module);
  if (problems.length > 0) throw new SdyVerifyError(problems);
  const ctx: PassContext = { verify: true, log: () => {}, warn: (_pass, message, at) => io.err(formatWarning(message, at, file)) };
  const flags = shardyPassFlags(options);
  const registrations = flags.length > 0 ? await loadSdyPasses(flags.map(passNameOfFlag)) : [];
  for (const flag of flags) module = runPass(passFromFlagIn(registrations!, flag)!, module, ctx);
  return module;
}

function selectFunctions(module: HloModule, options: ShardingsOptions): readonly Computation[] {
  const all = module.functions ?? module.computations;
  if (options.func === undefined) return all;
  const name = options.func.replace(/^@/, "");
  const found = all.find((c) => c.name === name);
  if (found === undefined) {
    throw errorAt(`no function @${name} (the functions are ${all.map((c) => `@${c.name}`).join(", ")})`, options.file, undefined);
  }
  return [found];
}

/**
 * The values --values names in any of `funcs` (each name must name one, and at least
 * one of those must have a sharding), or every sharded tensor.
 */
function selectValues(funcs: readonly Computation[], options: ShardingsOptions): Selected[] {
  const perFunc = funcs.map((func) => ({ func, values: functionValues(func) }));
  if (options.values === undefined && options.reshards === true) {
    // Each reshard: the value it reshards (once), then the value it makes.
    return perFunc.flatMap(({ func, values }) => {
      const out: Selected[] = [];
      const add = (value: FunctionValue | undefined): void => {
        if (value !== undefined && value.sharding !== undefined && value.shape.kind === "array" && !out.some((s) => s.value === value)) out.push({ func, value });
      };
      for (const v of values) {
        if (v.producer === undefined || !RESHARD_OPS.has(v.producer.opcode)) continue;
        add(values.find((w) => w.producer === v.producer!.operands[0]));
        add(v);
      }
      return out;
    });
  }
  if (options.values === undefined) {
    return perFunc.flatMap(({ func, values }) => values.filter((v) => v.sharding !== undefined && v.shape.kind === "array").map((value) => ({ func, value })));
  }
  return options.values.flatMap((name) => {
    const matches = perFunc.flatMap(({ func, values }) => {
      const value = findValue(values, name);
      return value === undefined ? [] : [{ func, value }];
    });
    if (matches.length === 0) {
      const where = funcs.length === 1 ? `@${funcs[0]!.name}` : `any of ${funcs.map((f) => `@${f.name}`).join(", ")}`;
      const known = perFunc.flatMap(({ values }) => values.map((v) => v.name));
      throw errorAt(`no value ${name} in ${where} (its values: ${[...new Set(known)].join(", ")})`, options.file, funcs.length === 1 ? sourceLocation(funcs[0]!) : undefined);
    }
    const sharded = matches.filter((m) => m.value.sharding !== undefined);
    if (sharded.length === 0) {
      const first = matches[0]!;
      throw errorAt(`value ${first.value.name} of @${first.func.name} has no sharding`, options.file, first.value.location);
    }
    const notTensor = sharded.find((m) => m.value.shape.kind !== "array");
    if (notTensor !== undefined) {
      throw errorAt(`value ${notTensor.value.name} of @${notTensor.func.name} is a ${shapeToMlir(notTensor.value.shape)}, not a tensor`, options.file, notTensor.value.location);
    }
    return sharded;
  });
}

/** The ops -sdy-insert-explicit-reshards inserts: data moves between devices there. */
const RESHARD_OPS: ReadonlySet<Opcode> = new Set<Opcode>(["sdyReshard", "sdyAllReduce", "sdyAllGather", "sdyAllSlice", "sdyAllToAll", "sdyCollectivePermute", "sdyReduceScatter"]);

/** For a value a reshard makes: the value it comes from (and its sharding), the op, and who uses the result. */
function reshardNote(func: Computation, value: FunctionValue): string | undefined {
  const op = value.producer;
  if (op === undefined || !RESHARD_OPS.has(op.opcode)) return undefined;
  const values = functionValues(func);
  const source = values.find((w) => w.producer === op.operands[0]);
  const from = source === undefined ? "its operand" : `${source.name}${source.sharding !== undefined ? ` ${printTensorSharding(source.sharding)}` : ""}`;
  const users = func.instructions.filter((u) => u.operands.includes(op)).map((u) => `${OP_TABLE[u.opcode].stablehlo ?? u.opcode} %${u.name}`);
  if (func.root === op || (func.root.opcode === "tuple" && func.root.operands.includes(op))) users.push("the return");
  const what = isOp(op, "sdyAllReduce")
    ? `${source?.name ?? "its operand"} holds partial results along ${axisListToString(op.attrs.reductionAxes)}, summed here`
    : `${from} → this sharding`;
  return `⇄ ${OP_TABLE[op.opcode].stablehlo ?? op.opcode} here: ${what}${users.length > 0 ? `, for ${users.join(", ")}` : ""}`;
}

interface Drawn {
  readonly figure: ShardingFigure;
  /** The mesh's name, or undefined for an inline mesh. */
  readonly meshName: string | undefined;
}

function draw(selected: Selected, meshes: ReadonlyMap<string, Mesh>, file: string): Drawn {
  const { func, value } = selected;
  const sharding = value.sharding!;
  const meshName = typeof sharding.meshOrRef === "string" ? sharding.meshOrRef : undefined;
  const mesh = meshOf(sharding, meshes);
  if (mesh === undefined) throw errorAt(`${value.name} of @${func.name}: unknown mesh @${meshName}`, file, value.location);
  if (value.shape.kind !== "array") throw errorAt(`${value.name} of @${func.name} is not a tensor`, file, value.location);
  const dims = value.shape.dimensions;
  const layout = ((): ShardingLayout => {
    try {
      return shardingLayout(sharding, mesh, dims);
    } catch (e) {
      if (e instanceof ShardingError) throw errorAt(`${value.name} of @${func.name}: ${e.message}`, file, value.location);
      throw e;
    }
  })();
  return {
    meshName,
    figure: {
      title: `@${func.name} ${value.name}: ${shapeToMlir(value.shape)}`,
      shardingText: printTensorSharding(sharding),
      meshText: meshName === undefined ? printMesh(mesh) : `@${meshName} = ${printMesh(mesh)}`,
      layout,
      ...((): { note?: string } => {
        const note = reshardNote(func, value);
        return note === undefined ? {} : { note };
      })(),
    },
  };
}

/** The text report: each named mesh's devices once, then each tensor's grid and summary. */
function textReport(drawn: readonly Drawn[], color: boolean): string[] {
  const lines: string[] = [];
  const meshesShown = new Set<string>();
  for (const d of drawn) {
    if (d.meshName === undefined || meshesShown.has(d.meshName)) continue;
    meshesShown.add(d.meshName);
    appendAll(lines, [`mesh ${d.figure.meshText}`, ...renderMeshLegend(d.figure.layout.mesh, color).map((l) => `  ${l}`), ""]);
  }
  for (const { figure, meshName } of drawn) {
    appendAll(lines, [figure.title, ...(figure.note !== undefined ? [`  ${figure.note}`] : []), `  ${figure.shardingText}`]);
    if (meshName === undefined) appendAll(lines, [`  mesh ${figure.meshText}`, ...renderMeshLegend(figure.layout.mesh, color).map((l) => `    ${l}`)]);
    appendAll(lines, [...renderLayoutGrid(figure.layout, color).map((l) => `  ${l}`), ...describeLayout(figure.layout).map((l) => `  ${l}`), ""]);
  }
  return lines;
}

export async function shardingsCommand(options: ShardingsOptions, io: CliIo): Promise<number> {
  const text = io.readFile(options.file);
  let drawn: Drawn[];
  try {
    const module = await loadModule(options, text, io);
    const funcs = selectFunctions(module, options);
    const meshes = meshTable(module);
    drawn = selectValues(funcs, options).map((s) => draw(s, meshes, options.file));
  } catch (e) {
    if (!(e instanceof XlaError)) throw e;
    io.err(formatDiagnostic(e, options.file));
    return 1;
  }
  if (options.html !== undefined) {
    if (io.writeFile === undefined) throw new CliError("shardings: --html needs a file system to write to, which this caller does not give");
    const after = options.reshards === true ? " after propagation and -sdy-insert-explicit-reshards" : options.propagate ? " after -sdy-propagation-pipeline" : "";
    const title = `Shardings of ${options.file}${after}`;
    io.writeFile(options.html, renderShardingsHtml(title, drawn.map((d) => d.figure)));
    io.out(`wrote ${drawn.length} figure${drawn.length === 1 ? "" : "s"} to ${options.html}`);
    return 0;
  }
  if (drawn.length === 0) {
    io.out(`no tensor of ${options.file}${options.func !== undefined ? ` @${options.func.replace(/^@/, "")}` : ""} has a sharding`);
    return 0;
  }
  const color = io.colors === true;
  io.out(textReport(drawn, color).map((l) => escapeControls(l.trimEnd(), color)).join("\n").trimEnd());
  return 0;
}

/** The background and text colors the grid paints devices with (sdy/visualize/text.ts), and their reset. */
const GRID_COLOR = /\x1b\[(?:48;5;\d{1,3}|30|0)m/y;

/**
 * A report line with every control character shown as an escape (`\x1b`): mesh, axis
 * and value names come from the program, and a name holding a terminal escape sequence
 * would otherwise retitle, clear or rewrite the user's terminal. Only the grid's own
 * colors stay, when colors are on.
 */
function escapeControls(line: string, keepColors: boolean): string {
  let out = "";
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (keepColors && code === 0x1b) {
      GRID_COLOR.lastIndex = i;
      const m = GRID_COLOR.exec(line);
      if (m !== null) {
        out += m[0];
        i += m[0].length - 1;
        continue;
      }
    }
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\x${code.toString(16).padStart(2, "0")}` : line[i];
  }
  return out;
}
