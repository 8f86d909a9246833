// grep's `context` on the real host, with both engines: the lines around each match in
// pi-coding-agent 0.73.1's own format, checked against pi's own grep tool run over the
// same real files; the cap on `context` and the cap on the lines of one answer.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createGrepToolDefinition } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRipgrep } from "../../../../sandbox/files/ripgrep.ts";
import {
  GREP_MAX_CONTEXT,
  GREP_MAX_LINES,
  type GrepResult,
} from "../../../../src/protocol/index.ts";
import { startTestHost, type TestHost } from "../harness.ts";

/** pi's answer for a grep of `dir` (its paths are relative to `dir`), and its details. */
async function piGrep(
  dir: string,
  args: { pattern: string; ignoreCase?: boolean; context: number; limit: number },
): Promise<{ text: string; details: Record<string, unknown> | undefined }> {
  const tool = createGrepToolDefinition(dir);
  const result = await tool.execute(
    "call",
    { ...args, path: "." },
    undefined,
    undefined,
    undefined as never,
  );
  const first = result.content[0];
  return {
    text: first?.type === "text" ? first.text : "",
    details: result.details as Record<string, unknown> | undefined,
  };
}

/** The host's matches in pi's grep format: `path-N- text` around `path:N: text`. */
function shown(r: GrepResult): string[] {
  return r.matches.flatMap((m) => [
    ...(m.before ?? []).map((l) => `${m.path}-${l.line}- ${l.text}`),
    `${m.path}:${m.line}: ${m.text}`,
    ...(m.after ?? []).map((l) => `${m.path}-${l.line}- ${l.text}`),
  ]);
}

/** The lines of a grep text without its closing notice, or none for "no matches". */
function body(text: string): string[] {
  if (text.startsWith("No matches found")) return [];
  const notice = text.indexOf("\n\n[");
  return (notice === -1 ? text : text.slice(0, notice)).split("\n");
}

const LINE = fc.constantFrom("hit", "miss", "", "a hit b", "HIT", "  hit\t", "other", "hit hit");
const PATTERN = fc.constantFrom(
  { pattern: "hit" },
  { pattern: "^hit$" },
  { pattern: "hit", ignoreCase: true },
  { pattern: "x" },
);

const rg = findRipgrep();

