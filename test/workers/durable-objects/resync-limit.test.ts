import { describe, expect, it } from "vitest";
import { connectSocket, startRequest, stubFor, textOf, value, waitFor } from "./helpers.ts";

type Socket = Awaited<ReturnType<typeof connectSocket>>;

async function external(name: string) {
  const stub = stubFor(name);
  value(await stub.start(startRequest(name, "external", { name: "agent_tool" })));
  return stub;
}

/**
 * Sends `count` resync requests, then closes: the object handles a socket's messages in
 * order and answers the close last, so once the close arrives every answer has too.
 */
async function resyncThenClose(sub: Socket, count: number): Promise<void> {
  const closed = new Promise<void>((resolve) =>
    sub.socket.addEventListener("close", () => resolve()),
  );
  for (let i = 0; i < count; i++) sub.socket.send(JSON.stringify({ type: "resync" }));
  sub.socket.close(1000, "done");
  await closed;
}

describe("resync requests are limited (decision 070)", () => {
  it("100 resyncs right after the greeting base send no further base", async () => {
    await external("resync-after-greeting");
    const sub = await connectSocket("resync-after-greeting");
    await waitFor("greeting", () => (sub.bases === 1 ? true : undefined));
    await resyncThenClose(sub, 100);
    expect(sub.bases).toBe(1);
  });

  it("100 resyncs after a publication send one base, of the latest state", async () => {
    const stub = await external("resync-after-delta");
    const sub = await connectSocket("resync-after-delta");
    value(await stub.produce([{ write: "one\n" }]));
    await stub.flushOutput();
    await waitFor("delta", () => (textOf(sub.state) === "one\n" ? true : undefined));
    await resyncThenClose(sub, 100);
    expect(sub.bases).toBe(2);
    const last = sub.events.at(-1);
    expect(last?.type === "tool_update" && last.ops[0]?.[0]).toBe("r");
    expect(textOf(sub.state)).toBe("one\n");
  });

  it("each publication lets one more resync through", async () => {
    const stub = await external("resync-per-publication");
    const sub = await connectSocket("resync-per-publication");
    for (const line of ["a\n", "b\n"]) {
      value(await stub.produce([{ write: line }]));
      await stub.flushOutput();
      await waitFor("delta", () => (textOf(sub.state).endsWith(line) ? true : undefined));
      const before = sub.bases;
      for (let i = 0; i < 10; i++) sub.socket.send(JSON.stringify({ type: "resync" }));
      await waitFor("one base", () => (sub.bases === before + 1 ? true : undefined));
    }
    await resyncThenClose(sub, 10);
    expect(sub.bases).toBe(3);
    expect(textOf(sub.state)).toBe("a\nb\n");
  });
});
