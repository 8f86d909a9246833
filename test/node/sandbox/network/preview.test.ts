/**
 * The way in of preview URLs on the sandbox host (decision 182): real jails in their own
 * network namespaces, a small Python app started in each as a background command, and
 * requests through `/sandboxes/:id/v1/preview/:port/…` as the Worker sends them: bodies
 * streamed both ways, SSE as sent, a WebSocket echo, the visitor's own Authorization
 * passed on, and no road from one sandbox's route to another's port.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PREVIEW_AUTHORIZATION_HEADER } from "../../../../src/protocol/preview.ts";
import { type EgressTestHost, type NetSandbox, startEgressTestHost } from "./egress-host.ts";

const APP = readFileSync(path.join(import.meta.dirname, "../../../support/preview-app.py"), "utf8");

let host: EgressTestHost;
let a: NetSandbox;
let b: NetSandbox;

function preview(id: string, port: number, route: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${host.token}`);
  return fetch(`${host.url}/sandboxes/${id}/v1/preview/${port}${route}`, { ...init, headers });
}

/** Starts the app in `sbx` on `port` as a background command, and waits until it answers. */
async function serve(sbx: NetSandbox, port: number, page: string): Promise<void> {
  await sbx.client.write({ path: "app.py", content: APP });
  await sbx.client.write({ path: "site/index.html", content: page });
  let ended: unknown = null;
  void sbx.run(`exec python3 app.py ${port} site`).then(
    (out) => {
      ended = out;
    },
    (err: unknown) => {
      ended = err;
    },
  );
  for (let i = 0; i < 300 && ended === null; i++) {
    const res = await preview(sbx.id, port, "/").catch(() => null);
    if (res?.status === 200) return;
    await res?.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the app in ${sbx.id} never answered on ${port}: ${JSON.stringify(ended)}`);
}

beforeAll(async () => {
  host = await startEgressTestHost({});
  [a, b] = await Promise.all([host.create(), host.create()]);
  await Promise.all([serve(a, 8000, "page of A\n"), serve(b, 8001, "page of B\n")]);
}, 90_000);
afterAll(async () => {
  await host?.close();
});

describe("a preview request on the sandbox host", () => {
  it("reaches the app on the sandbox's loopback with the visitor's Authorization and never the host's token", async () => {
    const page = await preview(a.id, 8000, "/");
    expect(page.status).toBe(200);
    expect(await page.text()).toBe("page of A\n");
    const res = await preview(a.id, 8000, "/headers?x=1", {
      headers: { [PREVIEW_AUTHORIZATION_HEADER]: "Basic dXNlcjpwdw==", "x-custom": "kept" },
    });
    const seen = (await res.json()) as Record<string, string>;
    expect(seen.authorization).toBe("Basic dXNlcjpwdw==");
    expect(seen.host).toBe("localhost:8000");
    expect(seen["x-custom"]).toBe("kept");
    expect(JSON.stringify(seen)).not.toContain(host.token);
    expect(seen).not.toHaveProperty(PREVIEW_AUTHORIZATION_HEADER);
  });

  it("streams a request body to the app and its answer back", async () => {
    const body = new Uint8Array(3 << 20).map((_, i) => i % 251);
    const res = await preview(a.id, 8000, "/echo", { method: "POST", body });
    expect(res.status).toBe(200);
    const back = Buffer.from(await res.arrayBuffer());
    expect(back.length).toBe(body.length);
    expect(back.equals(body)).toBe(true);
  });

  it("passes server-sent events on as the app sends them, not at the end", async () => {
    const res = await preview(a.id, 8000, "/sse");
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const arrivals: number[] = [];
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk);
      const events = text.split("\n\n").length - 1;
      while (arrivals.length < events) arrivals.push(Date.now());
    }
    expect(arrivals).toHaveLength(3);
    // The app sleeps 400 ms between events: each arrives on its own.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThan(250);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThan(250);
  });

  it("streams a 100 MiB download with memory flat", async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    let bytes = 0;
    const res = await preview(a.id, 8000, "/big?mb=100");
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    expect(bytes).toBe(100 << 20);
    // Host and client share this process: all of it would be 100 MiB and more.
    expect(peak - before).toBeLessThan(48 << 20);
  }, 60_000);

  it("carries a WebSocket both ways", async () => {
    const ws = new WebSocket(
      `${host.url.replace("http", "ws")}/sandboxes/${a.id}/v1/preview/8000/ws`,
      {
        headers: { authorization: `Bearer ${host.token}` },
      } as unknown as string[],
    );
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => ws.send("hello");
      ws.onerror = () => reject(new Error("the WebSocket failed"));
      ws.onmessage = (e) => {
        got.push(String(e.data));
        if (got.length === 1) ws.send("twice");
        else resolve();
      };
    });
    expect(got).toEqual(["echo: hello", "echo: twice"]);
    ws.close();
  });

  it("cannot reach another sandbox's port: each route leads only into its own sandbox", async () => {
    const own = await preview(b.id, 8001, "/");
    expect(await own.text()).toBe("page of B\n");
    const across = await preview(a.id, 8001, "/");
    expect(across.status).toBe(502);
    expect(across.headers.get("x-toolwire-refusal")).toBe("no_listener");
    expect(await across.text()).toContain(`port 8001 of sandbox ${a.id}: nothing listens there`);
  });

  it("drops an app's own refusal mark, so its answer is never taken for the host's", async () => {
    const res = await preview(a.id, 8000, "/forged");
    expect(res.status).toBe(404);
    expect(res.headers.get("x-toolwire-refusal")).toBeNull();
    expect(await res.text()).toBe("app's own\n");
  });

  it("says a port with nothing listening is a 502, and takes only ports 1024-65535", async () => {
    const idle = await preview(a.id, 9999, "/");
    expect(idle.status).toBe(502);
    expect(await idle.json()).toMatchObject({ error: { code: "no_listener" } });
    for (const [port, status] of [
      [900, 400],
      [1023, 400],
      [1024, 502],
      [65_535, 502],
      [65_536, 400],
    ] as const) {
      const res = await preview(a.id, port, "/");
      expect([port, res.status]).toEqual([port, status]);
      expect(res.headers.get("x-toolwire-refusal")).not.toBeNull();
    }
  });

  it("refuses a request without the host's token, and a WebSocket's too", async () => {
    const res = await fetch(`${host.url}/sandboxes/${a.id}/v1/preview/8000/`);
    expect(res.status).toBe(401);
    const ws = new WebSocket(
      `${host.url.replace("http", "ws")}/sandboxes/${a.id}/v1/preview/8000/ws`,
    );
    const opened = await new Promise<boolean>((resolve) => {
      ws.onopen = () => resolve(true);
      ws.onerror = () => resolve(false);
    });
    expect(opened).toBe(false);
  });

  it("ends an open WebSocket when its sandbox is deleted", async () => {
    const c = await host.create();
    await serve(c, 8002, "page of C\n");
    const ws = new WebSocket(
      `${host.url.replace("http", "ws")}/sandboxes/${c.id}/v1/preview/8002/ws`,
      {
        headers: { authorization: `Bearer ${host.token}` },
      } as unknown as string[],
    );
    await new Promise<void>((resolve) => {
      ws.onopen = () => resolve();
    });
    const closed = new Promise<number>((resolve) => {
      ws.onclose = (e) => resolve(e.code);
    });
    const removed = await host.request("DELETE", `/v1/sandboxes/${c.id}`);
    expect(removed.status).toBe(200);
    // No close frame can come from an app that is gone: the connection just ends.
    expect(await closed).toBe(1006);
  }, 60_000);
});
