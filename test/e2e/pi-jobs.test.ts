// The model steers its own output through pi (issue 21, docs/steering.md): a real pi SDK
// session with a scripted model calls bash with a head+tail window and an idle timeout,
// starts a background job, reads it with job_output until it ends (each line exactly
// once, across a second pi session after the first has gone), lists it with jobs, and
// kills another one, its output kept. The schemas pi shows the model are Toolwire's own.
import type { AssistantMessage, Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { EXPOSE_PORT_TOOL } from "../../src/pi/preview-tool.ts";
import {
  bashParameters,
  type JsonSchemaObject,
  STEERING_TOOLS,
} from "../../src/pi/steering-tools.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";
import { withoutInputLine } from "../support/input-line.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const toolwire = { url: inject("apiUrl"), token: inject("apiToken") };
const run = `pj${Date.now().toString(36)}`;
const id = (name: string) => `${run}-${name}`;

type ToolMessage = { role: "toolResult"; toolCallId: string; content: unknown; isError: boolean };

const sessions: PiSession[] = [];
afterAll(() => {
  for (const s of sessions) s.dispose();
});

function textOf(content: unknown): string {
  return (content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
}

function toolResults(pi: PiSession): ToolMessage[] {
  return pi.session.messages.filter((m) => m.role === "toolResult") as unknown as ToolMessage[];
}

/** The text of the last tool result the model was given, or "" before the first. */
function lastResult(context: Context): string {
  const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
  return last ? textOf(last.content) : "";
}

const call = (name: string, args: Record<string, unknown>, callId: string) =>
  fauxAssistantMessage(fauxToolCall(name, args, { id: callId }), { stopReason: "toolUse" });

/**
 * A model that reads a job with job_output (waiting up to 30 s each time) until a read
 * says it has all the output, at most `max` reads, then goes on with `after`.
 */
function readUntilEnd(
  job: string,
  prefix: string,
  max: number,
  after: () => AssistantMessage,
): ((context: Context) => AssistantMessage)[] {
  let reads = 0;
  let done = false;
  return Array.from({ length: max + 1 }, () => (context: Context) => {
    if (!done && reads > 0 && lastResult(context).includes("that is all of its output")) {
      done = true;
    }
    if (done || reads === max) {
      done = true;
      return after();
    }
    reads++;
    return call("job_output", { id: job, wait: 30 }, `${prefix}-${reads}`);
  });
}

/** The output lines a job_output answer gave, without its footer. */
function jobLines(text: string): string[] {
  return withoutInputLine(text)
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("[job "));
}

describe("steering through pi", () => {
  it("shows the model the argument schemas Toolwire serves", async () => {
    const served = new Map((await api.tools()).map((t) => [t.name, t.parameters]));
    const words = (schema: unknown) =>
      JSON.parse(JSON.stringify(schema), (key, value) =>
        key === "description" || key === "$schema" ? undefined : value,
      );
    const piBash = bashParameters(
      createBashToolDefinition(process.cwd()).parameters as unknown as JsonSchemaObject,
    );
    expect(words(piBash)).toEqual(words(served.get("bash")));
    for (const tool of [...STEERING_TOOLS, EXPOSE_PORT_TOOL]) {
      expect(words(tool.parameters), tool.name).toEqual(words(served.get(tool.name)));
    }
  });

  it("a head+tail window, an idle timeout and a wall-clock timeout, each as Toolwire's result", async () => {
    const pi = await startPiSession(toolwire, [
      call("bash", { command: "seq 1 100", head: 3, tail: 2 }, id("window")),
      call("bash", { command: "echo before; sleep 8; echo finished", idleTimeout: 2 }, id("idle")),
      call(
        "bash",
        { command: "for i in $(seq 1 80); do echo tick $i; sleep 0.1; done", timeout: 2 },
        id("timeout"),
      ),
      fauxAssistantMessage(fauxText("seen")),
    ]);
    sessions.push(pi);
    const started = Date.now();
    await pi.session.prompt("look at the ends, then wait for a quiet command");
    const results = toolResults(pi);
    expect(results.map((r) => r.toolCallId)).toEqual([id("window"), id("idle"), id("timeout")]);
    for (const message of results) {
      const poll = await api.result(message.toolCallId, { wait: 5 });
      if (poll.status !== "settled") throw new Error(`${message.toolCallId} did not settle`);
      expect(message.content, message.toolCallId).toEqual(poll.result.content);
      expect(message.isError, message.toolCallId).toBe(poll.result.isError);
    }
    const [window, idle, timeout] = results.map((r) => textOf(r.content));
    expect(window).toMatch(/^1\n2\n3\n/);
    expect(window).toContain("99\n100\n");
    expect(window).not.toContain("\n50\n");
    expect(window).toMatch(/lines 4–98/);
    expect(idle).toContain("before\n");
    expect(idle).not.toContain("finished");
    expect(idle).toMatch(/timed out after 2 s \(idle\)/);
    expect(results[1]?.isError).toBe(true);
    // A command that keeps printing is stopped by the hard limit, its output kept.
    expect(timeout).toContain("tick 1\n");
    expect(timeout).not.toContain("tick 80");
    expect(timeout).toMatch(/\(timeout\)/);
    expect(results[2]?.isError).toBe(true);
    // Stopped at about 2 s each, not by the 8 s sleep's end or the 80 ticks.
    expect(Date.now() - started).toBeLessThan(12_000);
  }, 90_000);

  it("a background job read to its end across two pi sessions: every line once", async () => {
    const job = id("bg");
    const command = "for i in $(seq 1 16); do echo line $i; sleep 0.4; done";
    // The first session starts the job, reads it once, lists it and leaves.
    const first = await startPiSession(toolwire, [
      call("bash", { command, background: true }, job),
      call("job_output", { id: job, wait: 30 }, id("read-a")),
      call("jobs", {}, id("jobs")),
      fauxAssistantMessage(fauxText("it runs on")),
    ]);
    sessions.push(first);
    await first.session.prompt("start the counter in the background");
    const [started, readA, listed] = toolResults(first);
    const startText = textOf(started?.content);
    expect(started?.isError).toBe(false);
    expect(startText).toContain(`Running in the background as ${job}`);
    expect(startText).toContain(`job_output {"id":"${job}"}`);
    expect(textOf(listed?.content)).toContain(`${job}  running`);
    expect(textOf(listed?.content)).toContain("line $i");

    // A second session (pi restarted) reads on until the job has ended.
    const second = await startPiSession(
      toolwire,
      readUntilEnd(job, id("read-b"), 20, () => fauxAssistantMessage(fauxText("all read"))),
    );
    sessions.push(second);
    await second.session.prompt("read the counter to its end");
    const reads = toolResults(second);
    expect(reads.every((r) => !r.isError)).toBe(true);
    expect(textOf(reads.at(-1)?.content)).toContain("that is all of its output");

    const given = [startText, textOf(readA?.content), ...reads.map((r) => textOf(r.content))]
      .flatMap(jobLines)
      .filter((line) => !line.startsWith("[Running"));
    expect(given).toEqual(Array.from({ length: 16 }, (_, i) => `line ${i + 1}`));
    const poll = await api.result(job, { wait: 5 });
    expect(poll.status).toBe("settled");
  }, 120_000);

  it("kill stops a background job and answers with its output, kept", async () => {
    const job = id("long");
    const pi = await startPiSession(toolwire, [
      call("bash", { command: "echo begun; sleep 120; echo never", background: true }, job),
      call("kill", { id: job }, id("kill")),
      fauxAssistantMessage(fauxText("stopped")),
    ]);
    sessions.push(pi);
    const started = Date.now();
    await pi.session.prompt("start and stop");
    const [, killed] = toolResults(pi);
    const text = textOf(killed?.content);
    expect(killed?.isError).toBe(false);
    expect(text).toContain("begun\n");
    expect(text).toContain(`[job ${job} killed; its output is kept]`);
    expect(Date.now() - started).toBeLessThan(60_000);
    const poll = await api.result(job, { wait: 5 });
    if (poll.status !== "settled") throw new Error("the killed job did not settle");
    expect(textOf(poll.result.content)).toContain("begun\n");
    expect(textOf(poll.result.content)).not.toContain("never");
  }, 90_000);
});
