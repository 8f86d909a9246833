import { errorFromResponse, ToolwireError, unreachable } from "./errors.ts";
import type { Transport } from "./transport.ts";

/** The part of the platform `WebSocket` (browsers, Node 22, Workers) this client uses. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "close" | "error", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}
export type SocketFactory = (url: string, headers?: Record<string, string>) => SocketLike;

export interface SocketTransportOptions {
  /** Extra upgrade headers (Node only: browsers cannot set them). */
  headers?: Record<string, string>;
  /** Defaults to the platform `WebSocket`. */
  createSocket?: SocketFactory;
  /** Used to ask why an upgrade failed. Defaults to the platform `fetch`. */
  fetch?: typeof fetch;
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
 * event per text frame; `resync()` sends `{"type":"resync"}`. A browser cannot see
 * why an upgrade was refused, so after a failed upgrade the same URL is fetched over
 * plain HTTP to tell an expired token or an unknown invocation from a network blip.
 *
 * @example
 * subscribe(url, { connect: socketTransport("wss://host/v1/invocations/abc/socket?token=…") })
 */
export function socketTransport(url: string, options: SocketTransportOptions = {}): Transport {
  const create = options.createSocket ?? platformSocket;
  return (handlers) => {
    let done = false;
    let opened = false;
    const finish = (error?: ToolwireError) => {
      if (done) return;
      done = true;
      handlers.closed(error);
    };
    let socket: SocketLike;
    try {
      socket = create(url, options.headers);
    } catch (error) {
      queueMicrotask(() => finish(unreachable(url, error)));
      return {
        resync: () => false,
        close() {
          done = true;
        },
      };
    }
    socket.addEventListener("open", () => {
      opened = true;
    });
    socket.addEventListener("message", (event) => {
      if (!done && typeof event.data === "string") handlers.message(event.data);
    });
    let refused = false;
    const ended = () => {
      if (done || refused) return;
      if (opened) return finish();
      refused = true;
      void explainRefusal(url, options).then(finish);
    };
    socket.addEventListener("close", ended);
    // Node's WebSocket reports a refused upgrade with "error" alone, never "close".
    socket.addEventListener("error", ended);
    return {
      resync() {
        if (done || socket.readyState !== OPEN) return false;
        socket.send(JSON.stringify({ type: "resync" }));
        return true;
      },
      close() {
        done = true;
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

/** Keeps subscribe tokens out of error messages. */
export function redact(url: string): string {
  return url.replace(/([?&]token=)[^&]*/, "$1…");
}
