/**
 * WebSockets opened through a `fetch` with `Upgrade: websocket`, as the Workers runtime
 * opens them: the only way to reach Toolwire over a service binding, whose `fetch` is not
 * a network address a `new WebSocket(url)` could dial (docs/testing.md).
 */
import type { SocketFactory, SocketLike } from "./socket-transport.ts";

/** What the Workers runtime gives on a `101` answer: the client end, to `accept()`. */
interface AcceptableSocket {
  accept(): void;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: unknown) => void): void;
}

// The listeners SocketLike's overloads take, held as one shape: each is called with the
// event its type names (none for "open", `{ data }` for "message", the close event).
type Listener = (event: never) => void;

const [CONNECTING, OPEN, CLOSED] = [0, 1, 3];

/** True where responses can carry a WebSocket (the Workers runtime). */
export function canUpgradeOverFetch(): boolean {
  return typeof (globalThis as { WebSocketPair?: unknown }).WebSocketPair === "function";
}

/**
 * A socket factory whose sockets open with `fetch(url, { headers: { Upgrade } })`.
 * @example subscribe(url, { createSocket: fetchSocket(env.TOOLWIRE.fetch.bind(env.TOOLWIRE)) })
 */
export function fetchSocket(doFetch: typeof fetch): SocketFactory {
  return (url, headers) => new FetchedSocket(doFetch, url, headers ?? {});
}

class FetchedSocket implements SocketLike {
  readyState = CONNECTING;
  #socket: AcceptableSocket | null = null;
  readonly #listeners = new Map<string, Listener[]>();

  constructor(doFetch: typeof fetch, url: string, headers: Record<string, string>) {
    const httpUrl = url.replace(/^ws(s?):/, "http$1:");
    doFetch(httpUrl, { headers: { ...headers, Upgrade: "websocket" } }).then(
      (response) => this.#accept(response),
      () => this.#end(),
    );
  }

  send(data: string): void {
    this.#socket?.send(data);
  }

  close(code?: number, reason?: string): void {
    if (this.#socket) this.#socket.close(code, reason);
    else this.#end();
  }

  addEventListener(type: "open" | "close" | "error", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: string, listener: Listener): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  #accept(response: Response): void {
    const socket = (response as Response & { webSocket?: AcceptableSocket | null }).webSocket;
    if (response.status !== 101 || !socket) {
      void response.body?.cancel();
      this.#emit("error");
      this.#end();
      return;
    }
    socket.accept();
    this.#socket = socket;
    socket.addEventListener("message", (event) => this.#emit("message", event));
    socket.addEventListener("close", (event) => {
      this.readyState = CLOSED;
      this.#emit("close", event);
    });
    socket.addEventListener("error", (event) => this.#emit("error", event));
    this.readyState = OPEN;
    this.#emit("open");
  }

  #end(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.#emit("close", { code: 1006, reason: "the upgrade failed" });
  }

  #emit(type: string, event?: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) {
      (listener as (event: unknown) => void)(event);
    }
  }
}
