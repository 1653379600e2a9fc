// The parsed form of StableHLO text before it becomes IR: MLIR's generic operation
// model (name, operands, attributes, regions, result types). Every pretty syntax is
// parsed into this one form, so import handles each op once, by its attribute names.

import type { Literal } from "../../types/literal.js";
import type { Shape } from "../../types/shape.js";
import type { SdyAttribute } from "./sdy_attr_text.js";

export type AttrDict = Map<string, Attr>;

export type Attr =
  | { readonly kind: "int"; readonly value: bigint; readonly type?: string }
  | { readonly kind: "float"; readonly value: number; readonly text: string; readonly type?: string }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "unit" }
  | { readonly kind: "list"; readonly items: readonly Attr[] }
  /** `array<i64: 1, 2>` (also `array<i1: true>` with 1/0 values). */
  | { readonly kind: "denseArray"; readonly elementType: string; readonly values: readonly bigint[] }
  | { readonly kind: "dense"; readonly literal: Literal }
  | { readonly kind: "symbol"; readonly name: string }
  | { readonly kind: "dict"; readonly entries: AttrDict }
  | { readonly kind: "type"; readonly shape: Shape }
  /** A bare keyword (`LT`, `FFT`, `e5m10`) or `#dialect<category VALUE>`. */
  | { readonly kind: "enum"; readonly value: string }
  /** `#dialect.name<key = value, ...>`. */
  | { readonly kind: "struct"; readonly name: string; readonly fields: AttrDict }
  /** Kept verbatim: conv dimension numbers, anything not interpreted. */
  | { readonly kind: "opaque"; readonly text: string }
  /** `[0] x [1]` (dot_general's pretty dims). */
  | { readonly kind: "pair"; readonly lhs: Attr; readonly rhs: Attr }
  /** A Shardy attribute (`#sdy.sharding<...>`, or a piece of sdy op syntax), typed (src/sdy/attr_text.ts). */
  | { readonly kind: "sdy"; readonly value: SdyAttribute };

export interface ValueUse {
  readonly name: string;
  readonly index: number;
  readonly offset: number;
}

export interface BlockArg {
  readonly name: string;
  readonly shape: Shape;
  readonly attrs?: AttrDict;
}

export interface Block {
  readonly args: readonly BlockArg[];
  readonly ops: readonly OpNode[];
}

export interface Region {
  readonly block: Block;
  readonly offset: number;
}

export interface ResultGroup {
  readonly name: string;
  readonly count: number;
}

export interface OpNode {
  readonly name: string;
  readonly results: readonly ResultGroup[];
  readonly operands: readonly ValueUse[];
  readonly attrs: AttrDict;
  readonly regions: readonly Region[];
  /** Declared operand types, when the syntax gives them. */
  readonly operandTypes: readonly Shape[] | undefined;
  readonly resultTypes: readonly Shape[];
  /** Offset of the op in the text, for error positions. */
  readonly offset: number;
}

export const resultCount = (op: OpNode): number => op.results.reduce((n, r) => n + r.count, 0);

/**
 * Custom-call targets of ops of unregistered dialects start with this, then the op's
 * name (`mlir.unregistered:foo.bar`); they print back in MLIR's generic form.
 */
export const UNREGISTERED_OP_PREFIX = "mlir.unregistered:";

/**
 * The name an unnamed StableHLO module imports as (HloModule needs one); a module of
 * that name prints as `module {`, as MLIR prints a module without a symbol name.
 */
export const UNNAMED_MODULE = "module";
