// One sandbox's token opens that sandbox alone (issue 30; decisions 250-252). The matrix
// below lists every route the Worker registers and every tool: sandbox A's token is
// tried against B's sandbox, calls, runs and jobs, and against the list, create and
// operator routes (403/404), and the same request with the rightful credential works,
// so each refusal is the scope and not a broken request; A's token against A's own
// works. A route the app registers that the matrix does not list fails the first test.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listTools } from "../../../../src/tools/index.ts";
import { app } from "../../../../src/worker/app.ts";
import { API_TOKEN } from "../../worker/helpers.ts";

const ORIGIN = "http://127.0.0.1";

/** A request to the Worker with `token` as the bearer (none: null). */
function send(
  token: string | null,
  method: string,
  path: string,
  init: { body?: BodyInit; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Host", "127.0.0.1");
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  return exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body }));
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

interface Sandbox {
  id: string;
  token: string;
}

interface Call {
  id: string;
  subscribeToken: string;
  viewUrl: string;
  runViewUrl?: string;
}

let counter = 0;
function fresh(label: string): string {
  return `${label}-${++counter}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Every sandbox the file makes, deleted after it. */
const made: string[] = [];

async function createSandbox(): Promise<Sandbox> {
  const sandbox = await json<Sandbox>(
    await send(API_TOKEN, "POST", "/v1/sandboxes", { json: {} }),
    201,
  );
  made.push(sandbox.id);
  return sandbox;
}

/** Creates a call with `token`; the answer's status must be 201. */
async function start(token: string, body: Record<string, unknown>): Promise<Call> {
  return json<Call>(
    await send(token, "POST", "/v1/invocations", { json: { toolCallId: fresh("c"), ...body } }),
    201,
  );
}

interface Result {
  isError: boolean;
  content: { text?: string }[];
}

async function settled(id: string): Promise<Result> {
  for (;;) {
    const res = await send(API_TOKEN, "GET", `/v1/invocations/${id}/result?wait=30`);
    if (res.status === 200) return res.json();
    expect(res.status).toBe(202);
    await res.body?.cancel();
  }
}

function textOf(result: Result): string {
  return result.content.map((c) => c.text ?? "").join("");
}

async function statusOf(id: string): Promise<string> {
  return (
    await json<{ status: string }>(await send(API_TOKEN, "GET", `/v1/invocations/${id}`), 200)
  ).status;
}

/** Runs `tool` in the token's sandbox and answers its result. */
async function runTool(token: string, tool: string, args: unknown, sandbox?: string) {
  const call = await start(token, { tool, args, ...(sandbox ? { sandbox } : {}) });
  return settled(call.id);
}

/** The query token of a link. */
function tokenOf(url: string): string {
  return new URL(url).searchParams.get("token") ?? "";
}

/** Everything the matrix tries: sandboxes A and B, and calls, runs and jobs in each. */
interface World {
  a: Sandbox;
  b: Sandbox;
  /** A settled bash call with a spill, in run `r`, made with its sandbox's token. */
  callA: Call;
  callB: Call;
  runA: string;
  runB: string;
  /** A running background `cat` each (job_output, kill, write_stdin). */
  jobA: Call;
  jobB: Call;
  /** A running tty `cat` each (the terminal's routes, decision 191). */
  ttyA: Call;
  ttyB: Call;
}

let w: World;

beforeAll(async () => {
  const [a, b] = await Promise.all([createSandbox(), createSandbox()]);
  const spilling = { tool: "bash", args: { command: "seq 1 3000" }, runId: "r" };
  const background = { tool: "bash", args: { command: "cat", background: true } };
  const tty = { tool: "bash", args: { command: "cat", tty: true } };
  const [callA, callB, jobA, jobB, ttyA, ttyB] = await Promise.all([
    start(a.token, spilling),
    start(b.token, spilling),
    start(a.token, background),
    start(b.token, background),
    start(a.token, tty),
    start(b.token, tty),
  ]);
  await Promise.all([settled(callA.id), settled(callB.id)]);
  w = {
    a,
    b,
    callA,
    callB,
    runA: `${a.id}:r`,
    runB: `${b.id}:r`,
    jobA,
    jobB,
    ttyA,
    ttyB,
  };
}, 120_000);

/** An attach token of `call`, minted with `token` (the operator's, or its sandbox's). */
async function attachTokenOf(token: string, call: Call): Promise<string> {
  const res = await send(token, "POST", `/v1/invocations/${call.id}/attach`, { json: {} });
  return (await json<{ attachToken: string }>(res, 200)).attachToken;
}

/** Typing routes: A's sandbox token is no attach token (403); an attach token types. */
function typingCase(tail: "/terminal/input" | "/terminal/resize", body: unknown): RouteCase {
  return {
    route: `POST /v1/invocations/:id${tail}`,
    foreign: {
      request: async (who) => {
        const token = who === "a" ? w.a.token : await attachTokenOf(API_TOKEN, w.ttyB);
        return send(token, "POST", `/v1/invocations/${w.ttyB.id}${tail}`, { json: body });
      },
      refused: 403,
    },
    own: {
      request: async () => {
        const token = await attachTokenOf(w.a.token, w.ttyA);
        return send(token, "POST", `/v1/invocations/${w.ttyA.id}${tail}`, { json: body });
      },
      status: 200,
    },
  };
}

afterAll(async () => {
  for (const id of made)
    await (await send(API_TOKEN, "DELETE", `/v1/sandboxes/${id}`)).body?.cancel();
}, 120_000);

/** A stream the operator made with `PUT /v1/stream/:name`: no sandbox's call. */
async function madeStream(): Promise<string> {
  const name = fresh("s");
  const res = await send(API_TOKEN, "PUT", `/v1/stream/${name}`, {
    body: "made\n",
    headers: { "content-type": "text/plain" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  await res.body?.cancel();
  return name;
}

/** Who makes a matrix request: A's token, or whoever may (the operator, or B's own links). */
type Who = "a" | "rightful";

const bearer = (who: Who) => (who === "a" ? w.a.token : API_TOKEN);

/** An empty tar archive: the end-of-archive blocks. */
const EMPTY_TAR = new Uint8Array(1024);

const MCP_INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "access-matrix", version: "1.0.0" },
  },
};
const MCP_HEADERS = { accept: "application/json, text/event-stream" };
const UPGRADE = { Upgrade: "websocket" };

interface RouteCase {
  /** `METHOD /path` as the app registers it. */
  route: string;
  /**
   * A's token against what is not A's (B's, or the operator's), and what it must answer;
   * or why no request of A's token can be foreign to this route.
   */
  foreign: { request: (who: Who) => Promise<Response>; refused: 401 | 403 | 404 } | string;
  /** A's token against A's own, and what it answers. */
  own: { request: () => Promise<Response>; status: number } | string;
}

const ROUTES: RouteCase[] = [
  {
    route: "GET /healthz",
    foreign: "public: it names nothing",
    own: { request: () => send(null, "GET", "/healthz"), status: 200 },
  },
  {
    route: "GET /v1/tools",
    foreign: "the tool list names no sandbox",
    own: { request: () => send(w.a.token, "GET", "/v1/tools"), status: 200 },
  },
  {
    route: "POST /v1/invocations",
    foreign: {
      request: (who) =>
        send(bearer(who), "POST", "/v1/invocations", {
          json: { tool: "ls", args: {}, sandbox: w.b.id, toolCallId: fresh("x") },
        }),
      refused: 403,
    },
    own: {
      request: () =>
        send(w.a.token, "POST", "/v1/invocations", {
          json: { tool: "ls", args: {}, toolCallId: fresh("own") },
        }),
      status: 201,
    },
  },
  ...(
    [
      ["GET", "", 200],
      ["GET", "/links", 200],
      ["GET", "/result", 200],
      ["GET", "/events", 200],
      ["GET", "/spill", 200],
    ] as const
  ).map(
    ([method, tail, status]): RouteCase => ({
      route: `${method} /v1/invocations/:id${tail}`,
      foreign: {
        request: (who) => send(bearer(who), method, `/v1/invocations/${w.callB.id}${tail}`),
        refused: 404,
      },
      own: {
        request: () => send(w.a.token, method, `/v1/invocations/${w.callA.id}${tail}`),
        status,
      },
    }),
  ),
  {
    route: "GET /v1/invocations/:id/socket",
    foreign: {
      request: (who) =>
        send(bearer(who), "GET", `/v1/invocations/${w.callB.id}/socket`, { headers: UPGRADE }),
      refused: 404,
    },
    own: {
      request: () =>
        send(w.a.token, "GET", `/v1/invocations/${w.callA.id}/socket`, { headers: UPGRADE }),
      status: 101,
    },
  },
  {
    route: "GET /v1/invocations/:id/terminal",
    foreign: {
      request: (who) => send(bearer(who), "GET", `/v1/invocations/${w.ttyB.id}/terminal`),
      refused: 404,
    },
    own: {
      request: () => send(w.a.token, "GET", `/v1/invocations/${w.ttyA.id}/terminal`),
      status: 200,
    },
  },
  {
    route: "POST /v1/invocations/:id/attach",
    foreign: {
      request: (who) =>
        send(bearer(who), "POST", `/v1/invocations/${w.ttyB.id}/attach`, { json: {} }),
      refused: 404,
    },
    own: {
      request: () => send(w.a.token, "POST", `/v1/invocations/${w.ttyA.id}/attach`, { json: {} }),
      status: 200,
    },
  },
  typingCase("/terminal/input", { data: "x" }),
  typingCase("/terminal/resize", { cols: 100, rows: 30 }),
  {
    route: "POST /v1/invocations/:id/cancel",
    foreign: {
      // The operator's rightful cancel ends B's job: a call of its own is made for it.
      request: async (who) => {
        const target =
          who === "a"
            ? w.jobB
            : await start(w.b.token, { tool: "bash", args: { command: "sleep 30" } });
        return send(bearer(who), "POST", `/v1/invocations/${target.id}/cancel`);
      },
      refused: 404,
    },
    own: {
      request: async () => {
        const own = await start(w.a.token, { tool: "bash", args: { command: "sleep 30" } });
        return send(w.a.token, "POST", `/v1/invocations/${own.id}/cancel`);
      },
      status: 200,
    },
  },
  {
    route: "POST /v1/invocations/:id/output",
    foreign: {
      // Made here: an agent-side call idles out in 2 s in this project.
      request: async (who) => {
        const external = await start(w.b.token, { tool: "external", args: { name: "probe" } });
        return send(bearer(who), "POST", `/v1/invocations/${external.id}/output`, {
          json: { calls: [{ write: "from outside\n" }] },
        });
      },
      refused: 404,
    },
    own: {
      request: async () => {
        const external = await start(w.a.token, { tool: "external", args: { name: "probe" } });
        return send(w.a.token, "POST", `/v1/invocations/${external.id}/output`, {
          json: { calls: [{ write: "mine\n" }] },
        });
      },
      status: 200,
    },
  },
  ...(
    [
      ["GET", "", 200, {}],
      ["GET", "/socket", 101, UPGRADE],
      ["GET", "/links", 200, {}],
    ] as const
  ).map(
    ([method, tail, status, headers]): RouteCase => ({
      route: `${method} /v1/runs/:runId${tail}`,
      foreign: {
        request: (who) => send(bearer(who), method, `/v1/runs/${w.runB}${tail}`, { headers }),
        refused: 403,
      },
      own: {
        request: () => send(w.a.token, method, `/v1/runs/${w.runA}${tail}`, { headers }),
        status,
      },
    }),
  ),
  {
    route: "GET /v1/runs/:runId/calls/:id/links",
    foreign: {
      request: (who) => send(bearer(who), "GET", `/v1/runs/${w.runB}/calls/${w.callB.id}/links`),
      refused: 403,
    },
    own: {
      request: () => send(w.a.token, "GET", `/v1/runs/${w.runA}/calls/${w.callA.id}/links`),
      status: 200,
    },
  },
  {
    route: "POST /v1/sandboxes",
    foreign: {
      request: async (who) => {
        const res = await send(bearer(who), "POST", "/v1/sandboxes", { json: {} });
        if (res.status === 201) made.push(((await res.clone().json()) as Sandbox).id);
        return res;
      },
      refused: 403,
    },
    own: "creating is the operator's",
  },
  {
    route: "GET /v1/sandboxes",
    foreign: { request: (who) => send(bearer(who), "GET", "/v1/sandboxes"), refused: 403 },
    own: "the list is the operator's",
  },
  {
    route: "GET /v1/sandboxes/pool",
    foreign: { request: (who) => send(bearer(who), "GET", "/v1/sandboxes/pool"), refused: 403 },
    own: "the warm pool is the operator's",
  },
  ...(
    [
      ["GET", "", 200],
      ["GET", "/network", 200],
      ["POST", "/keepalive", 200],
      ["GET", "/files", 200],
    ] as const
  ).map(
    ([method, tail, status]): RouteCase => ({
      route: `${method} /v1/sandboxes/:id${tail}`,
      foreign: {
        request: (who) => send(bearer(who), method, `/v1/sandboxes/${w.b.id}${tail}`),
        refused: 403,
      },
      own: {
        request: () => send(w.a.token, method, `/v1/sandboxes/${w.a.id}${tail}`),
        status,
      },
    }),
  ),
  {
    route: "PUT /v1/sandboxes/:id/files",
    foreign: {
      request: (who) =>
        send(bearer(who), "PUT", `/v1/sandboxes/${w.b.id}/files`, { body: EMPTY_TAR }),
      refused: 403,
    },
    own: {
      request: () => send(w.a.token, "PUT", `/v1/sandboxes/${w.a.id}/files`, { body: EMPTY_TAR }),
      status: 200,
    },
  },
  // Preview URLs (decision 182): a sandbox's token shares its own sandbox's ports only.
  {
    route: "POST /v1/sandboxes/:id/ports",
    foreign: {
      request: (who) =>
        send(bearer(who), "POST", `/v1/sandboxes/${w.b.id}/ports`, { json: { port: 8000 } }),
      refused: 403,
    },
    own: {
      request: () =>
        send(w.a.token, "POST", `/v1/sandboxes/${w.a.id}/ports`, { json: { port: 8000 } }),
      status: 201,
    },
  },
  {
    route: "GET /v1/sandboxes/:id/ports",
    foreign: {
      request: (who) => send(bearer(who), "GET", `/v1/sandboxes/${w.b.id}/ports`),
      refused: 403,
    },
    own: { request: () => send(w.a.token, "GET", `/v1/sandboxes/${w.a.id}/ports`), status: 200 },
  },
  {
    route: "DELETE /v1/sandboxes/:id/ports/:port",
    foreign: {
      request: async (who) => {
        if (who === "rightful") {
          const made = await send(API_TOKEN, "POST", `/v1/sandboxes/${w.b.id}/ports`, {
            json: { port: 8001 },
          });
          await made.body?.cancel();
        }
        return send(bearer(who), "DELETE", `/v1/sandboxes/${w.b.id}/ports/8001`);
      },
      refused: 403,
    },
    own: {
      request: async () => {
        const made = await send(w.a.token, "POST", `/v1/sandboxes/${w.a.id}/ports`, {
          json: { port: 8002 },
        });
        await made.body?.cancel();
        return send(w.a.token, "DELETE", `/v1/sandboxes/${w.a.id}/ports/8002`);
      },
      status: 200,
    },
  },
  // The operator's alone, even on A's own sandbox: the rightful request is made on a
  // sandbox of its own, which it may delete, rotate or reconfigure.
  ...(
    [
      ["DELETE", "", undefined],
      ["POST", "/token", undefined],
      ["PUT", "/network", { allow: [] }],
    ] as const
  ).map(
    ([method, tail, body]): RouteCase => ({
      route: `${method} /v1/sandboxes/:id${tail}`,
      foreign: {
        request: async (who) => {
          const target = who === "a" ? w.b.id : (await createSandbox()).id;
          return send(bearer(who), method, `/v1/sandboxes/${target}${tail}`, {
            ...(body ? { json: body } : {}),
          });
        },
        refused: 403,
      },
      own: {
        request: () =>
          send(w.a.token, method, `/v1/sandboxes/${w.a.id}${tail}`, {
            ...(body ? { json: body } : {}),
          }),
        status: 403,
      },
    }),
  ),
  ...["drop-subscribers", "evict"].map(
    (control): RouteCase => ({
      route: `POST /v1/test/invocations/:id/${control}`,
      foreign:
        "test controls are off here (a 404 for every token); where on, they are the operator's (operatorOnly)",
      own: {
        request: () => send(w.a.token, "POST", `/v1/test/invocations/${w.callA.id}/${control}`),
        status: 404,
      },
    }),
  ),
  {
    route: "ALL /mcp",
    foreign: "a sandbox token's /mcp session runs in its own sandbox (tested below)",
    own: {
      request: () =>
        send(w.a.token, "POST", "/mcp", { json: MCP_INITIALIZE, headers: MCP_HEADERS }),
      status: 200,
    },
  },
  {
    route: "ALL /mcp/sandboxes/:sandbox",
    foreign: {
      request: (who) =>
        send(bearer(who), "POST", `/mcp/sandboxes/${w.b.id}`, {
          json: MCP_INITIALIZE,
          headers: MCP_HEADERS,
        }),
      refused: 403,
    },
    own: {
      request: () =>
        send(w.a.token, "POST", `/mcp/sandboxes/${w.a.id}`, {
          json: MCP_INITIALIZE,
          headers: MCP_HEADERS,
        }),
      status: 200,
    },
  },
  {
    route: "ALL /mcp/sandbox/new",
    // A session that makes a sandbox of its own is the operator's (decision 222).
    foreign: {
      request: (who) =>
        send(bearer(who), "POST", "/mcp/sandbox/new", {
          json: MCP_INITIALIZE,
          headers: MCP_HEADERS,
        }),
      refused: 403,
    },
    own: "a sandbox token makes no sandbox: its own request is the foreign one above",
  },
  {
    route: "GET /view/:id",
    foreign: {
      // What A holds for watching is its calls' links: A's link token on B's call.
      request: (who) => {
        const token = tokenOf(who === "a" ? w.callA.viewUrl : w.callB.viewUrl);
        return send(null, "GET", `/view/${w.callB.id}?token=${token}`);
      },
      refused: 403,
    },
    own: {
      request: () => {
        const url = new URL(w.callA.viewUrl);
        return send(null, "GET", url.pathname + url.search);
      },
      status: 200,
    },
  },
  // Durable Streams (decisions 200, 203): a sandbox token reads its own calls' streams;
  // any other stream, a made one among them, is not found for it; it writes none.
  ...(["GET", "HEAD"] as const).map(
    (method): RouteCase => ({
      route: `${method} /v1/invocations/:id/stream`,
      foreign: {
        request: (who) => send(bearer(who), method, `/v1/invocations/${w.callB.id}/stream`),
        refused: 404,
      },
      own: {
        request: () => send(w.a.token, method, `/v1/invocations/${w.callA.id}/stream`),
        status: 200,
      },
    }),
  ),
  ...(["GET", "HEAD"] as const).map(
    (method): RouteCase => ({
      route: `${method} /v1/stream/:name`,
      foreign: {
        request: async (who) => {
          const name = await madeStream();
          return send(bearer(who), method, `/v1/stream/${name}`);
        },
        refused: 404,
      },
      own: {
        request: () => send(w.a.token, method, `/v1/stream/${w.callA.id}`),
        status: 200,
      },
    }),
  ),
  {
    route: "PUT /v1/stream/:name",
    foreign: {
      request: (who) =>
        send(bearer(who), "PUT", `/v1/stream/${fresh("s")}`, {
          headers: { "content-type": "text/plain" },
        }),
      refused: 403,
    },
    own: "a sandbox token makes no stream: writes take the operator's token (decision 203)",
  },
  {
    route: "POST /v1/stream/:name",
    foreign: {
      request: async (who) => {
        const name = await madeStream();
        return send(bearer(who), "POST", `/v1/stream/${name}`, {
          body: "appended\n",
          headers: { "content-type": "text/plain" },
        });
      },
      refused: 403,
    },
    own: "a sandbox token appends to no stream, its own calls' included (decision 203)",
  },
  {
    route: "DELETE /v1/stream/:name",
    foreign: {
      request: async (who) => send(bearer(who), "DELETE", `/v1/stream/${await madeStream()}`),
      refused: 403,
    },
    own: "a sandbox token deletes no stream (decision 203)",
  },
  ...["/v1/stream/:name", "/v1/invocations/:id/stream"].map(
    (route): RouteCase => ({
      route: `OPTIONS ${route}`,
      foreign: "a CORS preflight names nothing and answers no data",
      own: {
        request: () =>
          send(null, "OPTIONS", route.replace(":name", w.callA.id).replace(":id", w.callA.id)),
        status: 204,
      },
    }),
  ),
  {
    route: "GET /run/:runId",
    foreign: {
      request: (who) => {
        const token = tokenOf((who === "a" ? w.callA : w.callB).runViewUrl ?? "");
        return send(null, "GET", `/run/${encodeURIComponent(w.runB)}?token=${token}`);
      },
      refused: 403,
    },
    own: {
      request: () => {
        const url = new URL(w.callA.runViewUrl ?? "");
        return send(null, "GET", url.pathname + url.search);
      },
      status: 200,
    },
  },
];

/** The routes the app registers: `METHOD /path`, middleware (`ALL …*`) left out. */
function registeredRoutes(): string[] {
  const routes = app.routes
    .filter((r) => !(r.method === "ALL" && r.path.endsWith("*")))
    .map((r) => `${r.method} ${r.path}`);
  return [...new Set(routes)].sort();
}

async function closeAnswer(res: Response): Promise<void> {
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close(1000, "done");
  } else await res.body?.cancel();
}

describe("a sandbox token opens that sandbox alone", () => {
  it("the matrix lists every route the Worker registers, each once", () => {
    const listed = ROUTES.map((r) => r.route).sort();
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(registeredRoutes());
  });

  for (const route of ROUTES) {
    it(`${route.route}: A's token on B's or the operator's is refused; the rightful credential works; A's on its own answers as listed`, async () => {
      if (typeof route.foreign !== "string") {
        const refused = await route.foreign.request("a");
        const text = refused.webSocket ? "" : await refused.clone().text();
        expect(refused.status, text).toBe(route.foreign.refused);
        expect(text).not.toContain(w.b.token);
        await closeAnswer(refused);
        const rightful = await route.foreign.request("rightful");
        const why = rightful.status < 400 ? "" : await rightful.clone().text();
        expect(rightful.status, why).toBeLessThan(400);
        await closeAnswer(rightful);
      }
      if (typeof route.own !== "string") {
        const own = await route.own.request();
        const why = own.status === route.own.status ? "" : await own.clone().text();
        expect(own.status, why).toBe(route.own.status);
        await closeAnswer(own);
      }
    }, 60_000);
  }

  /** Valid args of every tool, run in A by A's token. */
  const TOOL_ARGS: Record<string, () => unknown> = {
    bash: () => ({ command: "echo in-a" }),
    read: () => ({ path: "a.txt" }),
    write: () => ({ path: "a.txt", content: "x" }),
    edit: () => ({ path: "a.txt", edits: [{ oldText: "x", newText: "y" }] }),
    ls: () => ({}),
    grep: () => ({ pattern: "x" }),
    glob: () => ({ pattern: "*" }),
    find: () => ({ pattern: "*" }),
    web_fetch: () => ({ url: "http://127.0.0.1:1/" }),
    external: () => ({ name: "probe" }),
    jobs: () => ({}),
    job_output: () => ({ id: w.jobA.id }),
    kill: () => ({ id: w.callA.id }),
    write_stdin: () => ({ id: w.jobA.id, text: "typed\n", wait: 0 }),
    expose_port: () => ({ port: 8004 }),
    emit: () => ({ lines: 1 }),
    steps: () => ({ steps: 1 }),
    report: () => ({ items: [] }),
  };

  it("every tool: A's token naming B's sandbox is a 403; naming none, it runs in A", async () => {
    const tools = listTools().map((t) => t.name);
    expect(Object.keys(TOOL_ARGS).sort()).toEqual([...tools].sort());
    for (const tool of tools) {
      const args = TOOL_ARGS[tool]?.();
      const refused = await send(w.a.token, "POST", "/v1/invocations", {
        json: { tool, args, sandbox: w.b.id, toolCallId: fresh("x") },
      });
      expect(refused.status, `${tool}: ${await refused.clone().text()}`).toBe(403);
      await refused.body?.cancel();
      const refusedDefault = await send(w.a.token, "POST", "/v1/invocations", {
        json: { tool, args, sandbox: "default", toolCallId: fresh("x") },
      });
      expect(refusedDefault.status, tool).toBe(403);
      await refusedDefault.body?.cancel();
      const call = await start(w.a.token, { tool, args });
      const view = await json<{ sandbox: string }>(
        await send(w.a.token, "GET", `/v1/invocations/${call.id}`),
        200,
      );
      expect(view.sandbox, tool).toBe(w.a.id);
    }
  }, 120_000);

  it("from a call in A, jobs lists none of B's; job_output, kill and write_stdin of B's job answer as for no job, and B's job runs on", async () => {
    for (const token of [w.a.token, API_TOKEN]) {
      // Under the operator's token too, a call that names sandbox A sees A's alone.
      const listed = textOf(await runTool(token, "jobs", {}, w.a.id));
      expect(listed).toContain(w.jobA.id);
      expect(listed).not.toContain(w.jobB.id);
      expect(listed).not.toContain(w.b.id);
      for (const [tool, args] of [
        ["job_output", { id: w.jobB.id }],
        ["kill", { id: w.jobB.id }],
        ["write_stdin", { id: w.jobB.id, text: "typed by A\n", wait: 0 }],
      ] as const) {
        const result = await runTool(token, tool, args, w.a.id);
        expect(result.isError, tool).toBe(true);
        // Word for word the answer for an id that never existed.
        const nowhere = await runTool(token, tool, { ...args, id: "call_nowhere" }, w.a.id);
        expect(textOf(result).replaceAll(w.jobB.id, "call_nowhere"), tool).toBe(textOf(nowhere));
      }
    }
    expect(await statusOf(w.jobB.id)).toBe("running");
    const inB = textOf(await runTool(w.b.token, "job_output", { id: w.jobB.id }));
    expect(inB).not.toContain("typed by A");
    // The operator's call in `default` reaches neither.
    const fromDefault = await runTool(API_TOKEN, "job_output", { id: w.jobA.id }, "default");
    expect(fromDefault.isError).toBe(true);
    // A's own job answers A.
    const own = await runTool(w.a.token, "job_output", { id: w.jobA.id });
    expect(own.isError).toBe(false);
    expect(textOf(own)).toContain(`[job ${w.jobA.id} · running`);
  }, 120_000);

  it("A's MCP session reaches A's calls only: B's id is unknown to its tools", async () => {
    const init = await send(w.a.token, "POST", `/mcp/sandboxes/${w.a.id}`, {
      json: MCP_INITIALIZE,
      headers: MCP_HEADERS,
    });
    expect(init.status).toBe(200);
    const session = init.headers.get("mcp-session-id");
    await init.body?.cancel();
    let requestId = 1;
    const callTool = async (name: string, args: unknown) => {
      requestId++;
      const params = { name, arguments: args };
      const res = await send(w.a.token, "POST", "/mcp", {
        json: { jsonrpc: "2.0", id: requestId, method: "tools/call", params },
        headers: {
          ...MCP_HEADERS,
          "mcp-protocol-version": "2025-11-25",
          ...(session ? { "mcp-session-id": session } : {}),
        },
      });
      return res.text();
    };
    const killB = await callTool("kill", { id: w.jobB.id });
    expect(killB).toContain("No invocation");
    expect(await statusOf(w.jobB.id)).toBe("running");
    expect(await callTool("bash", { command: "echo mcp-in-a > mcp.txt" })).toContain(
      '"isError":false',
    );
    expect(textOf(await runTool(w.a.token, "read", { path: "mcp.txt" }))).toContain("mcp-in-a");
  }, 60_000);

  it("a runId A names is A's own: B's run of the same name neither gains its call nor opens to it", async () => {
    const before = await json<{ calls: unknown[] }>(
      await send(API_TOKEN, "GET", `/v1/runs/${w.runB}`),
      200,
    );
    const joined = await start(w.a.token, { tool: "ls", args: {}, runId: w.runB });
    const after = await json<{ calls: unknown[] }>(
      await send(API_TOKEN, "GET", `/v1/runs/${w.runB}`),
      200,
    );
    expect(after.calls.length).toBe(before.calls.length);
    const view = await json<{ runId: string }>(
      await send(w.a.token, "GET", `/v1/invocations/${joined.id}`),
      200,
    );
    expect(view.runId).toBe(`${w.a.id}:${w.runB}`);
    // Its own run, naming B's call: as if there were no such call.
    const crossed = await send(w.a.token, "GET", `/v1/runs/${w.runA}/calls/${w.callB.id}/links`);
    expect(crossed.status).toBe(404);
    await crossed.body?.cancel();
  }, 60_000);

  it("a toolCallId of B's call, reused by A's token, is a 409 that tells nothing of B's call", async () => {
    const res = await send(w.a.token, "POST", "/v1/invocations", {
      json: { tool: "ls", args: {}, toolCallId: w.callB.id },
    });
    const text = await res.text();
    expect(res.status, text).toBe(409);
    expect(text).not.toContain("bash");
    expect(text).not.toContain(w.b.id);
  });
});

describe("sandbox tokens are revoked and end with their sandbox", () => {
  it("a rotation kills the old token at once and the new one works; a forged one is a 401", async () => {
    const sbx = await createSandbox();
    const rotated = await json<Sandbox>(
      await send(API_TOKEN, "POST", `/v1/sandboxes/${sbx.id}/token`),
      200,
    );
    expect(rotated.id).toBe(sbx.id);
    expect(rotated.token).not.toBe(sbx.token);
    const old = await send(sbx.token, "GET", `/v1/sandboxes/${sbx.id}`);
    expect(old.status).toBe(401);
    expect(await old.text()).toContain("revoked");
    expect((await send(rotated.token, "GET", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
    const mac = rotated.token.slice(rotated.token.lastIndexOf(".") + 1);
    const flipped = `${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    const forged = `${rotated.token.slice(0, rotated.token.lastIndexOf(".") + 1)}${flipped}`;
    const refused = await send(forged, "GET", `/v1/sandboxes/${sbx.id}`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("signature");
    await send(API_TOKEN, "DELETE", `/v1/sandboxes/${sbx.id}`);
  }, 60_000);

  it("a reader's socket and event stream opened with a revoked token end at the next heartbeat; the operator's stay open", async () => {
    const sbx = await createSandbox();
    const call = await json<Call>(
      await send(sbx.token, "POST", "/v1/invocations", {
        json: { tool: "bash", args: { command: "echo up; sleep 60" }, toolCallId: fresh("live") },
      }),
      201,
    );
    const open = async (token: string) => {
      const res = await send(token, "GET", `/v1/invocations/${call.id}/socket`, {
        headers: { Upgrade: "websocket" },
      });
      const socket = res.webSocket;
      if (!socket) throw new Error(`no socket (${res.status})`);
      socket.accept();
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })),
      );
      return { socket, closed };
    };
    const agent = await open(sbx.token);
    const operator = await open(API_TOKEN);
    const events = await send(sbx.token, "GET", `/v1/invocations/${call.id}/events`);
    expect(events.headers.get("content-type")).toBe("text/event-stream");
    const streamText = events.text();

    // Before any revocation a heartbeat leaves every reader be.
    await runDurableObjectAlarm(env.INVOCATIONS.getByName(call.id));
    expect(agent.socket.readyState).toBe(WebSocket.OPEN);

    await json(await send(API_TOKEN, "POST", `/v1/sandboxes/${sbx.id}/token`), 200);
    await runDurableObjectAlarm(env.INVOCATIONS.getByName(call.id));
    expect(await agent.closed).toEqual({ code: 4403, reason: "sandbox token revoked" });
    expect(await streamText).toContain(": sandbox token revoked\n\n");
    expect(operator.socket.readyState).toBe(WebSocket.OPEN);
    // And the old token opens no new one.
    const again = await send(sbx.token, "GET", `/v1/invocations/${call.id}/socket`, {
      headers: { Upgrade: "websocket" },
    });
    expect(again.status).toBe(401);
    operator.socket.close(1000, "done");
    await send(API_TOKEN, "POST", `/v1/invocations/${call.id}/cancel`);
    await send(API_TOKEN, "DELETE", `/v1/sandboxes/${sbx.id}`);
  }, 60_000);

  it("a deleted sandbox's token opens nothing: 401 saying the sandbox ended", async () => {
    const sbx = await createSandbox();
    expect((await send(sbx.token, "GET", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
    await send(API_TOKEN, "DELETE", `/v1/sandboxes/${sbx.id}`);
    const res = await send(sbx.token, "POST", "/v1/invocations", {
      json: { tool: "ls", args: {} },
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("ended with its sandbox");
  }, 60_000);
});
