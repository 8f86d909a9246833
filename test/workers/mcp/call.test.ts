import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../../src/core/chord/types.ts";
import { runCall, type ToolCall } from "../../../src/mcp/call.ts";
import type { InvocationPort } from "../../../src/mcp/port.ts";
import type { ProgressValue } from "../../../src/mcp/progress.ts";
import { getTool } from "../../../src/tools/index.ts";
import { invocationPort } from "../../../src/worker/mcp-route.ts";

/** The Worker's port over the real invocation DOs, recording every method called. */
function recordingPort(): { port: InvocationPort; calls: string[] } {
  const real = invocationPort(new Request("http://toolwire.test/mcp"), env);
  const calls: string[] = [];
  const port = Object.fromEntries(
    Object.entries(real).map(([name, method]) => [
      name,
      (...args: unknown[]) => {
        calls.push(name);
        return (method as (...a: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as InvocationPort;
  return { port, calls };
}

function toolCall(id: string, args: JsonValue, progress?: ToolCall["progress"]): ToolCall {
  return {
    invocationId: id,
    tool: "steps",
    args: { raw: args, params: getTool("steps")!.parse(args) },
    sandbox: "default",
    signal: new AbortController().signal,
    cancelOnAbort: () => false,
    background: () => {},
    progress,
  };
}

describe("runCall across the Worker→DO boundary", () => {
  it("reads progress once a second with one small read, and nothing more once it settles", async () => {
    const { port, calls } = recordingPort();
    const sent: ProgressValue[] = [];
    const call = toolCall("call-once", { steps: 3, intervalMs: 700 }, async (value) => {
      sent.push(value);
    });
    const result = await runCall(port, call);
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ truncation: { totalLines: 3 } });
    // start, then only progress polls (the last one saw the settle and carried the result),
    // then the links, which are minted in the Worker.
    expect(calls[0]).toBe("start");
    expect(calls.at(-1)).toBe("links");
    const polls = calls.slice(1, -1);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(polls)).toEqual(new Set(["progress"]));
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.at(-1)?.message).toMatch(/^step \d done$/);
  });

  it("answers an already settled call with one read after the start", async () => {
    const first = recordingPort();
    await runCall(first.port, toolCall("call-settled", { steps: 1, intervalMs: 1 }));
    const again = recordingPort();
    const result = await runCall(again.port, toolCall("call-settled", { steps: 1, intervalMs: 1 }));
    expect(result.isError).toBe(false);
    expect(again.calls).toEqual(["start", "progress", "links"]);
  });
});
