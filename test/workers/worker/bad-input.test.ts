import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../../src/worker/index.ts";
import { call, create, expectError, freshId, postJson, viewWhen } from "./helpers.ts";

interface View {
  state: { content: { text?: string }[] };
}

async function expectNoInvocation(toolCallId: string): Promise<void> {
  await expectError(await call(`/v1/invocations/${toolCallId}`), 404, "not_found");
}

async function stateOf(id: string): Promise<unknown> {
  const res = await call(`/v1/invocations/${id}`);
  expect(res.status).toBe(200);
  return res.json();
}

/** A create body for the external tool whose JSON is exactly `bytes` long. */
function bodyOfSize(toolCallId: string, bytes: number): string {
  const shell = JSON.stringify({ tool: "external", toolCallId, args: { name: "big", input: "" } });
  return shell.replace('"input":""', `"input":"${"a".repeat(bytes - shell.length)}"`);
}

describe("POST /v1/invocations refuses bad input and creates nothing", () => {
  const cases: [string, (id: string) => unknown, string][] = [
    [
      "an unknown tool",
      (id) => ({ tool: "nope", args: {}, toolCallId: id }),
      'body.tool: unknown tool "nope"',
    ],
    ["a missing tool", (id) => ({ args: {}, toolCallId: id }), "body.tool"],
    [
      "a bad URL",
      (id) => ({ tool: "web_fetch", args: { url: "ftp://x.test/" }, toolCallId: id }),
      "web_fetch args.url",
    ],
    ["missing args", (id) => ({ tool: "web_fetch", toolCallId: id }), "web_fetch args.url"],
    [
      "an unknown arg",
      (id) => ({ tool: "emit", args: { lines: 1, colour: "red" }, toolCallId: id }),
      'Unrecognized key: "colour"',
    ],
    [
      "an arg out of range",
      (id) => ({ tool: "emit", args: { lines: 0 }, toolCallId: id }),
      "emit args.lines",
    ],
    [
      "an unknown body field",
      (id) => ({ tool: "emit", args: { lines: 1 }, toolCallId: id, extra: 1 }),
      'body: Unrecognized key: "extra"',
    ],
    [
      "an unknown sandbox",
      (id) => ({ tool: "emit", args: { lines: 1 }, toolCallId: id, sandbox: "mars" }),
      'body.sandbox: unknown sandbox "mars"',
    ],
    [
      "a non-string runId",
      (id) => ({ tool: "emit", args: { lines: 1 }, toolCallId: id, runId: 7 }),
      "body.runId",
    ],
    ["a body that is an array", () => [], "body: Invalid input: expected object"],
  ];
  for (const [label, body, message] of cases) {
    it(label, async () => {
      const id = freshId("bad");
      const got = await expectError(
        await postJson("/v1/invocations", body(id)),
        400,
        "bad_request",
      );
      expect(got).toContain(message);
      await expectNoInvocation(id);
    });
  }

  it("a toolCallId that cannot be a URL segment", async () => {
    const got = await expectError(
      await postJson("/v1/invocations", { tool: "emit", args: { lines: 1 }, toolCallId: "a/b" }),
      400,
      "bad_request",
    );
    expect(got).toContain("body.toolCallId");
  });

  it("bodies that are not JSON", async () => {
    for (const [raw, message] of [
      ["", "request body is empty"],
      ["{", "not valid JSON"],
      [new Uint8Array([0x7b, 0xff, 0x7d]), "not valid UTF-8"],
    ] as const) {
      const res = await call("/v1/invocations", { method: "POST", body: raw });
      expect(await expectError(res, 400, "bad_request")).toContain(message);
    }
  });
});

describe("the 1 MiB body cap", () => {
  it("accepts 1 MiB - 1 and exactly 1 MiB", async () => {
    for (const size of [MAX_BODY_BYTES - 1, MAX_BODY_BYTES]) {
      const id = freshId("size");
      const body = bodyOfSize(id, size);
      expect(new TextEncoder().encode(body).byteLength).toBe(size);
      const res = await call("/v1/invocations", { method: "POST", body });
      expect(res.status, await res.clone().text()).toBe(201);
    }
  });

  it("refuses 1 MiB + 1 with 413, declared or streamed, and creates nothing", async () => {
    expect(MAX_BODY_BYTES).toBe(1_048_576);
    const declared = freshId("size");
    const body = bodyOfSize(declared, MAX_BODY_BYTES + 1);
    const message = await expectError(
      await call("/v1/invocations", { method: "POST", body }),
      413,
      "too_large",
    );
    expect(message).toContain("1048577 bytes; the limit is 1048576 bytes");
    await expectNoInvocation(declared);

    const streamed = freshId("size");
    const bytes = new TextEncoder().encode(bodyOfSize(streamed, MAX_BODY_BYTES + 1));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024)
          controller.enqueue(bytes.slice(i, i + 64 * 1024));
        controller.close();
      },
    });
    const res = await call("/v1/invocations", { method: "POST", body: stream });
    expect(await expectError(res, 413, "too_large")).toContain("more than 1048576 bytes");
    await expectNoInvocation(streamed);
  });
});

