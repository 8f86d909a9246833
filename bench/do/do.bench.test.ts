/**
 * DO benchmark: a bash-shaped workload through the real InvocationDO — 500
 * publications of a 50 KB rolling window plus details counters — measuring
 *
 * - bytes appended to the batch log vs storing a whole snapshot per publication;
 * - bytes left after settle vs the same snapshot total;
 * - bytes one WebSocket subscriber received vs a whole-state-per-change broadcast
 *   (the Cloudflare Agents SDK `setState` model: `{"type":"cf_agent_state","state":…}`
 *   to every client on every change).
 *
 * Run: `npm run bench:do`. Prints one JSON line per workload; BENCHMARKS.md records them.
 */
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import type { InvocationDO } from "../../durable-objects/invocation/invocation.ts";
import {
  connectSocket,
  startRequest,
  stubFor,
  textOf,
  value,
  waitFor,
} from "../../test/workers/durable-objects/helpers.ts";

const PUBLICATIONS = 500;
const WINDOW_BYTES = 50 * 1024;
const utf8 = new TextEncoder();
const size = (v: unknown) => utf8.encode(JSON.stringify(v)).length;

/** One line of build-log-like output, `width` bytes with its newline. */
function logLine(n: number, width: number): string {
  const head = `[${String(n).padStart(6, "0")}] compiling src/module_${n % 97}/file_${n}.ts `;
  return `${head}${"=".repeat(Math.max(0, width - head.length - 1))}\n`;
}

async function run(name: string, linesPerPublication: number, lineWidth: number) {
  const stub = stubFor(name);
  value(
    await stub.start(startRequest(name, "external", { name: "bash", input: { command: "make" } })),
  );
  const sub = await connectSocket(name);
  let line = 0;
  const fill: string[] = [];
  while (fill.join("").length < WINDOW_BYTES) fill.push(logLine(++line, lineWidth));
  value(await stub.produce([{ write: fill.join("") }, { details: [["s", ["lines"], line]] }]));
  await stub.flushOutput();

  let snapshotBytes = 0;
  let broadcastBytes = 0;
  let written = fill.join("").length;
  for (let p = 0; p < PUBLICATIONS; p++) {
    const lines: string[] = [];
    for (let i = 0; i < linesPerPublication; i++) lines.push(logLine(++line, lineWidth));
    const text = lines.join("");
    written += text.length;
    value(
      await stub.produce([
        { write: text },
        {
          details: [
            ["s", ["lines"], line],
            ["s", ["bytes"], written],
          ],
        },
      ]),
    );
    await stub.flushOutput();
    const state = value(await stub.view()).state;
    snapshotBytes += size(state);
    broadcastBytes += size({ type: "cf_agent_state", state });
  }
  const during = await runInDurableObject(stub, (instance: InvocationDO) =>
    instance.storageStats(),
  );
  await waitFor("subscriber to catch up", async () =>
    textOf(sub.state) === textOf(value(await stub.view()).state) ? true : undefined,
  );
  const subscriberBytesRun = sub.bytes;
  value(await stub.produce([], { isError: false }));
  await sub.untilEnded();
  const after = await runInDurableObject(stub, (instance: InvocationDO, state) => ({
    ...instance.storageStats(),
    databaseSize: state.storage.sql.databaseSize,
  }));
  const left = after.batchBytes + after.resultBytes;
  return {
    workload: `${PUBLICATIONS} publications × ${linesPerPublication} lines of ${lineWidth} B, 50 KB tail window`,
    snapshotBytes,
    logBytesAppended: during.bytesAppended,
    logBytesHeldAtEnd: during.batchBytes,
    logVsSnapshot: during.bytesAppended / snapshotBytes,
    bytesLeftAfterSettle: left,
    databaseSizeAfterSettle: after.databaseSize,
    leftVsSnapshot: left / snapshotBytes,
    subscriberBytes: subscriberBytesRun,
    broadcastBytes,
    subscriberVsBroadcast: subscriberBytesRun / broadcastBytes,
  };
}

it("bash-shaped workload through the real DO", async () => {
  const rows = [await run("bench-do-400", 5, 80), await run("bench-do-2k", 20, 100)];
  for (const row of rows) console.log(`DO-BENCH ${JSON.stringify(row)}`);
  const [main] = rows;
  expect(main!.logVsSnapshot).toBeLessThanOrEqual(1 / 15);
  expect(main!.leftVsSnapshot).toBeLessThanOrEqual(0.01);
  expect(main!.subscriberVsBroadcast).toBeLessThanOrEqual(1 / 50);
});
