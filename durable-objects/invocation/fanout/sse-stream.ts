import type { JsonValue, Op } from "../../../src/core/chord/types.ts";
import {
  CREDENTIAL_REVOKED_CLOSE,
  eventHeader,
  type HarnessEvent,
  type ToolStartEvent,
} from "../../../src/core/events/index.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { expired, type SandboxCredential, WORKER_DEFAULTS } from "../../../src/protocol/index.ts";
import { SSE_KEEPALIVE_COMMENT } from "./keep-alive.ts";
import type { ResumedBatch } from "./resume.ts";
import type { StreamEncoder } from "./stream-encoder.ts";

/**
 * Most bytes one SSE subscriber may have queued in the Durable Object before it counts
 * as behind (docs/decisions/047): its deltas are then dropped and it gets a fresh base
 * once it has read its backlog down.
 */
export const MAX_SSE_QUEUED_BYTES = 1024 * 1024;

const utf8 = new TextEncoder();
const keepAliveBytes = utf8.encode(SSE_KEEPALIVE_COMMENT);

/**
 * One SSE subscriber: a `text/event-stream` body with its own encoder and a bounded
 * queue. Events go out as `id: <seq>` + one `data:` line each; a reader that comes
 * back with `Last-Event-ID` gets the batches after it instead of a base (resume.ts).
 *
 * The queue is the body's own (a byte-counting `ReadableStream`), so what it holds is
 * exactly what the reader has not taken yet. An update that would take it over
 * `maxQueuedBytes` is dropped and the stream is marked behind; from then on updates
 * are dropped until the reader has drained the queue enough for a base of the latest
 * durable state (from a new encoder), which replaces the dropped deltas. A slow reader
 * thus costs at most `maxQueuedBytes` (or one base, if a base alone is larger) and
 * converges on the same state as everyone else.
 *
 * After `keepAliveMs` without a byte written, it writes the comment `: keep-alive`
 * (docs/decisions/071) so proxies do not cut a quiet stream; the timer ends with the
 * stream.
 *
 * @example
 * const sse = new SseStream({ start, state, seq, newEncoder: encoder, onCancel });
 * sse.update(ops, stateAfter, seq + 1);
 * return new Response(sse.readable, { headers: { "content-type": "text/event-stream" } });
 */
export class SseStream {
  readonly readable: ReadableStream<Uint8Array>;
  /** Times this stream fell behind and was caught up with a base instead of its backlog. */
  resets = 0;
  readonly #start: ToolStartEvent;
  readonly #newEncoder: () => StreamEncoder;
  readonly #maxQueuedBytes: number;
  readonly #keepAliveMs: number;
  #keepAliveTimer: ReturnType<typeof setTimeout> | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  #encoder: StreamEncoder;
  #latest: { state: ToolOutputState; seq: number };
  #behind = false;
  #open = true;
  readonly #expiresAt: number | null;
  /** The sandbox token it was opened with, checked at each heartbeat (decision 253). */
  readonly credential: SandboxCredential | null;

