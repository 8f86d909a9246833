// A preview URL end to end (decision 182): `python3 -m http.server` started by bash in the
// background in a created sandbox, shared with `toolwire sandbox expose`, fetched through
// both URL forms of the real Worker (wrangler dev), and the page, whose script is the
// absolute `/app.js`, opened in Chromium through the host form, where the script runs.
// The screenshot is docs/preview.png.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { PortExposure } from "../../src/protocol/preview.ts";
import { launchChromium } from "../support/e2e/chromium.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";

const api = inject("apiUrl");
const auth = { authorization: `Bearer ${inject("apiToken")}`, "content-type": "application/json" };
const SHOTS = path.resolve(import.meta.dirname, "../../test-output");
let sandbox = "";

afterAll(async () => {
  if (sandbox) await fetch(`${api}/v1/sandboxes/${sandbox}`, { method: "DELETE", headers: auth });
});

async function untilServing(url: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(url).catch(() => null);
    if (res?.status === 200) return res.text();
    await res?.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

describe("a preview URL", () => {
  it("serves a page with an absolute /app.js to Chromium through the host form", async () => {
    const page = `<!doctype html><title>preview</title>
<style>body{font:20px system-ui;margin:2rem;background:#0f1115;color:#e6e6e6}</style>
<h1>Served from a Toolwire sandbox</h1><p id="out">the script has not run</p>
<script src="/app.js"></script>
`;
    const script = `document.getElementById("out").textContent = "app.js ran at " + location.host.split(".").slice(1).join(".") + location.pathname;\n`;
    const created = await fetch(`${api}/v1/sandboxes`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ files: { "site/index.html": page, "site/app.js": script } }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    sandbox = ((await created.json()) as { id: string }).id;
    const started = await fetch(`${api}/v1/invocations`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        tool: "bash",
        args: {
          command: "cd site && python3 -m http.server 8000 --bind 127.0.0.1",
          background: true,
        },
        sandbox,
        toolCallId: `preview-${Date.now()}`,
      }),
    });
    expect(started.status).toBe(201);

    const cli = await toolwire(["sandbox", "expose", sandbox, "8000", "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    const exposed = JSON.parse(cli.stdout) as PortExposure;
    const port = new URL(api).port;
    expect(exposed.url).toMatch(new RegExp(`^http://[a-z2-7]{58}\\.localhost:${port}/$`));

    expect(await untilServing(exposed.pathUrl)).toBe(page);
    // The path form serves the page, but its /app.js would be the Worker's: the host form is for pages.
    expect(await untilServing(`${exposed.pathUrl}app.js`)).toBe(script);

    const browser = await launchChromium();
    try {
      const tab = await browser.newPage({ viewport: { width: 900, height: 360 } });
      await tab.goto(exposed.url);
      await tab.waitForFunction(() =>
        document.getElementById("out")?.textContent?.startsWith("app.js ran"),
      );
      expect(await tab.textContent("#out")).toBe(`app.js ran at localhost:${port}/`);
      mkdirSync(SHOTS, { recursive: true });
      await tab.screenshot({ path: path.join(SHOTS, "preview.png") });

      // Revoked, the same URL is a page that says so, and JSON for a client.
      const revoked = await toolwire(["sandbox", "unexpose", sandbox, "8000"]);
      expect(revoked.code, revoked.stderr).toBe(0);
      const again = await tab.goto(`${exposed.url}?after=revoke`);
      expect(again?.status()).toBe(410);
      expect(await tab.textContent("h1")).toBe("This preview link has ended");
      const gone = await fetch(exposed.pathUrl);
      expect(gone.status).toBe(410);
      expect(await gone.json()).toMatchObject({ error: { code: "gone" } });
    } finally {
      await browser.close();
    }
  }, 120_000);
});
