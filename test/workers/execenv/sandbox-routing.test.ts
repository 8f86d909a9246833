import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resolveSandbox, sandboxTable, sandboxTokenName } from "../../../src/execenv/index.ts";
import { app } from "../../../src/worker/index.ts";
import { authed, call, expectError, freshId, ORIGIN } from "../worker/helpers.ts";

function withConfig(vars: Partial<Env>): Env {
  return { ...env, SANDBOX_TOKEN: undefined, ...vars } as Env;
}

describe("sandbox routing", () => {
  it("uses wrangler.toml's default table: one sandbox named default on 127.0.0.1:8788", () => {
    expect(sandboxTable(env)).toEqual({ ok: true, value: { default: "http://127.0.0.1:8788" } });
    expect(sandboxTable({ SANDBOXES: undefined })).toEqual({
      ok: true,
      value: { default: "http://127.0.0.1:8788" },
    });
  });

  it("takes SANDBOX_TOKEN for default and SANDBOX_TOKEN_<NAME> (falling back to SANDBOX_TOKEN) for others", () => {
    const config = withConfig({
      SANDBOXES: '{"default":"http://a.test/","gpu-1":"https://gpu.test","cpu":"http://cpu.test"}',
      SANDBOX_TOKEN: "t-default",
      SANDBOX_TOKEN_GPU_1: "t-gpu",
    });
    expect(sandboxTokenName("gpu-1")).toBe("SANDBOX_TOKEN_GPU_1");
    expect(resolveSandbox(config, "default")).toEqual({
      ok: true,
      value: {
        name: "default",
        url: "http://a.test",
        token: "t-default",
        fetch: expect.any(Function),
      },
    });
    expect(resolveSandbox(config, "gpu-1")).toEqual({
      ok: true,
      value: {
        name: "gpu-1",
        url: "https://gpu.test",
        token: "t-gpu",
        fetch: expect.any(Function),
      },
    });
    expect(resolveSandbox(config, "cpu")).toEqual({
      ok: true,
      value: {
        name: "cpu",
        url: "http://cpu.test",
        token: "t-default",
        fetch: expect.any(Function),
      },
    });
  });

  it("answers 400 for an unknown name, listing the configured ones", () => {
    const result = resolveSandbox(withConfig({ SANDBOX_TOKEN: "t" }), "nope");
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.status).toBe(400);
      expect(result.error.message).toContain('unknown sandbox "nope" (configured: default)');
    }
  });

  it("answers 503 naming the problem when SANDBOXES is broken or a token is missing", () => {
    const cases: [Partial<Env>, string, string][] = [
      [{ SANDBOXES: "{not json" }, "default", "SANDBOXES is not valid JSON"],
      [{ SANDBOXES: '["http://a.test"]' }, "default", "SANDBOXES must be a JSON object"],
      [
        { SANDBOXES: '{"default":"ftp://a.test"}' },
        "default",
        "SANDBOXES.default must be an http(s) URL",
      ],
      [{ SANDBOXES: '{"default":42}' }, "default", "SANDBOXES.default must be an http(s) URL"],
      [{}, "default", "set SANDBOX_TOKEN_DEFAULT or SANDBOX_TOKEN"],
    ];
    for (const [vars, name, message] of cases) {
      const result = resolveSandbox(withConfig(vars), name);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.status).toBe(503);
        expect(result.error.code).toBe("not_configured");
        expect(result.error.message).toContain(message);
      }
    }
  });
});

