// The viewer page in headless Chromium against the real Worker: it cannot be framed by
// another origin, and it stops, saying so, when the server closes its socket because
// the link's token expired.
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer, VIEWER_PAGE } from "../../scripts/build-client.ts";
import { ToolwireClient } from "../../src/client/index.ts";
import { mintSubscribeToken } from "../../src/worker/subscribe-token.ts";
import { launchChromium } from "../support/e2e/chromium.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(VIEWER_PAGE)) await buildViewer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe("viewer page guards", () => {
  it("refuses to render inside a frame of another origin", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "framed" } });
    const context = await browser.newContext();
    const page = await context.newPage();
    // The viewer loads on its own: the control case for the frame below.
    const direct = await page.goto(created.viewUrl);
    expect(direct?.status()).toBe(200);
    await page.waitForSelector("#output", { state: "attached" });
    // Another origin (a page served from another loopback port) frames it: Chromium must refuse.
    const framer = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><iframe id="f" src="${created.viewUrl}"></iframe>`);
    });
    await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
    const { port } = framer.address() as AddressInfo;
    try {
      await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: "load" });
    } finally {
      framer.close();
    }
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    await frame?.waitForLoadState("load");
    // A refused frame shows Chromium's error page instead of the viewer.
    expect(frame?.url()).toMatch(/^chrome-error:/);
    expect(await frame?.$("#output")).toBeNull();
    await context.close();
  });

  it("stops and says the link expired when the server closes the socket at the first event after expiry", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "expiring" } });
    const ttlSeconds = 4;
    const token = await mintSubscribeToken(
      inject("subscribeSecret"),
      created.id,
      Date.now(),
      ttlSeconds,
    );
    const expiresAtMs = Number(token.split(".")[1]) * 1000;
    const out = api.producer(created.id);
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${inject("apiUrl")}/view/${created.id}?token=${token}`);
    expect(response?.status()).toBe(200);
    await out.send([{ write: "before expiry\n" }]);
    await page.waitForFunction(
      () => document.getElementById("output")?.textContent?.includes("before expiry") ?? false,
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.locator("body").getAttribute("data-connection")).toBe("live");
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, expiresAtMs - Date.now() + 300)),
    );
    await out.send([{ write: "after expiry\n" }]);
    await page.waitForFunction(() => document.body.dataset.connection === "failed", undefined, {
      timeout: 30_000,
    });
    const problem = await page.locator("#problem").textContent();
    expect(problem).toContain("This link has expired");
    expect(problem).toContain(`toolwire link ${created.toolCallId}`);
    const text = await page.locator("#output").textContent();
    expect(text).toContain("before expiry");
    expect(text).not.toContain("after expiry");
    await out.send([], { isError: false });
    await context.close();
  });
});
