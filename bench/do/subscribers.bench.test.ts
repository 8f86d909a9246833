/**
 * DO bench of subscribers at scale (issue 20): what one more WebSocket subscriber costs
 * the real InvocationDO, measured inside the Workers runtime. For N sockets (0, 250,
 * 1,000) on one `external` invocation: the time to accept them (each gets `tool_start`
 * and a base), then 50 publications of 20 lines (about 2 KB) each, timed from the
 * produce call until its flush has returned, so every send of the publication is in
 * it. The cost per subscriber is the time over that of N = 0, divided by N. The sockets
 * only count what they receive (no folding), so the client side adds little; every
 * socket must have every update before the row is printed.
 *
 * Run: `npm run bench:do` (prints one `DO-SUBSCRIBERS {…}` line per N).
 */
import { expect, it } from "vitest";
import {
  startRequest,
  stubFor,
  value,
  waitFor,
} from "../../test/worker/durable-objects/helpers.ts";

const COUNTS = [0, 250, 1000];
const PUBLICATIONS = 50;
const LINES = 20;

function lines(from: number): string {
  let text = "";
  for (let i = from; i < from + LINES; i++)
    text += `[${i}] compiling src/module_${i % 97}.ts ${"=".repeat(60)}\n`;
  return text;
}

async function run(count: number) {
  const name = `bench-subscribers-${count}`;
  const stub = stubFor(name);
  value(
    await stub.start(startRequest(name, "external", { name: "bash", input: { command: "make" } })),
  );
  value(await stub.produce([{ write: lines(0) }]));
  await stub.flushOutput();
  const received: number[] = [];
  const acceptStart = performance.now();
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i++) {
    const res = await stub.fetch("http://do/socket", { headers: { Upgrade: "websocket" } });
    const socket = res.webSocket!;
    socket.accept();
    received.push(0);
    socket.addEventListener("message", () => received[i]!++);
    sockets.push(socket);
  }
  const acceptMs = performance.now() - acceptStart;
  const publishStart = performance.now();
  for (let p = 1; p <= PUBLICATIONS; p++) {
    value(await stub.produce([{ write: lines(p * LINES) }]));
    await stub.flushOutput();
  }
  const publishMs = performance.now() - publishStart;
  // tool_start, the base, then one update per publication.
  await waitFor(
    "every socket to have every update",
    () => (received.every((n) => n === 2 + PUBLICATIONS) ? true : undefined),
    60_000,
  );
  for (const socket of sockets) socket.close();
  value(await stub.produce([], { isError: false }));
  return { count, acceptMs, publishMs, publicationMs: publishMs / PUBLICATIONS };
}

it("cost of one more WebSocket subscriber inside the runtime", async () => {
  const rows = [];
  for (const count of COUNTS) rows.push(await run(count));
  const base = rows[0]!;
  for (const row of rows) {
    const extra =
      row.count === 0
        ? null
        : {
            acceptUsPerSubscriber: (row.acceptMs * 1000) / row.count,
            publishUsPerSubscriberPerPublication:
              ((row.publicationMs - base.publicationMs) * 1000) / row.count,
          };
    console.log(`DO-SUBSCRIBERS ${JSON.stringify({ ...row, ...extra })}`);
  }
  expect(rows).toHaveLength(COUNTS.length);
});
