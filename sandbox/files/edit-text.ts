/**
 * The `edit` tool's text work, with pi-coding-agent 0.73.1's semantics (decision 131):
 * every `oldText` is looked up in the original text (never in the text after an earlier
 * edit), must be found, found once, and not overlap another edit's match. Matching is
 * exact first; when an `oldText` is only found after both sides are loosened (trailing
 * spaces, Unicode quotes, dashes and spaces made ASCII, NFKC), the whole edit works on the
 * loosened text, as pi's does. Line endings are matched as LF and written back as the
 * file had them; a leading BOM is kept. Pure: strings in, strings out.
 */
import { diffLines } from "diff";

/** One replacement: `oldText` (as found in the original) becomes `newText`. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** Why an edit was refused; `message` names the edit and what to do. */
export class EditRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EditRefused";
  }
}

/** The edited file: bytes to write, and the diff between the matched and the new text. */
export interface EditedText {
  /** What the file becomes, with its BOM and line endings restored. */
  text: string;
  /** Line diff with numbers and 4 lines of context (pi's `details.diff` shape). */
  diff: string;
  /** First changed line, 1-based, in the new file. */
  firstChangedLine: number | undefined;
}

/**
 * Applies `edits` to `original` (a whole file's text, as read).
 * @example applyEdits("a\nb\n", [{ oldText: "b", newText: "c" }], "x.txt").text // "a\nc\n"
 * @throws EditRefused when an oldText is empty, missing, not unique, overlaps another, or changes nothing
 */
export function applyEdits(original: string, edits: readonly TextEdit[], path: string): EditedText {
  const bom = original.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = bom === "" ? original : original.slice(1);
  const ending = lineEndingOf(body);
  const content = toLF(body);
  const wanted = edits.map((e) => ({ oldText: toLF(e.oldText), newText: toLF(e.newText) }));
  const label = (i: number) => (wanted.length === 1 ? "the text" : `edits[${i}]`);

  wanted.forEach((e, i) => {
    if (e.oldText === "") {
      throw new EditRefused(
        wanted.length === 1
          ? `oldText must not be empty in ${path}.`
          : `edits[${i}].oldText must not be empty in ${path}.`,
      );
    }
  });
  const loose = wanted.some((e) => !content.includes(e.oldText) && hasLoose(content, e.oldText));
  const base = loose ? loosen(content) : content;

  const matches = wanted.map((e, i) => {
    const at = locate(base, e.oldText);
    if (at === null) {
      throw new EditRefused(
        wanted.length === 1
          ? `Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.`
          : `Could not find ${label(i)} in ${path}. The oldText must match exactly including all whitespace and newlines.`,
      );
    }
    const count = occurrences(loosen(base), loosen(e.oldText));
    if (count > 1) {
      throw new EditRefused(
        wanted.length === 1
          ? `Found ${count} occurrences of the text in ${path}. The text must be unique. Please provide more context to make it unique.`
          : `Found ${count} occurrences of ${label(i)} in ${path}. Each oldText must be unique. Please provide more context to make it unique.`,
      );
    }
    return { edit: i, start: at.start, length: at.length, newText: e.newText };
  });

  const ordered = [...matches].sort((a, b) => a.start - b.start);
  for (let k = 1; k < ordered.length; k++) {
    const before = ordered[k - 1]!;
    const after = ordered[k]!;
    if (before.start + before.length > after.start) {
      throw new EditRefused(
        `edits[${before.edit}] and edits[${after.edit}] overlap in ${path}. Merge them into one edit or target disjoint regions.`,
      );
    }
  }

  let next = "";
  let cursor = 0;
  for (const m of ordered) {
    next += base.slice(cursor, m.start) + m.newText;
    cursor = m.start + m.length;
  }
  next += base.slice(cursor);
  if (next === base) {
    throw new EditRefused(
      wanted.length === 1
        ? `No changes made to ${path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.`
        : `No changes made to ${path}. The replacements produced identical content.`,
    );
  }
  const { diff, firstChangedLine } = lineDiff(base, next);
  return {
    text: bom + (ending === "\r\n" ? next.replaceAll("\n", "\r\n") : next),
    diff,
    firstChangedLine,
  };
}

