import { describe, expect, it } from "vitest";
import { isIssuedSessionId, mintSessionId } from "../../../src/mcp/session-id.ts";

describe("session ids", () => {
  it("verify under the secret that signed them, and only that one", async () => {
    const id = await mintSessionId("secret-a");
    expect(id).toMatch(/^ms1\.[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{43}$/);
    expect(await isIssuedSessionId("secret-a", id)).toBe(true);
    expect(await isIssuedSessionId("secret-b", id)).toBe(false);
    expect(await mintSessionId("secret-a")).not.toBe(id);
  });

  it("refuse any tampered part, as an attacker would try", async () => {
    const id = await mintSessionId("secret-a");
    const [prefix, nonce, mac] = id.split(".") as [string, string, string];
    const flip = (s: string) => `${s.slice(0, -1)}${s.endsWith("A") ? "B" : "A"}`;
    for (const forged of [
      `${prefix}.${flip(nonce)}.${mac}`,
      `${prefix}.${nonce}.${flip(mac)}`,
      `ms2.${nonce}.${mac}`,
      `${prefix}.${nonce}`,
      `${id}.extra`,
      "",
      `${prefix}.${nonce.slice(1)}.${mac}`,
    ]) {
      expect(await isIssuedSessionId("secret-a", forged)).toBe(false);
    }
  });
});
