// The viewer's "view full output" pane in headless Chromium, against the real Worker,
// Durable Object and sandbox host (global-setup.ts): the complete output of a
// 200,000-line command read by ranges, search past the window, a 1-byte range, and a
// spill file the sandbox no longer has.
import { rmSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer } from "../../scripts/build-client.ts";
import { type CreatedInvocation, ToolwireClient } from "../../src/client/index.ts";
import { launchChromium } from "../support/e2e/chromium.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
let browser: Browser;

beforeAll(async () => {
  await buildViewer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function settledBash(command: string): Promise<CreatedInvocation> {
  const created = await api.createInvocation({ tool: "bash", args: { command } });
  const poll = await api.result(created.id, { wait: 30 });
  expect(poll.status).toBe("settled");
  return created;
}

async function openViewer(created: CreatedInvocation): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 720 } });
  const page = await context.newPage();
  expect((await page.goto(created.viewUrl))?.status()).toBe(200);
  await page.waitForFunction(() => document.body.dataset.status === "done", null, {
    timeout: 30_000,
  });
  return page;
}

async function openFullOutput(page: Page, state = "indexed"): Promise<void> {
  await page.locator("#full-open").click();
  await page.waitForFunction((s) => document.body.dataset.full === s, state, { timeout: 30_000 });
}

/** The search status without its matching-line count (which arrives a moment later). */
/**
 * How long a search may take to answer: each reads the 200,000-line file by ranges, and
 * one backwards round from the top took over a second once on a loaded CI machine.
 */
const SEARCHED = { timeout: 10_000 };

const match = async (page: Page) =>
  (await page.locator("#full-status").textContent())?.replace(/ · [\d,]+ matching lines?$/, "");

/** The rows the pane shows: [line number, text]. */
const rows = (page: Page) =>
  page
    .locator("#full-rows .row")
    .evaluateAll((nodes) =>
      nodes.map((n) => [
        Number((n as HTMLElement).dataset.line),
        n.querySelector(".tx")?.textContent,
      ]),
    );

