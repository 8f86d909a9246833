/**
 * Builds the pages: bundles src/client/viewer/main.ts (with the client library and the
 * Chord decoder) with esbuild and inlines it into src/client/viewer/page.html, written
 * to public/viewer.html (git-ignored); the run page likewise from src/client/run-view/
 * to public/run.html. Each page's Content-Security-Policy allows exactly its script by
 * hash, so nothing else can run on it; styles are inline, as xterm.js (a tty call's
 * terminal, decision 191) writes its own, and xterm.js's stylesheet is inlined here.
 * Run by `npm start`, `npm test` and `npm run deploy` before they start.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
export const VIEWER_PAGE = `${root}public/viewer.html`;
const RUN_PAGE = `${root}public/run.html`;

const XTERM_CSS = createRequire(import.meta.url).resolve("@xterm/xterm/css/xterm.css");

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
  // A "</script" inside the bundle would end the inline script early.
  const safeScript = script.replaceAll("</script", "<\\/script");
  const html = template
    .replace("%SCRIPT_HASH%", `'${sha256(safeScript)}'`)
    .replace("/*XTERM_CSS*/", () => readFileSync(XTERM_CSS, "utf8"))
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
