// The run index through the real Worker, Invocation DOs and Run DOs: calls created with
// a runId are listed as they start and settle, followed over a WebSocket, and opened
// with the run token of runViewUrl (docs/decisions/122).
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type RunCall, summarizeArgs } from "../../../durable-objects/run/run-notes.ts";
import { mintSubscribeToken } from "../../../src/worker/subscribe-token.ts";
import { call, expectError, freshId, ORIGIN, postJson, SUBSCRIBE_SECRET } from "./helpers.ts";

interface CreatedInRun {
  id: string;
  subscribeToken: string;
  runViewUrl?: string;
}

async function createExternal(runId: string | undefined, name = "job"): Promise<CreatedInRun> {
  const res = await postJson("/v1/invocations", {
    tool: "external",
    args: { name, input: { n: 1 } },
    toolCallId: freshId("run-call"),
    ...(runId ? { runId } : {}),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function listed(runId: string, query = "", auth = true): Promise<RunCall[]> {
  const res = await call(`/v1/runs/${encodeURIComponent(runId)}${query}`, {}, auth);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { runId: string; calls: RunCall[] };
  expect(body.runId).toBe(runId);
  return body.calls;
}

const tokenOf = (url: string) => new URL(url).searchParams.get("token") ?? "";

describe("the run index", () => {
  it("lists every call of a run as it starts and settles: tool, summary, status, lines", async () => {
    const runId = freshId("run");
    const a = await createExternal(runId, "vitest");
    const b = await createExternal(runId, "lint");
    const c = await createExternal(runId, "build");
    const first = await listed(runId);
    expect(first.map((x) => [x.toolCallId, x.tool, x.status])).toEqual([
      [a.id, "external", "running"],
      [b.id, "external", "running"],
      [c.id, "external", "running"],
    ]);
    expect(first[0]?.summary).toBe('{"name":"vitest","input":{"n":1}}');
    expect(first[0]?.settledAt).toBeNull();

    await postJson(`/v1/invocations/${a.id}/output`, {
      calls: [{ write: "one\ntwo\nthree\n" }],
      end: { isError: false },
    });
    await postJson(`/v1/invocations/${b.id}/output`, {
      calls: [],
      end: { isError: true, error: "boom" },
    });
    await postJson(`/v1/invocations/${c.id}/cancel`, {});
    const after = await listed(runId);
    expect(after.map((x) => [x.toolCallId, x.status])).toEqual([
      [a.id, "done"],
      [b.id, "error"],
      [c.id, "cancelled"],
    ]);
    expect(after[0]?.totalLines).toBe(3);
    expect(after[0]?.totalBytes).toBe(14);
    expect(after.every((x) => typeof x.settledAt === "number" && x.settledAt >= x.createdAt)).toBe(
      true,
    );
  });

  it("the create answer carries runViewUrl only for a call given a runId", async () => {
    const runId = freshId("run");
    const inRun = await createExternal(runId);
    expect(inRun.runViewUrl).toMatch(new RegExp(`^${ORIGIN}/run/${runId}\\?token=v1\\.`));
    const alone = await createExternal(undefined);
    expect(alone.runViewUrl).toBeUndefined();
    // A call of its own run (the default) makes no run index.
    expect(await listed(alone.id)).toEqual([]);
  });

  it("summaries are bash's command or compact JSON, on one line of at most 160 characters", () => {
    expect(summarizeArgs("bash", { command: "npm test\n  --watch=false" })).toBe(
      "npm test --watch=false",
    );
    expect(summarizeArgs("read", { path: "a.ts", offset: 3 })).toBe('{"path":"a.ts","offset":3}');
    const at = "x".repeat(160);
    expect(summarizeArgs("bash", { command: at })).toBe(at);
    expect(summarizeArgs("bash", { command: `${at}y` })).toBe(`${"x".repeat(159)}…`);
  });
});

describe("run tokens", () => {
  it("open their own run's routes and page, nothing else", async () => {
    const runId = freshId("run");
    const created = await createExternal(runId);
    const token = tokenOf(created.runViewUrl ?? "");
    expect((await listed(runId, `?token=${token}`, false)).length).toBe(1);
    const page = await call(`/run/${runId}?token=${token}`, {}, false);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await page.text()).toContain("script-src 'sha256-");

    const other = freshId("run");
    await expectError(await call(`/v1/runs/${other}?token=${token}`, {}, false), 403, "forbidden");
    await expectError(await call(`/run/${other}?token=${token}`, {}, false), 403, "forbidden");
    // Not a subscribe token: the run's own call is not opened with it.
    await expectError(
      await call(`/v1/invocations/${created.id}?token=${token}`, {}, false),
      403,
      "forbidden",
    );
    // A subscribe token does not open the run.
    await expectError(
      await call(`/v1/runs/${runId}?token=${created.subscribeToken}`, {}, false),
      403,
      "forbidden",
    );
    // Not a write credential either.
    await expectError(
      await call(`/v1/invocations/${created.id}/cancel?token=${token}`, { method: "POST" }, false),
      403,
      "forbidden",
    );
    await expectError(await call(`/v1/runs/${runId}`, {}, false), 401, "unauthorized");
    await expectError(
      await call(`/run/${runId}?token=${token.slice(0, -2)}xx`, {}, false),
      401,
      "unauthorized",
    );
  });

  it("give a subscribe token for a call of the run, and refuse one of another run", async () => {
    const runId = freshId("run");
    const created = await createExternal(runId);
    const token = tokenOf(created.runViewUrl ?? "");
    const res = await call(`/v1/runs/${runId}/calls/${created.id}/links?token=${token}`, {}, false);
    expect(res.status).toBe(200);
    const links = (await res.json()) as { subscribeToken: string; socketUrl: string };
    expect(links.socketUrl).toContain(`/v1/invocations/${created.id}/socket?token=`);
    const view = await call(
      `/v1/invocations/${created.id}?token=${links.subscribeToken}`,
      {},
      false,
    );
    expect(view.status).toBe(200);

    const stranger = await createExternal(freshId("run"));
    await expectError(
      await call(`/v1/runs/${runId}/calls/${stranger.id}/links?token=${token}`, {}, false),
      404,
      "not_found",
    );
    const forged = await mintSubscribeToken(SUBSCRIBE_SECRET, `run/${runId}x`, Date.now());
    await expectError(
      await call(`/v1/runs/${runId}/calls/${created.id}/links?token=${forged}`, {}, false),
      403,
      "forbidden",
    );
  });
});

describe("GET /v1/runs/:runId/socket", () => {
  it("sends the list, then each call as it starts and settles", async () => {
    const runId = freshId("run");
    const first = await createExternal(runId);
    const res = await exports.default.fetch(
      `${ORIGIN}/v1/runs/${runId}/socket?token=${tokenOf(first.runViewUrl ?? "")}`,
      {
        headers: { Upgrade: "websocket" },
      },
    );
    expect(res.status).toBe(101);
    const socket = res.webSocket as WebSocket;
    const messages: { type: string; calls?: RunCall[]; call?: RunCall }[] = [];
    socket.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
    socket.accept();
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(ok()).toBe(true);
    };
    await until(() => messages.some((m) => m.type === "synced"));
    expect(messages[0]?.type).toBe("calls");
    expect(messages[0]?.calls?.map((c) => c.toolCallId)).toEqual([first.id]);

    const second = await createExternal(runId);
    await until(() => messages.some((m) => m.call?.toolCallId === second.id));
    await postJson(`/v1/invocations/${second.id}/output`, { calls: [], end: { isError: false } });
    await until(() =>
      messages.some((m) => m.call?.toolCallId === second.id && m.call.status === "done"),
    );
    socket.close(1000, "done");
  });

  it("needs Upgrade: websocket", async () => {
    const runId = freshId("run");
    await expectError(await call(`/v1/runs/${runId}/socket`), 426, "upgrade_required");
  });
});
