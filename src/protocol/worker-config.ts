/**
 * Every setting of the Worker and its Durable Objects (wrangler vars and secrets), read
 * from `env` in one place into one typed object, each default written once, below. The
 * rest of the code asks `workerConfig(env)` and never reads a setting from `env` itself
 * (bindings such as the DO namespaces and `ASSETS` are not settings and stay on `env`).
 * docs/operations.md#settings lists them for operators.
 */
import { durationMs } from "./settings.ts";

/** The defaults, in the units each setting is given in. */
export const WORKER_DEFAULTS = {
  /** `SETTLED_RETENTION_DAYS`: days a settled invocation (and an ended sandbox) is kept; 0 allowed. */
  settledRetentionDays: 7,
  /** `EXTERNAL_IDLE_TIMEOUT_SECONDS`: producer silence that ends an `external` call. */
  externalIdleTimeoutSeconds: 1800,
  /** `SANDBOX_REJOIN_SECONDS`: how long bash rejoins an exec whose stream broke. */
  sandboxRejoinSeconds: 30,
  /** `SANDBOX_STREAM_WINDOW_SECONDS`: one stretch of the DO reading a bash stream (decision 046). */
  sandboxStreamStretchSeconds: 10,
  /** `SSE_KEEPALIVE_SECONDS`: SSE silence before a `: keep-alive` comment (decision 071). */
  sseKeepAliveSeconds: 25,
  /** `MCP_KEEPALIVE_SECONDS`: `/mcp` stream silence before a `: keepalive` comment. */
  mcpKeepAliveSeconds: 15,
  /** `STREAM_LONG_POLL_SECONDS`: how long a Durable Streams long-poll waits before its 204 (decision 201). */
  streamLongPollSeconds: 20,
  /** `SANDBOX_IDLE_TIMEOUT_SECONDS`: idle time that ends a created sandbox (docs/sandboxes.md). */
  sandboxIdleTimeoutSeconds: 600,
  /** `SANDBOXES`: the sandbox name -> URL table (the local host of `npm start`). */
  sandboxes: '{"default":"http://127.0.0.1:8788"}',
  /** `CONTAINER_POOL_SIZE`: started, unassigned containers kept for container creates (decision 230). */
  containerPoolSize: 0,
  /** The most `CONTAINER_POOL_SIZE` may ask for; a larger value is taken as this. */
  containerPoolMax: 20,
  /** `PUBLIC_URL`: the Worker's own address, for the URLs `expose_port` gives (what `npm start` serves). */
  publicUrl: "http://127.0.0.1:8787",
} as const;

/** What the Worker runs with. Durations are milliseconds. */
export interface WorkerConfig {
  /** `API_TOKEN`, the bearer token agents present; null: the API refuses every call (503). */
  apiToken: string | null;
  /** `SUBSCRIBE_SECRET`, the HMAC key of subscribe and run tokens; null: none can be made. */
  subscribeSecret: string | null;
  /** `SANDBOXES` as JSON text; src/execenv's `sandboxTable` parses it and words its errors. */
  sandboxes: string;
  /** A sandbox's bearer token: the secret `varName` (its `SANDBOX_TOKEN_<NAME>`), else `SANDBOX_TOKEN`. */
  sandboxToken(varName: string): string | undefined;
  settledRetentionMs: number;
  externalIdleTimeoutMs: number;
  sandboxRejoinMs: number;
  sandboxStreamStretchMs: number;
  sseKeepAliveMs: number;
  mcpKeepAliveMs: number;
  streamLongPollMs: number;
  sandboxIdleTimeoutMs: number;
  /** `MCP_ALLOWED_HOSTS`, comma-separated hostnames `/mcp` answers besides loopback. */
  mcpAllowedHosts: string | undefined;
  /**
   * `PREVIEW_DOMAIN`: the domain whose wildcard (`*.<domain>`) routes to this Worker, for
   * the host form of preview URLs (`https://<token>.<domain>/`); unset, the host form is
   * `<token>.localhost` on the request's own port (local development, decision 182).
   */
  previewDomain: string | undefined;
  /**
   * `PUBLIC_URL`: the Worker's address as people reach it. The `expose_port` tool runs in
   * a Durable Object, which never sees a request's address, so its URLs are made on this.
   */
  publicUrl: string;
  /** `WEB_FETCH_ALLOW_PRIVATE`: any value but empty, "0" or "false" lets web_fetch reach private addresses. */
  webFetchAllowPrivate: boolean;
  /**
   * `CONTAINER_EGRESS_ALLOW_PRIVATE`: "1" starts container sandboxes with
   * `SANDBOX_EGRESS_ALLOW_PRIVATE=1`, so their proxies let private addresses through
   * (local development and tests only; decision 183).
   */
  containerEgressAllowPrivate: boolean;
  /**
   * `CONTAINER_POOL_SIZE`: how many started, unassigned containers the warm pool keeps
   * for container sandboxes (decision 230); 0 (the default) keeps none. A whole number up
   * to `containerPoolMax`; more is taken as that, anything else as 0.
   */
  containerPoolSize: number;
  /**
   * `EXAMPLE_TOOLS`: "1" lists and runs the example tools (`emit`, `steps`, `report`),
   * stand-ins for tests and demos that do nothing for a model; off by default.
   */
  exampleTools: boolean;
  /**
   * `TEST_CONTROLS`: on ("1") only in other projects' tests (`toolwire/testing` sets it):
   * the `/v1/test/...` routes that drop subscribers and evict objects (docs/testing.md).
   */
  testControls: boolean;
}

