// A call that waits its turn says so on every face (issue 30, decision 248). A created
// sandbox that runs one command at once holds one; the next call is accepted and waits:
// HTTP's details say how many are ahead, the viewer's badge says "queued" with the same
// words, `toolwire watch` says when it starts waiting and when its turn comes, and an
// MCP background call's first answer says it is queued. Then all of them run and settle.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer } from "../../scripts/build-client.ts";
import { ToolwireClient } from "../../src/client/index.ts";
import { queuedWords } from "../../src/protocol/index.ts";
import { launchChromium, SIZES } from "../support/e2e/chromium.ts";
import { connectV2, type McpTestClient } from "../support/e2e/mcp/clients.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
let browser: Browser;
let mcp: McpTestClient | null = null;
let sandboxId = "";

async function operator(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${inject("apiUrl")}${route}`, {
    method,
    headers: { Authorization: `Bearer ${inject("apiToken")}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  await buildViewer();
  browser = await launchChromium();
  const res = await operator("POST", "/v1/sandboxes", { limits: { maxExecs: 1 } });
  expect(res.status).toBe(201);
  sandboxId = ((await res.json()) as { id: string }).id;
});

afterAll(async () => {
  await Promise.all([browser?.close(), mcp?.close()]);
  if (sandboxId) await operator("DELETE", `/v1/sandboxes/${sandboxId}`);
});

const queuedOf = async (id: string) =>
  ((await api.get(id)).state.details as Record<string, unknown>).queued;

describe("a queued call on every face", () => {
  it("HTTP, the viewer, the CLI and MCP say it waits and how many are ahead; then it runs", async () => {
    const gate = "go";
    const holder = await api.createInvocation({
      tool: "bash",
      args: { command: `until [ -e ${gate} ]; do sleep 0.05; done; echo first` },
      sandbox: sandboxId,
    });
    await expect
      .poll(async () => (await api.get(holder.id)).state.details, { timeout: 20_000 })
      .not.toHaveProperty("queued");
    const waiting = await api.createInvocation({
      tool: "bash",
      args: { command: "echo second" },
      sandbox: sandboxId,
    });
    await expect.poll(() => queuedOf(waiting.id), { timeout: 20_000 }).toBe(0);

    // The viewer: a badge of its own and the words every face uses.
    const page = await browser.newPage({ viewport: SIZES[0].viewport });
    await page.goto(waiting.viewUrl);
    await page.waitForFunction(() => document.body.dataset.status === "queued", undefined, {
      timeout: 20_000,
    });
    expect(await page.locator("#status").textContent()).toBe("queued");
    expect(await page.locator("#ending").textContent()).toBe(queuedWords(0));

    // The CLI follows it: it says when the call waits and when its turn comes.
    let cliSaid = "";
    const watching = toolwire(["watch", waiting.id], {}, undefined, (text) => {
      cliSaid = text;
    });
    await expect.poll(() => cliSaid, { timeout: 20_000 }).toContain(queuedWords(0));

    // MCP, in the same sandbox: a background call answers at once, queued behind both.
    mcp = await connectV2(`${inject("apiUrl")}/mcp/sandboxes/${sandboxId}`, inject("apiToken"));
    const third = await mcp.call("bash", { command: "echo third", background: true });
    const told = third.content[0]?.type === "text" ? (third.content[0].text ?? "") : "";
    expect(told).toContain(`[Queued in the background as `);
    expect(told).toContain("1 command ahead");

    await api.createInvocation({
      tool: "write",
      args: { path: gate, content: "" },
      sandbox: sandboxId,
    });
    await page.waitForFunction(() => document.body.dataset.status === "done", undefined, {
      timeout: 30_000,
    });
    expect(await page.locator("#output").textContent()).toContain("second");
    const cli = await watching;
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe("second\n");
    expect(cli.stderr).toContain(`[toolwire] ${queuedWords(0)} in its sandbox\n`);
    expect(cli.stderr).toContain("[toolwire] its turn came: running\n");
    for (const id of [holder.id, waiting.id]) {
      const poll = await api.result(id, { wait: 20 });
      expect(poll.status).toBe("settled");
      if (poll.status === "settled") {
        expect(poll.result.isError).toBe(false);
        expect(poll.result.details).not.toHaveProperty("queued");
      }
    }
    await page.close();
  });
});
