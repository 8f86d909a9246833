import { describe, expect, it } from "vitest";
import {
  mintSubscribeToken,
  SUBSCRIBE_TOKEN_TTL_SECONDS,
  verifySubscribeToken,
} from "../../../src/worker/index.ts";

const SECRET = "unit-secret";
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

describe("subscribe tokens", () => {
  it("verify for the invocation they were minted for, until they expire", async () => {
    const token = await mintSubscribeToken(SECRET, "call_1", NOW);
    const ok = await verifySubscribeToken(SECRET, token, "call_1", NOW);
    expect(ok).toEqual({ ok: true, invocationId: "call_1", expiresAt: NOW / 1000 + 3600 });
    expect(SUBSCRIBE_TOKEN_TTL_SECONDS).toBe(3600);
    const lastMs = NOW + SUBSCRIBE_TOKEN_TTL_SECONDS * 1000 - 1;
    expect((await verifySubscribeToken(SECRET, token, "call_1", lastMs)).ok).toBe(true);
  });

  it("expire exactly at their expiry second", async () => {
    const token = await mintSubscribeToken(SECRET, "call_1", NOW, 60);
    const at = await verifySubscribeToken(SECRET, token, "call_1", NOW + 60_000);
    expect(at).toEqual({ ok: false, reason: "expired" });
  });

  it("are refused for another invocation", async () => {
    const token = await mintSubscribeToken(SECRET, "call_1", NOW);
    expect(await verifySubscribeToken(SECRET, token, "call_2", NOW)).toEqual({
      ok: false,
      reason: "other_invocation",
    });
  });

  it("are refused when signed with another secret", async () => {
    const token = await mintSubscribeToken("other-secret", "call_1", NOW);
    expect(await verifySubscribeToken(SECRET, token, "call_1", NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("are refused when any part is altered", async () => {
    const token = await mintSubscribeToken(SECRET, "call_1", NOW);
    const [v, exp = "", id = "", sig = ""] = token.split(".");
    const laterExpiry = `${v}.${Number(exp) + 1}.${id}.${sig}`;
    const otherId = `${v}.${exp}.${btoa("call_2").replace(/=+$/, "")}.${sig}`;
    const flipped = `${v}.${exp}.${id}.${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`;
    for (const forged of [laterExpiry, otherId, flipped]) {
      expect(await verifySubscribeToken(SECRET, forged, "call_1", NOW)).toEqual({
        ok: false,
        reason: "bad_signature",
      });
    }
  });

  it("report malformed tokens as malformed", async () => {
    for (const bad of [
      "",
      "v1",
      "v2.1.Y2FsbF8x.c2ln",
      "v1.soon.Y2FsbF8x.c2ln",
      "v1.1.@@.c2ln",
      "v1.1.a.b.c",
    ]) {
      expect(await verifySubscribeToken(SECRET, bad, "call_1", NOW)).toEqual({
        ok: false,
        reason: "malformed",
      });
    }
  });
});
