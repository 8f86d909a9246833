// The pi extension's live subscription cut mid-call, through a TCP proxy between the
// real pi SDK session and the real Worker: the bash call still ends with Toolwire's
// complete settled result, once, and the command ran once (a counter file says so).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { type CutProxy, startCutProxy } from "../support/e2e/cut-proxy.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const run = `pidrop${Date.now().toString(36)}`;

const textOf = (content: unknown) =>
  ((content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("");

const proxies: CutProxy[] = [];
const sessions: PiSession[] = [];
afterAll(async () => {
  vi.unstubAllGlobals();
  for (const s of sessions) s.dispose();
  for (const p of proxies) await p.close();
});

// The extension follows with a WebSocket, or with SSE where Node has no WebSocket (Node 20).
describe.each([
  ["socket", "/socket?"],
  ["sse", "/events?"],
] as const)("pi on Toolwire when the connection drops mid-call (%s)", (transport, stream) => {
  it("the subscription is cut and refused for a second while bash runs; the call resolves once, complete, and the command ran once", async () => {
    if (transport === "sse") vi.stubGlobal("WebSocket", undefined);
    const worker = new URL(inject("apiUrl"));
    const proxy = await startCutProxy({ host: worker.hostname, port: Number(worker.port) });
    proxies.push(proxy);
    const counter = `${run}-${transport}.count`;
    const toolCallId = `${run}-${transport}-bash`;
    const command = `echo ran >> ${counter}; for i in $(seq 1 40); do echo line $i; sleep 0.1; done`;
    const pi = await startPiSession({ url: proxy.url, token: inject("apiToken") }, [
      fauxAssistantMessage(fauxToolCall("bash", { command }, { id: toolCallId }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("done")),
    ]);
    sessions.push(pi);

    const updates: string[] = [];
    let ends = 0;
    let cut: Promise<void> | null = null;
    pi.session.subscribe((event) => {
      if (event.type === "tool_execution_end" && event.toolCallId === toolCallId) ends++;
      if (event.type !== "tool_execution_update" || event.toolCallId !== toolCallId) return;
      const text = textOf(event.partialResult?.content);
      updates.push(text);
      if (cut === null && text.includes("line 5\n")) {
        // The network goes away while the command runs, and comes back a second later.
        cut = proxy.stop().then(() => new Promise((resolve) => setTimeout(resolve, 1000)));
        void cut.then(() => proxy.start());
      }
    });
    await pi.session.prompt("count to forty");

    expect(cut, "the connection was cut while the command ran").not.toBeNull();
    const poll = await api.result(toolCallId, { wait: 20 });
    if (poll.status !== "settled") throw new Error("the bash call did not settle");
    expect(textOf(poll.result.content)).toContain("line 40\n");

    const results = pi.session.messages.filter(
      (m) => m.role === "toolResult" && m.toolCallId === toolCallId,
    ) as unknown as { content: unknown; isError: boolean }[];
    expect(results).toHaveLength(1);
    expect(results[0]?.content).toEqual(poll.result.content);
    expect(results[0]?.isError).toBe(false);
    expect(ends).toBe(1);

    // The command ran once: one line in the counter file.
    expect(readFileSync(path.join(inject("sandboxRoot"), counter), "utf8")).toBe("ran\n");
    // One create; the stream came back after the cut from the last event it had
    // (`?after=` on a socket, `Last-Event-ID` on SSE).
    const creates = proxy.requests.filter((r) => r.startsWith("POST /v1/invocations "));
    const streams = proxy.requests.filter((r) => r.includes(`/${toolCallId}${stream}`));
    expect(creates).toHaveLength(1);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    const resumed = transport === "socket" ? /^GET \S*[?&]after=\d+/ : /^last-event-id: \S+/im;
    expect(streams.slice(1).every((r) => resumed.test(r))).toBe(true);
    // No update repeated or went back: each one grows the last, up to the whole output.
    for (let i = 1; i < updates.length; i++) {
      expect(updates[i]?.startsWith(updates[i - 1] ?? "")).toBe(true);
      expect(updates[i]).not.toBe(updates[i - 1]);
    }
    expect(updates.some((u) => u.includes("line 6\n"))).toBe(true);
  }, 120_000);
});