describe("the producer API refuses malformed calls and applies none of them", () => {
  const cases: [string, unknown, string][] = [
    ["no calls", {}, "body.calls"],
    ["calls not an array", { calls: "write" }, "body.calls"],
    [
      "a call with two keys",
      { calls: [{ write: "a", replace: "b" }] },
      "body.calls[0]: a call is an object with exactly one of",
    ],
    [
      "an unknown call",
      { calls: [{ append: "a" }] },
      "body.calls[0]: a call is an object with exactly one of",
    ],
    ["a call that is not an object", { calls: ["write"] }, "body.calls[0]"],
    ["a non-string write", { calls: [{ write: "ok" }, { write: 5 }] }, "body.calls[1].write"],
    ["an unknown op verb", { calls: [{ details: [["x", ["a"], 1]] }] }, "body.calls[0].details[0]"],
    [
      "an op with the wrong arity",
      { calls: [{ details: [["s", ["a"]]] }] },
      "body.calls[0].details[0]",
    ],
    ["a negative trim", { calls: [{ details: [["t", ["a"], -1]] }] }, "body.calls[0].details[0]"],
    [
      "a __proto__ path",
      { calls: [{ details: [["s", ["__proto__", "x"], 1]] }] },
      "body.calls[0].details[0]",
    ],
    [
      "an r op after the first",
      {
        calls: [
          {
            details: [
              ["s", ["a"], 1],
              ["r", {}],
            ],
          },
        ],
      },
      "body.calls[0].details[1]",
    ],
    [
      "details not an array",
      { calls: [{ details: { a: 1 } }] },
      "body.calls[0].details: must be an array",
    ],
    ["negative usage", { calls: [{ usage: { input: -1 } }] }, "body.calls[0].usage.input"],
    [
      "an image that is not base64",
      { calls: [{ image: { data: "!!", mimeType: "image/png" } }] },
      "body.calls[0].image.data",
    ],
    [
      "an image of another type",
      { calls: [{ image: { data: "AA==", mimeType: "text/html" } }] },
      "body.calls[0].image.mimeType",
    ],
    ["a non-boolean terminate", { calls: [{ terminate: "yes" }] }, "body.calls[0].terminate"],
    ["a bad end", { calls: [], end: { isError: "no" } }, "body.end.isError"],
  ];
  for (const [label, body, message] of cases) {
    it(label, async () => {
      const { id } = await create({
        tool: "external",
        args: { name: "p" },
        toolCallId: freshId("ops"),
      });
      await postJson(`/v1/invocations/${id}/output`, { calls: [{ write: "kept" }] });
      const before = await viewWhen<View>(id, (v) => v.state.content[0]?.text === "kept");
      const res = await postJson(`/v1/invocations/${id}/output`, body);
      expect(await expectError(res, 400, "bad_request")).toContain(message);
      expect(await stateOf(id)).toEqual(before);
    });
  }
});

describe("unknown invocations and settled ones", () => {
  it("answers 404 on every route for an id never created, and creates nothing", async () => {
    const id = freshId("ghost");
    const routes: [string, RequestInit][] = [
      [`/v1/invocations/${id}`, {}],
      [`/v1/invocations/${id}/result?wait=0`, {}],
      [`/v1/invocations/${id}/events`, {}],
      [`/v1/invocations/${id}/cancel`, { method: "POST" }],
      [`/v1/invocations/${id}/output`, { method: "POST", body: '{"calls":[{"write":"x"}]}' }],
    ];
    for (const [path, init] of routes) await expectError(await call(path, init), 404, "not_found");
    await expectNoInvocation(id);
  });

  it("refuses cancel after settle with 409 and keeps the result", async () => {
    const { id } = await create({
      tool: "emit",
      args: { lines: 2 },
      toolCallId: freshId("settled"),
    });
    const result = await call(`/v1/invocations/${id}/result?wait=10`);
    expect(result.status).toBe(200);
    const settled = await result.json();
    const before = await stateOf(id);
    await expectError(
      await call(`/v1/invocations/${id}/cancel`, { method: "POST" }),
      409,
      "conflict",
    );
    expect(await stateOf(id)).toEqual(before);
    expect(await (await call(`/v1/invocations/${id}/result`)).json()).toEqual(settled);
  });

  it("refuses bad waits with 400", async () => {
    const { id } = await create({
      tool: "external",
      args: { name: "w" },
      toolCallId: freshId("wait"),
    });
    for (const wait of ["-1", "soon", "1e3", ""]) {
      const res = await call(`/v1/invocations/${id}/result?wait=${wait}`);
      expect(await expectError(res, 400, "bad_request")).toContain("query.wait");
    }
  });
});
