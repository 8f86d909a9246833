/**
 * The `edit` tool's text work, with pi-coding-agent 0.73.1's semantics (decision 131):
 * every `oldText` is looked up in the original text (never in the text after an earlier
 * edit), must be found, found once, and not overlap another edit's match. Matching is
 * exact first; when an `oldText` is only found after both sides are loosened (trailing
 * spaces, Unicode quotes, dashes and spaces made ASCII, NFKC), the whole edit works on the
 * loosened text, as pi's does, but only the lines a loose match touches are rewritten in
 * their loosened form: every other line keeps its bytes (a line whose break alone a match
 * takes is not touched). Line endings are matched as LF
 * and written back as the file had them (a file that mixes them is matched as it is); a
 * leading BOM is kept. Pure: strings in, strings out.
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
interface EditedText {
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
  // Mixed line endings are matched as they are: converting them would rewrite lines the
  // edit does not touch.
  const convert = ending === "mixed" ? (text: string) => text : toLF;
  const content = convert(body);
  const wanted = edits.map((e) => ({ oldText: convert(e.oldText), newText: convert(e.newText) }));
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
  // A loose match changes only the lines it touches; every other line keeps its bytes.
  const result = loose ? confined(content, base, ordered) : next;
  const { diff, firstChangedLine } = lineDiff(content, result);
  return {
    text: bom + (ending === "\r\n" ? result.replaceAll("\n", "\r\n") : result),
    diff,
    firstChangedLine,
  };
}

/**
 * `content` with the lines the matches (offsets in `base`, its loosened form) touch
 * replaced by those lines of `base` with the matches applied. Loosening keeps every
 * line break, so line N of one is line N of the other.
 */
function confined(
  content: string,
  base: string,
  ordered: readonly { start: number; length: number; newText: string }[],
): string {
  const contentStarts = lineStarts(content);
  const baseStarts = lineStarts(base);
  const lineOf = (offset: number) => {
    let line = 0;
    while (line + 1 < baseStarts.length - 1 && baseStarts[line + 1]! <= offset) line++;
    return line;
  };
  // The line of a match's last character (a match that ends with a line break ends on it).
  const lastLineOf = (m: { start: number; length: number }) =>
    lineOf(m.start + Math.max(m.length - 1, 0));
  let out = "";
  let contentAt = 0;
  for (let k = 0; k < ordered.length; ) {
    const first = lineOf(ordered[k]!.start);
    let last = lastLineOf(ordered[k]!);
    let end = k + 1;
    while (end < ordered.length && lineOf(ordered[end]!.start) <= last) {
      last = Math.max(last, lastLineOf(ordered[end]!));
      end++;
    }
    out += content.slice(contentAt, contentStarts[first]);
    // A match that opens with a line's break leaves that line's text as it was (its CR
    // goes with the break the match took).
    let kept = "";
    let at = baseStarts[first]!;
    if (base[ordered[k]!.start] === "\n") {
      kept = content.slice(contentStarts[first], contentStarts[first + 1]! - 1).replace(/\r$/, "");
      at = ordered[k]!.start;
    }
    let rewritten = "";
    for (const m of ordered.slice(k, end)) {
      rewritten += base.slice(at, m.start) + m.newText;
      at = m.start + m.length;
    }
    const lineEnd = baseStarts[last + 1]! - 1;
    rewritten += base.slice(at, Math.max(at, lineEnd));
    // Past the line break when a match took it, else at it.
    contentAt = contentStarts[last + 1]! - (at > lineEnd ? 0 : 1);
    // Kept text that no longer ends its line loses its trailing whitespace, which the
    // loose match counted as absent.
    const next = rewritten === "" ? content[contentAt] : rewritten[0];
    if (next !== undefined && next !== "\n" && next !== "\r") kept = kept.trimEnd();
    out += kept + rewritten;
    k = end;
  }
  return out + content.slice(contentAt);
}

/** Offset where each line of `text` starts, then `text.length + 1` (past a last line break). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  starts.push(text.length + 1);
  return starts;
}

/** CRLF when every line break is one, LF when none is, else mixed (lone CRs count). */
function lineEndingOf(text: string): "\n" | "\r\n" | "mixed" {
  const breaks = (text.match(/\r\n|\r|\n/g) ?? []) as string[];
  if (breaks.every((b) => b === "\n")) return "\n";
  return breaks.every((b) => b === "\r\n") ? "\r\n" : "mixed";
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
