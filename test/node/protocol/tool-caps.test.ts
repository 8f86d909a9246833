/**
 * Each cap written once (issue 24): the output caps (2,000 lines, 50 KB, 48 KB, a
 * read's 2,000-character line) live in src/protocol/tool-caps.ts, and the output
 * sink's default policy in src/core/output/types.ts (the pure core cannot import
 * protocol; tool-caps.ts reads it). This reads the code (comments dropped) of every
 * .ts file under src/, sandbox/ and durable-objects/ and fails on a cap written out
 * again anywhere else, as a number or in a sentence a model reads.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const HOMES = new Set(["src/protocol/tool-caps.ts", "src/core/output/types.ts"]);

/** The ways a cap comes back: as bytes, as a line count of a window, or in words. */
const CAP_PATTERNS: RegExp[] = [
  /\b(?:50|48|52) \* 1024\b/,
  /\b(?:51_?200|49_?152|53_?248)\b/,
  /(?:lines|limit|items|linechars)\w*\s*[:=]\s*2_?00[08]\b/i,
  /\b2,?000 (?:lines|characters|new lines)\b/,
  /\b(?:50|48) KB\b/,
  /\bdefault 2,?000\b/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => path.posix.join(dir, f.split(path.sep).join("/")));
}

/** The code of a file without its comments (strings kept; a `//` inside one is rare here). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Each `file:line: text` where a cap is written out outside its homes. */
function capsWrittenOut(files: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (HOMES.has(file)) continue;
    codeOf(text)
      .split("\n")
      .forEach((line, i) => {
        if (CAP_PATTERNS.some((p) => p.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe("the output caps are written once", () => {
  it("no file outside src/protocol/tool-caps.ts writes one out", () => {
    const files = new Map<string, string>();
    for (const dir of ["src", "sandbox", "durable-objects"]) {
      for (const file of sourceFiles(dir))
        files.set(file, readFileSync(path.join(ROOT, file), "utf8"));
    }
    expect(files.size).toBeGreaterThan(100);
    expect(capsWrittenOut(files)).toEqual([]);
  });

  it("finds a cap written out as bytes, as lines or in words, and not in a comment", () => {
    const planted = new Map([
      ["src/tools/a.ts", "const maxBytes = 50 * 1024;"],
      ["src/tools/b.ts", "output: { maxLines: 2000 },"],
      ["src/tools/c.ts", 'description: "at most 2,000 lines or 48 KB a call",'],
      ["src/tools/d.ts", "/** at most 2000 lines / 50 KB */\n// 51200 bytes\nconst x = 1;"],
      ["src/protocol/tool-caps.ts", "export const JOB_OUTPUT_BYTES = 48 * 1024;"],
    ]);
    expect(capsWrittenOut(planted)).toEqual([
      "src/tools/a.ts:1: const maxBytes = 50 * 1024;",
      "src/tools/b.ts:1: output: { maxLines: 2000 },",
      'src/tools/c.ts:1: description: "at most 2,000 lines or 48 KB a call",',
    ]);
  });
});