describe("container sandboxes", () => {
  const id = "sbx_container_0123456789abcdef0123";

  it("reserves the name container in SANDBOXES, saying why", () => {
    const table = sandboxTable({ SANDBOXES: '{"container":"http://c.test"}' });
    expect(table.ok).toBe(false);
    expect(table.ok ? "" : table.error.message).toMatch(/"container" is reserved/);
  });

  it("answers 503 for a container id where no container backend is bound", () => {
    const target = resolveSandbox(withConfig({ SANDBOX_CONTAINERS: undefined }), id);
    expect(target.ok ? null : target.error.code).toBe("not_configured");
    expect(target.ok ? "" : target.error.message).toMatch(/wrangler\.containers\.toml/);
  });

  it("POST /v1/sandboxes with backend container is a 503 here (wrangler.toml binds no containers), creating nothing", async () => {
    const before = (await (await call("/v1/sandboxes")).json()) as { sandboxes: unknown[] };
    const res = await call("/v1/sandboxes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ backend: "container" }),
    });
    expect(await expectError(res, 503, "not_configured")).toMatch(/wrangler\.containers\.toml/);
    const after = (await (await call("/v1/sandboxes")).json()) as { sandboxes: unknown[] };
    expect(after.sandboxes.length).toBe(before.sandboxes.length);
  });

  it("a call naming a container id is a 503 here too, starting nothing", async () => {
    const res = await call("/v1/invocations", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        tool: "bash",
        args: { command: "true" },
        sandbox: id,
        toolCallId: freshId("ct"),
      }),
    });
    expect(await expectError(res, 503, "not_configured")).toMatch(/no container backend/);
  });

  it("sends every request of a container id to that sandbox's container DO, without the Worker's token", async () => {
    const asked: { name: string; url: string; auth: string | null }[] = [];
    const SANDBOX_CONTAINERS = {
      getByName: (name: string) => ({
        fetch: async (request: Request) => {
          asked.push({ name, url: request.url, auth: request.headers.get("authorization") });
          return new Response("ok");
        },
      }),
    };
    const config = withConfig({ SANDBOX_TOKEN: "worker-secret" });
    const target = resolveSandbox({ ...config, SANDBOX_CONTAINERS }, id);
    if (!target.ok) throw new Error(target.error.message);
    expect(target.value.token).toBe("");
    await target.value.fetch(`${target.value.url}/healthz`, {
      headers: { authorization: `Bearer ${target.value.token}` },
    });
    expect(asked).toEqual([
      { name: id, url: `http://container.internal/sandboxes/${id}/healthz`, auth: "Bearer" },
    ]);
  });
});

describe("POST /v1/invocations and sandbox routing", () => {
  it("answers 503 naming SANDBOXES when it cannot be parsed, and creates nothing", async () => {
    const toolCallId = freshId("sbx");
    const broken = withConfig({ SANDBOXES: "{oops" });
    const body = JSON.stringify({ tool: "emit", args: { lines: 1 }, toolCallId });
    const req = new Request(`${ORIGIN}/v1/invocations`, authed({ method: "POST", body }));
    const message = await expectError(await app.fetch(req, broken), 503, "not_configured");
    expect(message).toContain("SANDBOXES is not valid JSON");
    await expectError(await call(`/v1/invocations/${toolCallId}`), 404, "not_found");
  });
});

describe("sandbox names are looked up as own names only", () => {
  const inherited = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

  it("refuses Object.prototype keys with a 400 unknown sandbox, for every kind of tool, storing nothing", async () => {
    const tools: [string, Record<string, unknown>][] = [
      ["bash", { command: "true" }],
      ["read", { path: "a.txt" }],
      ["external", { name: "x" }],
      ["web_fetch", { url: "https://example.com/" }],
      ["emit", { lines: 1 }],
    ];
    for (const sandbox of inherited) {
      for (const [tool, args] of tools) {
        const toolCallId = freshId("proto");
        const res = await call("/v1/invocations", {
          method: "POST",
          body: JSON.stringify({ tool, args, toolCallId, sandbox }),
        });
        const message = await expectError(res, 400, "bad_request");
        expect(message).toContain(`unknown sandbox "${sandbox}" (configured: default)`);
        await expectError(await call(`/v1/invocations/${toolCallId}`), 404, "not_found");
      }
    }
  });

  it("accepts exactly the configured name and refuses one character less or more", async () => {
    for (const sandbox of ["defaul", "defaultt"]) {
      const res = await call("/v1/invocations", {
        method: "POST",
        body: JSON.stringify({ tool: "external", args: { name: "x" }, sandbox }),
      });
      await expectError(res, 400, "bad_request");
    }
    const res = await call("/v1/invocations", {
      method: "POST",
      body: JSON.stringify({ tool: "external", args: { name: "x" }, sandbox: "default" }),
    });
    expect(res.status).toBe(201);
  });

  it("resolves a configured sandbox that happens to be called __proto__ or toString", () => {
    const config = withConfig({
      SANDBOXES: '{"__proto__":"http://proto.test","toString":"http://str.test"}',
      SANDBOX_TOKEN: "t",
    });
    expect(resolveSandbox(config, "__proto__")).toEqual({
      ok: true,
      value: {
        name: "__proto__",
        url: "http://proto.test",
        token: "t",
        fetch: expect.any(Function),
      },
    });
    expect(resolveSandbox(config, "toString")).toEqual({
      ok: true,
      value: { name: "toString", url: "http://str.test", token: "t", fetch: expect.any(Function) },
    });
    const unknown = resolveSandbox(config, "constructor");
    expect(unknown.ok).toBe(false);
  });
});
