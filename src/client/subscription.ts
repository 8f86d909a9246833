import type { HarnessEvent, ToolEndEvent, ToolStartEvent } from "../core/events/types.ts";
import type { ToolOutputState } from "../core/output/types.ts";
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff.ts";
import { type InvocationAddress, type StreamKind, streamUrl } from "./endpoints.ts";
import { ToolwireError } from "./errors.ts";
import { parseFrame } from "./harness-event.ts";
import { InvocationReplica } from "./invocation-replica.ts";
import type { KeepAlivePolicy } from "./keep-alive.ts";
import { type SocketFactory, socketTransport } from "./socket-transport.ts";
import { sseTransport } from "./sse-transport.ts";
import type { Transport, TransportConnection } from "./transport.ts";

/**
 * - `connecting`: first connection, no base yet
 * - `live`: following the stream
 * - `reconnecting`: the connection dropped or the fold needs a fresh base; the last state stays visible
 * - `settled`: `tool_end` arrived; the state is the result
 * - `closed`: `close()` was called
 * - `failed`: a permanent error (auth, not found) or reconnecting gave up; see `error`
 */
export type SubscriptionStatus =
  | "connecting"
  | "live"
  | "reconnecting"
  | "settled"
  | "closed"
  | "failed";

export interface SubscribeOptions {
  /**
   * `socket` (the default) or `sse`. Where the platform has no global `WebSocket`
   * (Node 20) and no `createSocket` is given, `socket` falls back to `sse`
   * (docs/decisions/150).
   */
  transport?: StreamKind;
  /** Extra headers for the connection (Node only), e.g. `Authorization: Bearer <API token>`. */
  headers?: Record<string, string>;
  backoff?: Partial<BackoffPolicy>;
  /** Keep-alive cadence and deadlines (docs/decisions/063); tests shorten them. */
  keepAlive?: Partial<KeepAlivePolicy>;
  /**
   * How long to wait for the base a resync asked for before opening a new connection
   * instead (the server answers at most one resync per publication). Default 5000 ms.
   */
  resyncTimeoutMs?: number;
  /** How many raw events `events` keeps (newest last). Default 1000. */
  keepEvents?: number;
  /** Replaces the transport entirely (custom platforms, tests). */
  connect?: Transport;
  fetch?: typeof fetch;
  createSocket?: SocketFactory;
}

export interface SubscriptionOutcome {
  status: "settled" | "closed" | "failed";
  state: ToolOutputState | null;
  end: ToolEndEvent | null;
  error: ToolwireError | null;
}

/** A live view of one invocation. Read the fields at any time; `onChange` says when they moved. */
export interface Subscription {
  readonly status: SubscriptionStatus;
  /** The folded output, or null before the first base batch. */
  readonly state: ToolOutputState | null;
  readonly start: ToolStartEvent | null;
  readonly end: ToolEndEvent | null;
  /** The most recent raw events, oldest first. */
  readonly events: readonly HarnessEvent[];
  /** A permanent error once `failed`; while `reconnecting`, why the last connection ended. */
  readonly error: ToolwireError | null;
  /** Consecutive reconnect attempts since the last base batch. */
  readonly attempt: number;
  /** Resolves once the subscription is settled, closed or failed; never rejects. */
  readonly finished: Promise<SubscriptionOutcome>;
  /** Calls `listener` after every change; returns a function that removes it. */
  onChange(listener: (subscription: Subscription) => void): () => void;
  close(): void;
}

/**
 * Follows one invocation live: decodes and folds its events into the current
 * `ToolOutputState`, reconnects with backoff when the connection drops, asks for a
 * fresh base when a frame cannot be applied, and stops after `tool_end`.
 *
 * @example
 * const sub = subscribe(created.socketUrl);
 * sub.onChange((s) => console.log(s.status, s.state?.content[0]));
 * const { status, end } = await sub.finished;
 */
export function subscribe(
  target: string | InvocationAddress,
  options: SubscribeOptions = {},
): Subscription {
  const kind = transportFor(options);
  const connect =
    options.connect ??
    (kind === "socket"
      ? socketTransport(streamUrl(target, "socket"), options)
      : sseTransport(streamUrl(target, "sse"), options));
  return new LiveSubscription(connect, options);
}

/**
 * The transport a subscription uses: the one asked for, except that a WebSocket on a
 * platform that has none (Node 20) becomes SSE, which needs only `fetch`.
 *
 * @example
 * transportFor({ transport: "socket" }) // "sse" on Node 20, "socket" on Node 22
 */
export function transportFor(
  options: Pick<SubscribeOptions, "transport" | "createSocket">,
): StreamKind {
  const kind = options.transport ?? "socket";
  if (kind === "socket" && !options.createSocket && !hasPlatformWebSocket()) return "sse";
  return kind;
}

function hasPlatformWebSocket(): boolean {
  return typeof (globalThis as { WebSocket?: unknown }).WebSocket === "function";
}

class LiveSubscription implements Subscription {
  status: SubscriptionStatus = "connecting";
  start: ToolStartEvent | null = null;
  end: ToolEndEvent | null = null;
  events: HarnessEvent[] = [];
  error: ToolwireError | null = null;
  attempt = 0;
  readonly finished: Promise<SubscriptionOutcome>;

  readonly #connect: Transport;
  readonly #replica = new InvocationReplica();
  readonly #listeners = new Set<(subscription: Subscription) => void>();
  readonly #policy: BackoffPolicy;
  readonly #keepEvents: number;
  #connection: TransportConnection | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #resyncTimeoutMs: number;
  #resyncTimer: ReturnType<typeof setTimeout> | null = null;
  /** Whether the current connection resumed after a seq instead of starting from a base. */
  #resumed = false;
  /** Whether the current resync was already sent again after a skipped delta. */
  #resyncRepeated = false;
  #resolve: (outcome: SubscriptionOutcome) => void = () => {};

