// Syntax highlighting for the editor: one small line tokenizer (CodeMirror's StreamLanguage)
// for both texts the playground reads, StableHLO (MLIR) and HLO. It only colours; what is
// valid is the parser's and the verifier's to say. Token names are Lezer's highlight tags:
//   keyword        op names (stablehlo.add, "stablehlo.all_reduce"(, func.func, sdy.mesh; an HLO opcode before its
//                  operands) and the few words of the syntax (module, return, HloModule, ENTRY)
//   typeName       tensor<2x3xf32>, tuple<...>, !stablehlo.token, i32, f32[2,3]{1,0}
//   variableName   %values (and HLO instruction names where they are defined)
//   labelName      @symbols and ^blocks
//   meta           #attributes (#sdy.sharding<...>)
//   propertyName   attribute names (`dims =`, `replica_groups =`, HLO `to_apply=`)
//   number, string, bool, comment (// and /* */), operator (->, =)

import { StreamLanguage, type StringStream } from "@codemirror/language";

interface State {
  /** Inside a /* comment that began on an earlier line. */
  inComment: boolean;
  /** The next identifier is an HLO instruction's name being defined (line start, or after ROOT). */
  atDefinition: boolean;
}

const KEYWORDS = new Set(["module", "attributes", "return", "cond", "do", "dense", "array", "applies", "across", "HloModule", "ENTRY", "ROOT", "loc"]);
/** Element types as MLIR and HLO spell them (HLO's carry their dimensions in brackets, matched separately). */
const ELEMENT_TYPE = /^(?:[su]?i\d+|ui\d+|[su]\d+|f\d+(?:E\d+M\d+\w*)?|bf16|pred|index|token|complex)$/;
/** A type written with angle brackets, up to two levels deep: tensor<4x?xf32, #enc<...>>. */
const ANGLED_TYPE = /^(?:tensor|tuple|complex|memref|vector)<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>/;
/** An HLO shape: f32[2,3]{1,0}, s32[], pred[<=4]. */
const HLO_SHAPE = /^(?:pred|[suf]\d+|bf16|c64|c128|f8e\w+|token)\[[\d,\s<=?]*\](?:\{[^{}]*\})?/;

function token(stream: StringStream, state: State): string | null {
  if (stream.sol()) state.atDefinition = true;
  if (state.inComment) {
    state.inComment = !stream.match(/^.*?\*\//);
    if (state.inComment) stream.skipToEnd();
    return "comment";
  }
  if (stream.eatSpace()) return null;
  const definition = state.atDefinition;
  state.atDefinition = false;
  if (stream.match("//")) {
    stream.skipToEnd();
    return "comment";
  }
  if (stream.match("/*")) {
    state.inComment = !stream.match(/^.*?\*\//);
    if (state.inComment) stream.skipToEnd();
    return "comment";
  }
  // An op in MLIR's generic form: "stablehlo.all_reduce"(%x).
  if (stream.match(/^"[a-z_]+\.[\w.]+"(?=\()/)) return "keyword";
  if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
  if (stream.match(/^%[\w$.-]+(?:#\d+)?/)) return "variableName";
  if (stream.match(/^[@^][\w$.-]+/) || stream.match(/^@"(?:[^"\\]|\\.)*"/)) return "labelName";
  if (stream.match(/^![\w.]+/) || stream.match(ANGLED_TYPE) || stream.match(HLO_SHAPE)) return "typeName";
  if (stream.match(/^#[\w.]+/)) return "meta";
  if (stream.match("->") || stream.match("=")) return "operator";
  if (stream.match(/^-?(?:0x[\da-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)/)) return "number";
  const word = stream.match(/^[A-Za-z_][\w$.-]*/) as RegExpMatchArray | null;
  if (word === null) {
    stream.next();
    return null;
  }
  const name = word[0];
  if (name === "true" || name === "false") return "bool";
  if (name === "ROOT") state.atDefinition = true;
  const next = stream.string.slice(stream.pos);
  // Before `=`: an attribute's name (mhlo.num_replicas = 4), or the HLO instruction being defined.
  if (/^\s*=(?!=)/.test(next) && !KEYWORDS.has(name)) return definition ? "variableName" : "propertyName";
  if (KEYWORDS.has(name) || /^(?:stablehlo|func|sdy|mhlo|chlo|shardy)\./.test(name)) return "keyword";
  if (ELEMENT_TYPE.test(name)) return "typeName";
  // An HLO opcode: `add(x, y)`, after the instruction's shape.
  if (/^\(/.test(next)) return "keyword";
  return null;
}

/** StableHLO and HLO text, as the editor colours it. */
export const xlaText = StreamLanguage.define<State>({
  name: "xla",
  startState: () => ({ inComment: false, atDefinition: true }),
  copyState: (s) => ({ ...s }),
  token,
  languageData: { commentTokens: { line: "//", block: { open: "/*", close: "*/" } } },
});
