import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type JsonValue, MAX_JSON_DEPTH } from "../../../src/core/chord/index.ts";
import type { TestInvocationDO as InvocationDO } from "../test-invocation-do.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view, waitFor } from "./helpers.ts";

function nested(levels: number): JsonValue {
  let v: JsonValue = 0;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe("a publication path that throws", () => {
  it("settles the call as an error with what was published and the reason, instead of wedging", async () => {
    const name = "publication-fails";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "agent_tool" })));
    value(await stub.produce([{ write: "published\n" }]));
    await stub.flushOutput();
    const sub = await connectSocket(name);
    await waitFor("greeting", () => (textOf(sub.state) === "published\n" ? true : undefined));

    await runInDurableObject(stub, (instance: InvocationDO) => {
      instance.flushHook = () => {
        throw new RangeError("Maximum call stack size exceeded");
      };
    });
    value(await stub.produce([{ write: "never published\n" }]));

    const poll = value(await stub.result(5_000));
    if (poll.status !== "settled") throw new Error("the call did not settle");
    expect(poll.result.isError).toBe(true);
    const text = textOf(poll.result);
    expect(text.startsWith("published\n")).toBe(true);
    expect(text).not.toContain("never published");
    expect(text).toContain(
      '[Output failed: publishing it threw "Maximum call stack size exceeded"',
    );
    await sub.untilEnded();
    const refused = await stub.produce([{ write: "late\n" }]);
    expect(refused.ok ? "accepted" : refused.error.code).toBe("conflict");
    expect((await view(name)).status).toBe("settled");
  });

  it("a final flush that throws during end still settles as an error with the reason", async () => {
    const name = "publication-fails-at-end";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "agent_tool" })));
    value(await stub.produce([{ write: "kept\n" }]));
    await stub.flushOutput();
    await runInDurableObject(stub, (instance: InvocationDO) => {
      instance.flushHook = () => {
        throw new Error("storage refused the batch");
      };
    });
    value(await stub.produce([{ write: "lost\n" }], { isError: false }));
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("the call did not settle");
    expect(poll.result.isError).toBe(true);
    expect(textOf(poll.result)).toMatch(
      /^kept\n\[Output failed: publishing it threw "storage refused the batch"/,
    );
  });
});

describe("tool args depth at the Durable Object", () => {
  it("the external tool's input may nest 63 levels (64 with the args), not 64", async () => {
    value(
      await stubFor("input-depth-ok").start(
        startRequest("input-depth-ok", "external", {
          name: "t",
          input: nested(MAX_JSON_DEPTH - 1),
        }),
      ),
    );
    const refused = await stubFor("input-depth-over").start(
      startRequest("input-depth-over", "external", { name: "t", input: nested(MAX_JSON_DEPTH) }),
    );
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe("bad_request");
      expect(refused.error.message).toContain("at most 63 levels deep");
    }
    expect((await stubFor("input-depth-over").view()).ok).toBe(false);
  });
});
