import { afterEach, describe, expect, it } from "vitest";
import { getTool } from "../../../src/tools/index.ts";
import { create, postJson } from "./helpers.ts";

const steps = getTool("steps")!;
const parse = steps.parse;
let parses = 0;
steps.parse = (args: unknown) => {
  parses++;
  return parse.call(steps, args);
};

afterEach(() => {
  parses = 0;
});

describe("tool arguments are parsed once, at the edge that received them", () => {
  it("POST /v1/invocations parses them in the Worker and the DO starts with that parse", async () => {
    const created = await create({ tool: "steps", args: { steps: 2, intervalMs: 1 } });
    expect(created.status).toBe("running");
    expect(parses).toBe(1);
  });

  it("bad args are refused by that one parse, with the tool's message, and nothing starts", async () => {
    const res = await postJson("/v1/invocations", { tool: "steps", args: { steps: -1 } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^steps /);
    expect(parses).toBe(1);
  });
});
