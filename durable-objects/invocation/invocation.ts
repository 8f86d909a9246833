/**
 * The Invocation Durable Object: one per tool call, named by its `toolCallId`. This file
 * says what is wired to what; the life of the invocation (start → run → publish →
 * persist → settle → retire) is told in lifecycle.ts.
 */
import { DurableObject } from "cloudflare:workers";
import { encoder } from "../../src/core/chord/index.ts";
import { DROPPED_BY_TEST_CLOSE } from "../../src/core/events/index.ts";
import {
  errorResponse,
  type HeldSize,
  type InvocationApi,
  type InvocationView,
  MODEL_TYPIST,
  type Outcome,
  type ProducerCall,
  type ProducerEnd,
  type ProgressPoll,
  type ReadCursor,
  type ReadRange,
  type ResultPoll,
  type StartRequest,
  type TypedInput,
  workerConfig,
} from "../../src/protocol/index.ts";
import { PING_MESSAGE, PONG_MESSAGE } from "./fanout/keep-alive.ts";
import { closeSocket, Subscribers } from "./fanout/subscribers.ts";
import { openSubscription } from "./fanout/subscription.ts";
import { startEventOf } from "./fanout/views.ts";
import { InvocationLifecycle } from "./lifecycle.ts";
import { NO_INVOCATION, notFound } from "./outcome.ts";
import type { StorageStats } from "./output/store.ts";
import { StoredInvocation } from "./output/stored-invocation.ts";
import { ReadCursors } from "./read-cursors.ts";
import { type ForkAnswer, forkPrefix } from "./stream/stream-fork.ts";
import { StreamForks } from "./stream/stream-forks.ts";
import {
  forkGone,
  forkMade,
  isAlive,
  type StreamLineage,
  type StreamPeers,
} from "./stream/stream-lineage.ts";
import { StreamLog } from "./stream/stream-log.ts";
import { answerStream } from "./stream/stream-route.ts";
import { TypedInputs } from "./typed-inputs.ts";

