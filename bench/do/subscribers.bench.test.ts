/**
 * DO bench of subscribers at scale (issue 20): what one more WebSocket subscriber costs
 * the real InvocationDO, measured inside the Workers runtime. For N sockets (0, 250,
 * 1,000) on one `external` invocation: the time to accept them (each gets `tool_start`
 * and a base), then 50 publications of 20 lines (about 2 KB) each (and, for 0 and
 * 1,000 sockets, of one line: what a send costs whatever it carries), timed from the
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
} from "../../test/workers/durable-objects/helpers.ts";

/** Sockets and lines per publication: 20 lines is about 2 KB, 1 line about 90 bytes. */
const RUNS = [
  { count: 0, lines: 20 },
  { count: 250, lines: 20 },
  { count: 1000, lines: 20 },
  { count: 0, lines: 1 },
  { count: 1000, lines: 1 },
];
const PUBLICATIONS = 50;

function lines(from: number, count: number): string {
  let text = "";
  for (let i = from; i < from + count; i++)
    text += `[${i}] compiling src/module_${i % 97}.ts ${"=".repeat(60)}\n`;
  return text;
}

async function run(count: number, perPublication: number) {
  const name = `bench-subscribers-${count}-${perPublication}`;
  const stub = stubFor(name);
  value(
    await stub.start(startRequest(name, "external", { name: "bash", input: { command: "make" } })),
  );
  value(await stub.produce([{ write: lines(0, perPublication) }]));
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
    value(await stub.produce([{ write: lines(p * perPublication, perPublication) }]));
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
  return {
    count,
    linesPerPublication: perPublication,
    acceptMs,
    publishMs,
    publicationMs: publishMs / PUBLICATIONS,
  };
}

it("cost of one more WebSocket subscriber inside the runtime", async () => {
  const rows = [];
  for (const { count, lines } of RUNS) rows.push(await run(count, lines));
  for (const row of rows) {
    const base = rows.find(
      (r) => r.count === 0 && r.linesPerPublication === row.linesPerPublication,
    )!;
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
  expect(rows).toHaveLength(RUNS.length);
});
