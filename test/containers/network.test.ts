// A container sandbox on the network by policy (issue 25, decision 183), in real local
// containers through the Worker (global-setup.ts): the sandbox host inside the container
// runs the same egress proxy, in a namespace its bridge holds (the host is not root
// there). A server on this machine, at the Docker bridge's address, is reached through
// the proxy when the allow list names it; another port is refused with the proxy's line;
// a command that skips the proxy reaches nothing; a policy replaced with none refuses
// what was allowed. A preview URL reaches `python3 -m http.server` in the container
// through its Durable Object, and a WebSocket echoes through it. A container sandbox made
// without a network is refused one later. Skips, saying why, where Docker is missing.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { SandboxView } from "../../src/protocol/index.ts";
import type { PortExposure } from "../../src/protocol/preview.ts";
import { ROOT } from "../support/processes.ts";

const missing = inject("containersMissing");
const api = inject("containersApiUrl");
const auth = { authorization: `Bearer ${inject("containersApiToken")}` };
/** The Docker bridge's gateway (dockerd's --bip, .ci/run): this machine, as a container sees it. */
const GATEWAY = "172.17.0.1";

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

describe.skipIf(missing !== "")(
  `a container sandbox's network${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    const servers: Server[] = [];
    const made: string[] = [];
    let allowed: number;
    let other: number;
    beforeAll(async () => {
      const upstream = createServer((_req, res) => res.end("hello from the host\n"));
      const elsewhere = createServer((_req, res) => res.end("should not be reached\n"));
      servers.push(upstream, elsewhere);
      [allowed, other] = [await listen(upstream), await listen(elsewhere)];
    });
    afterAll(async () => {
      for (const id of made) await call("DELETE", `/v1/sandboxes/${id}`).catch(() => undefined);
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
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
      const [site, app] = await Promise.all([expose(8000), expose(8001)]);
      let page = await fetch(site.pathUrl);
      for (let i = 0; i < 50 && page.status !== 200; i++) {
        await page.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 200));
        page = await fetch(site.pathUrl);
      }
      expect(page.status).toBe(200);
      expect(await page.text()).toBe("<h1>from a container</h1>\n");
      // A WebSocket both ways, through the Worker and the container's Durable Object.
      const ws = new WebSocket(`${app.pathUrl.replace(/^http/, "ws")}ws`);
      const echoed = new Promise<string>((resolve, reject) => {
        ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true });
        ws.addEventListener("error", () => reject(new Error("the WebSocket failed")), {
          once: true,
        });
      });
      ws.addEventListener("open", () => ws.send("through the container"), { once: true });
      expect(await echoed).toBe("echo: through the container");
      ws.close();

      // The policy replaced with none: what was allowed is refused from now on.
      const off = await call("PUT", `/v1/sandboxes/${sbx.id}/network`, { allow: [] });
      expect(off.status, await off.clone().text()).toBe(200);
      const after = await bash(sbx.id, `curl -sS --max-time 10 http://${GATEWAY}:${allowed}/`);
      expect(after).toContain(`toolwire: ${GATEWAY}:${allowed} refused (no network policy)`);
      expect(after).not.toContain("hello from the host");
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
