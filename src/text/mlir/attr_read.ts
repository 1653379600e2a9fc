// Reading typed values out of parsed attributes, with ParseErrors that point at the op.
// Import uses these for every op's attributes, in both generic and pretty spellings.

import type { ConvDimensionNumbers, ReplicaGroupMeshAxes, ReplicaGroups, WindowDimension } from "../../ir/attributes.js";
import { fullAxis } from "../../sharding/axis.js";
import { replicaGroupsForAxes } from "../../sharding/local_shapes.js";
import type { Mesh, NamedMesh } from "../../sharding/model.js";
import type { Attr, AttrDict, OpNode } from "./ast.js";
import type { Cursor } from "./cursor.js";

export class AttrReader {
  /** The attribute names the op's lowering asked for: the op's own; the others are unknown to it. */
  readonly asked = new Set<string>();

  /** `meshes`: the module's meshes declared so far (replica groups may name one). */
  constructor(readonly c: Cursor, readonly op: OpNode, private readonly meshes: readonly NamedMesh[] = []) {}

  fail(message: string): never {
    throw this.c.error(`${this.op.name}: ${message}`, this.op.offset);
  }

  /** Marks attributes as the op's own without reading them (what the printer writes again from the op). */
  own(...keys: string[]): void {
    for (const k of keys) this.asked.add(k);
  }

  get(...keys: string[]): Attr | undefined {
    this.own(...keys);
    for (const k of keys) {
      const v = this.op.attrs.get(k);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  /** Positional pretty-syntax items (`LT`, `"name"`, `@target`, `dense<...>`). */
  positional(): readonly Attr[] {
    const p = this.get("__positional");
    return p?.kind === "list" ? p.items : [];
  }

  int(keys: string | string[], fallback?: number): number {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    return toInt(v) ?? this.fail(`attribute ${list[0]} must be an integer`);
  }

  bool(keys: string | string[], fallback = false): boolean {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) return fallback;
    if (v.kind === "bool") return v.value;
    if (v.kind === "unit") return true;
    if (v.kind === "int") return v.value !== 0n;
    return this.fail(`attribute ${list[0]} must be a boolean`);
  }

  ints(keys: string | string[], fallback?: number[]): number[] {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    return toInts(v) ?? this.fail(`attribute ${list[0]} must be a list of integers`);
  }

  enumValue(keys: string | string[], fallback?: string): string {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    if (v.kind === "enum") return v.value;
    if (v.kind === "string") return v.value;
    return this.fail(`attribute ${list[0]} must be a keyword`);
  }

  string(keys: string | string[], fallback?: string): string {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    if (v.kind === "string") return v.value;
    return this.fail(`attribute ${list[0]} must be a string`);
  }

  float(keys: string | string[], fallback?: number): number {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    if (v.kind === "float") return v.value;
    if (v.kind === "int") return Number(v.value);
    return this.fail(`attribute ${list[0]} must be a number`);
  }

  /** Fields of `#stablehlo.gather<...>`-style structs. */
  struct(keys: string | string[]): AttrDict {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v?.kind !== "struct") return this.fail(`missing or malformed attribute ${list[0]}`);
    return v.fields;
  }

