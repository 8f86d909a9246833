// The viewer page in a real headless Chromium, against the real Worker, Durable Object
// and sandbox host started by global-setup.ts.
import { existsSync, mkdirSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer, VIEWER_PAGE } from "../../scripts/build-client.ts";
import { type CreatedInvocation, ToolwireClient } from "../../src/client/index.ts";
import type { JsonObject } from "../../src/core/chord/types.ts";
import { mintSubscribeToken } from "../../src/worker/subscribe-token.ts";
import { launchChromium } from "../support/e2e/chromium.ts";

const ONE_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  if (!existsSync(VIEWER_PAGE)) await buildViewer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function open(created: CreatedInvocation): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1200, height: 720 } });
  const page = await context.newPage();
  const response = await page.goto(created.viewUrl);
  expect(response?.status()).toBe(200);
  return page;
}

async function start(tool: string, args: JsonObject): Promise<CreatedInvocation> {
  return api.createInvocation({ tool, args });
}

/** The output pane's text, one line per line element. */
const output = (page: Page) =>
  page
    .locator("#output")
    .evaluate((pane) => [...pane.children].map((line) => line.textContent).join("\n"));
const status = (page: Page) => page.locator("body").getAttribute("data-status");

/** Waits until the page's output contains `text` (the page updates on its own). */
async function waitForOutput(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (t) => document.getElementById("output")?.textContent?.includes(t) ?? false,
    text,
    { timeout: 30_000 },
  );
}

/** The pane's scrollTop once two reads 150 ms apart agree (a smooth scroll has ended). */
async function restingScrollTop(pane: ReturnType<Page["locator"]>): Promise<number> {
  let previous = await pane.evaluate((p) => p.scrollTop);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const now = await pane.evaluate((p) => p.scrollTop);
    if (now === previous) return now;
    previous = now;
  }
}

async function waitForStatus(page: Page, value: string): Promise<void> {
  await page.waitForFunction((v) => document.body.dataset.status === v, value, { timeout: 30_000 });
}

