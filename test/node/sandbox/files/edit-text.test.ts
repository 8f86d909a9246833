// The edit tool's text work against pi-coding-agent 0.73.1's own edit tool, run on the
// same file text through its public operations hook: same file written, same diff and
// first changed line, or the same refusal, over thousands of random files and edits.
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyEdits,
  EditRefused,
  lineDiff,
  type TextEdit,
} from "../../../../sandbox/files/edit-text.ts";

type Outcome =
  | { text: string; diff: string; firstChangedLine: number | undefined }
  | { error: string };

/** What pi's edit tool does with `original` and `edits`: the file it writes, or its error. */
async function piEdit(original: string, edits: TextEdit[]): Promise<Outcome> {
  let written: string | undefined;
  const tool = createEditToolDefinition("/virtual", {
    operations: {
      access: async () => {},
      readFile: async () => Buffer.from(original, "utf8"),
      writeFile: async (_path, content) => {
        written = content;
      },
    },
  });
  try {
    const result = await tool.execute(
      "call",
      { path: "f.txt", edits },
      undefined,
      undefined,
      undefined as never,
    );
    const details = result.details as { diff: string; firstChangedLine?: number };
    return { text: written ?? "", diff: details.diff, firstChangedLine: details.firstChangedLine };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function toLF(text: string): string {
  return text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
}

/** pi's loosening (NFKC, no trailing spaces, ASCII quotes, dashes and spaces), in LF. */
function loosenedLF(text: string): string {
  return toLF(text)
    .normalize("NFKC")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ");
}

function ours(original: string, edits: TextEdit[]): Outcome {
  try {
    return applyEdits(original, edits, "f.txt");
  } catch (err) {
    if (!(err instanceof EditRefused)) throw err;
    return { error: err.message };
  }
}

// Lines with what pi treats specially: trailing spaces, typographic quotes and dashes,
// non-breaking spaces, repeats (not unique), blank lines.
const LINE = fc.constantFrom(
  "alpha",
  "beta",
  "alpha",
  "  indented();",
  "trailing   ",
  "“quoted”",
  "it’s",
  "en – dash",
  "nbsp\u00a0here",
  "",
  "x = 1",
  "x = 2",
);
const ENDING = fc.constantFrom("\n", "\r\n");
const FILE = fc
  .record({
    lines: fc.array(LINE, { minLength: 0, maxLength: 14 }),
    ending: ENDING,
    bom: fc.boolean(),
    finalNewline: fc.boolean(),
  })
  .map(({ lines, ending, bom, finalNewline }) => {
    const body = lines.join(ending) + (finalNewline && lines.length > 0 ? ending : "");
    return (bom ? "\uFEFF" : "") + body;
  });

/** An oldText: a slice of the file (often unique, sometimes not), loosened at times, or made up. */
function editFor(file: string) {
  const plain = file.replace(/^\uFEFF/, "");
  return fc
    .record({
      start: fc.nat({ max: Math.max(0, plain.length) }),
      length: fc.integer({ min: 0, max: 24 }),
      kind: fc.constantFrom("slice", "slice", "slice", "ascii", "invented", "empty"),
      newText: fc.constantFrom("", "NEW", "line one\nline two", "x = 3", "alpha"),
    })
    .map(({ start, length, kind, newText }) => {
      const slice = plain.slice(start, start + length);
      const oldText =
        kind === "ascii"
          ? slice
              .replace(/[“”]/g, '"')
              .replace(/’/g, "'")
              .replace(/–/g, "-")
              .replace(/\u00a0/g, " ")
          : kind === "invented"
            ? "not in the file"
            : kind === "empty"
              ? ""
              : slice;
      return { oldText, newText };
    });
}

const CASE = FILE.chain((file) =>
  fc.record({
    file: fc.constant(file),
    edits: fc.array(editFor(file), { minLength: 1, maxLength: 3 }),
  }),
);

describe("edit: pi's semantics", () => {
  it("writes what pi writes, with pi's diff, or refuses with pi's message (2,000 random cases)", async () => {
    // Where pi matched loosely it rewrites the whole file loosened; ours rewrites only the
    // lines the match touches, so there the two agree once both are loosened.
    await fc.assert(
      fc.asyncProperty(CASE, async ({ file, edits }) => {
        const mine = ours(file, edits);
        const pis = await piEdit(file, edits);
        const loosenable = loosenedLF(file) !== toLF(file);
        if ("error" in pis || "error" in mine || !loosenable) {
          expect(mine).toEqual(pis);
          return;
        }
        // The diff shows the file's own lines, which pi's shows loosened.
        expect(loosenedLF(mine.text)).toBe(loosenedLF(pis.text));
        // The lines a loose match touches are rewritten loosened, so the first changed
        // line is where the bytes first differ (lineDiff agrees with pi's on exact edits,
        // above); pi, comparing loosened lines, may see a later one.
        expect(mine.firstChangedLine).toBe(lineDiff(toLF(file), toLF(mine.text)).firstChangedLine);
        expect(mine.firstChangedLine).toBeLessThanOrEqual(pis.firstChangedLine!);
      }),
      { numRuns: 2000 },
    );
  }, 300_000);

  it("a loose match rewrites only the lines it touches; every other byte stays", () => {
    const file = "keep “this”   \nit’s – here\nand “that”\n";
    const edited = applyEdits(file, [{ oldText: "it's - here", newText: "done" }], "f.txt");
    expect(edited.text).toBe("keep “this”   \ndone\nand “that”\n");
    expect(edited.firstChangedLine).toBe(2);
  });

  it("a loose match that opens with a line's break keeps that line's bytes, unless they join the next text", () => {
    const file = "keep   \n“a”\nrest\n";
    const kept = applyEdits(file, [{ oldText: '\n"a"', newText: "" }], "f.txt");
    expect(kept.text).toBe("keep   \nrest\n");
    expect(kept.firstChangedLine).toBe(2);
    // Joined to the next line, the trailing spaces the loose match counted as absent go.
    const joined = applyEdits(file, [{ oldText: '\n"', newText: "" }], "f.txt");
    expect(joined.text).toBe('keepa"\nrest\n');
    expect(joined.firstChangedLine).toBe(1);
  });

  it("a file that mixes line endings keeps each one", () => {
    const file = "a\r\nb\nc\rd\r\n";
    expect(applyEdits(file, [{ oldText: "b", newText: "B" }], "f.txt").text).toBe(
      "a\r\nB\nc\rd\r\n",
    );
  });

  it("names which edit failed and why", () => {
    const file = "one\ntwo\ntwo\nthree\n";
    expect(() => applyEdits(file, [{ oldText: "two", newText: "2" }], "f.txt")).toThrow(
      "Found 2 occurrences of the text in f.txt. The text must be unique.",
    );
    expect(() =>
      applyEdits(
        file,
        [
          { oldText: "one", newText: "1" },
          { oldText: "four", newText: "4" },
        ],
        "f.txt",
      ),
    ).toThrow("Could not find edits[1] in f.txt.");
    expect(() =>
      applyEdits(
        file,
        [
          { oldText: "one\ntwo\ntwo", newText: "x" },
          { oldText: "two\nthree", newText: "y" },
        ],
        "f.txt",
      ),
    ).toThrow("edits[0] and edits[1] overlap in f.txt.");
  });

  it("keeps CRLF line endings and the BOM", () => {
    const edited = applyEdits("\uFEFFa\r\nb\r\n", [{ oldText: "b\n", newText: "c\nd\n" }], "f.txt");
    expect(edited.text).toBe("\uFEFFa\r\nc\r\nd\r\n");
    expect(edited.firstChangedLine).toBe(2);
  });

  it("cuts long unchanged runs to four lines of context", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n");
    const after = before.replace("l10", "ten");
    expect(lineDiff(before, after).diff).toBe(
      [
        "    ...",
        "  6 l6",
        "  7 l7",
        "  8 l8",
        "  9 l9",
        "-10 l10",
        "+10 ten",
        " 11 l11",
        " 12 l12",
        " 13 l13",
        " 14 l14",
        "    ...",
      ].join("\n"),
    );
  });
});
