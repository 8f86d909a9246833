import type { JsonValue, Op, WireOp } from "../../../src/core/chord/types.ts";
import {
  eventHeader,
  type HarnessEvent,
  type ToolStartEvent,
} from "../../../src/core/events/index.ts";
import {
  CREDENTIAL_REVOKED_CLOSE,
  TOKEN_EXPIRED_CLOSE,
} from "../../../src/core/events/socket-close.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { expired, type SandboxCredential } from "../../../src/protocol/index.ts";
import type { ResumedBatch } from "./resume.ts";
import { SocketAttachments } from "./socket-attachments.ts";
import { SseStream } from "./sse-stream.ts";
import type { StreamEncoder } from "./stream-encoder.ts";

/**
 * Sockets whose encoders have seen the same batches since the same base: they share one
 * encoder, so each publication is encoded and serialized once for all of them.
 */
interface EncoderGroup {
  encoder: StreamEncoder;
}

/**
 * The group a base of `state` at `seq` opened, while no publication has followed it: a
 * socket greeted (or resynced, or woken) now gets the same base message and joins it.
 * Its members hold the latest state already (their resyncs are ignored, decision 070).
 */
interface FreshBase {
  group: EncoderGroup;
  state: ToolOutputState;
  seq: number;
  /** The base `tool_update` as sent, serialized once. */
  message: string;
}