describe("viewer: the full output", () => {
  let created: CreatedInvocation;
  let page: Page;

  beforeAll(async () => {
    created = await settledBash("seq 1 200000");
    page = await openViewer(created);
  });
  afterAll(() => page?.context().close());

  it("the banner's path links to the complete output, all 200,000 lines of it", async () => {
    const link = page.locator("#banner a");
    expect(await link.textContent()).toMatch(/^\/toolwire\/spill\/.+\.log$/);
    const href = await link.evaluate((a) => (a as HTMLAnchorElement).href);
    expect(href).toContain(`/v1/invocations/${created.id}/spill?token=`);
    const fetched = await page.evaluate(async (url) => {
      const res = await fetch(url);
      const text = await res.text();
      const lines = text.split("\n");
      return {
        status: res.status,
        type: res.headers.get("content-type"),
        count: lines.length - 1,
        first: lines[0],
        last: lines.at(-2),
      };
    }, href);
    expect(fetched).toEqual({
      status: 200,
      type: "text/plain; charset=utf-8",
      count: 200_000,
      first: "1",
      last: "200000",
    });
  });

  it("the pane opens at the end the viewer showed, counts its lines and shows only the rows on screen", async () => {
    await openFullOutput(page);
    expect(await page.locator("#full-info").textContent()).toBe("200,000 lines, 1.2 MB");
    // Where the viewer's window was: the file's last lines, numbered once counted.
    const end = await rows(page);
    expect(end.at(-1)).toEqual([200_000, "200000"]);
    expect(end.length).toBeGreaterThan(10);
    expect(end.length).toBeLessThan(100);
    expect(await page.locator("#output .line").last().textContent()).toBe("200000");
    // Scrolled to the very top: the first line of the file.
    await page.locator("#full-scroll").evaluate((s) => {
      s.scrollTop = 0;
    });
    await expect.poll(async () => (await rows(page))[0]).toEqual([1, "1"]);
    // A line number jumps there, and the one position status says where the reader is.
    await page.locator("#full-line").fill("150000");
    await page.locator("#full-line").press("Enter");
    await expect.poll(() => page.locator("#full-rows .row.hit").textContent()).toMatch(/150000$/);
    expect(await page.locator("#full-status").textContent()).toBe("Line 150,000");
    expect(await page.locator("#full [role=status]").count()).toBe(1);
  });

  it("search finds a line outside the 2,000-line window, then the next and previous matches", async () => {
    // The live window holds lines 198,001-200,000 only.
    expect(await page.locator("#output").textContent()).not.toContain("123456");
    // A new search starts from where the reader is (line 150,000 here) and goes round.
    await page.locator("#full-query").fill("123456");
    await page.locator("#full-query").press("Enter");
    await expect.poll(() => match(page), SEARCHED).toBe("Line 123,456 (from the top)");
    expect(await page.locator("#full-rows .row.hit .tx").textContent()).toBe("123456");

    await page.locator("#full-line").fill("1");
    await page.locator("#full-go").click();
    await page.locator("#full-query").fill("99999");
    await page.locator("#full-next").click();
    await expect.poll(() => match(page), SEARCHED).toBe("Line 99,999");
    // How many lines match, counted in one pass: 99999 and 199999.
    await expect
      .poll(() => page.locator("#full-status").textContent(), SEARCHED)
      .toBe("Line 99,999 · 2 matching lines");
    expect(await page.locator("#full-rows .row.hit mark").textContent()).toBe("99999");
    await page.locator("#full-next").click();
    await expect.poll(() => match(page), SEARCHED).toBe("Line 199,999");
    expect(await page.locator("#full-rows .row.hit .tx").textContent()).toBe("199999");
    await page.locator("#full-next").click();
    await expect.poll(() => match(page), SEARCHED).toBe("Line 99,999 (from the top)");
    await page.locator("#full-prev").click();
    await expect.poll(() => match(page), SEARCHED).toBe("Line 199,999 (from the end)");
    await page.locator("#full-prev").click();
    await expect.poll(() => match(page), SEARCHED).toBe("Line 99,999");
    await page.locator("#full-query").fill("no such text");
    await page.locator("#full-query").press("Enter");
    await expect.poll(() => match(page), SEARCHED).toBe('No line contains "no such text".');
  });

  it("on a phone the line box stays beside its Go button", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const phone = await context.newPage();
    await phone.goto(created.viewUrl);
    await phone.waitForFunction(() => document.body.dataset.status === "done");
    await openFullOutput(phone);
    const box = await phone.locator("#full-line").boundingBox();
    const go = await phone.locator("#full-go").boundingBox();
    expect(box && go && Math.abs(box.y - go.y) < 4 && go.x > box.x).toBe(true);
    expect((await rows(phone)).at(-1)).toEqual([200_000, "200000"]);
    await context.close();
  });

  it("a 1-byte range from the page is a 206 of one byte; past the end a 416", async () => {
    const url = `/v1/invocations/${created.id}/spill?token=${created.subscribeToken}`;
    const answers = await page.evaluate(async (u) => {
      const one = await fetch(u, { headers: { Range: "bytes=0-0" } });
      const past = await fetch(u, { headers: { Range: "bytes=1288895-" } });
      return [
        [one.status, one.headers.get("content-range"), await one.text()],
        [past.status, past.headers.get("content-range")],
      ];
    }, url);
    expect(answers).toEqual([
      [206, "bytes 0-0/1288895", "1"],
      [416, "bytes */1288895"],
    ]);
  });
});

describe("viewer: a full output the sandbox no longer has", () => {
  it("the pane says so in plain words", async () => {
    const created = await settledBash("seq 1 5000");
    // No command can remove it (jails see the spill folder read-only): the host's folder.
    const poll = await api.result(created.id);
    const spillPath = poll.status === "settled" ? (poll.result.truncation.spillPath ?? "") : "";
    rmSync(path.join(`${inject("sandboxRoot")}.spill`, path.basename(spillPath)));
    const page = await openViewer(created);
    await openFullOutput(page, "unavailable");
    expect(await page.locator("#full-info").textContent()).toMatch(
      /^The full output is not available: the sandbox "default" no longer has \/toolwire\/spill\/.+\.log \(removed from the sandbox\)/,
    );
    expect(await page.locator("#full-rows .row").count()).toBe(0);
    await page.context().close();
  });

  it("a call whose output fit has no full-output button", async () => {
    const created = await settledBash("echo fits");
    const page = await openViewer(created);
    expect(await page.locator("#banner-row").isHidden()).toBe(true);
    expect(await page.locator("#full-open").isHidden()).toBe(true);
    await page.context().close();
  });
});
