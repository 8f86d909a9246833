/**
 * Sandbox routing: which sandbox host a tool call runs on. `SANDBOXES` is a JSON object
 * of name -> base URL (default `{"default":"http://127.0.0.1:8788"}`); the bearer token
 * of sandbox `NAME` is the secret `SANDBOX_TOKEN_<NAME>` (upper-cased, other characters
 * as `_`), falling back to `SANDBOX_TOKEN`.
 */
import {
  type ExecLoad,
  messageOf,
  type Outcome,
  ok,
  QUEUE_RETRY_AFTER_SEC,
  refusal,
  workerConfig,
} from "../protocol/index.ts";
import { CREATED_SANDBOX_ID } from "../protocol/sandbox.ts";

/** What routing needs of the container DO namespace: one object per sandbox, reached by `fetch`. */
interface SandboxContainerNamespace {
  getByName(name: string): { fetch(request: Request): Promise<Response> };
}

/** The settings routing reads (wrangler vars and secrets of the Worker's `Env`). */
export interface SandboxSettings {
  /** JSON object: sandbox name -> base URL. */
  SANDBOXES?: string;
  /** The container backend's DOs (wrangler.containers.toml); absent: no container backend. */
  SANDBOX_CONTAINERS?: SandboxContainerNamespace;
  /** Bearer token of the default sandbox. */
  SANDBOX_TOKEN?: string;
  [key: `SANDBOX_TOKEN_${string}`]: string | undefined;
}

/** Name used when a call does not choose a sandbox. */
export const DEFAULT_SANDBOX = "default";

/** Where and how to reach one sandbox host. */
export interface SandboxTarget {
  name: string;
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:8788`. */
  url: string;
  token: string;
  /** How requests reach it: the network for a host, its container DO for a container sandbox. */
  fetch: typeof fetch;
}

/**
 * The placement of every `container` sandbox (`sbx_container_<20 hex>`): not a host of
 * `SANDBOXES` (the name is reserved there) but one container each, reached through its
 * container DO (decision 144).
 */
export const CONTAINER_PLACEMENT = "container";

/** The origin requests to a container sandbox carry; the container DO sends them to its port. */
export const CONTAINER_ORIGIN = "http://container.internal";

/**
 * The name -> URL table from `SANDBOXES`, or a 503 saying what is wrong with it.
 * @example sandboxTable({ SANDBOXES: '{"gpu":"https://gpu.example"}' }) // { ok: true, value: { gpu: ... } }
 */
export function sandboxTable(
  env: Pick<SandboxSettings, "SANDBOXES">,
): Outcome<Record<string, string>> {
  const raw = workerConfig(env).sandboxes;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return notConfigured(`SANDBOXES is not valid JSON (${messageOf(err)})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return notConfigured(
      'SANDBOXES must be a JSON object of name -> URL, e.g. {"default":"http://127.0.0.1:8788"}',
    );
  }
  // No prototype: a name like "__proto__" is a key like any other, never an inherited one.
  const table: Record<string, string> = Object.create(null);
  for (const [name, url] of Object.entries(parsed)) {
    if (name === CONTAINER_PLACEMENT) {
      return notConfigured(
        `SANDBOXES.${name}: "${CONTAINER_PLACEMENT}" is reserved for the container backend; give that host another name`,
      );
    }
    if (typeof url !== "string" || !/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) {
      return notConfigured(`SANDBOXES.${name} must be an http(s) URL, got ${JSON.stringify(url)}`);
    }
    table[name] = url.replace(/\/+$/, "");
  }
  return ok(table);
}

function notConfigured<T>(message: string): Outcome<T> {
  return refusal("not_configured", message);
}

