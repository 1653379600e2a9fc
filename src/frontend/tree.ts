// Pytrees: nested JS arrays and plain objects whose leaves are arrays (or JS numbers and
// booleans), as JAX's tree_util. `null` and `undefined` are empty nodes (JAX's None).
// Object keys are taken in sorted order, as JAX sorts a dict's keys.

import { FrontendError } from "./errors.js";

/** How a pytree is built around its leaves: enough to rebuild it, and to compare two trees. */
export type TreeDef =
  | { readonly kind: "leaf" }
  | { readonly kind: "none"; readonly value: null | undefined }
  | { readonly kind: "list"; readonly children: readonly TreeDef[] }
  | { readonly kind: "dict"; readonly keys: readonly string[]; readonly children: readonly TreeDef[] };

const isPlainObject = (x: unknown): x is Record<string, unknown> => {
  if (typeof x !== "object" || x === null) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The leaves of `tree` in order, and its structure. `isLeaf` may stop the descent early. */
export function treeFlatten(tree: unknown, isLeaf?: (x: unknown) => boolean): [unknown[], TreeDef] {
  const leaves: unknown[] = [];
  const walk = (x: unknown): TreeDef => {
    if (isLeaf?.(x) === true) {
      leaves.push(x);
      return { kind: "leaf" };
    }
    if (x === null || x === undefined) return { kind: "none", value: x };
    if (Array.isArray(x)) return { kind: "list", children: x.map(walk) };
    if (isPlainObject(x)) {
      const keys = Object.keys(x).sort();
      return { kind: "dict", keys, children: keys.map((k) => walk(x[k])) };
    }
    leaves.push(x);
    return { kind: "leaf" };
  };
  const def = walk(tree);
  return [leaves, def];
}

/** Rebuilds a tree of structure `def` from its leaves in order. */
export function treeUnflatten(def: TreeDef, leaves: readonly unknown[]): unknown {
  let next = 0;
  const build = (d: TreeDef): unknown => {
    switch (d.kind) {
      case "leaf":
        if (next >= leaves.length) throw new FrontendError(`treeUnflatten: the structure has more leaves than the ${leaves.length} given`);
        return leaves[next++];
      case "none": return d.value;
      case "list": return d.children.map(build);
      case "dict": return Object.fromEntries(d.keys.map((k, i) => [k, build(d.children[i]!)]));
    }
  };
  const tree = build(def);
  if (next !== leaves.length) throw new FrontendError(`treeUnflatten: ${leaves.length} leaves given for a structure of ${next}`);
  return tree;
}

/** The structure as text, for cache keys and messages. */
export function treeDefString(def: TreeDef): string {
  switch (def.kind) {
    case "leaf": return "*";
    case "none": return String(def.value);
    case "list": return `[${def.children.map(treeDefString).join(",")}]`;
    case "dict": return `{${def.keys.map((k, i) => `${JSON.stringify(k)}:${treeDefString(def.children[i]!)}`).join(",")}}`;
  }
}

/** Applies `f` to every leaf of `tree` (and the matching leaves of `rest`, which must have its structure). */
export function treeMap(f: (...leaves: unknown[]) => unknown, tree: unknown, ...rest: unknown[]): unknown {
  const [leaves, def] = treeFlatten(tree);
  const others = rest.map((r, i) => {
    const [l, d] = treeFlatten(r);
    if (treeDefString(d) !== treeDefString(def)) {
      throw new FrontendError(`treeMap: tree ${i + 1} has structure ${treeDefString(d)}, expected ${treeDefString(def)}`);
    }
    return l;
  });
  return treeUnflatten(def, leaves.map((l, i) => f(l, ...others.map((o) => o[i]))));
}
