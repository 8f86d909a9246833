// The subscription resumes after the seq of the last update it folded: over a scripted
// transport (what it asks for, what it folds) and over a real HTTP server (SSE header).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ResumePoint,
  subscribe,
  type Transport,
  type TransportHandlers,
} from "../../../src/client/index.ts";
import { encoder, type Op, track } from "../../../src/core/chord/index.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { emptyState, settle } from "./fake-producer.ts";

const ids = { runId: "run", turnId: "turn", toolCallId: "call" };
const fast = { initialMs: 1, maxMs: 2 };

/**
 * A server that keeps every publication by seq and, like the DO, resumes a connection
 * after a seq it still has (or sends a base). `socketSeq` puts the seq in the frame
 * (socket) or passes it as the SSE id.
 */
class ResumingServer {
  readonly tracker = track<ToolOutputState>(emptyState());
  readonly log: { seq: number; ops: Op[] }[] = [];
  readonly asked: (ResumePoint | undefined)[] = [];
  readonly live: { handlers: TransportHandlers; encode: (ops: Op[]) => unknown }[] = [];
  seq = 1;
  bases = 0;
  oldestKept = 1;

  readonly socketSeq: boolean;

  constructor(socketSeq: boolean) {
    this.socketSeq = socketSeq;
    this.tracker.flush();
  }

  readonly transport: Transport = (handlers, resume) => {
    this.asked.push(resume);
    const enc = encoder();
    const connection = { handlers, encode: (ops: Op[]) => enc.encode(ops) };
    queueMicrotask(() => {
      this.send(connection, { type: "tool_start", ...ids, toolName: "x", args: {} });
      const after = resume?.after;
      if (after !== undefined && after >= this.oldestKept && after <= this.seq) {
        for (const batch of this.log.filter((b) => b.seq > after))
          this.update(connection, batch.ops, batch.seq);
      } else {
        this.bases++;
        this.update(connection, [["r", JSON.parse(JSON.stringify(this.tracker.state))]], this.seq);
      }
      this.live.push(connection);
    });
    return { resync: () => false, close: () => this.drop(connection) };
  };

  write(text: string): void {
    this.tracker.state.content[0] = { type: "text", text: textOf(this.tracker.state) + text };
    const ops = this.tracker.flush();
    this.seq++;
    this.log.push({ seq: this.seq, ops });
    for (const c of this.live) this.update(c, ops, this.seq);
  }

  dropAll(): void {
    for (const c of this.live.splice(0)) c.handlers.closed();
  }

  private drop(connection: (typeof this.live)[number]): void {
    const at = this.live.indexOf(connection);
    if (at >= 0) this.live.splice(at, 1);
  }

  private update(c: (typeof this.live)[number], ops: Op[], seq: number): void {
    const event = { type: "tool_update", ...ids, ops: c.encode(ops) };
    if (this.socketSeq) this.send(c, { ...event, seq });
    else c.handlers.message(JSON.stringify(event), String(seq));
  }

  private send(c: (typeof this.live)[number], event: unknown): void {
    c.handlers.message(JSON.stringify(event));
  }
}

function textOf(state: ToolOutputState | null): string {
  const block = state?.content[0];
  return block?.type === "text" ? block.text : "";
}

describe("subscription resume", () => {
  for (const socketSeq of [true, false]) {
    const kind = socketSeq ? "seq in the frame (socket)" : "SSE event id";
    it(`reconnects after the last folded seq and folds the deltas after it, no base (${kind})`, async () => {
      const server = new ResumingServer(socketSeq);
      const sub = subscribe("ws://x/v1/invocations/call/socket", {
        connect: server.transport,
        backoff: fast,
      });
      await settle();
      server.write("a\n");
      server.write("b\n");
      await settle();
      expect(server.asked).toEqual([undefined]);
      server.dropAll();
      server.write("c\n"); // published while the client was away
      await settle(20);
      expect(server.asked).toEqual([undefined, { after: 3 }]);
      expect(server.bases).toBe(1);
      expect(sub.status).toBe("live");
      expect(textOf(sub.state)).toBe("a\nb\nc\n");
      server.write("d\n");
      await settle();
      expect(textOf(sub.state)).toBe("a\nb\nc\nd\n");
      sub.close();
    });
  }

  it("gets a base when the server no longer has the batches, and folds it", async () => {
    const server = new ResumingServer(true);
    const sub = subscribe("ws://x/v1/invocations/call/socket", {
      connect: server.transport,
      backoff: fast,
    });
    await settle();
    server.write("a\n");
    await settle();
    server.dropAll();
    server.write("b\n");
    server.oldestKept = 3; // pruned: seq 2 is gone
    await settle(20);
    expect(server.asked[1]).toEqual({ after: 2 });
    expect(server.bases).toBe(2);
    expect(textOf(sub.state)).toBe("a\nb\n");
    sub.close();
  });

  it("does not resume from a state it lost track of (an undecodable frame): a base instead", async () => {
    const server = new ResumingServer(true);
    const sub = subscribe("ws://x/v1/invocations/call/socket", {
      connect: server.transport,
      backoff: fast,
    });
    await settle();
    server.write("a\n");
    await settle();
    for (const c of server.live)
      c.handlers.message(JSON.stringify({ type: "tool_update", ...ids, ops: [[99]], seq: 9 }));
    await settle(20);
    expect(server.asked).toEqual([undefined, undefined]);
    expect(textOf(sub.state)).toBe("a\n");
    sub.close();
  });
});

let http: Server | null = null;
afterEach(async () => {
  http?.closeAllConnections();
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  http = null;
});

describe("SSE transport resume", () => {
  it("sends Last-Event-ID with the seq of the last folded update on a reconnect", async () => {
    const server = new ResumingServer(false);
    const headers: (string | undefined)[] = [];
    http = createServer((req, res) => {
      const last = req.headers["last-event-id"];
      headers.push(typeof last === "string" ? last : undefined);
      res.writeHead(200, { "content-type": "text/event-stream" });
      const connection = server.transport(
        {
          message: (text, id) => res.write(`${id ? `id: ${id}\n` : ""}data: ${text}\n\n`),
          closed: () => res.end(),
        },
        last === undefined ? undefined : { after: Number(last) },
      );
      req.on("close", () => connection.close());
    });
    await new Promise<void>((resolve) => http?.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const sub = subscribe(`http://127.0.0.1:${port}/v1/invocations/call/events?token=t`, {
      transport: "sse",
      backoff: fast,
    });
    await settle(50);
    server.write("one\n");
    server.write("two\n");
    await settle(50);
    server.dropAll();
    await settle(100);
    server.write("three\n");
    await settle(50);
    expect(headers).toEqual([undefined, "3"]);
    expect(server.bases).toBe(1);
    expect(textOf(sub.state)).toBe("one\ntwo\nthree\n");
    sub.close();
  });
});