/** The secret name holding sandbox `name`'s token, e.g. `SANDBOX_TOKEN_GPU_1` for "gpu-1". */
export function sandboxTokenName(name: string): `SANDBOX_TOKEN_${string}` {
  return `SANDBOX_TOKEN_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

export { CREATED_SANDBOX_ID } from "../protocol/sandbox.ts";

/** The sandbox host a created sandbox lives on, or null when `name` is not one's id. */
export function placementOf(name: string): string | null {
  return CREATED_SANDBOX_ID.exec(name)?.[1] ?? null;
}

/**
 * Checks that `name` is a configured sandbox, without needing its token (the Worker
 * does this before starting any tool; a 400 for an unknown name, 503 for bad config).
 * A created sandbox's id routes to `<its host>/sandboxes/<id>`.
 * @example checkSandboxName(env, "default") // { ok: true, value: "http://127.0.0.1:8788" }
 */
export function checkSandboxName(
  env: Pick<SandboxSettings, "SANDBOXES" | "SANDBOX_CONTAINERS">,
  name: string,
): Outcome<string> {
  const placement = placementOf(name);
  if (placement === CONTAINER_PLACEMENT) {
    if (!env.SANDBOX_CONTAINERS) return noContainers();
    return ok(`${CONTAINER_ORIGIN}/sandboxes/${name}`);
  }
  if (placement !== null) {
    const host = checkSandboxName(env, placement);
    return host.ok ? ok(`${host.value}/sandboxes/${name}`) : host;
  }
  const table = sandboxTable(env);
  if (!table.ok) return table;
  // Own names only: "toString", "constructor" and "__proto__" are not sandboxes.
  const url = Object.hasOwn(table.value, name) ? table.value[name] : undefined;
  if (url === undefined) {
    const known = Object.keys(table.value).join(", ") || "none";
    return refusal("bad_request", `body.sandbox: unknown sandbox "${name}" (configured: ${known})`);
  }
  return ok(url);
}

/**
 * URL and token of sandbox `name`, for the DO and the sandbox tools.
 * @example
 * const target = resolveSandbox(env, context.sandbox);
 * if (!target.ok) throw new Error(target.error.message);
 * new SandboxClient(target.value.url, target.value.token);
 */
export function resolveSandbox(env: SandboxSettings, name: string): Outcome<SandboxTarget> {
  const url = checkSandboxName(env, name);
  if (!url.ok) return url;
  const host = placementOf(name) ?? name;
  if (host === CONTAINER_PLACEMENT) {
    // The container DO adds its container's own token: the Worker never holds it.
    return ok({ name, url: url.value, token: "", fetch: containerFetch(env, name) });
  }
  const tokenName = sandboxTokenName(host);
  const token = workerConfig(env).sandboxToken(tokenName);
  if (!token) {
    return notConfigured(`no token for sandbox "${host}": set ${tokenName} or SANDBOX_TOKEN`);
  }
  return ok({ name, url: url.value, token, fetch: (input, init) => fetch(input, init) });
}

/**
 * `fetch` for a container sandbox: every request goes to its container DO.
 * @example await containerFetch(env, "sbx_container_…")("http://container.internal/sandboxes/…/healthz")
 */
function containerFetch(env: SandboxSettings, name: string): typeof fetch {
  const namespace = env.SANDBOX_CONTAINERS;
  return async (input, init) => {
    if (!namespace) throw new Error(NO_CONTAINERS);
    return namespace.getByName(name).fetch(new Request(input, init));
  };
}

const NO_CONTAINERS =
  "this deployment has no container backend (SANDBOX_CONTAINERS is not bound); deploy with wrangler.containers.toml (docs/sandboxes.md)";

function noContainers<T>(): Outcome<T> {
  return notConfigured(NO_CONTAINERS);
}

/** How long the reachability probe of `probeSandbox` waits for an answer. */
export const SANDBOX_PROBE_TIMEOUT_MS = 5000;

/**
 * Whether sandbox `name` answers `GET /healthz`, checked before a sandbox tool call is
 * created so that an unreachable host is a 502 that leaves nothing behind. Its value is
 * how busy the sandbox's commands are (null from a host that does not say).
 * @example
 * const probe = await probeSandbox(env, "default");
 * if (!probe.ok) return probe; // 502 sandbox_unreachable, with the URL and what to do
 */
export async function probeSandbox(
  env: Pick<SandboxSettings, "SANDBOXES" | "SANDBOX_CONTAINERS">,
  name: string,
): Promise<Outcome<ExecLoad | null>> {
  const url = checkSandboxName(env, name);
  if (!url.ok) return url;
  const reach: typeof fetch =
    placementOf(name) === CONTAINER_PLACEMENT
      ? containerFetch(env, name)
      : (input, init) => fetch(input, init);
  let reason: string;
  // A timer cleared on the answer (not AbortSignal.timeout, whose pending timer would keep
  // the Durable Object's request busy, and the object unevictable, for the full 5 s).
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), SANDBOX_PROBE_TIMEOUT_MS);
  try {
    const res = await reach(`${url.value}/healthz`, { signal: abort.signal });
    if (res.ok) return ok(execLoadOf(await res.json().catch(() => null)));
    await res.body?.cancel();
    reason = `GET /healthz answered ${res.status}`;
  } catch (err) {
    reason = abort.signal.aborted
      ? `no answer within ${SANDBOX_PROBE_TIMEOUT_MS / 1000} s`
      : messageOf(err);
  } finally {
    clearTimeout(timer);
  }
  return refusal(
    "sandbox_unreachable",
    `sandbox "${name}" at ${url.value} is unreachable (${reason}); check that the sandbox host is running and SANDBOXES points at it. Nothing was started: retry with the same toolCallId once it is up.`,
  );
}

/**
 * Whether a call that runs a command may be created in a sandbox this busy: refused with
 * a 429 and `Retry-After` while `maxQueued` commands wait their turn, so that a call once
 * accepted waits its turn and never fails for want of a slot (decision 248).
 * @example const room = admitCommand("default", probe.value); if (!room.ok) return room;
 */
export function admitCommand(name: string, load: ExecLoad | null): Outcome<null> {
  if (!load || load.queued < load.maxQueued) return ok(null);
  return refusal(
    "too_many_requests",
    `sandbox "${name}" runs its limit of ${load.maxRunning} commands at once and ${load.queued} more wait their turn, the most it queues; nothing was started: retry with the same toolCallId in ${QUEUE_RETRY_AFTER_SEC} s`,
    QUEUE_RETRY_AFTER_SEC,
  );
}

function execLoadOf(body: unknown): ExecLoad | null {
  const execs = (body as { execs?: Partial<ExecLoad> } | null)?.execs;
  const counts = [execs?.running, execs?.queued, execs?.maxRunning, execs?.maxQueued];
  if (!execs || !counts.every((n) => typeof n === "number" && Number.isInteger(n))) return null;
  return execs as ExecLoad;
}
