// Created sandboxes through the Worker, against the real sandbox host of this project
// (test/workers/durable-objects/sandbox/sandbox-host.global-setup.ts): create, use,
// isolate, keep alive, expire by alarm, delete with a call running, lose.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { JUST_MADE_MS } from "../../../../durable-objects/sandbox/sandbox.ts";
import type { SandboxView } from "../../../../src/protocol/index.ts";
import { call, create, expectError, freshId, postJson } from "../../worker/helpers.ts";

async function createSandbox(body: Record<string, unknown> = {}): Promise<SandboxView> {
  const res = await postJson("/v1/sandboxes", body);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function bash(sandbox: string, command: string): Promise<{ isError: boolean; text: string }> {
  const created = await create({
    tool: "bash",
    args: { command },
    sandbox,
    toolCallId: freshId("sbx"),
  });
  const res = await call(`/v1/invocations/${created.id}/result?wait=30`);
  const result = (await res.json()) as { isError: boolean; content: { text: string }[] };
  return { isError: result.isError, text: result.content.map((c) => c.text).join("") };
}

describe("created sandboxes through the Worker", () => {
  it("POST /v1/sandboxes answers 201 {id, status, backend, limits, expiresAt}; GET reads it and lists it", async () => {
    const sbx = await createSandbox({ name: "agent-1", idleTimeoutSeconds: 120 });
    expect(sbx).toMatchObject({
      status: "active",
      backend: "host",
      placement: "default",
      name: "agent-1",
    });
    expect(sbx.id).toMatch(/^sbx_default_[0-9a-f]{20}$/);
    expect(sbx.limits.diskBytes).toBe(1024 * 1024 * 1024);
    expect(Date.parse(sbx.expiresAt!) - Date.parse(sbx.createdAt)).toBe(120_000);
    const read = (await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView;
    expect(read.id).toBe(sbx.id);
    const list = (await (await call("/v1/sandboxes")).json()) as { sandboxes: SandboxView[] };
    expect(list.sandboxes.map((s) => s.id)).toContain(sbx.id);
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  });

  it("past SANDBOX_MAX_SANDBOXES a create is a 429 with Retry-After, and nothing of it is kept", async () => {
    // The "crowded" host holds two created sandboxes (its global setup).
    const [a, b] = [
      await createSandbox({ host: "crowded" }),
      await createSandbox({ host: "crowded" }),
    ];
    const before = (await (await call("/v1/sandboxes")).json()) as { sandboxes: SandboxView[] };
    const refused = await postJson("/v1/sandboxes", { host: "crowded", name: "one-too-many" });
    expect(refused.headers.get("retry-after")).toBe("10");
    const message = await expectError(refused, 429, "too_many_requests");
    expect(message).toContain("SANDBOX_MAX_SANDBOXES");
    expect(message).not.toMatch(/\/tmp|\/srv| {4}at /);
    const after = (await (await call("/v1/sandboxes")).json()) as { sandboxes: SandboxView[] };
    expect(after.sandboxes.map((s) => s.id)).toEqual(before.sandboxes.map((s) => s.id));
    expect(after.sandboxes.some((s) => s.name === "one-too-many")).toBe(false);
    // Once one is deleted there is room again.
    await call(`/v1/sandboxes/${a.id}`, { method: "DELETE" });
    const c = await createSandbox({ host: "crowded" });
    for (const sbx of [b, c]) await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("a call names its sandbox; two sandboxes do not see each other's files; default is unchanged", async () => {
    const [a, b] = [await createSandbox(), await createSandbox()];
    expect((await bash(a.id, "echo only-a > f.txt && cat f.txt")).text).toContain("only-a");
    const inB = await bash(b.id, "cat f.txt");
    expect(inB.isError).toBe(true);
    expect(inB.text).toContain("No such file");
    expect((await bash("default", "ls -A")).text).not.toContain("f.txt");
    await call(`/v1/sandboxes/${a.id}`, { method: "DELETE" });
    await call(`/v1/sandboxes/${b.id}`, { method: "DELETE" });
  }, 60_000);

  it("the call's stream and its run's row name the sandbox (what the viewer and run page show)", async () => {
    const sbx = await createSandbox();
    const runId = freshId("run");
    const created = await create({
      tool: "bash",
      args: { command: "echo hi" },
      sandbox: sbx.id,
      runId,
      toolCallId: freshId("sbx-view"),
    });
    await call(`/v1/invocations/${created.id}/result?wait=20`);
    const events = await (await call(`/v1/invocations/${created.id}/events`)).text();
    expect(events).toContain(`"sandbox":"${sbx.id}"`);
    const run = (await (await call(`/v1/runs/${runId}`)).json()) as {
      calls: { summary: string }[];
    };
    expect(run.calls[0]?.summary).toBe(`[${sbx.id}] echo hi`);
    const inDefault = await create({
      tool: "bash",
      args: { command: "true" },
      toolCallId: freshId("dflt"),
    });
    await call(`/v1/invocations/${inDefault.id}/result?wait=20`);
    expect(await (await call(`/v1/invocations/${inDefault.id}/events`)).text()).not.toContain(
      '"sandbox"',
    );
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("an MCP client configured with /mcp/sandboxes/<id> runs its calls in that sandbox", async () => {
    const sbx = await createSandbox();
    await bash(sbx.id, "echo mcp-side > marker.txt");
    const client = new Client({ name: "toolwire-sandbox-mcp", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(
      new URL(`http://127.0.0.1/mcp/sandboxes/${sbx.id}`),
      {
        fetch: (input, init) => {
          const req = new Request(input, init);
          req.headers.set("Host", "127.0.0.1");
          req.headers.set("Authorization", "Bearer test-api-token");
          return exports.default.fetch(req);
        },
      },
    );
    await client.connect(transport);
    const result = (await client.callTool({
      name: "bash",
      arguments: { command: "cat marker.txt" },
    })) as {
      content: { text?: string }[];
    };
    expect(result.content.map((c) => c.text ?? "").join("")).toContain("mcp-side");
    await client.close();
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
    const gone = await exports.default.fetch(
      new Request(`http://127.0.0.1/mcp/sandboxes/${sbx.id}`, {
        method: "POST",
        headers: {
          Host: "127.0.0.1",
          Authorization: "Bearer test-api-token",
          "content-type": "application/json",
        },
        body: "{}",
      }),
    );
    expect(gone.status).toBe(410);
  }, 60_000);

  it("bash with 100,000 lines in a sandbox: the tail window, exact totals and the full spill", async () => {
    const sbx = await createSandbox();
    const created = await create({
      tool: "bash",
      args: { command: "seq 1 100000" },
      sandbox: sbx.id,
      toolCallId: freshId("sbx-big"),
    });
    const result = (await (await call(`/v1/invocations/${created.id}/result?wait=30`)).json()) as {
      content: { text: string }[];
      truncation: { totalLines: number; outputLines: number };
    };
    const text = result.content.map((c) => c.text).join("");
    expect(text).toContain("\n100000\n");
    expect(text).not.toContain("\n90000\n");
    expect(result.truncation.totalLines).toBe(100_000);
    const spill = await call(`/v1/invocations/${created.id}/spill`);
    expect(spill.status).toBe(200);
    const all = await spill.text();
    expect(all.length).toBe(588_895);
    expect(all.startsWith("1\n2\n3\n")).toBe(true);
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("files go in and out as tar through the Worker", async () => {
    const sbx = await createSandbox();
    await bash(sbx.id, "mkdir -p src && echo hello > src/a.txt");
    const down = await call(`/v1/sandboxes/${sbx.id}/files?path=src`);
    expect(down.status).toBe(200);
    const tar = new Uint8Array(await down.arrayBuffer());
    expect(new TextDecoder().decode(tar.subarray(0, 100))).toContain("src");
    const up = await call(`/v1/sandboxes/${sbx.id}/files?path=copy`, { method: "PUT", body: tar });
    expect(up.status, await up.clone().text()).toBe(200);
    expect((await bash(sbx.id, "cat copy/src/a.txt")).text).toContain("hello");
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("a refused archive is a 400 with its reason through the Worker, 10 times of 10", async () => {
    // Before the host read refused bodies to the end, 8 of 20 such answers lost their
    // reason on the way ("Bad Request"), and the issue saw 502 sandbox_unreachable.
    const sbx = await createSandbox();
    // A valid header whose name climbs out, then 12 MiB the host must read before answering.
    const header = new Uint8Array(512);
    const put = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
    put(0, "../escape.txt");
    put(100, "0000644\0");
    put(124, "00000000001\0");
    put(148, "        ");
    put(156, "0");
    put(257, "ustar\u000000");
    put(
      148,
      `${header
        .reduce((a, b) => a + b, 0)
        .toString(8)
        .padStart(6, "0")}\0 `,
    );
    const body = new Uint8Array(512 + 12 * 1024 * 1024);
    body.set(header);
    const statuses: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call(`/v1/sandboxes/${sbx.id}/files?path=in`, { method: "PUT", body });
      const text = await res.text();
      statuses.push(
        `${res.status} ${/leaves the workspace/.test(text) ? "refusal" : text.slice(0, 80)}`,
      );
    }
    expect(statuses).toEqual(Array.from({ length: 10 }, () => "400 refusal"));
    expect((await bash(sbx.id, "ls -A")).text).toBe("(no output)");
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("delete with a call running settles it as cancelled with its output kept; later calls are 410 'deleted'", async () => {
    const sbx = await createSandbox();
    const created = await create({
      tool: "bash",
      args: { command: "echo before-delete; sleep 60" },
      sandbox: sbx.id,
      toolCallId: freshId("sbx-del"),
    });
    for (let i = 0; i < 100; i++) {
      const v = (await (await call(`/v1/invocations/${created.id}`)).json()) as { state: unknown };
      if (JSON.stringify(v.state).includes("before-delete")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const deleted = await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
    expect(((await deleted.json()) as SandboxView).status).toBe("deleted");
    const result = (await (await call(`/v1/invocations/${created.id}/result?wait=10`)).json()) as {
      content: { text: string }[];
    };
    expect(result.content.map((c) => c.text).join("")).toContain("[Cancelled:");
    const settled = (await (await call(`/v1/invocations/${created.id}`)).json()) as {
      cancelled?: boolean;
    };
    expect(settled.cancelled).toBe(true);
    expect(result.content.map((c) => c.text).join("")).toContain("before-delete");
    const after = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: sbx.id,
    });
    expect(await expectError(after, 410, "gone")).toMatch(/is deleted: it was deleted/);
    await expectError(await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" }), 410, "gone");
  }, 60_000);

  it("an unknown sandbox id is a 404, a malformed one a 400", async () => {
    const unknown = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: "sbx_default_00000000000000000000",
    });
    expect(await expectError(unknown, 404, "not_found")).toMatch(/no such sandbox/);
    await expectError(await call("/v1/sandboxes/nope"), 400, "bad_request");
    await expectError(await postJson("/v1/sandboxes", { host: "nowhere" }), 400, "bad_request");
    await expectError(
      await postJson("/v1/sandboxes", { limits: { diskBytes: 1 } }),
      400,
      "bad_request",
    );
  });

  it("the idle alarm ends it when unused (410 'expired'), and the host no longer has it", async () => {
    const sbx = await createSandbox({ idleTimeoutSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    const stub = env.SANDBOX_RECORDS.getByName(sbx.id);
    // The alarm may have fired on its own already, and may still be running: running it
    // again then finds nothing due, so wait for the record to say it ended.
    await runDurableObjectAlarm(stub);
    const statusOf = async () =>
      ((await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView).status;
    const deadline = Date.now() + 10_000;
    while ((await statusOf()) !== "expired" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await statusOf()).toBe("expired");
    const after = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: sbx.id,
    });
    expect(await expectError(after, 410, "gone")).toMatch(
      /is expired: it was idle for its timeout of 1 s/,
    );
    const onHost = await fetch(`${hostUrl()}/sandboxes/${sbx.id}/healthz`);
    expect(onHost.status).toBe(404);
  });

  it("a call or a keep-alive before the deadline moves it; the alarm then does not end it, and sets itself for the new deadline", async () => {
    const sbx = await createSandbox({ idleTimeoutSeconds: 2 });
    await new Promise((r) => setTimeout(r, 1200));
    const kept = (await (
      await call(`/v1/sandboxes/${sbx.id}/keepalive`, { method: "POST" })
    ).json()) as SandboxView;
    expect(Date.parse(kept.expiresAt!)).toBeGreaterThan(Date.parse(sbx.expiresAt!));
    await new Promise((r) => setTimeout(r, 1000));
    const stub = env.SANDBOX_RECORDS.getByName(sbx.id);
    await runDurableObjectAlarm(stub);
    expect(((await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView).status).toBe(
      "active",
    );
    // The use left the sooner alarm in place (decision 278); that alarm, come early, set
    // itself for the later deadline.
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(
      Date.parse(kept.expiresAt!),
    );
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  });

  it("a keep-alive that races the idle alarm either keeps it (200, still active) or is refused (410, expired)", async () => {
    // The alarm awaits the host before it ends the sandbox; a use in that window must
    // not be answered 200 and then ended anyway (nor bring an ended record back).
    for (let round = 0; round < 6; round++) {
      const sbx = await createSandbox({ idleTimeoutSeconds: 1 });
      await new Promise((r) => setTimeout(r, 1000 + round * 15));
      const stub = env.SANDBOX_RECORDS.getByName(sbx.id);
      const [kept] = await Promise.all([
        call(`/v1/sandboxes/${sbx.id}/keepalive`, { method: "POST" }),
        runDurableObjectAlarm(stub),
      ]);
      // The runtime's own alarm may be running too: let every alarm settle.
      await new Promise((r) => setTimeout(r, 300));
      await runDurableObjectAlarm(stub);
      const status = ((await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView).status;
      if (kept.status === 200) {
        expect(status, `round ${round}: kept, then`).toBe("active");
        await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
      } else {
        expect(await expectError(kept, 410, "gone")).toMatch(/is expired/);
        expect(status, `round ${round}: refused, then`).toBe("expired");
      }
    }
  });

  it("a command still running at the deadline keeps it alive", async () => {
    const sbx = await createSandbox({ idleTimeoutSeconds: 1 });
    const created = await create({
      tool: "bash",
      args: { command: "sleep 4" },
      sandbox: sbx.id,
      toolCallId: freshId("sbx-run"),
    });
    await new Promise((r) => setTimeout(r, 1500));
    await runDurableObjectAlarm(env.SANDBOX_RECORDS.getByName(sbx.id));
    expect(((await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView).status).toBe(
      "active",
    );
    const result = (await (await call(`/v1/invocations/${created.id}/result?wait=10`)).json()) as {
      isError: boolean;
    };
    expect(result.isError).toBe(false);
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 30_000);

  it("a sandbox its host lost is marked lost with a plain 410 on the next call", async () => {
    const sbx = await createSandbox();
    await firstCall(sbx.id);
    // What a host restart does: the host forgets it (removed behind the Worker's back).
    await forgetOnHost(sbx.id);
    await expectLost(sbx.id);
    expect(((await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView).status).toBe(
      "lost",
    );
  });

  it("the first call right after its create is not checked with the host again: a sandbox lost between them fails that call, and the next is a 410", async () => {
    const sbx = await createSandbox();
    await forgetOnHost(sbx.id);
    const first = await postJson("/v1/invocations?wait=30", {
      tool: "bash",
      args: { command: "echo never" },
      sandbox: sbx.id,
    });
    expect(first.status).toBe(201);
    const body = (await first.json()) as {
      status: string;
      result: { isError: boolean; content: { text?: string }[] };
    };
    expect(body.status).toBe("settled");
    expect(body.result.isError).toBe(true);
    expect(body.result.content.map((c) => c.text).join("")).toContain(
      `(404 not_found): no sandbox '${sbx.id}' on this host`,
    );
    await expectLost(sbx.id);
  });

  it("a first call later than JUST_MADE_MS after the create asks the host: a sandbox lost meanwhile is a 410", async () => {
    const sbx = await createSandbox();
    await forgetOnHost(sbx.id);
    await new Promise((r) => setTimeout(r, JUST_MADE_MS + 500));
    await expectLost(sbx.id);
  }, 30_000);

  it("a sandbox whose host is down is a 502 within seconds, never a hang", async () => {
    const sbx = await createSandbox();
    await firstCall(sbx.id);
    await runInDurableObject(env.SANDBOX_RECORDS.getByName(sbx.id), async (_obj, state) => {
      const record = (await state.storage.get<Record<string, unknown>>("record"))!;
      await state.storage.put("record", { ...record, placement: "down" });
    });
    const started = Date.now();
    const after = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: sbx.id,
    });
    expect(await expectError(after, 502, "sandbox_unreachable")).toMatch(/sandbox host "down"/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

function hostUrl(): string {
  return (JSON.parse(env.SANDBOXES ?? "{}") as Record<string, string>).default!;
}

/** What a host restart does: the host forgets the sandbox (removed behind the Worker's back). */
async function forgetOnHost(id: string): Promise<void> {
  await fetch(`${hostUrl()}/v1/sandboxes/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${env.SANDBOX_TOKEN}` },
  });
}

/**
 * Its first call, to its end: that call takes the create's answer (decision 275), so the
 * host is asked from the next call on.
 */
async function firstCall(id: string): Promise<void> {
  const first = await postJson("/v1/invocations?wait=30", {
    tool: "bash",
    args: { command: "true" },
    sandbox: id,
  });
  expect(((await first.json()) as { status: string }).status).toBe("settled");
}

/** A call in it is the 410 of a sandbox its host no longer has. */
async function expectLost(id: string): Promise<void> {
  const after = await postJson("/v1/invocations", {
    tool: "bash",
    args: { command: "true" },
    sandbox: id,
  });
  expect(await expectError(after, 410, "gone")).toMatch(
    /is lost: its host "default" no longer has it/,
  );
}
