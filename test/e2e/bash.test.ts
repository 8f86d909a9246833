// End to end through the Worker: a real `wrangler dev`, a real sandbox host, real
// processes, and a real WebSocket subscriber (src/client) folding the live stream.
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { type CreatedInvocation, subscribe, ToolwireClient } from "../../src/client/index.ts";
import type { JsonObject } from "../../src/core/chord/types.ts";
import type { SettledResult } from "../../src/core/output/index.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });

function sha256OfCommand(command: string): string {
  return execSync(`(${command}) | sha256sum`, { shell: "/bin/sh" }).toString().split(" ")[0]!;
}

function sha256OfSpill(spillPath: string): string {
  return createHash("sha256")
    .update(readFileSync(path.join(`${inject("sandboxRoot")}.spill`, path.basename(spillPath))))
    .digest("hex");
}

interface Finished {
  created: CreatedInvocation;
  /** What the live WebSocket subscriber folded. */
  live: SettledResult["content"];
  result: SettledResult;
}

/** Creates an invocation, follows it over a WebSocket to the end, then reads the stored result. */
async function invoke(
  tool: string,
  args: JsonObject,
  during?: (c: CreatedInvocation) => Promise<void>,
): Promise<Finished> {
  const created = await api.createInvocation({ tool, args });
  expect(created.status).toBe("running");
  const sub = subscribe(created.socketUrl);
  if (during) await during(created);
  const outcome = await sub.finished;
  expect(outcome.status).toBe("settled");
  const poll = await api.result(created.id, { wait: 30 });
  if (poll.status !== "settled") throw new Error(`invocation ${created.id} did not settle`);
  expect(outcome.state?.content).toEqual(poll.result.content);
  return { created, live: outcome.state!.content, result: poll.result };
}

function text(result: SettledResult): string {
  const block = result.content[0];
  return block?.type === "text" ? block.text : "";
}