/**
 * The live audience of one invocation: hibernatable WebSockets and SSE streams.
 *
 * Each stream's first `tool_update` is a base built from the durable state
 * (`["r", state]`) and the rest are deltas encoded against that stream's path table.
 * Sockets greeted with the same base (no publication between them) share one encoder
 * and one serialized message per publication (`EncoderGroup`); a resync moves a socket
 * to a new group. Encoders live in memory only: after a wake-up from hibernation a
 * socket has none, and its next update is a fresh base (shared by all such sockets).
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
  /** Each socket's encoder group, by subscriber id. */
  readonly #groups = new Map<string, EncoderGroup>();
  /**
   * The group of the latest base while no publication has followed it. Memory only:
   * after a wake-up from hibernation one resync per socket is answered again.
   */
  #fresh: FreshBase | null = null;
  /**
   * The call's `tool_start` as sent, serialized once: it never changes, and a greeting
   * per socket was a `JSON.stringify` per socket (decision 236).
   */
  #startText: { toolCallId: string; text: string } | null = null;
  readonly #attachments = new SocketAttachments();
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
    greeting: {
      seq: number;
      resumed: ResumedBatch[] | null;
      expiresAt?: number | null;
      credential?: SandboxCredential | null;
    } = {
      seq: 0,
      resumed: null,
    },
  ): Response {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const subscriberId = crypto.randomUUID();
    this.#ctx.acceptWebSocket(server);
    const expiresAt = greeting.expiresAt ?? null;
    const credential = greeting.credential ?? null;
    this.#attachments.write(server, { subscriberId, expiresAt, credential });
    sendText(server, this.#startMessage(start));
    if (ended) {
      const encoder = this.#newEncoder();
      for (const batch of greeting.resumed ?? [{ seq: greeting.seq, ops: baseOps(state) }]) {
        sendSocket(server, updateOf(start, encoder.encode(batch.ops), batch.seq));
      }
      sendSocket(server, { ...eventHeader(start), type: "tool_end", isError: ended.isError });
      server.close(1000, "settled");
    } else if (greeting.resumed === null) {
      const fresh = this.#freshBase(start, state, greeting.seq);
      this.#groups.set(subscriberId, fresh.group);
      sendText(server, fresh.message);
    } else {
      // A resumed socket's encoder has seen its own batches: a group of its own.
      const group: EncoderGroup = { encoder: this.#newEncoder() };
      for (const batch of greeting.resumed) {
        sendSocket(server, updateOf(start, group.encoder.encode(batch.ops), batch.seq));
      }
      this.#groups.set(subscriberId, group);
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  #startMessage(start: ToolStartEvent): string {
    if (this.#startText?.toolCallId !== start.toolCallId) {
      this.#startText = { toolCallId: start.toolCallId, text: JSON.stringify(start) };
    }
    return this.#startText.text;
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
    credential: SandboxCredential | null = null,
  ): Response {
    const streamId = crypto.randomUUID();
    const stream = new SseStream({
      start,
      state,
      seq,
      resume,
      expiresAt,
      credential,
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

  /**
   * Ends every subscription whose sandbox token no longer holds (revoked, or its sandbox
   * ended), asking `holds` once per distinct token: sockets close with
   * `CREDENTIAL_REVOKED_CLOSE`, streams end with a comment saying so (decision 253).
   * Returns how many were ended.
   */
  async endRevoked(holds: (credential: SandboxCredential) => Promise<boolean>): Promise<number> {
    const sockets = this.#ctx.getWebSockets();
    const streams = [...this.#streams.entries()];
    const held = new Map<string, Promise<boolean>>();
    const check = (c: SandboxCredential) => {
      const key = `${c.sandbox} ${c.nonce}`;
      if (!held.has(key)) held.set(key, holds(c));
      return held.get(key)!;
    };
    let ended = 0;
    for (const ws of sockets) {
      const credential = this.#attachments.read(ws)?.credential;
      if (!credential || (await check(credential))) continue;
      this.drop(ws);
      closeSocket(ws, CREDENTIAL_REVOKED_CLOSE.code, CREDENTIAL_REVOKED_CLOSE.reason);
      ended++;
    }
    for (const [id, stream] of streams) {
      if (!stream.credential || (await check(stream.credential))) continue;
      stream.revoke();
      this.#streams.delete(id);
      ended++;
    }
    return ended;
  }

  /** How many sockets and streams a publication now goes to. */
  get count(): number {
    return this.#ctx.getWebSockets().length + this.#streams.size;
  }

  /**
   * Cuts every subscriber off as a lost connection would (docs/testing.md): sockets close
   * with `code`, streams end without `tool_end`. Their clients resume as after any drop.
   */
  dropAll(code: number, reason: string): number {
    const sockets = this.#ctx.getWebSockets();
    for (const ws of sockets) closeSocket(ws, code, reason);
    const streams = [...this.#streams.values()];
    for (const stream of streams) stream.drop();
    this.#streams.clear();
    return sockets.length + streams.length;
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
    this.#fresh = null;
    /** This publication as each group's encoder puts it, serialized once per group. */
    const messages = new Map<EncoderGroup, string>();
    /** Sockets without an encoder (woken from hibernation) share one base of `state`. */
    let woken: FreshBase | null = null;
    const now = Date.now();
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#closeIfExpired(ws, now)) continue;
      const id = this.#subscriberIdOf(ws);
      const group = this.#groups.get(id);
      if (!group) {
        woken ??= this.#baseOf(start, state, seq);
        this.#groups.set(id, woken.group);
        sendText(ws, woken.message);
        continue;
      }
      let message = messages.get(group);
      if (message === undefined) {
        message = JSON.stringify(updateOf(start, group.encoder.encode(ops), seq));
        messages.set(group, message);
      }
      sendText(ws, message);
    }
    this.#fresh = woken;
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
    const id = this.#subscriberIdOf(ws);
    const group = this.#groups.get(id);
    if (group !== undefined && group === this.#fresh?.group) return false;
    const fresh = this.#freshBase(start, state, seq);
    this.#groups.set(id, fresh.group);
    sendText(ws, fresh.message);
    return true;
  }

  /**
   * The group of the latest base of `state` at `seq`: the one still fresh, or a new one
   * (which is fresh from now until the next publication).
   */
  #freshBase(start: ToolStartEvent, state: ToolOutputState, seq: number): FreshBase {
    const fresh = this.#fresh;
    if (fresh !== null && fresh.seq === seq && fresh.state === state) return fresh;
    this.#fresh = this.#baseOf(start, state, seq);
    return this.#fresh;
  }

  /** A new group whose encoder has encoded a base of `state`, and that base as sent. */
  #baseOf(start: ToolStartEvent, state: ToolOutputState, seq: number): FreshBase {
    const group: EncoderGroup = { encoder: this.#newEncoder() };
    const message = JSON.stringify(updateOf(start, group.encoder.encode(baseOps(state)), seq));
    return { group, state, seq, message };
  }

  /** Sends `tool_end` to everyone and closes every stream. */
  end(start: ToolStartEvent, isError: boolean, seq: number): void {
    const event: HarnessEvent = { ...eventHeader(start), type: "tool_end", isError };
    const text = JSON.stringify(event);
    const now = Date.now();
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#closeIfExpired(ws, now)) continue;
      sendText(ws, text);
      closeSocket(ws, 1000, "settled");
    }
    this.#groups.clear();
    this.#fresh = null;
    for (const stream of this.#streams.values()) stream.end(isError, seq);
    this.#streams.clear();
  }

  /**
   * A socket whose subscribe token has expired gets no more events: it is closed with
   * `TOKEN_EXPIRED_CLOSE` at the first event after its expiry (docs/decisions/112).
   */
  #closeIfExpired(ws: WebSocket, now = Date.now()): boolean {
    const attachment = this.#attachments.read(ws);
    if (!expired(attachment?.expiresAt ?? null, now)) return false;
    this.drop(ws);
    closeSocket(ws, TOKEN_EXPIRED_CLOSE.code, TOKEN_EXPIRED_CLOSE.reason);
    return true;
  }

  /** Forgets a socket that closed or failed. */
  drop(ws: WebSocket): void {
    this.#groups.delete(this.#subscriberIdOf(ws));
  }

  #subscriberIdOf(ws: WebSocket): string {
    return this.#attachments.read(ws)?.subscriberId ?? "";
  }
}

function baseOps(state: ToolOutputState): Op[] {
  return [["r", state as unknown as JsonValue]];
}

function updateOf(start: ToolStartEvent, ops: WireOp[], seq: number): HarnessEvent {
  return { ...eventHeader(start), type: "tool_update", ops, seq };
}

function sendSocket(ws: WebSocket, event: HarnessEvent): void {
  sendText(ws, JSON.stringify(event));
}

function sendText(ws: WebSocket, text: string): void {
  try {
    ws.send(text);
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