  /** A dense i64 matrix (replica groups, padding, source-target pairs) as rows. */
  matrix(keys: string | string[], fallback?: number[][]): number[][] {
    const list = typeof keys === "string" ? [keys] : keys;
    const v = this.get(...list);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      return this.fail(`missing attribute ${list[0]}`);
    }
    if (v.kind === "dense") {
      const lit = v.literal;
      const dims = lit.dimensions;
      const flat = lit.values().map((x) => Number(x));
      if (dims.length === 1 && flat.length === 0) return [];
      if (dims.length !== 2) return this.fail(`attribute ${list[0]} must be a 2-d tensor`);
      const rows: number[][] = [];
      for (let i = 0; i < dims[0]!; i++) rows.push(flat.slice(i * dims[1]!, (i + 1) * dims[1]!));
      return rows;
    }
    if (v.kind === "list") return v.items.map((r) => toInts(r) ?? this.fail(`attribute ${list[0]} must hold integer lists`));
    return this.fail(`attribute ${list[0]} must be a 2-d integer tensor`);
  }

  replicaGroups(): ReplicaGroups {
    const byAxes = this.replicaGroupMeshAxes();
    if (byAxes !== undefined) {
      const mesh = typeof byAxes.mesh === "string" ? this.meshes.find((m) => m.name === byAxes.mesh)!.mesh : byAxes.mesh;
      try {
        return replicaGroupsForAxes(mesh, byAxes.axes.map(fullAxis), "replica_groups");
      } catch (e) {
        return this.fail(`attribute replica_groups: ${(e as Error).message}`);
      }
    }
    return this.matrix("replica_groups", []).map((g) => g.filter((x) => x >= 0));
  }

  /**
   * `replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @m | #stablehlo.mesh<...>,
   * axes = [#stablehlo.axis_ref<name = "x">, ...]>`: the groups of devices that differ only
   * along those axes of the mesh. Undefined when the groups are given as ids.
   */
  replicaGroupMeshAxes(): ReplicaGroupMeshAxes | undefined {
    const v = this.get("replica_groups");
    if (v?.kind !== "struct" || v.name !== "stablehlo.replica_group_mesh_axes") return undefined;
    const meshAttr = v.fields.get("mesh");
    let mesh: string | Mesh;
    if (meshAttr?.kind === "symbol") {
      if (!this.meshes.some((m) => m.name === meshAttr.name)) return this.fail(`attribute replica_groups: unknown mesh @${meshAttr.name}`);
      mesh = meshAttr.name;
    } else if (meshAttr?.kind === "struct" && meshAttr.name === "stablehlo.mesh") {
      mesh = this.stablehloMesh(meshAttr.fields);
    } else {
      return this.fail("attribute replica_groups: mesh must be a mesh symbol (@name) or #stablehlo.mesh<...>");
    }
    const axesAttr = v.fields.get("axes");
    if (axesAttr?.kind !== "list") return this.fail("attribute replica_groups: axes must be a list of #stablehlo.axis_ref<...>");
    const axes = axesAttr.items.map((a) => {
      const name = a.kind === "struct" && a.name === "stablehlo.axis_ref" && a.fields.size === 1 ? a.fields.get("name") : undefined;
      if (name?.kind !== "string") return this.fail("attribute replica_groups: each axis must be #stablehlo.axis_ref<name = \"...\"> (sub-axes are not supported)");
      return name.value;
    });
    const meshAxes = typeof mesh === "string" ? this.meshes.find((m) => m.name === mesh)!.mesh.axes : mesh.axes;
    for (const a of axes) if (!meshAxes.some((m) => m.name === a)) this.fail(`attribute replica_groups: unknown axis "${a}" of the mesh`);
    return { mesh, axes };
  }

  /** The fields of `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, ...]>`. */
  private stablehloMesh(fields: AttrDict): Mesh {
    const axesAttr = fields.get("axes");
    if (axesAttr?.kind !== "list" || fields.size !== 1) return this.fail("attribute replica_groups: #stablehlo.mesh takes axes = [#stablehlo.mesh_axis<...>, ...] (device_ids are not supported)");
    return {
      axes: axesAttr.items.map((a) => {
        const name = a.kind === "struct" && a.name === "stablehlo.mesh_axis" ? a.fields.get("name") : undefined;
        const size = a.kind === "struct" ? a.fields.get("size") : undefined;
        if (name?.kind !== "string" || size?.kind !== "int" || size.value < 1n) return this.fail("attribute replica_groups: each mesh axis must be #stablehlo.mesh_axis<name = \"...\", size = N>");
        return { name: name.value, size: Number(size.value) };
      }),
    };
  }

  /** `precision_config = [#stablehlo<precision DEFAULT>, ...]` or pretty `precision = [DEFAULT, ...]`. */
  precision(): ("DEFAULT" | "HIGH" | "HIGHEST")[] {
    const v = this.get("precision_config", "precision");
    if (v === undefined) return [];
    if (v.kind !== "list") return this.fail("precision_config must be a list");
    return v.items.map((p) => {
      const s = p.kind === "enum" ? p.value : "";
      if (s !== "DEFAULT" && s !== "HIGH" && s !== "HIGHEST") return this.fail(`unknown precision '${s}'`);
      return s;
    });
  }

  channel(): { handle: number; type: number } | undefined {
    const v = this.get("channel_handle", "channel_id");
    if (v === undefined) return undefined;
    if (v.kind === "struct") return { handle: toInt(v.fields.get("handle")!) ?? 0, type: toInt(v.fields.get("type")!) ?? 0 };
    const n = toInt(v);
    if (n !== undefined) return { handle: n, type: 1 };
    return this.fail("malformed channel_handle");
  }
}

export function toInt(v: Attr | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (v.kind === "int") return Number(v.value);
  if (v.kind === "bool") return v.value ? 1 : 0;
  if (v.kind === "dense" && v.literal.dimensions.length === 0) return Number(v.literal.values()[0]);
  return undefined;
}

