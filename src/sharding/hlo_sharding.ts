// XLA's HloSharding as text (the `sharding=` attribute of HLO text, the `mhlo.sharding`
// string of StableHLO): a typed form, its parser and its printer, which prints what
// XLA's HloSharding::ToString prints:
//
//   {replicated}  {manual}  {unknown}  {maximal device=3}
//   {devices=[2,2]0,2,1,3}                       an explicit tile assignment
//   {devices=[2,1,2]<=[4] last_tile_dim_replicate}
//   {devices=[4,2]<=[2,4]T(1,0)}                 iota(8) as 2x4, transposed, as 4x2
//   {devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
//   {{replicated}, {maximal device=0}}           a tuple (one sharding per element)
//
// An iota tile assignment prints in XLA's canonical form: reshape dimensions of size 1
// dropped and runs of dimensions that the transpose keeps in order merged, so that
// `<=[2,2]T(0,1)` prints as `<=[4]`. Conversion to and from Shardy shardings:
// hlo_sharding_convert.ts.

import { XlaError } from "../types/errors.js";
import { elementCount } from "../types/shape.js";

export type SubgroupType = "manual" | "replicated" | "unreduced";

/** Where the devices of a tile assignment sit: an explicit list, or iota(n) reshaped and transposed. */
export type TileDevices =
  | { readonly kind: "list"; readonly devices: readonly number[] }
  | { readonly kind: "iota"; readonly reshape: readonly number[]; readonly perm: readonly number[] };

export type HloSharding =
  | { readonly kind: "replicated" }
  | { readonly kind: "manual" }
  /** Unreduced along every axis of the mesh, no dimension tiled (XLA's HloSharding::Unreduced). */
  | { readonly kind: "unreduced" }
  | { readonly kind: "unknown" }
  | { readonly kind: "maximal"; readonly device: number }
  | { readonly kind: "tuple"; readonly elements: readonly HloSharding[] }
  | {
    readonly kind: "tiled";
    /** The data dimensions' tile counts, then one count per subgroup (the last dimensions). */
    readonly tileDims: readonly number[];
    readonly devices: TileDevices;
    /** What each trailing subgroup dimension is (`last_tile_dim_replicate` is ["replicated"]). */
    readonly subgroups: readonly SubgroupType[];
  };

/** An HloSharding text that does not parse, or a sharding one side cannot say. */
export class HloShardingError extends XlaError {
  override name = "HloShardingError";
}

/** The device ids of an iota tile assignment, in tile order (row-major over the tile dimensions). */
export function iotaDevices(reshape: readonly number[], perm: readonly number[]): number[] {
  const dims = perm.map((p) => reshape[p]!);
  const strides = reshape.map((_, i) => elementCount(reshape.slice(i + 1)));
  const out: number[] = [];
  for (let linear = 0, count = elementCount(reshape); linear < count; linear++) {
    let rest = linear;
    let source = 0;
    for (let k = dims.length - 1; k >= 0; k--) {
      source += (rest % dims[k]!) * strides[perm[k]!]!;
      rest = Math.floor(rest / dims[k]!);
    }
    out.push(source);
  }
  return out;
}

/** The devices of a tile assignment, in tile order. */
export function tileDeviceList(devices: TileDevices): readonly number[] {
  return devices.kind === "list" ? devices.devices : iotaDevices(devices.reshape, devices.perm);
}

/**
 * XLA's canonical iota (IotaTileAssignment::Create): size-1 reshape dimensions dropped,
 * consecutive transposed dimensions that stay in order merged, repeated until nothing
 * changes; the empty result is [1].
 */
export function canonicalIota(reshape: readonly number[], perm: readonly number[]): { reshape: number[]; perm: number[] } {
  let dims = [...reshape];
  let order = [...perm];
  for (;;) {
    const kept = dims.map((d, i) => (d === 1 ? -1 : i)).filter((i) => i >= 0);
    const renumber = new Map(kept.map((old, i) => [old, i]));
    order = order.filter((p) => renumber.has(p)).map((p) => renumber.get(p)!);
    dims = kept.map((i) => dims[i]!);
    let merged = false;
    // A run of transposed dimensions p, p+1, ... is one dimension of their product.
    for (let i = 1, base = 0; i < order.length; i++) {
      if (order[base]! + (i - base) === order[i]!) {
        dims[order[base]!]! *= dims[order[i]!]!;
        dims[order[i]!] = 1;
        merged = true;
      } else {
        base = i;
      }
    }
    if (!merged) break;
  }
  return dims.length === 0 ? { reshape: [1], perm: [0] } : { reshape: dims, perm: order };
}

/**
 * XLA's HloSharding::Subgroup: a tile assignment with subgroup dimensions, as XLA
 * normalizes it: no data dimension tiled and one kind of subgroup is plain
 * `{replicated}`, `{manual}` or `{unreduced}`; an iota tile assignment is canonical.
 */