describe.each([
  ["walker", null],
  ["ripgrep", rg],
])("grep context with the %s", (engine, rgPath) => {
  let h: TestHost;
  beforeAll(async () => {
    if (engine === "ripgrep")
      expect(rgPath, "ripgrep must be installed (apt-get install ripgrep)").not.toBeNull();
    h = await startTestHost({ rgPath });
  });
  afterAll(() => h.close());

  const put = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(h.root, rel)), { recursive: true });
    writeFileSync(path.join(h.root, rel), text);
  };

  it("shows what pi's own grep shows over the same files, for random files, context and limits", async () => {
    expect(rg, "pi's grep runs ripgrep (apt-get install ripgrep)").not.toBeNull();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(LINE, { maxLength: 30 }),
        fc.boolean(),
        fc.boolean(),
        PATTERN,
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 12 }),
        async (lines, finalBreak, crlf, pattern, context, limit) => {
          const dir = `pi-${engine}-${run++}`;
          const eol = crlf ? "\r\n" : "\n";
          const text = lines.join(eol) + (finalBreak && lines.length > 0 ? eol : "");
          put(`${dir}/f.txt`, text);
          const pi = await piGrep(path.join(h.root, dir), { ...pattern, context, limit });
          const ours = await h.client.grep({ ...pattern, path: dir, context, limit });
          // pi splits the file on "\n", so after a final line break it shows one empty
          // line past the end as context; that line is not in the file.
          const past = `f.txt-${lines.length + 1}- `;
          const expected = body(pi.text).filter((l) => !(finalBreak && l === past));
          expect(shown(ours).map((l) => l.replace(`${dir}/`, ""))).toEqual(expected);
          const matches = lines.filter((l) =>
            new RegExp(pattern.pattern, pattern.ignoreCase ? "i" : "").test(l),
          ).length;
          // pi reports the limit when it found `limit` matches; Toolwire when more exist.
          expect(ours.stoppedBy).toBe(matches > limit ? "limit" : null);
          expect(pi.details?.matchLimitReached).toBe(matches >= limit ? limit : undefined);
        },
      ),
      { numRuns: 60, seed: 17 },
    );
  }, 60_000);

  it("gives each match its own block: nearby blocks repeat lines, and the last kept one is whole at the probe", async () => {
    put("near/f.txt", "a\nb\nhit one\nhit two\nc\nd\n");
    const all = await h.client.grep({ pattern: "hit", path: "near", context: 1 });
    expect(shown(all)).toEqual([
      "near/f.txt-2- b",
      "near/f.txt:3: hit one",
      "near/f.txt-4- hit two",
      "near/f.txt-3- hit one",
      "near/f.txt:4: hit two",
      "near/f.txt-5- c",
    ]);
    const first = await h.client.grep({ pattern: "hit", path: "near", context: 2, limit: 1 });
    expect(first.matches).toEqual([
      {
        path: "near/f.txt",
        line: 3,
        text: "hit one",
        before: [
          { line: 1, text: "a" },
          { line: 2, text: "b" },
        ],
        after: [
          { line: 4, text: "hit two" },
          { line: 5, text: "c" },
        ],
      },
    ]);
    expect(first).toMatchObject({ stoppedBy: "limit", truncated: true });
  });

  it("context at its cap, just under it, and just over it (a clear 400)", async () => {
    const lines = Array.from({ length: 301 }, (_, i) => (i === 150 ? "hit" : `line ${i + 1}`));
    put("cap/f.txt", `${lines.join("\n")}\n`);
    const around = async (context: number) => {
      const [m] = (await h.client.grep({ pattern: "^hit$", path: "cap", context })).matches;
      return { before: m?.before?.length, after: m?.after?.length, first: m?.before?.[0]?.line };
    };
    expect(await around(GREP_MAX_CONTEXT)).toEqual({ before: 100, after: 100, first: 51 });
    expect(await around(GREP_MAX_CONTEXT - 1)).toEqual({ before: 99, after: 99, first: 52 });
    await expect(
      h.client.grep({ pattern: "hit", path: "cap", context: GREP_MAX_CONTEXT + 1 }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/context/) });
    await expect(h.client.grep({ pattern: "hit", path: "cap", context: -1 })).rejects.toMatchObject(
      { status: 400 },
    );
  });

  it("stops before the match whose lines would pass the answer's line cap, and says so", async () => {
    // Blocks of exactly 5 lines: a hit on the middle line of every 5.
    const file = (blocks: number) =>
      `${Array.from({ length: blocks * 5 }, (_, i) => (i % 5 === 2 ? "hit" : "-")).join("\n")}\n`;
    const perBlock = 5;
    const fit = GREP_MAX_LINES / perBlock;
    for (const [blocks, stoppedBy, kept] of [
      [fit - 1, null, fit - 1],
      [fit, null, fit],
      [fit + 1, "lines", fit],
    ] as const) {
      put(`lines-${blocks}/f.txt`, file(blocks));
      const r = await h.client.grep({
        pattern: "hit",
        path: `lines-${blocks}`,
        context: 2,
        limit: 10_000,
      });
      expect({ kept: r.matches.length, stoppedBy: r.stoppedBy, truncated: r.truncated }).toEqual({
        kept,
        stoppedBy,
        truncated: stoppedBy !== null,
      });
      if (stoppedBy === "lines") expect(r.omitted).toEqual({ kind: "atLeast", count: 1 });
    }
  }, 30_000);

  it("counts the context lines cut to the preview cap (pi's linesTruncated)", async () => {
    put("wide/f.txt", `${"w".repeat(600)}\nhit\nshort\n`);
    const r = await h.client.grep({ pattern: "hit", path: "wide", context: 1 });
    expect(r.cutLines).toBe(1);
    expect(r.matches[0]?.before?.[0]?.text).toBe(`${"w".repeat(500)}…`);
    const plain = await h.client.grep({ pattern: "hit", path: "wide" });
    expect(plain.cutLines).toBe(0);
    expect(plain.matches[0]).toEqual({ path: "wide/f.txt", line: 2, text: "hit" });
  });
});
