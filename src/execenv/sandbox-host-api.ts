/**
 * The sandbox host's own API for created sandboxes (sandbox/sandboxes/routes.ts), as the
 * Worker's Sandbox DO speaks it: create, read and delete one, and stream its files as
 * tar. Every answer is an `Outcome`: an unreachable host is `sandbox_unreachable`
 * within `SANDBOX_PROBE_TIMEOUT_MS`, never a hang.
 */
import {
  type ErrorCode,
  type ExecLoad,
  messageOf,
  type Outcome,
  ok,
  refusal,
} from "../protocol/index.ts";
import {
  CONTAINER_ORIGIN,
  CONTAINER_PLACEMENT,
  placementOf,
  resolveSandbox,
  SANDBOX_PROBE_TIMEOUT_MS,
  type SandboxSettings,
  type SandboxTarget,
} from "./sandbox-routing.ts";

/** What a create may ask for; the host grants its own limits where a field is left out. */
interface SandboxLimitsRequest {
  diskBytes?: number;
  maxExecs?: number;
  maxProcesses?: number;
  maxMemoryBytes?: number;
  maxFileBytes?: number;
  egressBytes?: number;
}

/** The host's account of one sandbox. */
export interface HostSandboxInfo {
  id: string;
  createdAt: string;
  limits: Required<SandboxLimitsRequest>;
  runningExecs: number;
  disk: { mode: "loop" | "none"; totalBytes: number; usedBytes: number; freeBytes: number };
  /** How busy its commands are, as its `/healthz` says (absent from an older host). */
  execs?: ExecLoad;
}

/**
 * Calls sandbox host `host` at `path` with its token; `host` is a name of `SANDBOXES`,
 * or a created sandbox's id (its host; for a `container` sandbox its own container,
 * through its container DO). JSON answers parsed, errors as refusals carrying the
 * host's own code and message.
 * @example await hostCall<HostSandboxInfo>(env, "default", "GET", `/v1/sandboxes/${id}`)
 */
export async function hostCall<T>(
  env: SandboxSettings,
  host: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = SANDBOX_PROBE_TIMEOUT_MS,
): Promise<Outcome<T>> {
  const res = await hostFetch(env, host, method, path, {
    body: body === undefined ? undefined : JSON.stringify(body),
    type: "application/json",
    timeoutMs,
  });
  if (!res.ok) return res;
  return ok((await res.value.json()) as T);
}

/**
 * A raw request to sandbox host `host` (as for `hostCall`; the tar routes stream
 * through it). Non-2xx answers become refusals; a host that does not answer within the
 * probe timeout (or `timeoutMs`) is a 502.
 */
export async function hostFetch(
  env: SandboxSettings,
  hostOrSandbox: string,
  method: string,
  path: string,
  init: { body?: BodyInit; type?: string; stream?: boolean; timeoutMs?: number } = {},
): Promise<Outcome<Response>> {
  const timeoutMs = init.timeoutMs ?? SANDBOX_PROBE_TIMEOUT_MS;
  const target = hostOf(env, hostOrSandbox);
  if (!target.ok) return target;
  const host = target.value.name;
  const headers: Record<string, string> = { authorization: `Bearer ${target.value.token}` };
  if (init.type) headers["content-type"] = init.type;
  // Only the wait for the answer's headers is bounded: a streamed body may take longer.
  const abort = new AbortController();
  const timer = init.stream ? null : setTimeout(() => abort.abort(), timeoutMs);
  let res: Response;
  try {
    res = await target.value.fetch(`${target.value.url}${path}`, {
      method,
      headers,
      body: init.body,
      signal: init.stream ? undefined : abort.signal,
    });
  } catch (err) {
    const why = abort.signal.aborted ? `no answer within ${timeoutMs / 1000} s` : messageOf(err);
    return refusal(
      "sandbox_unreachable",
      `sandbox host "${host}" at ${target.value.url} is unreachable (${why}); check that it is running`,
    );
  } finally {
    if (timer) clearTimeout(timer);
  }
  if (res.ok) return ok(res);
  const text = await res.text().catch(() => "");
  let code: ErrorCode = res.status >= 500 ? "sandbox_unreachable" : "bad_request";
  let message = text.slice(0, 300) || res.statusText;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (typeof parsed.error?.message === "string") message = parsed.error.message;
    code = HOST_CODES[res.status] ?? code;
  } catch {}
  if (res.status === 401) {
    message = `sandbox host "${host}" refused the Worker's SANDBOX_TOKEN (${message}); set the token the host was started with`;
  }
  // The host's own word on when to come back (a full host, a full line) reaches the caller.
  const retryAfter = Number(res.headers.get("retry-after") ?? Number.NaN);
  return refusal(code, message, Number.isSafeInteger(retryAfter) ? retryAfter : undefined);
}

/**
 * A `SANDBOXES` host by name, a created sandbox's host by its id, or a container sandbox's
 * own container (preview URLs reach it through this too).
 * @example hostOf(env, "sbx_default_…") // { ok: true, value: { url, token, fetch, … } }
 */
export function hostOf(env: SandboxSettings, hostOrSandbox: string): Outcome<SandboxTarget> {
  const placement = placementOf(hostOrSandbox) ?? hostOrSandbox;
  if (placement !== CONTAINER_PLACEMENT) return resolveSandbox(env, placement);
  const sandboxId = hostOrSandbox;
  const inside = resolveSandbox(env, sandboxId);
  if (!inside.ok) return inside;
  return ok({
    ...inside.value,
    name: `container of ${sandboxId}`,
    // The container's own sandbox host, at the root of the origin its DO forwards.
    url: CONTAINER_ORIGIN,
  });
}

/**
 * How long the Worker waits for a host to make a sandbox: a burst of creates larger than
 * what the host made ahead takes seconds each on a small host (decision 228), and a
 * create cut off by the probe's 5 s would leave the host holding a sandbox no Sandbox DO
 * knows.
 */
export const SANDBOX_CREATE_TIMEOUT_MS = 60_000;

/** How the host's statuses read in the Worker's vocabulary. */
const HOST_CODES: Record<number, ErrorCode> = {
  400: "bad_request",
  // The host refused the Worker's own token: the deployment's SANDBOX_TOKEN is wrong.
  401: "not_configured",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "too_large",
  429: "too_many_requests",
  503: "busy",
  507: "insufficient_storage",
};
