import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, getTool, registerTool } from "../../../src/tools/index.ts";
import { app } from "../../../src/worker/index.ts";
import { API_TOKEN, call, create, expectError, freshId, ORIGIN } from "../worker/helpers.ts";

interface ListedTool {
  name: string;
  description: string;
  parameters: {
    type: string;
    properties: Record<string, { type?: string; format?: string }>;
    required?: string[];
  };
  output: { retain: string; maxBytes: number; maxLines: number };
  replaySafe: boolean;
}

async function listed(): Promise<ListedTool[]> {
  const res = await call("/v1/tools");
  expect(res.status).toBe(200);
  return ((await res.json()) as { tools: ListedTool[] }).tools;
}

describe("GET /v1/tools", () => {
  it("marks the built-in examples, and an unknown tool's message lists only the others", async () => {
    const tools = (await listed()) as unknown as { name: string; example?: boolean }[];
    const examples = tools.filter((t) => t.example === true).map((t) => t.name);
    expect(examples.sort()).toEqual(["emit", "report", "steps"]);
    const res = await call("/v1/invocations", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ tool: "nope", args: {}, toolCallId: freshId("nope") }),
    });
    const message = await expectError(res, 400, "bad_request");
    expect(message).toMatch(
      /known: bash, read, grep, glob, find, ls, write, edit, web_fetch, jobs, job_output, kill, write_stdin, expose_port, external/,
    );
    expect(message).not.toMatch(/\b(emit|steps|report)\b/);
  });

  it("neither lists nor runs the examples where EXAMPLE_TOOLS is off, as a deployed Worker", async () => {
    // The production app under the same bindings, but with the setting off.
    const off = { ...env, EXAMPLE_TOOLS: "0" } as Env;
    const auth = { Authorization: `Bearer ${API_TOKEN}` };
    const list = await app.fetch(new Request(`${ORIGIN}/v1/tools`, { headers: auth }), off);
    const names = ((await list.json()) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toContain("bash");
    expect(names.filter((n) => ["emit", "steps", "report"].includes(n))).toEqual([]);
    const run = await app.fetch(
      new Request(`${ORIGIN}/v1/invocations`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ tool: "emit", args: { lines: 1 }, toolCallId: freshId("off") }),
      }),
      off,
    );
    const message = await expectError(run, 400, "bad_request");
    expect(message).toMatch(/unknown tool "emit" \(known: bash,/);
  });

  it("lists the built-ins with descriptions and JSON Schemas of their parameters", async () => {
    const tools = await listed();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "bash",
        "read",
        "grep",
        "glob",
        "find",
        "ls",
        "write",
        "edit",
        "web_fetch",
        "external",
        "emit",
        "steps",
        "report",
      ]),
    );
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.parameters.type).toBe("object");
      expect(tool.parameters).toEqual(getTool(tool.name)?.parameters);
    }
    const webFetch = tools.find((t) => t.name === "web_fetch");
    expect(webFetch?.parameters.required).toEqual(["url"]);
    expect(webFetch?.parameters.properties.url).toMatchObject({ type: "string", format: "uri" });
    expect(webFetch?.output).toMatchObject({ retain: "head" });
    const external = tools.find((t) => t.name === "external");
    expect(external?.parameters.required).toEqual(["name"]);
    const command = tools.find((t) => t.name === "bash")?.parameters.properties.command;
    expect((command as { description?: string }).description).toMatch(
      /^Shell command, run with bash -c/,
    );
  });

  it("serves the schema the arguments are validated with", async () => {
    const webFetch = getTool("web_fetch");
    expect(() => webFetch?.parse({ url: "https://example.com/" })).not.toThrow();
    expect(() => webFetch?.parse({ url: "https://example.com/", extra: 1 })).toThrow(
      'args: Unrecognized key: "extra"',
    );
    expect(() => webFetch?.parse({})).toThrow("args.url");
  });
});

describe("custom tools", () => {
  const shout = defineTool({
    name: "shout_test",
    description: "Writes its text in capitals (a custom tool registered by a test).",
    params: z.strictObject({ text: z.string().max(100) }),
    replaySafe: true,
    async execute({ params, out }) {
      out.write(params.text.toUpperCase());
    },
  });

  it("are registered with the same signature, listed, validated and run", async () => {
    registerTool(shout);
    expect(() => registerTool(shout)).toThrow('a tool named "shout_test" is already registered');
    expect((await listed()).map((t) => t.name)).toContain("shout_test");

    const bad = await call("/v1/invocations", {
      method: "POST",
      body: JSON.stringify({ tool: "shout_test", args: { text: 5 } }),
    });
    expect(await expectError(bad, 400, "bad_request")).toContain("shout_test args.text");

    const created = await create({
      tool: "shout_test",
      args: { text: "hey" },
      toolCallId: freshId("shout"),
    });
    const result = await call(`/v1/invocations/${created.id}/result?wait=10`);
    expect(result.status).toBe(200);
    const body = (await result.json()) as { content: { text: string }[]; isError: boolean };
    expect(body.isError).toBe(false);
    expect(body.content[0]?.text).toBe("HEY");
  });

  it("hand-written parse errors are 400s too", async () => {
    registerTool({
      ...shout,
      name: "strict_test",
      parse(args: unknown) {
        if (typeof args !== "object" || args === null || !("text" in args)) {
          throw new Error("text is required");
        }
        return args as { text: string };
      },
    });
    const res = await call("/v1/invocations", {
      method: "POST",
      body: JSON.stringify({ tool: "strict_test", args: {} }),
    });
    expect(await expectError(res, 400, "bad_request")).toBe("strict_test args: text is required");
  });

  it("must have a usable name", () => {
    expect(() => registerTool({ ...shout, name: "has space" })).toThrow("must be 1-64 letters");
  });
});