export function toInts(v: Attr): number[] | undefined {
  if (v.kind === "denseArray") return v.values.map(Number);
  if (v.kind === "list") {
    const out: number[] = [];
    for (const item of v.items) {
      const n = toInt(item);
      if (n === undefined) return undefined;
      out.push(n);
    }
    return out;
  }
  if (v.kind === "dense") return v.literal.values().map((x) => (typeof x === "boolean" ? (x ? 1 : 0) : Number(x)));
  return undefined;
}

/** Booleans written as `[true, false]`, `array<i1: true>` or `dense<[true]>`. */
export function toBools(v: Attr | undefined): boolean[] | undefined {
  if (v === undefined) return undefined;
  const ints = toInts(v);
  if (ints !== undefined) return ints.map((x) => x !== 0);
  return undefined;
}

/**
 * Reads conv dimension numbers from `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (with or
 * without `#stablehlo.conv<...>`); the `raw` form is a struct (convDimsFromStruct).
 */
export function parseConvDims(text: string, fail: (m: string) => never): ConvDimensionNumbers {
  let body = text.trim();
  const wrapped = /^#stablehlo\.conv<([\s\S]*)>$/.exec(body);
  if (wrapped) body = wrapped[1]!.trim();
  const m = /^\[([^\]]*)\]\s*x\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]$/.exec(body);
  if (!m) return fail(`cannot read convolution dimension numbers '${text}'`);
  const split = (s: string): string[] => s.split(",").map((x) => x.trim());
  const read = (labels: string[], a: string, b: string): { a: number; b: number; spatial: number[] } => {
    let ia = -1;
    let ib = -1;
    const spatial: number[] = [];
    labels.forEach((l, i) => {
      if (l === a) ia = i;
      else if (l === b) ib = i;
      else if (/^[0-9]+$/.test(l)) {
        // Spatial labels number the spatial dimensions 0, 1, ...: each below their count (a huge one would make a huge sparse array).
        const d = Number(l);
        if (d >= labels.length - 2 || spatial[d] !== undefined) fail(`convolution spatial dimension label '${l}' in '${labels.join(",")}': the spatial labels must be 0 to ${labels.length - 3}, each once`);
        spatial[d] = i;
      } else fail(`unknown convolution dimension label '${l}'`);
    });
    if (ia < 0 || ib < 0) fail(`convolution dimensions '${labels.join(",")}' need '${a}' and '${b}'`);
    return { a: ia, b: ib, spatial };
  };
  const input = read(split(m[1]!), "b", "f");
  const kernel = read(split(m[2]!), "i", "o");
  const output = read(split(m[3]!), "b", "f");
  return {
    inputBatchDimension: input.a, inputFeatureDimension: input.b, inputSpatialDimensions: input.spatial,
    kernelInputFeatureDimension: kernel.a, kernelOutputFeatureDimension: kernel.b, kernelSpatialDimensions: kernel.spatial,
    outputBatchDimension: output.a, outputFeatureDimension: output.b, outputSpatialDimensions: output.spatial,
  };
}

/** `#stablehlo.conv<raw input_batch_dimension = 0, ...>`: an absent field is 0 or [], as StableHLO reads it. */
export function convDimsFromStruct(fields: AttrDict): ConvDimensionNumbers {
  const one = (k: string): number => toInt(fields.get(k)) ?? 0;
  const many = (k: string): number[] => {
    const v = fields.get(k);
    return v === undefined ? [] : toInts(v) ?? [];
  };
  return {
    inputBatchDimension: one("input_batch_dimension"), inputFeatureDimension: one("input_feature_dimension"),
    inputSpatialDimensions: many("input_spatial_dimensions"),
    kernelInputFeatureDimension: one("kernel_input_feature_dimension"),
    kernelOutputFeatureDimension: one("kernel_output_feature_dimension"),
    kernelSpatialDimensions: many("kernel_spatial_dimensions"),
    outputBatchDimension: one("output_batch_dimension"), outputFeatureDimension: one("output_feature_dimension"),
    outputSpatialDimensions: many("output_spatial_dimensions"),
  };
}

/** A window from per-dimension lists (reduce_window, select_and_scatter, convolution). */
export function makeWindow(
  rank: number, sizes: readonly number[], strides?: readonly number[], padding?: readonly (readonly number[])[],
  baseDilation?: readonly number[], windowDilation?: readonly number[], reversal?: readonly boolean[],
): WindowDimension[] {
  const out: WindowDimension[] = [];
  for (let i = 0; i < rank; i++) {
    out.push({
      size: sizes[i] ?? 1, stride: strides?.[i] ?? 1, paddingLow: padding?.[i]?.[0] ?? 0,
      paddingHigh: padding?.[i]?.[1] ?? 0, baseDilation: baseDilation?.[i] ?? 1, windowDilation: windowDilation?.[i] ?? 1,
      windowReversal: reversal?.[i] ?? false,
    });
  }
  return out;
}
