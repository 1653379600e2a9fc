// The program editor: CodeMirror 6 with line numbers, undo history, StableHLO/HLO
// highlighting (mlir_language.ts), and the verifier's errors shown in the text where they
// are (a ParseError's or VerifyError's line and column become an inline diagnostic, marked
// in the gutter too).

import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { bracketMatching, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, setDiagnostics, type Diagnostic as LintDiagnostic } from "@codemirror/lint";
import { EditorState, Transaction, type Text } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";
import type { Diagnostic } from "./check.js";
import { xlaText } from "./mlir_language.js";

export interface Editor {
  /** The program text. */
  text(): string;
  /** Replaces the whole text (not an edit of the user's: `onEdit` is not called). */
  setText(text: string): void;
  /** Shows these diagnostics in the text; those with no line and column are left to the page. */
  showDiagnostics(diagnostics: readonly Diagnostic[]): void;
}

/** The editor in `parent`; `onEdit` is called after each change the user makes (typing, pasting, undo). */
export function createEditor(parent: HTMLElement, onEdit: () => void): Editor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        history(),
        drawSelection(),
        bracketMatching(),
        xlaText,
        // Classes (tok-keyword, tok-typeName, ...) that the page's style colours.
        syntaxHighlighting(classHighlighter),
        lintGutter(),
        keymap.of(defaultKeymap.concat(historyKeymap)),
        EditorView.contentAttributes.of({ "aria-label": "program text" }),
        EditorView.updateListener.of((update) => {
          // Only the user's edits carry a user event; setText's replacement does not.
          if (update.docChanged && update.transactions.some((t) => t.annotation(Transaction.userEvent) !== undefined)) onEdit();
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    showDiagnostics: (diagnostics) => {
      const placed = diagnostics.flatMap((d) => {
        const at = d.line === undefined || d.column === undefined ? undefined : spanAt(view.state.doc, d.line, d.column);
        return at === undefined ? [] : [{ ...at, severity: d.severity === "warning" ? "warning" : d.severity === "note" ? "info" : "error", message: d.message } satisfies LintDiagnostic];
      });
      view.dispatch(setDiagnostics(view.state, placed));
    },
  };
}

/**
 * The text a diagnostic at `line`:`column` (1-based) points at: the name or number there
 * (`%idd`, `stablehlo.mulitply`), else the one character; undefined past the text's end.
 */
function spanAt(doc: Text, line: number, column: number): { from: number; to: number } | undefined {
  if (line < 1 || line > doc.lines || column < 1) return undefined;
  const l = doc.line(line);
  const from = Math.min(l.from + column - 1, l.to);
  const word = /^[%@^#!]?[\w$.-]+/.exec(l.text.slice(from - l.from));
  return { from, to: word !== null ? from + word[0].length : Math.min(from + 1, l.to) };
}
