// Refused viewer and run links in headless Chromium against the real Worker, at a
// desktop and a phone size: a person gets a page that says what happened and what to
// do; a request from the same browser context asking for JSON still gets the API's JSON.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { mintRunToken } from "../../src/worker/run-token.ts";
import { mintSubscribeToken } from "../../src/worker/subscribe-token.ts";
import { launchChromium, SIZES } from "../support/e2e/chromium.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const SHOTS = path.resolve(import.meta.dirname, "../../test-output/error-pages");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** Opens `url` as a person would and returns the status, the title and the page's text. */
async function open(url: string, size: (typeof SIZES)[number], shot: string) {
  const context = await browser.newContext({ viewport: size.viewport });
  const page = await context.newPage();
  const response = await page.goto(url);
  const title = await page.locator("h1").textContent();
  const text = await page.locator("main").textContent();
  // Every word fits the width: nothing to scroll sideways on a phone.
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  await page.screenshot({ path: path.join(SHOTS, `${shot}-${size.name}.png`) });
  // The page may not fetch (its CSP is default-src 'none'); the same browser context's
  // request, asking for JSON like the API clients do, gets JSON.
  const res = await context.request.get(url, { headers: { Accept: "application/json" } });
  const json = { type: res.headers()["content-type"], body: await res.text() };
  await context.close();
  return { status: response?.status(), title, text, overflow, json };
}

describe.each(SIZES)("refused links at $name size", (size) => {
  it("an expired viewer link says it expired and how to get a new one", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "old" } });
    const token = await mintSubscribeToken(
      inject("subscribeSecret"),
      created.id,
      Date.now() - 7_200_000,
    );
    const shown = await open(
      `${inject("apiUrl")}/view/${created.id}?token=${token}`,
      size,
      "expired",
    );
    expect(shown.status).toBe(401);
    expect(shown.title).toBe("This link has expired");
    expect(shown.text).toContain(
      `Ask for a new one with toolwire link ${created.id}, or from your agent.`,
    );
    expect(shown.overflow).toBe(0);
    expect(shown.json.type).toContain("application/json");
    expect(JSON.parse(shown.json.body)).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("a mistyped id and a call that no longer exists each say so", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "typo" } });
    const mistyped = created.viewUrl.replace(`/view/${created.id}`, `/view/${created.id}x`);
    const typo = await open(mistyped, size, "mistyped");
    expect(typo.status).toBe(403);
    expect(typo.title).toBe("This link is for another call");
    expect(typo.text).toContain("may be mistyped");

    const gone = `gone_${Date.now()}`;
    const token = await mintSubscribeToken(inject("subscribeSecret"), gone, Date.now());
    const missing = await open(`${inject("apiUrl")}/view/${gone}?token=${token}`, size, "unknown");
    expect(missing.status).toBe(404);
    expect(missing.title).toBe("No call with this id");
    expect(missing.json.type).toContain("application/json");
  });

  it("a link without its token, and an expired run link", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "bare" } });
    const bare = await open(`${inject("apiUrl")}/view/${created.id}`, size, "no-token");
    expect([bare.status, bare.title]).toEqual([401, "This link is incomplete"]);

    const runId = `run-${Date.now()}`;
    await api.createInvocation({ tool: "external", args: { name: "r" }, runId });
    const token = await mintRunToken(inject("subscribeSecret"), runId, Date.now() - 7_200_000);
    const run = await open(`${inject("apiUrl")}/run/${runId}?token=${token}`, size, "run-expired");
    expect([run.status, run.title]).toEqual([401, "This link has expired"]);
    expect(run.text).toContain(`toolwire link --run ${runId}`);
    expect(run.overflow).toBe(0);
  });
});
