// Issue 21 end to end through MCP (an official SDK client) against the real Worker
// (wrangler dev), its DOs and a real sandbox host: per-call windows, idle timeouts and
// background jobs. docs/steering.md describes what is tested here.
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectV2, type McpTestClient, type ToolResult } from "./mcp/clients.ts";

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
        `[To see lines 4–998: read {"path":"${spill}","offset":4,"limit":995}]`,
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
        `[To see lines 3–100: read {"path":"${spill}","offset":3,"limit":98}]`,
    );
    const tail = await client.call("bash", { command: "seq 1 100", tail: 1 });
    expect(text(tail).startsWith("100\n\n[Showing lines 100–100 of 100.")).toBe(true);
    const bytes = await client.call("bash", { command: "seq 1 100", maxBytes: 10 });
    const bytesSpill = structured(bytes).truncation.spillPath!;
    expect(text(bytes)).toBe(
      `${numbered(98, 100)}\n[Showing lines 98–100 of 100 (10 B limit). Full output: ${bytesSpill}]\n` +
        `[To see lines 1–97: read {"path":"${bytesSpill}","offset":1,"limit":97}]`,
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
      /^start\nstopped after 3 s without output \(idleTimeout\); the process group was killed; its output is kept/,
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

/** The real `toolwire` CLI; resolves with its exit code and output. */
function toolwire(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = path.resolve(import.meta.dirname, "../../bin/toolwire");
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      env: {
        PATH: process.env.PATH ?? "",
        TOOLWIRE_URL: inject("apiUrl"),
        TOOLWIRE_TOKEN: token,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

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
    expect(windowed.stdout.startsWith("1\n2\n[… 47 lines omitted (3–49) …]\n50\n")).toBe(true);
    const idle = await toolwire([
      "run",
      "bash",
      "--command",
      "echo a; sleep 30",
      "--idle-timeout",
      "1",
    ]);
    expect(idle.code).toBe(124);
    expect(idle.stdout).toContain("stopped after 1 s without output (idleTimeout)");
  });
});
