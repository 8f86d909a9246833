// A container sandbox on the network by policy (issue 25, decision 183), in real local
// containers through the Worker (global-setup.ts): the sandbox host inside the container
// runs the same egress proxy, in a namespace its bridge holds (the host is not root
// there). A server on this machine, at the Docker bridge's address, is reached through
// the proxy when the allow list names it; another port is refused with the proxy's line;
// a command that skips the proxy reaches nothing; a policy replaced with none refuses
// what was allowed. A preview URL reaches `python3 -m http.server` in the container
// through its Durable Object, and a WebSocket echoes through it. A container sandbox made
// without a network is refused one later. Skips, saying why, where Docker is missing.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, get as httpGet, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { SandboxView } from "../../src/protocol/index.ts";
import type { PortExposure } from "../../src/protocol/preview.ts";
import { startGitRepo, startTinyRegistry, type Upstream } from "../support/loopback-upstreams.ts";
import { ROOT } from "../support/processes.ts";

const missing = inject("containersMissing");
const api = inject("containersApiUrl");
const auth = { authorization: `Bearer ${inject("containersApiToken")}` };
const GATEWAY = inject("containersGateway");

async function call(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${api}${route}`, {
    method,
    headers: { ...auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

let calls = 0;
/** A bash call in `sandbox`, waited for unless `background`: its text. */
async function bash(sandbox: string, command: string, background = false): Promise<string> {
  const toolCallId = `cn_${process.pid}_${++calls}_${Date.now()}`;
  const made = await call("POST", "/v1/invocations", {
    tool: "bash",
    args: { command, ...(background ? { background: true } : {}) },
    sandbox,
    toolCallId,
  });
  expect(made.status, await made.clone().text()).toBe(201);
  // A background call runs on (a server): its first moment is enough.
  if (background) return "";
  for (;;) {
    const res = await call("GET", `/v1/invocations/${toolCallId}/result?wait=30`);
    if (res.status === 200) {
      const result = (await res.json()) as { content: { text?: string }[] };
      return result.content.map((c) => c.text ?? "").join("");
    }
    expect(res.status).toBe(202);
  }
}

async function createSandbox(body: unknown): Promise<SandboxView> {
  const res = await call("POST", "/v1/sandboxes", body);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as SandboxView;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, GATEWAY, () => resolve((server.address() as AddressInfo).port));
  });
}

/** The answer at `url` once the server behind it answers (a background start takes a moment). */
async function untilServing(url: string): Promise<Response> {
  let res = await fetch(url);
  for (let i = 0; i < 50 && res.status !== 200; i++) {
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    res = await fetch(url);
  }
  return res;
}

/** GET a host-form preview URL the way a browser does: to this machine, naming the token in `Host`. */
function byHostForm(url: string): Promise<{ status: number; text: string }> {
  const { host, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: "127.0.0.1", port, path: pathname, headers: { host } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
  });
}

/**
 * The events of preview-app.py's `/sse` at `url`: when each arrived here and when the app
 * sent it (its own clock, in the event; a container shares this machine's clock).
 */
async function sseArrivals(url: string): Promise<{ arrivedAt: number; sentAt: number }[]> {
  const res = await fetch(url);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const events: { arrivedAt: number; sentAt: number }[] = [];
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
      const sent = / at (\d+\.\d+)$/.exec(text.slice(0, end))?.[1];
      events.push({ arrivedAt: Date.now(), sentAt: Number(sent) * 1000 });
      text = text.slice(end + 2);
    }
  }
  return events;
}

async function openSocket(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error(`the WebSocket to ${url} failed`)), {
      once: true,
    });
  });
  return ws;
}

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) =>
    ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true }),
  );
}

interface NetworkLog {
  totals: Record<"connections" | "allowed" | "denied" | "bytesUp" | "bytesDown", number>;
  connections: {
    port: number;
    allowed: boolean;
    why: string;
    bytesUp: number;
    bytesDown: number;
    durationMs: number | null;
  }[];
}

/** Sandbox `id`'s connection log once every connection is closed, the `upstreams`' sides too (5 s at most). */
async function settledLog(id: string, upstreams: Upstream[]): Promise<NetworkLog> {
  for (let i = 0; ; i++) {
    const log = (await (await call("GET", `/v1/sandboxes/${id}/network`)).json()) as NetworkLog;
    const open =
      log.connections.filter((c) => c.durationMs === null).length +
      upstreams.reduce((n, u) => n + u.traffic().open, 0);
    if (open === 0 || i === 50) return log;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(missing !== "")(
  `a container sandbox's network${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    const servers: Server[] = [];
    const made: string[] = [];
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-containers-net-"));
    let allowed: number;
    let other: number;
    /** Answers `/<n>` with n bytes. */
    let sized: number;
    let registry: Upstream;
    let git: Upstream;
    beforeAll(async () => {
      const upstream = createServer((_req, res) => res.end("hello from the host\n"));
      const elsewhere = createServer((_req, res) => res.end("should not be reached\n"));
      const sizes = createServer((req, res) => res.end("x".repeat(Number(req.url?.slice(1)))));
      servers.push(upstream, elsewhere, sizes);
      [allowed, other, sized] = [
        await listen(upstream),
        await listen(elsewhere),
        await listen(sizes),
      ];
      registry = await startTinyRegistry(dir, "tiny-answer", GATEWAY);
      git = await startGitRepo(dir, GATEWAY);
      servers.push(registry.server, git.server);
    });
    afterAll(async () => {
      for (const id of made) await call("DELETE", `/v1/sandboxes/${id}`).catch(() => undefined);
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("egress by policy through the container's proxy, nothing around it, and a preview URL into it", async () => {
      const sbx = await createSandbox({
        backend: "container",
        network: { allow: [`${GATEWAY}:${allowed}`] },
        // The preview tests' app: /ws is a WebSocket echo.
        files: { "app.py": readFileSync(`${ROOT}/test/support/preview-app.py`, "utf8") },
      });
      made.push(sbx.id);
      expect(sbx.network).toEqual({ allow: [`${GATEWAY}:${allowed}`] });

      const out = await bash(
        sbx.id,
        [
          `curl -sS --max-time 10 http://${GATEWAY}:${allowed}/; echo "allowed exit $?"`,
          `curl -sS --max-time 10 http://${GATEWAY}:${other}/; echo "other exit $?"`,
          `curl -sS --noproxy '*' --max-time 5 http://${GATEWAY}:${allowed}/; echo "bypass exit $?"`,
          `curl -sS --noproxy '*' --max-time 5 http://1.1.1.1/; echo "public bypass exit $?"`,
          "ip -o addr | awk '{print $2}' | sort -u | tr '\\n' ' '; echo",
          // A command holds no capability over its namespace: it cannot take loopback down
          // nor bind a port below 1024 (the proxy's is 900).
          `ip link set lo down 2>/dev/null; echo "lo down exit $?"`,
          `python3 -c 'import socket; socket.socket().bind(("127.0.0.1", 901))' 2>&1 | tail -1`,
        ].join("; "),
      );
      expect(out).toContain("hello from the host\nallowed exit 0");
      expect(out).toContain(
        `toolwire: ${GATEWAY}:${other} refused (not on the allow list); sandbox ${sbx.id} allows only: ${GATEWAY}:${allowed}`,
      );
      expect(out).not.toContain("should not be reached");
      expect(out).toMatch(/bypass exit 7\n/);
      expect(out).toContain("public bypass exit 7");
      // The namespace holds loopback and nothing else.
      expect(out).toContain("\nlo \n");
      expect(out).toContain("lo down exit 2\n");
      expect(out).toContain("PermissionError: [Errno 13] Permission denied");

      const log = (await (await call("GET", `/v1/sandboxes/${sbx.id}/network`)).json()) as {
        totals: { allowed: number; denied: number };
        connections: { host: string; port: number; allowed: boolean }[];
      };
      expect(log.totals).toMatchObject({ allowed: 1, denied: 1 });
      expect(log.connections.map((c) => [c.port, c.allowed])).toEqual([
        [allowed, true],
        [other, false],
      ]);

      // A server in the container sandbox, through a preview URL and its Durable Object.
      await bash(
        sbx.id,
        "mkdir -p site && echo '<h1>from a container</h1>' > site/index.html && cd site && exec python3 -m http.server 8000 --bind 127.0.0.1",
        true,
      );
      await bash(sbx.id, "exec python3 app.py 8001", true);
      const expose = async (port: number) =>
        (await (
          await call("POST", `/v1/sandboxes/${sbx.id}/ports`, { port })
        ).json()) as PortExposure;
      const [site, app, idle] = await Promise.all([expose(8000), expose(8001), expose(8002)]);
      const page = await untilServing(site.pathUrl);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe("<h1>from a container</h1>\n");
      // The host form, as a browser asks for it (`<token>.localhost` names this machine).
      expect(await byHostForm(site.url)).toEqual({
        status: 200,
        text: "<h1>from a container</h1>\n",
      });
      // Server-sent events as the app sends them: each arrives before the next is sent.
      await (await untilServing(app.pathUrl)).body?.cancel();
      const events = await sseArrivals(`${app.pathUrl}sse`);
      expect(events).toHaveLength(3);
      for (let i = 0; i + 1 < events.length; i++)
        expect(events[i]!.arrivedAt).toBeLessThan(events[i + 1]!.sentAt);
      // A port with nothing listening.
      const none = await fetch(idle.pathUrl);
      expect(none.status).toBe(502);
      expect(await none.text()).toContain("port 8002 of sandbox");
      // A WebSocket both ways, through the Worker and the container's Durable Object.
      const ws = await openSocket(`${app.pathUrl.replace(/^http/, "ws")}ws`);
      const echoed = nextMessage(ws);
      ws.send("through the container");
      expect(await echoed).toBe("echo: through the container");
      // The policy replaced with none: what was allowed is refused from now on.
      const off = await call("PUT", `/v1/sandboxes/${sbx.id}/network`, { allow: [] });
      expect(off.status, await off.clone().text()).toBe(200);
      const after = await bash(sbx.id, `curl -sS --max-time 10 http://${GATEWAY}:${allowed}/`);
      expect(after).toContain(`toolwire: ${GATEWAY}:${allowed} refused (no network policy)`);
      expect(after).not.toContain("hello from the host");

      // The sandbox deleted under the open WebSocket: it closes, saying why.
      const closed = new Promise<CloseEvent>((resolve) =>
        ws.addEventListener("close", resolve, { once: true }),
      );
      expect((await call("DELETE", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
      const event = await closed;
      expect([event.code, event.reason]).toEqual([
        1001,
        `sandbox ${sbx.id} is ending: it was deleted`,
      ]);
    });

    it("npm install and git clone through the container's proxy; refusals naming the rule, the host's and the Worker's ports among them; every attempt on the record", async () => {
      // The container's sandbox host listens on 8080 (container/Dockerfile), the Worker on
      // 8787 (SANDBOX_EGRESS_RESERVED_PORTS' default): refused even when listed, with
      // private addresses allowed.
      const reserved = [8080, 8787];
      const allow = [registry.port, git.port, ...reserved].map((port) => `${GATEWAY}:${port}`);
      const sbx = await createSandbox({ backend: "container", network: { allow } });
      made.push(sbx.id);
      const out = await bash(
        sbx.id,
        [
          `npm install --no-audit --no-fund --registry http://${GATEWAY}:${registry.port}/ tiny-answer 2>&1 | tail -3`,
          `node -e 'console.log("answer", require("tiny-answer").answer)'`,
          `git clone -q http://${GATEWAY}:${git.port}/repo.git r && cat r/README`,
          ...[other, ...reserved].map(
            (port) => `curl -sS -w ' %{http_code}' http://${GATEWAY}:${port}/; echo`,
          ),
        ].join("; "),
      );
      expect(out).toContain("answer 42\n");
      expect(out).toContain("hello from git\n");
      expect(out).toContain(
        `toolwire: ${GATEWAY}:${other} refused (not on the allow list); sandbox ${sbx.id} allows only: ${allow.join(", ")}\n 403`,
      );
      for (const port of reserved)
        expect(out).toContain(`${GATEWAY}:${port} is the sandbox host's or the Worker's own`);
      expect(out).not.toContain("should not be reached");

      // The commands have ended; the proxy's and the servers' closes may still be on their way.
      const log = await settledLog(sbx.id, [registry, git]);
      // Every attempt: npm's and git's requests (a connection each: the proxy forwards one
      // request per connection), then the three refused, in order, each closed and counted.
      const denied = log.connections.filter((c) => !c.allowed).map((c) => c.port);
      expect(denied).toEqual([other, ...reserved]);
      expect(log.connections.slice(-3).map((c) => c.port)).toEqual(denied);
      const to = (port: number) => log.connections.filter((c) => c.port === port).length;
      expect(to(registry.port)).toBeGreaterThanOrEqual(2);
      expect(to(git.port)).toBeGreaterThanOrEqual(2);
      expect(to(registry.port) + to(git.port)).toBe(log.connections.length - 3);
      for (const c of log.connections) expect(c.durationMs).not.toBeNull();
      const sum = (key: "bytesUp" | "bytesDown", port?: number) =>
        log.connections
          .filter((c) => port === undefined || c.port === port)
          .reduce((total, c) => total + c[key], 0);
      // True byte counts: what each server read and wrote, to the byte.
      for (const upstream of [registry, git]) {
        const { read, written } = upstream.traffic();
        expect([sum("bytesUp", upstream.port), sum("bytesDown", upstream.port)]).toEqual([
          read,
          written,
        ]);
      }
      expect(log.totals).toEqual({
        connections: log.connections.length,
        allowed: log.connections.length - 3,
        denied: 3,
        bytesUp: sum("bytesUp"),
        bytesDown: sum("bytesDown"),
      });
    });

    it("limits.egressBytes holds in a container: under it an answer passes, over it one is cut, at it the next is refused", async () => {
      const limit = 10_000;
      const entry = `${GATEWAY}:${sized}`;
      const sbx = await createSandbox({
        backend: "container",
        network: { allow: [entry] },
        limits: { egressBytes: limit },
      });
      made.push(sbx.id);
      const out = await bash(
        sbx.id,
        [
          ...[1000, 20_000].map(
            (n) => `curl -sS -o /dev/null -w 'got %{size_download} of ${n}\n' http://${entry}/${n}`,
          ),
          `curl -sS http://${entry}/1`,
        ].join("; "),
      );
      expect(out).toContain("got 1000 of 1000\n");
      const cut = Number(/got (\d+) of 20000/.exec(out)?.[1]);
      expect(cut).toBeGreaterThan(0);
      expect(cut).toBeLessThan(20_000);
      expect(out).toContain(
        `toolwire: ${entry} refused (egress byte limit reached (limits.egressBytes ${limit})); sandbox ${sbx.id} allows only: ${entry}`,
      );
      const log = await settledLog(sbx.id, []);
      expect(log.totals.bytesUp + log.totals.bytesDown).toBe(limit);
      expect(log.connections.map((c) => c.allowed)).toEqual([true, true, false]);
      expect(log.connections[1]?.why).toContain(
        `closed at the egress byte limit (limits.egressBytes ${limit})`,
      );
    });

    it("a container sandbox made without a network is refused one later, and reaches nothing", async () => {
      const sbx = await createSandbox({ backend: "container" });
      made.push(sbx.id);
      const put = await call("PUT", `/v1/sandboxes/${sbx.id}/network`, {
        allow: [`${GATEWAY}:${allowed}`],
      });
      expect(put.status).toBe(409);
      expect(await put.text()).toContain(
        `sandbox ${sbx.id} is a container started without internet (its create named no network), which it cannot be given later; create a container sandbox with network.allow`,
      );
      const out = await bash(
        sbx.id,
        `curl -sS --max-time 10 http://${GATEWAY}:${allowed}/; echo "exit $?"`,
      );
      expect(out).toContain(
        `toolwire: ${GATEWAY}:${allowed} refused (no network policy); sandbox ${sbx.id} allows only: nothing`,
      );
      expect(out).not.toContain("hello from the host");
    });
  },
);