const DAY_MS = 86_400_000;

/** One config per `env` object: the Worker and each Durable Object read theirs once. */
const read = new WeakMap<object, WorkerConfig>();

/**
 * The settings in `env`. A missing, non-numeric, zero or negative duration falls back to
 * its default (zero days of retention is allowed); an empty token counts as unset.
 * @example workerConfig({ SANDBOX_REJOIN_SECONDS: "5" }).sandboxRejoinMs // 5000
 * @example workerConfig({}).settledRetentionMs // 604_800_000
 */
export function workerConfig(env: object): WorkerConfig {
  const known = read.get(env);
  if (known) return known;
  const vars = env as Record<string, unknown>;
  const text = (name: string): string | undefined =>
    typeof vars[name] === "string" ? (vars[name] as string) : undefined;
  const secret = (name: string): string | null => {
    const value = text(name);
    return value === undefined || value === "" ? null : value;
  };
  const seconds = (name: string, fallback: number) => durationMs(text(name), fallback);
  const flag = text("WEB_FETCH_ALLOW_PRIVATE")?.trim().toLowerCase();
  const config: WorkerConfig = {
    apiToken: secret("API_TOKEN"),
    subscribeSecret: secret("SUBSCRIBE_SECRET"),
    sandboxes: text("SANDBOXES") ?? WORKER_DEFAULTS.sandboxes,
    sandboxToken: (varName) => text(varName) || text("SANDBOX_TOKEN"),
    settledRetentionMs: durationMs(
      text("SETTLED_RETENTION_DAYS"),
      WORKER_DEFAULTS.settledRetentionDays,
      { unitMs: DAY_MS, allowZero: true },
    ),
    externalIdleTimeoutMs: seconds(
      "EXTERNAL_IDLE_TIMEOUT_SECONDS",
      WORKER_DEFAULTS.externalIdleTimeoutSeconds,
    ),
    sandboxRejoinMs: seconds("SANDBOX_REJOIN_SECONDS", WORKER_DEFAULTS.sandboxRejoinSeconds),
    sandboxStreamStretchMs: seconds(
      "SANDBOX_STREAM_WINDOW_SECONDS",
      WORKER_DEFAULTS.sandboxStreamStretchSeconds,
    ),
    sseKeepAliveMs: seconds("SSE_KEEPALIVE_SECONDS", WORKER_DEFAULTS.sseKeepAliveSeconds),
    mcpKeepAliveMs: seconds("MCP_KEEPALIVE_SECONDS", WORKER_DEFAULTS.mcpKeepAliveSeconds),
    streamLongPollMs: seconds("STREAM_LONG_POLL_SECONDS", WORKER_DEFAULTS.streamLongPollSeconds),
    sandboxIdleTimeoutMs: seconds(
      "SANDBOX_IDLE_TIMEOUT_SECONDS",
      WORKER_DEFAULTS.sandboxIdleTimeoutSeconds,
    ),
    mcpAllowedHosts: text("MCP_ALLOWED_HOSTS"),
    previewDomain: text("PREVIEW_DOMAIN")?.trim().toLowerCase() || undefined,
    publicUrl: (text("PUBLIC_URL")?.trim() || WORKER_DEFAULTS.publicUrl).replace(/\/+$/, ""),
    webFetchAllowPrivate: flag !== undefined && flag !== "" && flag !== "0" && flag !== "false",
    containerEgressAllowPrivate: text("CONTAINER_EGRESS_ALLOW_PRIVATE") === "1",
    containerPoolSize: poolSizeOf(text("CONTAINER_POOL_SIZE")),
    exampleTools: text("EXAMPLE_TOOLS") === "1",
    testControls: text("TEST_CONTROLS") === "1",
  };
  read.set(env, config);
  return config;
}

/**
 * `CONTAINER_POOL_SIZE` read: a whole number, at most `containerPoolMax`.
 * @example poolSizeOf("3") // 3
 * @example poolSizeOf("99") // 20
 */
function poolSizeOf(raw: string | undefined): number {
  const value = raw?.trim() ?? "";
  if (!/^[0-9]+$/.test(value)) return WORKER_DEFAULTS.containerPoolSize;
  return Math.min(Number(value), WORKER_DEFAULTS.containerPoolMax);
}
