import { CREDENTIAL_REVOKED_CLOSE, TOKEN_EXPIRED_CLOSE } from "../core/events/socket-close.ts";
import { errorFromResponse, ToolwireError, unreachable } from "./errors.ts";
import {
  DEFAULT_KEEP_ALIVE,
  type KeepAlivePolicy,
  PING_FRAME,
  PONG_FRAME,
  seconds,
} from "./keep-alive.ts";
import type { ResumePoint, Transport } from "./transport.ts";

/** The part of the platform `WebSocket` (browsers, Node 22, Workers) this client uses. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** A "close" listener also gets the close event (`code`, `reason`) where the platform gives one. */
  addEventListener(type: "open" | "close" | "error", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}
export type SocketFactory = (url: string, headers?: Record<string, string>) => SocketLike;

interface SocketTransportOptions {
  /** Extra upgrade headers (Node only: browsers cannot set them). */
  headers?: Record<string, string>;
  /** Defaults to the platform `WebSocket`. */
  createSocket?: SocketFactory;
  /** Used to ask why an upgrade failed. Defaults to the platform `fetch`. */
  fetch?: typeof fetch;
  /** Ping cadence and how long to wait for any frame after a ping. */
  keepAlive?: Partial<KeepAlivePolicy>;
}

const OPEN = 1;

/** The platform WebSocket; Node's (undici) also takes `{ headers }` in place of protocols. */
const platformSocket: SocketFactory = (url, headers) => {
  const Ctor = (
    globalThis as unknown as { WebSocket?: new (url: string, init?: unknown) => SocketLike }
  ).WebSocket;
  if (!Ctor) throw new Error("This platform has no WebSocket; use the SSE transport.");
  return headers ? new Ctor(url, { headers }) : new Ctor(url);
};

/**
 * A transport over the invocation's WebSocket (`/v1/invocations/:id/socket`): one
 * event per text frame; `resync()` sends `{"type":"resync"}`; a resumed connection
 * names the last update it has with `?after=<seq>`. Every `pingEveryMs` it
 * sends `{"type":"ping"}`; when no frame at all arrives within `pongWithinMs` after a
 * ping, the connection is dead and reported closed (the subscription reconnects).
 * `{"type":"pong"}` frames prove liveness and are not passed on. A browser cannot see
 * why an upgrade was refused, so after a failed upgrade the same URL is fetched over
 * plain HTTP to tell an expired token or an unknown invocation from a network blip.
 *
 * @example
 * subscribe(url, { connect: socketTransport("wss://host/v1/invocations/abc/socket?token=…") })
 */
export function socketTransport(url: string, options: SocketTransportOptions = {}): Transport {
  const create = options.createSocket ?? platformSocket;
  const keepAlive = { ...DEFAULT_KEEP_ALIVE, ...options.keepAlive };
  return (handlers, resume?: ResumePoint) => {
    let done = false;
    let opened = false;
    let pinger: ReturnType<typeof setInterval> | null = null;
    let deadline: ReturnType<typeof setTimeout> | null = null;
    const stopKeepAlive = () => {
      if (pinger !== null) clearInterval(pinger);
      if (deadline !== null) clearTimeout(deadline);
      pinger = deadline = null;
    };
    const finish = (error?: ToolwireError) => {
      stopKeepAlive();
      if (done) return;
      done = true;
      handlers.closed(error);
    };
    let socket: SocketLike;
    try {
      socket = create(resumeUrl(url, resume), options.headers);
    } catch (error) {
      queueMicrotask(() => finish(unreachable(url, error)));
      return {
        resync: () => false,
        close() {
          done = true;
        },
      };
    }
    const ping = () => {
      if (done || socket.readyState !== OPEN) return;
      socket.send(PING_FRAME);
      deadline ??= setTimeout(() => {
        finish(
          new ToolwireError(
            "unreachable",
            `The connection went silent: no answer to a keep-alive ping within ${seconds(keepAlive.pongWithinMs)}.`,
            0,
          ),
        );
        socket.close(4000, "keep-alive timeout");
      }, keepAlive.pongWithinMs);
    };
    socket.addEventListener("open", () => {
      opened = true;
      if (!done) pinger = setInterval(ping, keepAlive.pingEveryMs);
    });
    socket.addEventListener("message", (event) => {
      if (done) return;
      // Any frame proves the connection is alive.
      if (deadline !== null) clearTimeout(deadline);
      deadline = null;
      if (typeof event.data === "string" && event.data !== PONG_FRAME) handlers.message(event.data);
    });
    let refused = false;
    const ended = (event?: { code?: number }) => {
      if (done || refused) return;
      if (opened && event?.code === TOKEN_EXPIRED_CLOSE.code) return finish(tokenExpired());
      if (opened && event?.code === CREDENTIAL_REVOKED_CLOSE.code) return finish(tokenRevoked());
      if (opened) return finish();
      refused = true;
      void explainRefusal(url, options).then(finish);
    };
    socket.addEventListener("close", ended);
    // Node's WebSocket reports a refused upgrade with "error" alone, never "close".
    socket.addEventListener("error", () => ended());
    return {
      resync() {
        if (done || socket.readyState !== OPEN) return false;
        socket.send(JSON.stringify({ type: "resync" }));
        return true;
      },
      close() {
        done = true;
        stopKeepAlive();
        socket.close(1000, "client closed");
      },
    };
  };
}

/**
 * Why the upgrade to `url` was refused, as far as plain HTTP can tell: the
 * invocation's own URL (`…/socket` removed) answers 401/403 for a bad token and 404
 * for an unknown invocation.
 */
async function explainRefusal(
  url: string,
  options: SocketTransportOptions,
): Promise<ToolwireError> {
  const viewUrl = new URL(url.replace(/^ws(s?):/, "http$1:"));
  viewUrl.pathname = viewUrl.pathname.replace(/\/socket$/, "");
  const doFetch = options.fetch ?? fetch;
  try {
    const init: RequestInit = options.headers ? { headers: options.headers } : {};
    const res = await doFetch(viewUrl.toString(), init);
    if (res.status >= 400) return await errorFromResponse(res, "Subscribing");
    await res.body?.cancel();
    return new ToolwireError(
      "unreachable",
      `The WebSocket connection to ${redact(url)} was refused or dropped.`,
      0,
    );
  } catch (error) {
    return unreachable(redact(url), error);
  }
}

/** `url` with `?after=<seq>` when resuming: the socket's way of naming the last event it has. */
function resumeUrl(url: string, resume: ResumePoint | undefined): string {
  if (!resume) return url;
  const resumed = new URL(url);
  resumed.searchParams.set("after", String(resume.after));
  return resumed.toString();
}

/**
 * The server closed the socket because its subscribe token expired: permanent, since a
 * reconnect with the same token is refused (docs/decisions/112).
 */
function tokenRevoked(): ToolwireError {
  return new ToolwireError(
    "unauthorized",
    "The sandbox token this connection was opened with was revoked or ended with its sandbox, so the server closed the connection; connect again with the sandbox's current token.",
    401,
  );
}

function tokenExpired(): ToolwireError {
  return new ToolwireError(
    "unauthorized",
    "The subscribe token has expired, so the server closed the connection; get fresh links with GET /v1/invocations/:id/links (toolwire link <id>).",
    401,
  );
}

/** Keeps subscribe tokens out of error messages. */
export function redact(url: string): string {
  return url.replace(/([?&]token=)[^&]*/, "$1…");
}