describe("viewer page", () => {
  it("shows a running bash invocation updating live, then its final state", async () => {
    const created = await start("bash", {
      command:
        'for i in $(seq 1 70); do printf "\\033[32mtick\\033[0m %s\\n" "$i"; sleep 0.1; done; echo finished',
    });
    const page = await open(created);
    await waitForOutput(page, "tick 3");
    expect(await status(page)).toBe("running");
    expect(await page.locator("#tool").textContent()).toBe("bash");
    expect(await page.locator("#connection").textContent()).toBe("live");
    // Still running, and more output has arrived without a reload.
    await waitForOutput(page, "tick 10");
    expect(await status(page)).toBe("running");
    // ANSI colour became a class on a span, not visible escape codes.
    expect(await page.locator("#output .fg2").first().textContent()).toBe("tick");
    expect(await output(page)).not.toContain("\u001b");

    // The pane follows the tail until the reader scrolls up; the button resumes it.
    const pane = page.locator("#output");
    const gap = () => pane.evaluate((p) => p.scrollHeight - p.scrollTop - p.clientHeight);
    await waitForOutput(page, "tick 50");
    expect(await gap()).toBeLessThanOrEqual(8);
    expect(await page.locator("#follow").isHidden()).toBe(true);
    await pane.hover();
    await page.mouse.wheel(0, -400);
    await expect.poll(() => page.locator("#follow").isVisible()).toBe(true);
    // A wheel turn scrolls smoothly: read the position once the pane has come to rest, or
    // the test would see the animation finish, not the viewer move the reader.
    const top = await restingScrollTop(pane);
    await waitForOutput(page, "tick 60");
    expect(await pane.evaluate((p) => p.scrollTop)).toBe(top);
    await page.locator("#follow").click();
    expect(await gap()).toBeLessThanOrEqual(8);
    expect(await page.locator("#follow").isHidden()).toBe(true);

    await waitForStatus(page, "done");
    const text = await output(page);
    expect(text).toContain("tick 70\nfinished");
    const poll = await api.result(created.id, { wait: 10 });
    expect(poll.status).toBe("settled");
    if (poll.status === "settled") {
      const first = poll.result.content[0];
      expect(first?.type === "text" && first.text.includes("finished")).toBe(true);
    }
    expect(await page.locator("#status").textContent()).toBe("done");
    expect(await gap()).toBeLessThanOrEqual(8);
    // The clock stopped at the end.
    const elapsed = await page.locator("#elapsed").textContent();
    await page.waitForTimeout(300);
    expect(await page.locator("#elapsed").textContent()).toBe(elapsed);
    await context.close();
  });

  it("shows the truncation banner in plain words once the output is cut", async () => {
    const created = await start("bash", { command: "seq 1 5000" });
    const page = await open(created);
    await waitForStatus(page, "done");
    const banner = page.locator("#banner");
    await expect.poll(() => banner.isVisible()).toBe(true);
    expect(await banner.textContent()).toMatch(
      /^Showing the last 2,000 of 5,000 lines \(2,000-line limit\)\. Full output: \/toolwire\/spill\/\S+\.log$/,
    );
    expect(await output(page)).toContain("\n5000");
    expect(await output(page)).not.toContain("\n2999\n");
    // Following the tail survived the banner appearing above the pane.
    expect(await page.locator("#follow").isHidden()).toBe(true);
    mkdirSync("test-output", { recursive: true });
    await page.screenshot({ path: "test-output/viewer.png" });
    await context.close();
  });

  it("shows error and cancelled endings", async () => {
    const failing = await start("bash", { command: "echo oops; exit 3" });
    const page = await open(failing);
    await waitForStatus(page, "error");
    expect(await output(page)).toContain("oops");
    await context.close();

    const slow = await start("bash", { command: "echo waiting; sleep 30" });
    const page2 = await open(slow);
    await waitForOutput(page2, "waiting");
    await api.cancel(slow.id);
    await waitForStatus(page2, "cancelled");
    expect(await page2.locator("#status").textContent()).toBe("cancelled");
    await context.close();
  });

  it("recovers after the server closes the socket, with a reconnecting indicator meanwhile", async () => {
    const created = await start("bash", {
      command: 'for i in $(seq 1 30); do echo "n $i"; sleep 0.1; done',
    });
    context = await browser.newContext();
    const page = await context.newPage();
    let connections = 0;
    let releaseSecond: () => void = () => {};
    const secondMayConnect = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let closeFirst: () => Promise<void> = async () => {};
    // Every page socket goes through this proxy to the real Worker; the first one is
    // then closed from the server's side, as a Worker restart or a deploy would.
    await page.routeWebSocket(/\/socket\?token=/, async (ws) => {
      connections++;
      if (connections === 1) closeFirst = () => ws.close({ code: 1012, reason: "restarting" });
      else await secondMayConnect;
      ws.connectToServer();
    });
    await page.goto(created.viewUrl);
    await waitForOutput(page, "n 3");
    await closeFirst();
    await page.waitForFunction(() => document.body.dataset.connection === "reconnecting");
    expect(await page.locator("#connection").textContent()).toMatch(/^reconnecting…/);
    releaseSecond();
    await waitForStatus(page, "done");
    expect(connections).toBe(2);
    const text = await output(page);
    const lines = text.split("\n");
    for (let i = 1; i <= 30; i++) expect(lines).toContain(`n ${i}`);
    expect(await page.locator("#connection").textContent()).toBe("");
    await context.close();
  });

  it("says how to get a new link when a reconnect is refused because the link expired", async () => {
    const created = await start("bash", { command: "echo started; sleep 60" });
    // A link that expires in a few seconds, signed like the Worker's own.
    const ttlSeconds = 6;
    const token = await mintSubscribeToken(
      inject("subscribeSecret"),
      created.id,
      Date.now(),
      ttlSeconds,
    );
    const expiresAtMs = Number(token.split(".")[1]) * 1000;
    context = await browser.newContext();
    const page = await context.newPage();
    let closeFirst: () => Promise<void> = async () => {};
    await page.routeWebSocket(/\/socket\?token=/, (ws) => {
      closeFirst = () => ws.close({ code: 1012, reason: "restarting" });
      ws.connectToServer();
    });
    const response = await page.goto(`${inject("apiUrl")}/view/${created.id}?token=${token}`);
    expect(response?.status()).toBe(200);
    await waitForOutput(page, "started");
    // This socket gets no event after the expiry (the command sleeps), so it stays open
    // until the server drops it (docs/decisions/112); the reconnect is then refused.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, expiresAtMs - Date.now() + 500)),
    );
    await closeFirst();
    await page.waitForFunction(() => document.body.dataset.connection === "failed", undefined, {
      timeout: 30_000,
    });
    const problem = await page.locator("#problem").textContent();
    expect(problem).toContain("This link has expired");
    expect(problem).toContain(
      `Ask for a new one with toolwire link ${created.toolCallId}, or from your agent.`,
    );
    expect(await output(page)).toContain("started");
    await context.close();
    await api.cancel(created.id);
  });

  it("measures elapsed time on the server's clock when the browser's clock is an hour fast", async () => {
    const created = await start("bash", { command: "echo started; sleep 60" });
    context = await browser.newContext();
    const page = await context.newPage();
    // Cloudflare's edge dates every answer; `wrangler dev` does not, so add what it would.
    await page.route(/\/v1\/invocations\/[^/?]+\?token=/, async (route) => {
      const response = await route.fetch();
      await route.fulfill({
        response,
        headers: { ...response.headers(), date: new Date().toUTCString() },
      });
    });
    await page.clock.setFixedTime(Date.now() + 3_600_000);
    await page.goto(created.viewUrl);
    await waitForOutput(page, "started");
    // Without the offset the page would show about 1:00:00.
    await expect.poll(() => page.locator("#elapsed").textContent()).toMatch(/^\d+\.\d s$/);
    // The page keeps polling; let a request still in the route handler end quietly.
    await page.unrouteAll({ behavior: "ignoreErrors" });
    await context.close();
    await api.cancel(created.id);
  });

  it("asks the Durable Object for a fresh base after a frame it cannot decode", async () => {
    // The command waits after "r 3" until the test has injected its frame, so the resync is
    // always followed by more output (decision 070: a socket whose last frame was a base
    // gets its answer at the next publication). Under load a timed loop could end first,
    // and the page would then rightly open a second connection to get its base.
    const gate = `.viewer-resync-${crypto.randomUUID()}`;
    const created = await start("bash", {
      command:
        'for i in 1 2 3; do echo "r $i"; done; ' +
        `for t in $(seq 1 600); do [ -e ${gate} ] && break; sleep 0.05; done; rm -f ${gate}; ` +
        'for i in $(seq 4 20); do echo "r $i"; sleep 0.05; done',
    });
    context = await browser.newContext();
    const page = await context.newPage();
    const fromPage: string[] = [];
    let inject: (frame: string) => void = () => {};
    let connections = 0;
    await page.routeWebSocket(/\/socket\?token=/, (ws) => {
      connections++;
      const server = ws.connectToServer();
      server.onMessage((frame) => ws.send(frame));
      ws.onMessage((frame) => {
        fromPage.push(String(frame));
        server.send(frame);
      });
      inject = (frame) => ws.send(frame);
    });
    await page.goto(created.viewUrl);
    await waitForOutput(page, "r 3");
    // An op on an interned path id the stream never defined.
    inject(
      JSON.stringify({
        type: "tool_update",
        runId: "x",
        turnId: "x",
        toolCallId: "x",
        ops: [["a", 999, "junk"]],
      }),
    );
    await expect.poll(() => fromPage).toContain('{"type":"resync"}');
    await start("bash", { command: `touch ${gate}` });
    await waitForStatus(page, "done");
    const lines = (await output(page)).split("\n");
    for (let i = 1; i <= 20; i++) expect(lines).toContain(`r ${i}`);
    expect(lines.join("\n")).not.toContain("junk");
    expect(connections).toBe(1);
    await context.close();
  });

  it("never runs scripts from hostile output", async () => {
    const hostile = [
      "<script>window.__pwned = 'script'</script>",
      "<img src=x onerror=\"window.__pwned = 'img'; alert(1)\">",
      "<svg onload=\"window.__pwned = 'svg'\"></svg>",
      "\u001b]8;;javascript:window.__pwned='link'\u0007click\u001b]8;;\u0007",
    ];
    const created = await start("bash", {
      command: `cat <<'EOF'\n${hostile.join("\n")}\nEOF`,
    });
    const page = await open(created);
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs++;
      void d.dismiss();
    });
    await waitForStatus(page, "done");
    const text = await output(page);
    expect(text).toContain(hostile[0]);
    expect(text).toContain(hostile[1]);
    expect(text).toContain(hostile[2]);
    expect(await page.locator("#output script, #output img, #output svg, #output a").count()).toBe(
      0,
    );
    expect(await page.evaluate(() => (window as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toBe(0);
    await context.close();
  });

  it("shows details as a tree and usage; the Worker refuses the page to a bad token", async () => {
    const created = await start("report", {
      items: ["alpha", "beta"],
      usage: { input: 1200, output: 300, cost: 0.0125 },
      imageBase64: ONE_PIXEL_PNG,
      addTools: ["deploy"],
      terminate: true,
    });
    const page = await open(created);
    await waitForStatus(page, "done");
    await expect.poll(() => page.locator("#details").textContent()).toContain("alpha");
    const usage = await page.locator("#usage").textContent();
    expect(usage).toContain("input");
    expect(usage).toContain("2,400");
    expect(await page.locator("#images img").getAttribute("src")).toBe(
      `data:image/png;base64,${ONE_PIXEL_PNG}`,
    );
    expect(await page.title()).toBe("report · done — Toolwire");
    expect(await page.locator("#effects-list li").allTextContents()).toEqual([
      "Adds tools: deploy",
      "Asks the agent to stop after this call",
    ]);
    await context.close();

    context = await browser.newContext();
    const bad = await context.newPage();
    const response = await bad.goto(created.viewUrl.replace(/token=[^&]+/, "token=v1.0.bad.sig"));
    expect(response?.status()).toBe(401);
    await context.close();
  });
});
