// The SSE transport over a real HTTP server (node:http) and the platform fetch.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { sseTransport, subscribe } from "../../../src/client/index.ts";
import { FakeProducer, settle } from "./fake-producer.ts";

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** Serves the producer's events as SSE at /v1/invocations/call/events; `refuse` answers an API error instead. */
async function serve(
  producer: FakeProducer,
  refuse?: { status: number; code: string },
): Promise<string> {
  let seq = 0;
  server = createServer((req, res) => {
    if (refuse) {
      res.writeHead(refuse.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: refuse.code, message: `refused: ${refuse.code}` } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    const connection = producer.transport({
      message: (text) => res.write(`id: ${++seq}\ndata: ${text}\n\n`),
      closed: () => res.end(),
    });
    req.on("close", () => connection.close());
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/v1/invocations/call/events?token=t`;
}

describe("SSE transport", () => {
  it("follows a stream, reconnects when the server ends it, and converges from the new base", async () => {
    const producer = new FakeProducer();
    producer.canResync = false;
    const url = await serve(producer);
    const sub = subscribe(url, {
      transport: "sse",
      backoff: { initialMs: 5, maxMs: 10, maxAttempts: 5 },
    });
    await expect.poll(() => sub.status).toBe("live");
    producer.state.content[0] = { type: "text", text: "one\n" };
    producer.publish();
    await expect.poll(() => sub.state?.content[0]).toEqual({ type: "text", text: "one\n" });

    producer.dropAll();
    (producer.state.content[0] as { text: string }).text += "two\n";
    producer.state.details = { step: 2 };
    producer.publish();
    await settle(50);
    await expect.poll(() => sub.status).toBe("live");
    expect(producer.connections.length).toBe(2);

    producer.end();
    const outcome = await sub.finished;
    expect(outcome.status).toBe("settled");
    expect(outcome.state).toEqual(producer.state);
  });

  it("stops with the server's error on an auth refusal", async () => {
    const producer = new FakeProducer();
    const url = await serve(producer, { status: 401, code: "unauthorized" });
    const outcome = await subscribe(url, { transport: "sse" }).finished;
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatchObject({
      code: "unauthorized",
      status: 401,
      message: "refused: unauthorized",
    });
  });
});

/** The frames the SSE transport hands on for a body that arrives as these byte chunks. */
async function framesOf(chunks: Uint8Array[]): Promise<string[]> {
  const frames: string[] = [];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const fetch = async () =>
    new Response(body, { headers: { "content-type": "text/event-stream" } });
  await new Promise<void>((resolve, reject) => {
    sseTransport("http://x/v1/invocations/c/events", { fetch })({
      message: (frame) => frames.push(frame),
      closed: (error) => (error ? reject(error) : resolve()),
    });
  });
  return frames;
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe("SSE framing", () => {
  it("joins data lines, skips comments and keep-alives, and is not confused by id, event or retry lines", async () => {
    const stream =
      ': hello\nid: 7\ndata: {"a":\ndata: 1}\n\n: keep-alive\n\nevent: ping\ndata\n\nretry: 10\nid: 8\n\ndata:  two spaces\n\n';
    expect(await framesOf([bytes(stream)])).toEqual(['{"a":\n1}', "", " two spaces"]);
  });

  it("gives the same frames however the bytes are cut, with any line endings and comments between (property)", async () => {
    const message = fc.record({
      id: fc.nat().map(String),
      data: fc.string({ unit: "grapheme", maxLength: 20 }).filter((s) => !/[\r\n]/.test(s)),
      comment: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { maxLength: 10 }),
        fc.constantFrom("\n", "\r", "\r\n"),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (messages, eol, cuts) => {
          const text = messages
            .map(
              (m) =>
                `${m.comment ? `: keep-alive${eol}${eol}` : ""}id: ${m.id}${eol}data: ${m.data}${eol}${eol}`,
            )
            .join("");
          // Cut the UTF-8 bytes anywhere, through a CRLF or a multi-byte character too.
          const encoded = bytes(text);
          const points = [...new Set(cuts.map((c) => c % (encoded.length + 1)))].sort(
            (a, b) => a - b,
          );
          const chunks: Uint8Array[] = [];
          let at = 0;
          for (const point of [...points, encoded.length]) {
            chunks.push(encoded.slice(at, point));
            at = point;
          }
          expect(await framesOf(chunks)).toEqual(messages.map((m) => m.data));
        },
      ),
      { seed: 9, numRuns: 300 },
    );
  });
});
