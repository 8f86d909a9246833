/**
 * A producer like the Durable Object's fan-out, without the Durable Object: one
 * tracker over a `ToolOutputState`, one encoder per connection, a base batch first on
 * every connection and after every resync. Connections are the client's `Transport`
 * interface, so `subscribe()` runs unchanged against it.
 */

import type { Transport, TransportHandlers } from "../../../src/client/index.ts";
import { ToolwireError } from "../../../src/client/index.ts";
import { encoder, type Op, type Tracker, track } from "../../../src/core/chord/index.ts";
import type { HarnessEvent } from "../../../src/core/events/types.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";

const ids = { runId: "run", turnId: "turn", toolCallId: "call" };

export function emptyState(): ToolOutputState {
  return {
    content: [{ type: "text", text: "" }],
    details: {},
    terminate: false,
    truncation: {
      truncated: false,
      truncatedBy: null,
      totalLines: 0,
      totalBytes: 0,
      outputLines: 0,
      outputBytes: 0,
      maxLines: 2000,
      maxBytes: 51200,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
    },
  };
}

interface Connection {
  handlers: TransportHandlers;
  encode: (ops: Op[]) => unknown;
  open: boolean;
}

export class FakeProducer {
  readonly tracker: Tracker<ToolOutputState>;
  readonly connections: Connection[] = [];
  ended: boolean | null = null;
  /** When set, new connections are refused with this error. */
  refuse: ToolwireError | null = null;
  /** Answers `{"type":"resync"}` with a base (the WebSocket transport) or not (SSE). */
  canResync = true;
  /** Takes resyncs but never answers them (a server that finds nothing new to send). */
  ignoreResyncs = false;
  /** Takes this many resyncs without answering, then answers as usual. */
  unansweredResyncs = 0;
  resyncs = 0;

  constructor(initial: ToolOutputState = emptyState()) {
    this.tracker = track(initial);
    this.tracker.flush();
  }

  get state(): ToolOutputState {
    return this.tracker.state;
  }

  /** The client's side of the wire. */
  readonly transport: Transport = (handlers) => {
    const connection: Connection = { handlers, encode: () => [], open: true };
    const refuse = this.refuse;
    if (refuse) {
      queueMicrotask(() => handlers.closed(refuse));
      return { resync: () => false, close() {} };
    }
    this.connections.push(connection);
    this.startStream(connection);
    queueMicrotask(() => {
      if (!connection.open) return;
      this.send(connection, { type: "tool_start", ...ids, toolName: "bash", args: {} });
      this.sendBase(connection);
      if (this.ended !== null) this.sendEnd(connection);
    });
    return {
      resync: () => {
        if (!connection.open || !this.canResync) return false;
        this.resyncs++;
        if (this.ignoreResyncs) return true;
        if (this.unansweredResyncs > 0) {
          this.unansweredResyncs--;
          return true;
        }
        queueMicrotask(() => this.sendBase(connection));
        return true;
      },
      close: () => {
        connection.open = false;
      },
    };
  };

  /** Publishes what changed since the last flush to every open connection. */
  publish(): void {
    const ops = this.tracker.flush();
    if (ops.length === 0) return;
    for (const c of this.live()) this.send(c, { type: "tool_update", ...ids, ops: c.encode(ops) });
  }

  end(isError = false): void {
    this.publish();
    this.ended = isError;
    for (const c of this.live()) this.sendEnd(c);
  }

  /** The server drops every connection (the client should reconnect). */
  dropAll(): void {
    for (const c of this.live()) {
      c.open = false;
      c.handlers.closed();
    }
  }

  /** Sends raw text on every open connection. */
  sendRaw(text: string): void {
    for (const c of this.live()) c.handlers.message(text);
  }

  live(): Connection[] {
    return this.connections.filter((c) => c.open);
  }

  private startStream(connection: Connection): void {
    const enc = encoder();
    connection.encode = (ops) => enc.encode(ops);
  }

  private sendBase(connection: Connection): void {
    if (!connection.open) return;
    this.startStream(connection);
    const ops: Op[] = [["r", JSON.parse(JSON.stringify(this.state))]];
    this.send(connection, { type: "tool_update", ...ids, ops: connection.encode(ops) });
  }

  private sendEnd(connection: Connection): void {
    this.send(connection, { type: "tool_end", ...ids, isError: this.ended ?? false });
  }

  private send(connection: Connection, event: unknown): void {
    if (connection.open) connection.handlers.message(JSON.stringify(event as HarnessEvent));
  }
}

export const permanentError = new ToolwireError("unauthorized", "bad token", 401);

/** Resolves after queued microtasks and any timers up to `ms` have run. */
export function settle(ms = 5): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
