// Attach tokens (decision 191): they type into the one call they were minted for, as
// the name signed in them, for an hour; a subscribe token never types and an attach
// token never reads.
import { describe, expect, it } from "vitest";
import { toBase64Url } from "../../../src/protocol/index.ts";
import { mintAttachToken, verifyAttachToken } from "../../../src/worker/attach-token.ts";
import { mintSubscribeToken, verifySubscribeToken } from "../../../src/worker/subscribe-token.ts";

const SECRET = "unit-secret";
const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);

describe("attach tokens", () => {
  it("type into their call as their name, until the hour is over", async () => {
    const token = await mintAttachToken(SECRET, "call_1", "ada lovelace", NOW);
    expect(await verifyAttachToken(SECRET, token, "call_1", NOW)).toEqual({
      ok: true,
      name: "ada lovelace",
      expiresAt: NOW / 1000 + 3600,
    });
    expect((await verifyAttachToken(SECRET, token, "call_1", NOW + 3_599_999)).ok).toBe(true);
    expect(await verifyAttachToken(SECRET, token, "call_1", NOW + 3_600_000)).toEqual({
      ok: false,
      reason: "expired",
    });
  });

  it("are another subject for another call, even one whose id starts the same", async () => {
    const token = await mintAttachToken(SECRET, "call_1", "ada", NOW);
    for (const id of ["call_2", "call_", "call_10"]) {
      expect(await verifyAttachToken(SECRET, token, id, NOW)).toEqual({
        ok: false,
        reason: "other_subject",
      });
    }
  });

  it("a subscribe token does not type, an attach token does not read", async () => {
    const subscribe = await mintSubscribeToken(SECRET, "call_1", NOW);
    expect(await verifyAttachToken(SECRET, subscribe, "call_1", NOW)).toEqual({
      ok: false,
      reason: "other_subject",
    });
    const attach = await mintAttachToken(SECRET, "call_1", "ada", NOW);
    expect(await verifySubscribeToken(SECRET, attach, "call_1", NOW)).toEqual({
      ok: false,
      reason: "other_invocation",
    });
  });

  it("a tampered or foreign-secret token does not verify", async () => {
    const token = await mintAttachToken(SECRET, "call_1", "ada", NOW);
    const [v, expiry, subject, mac] = token.split(".");
    const renamed = `${v}.${expiry}.${toBase64Url(new TextEncoder().encode("attach/call_1/eve"))}.${mac}`;
    expect(await verifyAttachToken(SECRET, renamed, "call_1", NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(subject).toBeDefined();
    expect((await verifyAttachToken("other", token, "call_1", NOW)).ok).toBe(false);
    expect(await verifyAttachToken(SECRET, "sbt1.x.y.z", "call_1", NOW)).toEqual({
      ok: false,
      reason: "malformed",
    });
  });
});
