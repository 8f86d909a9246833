// pi's real SDK session with a scripted faux model runs a coding task on Toolwire
// through the toolwire/pi extension: every tool result pi hands the model is Toolwire's
// result for that invocation, bash streams growing updates, the files are in the
// sandbox and not in pi's directory, and an abort stops the command with its output kept.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const toolwire = { url: inject("apiUrl"), token: inject("apiToken") };
const run = `pi${Date.now().toString(36)}`;
const dir = `pi-task-${run}`;
const id = (name: string) => `${run}-${name}`;

const SCRIPT = [
  "#!/bin/bash",
  "# step",
  "echo start",
  "# step",
  "for i in $(seq 1 100); do seq $(( (i - 1) * 1000 + 1 )) $(( i * 1000 )); sleep 0.03; done",
  "",
].join("\n");

type ToolMessage = { role: "toolResult"; toolCallId: string; content: unknown; isError: boolean };

const sessions: PiSession[] = [];
afterAll(() => {
  for (const s of sessions) s.dispose();
});

describe("pi on Toolwire", () => {
  it("runs a coding task: write, a refused then a correct edit, bash, grep, find, ls, read", async () => {
    const call = (name: string, args: Record<string, unknown>) =>
      fauxToolCall(name, args, { id: id(name) });
    const pi = await startPiSession(toolwire, [
      fauxAssistantMessage(call("write", { path: `${dir}/count.sh`, content: SCRIPT }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(
        fauxToolCall(
          "edit",
          { path: `${dir}/count.sh`, edits: [{ oldText: "# step", newText: "# first" }] },
          { id: id("edit-dup") },
        ),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(
        fauxToolCall(
          "edit",
          {
            path: `${dir}/count.sh`,
            edits: [{ oldText: "# step\necho start", newText: "# announce\necho start" }],
          },
          { id: id("edit-ok") },
        ),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(call("bash", { command: `bash ${dir}/count.sh` }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(
        [
          call("grep", { pattern: "announce", path: dir, context: 1 }),
          call("find", { pattern: "*.sh", path: dir }),
          call("ls", { path: dir }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(call("read", { path: `${dir}/count.sh`, offset: 2, limit: 2 }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("Done.")),
    ]);
    sessions.push(pi);
    const bashUpdates: number[] = [];
    pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === "bash") {
        const text = (event.partialResult?.content ?? [])
          .map((c: { text?: string }) => c.text ?? "")
          .join("");
        bashUpdates.push(
          event.partialResult?.details?.truncation?.totalLines ?? text.split("\n").length,
        );
      }
    });
    await pi.session.prompt("Write the counting script, fix its comment, run it and look around.");

    const results = pi.session.messages.filter(
      (m) => m.role === "toolResult",
    ) as unknown as ToolMessage[];
    expect(results.map((r) => r.toolCallId)).toEqual(
      ["write", "edit-dup", "edit-ok", "bash", "grep", "find", "ls", "read"].map(id),
    );
    for (const message of results) {
      const poll = await api.result(message.toolCallId, { wait: 5 });
      if (poll.status !== "settled") throw new Error(`${message.toolCallId} did not settle`);
      expect(message.content, message.toolCallId).toEqual(poll.result.content);
      expect(message.isError, message.toolCallId).toBe(poll.result.isError);
    }
    const byId = new Map(results.map((r) => [r.toolCallId, r]));
    const text = (name: string) =>
      ((byId.get(id(name))?.content ?? []) as { text: string }[]).map((c) => c.text).join("");
    expect(byId.get(id("edit-dup"))?.isError).toBe(true);
    expect(text("edit-dup")).toContain(`Found 2 occurrences of the text in ${dir}/count.sh.`);
    expect(text("edit-ok")).toContain("-2 # step\n+2 # announce\n 3 echo start");
    expect(text("bash")).toContain("100000");
    expect(text("find")).toBe("count.sh");
    expect(text("ls")).toBe("count.sh");
    expect(text("grep")).toBe(
      `${dir}/count.sh-1- #!/bin/bash\n${dir}/count.sh:2: # announce\n${dir}/count.sh-3- echo start`,
    );
    expect(text("read")).toBe(
      "2\t# announce\n3\techo start\n\n[Showing lines 2–3 of 5. Use offset=4 to continue.]",
    );

    // At least three updates while the command ran, each with more lines than the last.
    const growing = bashUpdates.filter((n, i) => i === 0 || n > bashUpdates[i - 1]!);
    expect(growing.length).toBeGreaterThanOrEqual(3);

    const inSandbox = path.join(inject("sandboxRoot"), dir, "count.sh");
    expect(readFileSync(inSandbox, "utf8")).toBe(
      SCRIPT.replace("# step\necho start", "# announce\necho start"),
    );
    expect(readdirSync(pi.cwd)).toEqual([]);
    expect(existsSync(path.join(pi.cwd, dir))).toBe(false);
  }, 180_000);

  it("an abort in the middle of a command stops the process and keeps its output", async () => {
    const marker = `${dir}-abort.marker`;
    const command = `for i in $(seq 1 100000); do echo tick $i; echo $i > ${marker}.new; mv ${marker}.new ${marker}; sleep 0.05; done`;
    const pi = await startPiSession(toolwire, [
      fauxAssistantMessage(fauxToolCall("bash", { command }, { id: id("abort") }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("stopped")),
    ]);
    sessions.push(pi);
    let ticks = 0;
    pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === "bash") {
        const t = (event.partialResult?.content ?? [])
          .map((c: { text?: string }) => c.text ?? "")
          .join("");
        ticks = (t.match(/tick/g) ?? []).length;
        if (ticks >= 10) void pi.session.abort();
      }
    });
    await pi.session.prompt("count");
    const poll = await api.result(id("abort"), { wait: 20 });
    if (poll.status !== "settled") throw new Error("the aborted call did not settle");
    const kept = poll.result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(poll.result.isError).toBe(true);
    expect(kept).toContain("tick 1\n");
    expect(kept).toContain("tick 10\n");
    const markerPath = path.join(inject("sandboxRoot"), marker);
    const stoppedAt = Number(readFileSync(markerPath, "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(Number(readFileSync(markerPath, "utf8"))).toBe(stoppedAt);
    expect(stoppedAt).toBeLessThan(1000);
  }, 120_000);

  it("an unreachable Toolwire is a tool error that says so, at once", async () => {
    const pi = await startPiSession({ url: "http://127.0.0.1:1", token: "t" }, [
      fauxAssistantMessage(fauxToolCall("ls", {}, { id: id("down") }), { stopReason: "toolUse" }),
      fauxAssistantMessage(fauxText("ok")),
    ]);
    sessions.push(pi);
    await pi.session.prompt("list");
    const [message] = pi.session.messages.filter(
      (m) => m.role === "toolResult",
    ) as unknown as ToolMessage[];
    expect(message?.isError).toBe(true);
    expect(JSON.stringify(message?.content)).toContain(
      "Toolwire at http://127.0.0.1:1 is unreachable",
    );
  }, 60_000);
});
