// Preview tokens (decision 182): one lower-case DNS label that names one port of one
// sandbox until a time, refused when changed in any character, made with another secret,
// naming a placement this Worker does not have, or at and past its expiry.
import { describe, expect, it } from "vitest";
import {
  mintPreviewToken,
  PREVIEW_TOKEN,
  verifyPreviewToken,
} from "../../../src/protocol/preview-token.ts";

const secret = "preview-test-secret";
const claim = {
  sandboxId: "sbx_gpu-west-2_0123456789abcdef0123",
  port: 65_535,
  expiresAt: 2_000_000_000,
  nonce: 0xffff_fffe,
};
const places = ["default", "gpu-west-2", "container"];

describe("a preview token", () => {
  it("is one lower-case DNS label of 58 characters that gives its claim back", async () => {
    const token = await mintPreviewToken(secret, claim);
    expect(token).toMatch(PREVIEW_TOKEN);
    expect(token.length).toBeLessThanOrEqual(63);
    expect(await verifyPreviewToken(secret, token, places, 0)).toEqual({ ok: true, claim });
    const long = { ...claim, sandboxId: `sbx_${"a".repeat(32)}_ffffffffffffffffffff` };
    const longToken = await mintPreviewToken(secret, long);
    expect(await verifyPreviewToken(secret, longToken, ["a".repeat(32)], 0)).toEqual({
      ok: true,
      claim: long,
    });
  });

  it("works until its second and not at it", async () => {
    const token = await mintPreviewToken(secret, claim);
    const at = claim.expiresAt * 1000;
    expect((await verifyPreviewToken(secret, token, places, at - 1)).ok).toBe(true);
    expect(await verifyPreviewToken(secret, token, places, at)).toEqual({
      ok: false,
      reason: "expired",
    });
    expect(await verifyPreviewToken(secret, token, places, at + 1)).toEqual({
      ok: false,
      reason: "expired",
    });
  });

  it("is refused changed in any character, with another secret, for an unknown placement, or cut", async () => {
    const token = await mintPreviewToken(secret, claim);
    for (let i = 0; i < token.length; i++) {
      const other = token[i] === "a" ? "b" : "a";
      const changed = `${token.slice(0, i)}${other}${token.slice(i + 1)}`;
      const check = await verifyPreviewToken(secret, changed, places, 0);
      expect([i, check.ok]).toEqual([i, false]);
    }
    expect(await verifyPreviewToken("other", token, places, 0)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(await verifyPreviewToken(secret, token, ["default"], 0)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    for (const bad of [token.slice(0, 57), `${token}a`, token.toUpperCase(), ""]) {
      expect(await verifyPreviewToken(secret, bad, places, 0)).toEqual({
        ok: false,
        reason: "malformed",
      });
    }
  });
});
