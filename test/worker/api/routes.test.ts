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
});
