import { describe, expect, it } from "vitest";
import { LATEST_LINE_MAX } from "../../../src/core/output/index.ts";
import type { ProgressRead } from "../../../src/protocol/index.ts";
import { type InvocationStub, startRequest, stubFor, value } from "./helpers.ts";

const bash = { name: "bash", input: { command: "make" } };

/** The progress of a call that is running (without waiting). */
async function running(stub: InvocationStub): Promise<ProgressRead> {
  const poll = value(await stub.progress(0));
  if (poll.status !== "running") throw new Error(`expected running, got ${poll.status}`);
  const { status: _, ...read } = poll;
  return read;
}

describe("progress (the small read MCP progress makes every second)", () => {
  it("is the output's totals and latest line, the same the view's state holds", async () => {
    const stub = stubFor("progress-read");
    value(await stub.start(startRequest("progress-read", "external", bash)));
    expect(await running(stub)).toEqual({ bytes: 0, lines: 0, lastLine: "" });
    value(await stub.produce([{ write: "compiling a\ncompiling b\n\n" }], undefined));
    await stub.flushOutput();
    const read = await running(stub);
    const { truncation } = value(await stub.view()).state;
    expect(read).toEqual({
      bytes: truncation.totalBytes,
      lines: truncation.totalLines,
      lastLine: "compiling b",
    });
    expect(read.bytes).toBe(25);
  });

  it("cuts the latest line at the limit: a line of the limit stays whole, one unit over is cut", async () => {
    const stub = stubFor("progress-cut");
    value(await stub.start(startRequest("progress-cut", "external", bash)));
    const at = "y".repeat(LATEST_LINE_MAX);
    value(await stub.produce([{ write: `${at}\n` }]));
    await stub.flushOutput();
    expect((await running(stub)).lastLine).toBe(at);
    value(await stub.produce([{ write: `${at}z` }]));
    await stub.flushOutput();
    expect((await running(stub)).lastLine).toBe(`${"y".repeat(LATEST_LINE_MAX - 1)}…`);
  });

  it("of a 1 MB output is a few dozen bytes on the wire, not the window (2,000 lines here) the view carries", async () => {
    const stub = stubFor("progress-small");
    value(await stub.start(startRequest("progress-small", "external", bash)));
    let text = "";
    for (let i = 1; text.length < 1_000_000; i++) text += `line ${i}\n`;
    value(await stub.produce([{ write: text }]));
    await stub.flushOutput();
    const read = await running(stub);
    expect(read.bytes).toBe(text.length);
    expect(read.lastLine).toMatch(/^line \d+$/);
    expect(JSON.stringify(read).length).toBeLessThan(100);
    expect(JSON.stringify(value(await stub.view())).length).toBeGreaterThan(20_000);
  });

  it("waits for the settle like result, then carries the result and whether it was cancelled", async () => {
    const stub = stubFor("progress-settle");
    value(await stub.start(startRequest("progress-settle", "external", bash)));
    value(await stub.produce([{ write: "done\n" }]));
    const waiting = stub.progress(10_000);
    setTimeout(() => void stub.produce([], { isError: false }), 50);
    const poll = value(await waiting);
    expect(poll).toMatchObject({ status: "settled", cancelled: false, result: { isError: false } });
    const result = value(await stub.result(0));
    expect(result.status === "settled" && poll.status === "settled" && poll.result).toEqual(
      result.status === "settled" && result.result,
    );
  });

  it("of a cancelled call says it was cancelled, as the view does", async () => {
    const stub = stubFor("progress-cancel");
    value(await stub.start(startRequest("progress-cancel", "external", bash)));
    value(await stub.cancel());
    expect(value(await stub.progress(0))).toMatchObject({ status: "settled", cancelled: true });
    expect(value(await stub.view()).cancelled).toBe(true);
  });

  it("answers not_found for an id that names no invocation", async () => {
    expect(await stubFor("progress-none").progress(0)).toMatchObject({
      ok: false,
      error: { code: "not_found", status: 404 },
    });
  });
});
