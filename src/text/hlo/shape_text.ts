// Shapes in HLO text: `f32[2,3]{1,0}`, `f32[]`, `(f32[], s32[4]{0})`, `token[]`,
// dynamic dimensions `f32[<=4]` (bounded) and `f32[?]` (unbounded).

import { isElementType } from "../../types/element_type.js";
import { VerifyError, XlaError } from "../../types/errors.js";
import {
  arrayShape, hasQuantization, shapeToString, TOKEN_SHAPE, tupleShape, UNBOUNDED_SIZE, type Layout, type Shape,
} from "../../types/shape.js";
import { Cursor, MAX_NESTING } from "./cursor.js";

/** True when the cursor is at something that starts a shape (`(` or `type[`). */
export function looksLikeShape(c: Cursor): boolean {
  c.skipSpace();
  if (c.peek() === "(") return true;
  const m = /^[a-z][a-z0-9]*\[/.exec(c.text.slice(c.pos, Math.min(c.end, c.pos + 20)));
  return m !== null;
}

export function parseShape(c: Cursor, depth = 0): Shape {
  c.skipSpace();
  const start = c.pos;
  if (depth > MAX_NESTING) throw c.error("tuple shapes nest too deeply");
  if (c.accept("(")) {
    const elements: Shape[] = [];
    if (!c.accept(")")) {
      do elements.push(parseShape(c, depth + 1));
      while (c.accept(","));
      c.expect(")", "',' or ')' in a tuple shape");
    }
    return tupleShape(elements);
  }
  const typeName = c.ident("a shape");
  if (typeName === "token") {
    c.expect("[");
    c.expect("]", "']' (token[] has no dimensions)");
    return TOKEN_SHAPE;
  }
  // HLO has no index type (XLA writes MLIR's index as s64).
  if (!isElementType(typeName) || typeName === "index") throw c.error(`unknown element type '${typeName}'`, start);
  c.expect("[", `'[' after element type ${typeName}`);
  const dims: number[] = [];
  const dynamic: boolean[] = [];
  if (!c.accept("]")) {
    do {
      c.skipSpace();
      if (c.accept("?")) {
        dims.push(UNBOUNDED_SIZE);
        dynamic.push(true);
      } else {
        const isBound = c.accept("<=");
        dims.push(c.count("a dimension size"));
        dynamic.push(isBound);
      }
    } while (c.accept(","));
    c.expect("]", "',' or ']' in the dimensions");
  }
  let layout: Layout | undefined;
  // A layout follows `]` directly; `f32[2] {` is a shape followed by a computation body.
  if (c.peek() === "{") {
    const layoutStart = c.pos;
    c.pos++;
    const minorToMajor: number[] = [];
    if (!c.accept("}")) {
      do minorToMajor.push(c.count("a dimension number in the layout"));
      while (c.accept(","));
      c.skipSpace();
      if (c.peek() === ":") throw c.error("layout tiling, memory space and element size (':...') are not supported");
      c.expect("}", "',' or '}' in the layout");
    }
    // A rank-0 shape prints no layout, but `f32[]{}` is accepted.
    layout = { minorToMajor };
    if (minorToMajor.length !== dims.length) {
      throw c.error(`layout {${minorToMajor.join(",")}} has ${minorToMajor.length} entries for rank ${dims.length}`, layoutStart);
    }
  }
  try {
    return arrayShape(typeName, dims, { dynamicDimensions: dynamic, ...(layout ? { layout } : {}) });
  } catch (e) {
    if (e instanceof XlaError) throw c.error(e.message, start);
    throw e;
  }
}

/** Instruction and operand shapes carry layouts; computation signatures do not. */
export function printShape(s: Shape, withLayout = true): string {
  if (hasQuantization(s)) {
    throw new VerifyError(`HLO text has no quantized types (XLA lowers them to integer arithmetic before HLO): ${shapeToString(s)}; print the program as StableHLO (MLIR)`);
  }
  return shapeToString(indexAsS64(s), withLayout);
}

/** HLO text has no index type: as XLA does when it converts MLIR to HLO, an index array is written as s64. */
function indexAsS64(s: Shape): Shape {
  if (s.kind === "tuple") {
    const elements = s.elements.map(indexAsS64);
    return elements.every((e, i) => e === s.elements[i]) ? s : tupleShape(elements);
  }
  return s.kind === "array" && s.elementType === "index"
    ? arrayShape("s64", s.dimensions, { dynamicDimensions: s.dynamicDimensions, layout: s.layout }) : s;
}
