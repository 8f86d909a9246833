// Preview URLs through the Worker (decision 182), against this project's real sandbox host:
// an app started by bash in the background, exposed by POST /v1/sandboxes/:id/ports, and
// reached through both URL forms (HTTP, SSE, a WebSocket echo); refusals for revoked,
// expired, unknown and idle ones; the bounds of the API at, under and over; and a
// WebSocket told why when its sandbox is deleted under it.
import { exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { SandboxView } from "../../../../src/protocol/index.ts";
import {
  type PortExposure,
  PREVIEW_MAX_PORTS,
  PREVIEW_MAX_SECONDS,
} from "../../../../src/protocol/preview.ts";
import { call, create, expectError, freshId, postJson } from "../../worker/helpers.ts";

/** A sandbox with the app running on `port` in the background. */
async function sandboxServing(port: number): Promise<string> {
  const res = await postJson("/v1/sandboxes", {
    files: { "app.py": inject("previewApp"), "site/index.html": "<h1>preview page</h1>\n" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { id } = (await res.json()) as SandboxView;
  await create({
    tool: "bash",
    args: { command: `python3 app.py ${port} site`, background: true },
    sandbox: id,
    toolCallId: freshId("app"),
  });
  return id;
}

async function expose(id: string, body: Record<string, unknown>): Promise<PortExposure> {
  const res = await postJson(`/v1/sandboxes/${id}/ports`, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

/** A request to a preview URL as a visitor makes it: no API token. */
function visit(url: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(url, init);
}

async function untilServing(url: string): Promise<Response> {
  for (let i = 0; i < 300; i++) {
    const res = await visit(url);
    if (res.status === 200) return res;
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

function openSocket(url: string): Promise<WebSocket> {
  return visit(url, { headers: { Upgrade: "websocket" } }).then((res) => {
    if (!res.webSocket) throw new Error(`no WebSocket: ${res.status}`);
    res.webSocket.accept();
    return res.webSocket;
  });
}

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) =>
    ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true }),
  );
}

describe("preview URLs through the Worker", () => {
  it("serve the app through both forms, with the visitor's Authorization and never the token", async () => {
    const id = await sandboxServing(8000);
    const exposed = await expose(id, { port: 8000 });
    const token = /\/p\/([a-z2-7]{58})\/$/.exec(exposed.pathUrl)?.[1] ?? "";
    expect(exposed.url).toBe(`http://${token}.localhost/`);
    expect(exposed.pathUrl).toBe(`http://toolwire.test/p/${token}/`);
    expect(Date.parse(exposed.expiresAt) - Date.now()).toBeGreaterThan(3500_000);

    const page = await untilServing(exposed.pathUrl);
    expect(await page.text()).toBe("<h1>preview page</h1>\n");
    const byHost = await visit(`${exposed.url}index.html`);
    expect(await byHost.text()).toBe("<h1>preview page</h1>\n");
    // /p/<token> alone goes on to /p/<token>/, where relative links resolve.
    const bare = await visit(exposed.pathUrl.slice(0, -1), { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe(`/p/${token}/`);

    for (const url of [`${exposed.pathUrl}headers`, `${exposed.url}headers`]) {
      const seen = (await (
        await visit(url, {
          headers: { authorization: "Bearer app-own-token", referer: `${exposed.pathUrl}x` },
        })
      ).json()) as Record<string, string>;
      expect(seen.authorization).toBe("Bearer app-own-token");
      expect(seen.host).toBe("localhost:8000");
      expect(JSON.stringify(seen)).not.toContain(token);
    }

    const listed = (await (await call(`/v1/sandboxes/${id}/ports`)).json()) as {
      ports: PortExposure[];
    };
    expect(listed.ports).toEqual([exposed]);

    // The model's way: expose_port, whose URLs are made on PUBLIC_URL (default 127.0.0.1:8787).
    const tool = await create({
      tool: "expose_port",
      args: { port: 8000, expiresInSeconds: 600 },
      sandbox: id,
      toolCallId: freshId("expose"),
    });
    const told = (await (await call(`/v1/invocations/${tool.id}/result?wait=30`)).json()) as {
      isError?: boolean;
      content: { text: string }[];
    };
    const said = told.content.map((c) => c.text).join("");
    expect(told.isError ?? false, said).toBe(false);
    const toolUrl = /^(http:\/\/[a-z2-7]{58}\.localhost:8787\/)\n/.exec(said)?.[1] ?? "";
    expect(said).toContain("Port 8000 of this sandbox is shared until");
    expect(await (await visit(toolUrl)).text()).toBe("<h1>preview page</h1>\n");
    // It replaced the port's grant: the URL the API gave before is over.
    expect((await visit(exposed.url)).status).toBe(410);

    const elsewhere = await create({
      tool: "expose_port",
      args: { port: 8000 },
      toolCallId: freshId("expose-default"),
    });
    const refused = (await (
      await call(`/v1/invocations/${elsewhere.id}/result?wait=30`)
    ).json()) as { isError?: boolean; content: { text: string }[] };
    expect(refused.isError).toBe(true);
    expect(refused.content.map((c) => c.text).join("")).toContain(
      "expose_port works in a created sandbox",
    );
    await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
  }, 60_000);

  it("passes SSE on as sent and a WebSocket both ways", async () => {
    const id = await sandboxServing(8001);
    const exposed = await expose(id, { port: 8001 });
    await (await untilServing(exposed.url)).body?.cancel();

    const sse = await visit(`${exposed.url}sse`);
    const arrivals: number[] = [];
    let text = "";
    const decoder = new TextDecoder();
    const reader = sse.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
      while (arrivals.length < text.split("\n\n").length - 1) arrivals.push(Date.now());
    }
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2]! - arrivals[0]!).toBeGreaterThan(500);

    const ws = await openSocket(`${exposed.url}ws`);
    const first = nextMessage(ws);
    ws.send("hello");
    expect(await first).toBe("echo: hello");
    const second = nextMessage(ws);
    ws.send("again");
    expect(await second).toBe("echo: again");

    // The sandbox deleted under an open WebSocket: it closes, saying so.
    const closed = new Promise<CloseEvent>((resolve) =>
      ws.addEventListener("close", resolve, { once: true }),
    );
    await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
    const event = await closed;
    expect(event.code).toBe(1001);
    expect(event.reason).toContain(`sandbox ${id} is `);
    expect(event.reason).toContain("deleted");

    const after = await visit(exposed.url, { headers: { accept: "text/html" } });
    expect(after.status).toBe(410);
    expect(await after.text()).toContain("This preview link has ended");
  }, 60_000);

  it("refuses revoked, expired, forged and idle ones: 410, 404 and 502, a page for a person", async () => {
    const id = await sandboxServing(8002);
    const kept = await expose(id, { port: 8002 });
    await (await untilServing(kept.pathUrl)).body?.cancel();

    const revoked = await expose(id, { port: 8003 });
    const del = await call(`/v1/sandboxes/${id}/ports/8003`, { method: "DELETE" });
    expect(await del.json()).toEqual({ port: 8003, revoked: true });
    expect(await expectError(await visit(revoked.pathUrl), 410, "gone")).toContain("revoked");
    await expectError(
      await call(`/v1/sandboxes/${id}/ports/8003`, { method: "DELETE" }),
      404,
      "not_found",
    );

    // Exposed again, the old URL of a port stops working and the new one works.
    const replaced = await expose(id, { port: 8002 });
    expect(await expectError(await visit(kept.pathUrl), 410, "gone")).toContain("replaced");
    expect((await visit(replaced.pathUrl)).status).toBe(200);

    const short = await expose(id, { port: 8002, expiresInSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    expect(await expectError(await visit(short.url), 410, "gone")).toContain("expired");

    const forged = short.url.replace(
      /^http:\/\/(.)/,
      (_, ch: string) => `http://${ch === "a" ? "b" : "a"}`,
    );
    await expectError(await visit(forged), 404, "not_found");
    const page = await visit(forged, { headers: { accept: "text/html" } });
    expect(await page.text()).toContain("No preview at this address");

    const idle = await expose(id, { port: 9000 });
    expect(await expectError(await visit(idle.url), 502, "no_listener")).toContain(
      "nothing listens there",
    );
    const idlePage = await visit(idle.url, { headers: { accept: "text/html" } });
    expect(idlePage.status).toBe(502);
    expect(await idlePage.text()).toContain("Nothing is answering on this port");
    await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
  }, 60_000);

  it("takes ports 1024-65535, lifetimes 1 s to 7 days, and 16 ports a sandbox", async () => {
    const res = await postJson("/v1/sandboxes", {});
    const { id } = (await res.json()) as SandboxView;
    for (const [body, status] of [
      [{ port: 1023 }, 400],
      [{ port: 1024 }, 201],
      [{ port: 65_535 }, 201],
      [{ port: 65_536 }, 400],
      [{ port: 3000, expiresInSeconds: 0 }, 400],
      [{ port: 3000, expiresInSeconds: 1 }, 201],
      [{ port: 3000, expiresInSeconds: PREVIEW_MAX_SECONDS }, 201],
      [{ port: 3000, expiresInSeconds: PREVIEW_MAX_SECONDS + 1 }, 400],
    ] as const) {
      const answer = await postJson(`/v1/sandboxes/${id}/ports`, body);
      expect([body, answer.status]).toEqual([body, status]);
    }
    // Three are exposed (1024, 65535, 3000): fill up to the cap, then one more.
    for (let port = 4000; port < 4000 + PREVIEW_MAX_PORTS - 3; port++) {
      expect((await postJson(`/v1/sandboxes/${id}/ports`, { port })).status).toBe(201);
    }
    await expectError(
      await postJson(`/v1/sandboxes/${id}/ports`, { port: 5000 }),
      429,
      "too_many_requests",
    );
    // Exposing one of them again replaces it, so it is not one more.
    expect((await postJson(`/v1/sandboxes/${id}/ports`, { port: 4000 })).status).toBe(201);
    await expectError(
      await postJson(`/v1/sandboxes/${id}/ports`, { port: 1024 }, false),
      401,
      "unauthorized",
    );
    await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
    await expectError(await postJson(`/v1/sandboxes/${id}/ports`, { port: 1024 }), 410, "gone");
  }, 60_000);
});
