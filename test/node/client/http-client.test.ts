// ToolwireClient over a real HTTP server that answers like the Worker.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolwireClient, ToolwireError } from "../../../src/client/index.ts";

let server: Server;
let baseUrl: string;
const seen: { method?: string; url?: string; auth?: string; body?: string }[] = [];

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => resolve(text));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const text = await body(req);
    seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body: text });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const links = {
      subscribeToken: "t",
      socketUrl: "ws://x/s",
      eventsUrl: "http://x/e",
      viewUrl: "http://x/v",
    };
    if (req.url === "/v1/invocations" && req.method === "POST") {
      const again = JSON.parse(text).toolCallId === "again";
      return json(again ? 200 : 201, { id: "c1", toolCallId: "c1", status: "running", ...links });
    }
    if (req.url === "/v1/invocations/c1/result?wait=5") return json(202, { status: "running" });
    if (req.url?.startsWith("/v1/invocations/c1?token=")) {
      return json(200, {
        id: "c1",
        tool: "bash",
        args: {},
        status: "running",
        state: { content: [] },
      });
    }
    if (req.url === "/v1/tools")
      return json(200, { tools: [{ name: "bash", description: "d", parameters: {} }] });
    if (req.url === "/v1/invocations/gone") {
      return json(404, { error: { code: "not_found", message: "No invocation with this id" } });
    }
    res.writeHead(500, { "content-type": "text/plain" });
    res.end("boom");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("ToolwireClient", () => {
  it("creates invocations with the bearer token and tells new from existing", async () => {
    const api = new ToolwireClient({ baseUrl, token: "secret" });
    const created = await api.createInvocation({ tool: "bash", args: { command: "ls" } });
    expect(created).toMatchObject({ id: "c1", created: true, viewUrl: "http://x/v" });
    expect(seen.at(-1)).toMatchObject({ method: "POST", auth: "Bearer secret" });
    expect(JSON.parse(seen.at(-1)?.body ?? "")).toEqual({ tool: "bash", args: { command: "ls" } });
    expect((await api.createInvocation({ tool: "bash", toolCallId: "again" })).created).toBe(false);
  });

  it("reports a running result (202) and lists tools", async () => {
    const api = new ToolwireClient({ baseUrl, token: "secret" });
    expect(await api.result("c1", { wait: 5 })).toEqual({ status: "running" });
    expect((await api.tools()).map((t) => t.name)).toEqual(["bash"]);
  });

  it("reads with a subscribe token in the query instead of a header", async () => {
    const api = new ToolwireClient({ baseUrl, subscribeToken: "sub.tok" });
    expect((await api.get("c1")).id).toBe("c1");
    expect(seen.at(-1)).toMatchObject({ url: "/v1/invocations/c1?token=sub.tok", auth: undefined });
  });

  it("throws the API's error as a ToolwireError with code, message and status", async () => {
    const api = new ToolwireClient({ baseUrl, token: "secret" });
    const error = await api.get("gone").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolwireError);
    expect(error).toMatchObject({
      code: "not_found",
      message: "No invocation with this id",
      status: 404,
    });
    const other = await api.cancel("x").catch((e: unknown) => e);
    expect(other).toMatchObject({ code: "bad_response", status: 500 });
  });
});
