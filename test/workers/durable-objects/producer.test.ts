import { describe, expect, it } from "vitest";
import { MAX_DETAILS_BYTES, MAX_IMAGE_BASE64, MAX_IMAGES } from "../../../src/core/output/index.ts";
import { startRequest, stubFor, textOf, value, view } from "./helpers.ts";

async function external(name: string) {
  const stub = stubFor(name);
  value(await stub.start(startRequest(name, "external", { name: "agent_tool" })));
  return stub;
}

const png = (chars: number) => ({ data: "A".repeat(chars), mimeType: "image/png" });

/** A `details` op whose value makes details serialize to exactly `bytes` bytes. */
function detailsOfBytes(bytes: number) {
  const overhead = JSON.stringify({ blob: "" }).length;
  return [["s", ["blob"], "x".repeat(bytes - overhead)]] as ["s", string[], string][];
}

describe("producer API", () => {
  it("applies every sink call: text, details ops, usage (added), tools, terminate, image", async () => {
    const stub = await external("produce-all");
    value(
      await stub.produce([
        { write: "hello " },
        { write: "world\n" },
        {
          details: [
            ["s", ["files"], []],
            ["p", ["files"], 0, 0, ["b.ts", "a.ts"]],
            ["m", ["files"], [1, 0]],
            ["p", ["files"], 1, 1, []],
          ],
        },
        { usage: { input: 10, cost: 0.5 } },
        { usage: { input: 5 } },
        { addTools: ["deploy"] },
        { terminate: true },
        { image: png(8) },
      ]),
    );
    value(await stub.produce([{ replace: "world\nagain\n" }], { isError: false }));
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result).toMatchObject({
      content: [
        { type: "text", text: "world\nagain\n" },
        { type: "image", mimeType: "image/png" },
      ],
      details: { files: ["a.ts"] },
      usage: { input: 15, cost: 0.5 },
      addedTools: ["deploy"],
      terminate: true,
      isError: false,
    });
  });

  it("applies all calls or none: a bad op in the last call leaves the output untouched", async () => {
    const stub = await external("produce-atomic");
    value(await stub.produce([{ write: "kept\n" }, { details: [["s", ["n"], 1]] }]));
    await stub.flushOutput();
    const before = (await view("produce-atomic")).state;
    for (const bad of [
      [["x", ["n"], 2]],
      [["s", ["__proto__", "polluted"], true]],
      [
        ["s", ["n"], 2],
        ["r", {}],
      ],
      [["a", ["n"], "text on a number"]],
      [["m", ["n"], []]],
      [["m", [], [0, 0]]],
    ]) {
      const outcome = await stub.produce([{ write: "lost\n" }, { details: bad as never }]);
      expect(outcome).toMatchObject({ ok: false, error: { code: "bad_request", status: 400 } });
      if (!outcome.ok) expect(outcome.error.message).toContain("calls[1]");
    }
    await stub.flushOutput();
    expect((await view("produce-atomic")).state).toEqual(before);
  });

  it(`accepts ${MAX_IMAGES} images and refuses one more (413), image size at and over ${MAX_IMAGE_BASE64}`, async () => {
    const stub = await external("produce-images");
    value(await stub.produce([{ image: png(MAX_IMAGE_BASE64) }]));
    const over = await stub.produce([{ image: png(MAX_IMAGE_BASE64 + 1) }]);
    expect(over).toMatchObject({ ok: false, error: { code: "too_large", status: 413 } });
    const rest = Array.from({ length: MAX_IMAGES - 1 }, () => ({ image: png(4) }));
    value(await stub.produce(rest));
    await stub.flushOutput();
    expect((await view("produce-images")).state.content).toHaveLength(1 + MAX_IMAGES);
    const ninth = await stub.produce([{ write: "x" }, { image: png(4) }]);
    expect(ninth).toMatchObject({ ok: false, error: { code: "too_large" } });
    await stub.flushOutput();
    expect(textOf((await view("produce-images")).state)).toBe("");
  });

  it(`details up to ${MAX_DETAILS_BYTES} bytes serialized are accepted; one byte more is 413`, async () => {
    const stub = await external("produce-details");
    value(await stub.produce([{ details: detailsOfBytes(MAX_DETAILS_BYTES - 1) }]));
    value(await stub.produce([{ details: detailsOfBytes(MAX_DETAILS_BYTES) }]));
    const over = await stub.produce([{ details: detailsOfBytes(MAX_DETAILS_BYTES + 1) }]);
    expect(over).toMatchObject({ ok: false, error: { code: "too_large", status: 413 } });
    await stub.flushOutput();
    expect(JSON.stringify((await view("produce-details")).state.details).length).toBe(
      MAX_DETAILS_BYTES,
    );
  });

  it("refuses negative usage with 400 and changes nothing", async () => {
    const stub = await external("produce-usage");
    const outcome = await stub.produce([{ usage: { input: 1 } }, { usage: { input: -1 } }]);
    expect(outcome).toMatchObject({ ok: false, error: { code: "bad_request" } });
    await stub.flushOutput();
    expect((await view("produce-usage")).state.usage).toBeUndefined();
  });

  it("end with an error marks isError and appends the error text; calls after end are 409", async () => {
    const stub = await external("produce-end");
    value(
      await stub.produce([{ write: "partial\n" }], { isError: true, error: "agent tool crashed" }),
    );
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
    expect(textOf(poll.result)).toBe("partial\nagent tool crashed");
    const late = await stub.produce([{ write: "late" }]);
    expect(late).toMatchObject({ ok: false, error: { code: "conflict", status: 409 } });
    expect(await stub.produce([], { isError: false })).toMatchObject({
      ok: false,
      error: { code: "conflict" },
    });
  });

  it("an invocation of a tool the DO runs does not accept producer output (409)", async () => {
    const stub = stubFor("produce-wrong-tool");
    value(await stub.start(startRequest("produce-wrong-tool", "emit", { lines: 1 })));
    expect(await stub.produce([{ write: "x" }])).toMatchObject({
      ok: false,
      error: { code: "conflict" },
    });
    expect(await stubFor("produce-nobody").produce([{ write: "x" }])).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
  });
});