describe("bash end to end", () => {
  it("seq 1 200000: the last 2000 lines, exact totals, footer, spill byte for byte", async () => {
    const { result } = await invoke("bash", { command: "seq 1 200000" });
    expect(result.isError).toBe(false);
    const spillPath = result.truncation.spillPath!;
    expect(result.truncation).toMatchObject({
      totalLines: 200000,
      totalBytes: 1288895,
      truncated: true,
    });
    const kept = `${Array.from({ length: 2000 }, (_, i) => 198001 + i).join("\n")}\n`;
    expect(text(result)).toBe(
      `${kept}\n[Showing lines 198,001–200,000 of 200,000. Full output: ${spillPath}]` +
        `\n[To see lines 1–198,000: read {"path":"${spillPath}","offset":1,"limit":2000}, then continue from the offset its footer gives; to search it, grep {"path":"${spillPath}"}]`,
    );
    expect(sha256OfSpill(spillPath)).toBe(sha256OfCommand("seq 1 200000"));
  });

  it("yes | head -c 50000000: totals of 50 MB, spill byte for byte", async () => {
    const command = "yes | head -c 50000000";
    const { result } = await invoke("bash", { command });
    expect(result.truncation).toMatchObject({ totalBytes: 50_000_000, totalLines: 25_000_000 });
    expect(text(result).startsWith("y\ny\n")).toBe(true);
    expect(sha256OfSpill(result.truncation.spillPath!)).toBe(sha256OfCommand(command));
  });

  it("multibyte characters split across writes arrive whole", async () => {
    const command =
      "printf '\\342\\202'; sleep 0.2; printf '\\254 \\360\\237'; sleep 0.2; printf '\\230\\200\\n'";
    const { result } = await invoke("bash", { command });
    expect(text(result)).toBe("€ 😀\n");
  });

  it("a long single line keeps its last 50 KB and says so", async () => {
    const { result } = await invoke("bash", { command: "head -c 300000 /dev/zero | tr '\\0' x" });
    expect(result.truncation).toMatchObject({
      totalLines: 1,
      totalBytes: 300000,
      lastLinePartial: true,
    });
    expect(text(result)).toBe(
      `${"x".repeat(51200)}\n\n[Showing the last 50 KB of line 1 (50 KB limit). Full output: ${result.truncation.spillPath}]` +
        `\n[To see line 1: read {"path":"${result.truncation.spillPath}","offset":1,"limit":1}; to search it, grep {"path":"${result.truncation.spillPath}"}]`,
    );
  });

  it("commands do not see the sandbox host's token", async () => {
    const { result } = await invoke("bash", { command: 'echo "token=$SANDBOX_TOKEN"' });
    expect(text(result)).toBe("token=\n");
  });

  it("a command that prints for longer than the DO's 10 s stream window: every line once, in order", async () => {
    // The DO lets go of the stream after SANDBOX_STREAM_WINDOW_SECONDS (10 in wrangler.toml)
    // and its alarm rejoins the running exec: the recovery path an eviction takes.
    const total = 130;
    const command = `for i in $(seq 1 ${total}); do echo line $i; sleep 0.1; done`;
    const { result, live } = await invoke("bash", { command });
    const expected = Array.from({ length: total }, (_, i) => `line ${i + 1}\n`).join("");
    expect(result.isError).toBe(false);
    expect(text(result)).toBe(expected);
    expect(live).toEqual(result.content);
  });

  it("a failing command is an error with its output kept", async () => {
    const { result } = await invoke("bash", { command: "echo partial; exit 3" });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^partial\n[\s\S]*Command exited with code 3/);
  });

  it("a timeout kills the process group and is reported", async () => {
    const { result } = await invoke("bash", { command: "echo before; sleep 60", timeout: 1 });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^before\n[\s\S]*timed out after 1 s/);
  });

  it("a cancel stops the command and keeps what it printed", async () => {
    const { result } = await invoke(
      "bash",
      { command: "echo started; sleep 60" },
      async (created) => {
        for (let i = 0; i < 100; i++) {
          const info = await api.get(created.id);
          const first = info.state.content[0];
          if (first?.type === "text" && first.text.includes("started")) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await api.cancel(created.id);
      },
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^started\n/);
  });
});

describe("file tools end to end", () => {
  it("read, grep and glob see the workspace; escapes are refused", async () => {
    await invoke("bash", { command: "mkdir -p e2e && seq 1 5 > e2e/five.txt" });
    const read = await invoke("read", { path: "e2e/five.txt", offset: 2, limit: 2 });
    expect(text(read.result)).toMatch(
      /^2\t2\n3\t3\n\n\[Showing lines 2–3 of 5\. Use offset=4 to continue\.\]$/,
    );
    const past = await invoke("read", { path: "e2e/five.txt", offset: 6 });
    expect(past.result.isError).toBe(true);
    expect(text(past.result)).toMatch(/offset 6 is past the end/);
    const grep = await invoke("grep", { pattern: "^[34]$", path: "e2e" });
    expect(text(grep.result)).toBe("e2e/five.txt:3: 3\ne2e/five.txt:4: 4");
    const glob = await invoke("glob", { pattern: "e2e/*.txt" });
    expect(text(glob.result)).toBe("e2e/five.txt");
    const escaped = await invoke("read", { path: "../../etc/passwd" });
    expect(escaped.result.isError).toBe(true);
    expect(text(escaped.result)).toMatch(/escapes the workspace root/);
  });
});

describe("tokens", () => {
  it("the API and the sandbox refuse missing or wrong tokens alike, with 401", async () => {
    const noToken = await fetch(`${inject("apiUrl")}/v1/invocations`, {
      method: "POST",
      body: "{}",
    });
    expect(noToken.status).toBe(401);
    const wrong = await fetch(`${inject("sandboxUrl")}/v1/glob`, {
      method: "POST",
      headers: { authorization: "Bearer not-the-token" },
      body: JSON.stringify({ pattern: "*" }),
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });
});