export function subgroupSharding(tileDims: readonly number[], devices: TileDevices, subgroups: readonly SubgroupType[]): HloSharding {
  const dataTiles = elementCount(tileDims.slice(0, tileDims.length - subgroups.length));
  if (subgroups.length > 0 && dataTiles === 1 && subgroups.every((t) => t === subgroups[0])) {
    if (subgroups[0] === "replicated") return { kind: "replicated" };
    if (subgroups[0] === "manual") return { kind: "manual" };
    if (subgroups[0] === "unreduced") return { kind: "unreduced" };
  }
  const canonical = devices.kind === "iota" ? { kind: "iota" as const, ...canonicalIota(devices.reshape, devices.perm) } : devices;
  return { kind: "tiled", tileDims, devices: canonical, subgroups };
}

export function printHloSharding(h: HloSharding): string {
  switch (h.kind) {
    case "replicated": case "manual": case "unreduced": case "unknown": return `{${h.kind}}`;
    case "maximal": return `{maximal device=${h.device}}`;
    case "tuple": return `{${h.elements.map(printHloSharding).join(", ")}}`;
    case "tiled": {
      const d = h.devices;
      const devices = d.kind === "list" ? d.devices.join(",") : `<=[${d.reshape.join(",")}]${d.reshape.length > 1 ? `T(${d.perm.join(",")})` : ""}`;
      const last = h.subgroups.length === 0 ? ""
        : h.subgroups.length === 1 && h.subgroups[0] === "replicated" ? " last_tile_dim_replicate"
          : ` last_tile_dims={${h.subgroups.join(", ")}}`;
      return `{devices=[${h.tileDims.join(",")}]${devices}${last}}`;
    }
  }
}

/** Reads HloSharding text; a HloShardingError says where it stops making sense. */
export function parseHloSharding(text: string): HloSharding {
  const p = new ShardingText(text);
  const h = p.sharding();
  p.end();
  return h;
}

class ShardingText {
  private at = 0;
  constructor(private readonly text: string) {}

  private fail(expected: string): never {
    throw new HloShardingError(`HloSharding '${this.text}': expected ${expected} at column ${this.at + 1}`);
  }

  private spaces(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at++;
  }

  private accept(word: string): boolean {
    this.spaces();
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  private expect(word: string): void {
    if (!this.accept(word)) this.fail(`'${word}'`);
  }

  private int(): number {
    this.spaces();
    const m = /^[0-9]+/.exec(this.text.slice(this.at));
    if (m === null) this.fail("a number");
    this.at += m[0].length;
    return Number(m[0]);
  }

  private ints(close: string): number[] {
    const out = [this.int()];
    while (this.accept(",")) out.push(this.int());
    this.expect(close);
    return out;
  }

  end(): void {
    this.spaces();
    if (this.at !== this.text.length) this.fail("the end of the sharding");
  }

  sharding(): HloSharding {
    this.expect("{");
    this.spaces();
    if (this.text[this.at] === "{") {
      const elements = [this.sharding()];
      while (this.accept(",")) elements.push(this.sharding());
      this.expect("}");
      return { kind: "tuple", elements };
    }
    for (const kind of ["replicated", "manual", "unreduced", "unknown"] as const) {
      if (this.accept(kind)) {
        this.expect("}");
        return { kind };
      }
    }
    if (this.accept("maximal")) {
      this.expect("device=");
      const device = this.int();
      this.expect("}");
      return { kind: "maximal", device };
    }
    if (!this.accept("devices=[")) this.fail("replicated, manual, unknown, maximal, devices=[...] or a tuple");
    const tileDims = this.ints("]");
    let devices: TileDevices;
    if (this.accept("<=[")) {
      const reshape = this.ints("]");
      const perm = this.accept("T(") ? this.ints(")") : reshape.map((_, i) => i);
      if (perm.length !== reshape.length || [...perm].sort((a, b) => a - b).some((v, i) => v !== i)) {
        throw new HloShardingError(`HloSharding '${this.text}': T(${perm.join(",")}) is not a permutation of the ${reshape.length} reshape dimensions`);
      }
      devices = { kind: "iota", reshape, perm };
    } else {
      const list = [this.int()];
      while (this.accept(",")) list.push(this.int());
      devices = { kind: "list", devices: list };
    }
    const subgroups: SubgroupType[] = [];
    if (this.accept("last_tile_dim_replicate")) {
      subgroups.push("replicated");
    } else if (this.accept("last_tile_dims={")) {
      do {
        const kind = (["manual", "replicated", "unreduced"] as const).find((k) => this.accept(k));
        if (kind === undefined) this.fail("manual, replicated or unreduced");
        subgroups.push(kind);
      } while (this.accept(","));
      this.expect("}");
    }
    this.expect("}");
    const count = devices.kind === "list" ? devices.devices.length : elementCount(devices.reshape);
    if (count !== elementCount(tileDims)) {
      throw new HloShardingError(`HloSharding '${this.text}': ${count} devices for a tile assignment [${tileDims.join(",")}] of ${elementCount(tileDims)}`);
    }
    if (devices.kind === "list" && new Set(devices.devices).size !== count) throw new HloShardingError(`HloSharding '${this.text}': a device appears twice`);
    if (subgroups.length > tileDims.length) throw new HloShardingError(`HloSharding '${this.text}': more subgroups than tile dimensions`);
    return { kind: "tiled", tileDims, devices, subgroups };
  }
}
