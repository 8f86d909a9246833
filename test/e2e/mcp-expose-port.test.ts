// expose_port through MCP (issue 25): a real MCP SDK client on /mcp/sandbox/new starts a
// server in its session's sandbox, shares its port with expose_port and the page is
// fetched through the URL it answered, with no API token; on /mcp (the shared default
// workspace) the tool refuses, and a port below 1024 is refused by its schema.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectV1, type McpTestClient, type ToolResult } from "../support/e2e/mcp/clients.ts";

const api = inject("apiUrl");
const token = inject("apiToken");

function text(result: ToolResult): string {
  return result.content.map((c) => c.text ?? "").join("");
}

/** The page at `url` once it answers 200 (the server may still be binding); its last answer otherwise. */
async function served(url: string): Promise<Response> {
  let res = await fetch(url);
  for (let i = 0; i < 50 && res.status !== 200; i++) {
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    res = await fetch(url);
  }
  return res;
}

describe("expose_port over MCP", () => {
  let own: McpTestClient;
  let shared: McpTestClient;
  beforeAll(async () => {
    [own, shared] = await Promise.all([
      connectV1(`${api}/mcp/sandbox/new`, token),
      connectV1(`${api}/mcp`, token),
    ]);
  });
  afterAll(async () => {
    await Promise.all([own?.close(), shared?.close()]);
  });

  it("shares a server the session started: its URL serves the page to anyone who has it", async () => {
    const started = await own.call("bash", {
      command:
        "mkdir -p site && echo '<h1>shared over mcp</h1>' > site/index.html && cd site && exec python3 -m http.server 8000 --bind 127.0.0.1",
      background: true,
    });
    expect(started.isError ?? false, text(started)).toBe(false);

    const exposed = await own.call("expose_port", { port: 8000, expiresInSeconds: 600 });
    const said = text(exposed);
    expect(exposed.isError ?? false, said).toBe(false);
    const [url, rest] = [said.split("\n")[0] ?? "", said.split("\n").slice(1).join("\n")];
    const port = new URL(api).port;
    expect(url).toMatch(new RegExp(`^http://[a-z2-7]{58}\\.localhost:${port}/$`));
    expect(rest).toContain("Port 8000 of this sandbox is shared until");
    const pathUrl = /for clients: (\S+)\)/.exec(rest)?.[1] ?? "";
    expect(pathUrl.startsWith(`${api}/p/`)).toBe(true);

    // No Authorization: the URL is the capability.
    const page = await served(pathUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe("<h1>shared over mcp</h1>\n");
  }, 90_000);

  it("refuses where it cannot share: the shared workspace, and a port below 1024", async () => {
    const inDefault = await shared.call("expose_port", { port: 8000 });
    expect(inDefault.isError).toBe(true);
    expect(text(inDefault)).toContain(
      'expose_port works in a created sandbox (POST /v1/sandboxes), and this call runs in "default"',
    );
    const low = await own.call("expose_port", { port: 900 });
    expect(low.isError).toBe(true);
    expect(text(low)).toContain("args.port: Too small: expected number to be >=1024");
  }, 60_000);
});
