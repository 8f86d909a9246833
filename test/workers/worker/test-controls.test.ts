// The test controls of docs/testing.md exist only where TEST_CONTROLS is on: this
// project's Worker (like a deployed one) does not set it, so they are unknown routes.
// The sample agent's tests (test/e2e/miniflare-sample.test.ts) use them switched on.
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";

describe("the test controls, switched off", () => {
  it.each(["drop-subscribers", "evict"])("answers %s as an unknown route", async (action) => {
    const res = await call(`/v1/test/invocations/call_controls_off/${action}`, { method: "POST" });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("not_found");
    expect(body.error.message).toMatch(/^no route POST \/v1\/test\/invocations\//);
  });
});
