import { describe, expect, it } from "vitest";
import { call, expectError } from "./helpers.ts";

describe("routing", () => {
  it("answers /healthz without credentials", async () => {
    const res = await call("/healthz", {}, false);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("answers unknown routes with 404 in the error shape", async () => {
    const message = await expectError(await call("/v1/nothing"), 404, "not_found");
    expect(message).toContain("GET /v1/nothing");
    await expectError(await call("/elsewhere", {}, false), 404, "not_found");
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const put = await call("/v1/invocations", { method: "PUT" });
    expect(put.headers.get("Allow")).toBe("POST");
    await expectError(put, 405, "method_not_allowed");

    const del = await call("/v1/invocations/call_1", { method: "DELETE" });
    expect(del.headers.get("Allow")).toBe("GET, HEAD");
    await expectError(del, 405, "method_not_allowed");

    const get = await call("/v1/invocations/call_1/cancel");
    expect(get.headers.get("Allow")).toBe("POST");
    await expectError(get, 405, "method_not_allowed");
  });

  it("rejects ids that cannot name an invocation with 400", async () => {
    for (const bad of ["-leading-dash", "a%20b", "x".repeat(129), "%C3%A9"]) {
      const message = await expectError(await call(`/v1/invocations/${bad}`), 400, "bad_request");
      expect(message).toContain("path.id");
    }
  });

  it("answers a subscription to an unknown invocation with 404 in the error shape, from the DO", async () => {
    const events = await call("/v1/invocations/never_created_sub/events");
    expect(events.headers.get("Cache-Control")).toBe("no-store");
    expect(await expectError(events, 404, "not_found")).toContain("No invocation with this id");
    const socket = await call("/v1/invocations/never_created_sub/socket", {
      headers: { Upgrade: "websocket" },
    });
    expect(await expectError(socket, 404, "not_found")).toContain("No invocation with this id");
  });

  it("refuses a socket request without Upgrade with 426 and the Upgrade header", async () => {
    const res = await call("/v1/invocations/never_created_sub/socket");
    expect(res.headers.get("Upgrade")).toBe("websocket");
    await expectError(res, 426, "upgrade_required");
  });
});
