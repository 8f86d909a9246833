import type { JsonValue, Op, WireOp } from "../src/chord/types.ts";
import { eventHeader, type HarnessEvent, type ToolStartEvent } from "../src/events/index.ts";
import { TOKEN_EXPIRED_CLOSE } from "../src/events/socket-close.ts";
import type { ToolOutputState } from "../src/output/types.ts";
import { expired } from "../src/protocol/index.ts";
import type { ResumedBatch } from "./resume.ts";
import { SseStream } from "./sse-stream.ts";

/** Encodes one stream's batches; one per subscriber (path tables are per stream). */
export interface StreamEncoder {
  encode(ops: Op[]): WireOp[];
}

/** What a hibernatable socket remembers across wake-ups (`serializeAttachment`). */
interface SocketAttachment {
  subscriberId: string;
  /** When its subscribe token expires (epoch ms); null for the bearer token. */
  expiresAt?: number | null;
}

/**
 * The live audience of one invocation: hibernatable WebSockets and SSE streams.
 *
 * Each subscriber has its own encoder, so each stream's first `tool_update` is a
 * base built from the durable state (`["r", state]`) and the rest are deltas encoded
 * against that stream's own path table. Encoders live in memory only: after a wake-up
 * from hibernation a socket has none, and its next update is a fresh base.
 *
 * Every send here happens after the batch it carries was written to SQLite in the
 * same synchronous step; the Durable Object output gate holds outgoing messages until
 * that write commits, so no subscriber ever sees output that is not durable.
 *
 * @example
 * const subs = new Subscribers(ctx, encoder);
 * return subs.acceptSocket(start, state, null); // 101 response for the Worker (null: still running)
 */
export class Subscribers {
  readonly #ctx: DurableObjectState;
  readonly #newEncoder: () => StreamEncoder;
  readonly #socketEncoders = new Map<string, StreamEncoder>();
  /**
   * Sockets whose last `tool_update` was a base with no publication since: they already
   * hold the latest state, so a resync from them is ignored (docs/decisions/070).
   * Memory only: after a wake-up from hibernation one resync per socket is answered again.
   */
  readonly #holdingLatestBase = new Set<string>();
  readonly #streams = new Map<string, SseStream>();
  readonly #sseKeepAliveMs: number | undefined;

  constructor(
    ctx: DurableObjectState,
    newEncoder: () => StreamEncoder,
    options: { sseKeepAliveMs?: number } = {},
  ) {
    this.#ctx = ctx;
    this.#newEncoder = newEncoder;
    this.#sseKeepAliveMs = options.sseKeepAliveMs;
  }

  /**
   * A message from a socket: `{"type":"resync"}` asks for a fresh base, at most once per
   * publication (docs/decisions/070); nothing else is read.
   */
  receive(
    ws: WebSocket,
    message: string | ArrayBuffer,
    base: () => { start: ToolStartEvent; state: ToolOutputState; seq: number },
  ): void {
    if (typeof message !== "string") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if ((parsed as { type?: unknown } | null)?.type !== "resync") return;
    const { start, state, seq } = base();
    this.resync(ws, start, state, seq);
  }

