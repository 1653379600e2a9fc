// The front end's dtypes: numpy's names for XLA's element types, and JAX's type
// promotion lattice (jax._src.dtypes) with weak types for JavaScript numbers. A JS
// number or boolean is weakly typed: it takes the dtype of the array it meets
// (`np.add(x_f16, 2)` is float16), as a Python scalar does in JAX.

import type { ElementType } from "../types/element_type.js";
import { FrontendError } from "./errors.js";

/** XLA's element type of each numpy dtype name. */
export const DTYPES = {
  bool: "pred",
  int8: "s8", int16: "s16", int32: "s32", int64: "s64",
  uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
  float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
  complex64: "c64", complex128: "c128",
} as const satisfies Record<string, ElementType>;

export type DType = keyof typeof DTYPES;

const FROM_ELEMENT_TYPE = new Map<ElementType, DType>(Object.entries(DTYPES).map(([d, e]) => [e, d as DType]));

/** The numpy name of an XLA element type (a FrontendError for the types the front end has no name for). */
export function dtypeOf(elementType: ElementType): DType {
  const d = FROM_ELEMENT_TYPE.get(elementType);
  if (d === undefined) throw new FrontendError(`the element type ${elementType} has no dtype in the front end (known: ${Object.keys(DTYPES).join(", ")})`);
  return d;
}

/** Checks a dtype name from untyped code. */
export function checkDtype(dtype: string, where: string): DType {
  if (!Object.hasOwn(DTYPES, dtype)) throw new FrontendError(`${where}: unknown dtype "${dtype}" (known: ${Object.keys(DTYPES).join(", ")})`);
  return dtype as DType;
}

export type DTypeKind = "bool" | "signed" | "unsigned" | "float" | "complex";

export function dtypeKind(d: DType): DTypeKind {
  if (d === "bool") return "bool";
  if (d.startsWith("int")) return "signed";
  if (d.startsWith("uint")) return "unsigned";
  if (d.startsWith("complex")) return "complex";
  return "float";
}

export const isFloating = (d: DType): boolean => dtypeKind(d) === "float";
export const isInexact = (d: DType): boolean => dtypeKind(d) === "float" || dtypeKind(d) === "complex";
export const isIntegral = (d: DType): boolean => dtypeKind(d) === "signed" || dtypeKind(d) === "unsigned";

/** The dtype of each weak category when it is the result (JAX's defaults with x64 off). */
export const DEFAULT_INT: DType = "int32";
export const DEFAULT_FLOAT: DType = "float32";
export const DEFAULT_COMPLEX: DType = "complex64";

// The lattice's nodes are the dtypes plus the three weak categories ("int", "float",
// "complex": the types of a JS integer, a JS float, a complex scalar). Edges go from a
// type to the types it promotes to directly (JAX's _type_promotion_lattice).
type Node = DType | "int" | "float" | "complex";
const EDGES: Readonly<Record<Node, readonly Node[]>> = {
  bool: ["int"],
  int: ["uint8", "int8"],
  uint8: ["int16", "uint16"], uint16: ["int32", "uint32"], uint32: ["int64", "uint64"], uint64: ["float"],
  int8: ["int16"], int16: ["int32"], int32: ["int64"], int64: ["float"],
  float: ["complex", "float16", "bfloat16"],
  float16: ["float32"], bfloat16: ["float32"], float32: ["float64", "complex64"], float64: ["complex128"],
  complex: ["complex64"], complex64: ["complex128"], complex128: [],
};

/** Each node's upper bounds (itself included). */
const UPPER = new Map<Node, ReadonlySet<Node>>();
function upper(n: Node): ReadonlySet<Node> {
  let set = UPPER.get(n);
  if (set === undefined) {
    const s = new Set<Node>([n]);
    for (const m of EDGES[n]) for (const u of upper(m)) s.add(u);
    UPPER.set(n, set = s);
  }
  return set;
}

/** A dtype with its weak flag: what promotion works on. */
export interface TypedKind {
  readonly dtype: DType;
  readonly weakType: boolean;
}

const weakCategory = (d: DType): Node => {
  const k = dtypeKind(d);
  return k === "complex" ? "complex" : k === "float" ? "float" : k === "bool" ? "bool" : "int";
};

/**
 * The dtype both operands of a binary op are converted to, and whether it is weak:
 * the least upper bound of their lattice nodes (jnp.result_type). A weak operand
 * counts as its category.
 */
export function resultType(...types: readonly TypedKind[]): TypedKind {
  if (types.length === 0) throw new FrontendError("resultType: needs at least one type");
  const nodes = types.map((t) => (t.weakType ? weakCategory(t.dtype) : t.dtype));
  // Eager ops promote on every call: the joins are memoized.
  const key = nodes.join(",");
  let result = JOINS.get(key);
  if (result === undefined) JOINS.set(key, result = join(nodes, types));
  return result;
}

const JOINS = new Map<string, TypedKind>();

function join(nodes: readonly Node[], types: readonly TypedKind[]): TypedKind {
  let common = new Set(upper(nodes[0]!));
  for (const n of nodes.slice(1)) common = new Set([...common].filter((u) => upper(n).has(u)));
  // The least upper bound: the common bound whose own upper set is the whole common set.
  const lub = [...common].find((c) => upper(c).size === common.size);
  if (lub === undefined) throw new FrontendError(`no common dtype for ${types.map((t) => t.dtype).join(", ")}`);
  if (lub === "int") return { dtype: DEFAULT_INT, weakType: true };
  if (lub === "float") return { dtype: DEFAULT_FLOAT, weakType: true };
  if (lub === "complex") return { dtype: DEFAULT_COMPLEX, weakType: true };
  return { dtype: lub, weakType: false };
}
