import { describe, expect, it } from "vitest";
import { mintSubscribeToken } from "../../../src/worker/index.ts";
import { call, create, expectError, freshId, SUBSCRIBE_SECRET } from "./helpers.ts";

describe("GET /view/:id", () => {
  it("serves the viewer page for a valid subscribe token, uncached and without referrers", async () => {
    const { id } = await create({
      tool: "external",
      toolCallId: freshId("view"),
      args: { name: "x" },
    });
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now());
    const res = await call(`/view/${id}?token=${token}`, {}, false);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(await res.text()).toContain("<html");
  });

  it("forbids every origin to frame it, with a header CSP and X-Frame-Options", async () => {
    const { id } = await create({
      tool: "external",
      toolCallId: freshId("view"),
      args: { name: "x" },
    });
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now());
    const res = await call(`/view/${id}?token=${token}`, {}, false);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toBe("frame-ancestors 'none'");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    // The page's own (meta) policy still applies on top: scripts stay hash-pinned.
    expect(await res.text()).toMatch(
      /http-equiv="Content-Security-Policy"[^>]*script-src 'sha256-/,
    );
  });

  it("needs a token: none is 401, the agent's bearer token does not open it either", async () => {
    const message = await expectError(
      await call("/view/call_view_1", {}, false),
      401,
      "unauthorized",
    );
    expect(message).toContain("missing ?token=");
    await expectError(await call("/view/call_view_1"), 401, "unauthorized");
  });
});
