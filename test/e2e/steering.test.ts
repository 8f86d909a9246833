// Issue 21 end to end through MCP (an official SDK client) against the real Worker
// (wrangler dev), its DOs and a real sandbox host: per-call windows, idle timeouts and
// background jobs. docs/steering.md describes what is tested here.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectV2, type McpTestClient, type ToolResult } from "../support/e2e/mcp/clients.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";
import { withoutInputLine } from "../support/input-line.ts";

const mcpUrl = `${inject("apiUrl")}/mcp`;
const token = inject("apiToken");

function text(result: ToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

function structured(result: ToolResult) {
  return result.structuredContent as {
    truncation: { totalLines: number; outputLines: number; spillPath?: string; truncated: boolean };
    exit: { status: string; exitCode?: number | null; limit?: string };
  };
}

const unique = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;

/** A call named by its own id (`_meta` io.toolwire/callId), so a retry is the same call. */
const named = (id: string) => ({ meta: { "io.toolwire/callId": id } });

interface JobAnswer {
  lines: string[];
  footer: string;
  details?: { to: number; from: number };
}

/** A job_output answer split into its output lines and its footer line. */
function jobAnswer(result: ToolResult): JobAnswer {
  const all = withoutInputLine(text(result)).split("\n");
  const footer = all.pop() ?? "";
  return { lines: all, footer };
}

/**
 * Follows a background job with job_output (waiting up to 5 s each) to its end; the
 * lines of every answer, in order.
 */
async function follow(c: McpTestClient, id: string): Promise<string[]> {
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) {
    const answer = jobAnswer(
      await c.call("job_output", { id, wait: 5 }, named(`read-${unique()}`)),
    );
    lines.push(...answer.lines);
    if (answer.footer.includes("that is all of its output")) return lines;
  }
  throw new Error(`job ${id} did not end`);
}

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join("");

let client: McpTestClient;
beforeAll(async () => {
  client = await connectV2(mcpUrl, token);
});
afterAll(async () => {
  await client?.close();
});

describe("per-call windows", () => {
  it("tools/list shows head, tail and maxBytes with their caps", async () => {
    const { tools } = await client.listTools();
    const bash = tools.find((t) => t.name === "bash")!;
    const props = bash.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.head).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 });
    expect(props.tail).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 });
    expect(props.maxBytes).toMatchObject({ type: "integer", minimum: 1, maximum: 262_144 });
  });

  it("head + tail: the first and last lines, the middle named, and the read that shows it", async () => {
    const result = await client.call("bash", { command: "seq 1 1000", head: 3, tail: 2 });
    const s = structured(result);
    expect(result.isError).toBe(false);
    const spill = s.truncation.spillPath!;
    expect(text(result)).toBe(
      `${numbered(1, 3)}[… 995 lines omitted (4–998) …]\n${numbered(999, 1000)}\n` +
        `[Showing lines 1–3 and 999–1,000 of 1,000. Full output: ${spill}]\n` +
        `[To see lines 4–998: read {"path":"${spill}","offset":4,"limit":995}; to search it, grep {"path":"${spill}"}]`,
    );
    expect(s.truncation).toMatchObject({ totalLines: 1000, outputLines: 5, truncated: true });
    // The footer's read shows exactly the omitted lines.
    const read = await client.call("read", { path: spill, offset: 4, limit: 995 });
    expect(text(read).split("\n")[0]).toBe("4\t4");
    expect(text(read).split("\n")[994]).toBe("998\t998");
  });

  it("head only, tail only and a byte budget", async () => {
    const head = await client.call("bash", { command: "seq 1 100", head: 2 });
    const spill = structured(head).truncation.spillPath!;
    expect(text(head)).toBe(
      `${numbered(1, 2)}\n[Showing lines 1–2 of 100. Full output: ${spill}]\n` +
        `[To see lines 3–100: read {"path":"${spill}","offset":3,"limit":98}; to search it, grep {"path":"${spill}"}]`,
    );
    const tail = await client.call("bash", { command: "seq 1 100", tail: 1 });
    expect(text(tail).startsWith("100\n\n[Showing lines 100–100 of 100.")).toBe(true);
    const bytes = await client.call("bash", { command: "seq 1 100", maxBytes: 10 });
    const bytesSpill = structured(bytes).truncation.spillPath!;
    expect(text(bytes)).toBe(
      `${numbered(98, 100)}\n[Showing lines 98–100 of 100 (10 B limit). Full output: ${bytesSpill}]\n` +
        `[To see lines 1–97: read {"path":"${bytesSpill}","offset":1,"limit":97}; to search it, grep {"path":"${bytesSpill}"}]`,
    );
  });

  it("at head + tail lines nothing is cut and no footer is written", async () => {
    const result = await client.call("bash", { command: "seq 1 5", head: 3, tail: 2 });
    expect(text(result)).toBe(numbered(1, 5));
  });

  it("refuses a window past the caps with what the limit is", async () => {
    const result = await client.call("bash", { command: "true", head: 6000, tail: 5000 });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("head + tail must be at most 10000 lines");
  });
});

