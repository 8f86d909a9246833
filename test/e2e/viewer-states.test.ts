// The viewer and run page in headless Chromium at a desktop and a phone size, driven by
// the keyboard alone: the badge and timer tell the call's own state and stop when the
// page loses it; a phone opens at the end of the output with status and exit code on
// screen; the full-output pane is a dialog that takes, keeps and returns focus; the run
// page's rows keep elapsed time and counts that follow a running call live.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { mintSubscribeToken } from "../../src/worker/subscribe-token.ts";
import { launchChromium, SIZES } from "../support/e2e/chromium.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const SHOTS = path.resolve(import.meta.dirname, "../../test-output/viewer-states");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function newPage(size: (typeof SIZES)[number]): Promise<Page> {
  const context = await browser.newContext({ viewport: size.viewport });
  return context.newPage();
}

const elapsed = (page: Page) => page.locator("#elapsed").textContent();

/** Whether the element is inside the viewport, entirely. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const view = page.viewportSize();
  if (!box || !view) return false;
  return (
    box.y >= 0 &&
    box.x >= 0 &&
    box.y + box.height <= view.height &&
    box.x + box.width <= view.width + 1
  );
}

/** Presses Tab until `selector` has focus (at most 40 times); false if it never does. */
async function tabTo(page: Page, selector: string): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector))
      return true;
  }
  return false;
}

const focused = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "");

describe.each(SIZES)("at $name size", (size) => {
  it("a settled, failing call opens at the end of its output with its status and exit code on screen", async () => {
    const created = await api.createInvocation({
      tool: "bash",
      args: { command: "seq 1 3000; echo last-line; exit 3" },
    });
    await api.result(created.id, { wait: 30 });
    const page = await newPage(size);
    await page.goto(created.viewUrl);
    await page.waitForFunction(() => document.body.dataset.status === "error", undefined, {
      timeout: 30_000,
    });
    await page.waitForFunction(() =>
      document.getElementById("output")?.textContent?.includes("last-line"),
    );
    const pane = page.locator("#output");
    const fromEnd = await pane.evaluate((p) => p.scrollHeight - p.scrollTop - p.clientHeight);
    expect(fromEnd).toBeLessThan(40);
    expect(
      await page.evaluate(() => document.documentElement.scrollHeight <= innerHeight + 1),
    ).toBe(true);
    expect(await onScreen(page, "#status")).toBe(true);
    expect(await onScreen(page, "#elapsed")).toBe(true);
    expect(await page.locator("#details").textContent()).toMatch(/exitCode\s*:?\s*3/);
    const details = await page.locator("#details").boundingBox();
    expect(details && details.y < (page.viewportSize()?.height ?? 0)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, `settled-error-${size.name}.png`) });
    await page.context().close();
  });

  it("the badge and timer stop when the link expires, instead of running on", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "expiring" } });
    const token = await mintSubscribeToken(inject("subscribeSecret"), created.id, Date.now(), 4);
    const out = api.producer(created.id);
    const page = await newPage(size);
    await page.goto(`${inject("apiUrl")}/view/${created.id}?token=${token}`);
    await out.send([{ write: "before expiry\n" }]);
    await page.waitForFunction(() => document.body.dataset.status === "running", undefined, {
      timeout: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 4500));
    // The server closes the socket at the first event after expiry.
    await out.send([{ write: "after expiry\n" }]);
    await page.waitForFunction(() => document.body.dataset.status === "expired", undefined, {
      timeout: 30_000,
    });
    expect(await page.locator("#status").textContent()).toBe("expired");
    const first = await elapsed(page);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await elapsed(page)).toBe(first);
    await page.screenshot({ path: path.join(SHOTS, `expired-${size.name}.png`) });
    await out.send([], { isError: false });
    await page.context().close();
  }, 60_000);

  it("the full-output pane takes focus, keeps it inside, closes on Escape and gives it back, by keyboard alone", async () => {
    const created = await api.createInvocation({ tool: "bash", args: { command: "seq 1 5000" } });
    await api.result(created.id, { wait: 30 });
    const page = await newPage(size);
    await page.goto(created.viewUrl);
    await page.waitForFunction(() => document.body.dataset.status === "done", undefined, {
      timeout: 30_000,
    });
    expect(await tabTo(page, "#full-open")).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => !document.getElementById("full")?.hidden);
    expect(await focused(page)).toBe("full-query");
    // Every Tab, forwards and back, stays inside the dialog.
    for (const key of [...Array(12).fill("Tab"), ...Array(12).fill("Shift+Tab")]) {
      await page.keyboard.press(key);
      expect(
        await page.evaluate(() =>
          document.getElementById("full")?.contains(document.activeElement),
        ),
      ).toBe(true);
    }
    // Buttons are named for what they do, not by their arrows.
    for (const name of [
      "Previous match",
      "Next match",
      "Go to line",
      "Close the full output (Escape)",
    ])
      expect(await page.getByRole("button", { name, exact: true }).count()).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, `full-open-${size.name}.png`) });
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => document.getElementById("full")?.hidden === true);
    expect(await focused(page)).toBe("full-open");
    await page.context().close();
  });

  it("the run page keeps elapsed time and counts, which follow a running call live", async () => {
    const runId = `states-${size.name}-${Date.now().toString(36)}`;
    const created = await api.createInvocation({
      tool: "bash",
      args: { command: "for i in $(seq 1 9); do echo line $i; sleep 0.2; done; sleep 4" },
      runId,
    });
    const page = await newPage(size);
    await page.goto(created.runViewUrl ?? "");
    const row = page.locator(`li.call[data-id="${created.id}"]`);
    await page.waitForFunction(
      (id) =>
        document
          .querySelector(`li.call[data-id="${id}"] .lines`)
          ?.textContent?.startsWith("9 lines"),
      created.id,
      { timeout: 30_000 },
    );
    // Still running: the count came from the call's own stream, not from its end.
    expect(await row.getAttribute("data-status")).toBe("running");
    expect(await row.locator(".elapsed").isVisible()).toBe(true);
    expect(await row.locator(".lines").isVisible()).toBe(true);
    expect(await row.locator(".elapsed").textContent()).toMatch(/\d/);
    await page.screenshot({ path: path.join(SHOTS, `run-running-${size.name}.png`) });
    await page.context().close();
  }, 60_000);
});
