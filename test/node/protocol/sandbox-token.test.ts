// Sandbox tokens' text (decision 250): what the Worker mints, what the pi extension and
// the CLI read the sandbox from, and the signature check that runs before any lookup.
import { describe, expect, it } from "vitest";
import { settingsFromEnv } from "../../../src/pi/settings.ts";
import {
  mintSandboxToken,
  newTokenNonce,
  parseSandboxToken,
  sandboxOfToken,
  signatureHolds,
} from "../../../src/protocol/index.ts";

const SANDBOX = "sbx_default_0123456789abcdef0123";

describe("sandbox tokens", () => {
  it("a minted token names its sandbox, and its signature holds under its secret only", async () => {
    const nonce = newTokenNonce();
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const token = await mintSandboxToken("s3cret", SANDBOX, nonce);
    expect(token).toMatch(
      /^sbt1\.sbx_default_0123456789abcdef0123\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/,
    );
    const parts = parseSandboxToken(token);
    expect(parts).toMatchObject({ sandbox: SANDBOX, nonce });
    expect(await signatureHolds("s3cret", parts!)).toBe(true);
    expect(await signatureHolds("another", parts!)).toBe(false);
    // The same MAC over another sandbox or nonce does not hold.
    expect(
      await signatureHolds("s3cret", { ...parts!, sandbox: "sbx_default_ffffffffffffffffffff" }),
    ).toBe(false);
    expect(await signatureHolds("s3cret", { ...parts!, nonce: newTokenNonce() })).toBe(false);
  });

  it("anything not shaped like one (the API token among them) is not read as one", () => {
    for (const text of [
      "test-api-token",
      "",
      `sbt1.${SANDBOX}.short.mac`,
      `sbt2.${SANDBOX}.${"a".repeat(22)}.${"b".repeat(43)}`,
      `sbt1.default.${"a".repeat(22)}.${"b".repeat(43)}`,
      `sbt1.${SANDBOX}.${"a".repeat(22)}.${"b".repeat(43)}.extra`,
    ]) {
      expect(parseSandboxToken(text), text).toBeNull();
      expect(sandboxOfToken(text), text).toBeNull();
    }
  });

  it("the pi extension runs in a sandbox token's sandbox unless TOOLWIRE_SANDBOX names one; the API token alone gets a sandbox per session", async () => {
    const token = await mintSandboxToken("s3cret", SANDBOX, newTokenNonce());
    const url = "http://127.0.0.1:8787";
    expect(settingsFromEnv({ TOOLWIRE_URL: url, TOOLWIRE_TOKEN: token }).sandbox).toBe(SANDBOX);
    expect(
      settingsFromEnv({ TOOLWIRE_URL: url, TOOLWIRE_TOKEN: token, TOOLWIRE_SANDBOX: "other" })
        .sandbox,
    ).toBe("other");
    // null: the pi session makes its own sandbox (decision 223)
    expect(settingsFromEnv({ TOOLWIRE_URL: url, TOOLWIRE_TOKEN: "api-token" }).sandbox).toBeNull();
  });
});
