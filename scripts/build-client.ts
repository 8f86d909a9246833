/**
 * Builds the pages: bundles src/client/viewer/main.ts (with the client library and the
 * Chord decoder) with esbuild and inlines it into src/client/viewer/page.html, written
 * to public/viewer.html (git-ignored); the run page likewise from src/client/run-view/
 * to public/run.html. Each page's Content-Security-Policy allows exactly its script and
 * style by hash, so nothing else can run on it.
 * Run by `npm start`, `npm test` and `npm run deploy` before they start.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
export const VIEWER_PAGE = `${root}public/viewer.html`;
const RUN_PAGE = `${root}public/run.html`;

/** Builds public/viewer.html and public/run.html; returns the viewer's size in bytes. */
export async function buildViewer(): Promise<number> {
  await buildPage("src/client/run-view", RUN_PAGE);
  return buildPage("src/client/viewer", VIEWER_PAGE);
}

async function buildPage(source: string, target: string): Promise<number> {
  const bundle = await build({
    entryPoints: [`${root}${source}/main.ts`],
    bundle: true,
    write: false,
    format: "esm",
    minify: true,
    target: "es2022",
    platform: "browser",
    legalComments: "none",
  });
  const script = (bundle.outputFiles[0]?.text ?? "").trim();
  const template = readFileSync(`${root}${source}/page.html`, "utf8");
  const style = /<style>([\s\S]*?)<\/style>/.exec(template)?.[1] ?? "";
  // A "</script" inside the bundle would end the inline script early.
  const safeScript = script.replaceAll("</script", "<\\/script");
  const html = template
    .replace("%SCRIPT_HASH%", `'${sha256(safeScript)}'`)
    .replace("%STYLE_HASH%", `'${sha256(style)}'`)
    .replace("%SCRIPT%", () => `<script type="module">${safeScript}</script>`);
  writeFileSync(target, html);
  return Buffer.byteLength(html);
}

function sha256(text: string): string {
  return `sha256-${createHash("sha256").update(text, "utf8").digest("base64")}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await buildViewer();
  console.log(`built public/viewer.html (${(bytes / 1024).toFixed(1)} KB) and public/run.html`);
}