export class InvocationDO extends DurableObject<Env> implements InvocationApi {
  readonly #stored: StoredInvocation;
  readonly #subscribers: Subscribers;
  readonly #life: InvocationLifecycle;
  readonly #cursors: ReadCursors;
  /** What people typed into the terminal, for the model's next read (typed-inputs.ts). */
  readonly #typed: TypedInputs;
  /** The call's Durable Stream: a stream's bytes, or an external call's appends (stream/). */
  readonly #stream: StreamLog;
  /** The stream with its forks and the other streams it forks from (stream/stream-lineage.ts). */
  readonly #lineage: StreamLineage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The lifecycle loads with synchronous SQL: the constructor finishes before any
    // event is delivered, so nothing can observe a half-loaded object.
    this.#stored = new StoredInvocation(ctx.storage);
    this.#cursors = new ReadCursors(ctx.storage.sql);
    this.#typed = new TypedInputs(ctx.storage.sql);
    this.#stream = new StreamLog(ctx.storage.sql);
    this.#lineage = {
      log: this.#stream,
      forks: new StreamForks(ctx.storage.sql),
      peers: this.#peers(),
    };
    this.#subscribers = new Subscribers(ctx, encoder, {
      sseKeepAliveMs: workerConfig(env).sseKeepAliveMs,
    });
    const parts = { stored: this.#stored, subscribers: this.#subscribers, stream: this.#stream };
    this.#life = new InvocationLifecycle(ctx, env, parts, {
      memoMoment: (name, moment) => this.memoMoment(name, moment),
      beforeFlush: () => this.beforeFlush(),
      recovered: (batches) => this.recovered(batches),
    });
    // Pings are answered by the runtime, so a client's keep-alive never wakes a
    // hibernated object (docs/decisions/071).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_MESSAGE, PONG_MESSAGE));
  }

  // ── the Worker's RPC (src/protocol/invocation.ts) ────────────────────────────

  /** Creates the invocation and starts its tool, or returns the existing one. */
  start(req: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>> {
    return this.#life.start(req);
  }

  /**
   * The producer API of the `external` tool: every call or none, then `end` if given;
   * with a `seq`, idempotent (producer-sequence.ts).
   */
  produce(
    calls: ProducerCall[],
    end?: ProducerEnd,
    seq?: number,
  ): Promise<Outcome<InvocationView>> {
    return this.#life.producer.produce(calls, end, seq);
  }

  /** Aborts a running tool; the result keeps the partial output and says it was cancelled. */
  cancel(): Promise<Outcome<InvocationView>> {
    return this.#life.cancel();
  }

  async view(): Promise<Outcome<InvocationView>> {
    return this.#life.reads.view();
  }

  /**
   * What a watching MCP call reads every second: waits like `result`, answers the
   * output's totals and latest line while running (not the view), the result once settled.
   */
  progress(waitMs: number): Promise<Outcome<ProgressPoll>> {
    return this.#life.reads.progress(waitMs);
  }

  /** Settled → the result; otherwise waits up to `waitMs` (at most 30 s) for it. */
  result(waitMs: number): Promise<Outcome<ResultPoll>> {
    return this.#life.reads.result(waitMs);
  }

  /** Where `reader` (a job_output call) stands in this output (read-cursors.ts). */
  async readCursor(reader: string): Promise<Outcome<ReadCursor>> {
    if (!this.#stored.record) return notFound();
    return { ok: true, value: this.#cursors.cursor(reader) };
  }

  /** Gives `reader` a range of this output's lines, once (read-cursors.ts). */
  async commitRead(reader: string, range: ReadRange): Promise<Outcome<ReadRange>> {
    if (!this.#stored.record) return notFound();
    return this.#cursors.commit(reader, range);
  }

  /** Names who typed into the terminal last; keeps a person's input for the model (decision 191). */
  async noteInput(input: TypedInput): Promise<Outcome<null>> {
    const noted = this.#life.noteInput(input);
    if (noted.ok && input.by !== MODEL_TYPIST) this.#typed.add(input);
    return noted;
  }

  /** The size a person holds the terminal at, or null for the call's own (decision 193). */
  async noteSize(size: HeldSize | null): Promise<Outcome<null>> {
    return this.#life.noteSize(size);
  }

  /** People's inputs since the last model read, given to `reader` once (typed-inputs.ts). */
  async typedSince(reader: string): Promise<Outcome<TypedInput[]>> {
    if (!this.#stored.record) return notFound();
    return this.#typed.since(reader);
  }

  /** What a fork of this object's stream at `offset` inherits (stream/stream-fork.ts). */
  async forkSource(offset: string | null, subOffset: number): Promise<ForkAnswer> {
    return forkPrefix(this.#stream, offset, subOffset);
  }

  /** The stream `fork` (made as `forkGeneration`) forked this stream's making `generation`. */
  async forkMade(generation: string, fork: string, forkGeneration: string): Promise<void> {
    forkMade(this.#lineage, generation, fork, forkGeneration);
  }

  /** That fork is gone: a soft-deleted stream whose last fork went goes too (stream-lineage.ts). */
  forkGone(generation: string, fork: string, forkGeneration: string): Promise<void> {
    return forkGone(this.#lineage, generation, fork, forkGeneration);
  }

  /** Whether this stream is still the making `generation` its source knows (stream-lineage.ts). */
  async forkAlive(generation: string): Promise<boolean> {
    return isAlive(this.#stream, generation);
  }

  // ── the runtime's events ─────────────────────────────────────────────────────

  /** Heartbeat, resume after a crash, idle deadline or retirement (alarm-schedule.ts). */
  override alarm(): Promise<void> {
    return this.#life.alarm();
  }

  /**
   * `/socket` or `/events` (subscription.ts), or `/stream` (stream/stream-route.ts); the
   * Worker checked the credential. With no invocation here it answers 404 in the API's
   * error shape itself.
   */
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === "/stream") {
      return answerStream(
        request,
        this.#lineage,
        {
          record: () => this.#stored.record,
          result: () => this.#stored.result(),
          settled: (ms) => this.#life.reads.result(ms),
        },
        workerConfig(this.env).streamLongPollMs,
      );
    }
    const record = this.#stored.record;
    if (!record) return errorResponse(NO_INVOCATION);
    const ended = record.status === "settled" ? { isError: record.isError } : null;
    const [start, state] = [startEventOf(record), this.#life.reads.state()];
    return openSubscription(this.#subscribers, request, start, state, this.#stored.log, ended);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const record = this.#stored.record;
    if (!record) return;
    this.#subscribers.receive(ws, message, () => ({
      start: startEventOf(record),
      state: this.#life.reads.state(),
      seq: this.#stored.log.lastSeq,
    }));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#subscribers.drop(ws);
    closeSocket(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#subscribers.drop(ws);
  }

  /**
   * Other streams' objects, by name, as this stream's forks and source reach them. This
   * object's own name is its id's: streams are reached by name (`getByName`).
   */
  #peers(): StreamPeers {
    const stream = (name: string) =>
      this.env.INVOCATIONS.getByName(name) as unknown as InvocationDO;
    const self = this.ctx.id.name ?? "";
    return {
      forkSource: (fork) => stream(fork.source).forkSource(fork.offset, fork.subOffset),
      // A fork without a name (an id not made from one) could never be asked after: it
      // does not register, and its source is deleted outright.
      forkMade: async (origin, generation) => {
        if (self !== "") await stream(origin.name).forkMade(origin.generation, self, generation);
      },
      forkGone: (origin, generation) =>
        stream(origin.name).forkGone(origin.generation, self, generation),
      forkAlive: (name, generation) => stream(name).forkAlive(generation),
    };
  }

  // ── for tests and benchmarks ─────────────────────────────────────────────────

  /** Forces a publication of pending output now. */
  flushOutput(): void {
    this.#life.flushOutput();
  }

  /** Cuts every subscriber off (test controls, docs/testing.md); answers how many. */
  dropSubscribers(): number {
    return this.#subscribers.dropAll(DROPPED_BY_TEST_CLOSE.code, DROPPED_BY_TEST_CLOSE.reason);
  }

  /**
   * Throws this instance away as an eviction does (test controls, docs/testing.md): the
   * next request builds a new one from storage. The call itself fails, by design.
   */
  evict(): void {
    this.ctx.abort("evicted by a test control");
  }

  /** SSE queues: the fullest stream's unread bytes and how often a reader fell behind. */
  sseStats(): { maxQueuedBytes: number; resets: number; streams: number } {
    return this.#subscribers.sseStats();
  }

  /** Storage use. */
  storageStats(): StorageStats {
    return this.#stored.stats();
  }

  /**
   * Called by `context.setMemo` just before and just after it writes a memo and its
   * checkpoint; `"halt"` stops the run there as a crash would. Production never halts;
   * the crash tests' subclass does (docs/decisions/049, 093).
   */
  protected memoMoment(_name: string, _moment: "before" | "after"): "halt" | undefined {
    return undefined;
  }

  /**
   * Called before every flush of the sink; a throw stands for a flush that fails, which
   * no input can cause since the depth cap (docs/decisions/006). Only the tests' subclass
   * throws here.
   */
  protected beforeFlush(): void {}

  /** Called once per recovery with the batches it decoded (the tests' subclass counts them). */
  protected recovered(_batches: number): void {}
}