  constructor(connect: Transport, options: SubscribeOptions) {
    this.#connect = connect;
    this.#policy = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#keepEvents = options.keepEvents ?? 1000;
    this.#resyncTimeoutMs = options.resyncTimeoutMs ?? 5000;
    this.finished = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    this.#open();
  }

  get state(): ToolOutputState | null {
    return this.#replica.state;
  }

  onChange(listener: (subscription: Subscription) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#stop("closed");
  }

  get #over(): boolean {
    return this.status === "settled" || this.status === "closed" || this.status === "failed";
  }

  /** Opens a connection; one that follows a folded state resumes after its seq (docs/decisions/111). */
  #open(): void {
    const resumed = this.#replica.resumeStream();
    const resume = resumed && this.#replica.seq !== null ? { after: this.#replica.seq } : undefined;
    this.#resumed = resume !== undefined;
    const connection = this.#connect(
      {
        message: (text, id) => {
          if (this.#connection === connection) this.#frame(text, id);
        },
        closed: (error) => {
          if (this.#connection === connection) this.#dropped(error);
        },
      },
      resume,
    );
    this.#connection = connection;
  }

  #frame(text: string, id?: string): void {
    const parsed = parseFrame(text);
    if (parsed.kind === "unknown") return;
    if (parsed.kind === "malformed") {
      this.#recover(parsed.reason);
      return;
    }
    const event = parsed.event;
    this.events.push(event);
    if (this.events.length > this.#keepEvents)
      this.events.splice(0, this.events.length - this.#keepEvents);
    if (event.type === "tool_start") {
      this.start = event;
      if (this.#resumed && this.#replica.synced) {
        // Resumed: the state shown is current again; the server sends only what is new.
        this.attempt = 0;
        this.error = null;
        this.status = "live";
      }
      this.#changed();
      return;
    }
    if (event.type === "tool_update") {
      const outcome = this.#replica.receive(event.ops, event.seq ?? seqOf(id));
      if (outcome.kind === "needs_base") {
        this.#recover(outcome.reason);
        return;
      }
      if (outcome.kind === "skipped" && !this.#resyncRepeated) {
        // A publication after our resync: if the server had nothing new to send then
        // (docs/decisions/070), it will answer now. Once per resync, so at most one extra base.
        this.#resyncRepeated = true;
        this.#connection?.resync();
        return;
      }
      if (outcome.kind === "applied") {
        this.attempt = 0;
        this.error = null;
        this.status = "live";
        this.#changed();
      }
      return;
    }
    // The end is only trusted on a stream the replica follows; otherwise fetch the final base.
    if (!this.#replica.synced) {
      this.#reconnect("the invocation ended before a base batch");
      return;
    }
    this.end = event;
    this.error = null;
    this.#stop("settled");
  }

  /** The fold fell behind: ask for a base on this connection, or open a new one. */
  #recover(reason: string): void {
    this.error = new ToolwireError("out_of_sync", `Resynchronising: ${reason}.`, 0);
    this.status = "reconnecting";
    if (this.attempt >= this.#policy.maxAttempts) {
      this.#giveUp();
      return;
    }
    if (this.#connection?.resync()) {
      this.attempt++;
      this.#resyncRepeated = false;
      this.#replica.awaitBase();
      this.#watchResync(this.#connection);
      this.#changed();
      return;
    }
    this.#reconnect(reason);
  }

  /** A resync that brings no base in time is given up for a new connection (which starts with one). */
  #watchResync(connection: TransportConnection): void {
    if (this.#resyncTimer !== null) clearTimeout(this.#resyncTimer);
    this.#resyncTimer = setTimeout(() => {
      this.#resyncTimer = null;
      if (this.#connection === connection && !this.#replica.synced && !this.#over) {
        this.#reconnect("no base arrived after a resync");
      }
    }, this.#resyncTimeoutMs);
  }

  #reconnect(reason: string): void {
    this.#connection?.close();
    this.#dropped(new ToolwireError("out_of_sync", `Reconnecting: ${reason}.`, 0));
  }

  #dropped(error?: ToolwireError): void {
    this.#connection = null;
    if (this.#over) return;
    if (error?.permanent) {
      this.error = error;
      this.#stop("failed");
      return;
    }
    this.error = error ?? new ToolwireError("unreachable", "The connection was closed.", 0);
    if (this.attempt >= this.#policy.maxAttempts) {
      this.#giveUp();
      return;
    }
    this.status = "reconnecting";
    const delay = backoffDelay(this.attempt, this.#policy);
    this.attempt++;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#open();
    }, delay);
    this.#changed();
  }

  #giveUp(): void {
    const last = this.error?.message ?? "no answer";
    this.error = new ToolwireError(
      "gave_up",
      `Stopped reconnecting after ${this.attempt} attempts. Last problem: ${last}`,
      this.error?.status ?? 0,
    );
    this.#stop("failed");
  }

  #stop(status: "settled" | "closed" | "failed"): void {
    if (this.#over) return;
    this.status = status;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#resyncTimer !== null) clearTimeout(this.#resyncTimer);
    this.#resyncTimer = null;
    const connection = this.#connection;
    this.#connection = null;
    connection?.close();
    this.#changed();
    this.#resolve({ status, state: this.state, end: this.end, error: this.error });
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener(this);
      } catch (error) {
        // A failing listener is its owner's bug: report it without breaking the fold.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** An SSE event id as a storage seq, when it is one. */
function seqOf(id: string | undefined): number | undefined {
  return id !== undefined && /^\d{1,16}$/.test(id) ? Number(id) : undefined;
}