  constructor(options: {
    start: ToolStartEvent;
    state: ToolOutputState;
    seq: number;
    /**
     * A reader resuming after event id `after`: the batches after it replace the base
     * (resume.ts). Null for a new reader.
     */
    resume?: { after: number; batches: ResumedBatch[] } | null;
    /** When the reader's subscribe token expires (epoch ms): the stream ends then (null: never). */
    expiresAt?: number | null;
    credential?: SandboxCredential | null;
    newEncoder: () => StreamEncoder;
    onCancel: () => void;
    maxQueuedBytes?: number;
    /** Silence before a keep-alive comment (default 25 s). */
    keepAliveMs?: number;
  }) {
    this.#start = options.start;
    this.#newEncoder = options.newEncoder;
    this.#encoder = options.newEncoder();
    this.#maxQueuedBytes = options.maxQueuedBytes ?? MAX_SSE_QUEUED_BYTES;
    this.#keepAliveMs = options.keepAliveMs ?? WORKER_DEFAULTS.sseKeepAliveSeconds * 1000;
    this.#latest = { state: options.state, seq: options.seq };
    this.#expiresAt = options.expiresAt ?? null;
    this.credential = options.credential ?? null;
    this.readable = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        // Called after each read while the queue is under its bound: the moment to catch up.
        pull: () => this.#catchUp(),
        cancel: () => {
          this.#open = false;
          clearTimeout(this.#keepAliveTimer);
          options.onCancel();
        },
      },
      { highWaterMark: this.#maxQueuedBytes, size: (chunk) => chunk.byteLength },
    );
    // tool_start's id is the state the reader holds once it has it: nothing (0) for a
    // new reader, `after` for a resumed one, so a reader cut right after it resumes right.
    const resume = options.resume ?? null;
    this.#enqueue({ ...this.#start }, resume?.after ?? 0, true);
    if (resume === null) {
      this.#sendBase(true);
      return;
    }
    for (const batch of resume.batches) {
      const event: HarnessEvent = {
        ...eventHeader(this.#start),
        type: "tool_update",
        ops: this.#encoder.encode(batch.ops),
      };
      this.#enqueue(event, batch.seq, true);
    }
  }

  /** Bytes written to this stream that its reader has not taken yet. */
  get queuedBytes(): number {
    const room = this.#controller?.desiredSize ?? this.#maxQueuedBytes;
    return this.#open ? this.#maxQueuedBytes - room : 0;
  }

  /** Whether the stream is dropping deltas until its reader catches up. */
  get behind(): boolean {
    return this.#behind;
  }

  /** One durable publication: its delta, or nothing while the stream is behind. */
  update(ops: Op[], state: ToolOutputState, seq: number): void {
    this.#latest = { state, seq };
    if (this.#endIfExpired() || !this.#open || this.#behind) return;
    const event: HarnessEvent = {
      ...eventHeader(this.#start),
      type: "tool_update",
      ops: this.#encoder.encode(ops),
    };
    if (!this.#enqueue(event, seq, false)) {
      // The encoder has moved past what the reader will get; the base resets both sides.
      this.#behind = true;
      this.resets++;
    }
  }

  /** `tool_end` (after a base when behind, so the reader ends on the final state), then closes. */
  end(isError: boolean, seq: number): void {
    if (this.#endIfExpired() || !this.#open) return;
    if (this.#behind) this.#sendBase(true);
    this.#enqueue({ ...eventHeader(this.#start), type: "tool_end", isError }, seq, true);
    this.#close();
  }

  /**
   * The reader's token has expired: no more events. The stream ends with a comment
   * saying why; a reconnect with the same token is refused with 401 (docs/decisions/112).
   */
  #endIfExpired(): boolean {
    if (!this.#open || !expired(this.#expiresAt, Date.now())) return false;
    this.#write(utf8.encode(": subscribe token expired\n\n"));
    this.#close();
    return true;
  }

  /** Ends the stream without `tool_end`, as a dropped connection would (test controls). */
  drop(): void {
    this.#close();
  }

  /** Its sandbox token no longer holds: a comment says so and the stream ends. */
  revoke(): void {
    if (!this.#open) return;
    this.#write(utf8.encode(`: ${CREDENTIAL_REVOKED_CLOSE.reason}\n\n`));
    this.#close();
  }

  #close(): void {
    if (!this.#open) return;
    this.#open = false;
    clearTimeout(this.#keepAliveTimer);
    this.#controller?.close();
  }

  #catchUp(): void {
    if (!this.#open || !this.#behind) return;
    // A base larger than the bound still goes out, but only into an empty queue.
    this.#sendBase(this.queuedBytes === 0);
  }

  #sendBase(force: boolean): void {
    const encoder = this.#newEncoder();
    const event: HarnessEvent = {
      ...eventHeader(this.#start),
      type: "tool_update",
      ops: encoder.encode([["r", this.#latest.state as unknown as JsonValue]]),
    };
    if (!this.#enqueue(event, this.#latest.seq, force)) return;
    this.#encoder = encoder;
    this.#behind = false;
  }

  /** Queues one event if it fits under the bound (or `force`); false if it was dropped. */
  #enqueue(event: HarnessEvent, seq: number, force: boolean): boolean {
    const bytes = utf8.encode(`id: ${seq}\ndata: ${JSON.stringify(event)}\n\n`);
    if (!force && this.queuedBytes + bytes.byteLength > this.#maxQueuedBytes) return false;
    this.#write(bytes);
    return true;
  }

  /** Writes bytes and restarts the silence timer, whose end writes a keep-alive comment. */
  #write(bytes: Uint8Array): void {
    this.#controller?.enqueue(bytes);
    clearTimeout(this.#keepAliveTimer);
    this.#keepAliveTimer = setTimeout(() => {
      if (this.#open) this.#write(keepAliveBytes);
    }, this.#keepAliveMs);
  }
}
