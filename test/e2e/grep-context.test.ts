// grep's `context` on every face against the real Worker, Durable Object and sandbox
// host: HTTP invocations, MCP tools/call and the `toolwire` CLI, at the cap on
// `context`, just under it and just over it.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient, ToolwireError } from "../../src/client/index.ts";
import { GREP_MAX_CONTEXT } from "../../src/protocol/index.ts";
import { connectV1, type McpTestClient } from "../support/e2e/mcp/clients.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const dir = `grep-context-${Date.now().toString(36)}`;
const args = (context: number) => ({ pattern: "^hit$", path: dir, context });

/** Lines shown for the one match at line 151 of 301 lines, with `context` lines around it. */
function expected(context: number): string {
  const lines = [];
  for (let n = 151 - context; n <= 151 + context; n++) {
    lines.push(n === 151 ? `${dir}/f.txt:151: hit` : `${dir}/f.txt-${n}- line ${n}`);
  }
  return lines.join("\n");
}

let mcp: McpTestClient;
beforeAll(async () => {
  const lines = Array.from({ length: 301 }, (_, i) => (i === 150 ? "hit" : `line ${i + 1}`));
  mkdirSync(path.join(inject("sandboxRoot"), dir), { recursive: true });
  writeFileSync(path.join(inject("sandboxRoot"), dir, "f.txt"), `${lines.join("\n")}\n`);
  mcp = await connectV1(`${inject("apiUrl")}/mcp`, inject("apiToken"));
});
afterAll(() => mcp.close());

describe("grep context on HTTP, MCP and the CLI", () => {
  it("HTTP: at the cap and just under it the lines around the match; over it a 400", async () => {
    for (const context of [GREP_MAX_CONTEXT, GREP_MAX_CONTEXT - 1]) {
      const created = await api.createInvocation({ tool: "grep", args: args(context) });
      const poll = await api.result(created.id, { wait: 20 });
      if (poll.status !== "settled") throw new Error("grep did not settle");
      expect(poll.result.content).toEqual([{ type: "text", text: expected(context) }]);
    }
    const over = api.createInvocation({ tool: "grep", args: args(GREP_MAX_CONTEXT + 1) });
    await expect(over).rejects.toBeInstanceOf(ToolwireError);
    await expect(over).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/context/),
    });
  });

  it("MCP: the same lines, and over the cap a tool error that names context and the cap", async () => {
    for (const context of [GREP_MAX_CONTEXT, GREP_MAX_CONTEXT - 1]) {
      const result = await mcp.call("grep", args(context));
      expect(result.isError ?? false).toBe(false);
      expect(result.content[0]?.text).toBe(expected(context));
    }
    const over = await mcp.call("grep", args(GREP_MAX_CONTEXT + 1));
    expect(over.isError).toBe(true);
    expect(over.content[0]?.text).toMatch(/context: Too big: expected number to be <=100/);
  });

  it("CLI: --context prints the lines; over the cap exits 2 naming context", async () => {
    for (const context of [GREP_MAX_CONTEXT, GREP_MAX_CONTEXT - 1]) {
      const run = await toolwire([
        "run",
        "grep",
        "--pattern",
        "^hit$",
        "--path",
        dir,
        "--context",
        String(context),
      ]);
      expect(run.stderr).toBe("");
      expect([run.code, run.stdout]).toEqual([0, `${expected(context)}\n`]);
    }
    const over = await toolwire([
      "run",
      "grep",
      "--pattern",
      "^hit$",
      "--path",
      dir,
      "--context",
      String(GREP_MAX_CONTEXT + 1),
    ]);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/context/);
    expect(over.stdout).toBe("");
  });
});
