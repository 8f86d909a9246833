// How the pi extension reads where its calls run (docs/pi.md, "A sandbox per pi
// session"): unset TOOLWIRE_SANDBOX is a sandbox per session, `default` and ids pin,
// and the new sandbox's settings come from TOOLWIRE_SANDBOX_*; a bad one is named.
import { describe, expect, it } from "vitest";
import { durationSeconds } from "../../../src/client/duration.ts";
import { missingSetting, settingsFromEnv } from "../../../src/pi/settings.ts";

const base = { TOOLWIRE_URL: "http://127.0.0.1:8787/", TOOLWIRE_TOKEN: "t" };

describe("pi settings", () => {
  it("no TOOLWIRE_SANDBOX: a sandbox per session; default and an id pin", () => {
    expect(settingsFromEnv(base)).toMatchObject({
      url: "http://127.0.0.1:8787",
      sandbox: null,
      newSandbox: {},
      problem: null,
    });
    expect(settingsFromEnv({ ...base, TOOLWIRE_SANDBOX: "default" }).sandbox).toBe("default");
    const id = "sbx_default_0123456789abcdef0123";
    expect(settingsFromEnv({ ...base, TOOLWIRE_SANDBOX: id }).sandbox).toBe(id);
  });

  it("the new sandbox's backend, idle timeout, network and limits", () => {
    const settings = settingsFromEnv({
      ...base,
      TOOLWIRE_SANDBOX_BACKEND: "container",
      TOOLWIRE_SANDBOX_IDLE: "15m",
      TOOLWIRE_SANDBOX_ALLOW: "registry.npmjs.org, *.github.com:22,",
      TOOLWIRE_SANDBOX_LIMITS: '{"diskBytes":268435456}',
    });
    expect(settings.newSandbox).toEqual({
      backend: "container",
      idleTimeoutSeconds: 900,
      network: { allow: ["registry.npmjs.org", "*.github.com:22"] },
      limits: { diskBytes: 268435456 },
    });
    expect(missingSetting(settings)).toBeNull();
    expect(settingsFromEnv({ ...base, TOOLWIRE_SANDBOX_ALLOW: "" }).newSandbox).toEqual({
      network: { allow: [] },
    });
  });

  it("a bad setting is what every call reports, naming the variable", () => {
    const bad = settingsFromEnv({
      ...base,
      TOOLWIRE_SANDBOX_BACKEND: "vm",
      TOOLWIRE_SANDBOX_IDLE: "soon",
      TOOLWIRE_SANDBOX_LIMITS: "{",
    });
    const problem = missingSetting(bad) ?? "";
    expect(problem).toContain('TOOLWIRE_SANDBOX_BACKEND must be host or container, got "vm"');
    expect(problem).toContain(
      'TOOLWIRE_SANDBOX_IDLE must be a duration such as 900, 15m or 2h, got "soon"',
    );
    expect(problem).toContain("TOOLWIRE_SANDBOX_LIMITS must be JSON");
  });
});

describe("durationSeconds", () => {
  it("takes seconds and s, m, h, d; refuses zero, fractions and other words", () => {
    expect(durationSeconds("1")).toBe(1);
    expect(durationSeconds("0")).toBeNull();
    expect(durationSeconds("90s")).toBe(90);
    expect(durationSeconds("15m")).toBe(900);
    expect(durationSeconds("2h")).toBe(7200);
    expect(durationSeconds("7d")).toBe(604_800);
    expect(durationSeconds("1.5m")).toBeNull();
    expect(durationSeconds("-5")).toBeNull();
    expect(durationSeconds("5 weeks")).toBeNull();
  });
});
