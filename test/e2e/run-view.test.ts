// The run page in headless Chromium against the real Worker, Invocation DOs, Run DO and
// sandbox host: 20 bash calls of one run, 5 running at once, one failing, one
// cancelled; the page converges on every state and an entry expands to live output.
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

const runId = `run-e2e-${Date.now().toString(36)}`;
const bash = (command: string) => api.createInvocation({ tool: "bash", args: { command }, runId });

/** The page's entries: [toolCallId, status, lines text]. */
const entries = (page: Page) =>
  page.locator("#calls .call").evaluateAll((nodes) =>
    nodes.map((n) => {
      const node = n as HTMLElement;
      return [node.dataset.id, node.dataset.status, node.querySelector(".lines")?.textContent];
    }),
  );

const dataset = (page: Page, key: string) => page.evaluate((k) => document.body.dataset[k], key);

describe("run page", () => {
  it("lists 20 calls of one run live and converges on every state", async () => {
    const quick: CreatedInvocation[] = [];
    quick.push(await bash("echo call 1"));
    const runViewUrl = quick[0]?.runViewUrl ?? "";
    expect(runViewUrl).toContain(`/run/${runId}?token=`);

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    expect((await page.goto(runViewUrl))?.status()).toBe(200);
    await page.waitForFunction(() => document.body.dataset.connection === "live", null, {
      timeout: 30_000,
    });
    expect(await page.locator("#run-id").textContent()).toBe(runId);

    // Five at once: four that tick for a few seconds, and one that waits to be cancelled.
    const long: CreatedInvocation[] = [];
    for (let k = 0; k < 4; k++) {
      long.push(await bash(`for i in $(seq 1 30); do echo "tick ${k} $i"; sleep 0.2; done`));
    }
    const sleeper = await bash("echo waiting; sleep 60");
    await expect.poll(() => dataset(page, "running"), { timeout: 30_000 }).toBe("5");
    expect(await page.locator(`.call[data-id="${sleeper.id}"] .summary`).textContent()).toBe(
      "echo waiting; sleep 60",
    );

    // One entry opens on its own live output while it runs.
    const first = long[0];
    if (!first) throw new Error("no long call");
    await page.locator(`.call[data-id="${first.id}"] .call-row`).click();
    await page.waitForFunction(
      (id) =>
        document
          .querySelector(`.call[data-id="${id}"] .output`)
          ?.textContent?.includes("tick 0 3") ?? false,
      first.id,
      { timeout: 30_000 },
    );
    expect(await page.locator(`.call[data-id="${first.id}"]`).getAttribute("data-status")).toBe(
      "running",
    );

    const failing = await bash("echo bad; exit 3");
    for (let n = 2; quick.length < 14; n++) quick.push(await bash(`echo call ${n}`));
    await api.cancel(sleeper.id);
    await expect.poll(() => dataset(page, "calls"), { timeout: 30_000 }).toBe("20");
    await expect.poll(() => dataset(page, "running"), { timeout: 60_000 }).toBe("0");

    const shown = new Map(
      (await entries(page)).map(([id, status, lines]) => [id, [status, lines]]),
    );
    expect(shown.size).toBe(20);
    quick.forEach((q, k) => {
      // "call N\n"
      const bytes = `call ${k + 1}\n`.length;
      expect(shown.get(q.id)).toEqual(["done", `1 line · ${bytes} bytes`]);
    });
    for (const l of long) expect(shown.get(l.id)?.[0]).toBe("done");
    for (const l of long) expect(shown.get(l.id)?.[1]).toMatch(/^30 lines · /);
    expect(shown.get(failing.id)).toEqual(["error", "1 line · 4 bytes"]);
    expect(shown.get(sleeper.id)?.[0]).toBe("cancelled");
    expect(await page.locator("#counts").textContent()).toBe(
      "20 calls · 18 done · 1 failed · 1 cancelled",
    );
    // The opened entry followed its call to the end.
    await page.waitForFunction(
      (id) =>
        document
          .querySelector(`.call[data-id="${id}"] .output`)
          ?.textContent?.includes("tick 0 30") ?? false,
      first.id,
      { timeout: 30_000 },
    );
    // Elapsed times stopped with their calls.
    const elapsed = await page.locator(`.call[data-id="${failing.id}"] .elapsed`).textContent();
    await page.waitForTimeout(300);
    expect(await page.locator(`.call[data-id="${failing.id}"] .elapsed`).textContent()).toBe(
      elapsed,
    );
    await page.screenshot({ path: "test-output/run-view.png" });
    await context.close();
  });

  it("a token for another run is refused in words", async () => {
    const other = await api.createInvocation({
      tool: "bash",
      args: { command: "echo x" },
      runId: `${runId}-other`,
    });
    const token = new URL(other.runViewUrl ?? "").searchParams.get("token") ?? "";
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await page.goto(`${inject("apiUrl")}/run/${runId}?token=${token}`);
    expect(res?.status()).toBe(403);
    expect(await page.textContent("body")).toContain("the token was not issued for run");
    await context.close();
  });
});