describe("timeouts that follow output", () => {
  it("a command printing every second for 10 s under idleTimeout 3 runs to its end", async () => {
    const result = await client.call("bash", {
      command: "for i in $(seq 1 10); do echo $i; sleep 1; done",
      idleTimeout: 3,
    });
    expect(result.isError).toBe(false);
    expect(structured(result).exit).toEqual({ status: "completed", exitCode: 0 });
    expect(text(result)).toBe(numbered(1, 10));
  });

  it("a command silent for 5 s under idleTimeout 3 is stopped by idleTimeout, its output kept", async () => {
    const result = await client.call("bash", {
      command: "echo start; sleep 5; echo never",
      idleTimeout: 3,
      timeout: 60,
    });
    expect(structured(result).exit).toMatchObject({ status: "timeout", limit: "idleTimeout" });
    expect(text(result)).toMatch(
      /^start\ntimed out after 3 s \(idle\): no output for that long; the process group was killed; its output is kept/,
    );
    // Stopped before the command's own end.
    expect(text(result)).not.toContain("never");
  });

  it("the wall-clock timeout is the hard limit, and reads as timeout, not failed", async () => {
    const result = await client.call("bash", {
      command: "while :; do echo tick; sleep 0.2; done",
      idleTimeout: 30,
      timeout: 1,
    });
    expect(structured(result).exit).toMatchObject({ status: "timeout", limit: "timeout" });
    expect(text(result)).toContain("timed out after 1 s (timeout)");
    expect(text(result).startsWith("tick\n")).toBe(true);
  });
});

describe("the CLI", () => {
  it("takes --head/--tail/--max-bytes and --idle-timeout, and exits 124 when a limit stopped the command", async () => {
    const windowed = await toolwire([
      "run",
      "bash",
      "--command",
      "seq 1 50",
      "--head",
      "2",
      "--tail",
      "1",
    ]);
    expect(windowed.code).toBe(0);
    // The head is written at the exit: a live tail printed before it is followed by the
    // whole final window (stderr says the output restarted), so the window is in stdout
    // whatever the machine's speed.
    expect(windowed.stdout).toContain("1\n2\n[… 47 lines omitted (3–49) …]\n50\n");
    const idle = await toolwire([
      "run",
      "bash",
      "--command",
      "echo a; sleep 30",
      "--idle-timeout",
      "1",
    ]);
    expect(idle.code).toBe(124);
    expect(idle.stdout).toContain("timed out after 1 s (idle)");
  });
});

