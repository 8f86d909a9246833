/**
 * Follows one run (`/v1/runs/:runId/socket`): keeps every call of the run by id, in
 * creation order, as the Run DO's messages say they start, progress and settle; on a
 * dropped socket reconnects with backoff and takes the list afresh (the first messages
 * of every connection are the whole list). Browsers and Node 22 (with `headers`, e.g.
 * the API token).
 *
 * @example
 * const run = followRun("wss://tw.example/v1/runs/run-7/socket?token=…");
 * run.onChange(() => console.log([...run.calls.values()].map((c) => c.status)));
 */
import type { RunCall, RunMessage } from "../../core/events/run-call.ts";
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "../backoff.ts";

export type { RunCall, RunMessage };

type RunFollowerStatus = "connecting" | "live" | "reconnecting" | "failed" | "closed";

interface RunFollower {
  readonly status: RunFollowerStatus;
  /** Calls by toolCallId, in the order they were created. */
  readonly calls: ReadonlyMap<string, RunCall>;
  /** True once the current connection delivered the whole list. */
  readonly synced: boolean;
  /** Why following failed (after the last reconnect attempt). */
  readonly error: string | null;
  onChange(listener: () => void): () => void;
  close(): void;
}

interface FollowRunOptions {
  /** Upgrade headers (Node only), e.g. `{ Authorization: "Bearer …" }`. */
  headers?: Record<string, string>;
  backoff?: Partial<BackoffPolicy>;
}

interface SocketLike {
  addEventListener(
    type: string,
    listener: (event: { data?: unknown; code?: number }) => void,
  ): void;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** The platform WebSocket; Node's (undici) also takes `{ headers }` in place of protocols. */
function openSocket(url: string, headers?: Record<string, string>): SocketLike {
  const Ctor = (
    globalThis as unknown as { WebSocket?: new (url: string, init?: unknown) => SocketLike }
  ).WebSocket;
  if (!Ctor) throw new Error("This platform has no WebSocket.");
  return headers ? new Ctor(url, { headers }) : new Ctor(url);
}

/** Applies one message to `calls`; true when something a reader sees changed. */
function applyRunMessage(calls: Map<string, RunCall>, message: RunMessage): boolean {
  if (message.type === "calls") {
    for (const call of message.calls) calls.set(call.toolCallId, call);
    return message.calls.length > 0;
  }
  if (message.type === "call") {
    calls.set(message.call.toolCallId, message.call);
    return true;
  }
  return false;
}

/** Starts following the run at `socketUrl` (ws: or wss:). */
export function followRun(socketUrl: string, options: FollowRunOptions = {}): RunFollower {
  const policy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const listeners = new Set<() => void>();
  let calls = new Map<string, RunCall>();
  let incoming = new Map<string, RunCall>();
  let status: RunFollowerStatus = "connecting";
  let synced = false;
  let error: string | null = null;
  let attempt = 0;
  let socket: SocketLike | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  const changed = () => {
    for (const listener of listeners) listener();
  };

  const connect = () => {
    synced = false;
    incoming = new Map();
    let opened = false;
    try {
      socket = openSocket(socketUrl, options.headers);
    } catch (err) {
      status = "failed";
      error = err instanceof Error ? err.message : String(err);
      changed();
      return;
    }
    const current = socket;
    current.addEventListener("open", () => {
      opened = true;
    });
    current.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      const message = JSON.parse(event.data) as RunMessage;
      if (!synced) {
        // A new connection's list replaces the old one only once it is whole.
        if (message.type === "synced") {
          calls = incoming;
          synced = true;
          status = "live";
          attempt = 0;
          changed();
        } else {
          applyRunMessage(incoming, message);
        }
        return;
      }
      if (applyRunMessage(calls, message)) changed();
    });
    current.addEventListener("close", (event) => {
      if (closed || socket !== current) return;
      if (attempt >= policy.maxAttempts) {
        status = "failed";
        error = opened
          ? `the run's socket closed (${event.code ?? "no code"}) and did not come back`
          : "could not connect to the run's socket (wrong URL, expired token, or the server is down)";
        changed();
        return;
      }
      status = "reconnecting";
      changed();
      timer = setTimeout(connect, backoffDelay(attempt++, policy));
    });
  };
  connect();

  return {
    get status() {
      return status;
    },
    get calls() {
      return calls;
    },
    get synced() {
      return synced;
    },
    get error() {
      return error;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      status = "closed";
      if (timer) clearTimeout(timer);
      socket?.close(1000, "closed by the reader");
    },
  };
}
