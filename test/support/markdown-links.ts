/**
 * Reading Markdown as GitHub renders it, for the docs links test: the anchors a file's
 * headings get, and the relative links it makes. Code fences and inline code are not
 * text, so a link or heading shown as an example inside them is neither.
 */

/** A relative link as written: the path part (empty for `#anchor`) and the anchor. */
export interface MarkdownLink {
  line: number;
  target: string;
  path: string;
  anchor: string | null;
}

/** The lines of `markdown` that are prose: fenced code blocks become empty lines. */
function proseLines(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split("\n").map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker !== undefined) {
      fence = marker;
      return "";
    }
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = null;
      }
      return "";
    }
    return line;
  });
}

function withoutInlineCode(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, "");
}

/**
 * The anchor GitHub gives a heading: lower-cased, punctuation dropped (backticks and
 * emphasis included), each space a hyphen.
 * @example headingSlug("The wire: Chord batches") // "the-wire-chord-batches"
 */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/**
 * Every anchor a link may name in `markdown`: its headings' slugs (a repeated one gets
 * `-1`, `-2`, …, as GitHub numbers them) and explicit `<a id>` / `<a name>` anchors.
 */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Whether a link target leaves the repository (`https:`, `mailto:`, `//host`). */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}

function linkOf(target: string, line: number): MarkdownLink {
  const hash = target.indexOf("#");
  const rawPath = hash === -1 ? target : target.slice(0, hash);
  return {
    line,
    target,
    path: decodeURIComponent(rawPath),
    anchor: hash === -1 ? null : decodeURIComponent(target.slice(hash + 1)),
  };
}

/**
 * The relative links of `markdown`: inline links and images (`[text](target "title")`)
 * and reference definitions (`[id]: target`), outside code.
 * @example markdownLinks("See [the API](docs/protocol.md#errors).")[0].anchor // "errors"
 */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach((raw, i) => {
    const line = withoutInlineCode(raw);
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map(
        (m) => m[1]!,
      ),
    ];
    for (const target of targets) {
      if (target !== "" && !isExternal(target)) links.push(linkOf(target, i + 1));
    }
  });
  return links;
}

/**
 * Citations of the docs in source text: `docs/<path>.md` with an optional `#anchor`, and
 * decision records by number (`docs/decisions/090`).
 * @example docCitations("// see docs/protocol.md#limits") // [{ path: "docs/protocol.md", anchor: "limits" }]
 */
export function docCitations(source: string): { path: string; anchor: string | null }[] {
  const found: { path: string; anchor: string | null }[] = [];
  for (const m of source.matchAll(/\bdocs\/([A-Za-z0-9_./-]*?)\.md(?:#([A-Za-z0-9_-]+))?/g)) {
    found.push({ path: `docs/${m[1]}.md`, anchor: m[2] ?? null });
  }
  for (const m of source.matchAll(/\bdocs\/decisions\/(\d{3})(?![\d-])/g)) {
    found.push({ path: `docs/decisions/${m[1]}`, anchor: null });
  }
  return found;
}

/**
 * The comments of TypeScript source, one after another: where code cites the docs
 * (string literals such as test fixtures are left out).
 * @example commentsOf('const a = "fixture.md"; // see docs/protocol.md') // "// see docs/protocol.md"
 */
export function commentsOf(source: string): string {
  return [...source.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join("\n");
}
