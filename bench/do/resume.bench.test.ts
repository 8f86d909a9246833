/**
 * Reconnect bytes: a 30,000-line run (600 producer bodies of 50 lines of 45 B, the
 * default 50 KiB / 2,000-line tail window, so the window is full at 50 KiB) followed
 * by one SSE reader and one WebSocket reader, each cut 50 times (every 12 bodies) and
 * reconnected after 2 bodies went by while it was away. Each transport runs twice in
 * the same process: reconnecting as before (a fresh base every time) and resuming
 * after the last event id (SSE `Last-Event-ID`, socket `?after=`). "Reconnect bytes"
 * are what a reader receives from reopening until it holds the current state again.
 *
 * Run: `npm run bench:do -- resume`. Prints one JSON line per run; BENCHMARKS.md records them.
 */
import { expect, it } from "vitest";
import { apply, decoder } from "../../src/core/chord/index.ts";
import type { JsonValue } from "../../src/core/chord/types.ts";
import type { HarnessEvent } from "../../src/core/events/types.ts";
import { startRequest, stubFor, value } from "../../test/workers/durable-objects/helpers.ts";

const LINES = 30_000;
const BODIES = 600;
const RECONNECTS = 50;
const utf8 = new TextEncoder();

/** One reader: folds what it gets, counts bytes, remembers the last seq it holds. */
class Reader {
  state: JsonValue = null;
  seq: number | null = null;
  bytes = 0;
  bases = 0;
  #decoder = decoder();

  /** A new connection: a fresh decoder (the server encodes each stream on its own). */
  fresh(): void {
    this.#decoder = decoder();
  }

  /** One event; `bytes` as it arrived on the wire (SSE framing included). */
  receive(event: HarnessEvent, bytes: number, seq: number | undefined): void {
    this.bytes += bytes;
    if (event.type !== "tool_update") return;
    if (event.ops[0]?.[0] === "r") this.bases++;
    this.state = apply(this.state, this.#decoder.decode(event.ops));
    if (seq !== undefined) this.seq = seq;
  }
}

function line(n: number): string {
  return `[${String(n).padStart(5, "0")}] compiling src/mod_${n % 97}/f_${n}.ts ok\n`.padEnd(
    45,
    ".",
  );
}

async function waitUntil(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Connection {
  close(): Promise<void>;
}

async function openSse(name: string, reader: Reader, resume: boolean): Promise<Connection> {
  const headers: Record<string, string> =
    resume && reader.seq !== null ? { "Last-Event-ID": String(reader.seq) } : {};
  const res = await stubFor(name).fetch("http://do/events", { headers });
  const body = res.body;
  if (!body) throw new Error("no SSE body");
  const stream = body.getReader();
  const text = new TextDecoder();
  let buffer = "";
  const done = (async () => {
    for (;;) {
      const { value: chunk, done: ended } = await stream.read().catch(() => ({
        value: undefined,
        done: true,
      }));
      if (ended || !chunk) return;
      buffer += text.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (data) {
          reader.receive(
            JSON.parse(data) as HarnessEvent,
            utf8.encode(frame).length,
            id === undefined ? undefined : Number(id),
          );
        }
        end = buffer.indexOf("\n\n");
      }
    }
  })();
  return {
    async close() {
      await stream.cancel();
      await done;
    },
  };
}

async function openSocket(name: string, reader: Reader, resume: boolean): Promise<Connection> {
  const query = resume && reader.seq !== null ? `?after=${reader.seq}` : "";
  const res = await stubFor(name).fetch(`http://do/socket${query}`, {
    headers: { Upgrade: "websocket" },
  });
  const socket = res.webSocket;
  if (!socket) throw new Error("no WebSocket");
  socket.accept();
  socket.addEventListener("message", (e) => {
    const data = e.data as string;
    const event = JSON.parse(data) as HarnessEvent;
    reader.receive(
      event,
      utf8.encode(data).length,
      event.type === "tool_update" ? event.seq : undefined,
    );
  });
  return {
    async close() {
      socket.close(1000, "bench reconnect");
    },
  };
}

async function run(transport: "sse" | "socket", resume: boolean) {
  const name = `bench-resume-${transport}-${resume ? "after" : "base"}`;
  const stub = stubFor(name);
  value(await stub.start(startRequest(name, "external", { name: "bench" })));
  const reader = new Reader();
  const open = transport === "sse" ? openSse : openSocket;
  let connection: Connection | null = await open(name, reader, false);
  let n = 0;
  let reconnectBytes = 0;
  let reconnects = 0;
  const every = BODIES / RECONNECTS;
  const caughtUp = async () => {
    const target = JSON.stringify(value(await stub.view()).state);
    await waitUntil("the reader to catch up", () => JSON.stringify(reader.state) === target);
  };
  for (let body = 0; body < BODIES; body++) {
    const lines: string[] = [];
    for (let i = 0; i < LINES / BODIES; i++) lines.push(line(++n));
    value(await stub.produce([{ write: lines.join("") }]));
    await stub.flushOutput();
    if (connection) await caughtUp();
    if (body % every === every - 3) {
      // Cut; the next 2 bodies go by while the reader is away.
      await connection?.close();
      connection = null;
    } else if (connection === null) {
      if (body % every !== every - 1) continue;
      reader.fresh();
      const before = reader.bytes;
      connection = await open(name, reader, resume);
      await caughtUp();
      reconnectBytes += reader.bytes - before;
      reconnects++;
    }
  }
  const final = value(await stub.view()).state;
  expect(reader.state).toEqual(final);
  await connection?.close();
  return {
    transport,
    mode: resume ? "resume after id" : "fresh base (before)",
    lines: LINES,
    reconnects,
    totalBytes: reader.bytes,
    reconnectBytes,
    bytesPerReconnect: Math.round(reconnectBytes / reconnects),
    bases: reader.bases,
    finalStateBytes: utf8.encode(JSON.stringify(final)).length,
  };
}

it("reconnect bytes, fresh base vs resume after id", async () => {
  const pairs: [Awaited<ReturnType<typeof run>>, Awaited<ReturnType<typeof run>>][] = [];
  for (const transport of ["sse", "socket"] as const) {
    const before = await run(transport, false);
    const after = await run(transport, true);
    pairs.push([before, after]);
    console.log(`RESUME-BENCH ${JSON.stringify(before)}`);
    console.log(`RESUME-BENCH ${JSON.stringify(after)}`);
    console.log(
      `RESUME-BENCH ${JSON.stringify({
        transport,
        reconnectBytesRatio: before.reconnectBytes / after.reconnectBytes,
        totalBytesRatio: before.totalBytes / after.totalBytes,
      })}`,
    );
  }
  for (const [before, after] of pairs) {
    expect(after.reconnects).toBe(RECONNECTS);
    // A reader away while the log stored a rebase (every 50 batches) gets a base.
    expect(after.bases).toBeLessThan(before.bases / 5);
    // What a resumed reader gets is what it missed (2 bodies of 50 lines), not the window.
    expect(after.reconnectBytes * 4).toBeLessThan(before.reconnectBytes);
  }
});
