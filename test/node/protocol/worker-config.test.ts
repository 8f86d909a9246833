import { describe, expect, it } from "vitest";
import { WORKER_DEFAULTS, workerConfig } from "../../../src/protocol/index.ts";

const DAY = 86_400_000;

/** Each duration setting: its variable, its field, its default in ms. */
const DURATIONS = [
  ["EXTERNAL_IDLE_TIMEOUT_SECONDS", "externalIdleTimeoutMs", 1_800_000],
  ["SANDBOX_REJOIN_SECONDS", "sandboxRejoinMs", 30_000],
  ["SANDBOX_STREAM_WINDOW_SECONDS", "sandboxStreamStretchMs", 10_000],
  ["SSE_KEEPALIVE_SECONDS", "sseKeepAliveMs", 25_000],
  ["MCP_KEEPALIVE_SECONDS", "mcpKeepAliveMs", 15_000],
  ["SANDBOX_IDLE_TIMEOUT_SECONDS", "sandboxIdleTimeoutMs", 600_000],
] as const;

describe("workerConfig", () => {
  it("has every documented default when nothing is set", () => {
    const config = workerConfig({});
    for (const [, field, ms] of DURATIONS) expect(config[field], field).toBe(ms);
    expect(config.settledRetentionMs).toBe(WORKER_DEFAULTS.settledRetentionDays * DAY);
    expect(config.apiToken).toBeNull();
    expect(config.subscribeSecret).toBeNull();
    expect(config.sandboxes).toBe('{"default":"http://127.0.0.1:8788"}');
    expect(config.webFetchAllowPrivate).toBe(false);
    expect(config.mcpAllowedHosts).toBeUndefined();
  });

  it("reads positive seconds, fractions to the millisecond; zero, negative, words and empty fall back", () => {
    for (const [name, field, ms] of DURATIONS) {
      expect(workerConfig({ [name]: "2" })[field], name).toBe(2000);
      expect(workerConfig({ [name]: "0.001" })[field], name).toBe(1);
      for (const bad of ["0", "-1", "soon", "", " "]) {
        expect(workerConfig({ [name]: bad })[field], `${name}=${bad}`).toBe(ms);
      }
    }
  });

  it("keeps 0 days of retention, and reads an empty or bad value as the default 7 (one rule for the Invocation and Run DOs)", () => {
    expect(workerConfig({ SETTLED_RETENTION_DAYS: "0" }).settledRetentionMs).toBe(0);
    expect(workerConfig({ SETTLED_RETENTION_DAYS: "1" }).settledRetentionMs).toBe(DAY);
    for (const bad of ["", "-1", "a week"]) {
      expect(workerConfig({ SETTLED_RETENTION_DAYS: bad }).settledRetentionMs).toBe(7 * DAY);
    }
  });

  it("treats an empty token as unset, and finds a sandbox's token by its variable or SANDBOX_TOKEN", () => {
    expect(workerConfig({ API_TOKEN: "" }).apiToken).toBeNull();
    expect(workerConfig({ API_TOKEN: "t", SUBSCRIBE_SECRET: "s" })).toMatchObject({
      apiToken: "t",
      subscribeSecret: "s",
    });
    const config = workerConfig({ SANDBOX_TOKEN: "all", SANDBOX_TOKEN_GPU_1: "gpu" });
    expect(config.sandboxToken("SANDBOX_TOKEN_GPU_1")).toBe("gpu");
    expect(config.sandboxToken("SANDBOX_TOKEN_CPU")).toBe("all");
    expect(workerConfig({}).sandboxToken("SANDBOX_TOKEN_CPU")).toBeUndefined();
  });

  it("lets web_fetch reach private addresses for any value but empty, 0 or false", () => {
    for (const on of ["1", "true", "yes"]) {
      expect(workerConfig({ WEB_FETCH_ALLOW_PRIVATE: on }).webFetchAllowPrivate).toBe(true);
    }
    for (const off of ["", "0", "false", " FALSE "]) {
      expect(workerConfig({ WEB_FETCH_ALLOW_PRIVATE: off }).webFetchAllowPrivate).toBe(false);
    }
  });

  it("lets container sandboxes' proxies reach private addresses only for CONTAINER_EGRESS_ALLOW_PRIVATE=1", () => {
    expect(workerConfig({}).containerEgressAllowPrivate).toBe(false);
    expect(workerConfig({ CONTAINER_EGRESS_ALLOW_PRIVATE: "1" }).containerEgressAllowPrivate).toBe(
      true,
    );
    for (const off of ["", "0", "true", "yes"]) {
      expect(
        workerConfig({ CONTAINER_EGRESS_ALLOW_PRIVATE: off }).containerEgressAllowPrivate,
        off,
      ).toBe(false);
    }
  });

  it("keeps no warm containers by default, takes a pool size up to 20, caps more at 20, and reads anything else as 0", () => {
    const size = (value: string) => workerConfig({ CONTAINER_POOL_SIZE: value }).containerPoolSize;
    expect(workerConfig({}).containerPoolSize).toBe(0);
    expect([size("0"), size("1"), size(" 3 ")]).toEqual([0, 1, 3]);
    expect([size("19"), size("20"), size("21"), size("1000")]).toEqual([19, 20, 20, 20]);
    for (const bad of ["", "-1", "2.5", "two", "1e3", "0x4"]) expect(size(bad), bad).toBe(0);
  });

  it("reads an env once: the same object answers the same config", () => {
    const env = { SANDBOX_REJOIN_SECONDS: "5" };
    expect(workerConfig(env)).toBe(workerConfig(env));
  });
});
