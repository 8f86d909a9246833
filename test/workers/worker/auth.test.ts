import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app, mintSubscribeToken } from "../../../src/worker/index.ts";
import { API_TOKEN, call, expectError, ORIGIN, SUBSCRIBE_SECRET } from "./helpers.ts";

const ID = "call_auth_1";
const READ_ROUTES = [
  `/v1/invocations/${ID}`,
  `/v1/invocations/${ID}/result`,
  `/v1/invocations/${ID}/events`,
  `/v1/invocations/${ID}/socket`,
  `/view/${ID}`,
];

function token(id: string, nowMs = Date.now(), ttl?: number): Promise<string> {
  return mintSubscribeToken(SUBSCRIBE_SECRET, id, nowMs, ttl);
}

describe("bearer token", () => {
  const cases: [string, Record<string, string>][] = [
    ["missing", {}],
    ["wrong", { Authorization: "Bearer not-the-token" }],
    ["a prefix of the right one", { Authorization: `Bearer ${API_TOKEN.slice(0, -1)}` }],
    ["the right one plus a byte", { Authorization: `Bearer ${API_TOKEN}x` }],
    ["not a bearer scheme", { Authorization: `Basic ${btoa(`u:${API_TOKEN}`)}` }],
    ["empty", { Authorization: "Bearer " }],
  ];
  for (const [label, headers] of cases) {
    it(`is required: ${label} -> 401`, async () => {
      const res = await call("/v1/tools", { headers }, false);
      expect(res.headers.get("WWW-Authenticate")).toBe('Bearer realm="toolwire"');
      await expectError(res, 401, "unauthorized");
    });
  }

  it("is accepted when it matches API_TOKEN", async () => {
    const res = await call(
      "/v1/tools",
      { headers: { Authorization: `bearer ${API_TOKEN}` } },
      false,
    );
    expect(res.status).toBe(200);
  });
});

describe("API_TOKEN not configured", () => {
  const unconfigured = { ...env, API_TOKEN: undefined } as Env;
  const send = (path: string, init: RequestInit = {}) =>
    app.fetch(new Request(`${ORIGIN}${path}`, init), unconfigured);

  it("refuses every API call with 503, whatever the caller presents", async () => {
    const sub = await token(ID);
    const requests: [string, RequestInit][] = [
      ["/v1/tools", {}],
      ["/v1/tools", { headers: { Authorization: "Bearer " } }],
      ["/v1/invocations", { method: "POST", body: "{}" }],
      [`/v1/invocations/${ID}`, { headers: { Authorization: `Bearer ${API_TOKEN}` } }],
      [`/v1/invocations/${ID}?token=${sub}`, {}],
      [`/v1/invocations/${ID}/events?token=${sub}`, {}],
      [`/v1/invocations/${ID}/cancel`, { method: "POST" }],
      ["/v1/nothing-here", {}],
    ];
    for (const [path, init] of requests) {
      const message = await expectError(await send(path, init), 503, "not_configured");
      expect(message).toContain("API_TOKEN is not set");
    }
  });

  it("still answers /healthz", async () => {
    expect((await send("/healthz")).status).toBe(200);
  });
});

describe("subscribe tokens on routes", () => {
  it("are refused with 403 when issued for another invocation", async () => {
    const other = await token("call_auth_other");
    for (const path of READ_ROUTES) {
      const message = await expectError(
        await call(`${path}?token=${other}`, {}, false),
        403,
        "forbidden",
      );
      expect(message).toContain(`another invocation, not ${ID}`);
    }
  });

  it("are refused with 401 when expired", async () => {
    const expired = await token(ID, Date.now() - 7200_000);
    for (const path of READ_ROUTES) {
      const message = await expectError(
        await call(`${path}?token=${expired}`, {}, false),
        401,
        "unauthorized",
      );
      expect(message).toContain("expired");
    }
  });

  it("are refused with 401 when tampered with or malformed", async () => {
    const good = await token(ID);
    const [v, exp = "", id = "", sig = ""] = good.split(".");
    const forged = [`${v}.${Number(exp) + 3600}.${id}.${sig}`, `${good}x`, "garbage", ""];
    for (const bad of forged) {
      for (const path of READ_ROUTES) {
        const res = await call(`${path}?token=${encodeURIComponent(bad)}`, {}, false);
        await expectError(res, 401, "unauthorized");
      }
    }
  });

  it("are read-only: write routes and listings answer 403", async () => {
    const sub = await token(ID);
    const writes: [string, RequestInit][] = [
      [`/v1/invocations/${ID}/cancel?token=${sub}`, { method: "POST" }],
      [`/v1/invocations/${ID}/output?token=${sub}`, { method: "POST", body: '{"calls":[]}' }],
      [`/v1/invocations?token=${sub}`, { method: "POST", body: '{"tool":"external"}' }],
      [`/v1/tools?token=${sub}`, {}],
    ];
    for (const [path, init] of writes) {
      const message = await expectError(await call(path, init, false), 403, "forbidden");
      expect(message).toContain("read-only");
    }
  });

  it("that do not verify answer 401 on write routes and listings; valid ones (any invocation) 403", async () => {
    const now = Date.now();
    const good = await token(ID);
    const [v, exp = "", id = "", sig = ""] = good.split(".");
    const unverifiable: [string, string][] = [
      ["expired a second ago", await token(ID, now - 1000, 0)],
      ["expiring this very second", await token(ID, now, 0)],
      ["tampered expiry", `${v}.${Number(exp) + 3600}.${id}.${sig}`],
      ["one byte too many", `${good}x`],
      ["malformed", "garbage"],
      ["signed with another secret", await mintSubscribeToken("another-secret", ID, now)],
    ];
    const valid: [string, string][] = [
      ["fresh", good],
      ["expiring in two seconds", await token(ID, now, 2)],
      ["for another invocation", await token("call_auth_other")],
    ];
    const writes = (sub: string): [string, RequestInit][] => [
      [`/v1/invocations/${ID}/cancel?token=${sub}`, { method: "POST" }],
      [`/v1/invocations/${ID}/output?token=${sub}`, { method: "POST", body: '{"calls":[]}' }],
      [`/v1/invocations?token=${sub}`, { method: "POST", body: '{"tool":"external"}' }],
      [`/v1/tools?token=${sub}`, {}],
    ];
    for (const [label, sub] of unverifiable) {
      for (const [path, init] of writes(encodeURIComponent(sub))) {
        const res = await call(path, init, false);
        expect(res.headers.get("WWW-Authenticate"), label).toBe('Bearer realm="toolwire"');
        const message = await expectError(res, 401, "unauthorized");
        expect(message, label).toContain("Authorization: Bearer <API_TOKEN>");
      }
    }
    for (const [label, sub] of valid) {
      for (const [path, init] of writes(encodeURIComponent(sub))) {
        const message = await expectError(await call(path, init, false), 403, "forbidden");
        expect(message, label).toContain("read-only");
      }
    }
  });

  it("without any credential, read routes answer 401", async () => {
    for (const path of READ_ROUTES)
      await expectError(await call(path, {}, false), 401, "unauthorized");
  });

  it("that are valid pass auth: an unknown invocation is then a 404, not a 401", async () => {
    const sub = await token(ID);
    for (const path of READ_ROUTES.slice(0, 3)) {
      await expectError(await call(`${path}?token=${sub}`, {}, false), 404, "not_found");
    }
  });
});