/** CRLF when the first line break of `text` is one, else LF. */
function lineEndingOf(text: string): "\n" | "\r\n" {
  const lf = text.indexOf("\n");
  return lf > 0 && text[lf - 1] === "\r" ? "\r\n" : "\n";
}

/** Every CRLF and lone CR as LF. */
function toLF(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * The loosened form both sides are compared in when an exact match fails: NFKC, no
 * trailing whitespace on any line, typographic quotes, dashes and spaces as ASCII.
 */
function loosen(text: string): string {
  return text
    .normalize("NFKC")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ");
}

function hasLoose(content: string, oldText: string): boolean {
  return loosen(content).includes(loosen(oldText));
}

/** Where `oldText` is in `text`: exactly, or else in the loosened form (whose offsets are `text`'s when `text` is loose already). */
function locate(text: string, oldText: string): { start: number; length: number } | null {
  const exact = text.indexOf(oldText);
  if (exact !== -1) return { start: exact, length: oldText.length };
  const looseOld = loosen(oldText);
  const loose = loosen(text).indexOf(looseOld);
  return loose === -1 ? null : { start: loose, length: looseOld.length };
}

/**
 * Non-overlapping occurrences of `needle`, counted left to right. An empty needle (an
 * oldText of trailing spaces loosens to "") counts as pi counts it: once between every
 * two UTF-16 units.
 */
function occurrences(haystack: string, needle: string): number {
  if (needle === "") return haystack.length - 1;
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    count++;
  }
  return count;
}

/** Unchanged lines kept around each change in the diff. */
const CONTEXT_LINES = 4;

/**
 * A line diff the way pi's edit renderer reads it: `+N text`, `-N text` and ` N text`
 * lines (N right-aligned to the widest line number), runs of unchanged lines cut to 4
 * beside each change with ` ...` for what is skipped.
 * @example lineDiff("a\nb\n", "a\nc\n").diff // " 1 a\n-2 b\n+2 c"
 */
export function lineDiff(
  before: string,
  after: string,
): { diff: string; firstChangedLine: number | undefined } {
  const width = String(Math.max(before.split("\n").length, after.split("\n").length)).length;
  const num = (n: number) => String(n).padStart(width, " ");
  const gap = ` ${" ".repeat(width)} ...`;
  const parts = diffLines(before, after);
  const out: string[] = [];
  let oldLine = 1;
  let newLine = 1;
  let firstChangedLine: number | undefined;
  const keep = (lines: readonly string[]) => {
    for (const line of lines) {
      out.push(` ${num(oldLine)} ${line}`);
      oldLine++;
      newLine++;
    }
  };
  const skip = (count: number) => {
    if (count <= 0) return;
    out.push(gap);
    oldLine += count;
    newLine += count;
  };
  parts.forEach((part, i) => {
    const lines = part.value.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    if (part.added || part.removed) {
      firstChangedLine ??= newLine;
      for (const line of lines) {
        if (part.added) out.push(`+${num(newLine++)} ${line}`);
        else out.push(`-${num(oldLine++)} ${line}`);
      }
      return;
    }
    const afterChange = i > 0 && (parts[i - 1]!.added || parts[i - 1]!.removed);
    const beforeChange = i + 1 < parts.length && (parts[i + 1]!.added || parts[i + 1]!.removed);
    if (afterChange && beforeChange && lines.length <= CONTEXT_LINES * 2) {
      keep(lines);
    } else if (afterChange && beforeChange) {
      keep(lines.slice(0, CONTEXT_LINES));
      skip(lines.length - CONTEXT_LINES * 2);
      keep(lines.slice(lines.length - CONTEXT_LINES));
    } else if (afterChange) {
      keep(lines.slice(0, CONTEXT_LINES));
      skip(lines.length - Math.min(lines.length, CONTEXT_LINES));
    } else if (beforeChange) {
      const hidden = Math.max(0, lines.length - CONTEXT_LINES);
      skip(hidden);
      keep(lines.slice(hidden));
    } else {
      oldLine += lines.length;
      newLine += lines.length;
    }
  });
  return { diff: out.join("\n"), firstChangedLine };
}