describe("background jobs", () => {
  it("bash background answers at once with the id and its first second; job_output gives every line once", async () => {
    const id = `bg-${unique()}`;
    const started = await client.call(
      "bash",
      { command: "for i in $(seq 1 12); do echo $i; sleep 0.5; done", background: true },
      named(id),
    );
    expect(structured(started).exit).toEqual({ status: "running" });
    const first = withoutInputLine(text(started)).split("\n");
    const note = first.pop()!;
    expect(note).toMatch(new RegExp(`^\\[Running in the background as ${id} · `));
    expect(note).toContain(`job_output {"id":"${id}"} gives the lines after these`);
    // It printed in its first second, and answered long before its 6 s were up.
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThan(12);
    // A reader that retries (same toolCallId) is answered the same lines, not the next.
    const readId = `read-${unique()}`;
    const a = await client.call("job_output", { id, wait: 2 }, named(readId));
    const again = await client.call("job_output", { id, wait: 2 }, named(readId));
    expect(text(again)).toBe(text(a));
    const rest = await follow(client, id);
    expect([...first, ...jobAnswer(a).lines, ...rest]).toEqual(
      Array.from({ length: 12 }, (_, i) => String(i + 1)),
    );
    // jobs lists it, ended.
    const jobs = text(await client.call("jobs", {}));
    expect(jobs).toMatch(new RegExp(`^${id}  done  12 lines`, "m"));
  });

  it("a job survives the client leaving: a new client reads it on", async () => {
    const id = `bg-${unique()}`;
    const leaving = await connectV2(mcpUrl, token);
    await leaving.call(
      "bash",
      { command: "for i in $(seq 1 6); do echo $i; sleep 0.5; done", background: true },
      named(id),
    );
    await leaving.close();
    const other = await connectV2(mcpUrl, token);
    try {
      // Nothing was read yet but the first moment's lines: the rest follow exactly.
      const lines = await follow(other, id);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.at(-1)).toBe("6");
      expect(Number(lines[0])).toBeGreaterThan(1);
    } finally {
      await other.close();
    }
  });

  it("kill stops a job and keeps its output; job_output then says it was killed", async () => {
    const id = `bg-${unique()}`;
    await client.call(
      "bash",
      { command: "echo one; echo two; sleep 100", background: true },
      named(id),
    );
    const killed = await client.call("kill", { id });
    expect(text(killed)).toMatch(/^one\ntwo\n/);
    expect(text(killed)).toContain(`[job ${id} killed; its output is kept]`);
    const after = jobAnswer(await client.call("job_output", { id }));
    expect(after.footer).toContain("· killed ·");
    const twice = await client.call("kill", { id });
    expect(text(twice)).toContain(`[job ${id} had already ended (killed); its output is kept]`);
  });

  it("a first moment that printed more than a window: its first lines, then every later line once", async () => {
    const id = `bg-${unique()}`;
    const started = await client.call(
      "bash",
      { command: "seq 1 5000; sleep 1.5; seq 5001 5010", background: true },
      named(id),
    );
    const first = withoutInputLine(text(started)).split("\n");
    const note = first.pop()!;
    // One job_output's worth from line 1 (from the spill: the window holds the last 2,000).
    expect(first).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
    expect(note).toContain("5,000 lines so far");
    expect(note).toContain("gives the lines after these");
    const rest = await follow(client, id);
    expect([...first, ...rest]).toEqual(Array.from({ length: 5010 }, (_, i) => String(i + 1)));
  });

  it("job_output gives long lines whole from the spill, and cuts one past its budget saying where it is", async () => {
    const id = `bg-${unique()}`;
    const command =
      "sleep 1.5; head -c 10000 /dev/zero | tr '\\0' x; echo; head -c 60000 /dev/zero | tr '\\0' y; echo; seq 1 3000";
    await client.call("bash", { command, background: true }, named(id));
    const lines = await follow(client, id);
    expect(lines).toHaveLength(3002);
    expect(lines[0]).toBe("x".repeat(10_000));
    expect(lines[1]).toMatch(
      /^y{49152}… \[cut at 49,152 characters; the whole line is line 2 of \S+\]$/,
    );
    expect(lines.slice(2)).toEqual(Array.from({ length: 3000 }, (_, i) => String(i + 1)));
  });

  it("job_output of an unknown id says so", async () => {
    const result = await client.call("job_output", { id: `nope-${unique()}` });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("No invocation");
  });
});
