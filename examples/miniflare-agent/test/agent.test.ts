// The agent Worker against the real Toolwire Worker (an auxiliary worker in this
// Miniflare) and a real sandbox host: what the agent sees of a live call, a cut output,
// a timeout, a dropped subscription and an evicted Durable Object.
import { env, exports } from "cloudflare:workers";
import { ToolwireClient } from "toolwire/client";
import { describe, expect, it } from "vitest";
import type { Env, RunAnswer } from "../src/agent.ts";

const toolwire = (env as unknown as Env).TOOLWIRE;
const token = (env as unknown as Env).TOOLWIRE_TOKEN;

async function run(command: string, timeout?: number): Promise<RunAnswer> {
  const res = await exports.default.fetch("http://agent/run", {
    method: "POST",
    body: JSON.stringify({ command, timeout }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as RunAnswer;
}

/** A Toolwire test control (docs/testing.md in Toolwire). */
function control(id: string, action: "drop-subscribers" | "evict"): Promise<Response> {
  return toolwire.fetch(`http://toolwire/v1/test/invocations/${id}/${action}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
}

describe("an agent that runs bash through Toolwire", () => {
  it("follows a call live and gets the command's output and exit code", async () => {
    const answer = await run("for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 3");
    expect(answer.text).toContain("line 1\nline 2\nline 3\n");
    expect(answer.exitCode).toBe(3);
    expect(answer.updates).toBeGreaterThan(1);
  });

  it("gets a cut output with its footer, and reads the complete output back", async () => {
    const answer = await run("seq 1 5000");
    expect(answer.truncated).toBe(true);
    expect(answer.text).toContain("5000\n");
    expect(answer.text).not.toContain("\n1\n2\n3\n");
    // seq 1 5000 writes 23,893 bytes: 9 of one digit, 90 of two, 900 of three, 4,001 of four, each with its newline.
    expect(answer.completeBytes).toBe(9 * 2 + 90 * 3 + 900 * 4 + 4001 * 5);
  });

  it("is told a command timed out, with its output kept", async () => {
    const answer = await run("echo started; sleep 30", 1);
    expect(answer.stoppedBy).toBe("timeout");
    expect(answer.text).toContain("started");
  });

  it("keeps following a call through a dropped subscription and an evicted object", async () => {
    const client = new ToolwireClient({
      baseUrl: "http://toolwire",
      token,
      fetch: (input, init) => toolwire.fetch(input, init),
    });
    const call = await client.createInvocation({
      tool: "bash",
      args: { command: "for i in $(seq 1 30); do echo tick $i; sleep 0.1; done" },
    });
    const live = client.subscribe(call.id);
    let reconnected = false;
    live.onChange((s) => {
      if (s.status === "reconnecting") reconnected = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await control(call.id, "drop-subscribers")).status).toBe(200);
    expect(await (await control(call.id, "evict")).json()).toEqual({ evicted: true });
    const outcome = await live.finished;
    expect(reconnected).toBe(true);
    expect(outcome.status).toBe("settled");
    const text = outcome.state?.content.map((part) => ("text" in part ? part.text : "")).join("");
    expect(text).toContain("tick 1\n");
    expect(text).toContain("tick 30\n");
  });
});
