// Bindings, vars and secrets of the Toolwire Worker (see wrangler.toml and the
// README's configuration table). Written by hand so that vars are plain strings.
// The Durable Object namespaces are typed by the RPC contracts in src/protocol, which
// the DO classes implement, never by the classes: the Worker sees the protocol layer only.
type ProtocolStub<T> = Rpc.DurableObjectBranded & T;
interface Env {
  INVOCATIONS: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").InvocationApi>
  >;
  /** One Run DO per runId: the index of a run's calls. */
  RUNS: DurableObjectNamespace<ProtocolStub<import("./src/protocol/index.ts").RunApi>>;
  ASSETS: Fetcher;
  /** One object per terminated MCP 2025-11-25 session (src/mcp, docs/decisions/101). */
  MCP_SESSIONS: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").McpSessionApi>
  >;
  /** One Sandbox DO per created sandbox id: its record, idle alarm and calls (docs/sandboxes.md). */
  SANDBOX_RECORDS: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").SandboxApi>
  >;
  /** One container DO per `container` sandbox (wrangler.containers.toml only; decision 144). */
  SANDBOX_CONTAINERS?: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").SandboxContainerApi>
  >;
  /** The warm pool of started, unassigned containers (one object, "all"; wrangler.containers.toml only; decision 230). */
  CONTAINER_POOL?: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").ContainerPoolApi>
  >;
  /** Started, unassigned containers the warm pool keeps, 0–20 (default 0: none; decision 230). */
  CONTAINER_POOL_SIZE?: string;
  /** The list of created sandboxes (one object, "all"). */
  SANDBOX_DIRECTORY: DurableObjectNamespace<
    ProtocolStub<import("./src/protocol/index.ts").SandboxDirectoryApi>
  >;
  /** Seconds a created sandbox may idle before its alarm ends it, unless the create names its own (default 600). */
  SANDBOX_IDLE_TIMEOUT_SECONDS?: string;
  /** Comma-separated hostnames `/mcp` answers for besides loopback (DNS-rebinding protection). */
  MCP_ALLOWED_HOSTS?: string;
  /** Domain whose wildcard routes to this Worker, for preview URLs' host form (decision 182). */
  PREVIEW_DOMAIN?: string;
  /** "1": container sandboxes' proxies let private addresses through (local development, tests; decision 183). */
  CONTAINER_EGRESS_ALLOW_PRIVATE?: string;
  /** The Worker's address as people reach it, for the URLs `expose_port` gives (default http://127.0.0.1:8787). */
  PUBLIC_URL?: string;
  /** Seconds of silence on an `/mcp` SSE stream before a `: keepalive` comment (default 15). */
  MCP_KEEPALIVE_SECONDS?: string;
  /** JSON object: sandbox name -> base URL. */
  SANDBOXES?: string;
  /** Days a settled invocation is kept before its alarm deletes it. */
  SETTLED_RETENTION_DAYS?: string;
  /** Seconds an `external` invocation may go without a producer call before it is ended as an error (default 1800). */
  EXTERNAL_IDLE_TIMEOUT_SECONDS?: string;
  /** Seconds bash keeps rejoining an exec whose stream broke before it settles as an error (default 30). */
  SANDBOX_REJOIN_SECONDS?: string;
  /** Seconds the DO reads a bash stream before it lets go and rejoins from its alarm (default 10). */
  SANDBOX_STREAM_WINDOW_SECONDS?: string;
  /** Seconds of silence on an SSE stream before the DO sends a `: keep-alive` comment (default 25). */
  SSE_KEEPALIVE_SECONDS?: string;
  /** Seconds a Durable Streams long-poll waits for bytes before answering 204 (default 20). */
  STREAM_LONG_POLL_SECONDS?: string;
  /** Bearer token agents present. Unset means the API refuses every call (503). */
  API_TOKEN?: string;
  /** HMAC-SHA256 key for subscribe tokens. */
  SUBSCRIBE_SECRET?: string;
  /** Bearer token of the default sandbox (SANDBOX_TOKEN_<NAME> for others). */
  SANDBOX_TOKEN?: string;
  /** Set to "1" to let web_fetch reach loopback and private addresses. */
  WEB_FETCH_ALLOW_PRIVATE?: string;
  [key: `SANDBOX_TOKEN_${string}`]: string | undefined;
}
declare namespace Cloudflare {
  interface Env extends globalThis.Env {}
}