  /**
   * Accepts a WebSocket (hibernatable) and greets it: `tool_start`, then a base
   * `tool_update` of `state` (at storage seq `seq`), or, for a subscriber resuming
   * after an id, the batches after it (`resumed`, resume.ts); `tool_end` at once when
   * the invocation already settled. Every `tool_update` carries its storage `seq`.
   */
  acceptSocket(
    start: ToolStartEvent,
    state: ToolOutputState,
    ended: { isError: boolean } | null,
    greeting: { seq: number; resumed: ResumedBatch[] | null; expiresAt?: number | null } = {
      seq: 0,
      resumed: null,
    },
  ): Response {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const subscriberId = crypto.randomUUID();
    this.#ctx.acceptWebSocket(server);
    const expiresAt = greeting.expiresAt ?? null;
    server.serializeAttachment({ subscriberId, expiresAt } satisfies SocketAttachment);
    const encoder = this.#newEncoder();
    sendSocket(server, start);
    const batches = greeting.resumed ?? [
      { seq: greeting.seq, ops: [["r", state as unknown as JsonValue]] },
    ];
    for (const batch of batches) {
      sendSocket(server, {
        ...eventHeader(start),
        type: "tool_update",
        ops: encoder.encode(batch.ops),
        seq: batch.seq,
      });
    }
    if (ended) {
      sendSocket(server, { ...eventHeader(start), type: "tool_end", isError: ended.isError });
      server.close(1000, "settled");
    } else {
      this.#socketEncoders.set(subscriberId, encoder);
      if (greeting.resumed === null) this.#holdingLatestBase.add(subscriberId);
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Opens an SSE stream (`text/event-stream`): one event per `data:` line, `id:` the
   * storage seq of the batch the event reflects; first `tool_start`, then a base. Its
   * queue is bounded (`SseStream`): a reader that falls behind gets a fresh base.
   */
  openEventStream(
    start: ToolStartEvent,
    state: ToolOutputState,
    seq: number,
    ended: { isError: boolean } | null,
    resume: { after: number; batches: ResumedBatch[] } | null = null,
    expiresAt: number | null = null,
  ): Response {
    const streamId = crypto.randomUUID();
    const stream = new SseStream({
      start,
      state,
      seq,
      resume,
      expiresAt,
      newEncoder: this.#newEncoder,
      onCancel: () => this.#streams.delete(streamId),
      keepAliveMs: this.#sseKeepAliveMs,
    });
    if (ended) stream.end(ended.isError, seq);
    else this.#streams.set(streamId, stream);
    return new Response(stream.readable, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  }

  /** Bytes queued for SSE readers (the fullest stream) and how often one fell behind (tests). */
  sseStats(): { maxQueuedBytes: number; resets: number; streams: number } {
    let maxQueuedBytes = 0;
    let resets = 0;
    for (const stream of this.#streams.values()) {
      maxQueuedBytes = Math.max(maxQueuedBytes, stream.queuedBytes);
      resets += stream.resets;
    }
    return { maxQueuedBytes, resets, streams: this.#streams.size };
  }

  /**
   * Sends one durable publication to everyone. `ops` is the batch as flushed; `state`
   * is the durable state after it (used for the base of a subscriber without encoder).
   */
  publish(start: ToolStartEvent, ops: Op[], state: ToolOutputState, seq: number): void {
    this.#holdingLatestBase.clear();
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#closeIfExpired(ws)) continue;
      const id = subscriberIdOf(ws);
      let encoder = this.#socketEncoders.get(id);
      let batch = ops;
      if (!encoder) {
        encoder = this.#newEncoder();
        this.#socketEncoders.set(id, encoder);
        batch = [["r", state as unknown as JsonValue]];
        this.#holdingLatestBase.add(id);
      }
      sendSocket(ws, {
        ...eventHeader(start),
        type: "tool_update",
        ops: encoder.encode(batch),
        seq,
      });
    }
    for (const stream of this.#streams.values()) stream.update(ops, state, seq);
  }

  /**
   * A client asked for a fresh base (`{"type":"resync"}`): new encoder, base of `state`.
   * Ignored (returns false) while the socket's last update was a base that no
   * publication has followed: it holds the latest state already, and answering every
   * request would let any token holder make the object send snapshots without end.
   */
  resync(ws: WebSocket, start: ToolStartEvent, state: ToolOutputState, seq: number): boolean {
    if (this.#closeIfExpired(ws)) return false;
    const id = subscriberIdOf(ws);
    if (this.#holdingLatestBase.has(id)) return false;
    const encoder = this.#newEncoder();
    this.#socketEncoders.set(id, encoder);
    this.#holdingLatestBase.add(id);
    sendSocket(ws, {
      ...eventHeader(start),
      type: "tool_update",
      ops: encoder.encode([["r", state as unknown as JsonValue]]),
      seq,
    });
    return true;
  }

  /** Sends `tool_end` to everyone and closes every stream. */
  end(start: ToolStartEvent, isError: boolean, seq: number): void {
    const event: HarnessEvent = { ...eventHeader(start), type: "tool_end", isError };
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#closeIfExpired(ws)) continue;
      sendSocket(ws, event);
      closeSocket(ws, 1000, "settled");
    }
    this.#socketEncoders.clear();
    this.#holdingLatestBase.clear();
    for (const stream of this.#streams.values()) stream.end(isError, seq);
    this.#streams.clear();
  }

  /**
   * A socket whose subscribe token has expired gets no more events: it is closed with
   * `TOKEN_EXPIRED_CLOSE` at the first event after its expiry (docs/decisions/112).
   */
  #closeIfExpired(ws: WebSocket): boolean {
    const attachment = ws.deserializeAttachment() as SocketAttachment | null;
    if (!expired(attachment?.expiresAt ?? null, Date.now())) return false;
    this.drop(ws);
    closeSocket(ws, TOKEN_EXPIRED_CLOSE.code, TOKEN_EXPIRED_CLOSE.reason);
    return true;
  }

  /** Forgets a socket that closed or failed. */
  drop(ws: WebSocket): void {
    const id = subscriberIdOf(ws);
    this.#socketEncoders.delete(id);
    this.#holdingLatestBase.delete(id);
  }
}

function subscriberIdOf(ws: WebSocket): string {
  const attachment = ws.deserializeAttachment() as SocketAttachment | null;
  return attachment?.subscriberId ?? "";
}

function sendSocket(ws: WebSocket, event: HarnessEvent): void {
  try {
    ws.send(JSON.stringify(event));
  } catch {
    // The socket is closing; its close handler forgets it.
  }
}

/** Closes a socket; one that is already closed stays closed. */
export function closeSocket(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
