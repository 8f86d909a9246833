/**
 * The front door stays honest: every relative link in the README and the docs points
 * to a file that exists (and to a heading that exists, when it names one), every
 * citation of the docs in code does too, and the decision index lists every record.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  commentsOf,
  docCitations,
  headingSlug,
  markdownAnchors,
  markdownLinks,
} from "../support/markdown-links.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".wrangler", "dist", "public", "workspace"]);

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith("test-output")) {
        out.push(...filesUnder(rel, keep));
      }
    } else if (keep(rel)) {
      out.push(rel);
    }
  }
  return out;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    anchors = markdownAnchors(readFileSync(path.join(ROOT, file), "utf8"));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** What is wrong with a link from `from` (repo-relative) to `target`, or null. */
function brokenLink(from: string, linkPath: string, anchor: string | null): string | null {
  const file =
    linkPath === ""
      ? from
      : path.posix.normalize(path.posix.join(path.posix.dirname(from), linkPath));
  if (file.startsWith("..")) return `${file} is outside the repository`;
  if (!existsSync(path.join(ROOT, file))) return `${file} does not exist`;
  if (anchor === null || anchor === "") return null;
  if (statSync(path.join(ROOT, file)).isDirectory() || !file.endsWith(".md")) {
    return `#${anchor} on ${file}, which is not a Markdown file`;
  }
  return anchorsOf(file).has(anchor) ? null : `${file} has no heading #${anchor}`;
}

const MARKDOWN = ["README.md", "BENCHMARKS.md", ...filesUnder("docs", (f) => f.endsWith(".md"))];

describe("relative links in the README and docs/", () => {
  it.each(MARKDOWN)("%s links only to files and headings that exist", (file) => {
    const problems = markdownLinks(readFileSync(path.join(ROOT, file), "utf8"))
      .map((link) => {
        const problem = brokenLink(file, link.path, link.anchor);
        return problem === null ? null : `${file}:${link.line} (${link.target}): ${problem}`;
      })
      .filter((p) => p !== null);
    expect(problems).toEqual([]);
  });
});

describe("citations of docs/ in code, tests and benchmarks", () => {
  const sources = ["src", "durable-objects", "sandbox", "scripts", "test", "bench"].flatMap((dir) =>
    filesUnder(dir, (f) => /\.(ts|html|toml|yml)$/.test(f)),
  );
  sources.push("wrangler.toml", "worker-env.d.ts");
  // This file's own examples are strings; every other file cites the docs in comments.
  const checked = sources.filter((f) => f !== "test/node/docs-links.test.ts");

  it("name files and headings that exist", () => {
    const problems: string[] = [];
    for (const file of checked) {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      for (const cite of docCitations(file.endsWith(".ts") ? commentsOf(text) : text)) {
        const record = /^docs\/decisions\/(\d{3})$/.exec(cite.path)?.[1];
        if (record !== undefined) {
          const named = readdirSync(path.join(ROOT, "docs/decisions")).some((f) =>
            f.startsWith(`${record}-`),
          );
          if (!named) problems.push(`${file}: docs/decisions/${record}: no such record`);
          continue;
        }
        const problem = brokenLink("", cite.path, cite.anchor);
        if (problem !== null) problems.push(`${file}: ${cite.path}#${cite.anchor}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("never cite a specification that is not in the repository", () => {
    // The contract these citations named was never in the repository; docs/ holds it now.
    const outsideSpec = ["SPEC", "§"].join(" ");
    const cited = sources
      .concat(MARKDOWN)
      .filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes(outsideSpec));
    expect(cited).toEqual([]);
  });
});

describe("the decision index", () => {
  it("lists every record in docs/decisions/", () => {
    const index = readFileSync(path.join(ROOT, "docs/decisions/README.md"), "utf8");
    const linked = new Set(markdownLinks(index).map((l) => l.path));
    const records = readdirSync(path.join(ROOT, "docs/decisions")).filter((f) =>
      /^\d{3}-.*\.md$/.test(f),
    );
    expect(records.filter((r) => !linked.has(r))).toEqual([]);
  });
});

describe("the link reader itself", () => {
  it("gives headings GitHub's anchors", () => {
    expect(headingSlug("The wire: Chord batches")).toBe("the-wire-chord-batches");
    expect(headingSlug("`toolwire/client` — the library")).toBe("toolwireclient--the-library");
    expect(headingSlug("Resync, ping and keep-alive")).toBe("resync-ping-and-keep-alive");
    expect([...markdownAnchors("# Notes\n## Notes\n```\n# not a heading\n```\n")]).toEqual([
      "notes",
      "notes-1",
    ]);
  });

  it("finds relative links, and none inside code", () => {
    const links = markdownLinks(
      [
        "See [errors](docs/protocol.md#errors), ![pic](docs/viewer.png), [web](https://x.dev).",
        "`[not](a-link.md)`",
        "```md",
        "[also not](b.md)",
        "```",
        "[ref]: docs/cli.md",
        "[here](#start)",
      ].join("\n"),
    );
    expect(links.map((l) => [l.line, l.path, l.anchor])).toEqual([
      [1, "docs/protocol.md", "errors"],
      [1, "docs/viewer.png", null],
      [6, "docs/cli.md", null],
      [7, "", "start"],
    ]);
  });

  it("reports a missing file and a missing heading", () => {
    expect(brokenLink("README.md", "docs/nope.md", null)).toBe("docs/nope.md does not exist");
    expect(brokenLink("README.md", "docs/protocol.md", "no-such-heading")).toBe(
      "docs/protocol.md has no heading #no-such-heading",
    );
    expect(brokenLink("docs/cli.md", "../README.md", "tools")).toBeNull();
  });

  it("reads code citations of files, anchors and record numbers", () => {
    expect(
      docCitations("// docs/protocol.md#limits, docs/decisions/090 and docs/decisions/087-x.md"),
    ).toEqual([
      { path: "docs/protocol.md", anchor: "limits" },
      { path: "docs/decisions/087-x.md", anchor: null },
      { path: "docs/decisions/090", anchor: null },
    ]);
  });
});
